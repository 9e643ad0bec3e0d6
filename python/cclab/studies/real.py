"""What the studies that run over real sockets share: waiting for a quiet machine, one cached
record per real run, and the machine's state around each run.

A real run (``cclab send`` to ``cclab recv`` through ``cclab emulate`` on 127.0.0.1, through the
Python bindings) is not deterministic and needs the CPUs: it shares two cores with whatever else
runs. So each run first waits for the other processes to fall quiet, is run again if they were
not quiet during it (up to a limit, then kept and marked), and is kept as one JSON record under
``OUT/cache/real/`` with the settings it ran with: an interrupted reproduction resumes and keeps
what finished, ``--from-cache`` renders the report from the records, and a record whose settings
differ from the plan's is run again.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cclab.machine import machine_facts
from cclab.sweep import SweepError, SweepInterrupted

if TYPE_CHECKING:
    from cclab.studies.base import StudyContext

#: A real run starts once the other processes used less than this share (%) of all CPUs over a second,
#: and is run again if they used more during it.
QUIET_PCT = 10.0
#: A run whose transfer fails (a lost handshake, a stall) is tried this many times in all.
ATTEMPTS = 3


@dataclass(frozen=True)
class Quiet:
    """How patient a sitting is with a busy machine."""

    #: Before each run, wait up to this long for the other processes to fall quiet.
    wait_s: float = 300.0
    #: Run again, up to this many times, a run during which the other processes used more than QUIET_PCT.
    redo_disturbed: int = 4


#: CI's quick runs do not wait: they check that the pieces fit, not the numbers.
IMPATIENT = Quiet(0.0, 0)


def run_all(
    ctx: StudyContext,
    points: Sequence[tuple[str, dict[str, Any]]],
    run: Callable[[dict[str, Any]], dict[str, Any]],
    quiet: Quiet,
    what: str,
) -> list[dict[str, Any]]:
    """The record of every (name, settings) point, from ``OUT/cache/real/NAME.json`` where a run with the
    same settings finished before, else ``run(settings)`` now, in the order given. ``run`` returns a
    record with at least ``failure`` (None or why) and ``others_cpu_pct``."""
    from cclab.progress import Progress

    folder = ctx.out / "cache" / "real"
    records: dict[str, dict[str, Any]] = {}
    todo: list[tuple[str, dict[str, Any]]] = []
    for name, settings in points:
        record = load_record(folder / f"{name}.json")
        if record is not None and record.get("settings") == settings:
            records[name] = record
        else:
            todo.append((name, settings))
    if todo and ctx.options.from_cache:
        raise SweepError(
            f"--from-cache: {len(todo)} of {len(points)} real runs under {folder} are not in the cache; "
            "run the study without --from-cache to make them"
        )
    if todo:
        folder.mkdir(parents=True, exist_ok=True)
        bar = Progress(len(points), done=len(records), label="real runs", enabled=ctx.options.progress)
        try:
            for name, settings in todo:
                try:
                    record = attempt(settings, run, quiet, what)
                except KeyboardInterrupt:
                    raise SweepInterrupted(len(records), len(points), folder) from None
                save_record(folder / f"{name}.json", record)
                records[name] = record
                bar.advance()
        finally:
            bar.close()
    return [records[name] for name, _ in points]


def attempt(
    settings: dict[str, Any], run: Callable[[dict[str, Any]], dict[str, Any]], quiet: Quiet, what: str
) -> dict[str, Any]:
    """One real run, once the machine is quiet. A failed run is tried again, up to ATTEMPTS times in all;
    so is one during which other processes used more than QUIET_PCT % of the CPUs, up to
    ``quiet.redo_disturbed`` times (then the last is kept, with the disturbed attempts listed)."""
    failures: list[str] = []
    disturbed: list[float] = []
    while True:
        waited, others_before = wait_for_quiet(quiet.wait_s, what)
        record = run(settings)
        record["quiet"] = {"waited_s": round(waited, 1), "others_pct": round(others_before, 1)}
        if record["failure"] is not None:
            failures.append(record["failure"])
            if len(failures) >= ATTEMPTS:
                raise SweepError(f"{what}: a real run failed {ATTEMPTS} times: " + "; ".join(failures))
            continue
        others = record["others_cpu_pct"]
        if others is not None and others > QUIET_PCT and len(disturbed) < quiet.redo_disturbed:
            disturbed.append(round(others, 1))
            continue
        record["failed_attempts"] = failures
        record["disturbed_attempts"] = disturbed
        return record


def stop_all(*parts: Any) -> None:
    """Stops whatever of a real run's transfers and emulator had started (None: not started), as a
    run that is interrupted or fails leaves them."""
    for part in parts:
        if part is not None:
            part.stop()


def wait_for_quiet(limit_s: float, what: str) -> tuple[float, float]:
    """Waits (up to ``limit_s``) until the other processes used less than QUIET_PCT % of all CPUs over
    a second. Returns the wait and the last second's share; a machine without CPU accounting does not wait."""
    if limit_s <= 0:
        return 0.0, math.nan
    start = time.monotonic()
    told = False
    while True:
        before, at = (machine_cpu_s(), own_cpu_s()), time.monotonic()
        time.sleep(1.0)
        others = others_pct(before, (machine_cpu_s(), own_cpu_s()), time.monotonic() - at)
        waited = time.monotonic() - start
        if others is None:
            return waited, math.nan
        if others < QUIET_PCT or waited >= limit_s:
            return waited, others
        if not told:
            print(f"{what}: waiting for the machine to fall quiet (other processes use {others:.0f} % of the "
                  f"CPUs; up to {limit_s:g} s)", file=sys.stderr, flush=True)  # fmt: skip
            told = True


