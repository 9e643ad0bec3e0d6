"""Cost per event and memory per flow as the number of flows grows (10 to 10 000).

N long-lived SACK flows (RTTs drawn from 40-200 ms, starts from 0-1 s) share a
1 Gbit/s dumbbell bottleneck with a buffer of one BDP for a given simulated
duration. The bottleneck's packet rate is the same for every N, so the event
count stays nearly constant and what changes is how many flows, endpoints and
access links the events are spread over. Each run is a fresh process of the
`run` example; the script prints CPU time (user + system), events, nanoseconds
of CPU per event, peak resident memory, and the memory and per-event cost
relative to the smallest N, with the load average before and after.

    cargo build --release --examples
    python benchmarks/flow_scaling.py [--flows 10,100,1000,10000] [--duration 10]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from cclab.machine import machine_line
from table2_speed import ROOT, measure

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


def parse_counts(text: str) -> list[int]:
    try:
        counts = [int(part) for part in text.split(",")]
    except ValueError:
        counts = []
    if not counts or min(counts) < 1:
        print(f"--flows: expected positive integers separated by commas, got {text!r}", file=sys.stderr)
        sys.exit(2)
    return sorted(counts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flows", default="10,100,1000,10000", help="flow counts (default 10,100,1000,10000)")
    parser.add_argument("--duration", type=float, default=10.0, help="simulated seconds (default 10)")
    parser.add_argument(
        "--binary", type=Path, default=ROOT / "target" / "release" / "examples" / "run", help="the `run` example"
    )
    args = parser.parse_args()
    counts = parse_counts(args.flows)
    if args.duration <= 0:
        print("--duration: must be positive", file=sys.stderr)
        sys.exit(2)
    if not args.binary.is_file():
        print(f"--binary: {args.binary} is not a file (cargo build --release --examples)", file=sys.stderr)
        sys.exit(2)

    load = os.getloadavg()
    print(f"machine {machine_line()}")
    print(f"load average before (1, 5, 15 min): {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"{'flows':>6} {'CPU s':>7} {'events':>10} {'ns/event':>9} {'x first':>8} {'peak MB':>8} {'KB/flow':>8}")
    first: tuple[float, float, int] | None = None
    with tempfile.TemporaryDirectory() as tmp:
        for flows in counts:
            scenario = Path(tmp) / f"flows-{flows}.toml"
            scenario.write_text(SCENARIO.format(flows=flows, duration=f"{args.duration:g}"))
            cpu, _wall, events, peak_mb = measure(args.binary, scenario)
            per_event = cpu / events * 1e9
            if first is None:
                first = (per_event, peak_mb, flows)
            extra_flows = flows - first[2]
            per_flow = f"{(peak_mb - first[1]) * 1024 / extra_flows:8.1f}" if extra_flows else f"{'-':>8}"
            print(
                f"{flows:>6} {cpu:>7.2f} {events:>10} {per_event:>9.0f} {per_event / first[0]:>8.2f} "
                f"{peak_mb:>8.1f} {per_flow}"
            )
    load = os.getloadavg()
    print(f"load average after (1, 5, 15 min): {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
