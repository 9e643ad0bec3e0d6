"""CPU time, wall time, event rate and peak memory of the Table 2 scenario at 2.5 Gbit/s.

Runs the `pacing` study's scenario, `python/cclab/studies/pacing.toml`: Table 2
of seed paper 000 at 2.5 Gbit/s (issue 9, item 7 "Speed at scale"), with the
high-speed flows running unpaced HSTCP as the file stands or, with
--variant, any of the study's variants as the study sets them (`all`: each in
turn), for a given simulated duration with the `run`
example binary, one fresh process per run, and prints for each run the child's
user+system CPU time, wall time, events, events per CPU second, packet hops and peak
resident memory (ru_maxrss), with the load average before and after, since the
machine may be shared. The goal is a 200 s replication in under 30 s of CPU
time and under 200 MB.

With --engine-floor it then runs `benchmarks/udp_engine.toml` for as long: the
same dumbbell carrying UDP both ways at 92 % of the bottleneck, with endpoints
that do almost nothing. Its CPU time per packet hop is what the engine costs
without TCP (see that file for why this is not a strict lower bound); the
script prints what the Table 2 run's hops would take at that rate.

Before each run and after the last it runs the `memory_probe` example beside
the binary, if it is there: the time of one dependent load from buffers of
256 KiB, 8 MiB and 256 MiB. The simulation waits mostly on memory, and on a
shared machine the caches are shared: a slower 8 MiB figure says the machine
got slower, not the build.

With --instructions it counts instead of timing: each run goes once under
valgrind's cachegrind, which counts the instructions executed exactly however
busy the machine is, and the script prints them in total, per packet hop and
per event (a 200 s run takes about 9 minutes this way).

    cargo build --release --examples
    python benchmarks/table2_speed.py --duration 200 [--binary target/release/examples/run] \\
        [--repeat 1] [--variant hstcp|paced-hstcp|...|all] [--engine-floor] [--instructions]
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cclab.machine import machine_line
from cclab.scenario import Scenario
from cclab.studies.pacing import VARIANTS, Variant, with_variant

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "python" / "cclab" / "studies" / "pacing.toml"
ENGINE_FLOOR = ROOT / "benchmarks" / "udp_engine.toml"
EVENTS = re.compile(r"events (\d+)")
HOPS = re.compile(r"hops (\d+)")
INSTRUCTIONS = re.compile(r"I\s+refs:\s+([\d,]+)")


def scenario_text(duration_s: float, path: Path = SCENARIO) -> str:
    """The scenario at `path` with its duration replaced, and the warm-up (100 s in the study)
    shortened to half the duration when it would not end before the run does."""
    text = path.read_text()
    replaced, n = re.subn(r'(?m)^duration = "[^"]*"', f'duration = "{duration_s:g}s"', text, count=1)
    if n != 1:
        print(f"{path}: no `duration = ...` line to replace", file=sys.stderr)
        sys.exit(2)
    warmup = re.search(r'(?m)^warmup = "([0-9.]+)s"', replaced)
    if warmup is not None and float(warmup.group(1)) >= duration_s:
        replaced = replaced.replace(warmup.group(0), f'warmup = "{duration_s / 2:g}s"', 1)
    return replaced


def variant_text(text: str, variant: Variant) -> str:
    """The scenario `text` with the high-speed flows running `variant`, as the study sets them."""
    return with_variant(Scenario.from_toml(text), variant).to_toml()


def measure(binary: Path, scenario: Path) -> tuple[float, float, int, int, float]:
    """CPU seconds (user + system), wall seconds, events, packet hops and peak RSS in MB of one run."""
    start = time.perf_counter()
    child = subprocess.Popen([str(binary), str(scenario)], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    out = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        print(f"{binary} failed (status {status})", file=sys.stderr)
        sys.exit(1)
    events, hops = event_and_hop_counts(binary, out)
    cpu = usage.ru_utime + usage.ru_stime
    # Linux reports ru_maxrss in KiB.
    return cpu, wall, events, hops, usage.ru_maxrss / 1024


def event_and_hop_counts(binary: Path, out: str) -> tuple[int, int]:
    """The events and packet hops the `run` example printed; exits 1 if it printed none."""
    events, hops = EVENTS.search(out), HOPS.search(out)
    if events is None or hops is None:
        print(f"{binary}: no event or hop count in its output: {out!r}", file=sys.stderr)
        sys.exit(1)
    return int(events.group(1)), int(hops.group(1))


def count_instructions(valgrind: str, binary: Path, scenario: Path) -> tuple[int, int, int]:
    """Instructions executed (cachegrind's count), events and packet hops of one run."""
    command = [valgrind, "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"]
    done = subprocess.run([*command, str(binary), str(scenario)], capture_output=True, text=True)
    counted = INSTRUCTIONS.search(done.stderr)
    if done.returncode != 0 or counted is None:
        print(f"{valgrind} {binary} failed (status {done.returncode}): {done.stderr.strip()[-300:]}", file=sys.stderr)
        sys.exit(1)
    return int(counted.group(1).replace(",", "")), *event_and_hop_counts(binary, done.stdout)


def instructions_line(instructions: int, events: int, hops: int) -> str:
    """One counted run: its instructions in total, per packet hop and per event."""
    return (
        f"instructions {instructions:,} ({instructions / hops:.0f} per packet hop, "
        f"{instructions / events:.0f} per event), events {events}, packet hops {hops}"
    )


def memory_line(binary: Path) -> str:
    """The `memory_probe` example's line, run from `binary`'s directory; a note where it is not built."""
    probe = binary.parent / "memory_probe"
    if not probe.is_file():
        return f"(no {probe}: cargo build --release --examples)"
    done = subprocess.run([str(probe)], capture_output=True, text=True)
    if done.returncode != 0:
        return f"({probe} failed with status {done.returncode}: {done.stderr.strip()})"
    return done.stdout.strip()


def summary_line(cpu_seconds: list[float], peak_mb: list[float]) -> str:
    """The runs at a glance: the median and range of their CPU times (a shared
    machine spreads them), and the largest peak memory."""
    return (
        f"CPU over {len(cpu_seconds)} runs: median {statistics.median(cpu_seconds):.2f} s, "
        f"range {min(cpu_seconds):.2f}-{max(cpu_seconds):.2f} s; peak RSS up to {max(peak_mb):.1f} MB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=200.0, help="simulated seconds (default 200)")
    parser.add_argument(
        "--binary", type=Path, default=ROOT / "target" / "release" / "examples" / "run", help="the `run` example"
    )
    parser.add_argument("--repeat", type=int, default=1, help="runs (default 1)")
    slugs = [v.slug for v in VARIANTS]
    parser.add_argument(
        "--variant",
        choices=[*slugs, "all"],
        help="the high-speed flows' algorithm and pacing, as the study sets them (default: the file's)",
    )
    parser.add_argument(
        "--engine-floor", action="store_true", help=f"then run {ENGINE_FLOOR.name} (UDP, the engine's cost per hop)"
    )
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count each run's instructions under cachegrind instead of timing it (once: counts do not vary)",
    )
    args = parser.parse_args()
    valgrind = shutil.which("valgrind") if args.instructions else None
    if args.instructions and valgrind is None:
        print("--instructions: valgrind is not on PATH (its cachegrind tool counts the instructions)", file=sys.stderr)
        sys.exit(2)
    if not args.binary.is_file():
        print(f"--binary: {args.binary} is not a file (cargo build --release --examples)", file=sys.stderr)
        sys.exit(2)
    if args.duration <= 0 or args.repeat < 1:
        print("--duration must be positive and --repeat at least 1", file=sys.stderr)
        sys.exit(2)
    if args.instructions and args.repeat != 1:
        print("--repeat: with --instructions each run is counted once (counts do not vary)", file=sys.stderr)
        sys.exit(2)

    chosen = {v.slug: v for v in VARIANTS}
    variants: list[Variant | None] = (
        [None] if args.variant is None else list(VARIANTS) if args.variant == "all" else [chosen[args.variant]]
    )
    with tempfile.TemporaryDirectory() as tmp:
        print(f"date {datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')}")
        print(f"machine {machine_line()}; binary {args.binary}")
        load = os.getloadavg()
        print(f"load average before (1, 5, 15 min): {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
        table2_hops = 0
        for variant in variants:
            scenario = Path(tmp) / "table2-2g5.toml"
            text = scenario_text(args.duration)
            scenario.write_text(text if variant is None else variant_text(text, variant))
            label = "as it stands" if variant is None else f"with the high-speed flows running {variant.label}"
            print(f"scenario {SCENARIO.name} {label}, duration {args.duration:g} s")
            if valgrind is not None:
                instructions, events, table2_hops = count_instructions(valgrind, args.binary, scenario)
                print(instructions_line(instructions, events, table2_hops), flush=True)
                continue
            cpus: list[float] = []
            peaks: list[float] = []
            for i in range(args.repeat):
                print(f"memory before run {i + 1}: {memory_line(args.binary)}", flush=True)
                cpu, wall, events, hops, peak_mb = measure(args.binary, scenario)
                table2_hops = hops
                cpus.append(cpu)
                peaks.append(peak_mb)
                # Hops are the work (a packet crossing a link); events are fewer
                # where packets cut through a link (docs/architecture.md).
                print(
                    f"run {i + 1}: CPU {cpu:.2f} s (user+sys), wall {wall:.2f} s, events {events}, "
                    f"{events / cpu / 1e6:.2f} M events per CPU second ({cpu / events * 1e9:.0f} ns/event), "
                    f"packet hops {hops}, {hops / cpu / 1e6:.2f} M per CPU second "
                    f"({cpu / hops * 1e9:.0f} ns/hop), peak RSS {peak_mb:.1f} MB"
                )
            print(f"memory after run {args.repeat}: {memory_line(args.binary)}")
            print(summary_line(cpus, peaks))
        if args.engine_floor:
            floor = Path(tmp) / "udp-engine.toml"
            floor.write_text(scenario_text(args.duration, ENGINE_FLOOR))
            if valgrind is not None:
                counted = instructions_line(*count_instructions(valgrind, args.binary, floor))
                print(f"engine floor ({ENGINE_FLOOR.name}): {counted}")
            else:
                cpu, wall, events, hops, peak_mb = measure(args.binary, floor)
                per_hop = cpu / hops
                print(
                    f"engine floor ({ENGINE_FLOOR.name}): CPU {cpu:.2f} s, wall {wall:.2f} s, events {events}, "
                    f"packet hops {hops} ({per_hop * 1e9:.0f} ns/hop), peak RSS {peak_mb:.1f} MB; "
                    f"the Table 2 run's {table2_hops} hops at that rate: {table2_hops * per_hop:.1f} s of CPU"
                )
        load = os.getloadavg()
        print(f"load average after (1, 5, 15 min): {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