def machine_cpu_s() -> float | None:
    """CPU seconds that every task on the machine has run so far, exactly (the root control group's
    CPU accounting; /proc/stat's tick samples undercount a paced sender's short bursts); None without it."""
    for path, scale in (("/sys/fs/cgroup/cpuacct/cpuacct.usage", 1e-9), ("/sys/fs/cgroup/cpu.stat", 1e-6)):
        with contextlib.suppress(OSError, ValueError, StopIteration):
            text = Path(path).read_text()
            if path.endswith("cpu.stat"):
                text = next(ln.split()[1] for ln in text.splitlines() if ln.startswith("usage_usec"))
            return int(text.strip()) * scale
    return None


def own_cpu_s() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def others_pct(before: tuple[float | None, float], after: tuple[float | None, float], wall_s: float) -> float | None:
    """The share (%) of all CPUs that tasks other than this process's used between two readings of
    (:func:`machine_cpu_s`, :func:`own_cpu_s`) ``wall_s`` apart."""
    if before[0] is None or after[0] is None or wall_s <= 0:
        return None
    others = (after[0] - before[0]) - (after[1] - before[1])
    return max(0.0, others) / (wall_s * (os.cpu_count() or 1)) * 100


def load_record(path: Path) -> dict[str, Any] | None:
    try:
        record: dict[str, Any] = json.loads(path.read_text())
    except (OSError, ValueError):
        return None  # missing, or cut short by a crash: run it again
    return record


def save_record(path: Path, record: dict[str, Any]) -> None:
    """Writes the record whole or not at all (a rename), so an interruption never leaves half of one."""
    staging = path.with_name(f".{path.name}.{os.getpid()}")
    staging.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    staging.replace(path)


def snapshot() -> dict[str, Any]:
    """The machine's state before or after a run (see :func:`around`)."""
    return {
        "utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "load": [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None,
        "cpu": proc_stat(),
        "udp": proc_snmp_udp(),
        "own_cpu_s": own_cpu_s(),
        "machine_cpu_s": machine_cpu_s(),
        "cpu_pressure_s": cpu_pressure(),
        "wall": time.monotonic(),
    }


def around(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """What a record says of the machine during a run, from snapshots taken before and after it."""
    wall = after["wall"] - before["wall"]
    others = others_pct((before["machine_cpu_s"], before["own_cpu_s"]), (after["machine_cpu_s"], after["own_cpu_s"]),
                        wall)  # fmt: skip
    pressure = (
        round(after["cpu_pressure_s"] - before["cpu_pressure_s"], 3)
        if before["cpu_pressure_s"] is not None and after["cpu_pressure_s"] is not None
        else None
    )
    return {
        "started_utc": before["utc"],
        "machine": machine_facts(),
        "wall_s": round(wall, 3),
        "load_before": before["load"],
        "load_after": after["load"],
        "cpu": difference(before["cpu"], after["cpu"]),
        "own_cpu_s": round(after["own_cpu_s"] - before["own_cpu_s"], 3),
        "others_cpu_pct": None if others is None else round(others, 2),
        "cpu_pressure_s": pressure,
        "udp": difference(before["udp"], after["udp"]),
    }


def cpu_pressure() -> float | None:
    """Seconds so far in which some runnable task waited for a CPU (Linux's PSI); None without it."""
    try:
        some = Path("/proc/pressure/cpu").read_text().splitlines()[0].split()
        return int(next(f for f in some if f.startswith("total=")).removeprefix("total=")) / 1e6
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def proc_stat() -> dict[str, float] | None:
    """The machine's CPU time so far (s, all cores) by kind, from /proc/stat; None where there is none."""
    try:
        line = Path("/proc/stat").read_text().splitlines()[0].split()
        tick = os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None
    names = ["user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"]
    return {name: int(x) / tick for name, x in zip(names, line[1:], strict=False)}


def proc_snmp_udp() -> dict[str, float] | None:
    """The kernel's UDP counters (all sockets) from /proc/net/snmp; None where there are none."""
    try:
        lines = [ln.split() for ln in Path("/proc/net/snmp").read_text().splitlines() if ln.startswith("Udp:")]
        return {name: float(value) for name, value in zip(lines[0][1:], lines[1][1:], strict=True)}
    except (OSError, ValueError, IndexError):
        return None


def difference(before: dict[str, float] | None, after: dict[str, float] | None) -> dict[str, float] | None:
    if before is None or after is None:
        return None
    return {k: round(after[k] - before[k], 3) for k in before if k in after}


def machine_text(records: Sequence[dict[str, Any]], replications: int) -> str:
    """The report's paragraph on the machine during the real runs."""
    if not records:
        return "No real runs."
    facts = records[0]["machine"]
    loads = [r["load_before"][0] for r in records if r.get("load_before")]
    others = [r["others_cpu_pct"] for r in records if r.get("others_cpu_pct") is not None]
    disturbed = sum(len(r.get("disturbed_attempts", [])) for r in records)
    days = sorted({r["started_utc"][:10] for r in records})
    virtual = "a virtual machine" if facts.get("virtual_machine") else "a machine"
    text = (
        f"{len(records)} real runs ({replications} per point) on {virtual} with {facts['cpus']} CPUs "
        f"({facts.get('cpu_model') or 'unknown model'}; {facts['system']}), on {', '.join(days)}."
    )
    if loads:
        text += f" The 1-minute load average before a run was {min(loads):.2f} to {max(loads):.2f}."
    if others:
        text += (
            f" Other processes used {min(others):.1f} to {max(others):.1f} % of the CPUs during a run (median "
            f"{sorted(others)[len(others) // 2]:.1f} %); {disturbed} attempts disturbed by more than "
            f"{QUIET_PCT:g} % were run again."
        )
    return text
