"""Speed-up of a 40-run sweep on all local cores over one job.

    python benchmarks/sweep_speedup.py [--duration 60s] [--repeat 2]

Prints wall times and the ratio; it asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import cclab
from cclab.machine import machine_line

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--duration", default="60s", help="simulated time per run (default 60s)")
    parser.add_argument("--repeat", type=int, default=2, help="timings per job count (default 2)")
    args = parser.parse_args()
    scenario = cclab.load(ROOT / "examples" / "dumbbell.toml").with_(**{"run.duration": args.duration})
    grid = {"flows[0].recovery": ["newreno", "sack"]}
    cores = os.cpu_count() or 1
    best: dict[int, float] = {}
    print(f"machine {machine_line()}")
    for jobs in [1, cores] * args.repeat:
        start = time.perf_counter()
        cclab.sweep(scenario, grid=grid, replications=20, jobs=jobs, progress=False)
        elapsed = time.perf_counter() - start
        best[jobs] = min(best.get(jobs, elapsed), elapsed)
        print(f"jobs={jobs}: {elapsed:.2f} s for 40 runs")
    print(f"speed-up with {cores} jobs over 1: {best[1] / best[cores]:.2f}x")


if __name__ == "__main__":
    main()
