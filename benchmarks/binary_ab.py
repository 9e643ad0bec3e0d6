"""Compares the CPU time of two builds of the `run` example on one scenario.

Builds A and B (each `target/release/examples/run` of a checkout) run the same
scenario alternately, so that load on a shared machine hits both alike. Prints
each build's median user+system CPU time and wall time per run, the ratio B/A,
and the load average before and after. Build a checkout's binary with
`cargo build --release --examples`; for instruction counts (noise-free), run
each under `valgrind --tool=callgrind` instead.

    python benchmarks/binary_ab.py OLD/target/release/examples/run \\
        target/release/examples/run examples/bench-p1.toml --repeat 10
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from cclab.machine import machine_line


def timed(binary: Path, scenario: Path) -> tuple[float, float]:
    """CPU (user + system) and wall seconds of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([str(binary), str(scenario)], check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", type=Path, help="the `run` binary of build A (the reference)")
    parser.add_argument("b", type=Path, help="the `run` binary of build B")
    parser.add_argument("scenario", type=Path, help="scenario TOML both run")
    parser.add_argument("--repeat", type=int, default=10, help="runs of each build (default 10)")
    args = parser.parse_args()
    for option, path in (("a", args.a), ("b", args.b), ("scenario", args.scenario)):
        if not path.is_file():
            print(f"{option}: {path} is not a file", file=sys.stderr)
            sys.exit(2)
    if args.repeat < 1:
        print("--repeat: must be at least 1", file=sys.stderr)
        sys.exit(2)

    print(f"machine {machine_line()}")
    load_before = os.getloadavg()
    cpu: dict[str, list[float]] = {"A": [], "B": []}
    wall: dict[str, list[float]] = {"A": [], "B": []}
    timed(args.a, args.scenario)  # warm the page cache for both
    timed(args.b, args.scenario)
    for i in range(args.repeat):
        order = (("A", args.a), ("B", args.b)) if i % 2 == 0 else (("B", args.b), ("A", args.a))
        for name, binary in order:
            c, w = timed(binary, args.scenario)
            cpu[name].append(c)
            wall[name].append(w)
    load_after = os.getloadavg()
    for name in ("A", "B"):
        print(f"{name}: median CPU {statistics.median(cpu[name]):.3f} s (min {min(cpu[name]):.3f}), "
              f"median wall {statistics.median(wall[name]):.3f} s over {args.repeat} runs")  # fmt: skip
    ratios = [b / a for a, b in zip(cpu["A"], cpu["B"], strict=True)]
    print(f"B/A CPU: median of paired ratios {statistics.median(ratios):.4f}, "
          f"ratio of minima {min(cpu['B']) / min(cpu['A']):.4f}")  # fmt: skip
    print(f"load average (1, 5, 15 min): before {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, "
          f"after {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
