"""cclab against ns-3 3.44 on benchmark P1: the CPU time of each whole process, in one interleaved run.

P1 is examples/bench-p1.toml (two bulk flows, NewReno and SACK, on a
100 Mbit/s, 40 ms dumbbell with a one-BDP DropTail buffer, 20 s). Each round
runs, one after the other:

- cclab: `python -m cclab run examples/bench-p1.toml` with this interpreter
  (the cclab it imports), as a child process;
- ns-3: crosscheck/p1/ns3_p1.py, the same network in ns-3 3.44, with the
  interpreter given by --ns3-python, as a child process, passed the start
  times cclab drew;
- the start-up alone: `python -c pass` and `python -c "import cclab.cli"`
  (what `cclab run` imports) with this interpreter, as child processes;
- cclab.run of the same scenario in this process, timed with
  time.process_time as `cclab bench` times it: cclab's simulation CPU, and the
  bytes each flow delivered.

A child's CPU time is user + system from os.wait4: interpreter start, imports,
ns-3's binding start-up (which compiles C++ at each start) and everything
after, included. ns3_p1.py also reports the CPU time of ns.Simulator.Run
alone, as benchmarks/ns3_speed.py measures it. Prints each round, the medians,
the ratio of ns-3's whole-process CPU to cclab's (issue 48's goal: at least
100), the bytes each side delivered, the load average before and after and
the machine. It asserts nothing. Run by hand, not in CI (ns-3 takes about a
minute of CPU a round):

    python benchmarks/ns3_p1.py --ns3-python /work/venv-ns3/bin/python [--rounds 3]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "examples" / "bench-p1.toml"
NS3_SCRIPT = ROOT / "crosscheck" / "p1" / "ns3_p1.py"
# What `cclab run` imports: the command line, which prints a run's tables
# without polars or pyarrow (they are imported only for DataFrames).
IMPORTS = "import cclab.cli"


@dataclass
class Child:
    """What one child process cost and printed."""

    cpu_s: float
    wall_s: float
    peak_mb: float
    stdout: str


def run_child(label: str, command: list[str]) -> Child:
    """Runs `command` to its end and takes its resource use from wait4, which counts the whole process."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(command, stdout=out, stderr=err, cwd=ROOT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        # wait4 reaped it: tell Popen, which would otherwise wait for it again.
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            tail = err.read().decode(errors="replace")[-2000:]
            raise SystemExit(f"{label} failed (exit status {proc.returncode}):\n{tail}")
        return Child(usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss / 1024, out.read().decode())


@dataclass
class Round:
    cclab: Child
    ns3: Child
    bare: Child
    imports: Child
    cclab_sim_cpu_s: float
    cclab_bytes: dict[str, int]
    ns3_run_cpu_s: float
    ns3_bytes: dict[str, int]


def cclab_in_process() -> tuple[float, dict[str, int], dict[str, float]]:
    """cclab.run's CPU seconds, each flow's bytes delivered and start time."""
    import cclab

    scenario = cclab.load(SCENARIO)
    start = time.process_time()
    result = cclab.run(scenario)
    cpu = time.process_time() - start
    rows = result.flows.select("name", "bytes_delivered", "start_s").iter_rows()
    delivered, starts = {}, {}
    for name, delivered_bytes, start_s in rows:
        delivered[name], starts[name] = int(delivered_bytes), float(start_s)
    return cpu, delivered, starts


def one_round(ns3_python: str, starts: dict[str, float]) -> Round:
    cclab_child = run_child("cclab run", [sys.executable, "-m", "cclab", "run", str(SCENARIO)])
    ns3_args = [f"--{name}-start={starts[name]!r}" for name in ("newreno", "sack")]
    ns3_child = run_child("the ns-3 side", [ns3_python, str(NS3_SCRIPT), *ns3_args])
    bare = run_child("python -c pass", [sys.executable, "-c", "pass"])
    imports = run_child(f"python -c {IMPORTS!r}", [sys.executable, "-c", IMPORTS])
    sim_cpu, delivered, _ = cclab_in_process()
    ns3 = json.loads(ns3_child.stdout.strip().splitlines()[-1])
    ns3_bytes = {name: int(flow["bytes"]) for name, flow in ns3["flows"].items()}
    return Round(cclab_child, ns3_child, bare, imports, sim_cpu, delivered, ns3["simulator_run_cpu_s"], ns3_bytes)


def median(values: list[float]) -> float:
    return statistics.median(values)


