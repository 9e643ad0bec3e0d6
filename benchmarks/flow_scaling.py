"""CPU per packet hop and memory per flow as the number of flows grows (20 to 20 000).

N long-lived SACK flows (RTTs drawn from 40-200 ms, starts from 0-1 s) share a
1 Gbit/s dumbbell bottleneck with a buffer of one BDP for a given simulated
duration. The bottleneck's packet rate is the same for every N, so the packet
hops grow only a little with N (handshakes, more ACKs) and what changes is how
many flows, endpoints and access links they are spread over.

Each run is a fresh Python process that imports cclab and then runs the
scenario with ``cclab.run`` and reads its flows and links tables: what a
researcher gets in a notebook. The script reports that call's CPU time (user +
system: building, simulating, collecting the results, the tables to polars;
every fixed cost of a run; the interpreter's start and the imports of cclab,
polars and pyarrow, paid once per process, are outside the call) per
packet hop and relative to the smallest N, the whole process's CPU, the peak
resident memory, and the memory per flow above the smallest N. Rounds
interleave the counts (20, 2000, 20000, 20, 2000, ...), so that the machine
speeding up or slowing down between sittings touches every count alike; the
table shows each count's median.

    python benchmarks/flow_scaling.py [--flows 20,2000,20000] [--duration 3] [--rounds 3] [--python PATH,...]

``--python`` names the interpreters whose cclab runs (default: this one); with
several (builds before and after a change, each in its own environment) the
rounds interleave them too, and the script prints a table for each.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from cclab.machine import machine_line

SCENARIO = """
name = "flow-scaling-{flows}"
[run]
duration = "{duration}s"
seed = 1
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "1Gbps"
delay = "10ms"
buffer = "1bdp"
[[flows]]
name = "bulk"
count = {flows}
rtt = "40ms..200ms"
start = "0s..1s"
recovery = "sack"
"""

# Runs in the child: the call is timed by the process's CPU clock, and the peak
# memory read before anything else is built. polars and pyarrow are imported
# first: their import (0.4 s) is paid once per process, not per run. A build
# whose Result has no `header` (before the tables crossed as Arrow) has its
# counts in `summary`.
CHILD = """
import json, resource, sys, time
import cclab, polars, pyarrow
cpu = time.process_time()
result = cclab.run(sys.argv[1], memory_limit="unlimited")
result.flows, result.links
cpu = time.process_time() - cpu
peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
counts = getattr(result, "header", None) or result.summary
print(json.dumps({"cpu_s": cpu, "hops": counts["packet_hops"], "peak_kib": peak_kib}))
"""


def parse_counts(text: str) -> list[int]:
    try:
        counts = [int(part) for part in text.split(",")]
    except ValueError:
        counts = []
    if not counts or min(counts) < 1:
        print(f"--flows: expected positive integers separated by commas, got {text!r}", file=sys.stderr)
        sys.exit(2)
    return sorted(counts)


def run_once(python: str, scenario: Path) -> dict[str, float]:
    """The call's CPU, packet hops and peak memory, and the whole process's CPU, of one run."""
    child = subprocess.Popen([python, "-c", CHILD, str(scenario)], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    out = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        print(f"{python}: the run of {scenario.name} failed (status {status})", file=sys.stderr)
        sys.exit(1)
    measured: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    measured["process_cpu_s"] = usage.ru_utime + usage.ru_stime
    return measured


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flows", default="20,2000,20000", help="flow counts (default 20,2000,20000)")
    parser.add_argument("--duration", type=float, default=3.0, help="simulated seconds (default 3)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument("--python", default=sys.executable, help="interpreters whose cclab runs, comma-separated")
    args = parser.parse_args()
    counts = parse_counts(args.flows)
    if args.duration <= 0:
        print("--duration: must be positive", file=sys.stderr)
        sys.exit(2)
    if args.rounds < 1:
        print("--rounds: must be at least 1", file=sys.stderr)
        sys.exit(2)

    load = os.getloadavg()
    pythons = args.python.split(",")
    print(f"machine {machine_line()}")
    print(f"load average before (1, 5, 15 min): {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    runs: dict[tuple[str, int], list[dict[str, float]]] = {(p, n): [] for p in pythons for n in counts}
    with tempfile.TemporaryDirectory() as tmp:
        scenarios = {}
        for n in counts:
            scenarios[n] = Path(tmp) / f"flows-{n}.toml"
            scenarios[n].write_text(SCENARIO.format(flows=n, duration=f"{args.duration:g}"))
        for _ in range(args.rounds):
            for n in counts:
                for python in pythons:
                    runs[python, n].append(run_once(python, scenarios[n]))
    for python in pythons:
        print_table(python, counts, runs, args)
    load = os.getloadavg()
    print(f"load average after (1, 5, 15 min): {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


def print_table(python: str, counts: list[int], runs: dict[tuple[str, int], list[dict[str, float]]],
                args: argparse.Namespace) -> None:  # fmt: skip
    def median(n: int, key: str) -> float:
        return statistics.median(r[key] for r in runs[python, n])

    print(f"python {python}: medians of {args.rounds} interleaved rounds, {args.duration:g} simulated s")
    print(f"{'flows':>6} {'call CPU s':>10} {'hops':>9} {'ns/hop':>7} {'x first':>8} "
          f"{'process CPU s':>13} {'peak MB':>8} {'KB/flow':>8}")  # fmt: skip
    first = counts[0]
    per_hop_first = median(first, "cpu_s") / median(first, "hops") * 1e9
    for n in counts:
        cpu, hops, peak_mb = median(n, "cpu_s"), median(n, "hops"), median(n, "peak_kib") / 1024
        per_hop = cpu / hops * 1e9
        extra = n - first
        per_flow = f"{(peak_mb - median(first, 'peak_kib') / 1024) * 1024 / extra:8.1f}" if extra else f"{'-':>8}"
        print(f"{n:>6} {cpu:>10.3f} {hops:>9.0f} {per_hop:>7.0f} {per_hop / per_hop_first:>8.2f} "
              f"{median(n, 'process_cpu_s'):>13.3f} {peak_mb:>8.1f} {per_flow}")  # fmt: skip


if __name__ == "__main__":
    main()
