"""What a link that dequeues costs, in instructions per packet hop against the FIFO fast path.

Runs bench-p1 (`crates/cclab-sim/tests/golden/bench-p1.toml`: two bulk TCP
flows over a 100 Mbit/s, 40 ms dumbbell with a one-BDP buffer, 20 s) once
under valgrind's cachegrind for each bottleneck queue: DropTail on the fast
path (departures computed at admission); DropTail through the transmitter
that pulls from its queue (forced by a one-step rate schedule, which gives the
same results: `tests/dequeue.rs`); CoDel, FQ-CoDel and PIE. It prints the
instructions per packet hop of each and the ratio to the fast path's. Counts
are exact on a shared machine (issue 44 asks at most 1.5x for a discipline
that dequeues). An AQM changes the traffic (fewer hops at lower queueing
delay), so the runs are compared per hop.

    cargo build --release -p cclab-sim --example run
    python benchmarks/dequeue_cost.py [--binary target/release/examples/run]
"""

from __future__ import annotations

import argparse
import datetime
import os
import shutil
import sys
import tempfile
from pathlib import Path

from cclab.machine import machine_line
from table2_speed import count_instructions

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "crates" / "cclab-sim" / "tests" / "golden" / "bench-p1.toml"
FAST = 'rate = "100Mbps"\ndelay = "10ms"\nbuffer = "1bdp"\n'

#: Each variant's bottleneck keys in place of bench-p1's.
VARIANTS: dict[str, str] = {
    "droptail (fast path)": FAST,
    "droptail (transmitter)": 'rate = [["0s", "100Mbps"]]\nbuffer_rate = "100Mbps"\ndelay = "10ms"\nbuffer = "1bdp"\n',
    "codel": FAST + 'queue = "codel"\n',
    "fq_codel": FAST + 'queue = "fq_codel"\n',
    "pie": FAST + 'queue = "pie"\n',
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", type=Path, default=ROOT / "target" / "release" / "examples" / "run")
    args = parser.parse_args()
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        print("valgrind is not on PATH (its cachegrind tool counts the instructions)", file=sys.stderr)
        return 2
    if not args.binary.is_file():
        print(f"--binary: no {args.binary} (cargo build --release -p cclab-sim --example run)", file=sys.stderr)
        return 2
    text = BENCH.read_text()
    if FAST not in text:
        print(f"{BENCH}: its bottleneck is not the expected `{FAST!r}`", file=sys.stderr)
        return 1
    print(f"date {datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')}")
    print(f"machine {machine_line()}; binary {args.binary}")
    print(f"load average before (1, 5, 15 min): {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    base = None
    with tempfile.TemporaryDirectory() as tmp:
        for name, keys in VARIANTS.items():
            scenario = Path(tmp) / "bench.toml"
            scenario.write_text(text.replace(FAST, keys))
            instructions, events, hops = count_instructions(valgrind, args.binary, scenario)
            per_hop = instructions / hops
            base = base or per_hop
            print(
                f"{name:24} {instructions:>15,} instructions, {hops:>9,} hops, {events:>9,} events: "
                f"{per_hop:6.1f} per hop, {per_hop / base:.3f}x the fast path"
            )
    print(f"load average after (1, 5, 15 min): {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