def report(rounds: list[Round]) -> list[str]:
    """The summary lines: medians over the rounds, the ratio and the bytes."""
    cclab_cpu = median([r.cclab.cpu_s for r in rounds])
    ns3_cpu = median([r.ns3.cpu_s for r in rounds])
    sim = median([r.cclab_sim_cpu_s for r in rounds])
    ns3_run = median([r.ns3_run_cpu_s for r in rounds])
    bare = median([r.bare.cpu_s for r in rounds])
    imports = median([r.imports.cpu_s for r in rounds])
    lines = [
        f"medians over {len(rounds)} rounds:",
        "| side | whole-process CPU | simulation CPU | wall | peak RSS | bytes delivered |",
        "|---|---|---|---|---|---|",
    ]
    for label, child, simulation, delivered in [
        ("cclab", [r.cclab for r in rounds], f"{sim:.3f} s (cclab.run)", rounds[-1].cclab_bytes),
        ("ns-3 3.44", [r.ns3 for r in rounds], f"{ns3_run:.2f} s (Simulator::Run)", rounds[-1].ns3_bytes),
    ]:
        cpu = median([c.cpu_s for c in child])
        lines.append(
            f"| {label} | {cpu:.3f} s | {simulation} | {median([c.wall_s for c in child]):.2f} s | "
            f"{max(c.peak_mb for c in child):.0f} MB | {sum(delivered.values()) / 1e6:.1f} MB |"
        )
    ratios = [r.ns3.cpu_s / r.cclab.cpu_s for r in rounds]
    lines.append(
        f"ns-3 / cclab, whole-process CPU: {ns3_cpu / cclab_cpu:.0f}x (medians; per round "
        f"{', '.join(f'{x:.0f}x' for x in ratios)}; goal at least 100x)"
    )
    lines.append(f"ns-3 Simulator::Run / cclab.run, simulation CPU: {ns3_run / sim:.0f}x")
    lines.append(
        f"cclab's whole process, {cclab_cpu:.3f} s: `python -c pass` {bare:.3f} s, "
        f"`python -c {IMPORTS!r}` {imports:.3f} s, cclab.run {sim:.3f} s in a warm process "
        f"(imports and simulation together {100 * (imports + sim) / cclab_cpu:.0f} % of it)"
    )
    for name in rounds[-1].cclab_bytes:
        ours, theirs = rounds[-1].cclab_bytes[name], rounds[-1].ns3_bytes[name]
        lines.append(f"bytes delivered, {name}: cclab {ours / 1e6:.3f} MB, ns-3 {theirs / 1e6:.3f} MB")
    ours, theirs = sum(rounds[-1].cclab_bytes.values()), sum(rounds[-1].ns3_bytes.values())
    lines.append(f"bytes delivered, both: ns-3 / cclab {theirs / ours:.3f}")
    return lines


def refuse(message: str) -> NoReturn:
    print(message, file=sys.stderr)
    sys.exit(2)


class OneLineParser(argparse.ArgumentParser):
    """Refuses a bad argument in one line naming it, without the usage text."""

    def error(self, message: str) -> NoReturn:
        refuse(message)


def main() -> None:
    parser = OneLineParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--ns3-python", required=True, help="a Python interpreter that can import ns-3 3.44 (`from ns import ns`)"
    )
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    args = parser.parse_args()
    if args.rounds < 1:
        refuse(f"--rounds: must be at least 1, not {args.rounds}")
    ns3_python = Path(args.ns3_python)
    if not ns3_python.is_file() or not os.access(ns3_python, os.X_OK):
        refuse(f"--ns3-python: {args.ns3_python} is not an executable file")

    from cclab.machine import machine_line

    print(f"date {datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')}")
    print(f"machine {machine_line()}")
    print(f"cclab from {sys.executable}; ns-3 from {args.ns3_python}")
    load = os.getloadavg()
    print(f"load average before (1, 5, 15 min): {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}", flush=True)
    # The start times cclab draws for the run's seed, so that ns-3's flows start when cclab's do.
    _, _, starts = cclab_in_process()
    print("start times: " + ", ".join(f"{name} {t:.9f} s" for name, t in starts.items()), flush=True)
    rounds = []
    for i in range(args.rounds):
        r = one_round(str(ns3_python), starts)
        rounds.append(r)
        print(
            f"round {i + 1}: cclab run {r.cclab.cpu_s:.3f} s CPU ({r.cclab.wall_s:.2f} s wall, "
            f"{r.cclab.peak_mb:.0f} MB), cclab.run {r.cclab_sim_cpu_s:.3f} s; "
            f"ns-3 {r.ns3.cpu_s:.2f} s CPU ({r.ns3.wall_s:.1f} s wall, {r.ns3.peak_mb:.0f} MB), "
            f"Simulator::Run {r.ns3_run_cpu_s:.2f} s; python -c pass {r.bare.cpu_s:.3f} s, "
            f"imports {r.imports.cpu_s:.3f} s; load {os.getloadavg()[0]:.2f}",
            flush=True,
        )
    print("\n".join(report(rounds)))
    load = os.getloadavg()
    print(f"load average after (1, 5, 15 min): {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
