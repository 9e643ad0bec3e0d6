"""Peak memory of a run whose traffic source opens 10 000 to 100 000 connections.

Transfers arrive at 500/s (Pareto sizes, mean 100 KB, shape 1.2) on a 1 Gbit/s
dumbbell, about 40 % load, for 20, 100 and 200 simulated seconds. Each run is a
fresh `cclab run --out DIR` process (the completion-time table is written to
transfers.parquet), so its peak resident memory (ru_maxrss of the child) is
what a user sees. A closed connection's endpoints are reclaimed, so what may
grow with the number of transfers is the completion-time table itself: the
script prints the memory per additional transfer next to the table's size.

    python benchmarks/arrivals_memory.py [--durations 20,100,200]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cclab.machine import machine_line

SCENARIO = """
name = "arrivals-memory"
[run]
duration = "{duration}s"
seed = 1
[topology]
kind = "dumbbell"
access = {{ rate = "10Gbps" }}
[topology.bottleneck]
rate = "1Gbps"
delay = "10ms"
buffer = "1bdp"
[[flows]]
name = "web"
recovery = "sack"
rtt = "40ms"
app = {{ kind = "arrivals", rate = "500/s", size = "pareto(mean=100KB, shape=1.2)" }}
"""


def measure(duration: int, workdir: Path) -> dict[str, float]:
    scenario = workdir / f"arrivals-{duration}s.toml"
    scenario.write_text(SCENARIO.format(duration=duration))
    out = workdir / f"out-{duration}"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    # A child per run: ru_maxrss of RUSAGE_CHILDREN is the largest child so far,
    # so runs go from the shortest to the longest.
    subprocess.run([sys.executable, "-m", "cclab", "run", str(scenario), "--out", str(out)], check=True,
                   stdout=subprocess.DEVNULL)  # fmt: skip
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    summary = json.loads((out / "summary.json").read_text())
    completions = summary["transfers"]["completion_s"]
    return {
        "duration": duration,
        "transfers": len(completions),
        "completed": sum(1 for c in completions if c is not None),
        "peak_connections": summary["connections"]["peak"],
        "closed": summary["connections"]["closed"],
        "peak_mb": after.ru_maxrss / 1024,
        "wall_s": wall,
        "cpu_s": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime),
        "table_mb": (out / "transfers.parquet").stat().st_size / 1e6,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--durations", default="20,100,200", help="simulated seconds, comma-separated")
    args = parser.parse_args()
    durations = sorted(int(d) for d in args.durations.split(","))
    print(f"machine {machine_line()}")
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(f"{'sim s':>6} {'transfers':>10} {'completed':>10} {'closed':>8} {'peak conns':>10} "
          f"{'peak RSS MB':>12} {'wall s':>7} {'CPU s':>7}")  # fmt: skip
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for d in durations:
            r = measure(d, Path(tmp))
            rows.append(r)
            counts = f"{d:>6} {r['transfers']:>10,} {r['completed']:>10,} {r['closed']:>8,}"
            print(f"{counts} {r['peak_connections']:>10,} {r['peak_mb']:>12.1f} {r['wall_s']:>7.1f} {r['cpu_s']:>7.1f}")
    if len(rows) >= 2:
        first, last = rows[0], rows[-1]
        extra = last["transfers"] - first["transfers"]
        per = (last["peak_mb"] - first["peak_mb"]) * 1e6 / max(extra, 1)
        grew = last["peak_mb"] - first["peak_mb"]
        print(f"peak memory grew {grew:.1f} MB for {extra:,} more transfers ({per:.0f} bytes per transfer: "
              "the completion-time table in the engine, the result and Python)")  # fmt: skip


if __name__ == "__main__":
    main()
