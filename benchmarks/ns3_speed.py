"""cclab against ns-3 3.44 on the same network: the CPU time of the simulation alone.

The network is the ssthresh-basis cross-check's (crosscheck/ssthresh_basis/):
two SACK flows, 40 ms RTT from 0 s and 80 ms from 1 s, share a 100 Mbit/s,
10 ms DropTail bottleneck with 250 packets of buffer for 20 s. ns-3 runs
`ns3_two_sack_flows.py` with `ns.Simulator.Run` timed (its start-up, which
compiles the bindings, is not counted); cclab runs `two_sack_flows.toml` in
this process, timed around `cclab.run` (building the network and collecting
the result included), best of --repeat. Prints each side's CPU time and bytes
delivered, and the ratio; it asserts nothing.

ns-3 comes from its Python package, in a virtual environment of its own:

    python3 -m venv ns3env && ns3env/bin/pip install ns3==3.44.post0
    python benchmarks/ns3_speed.py --ns3-python ns3env/bin/python
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
from pathlib import Path

import cclab
from cclab.machine import machine_line

ROOT = Path(__file__).resolve().parent.parent
CROSSCHECK = ROOT / "crosscheck" / "ssthresh_basis"
TIMING_PREFIX = "ns3-simulator-run-cpu-s "

# Run in ns-3's interpreter: the cross-check script, with Simulator.Run timed on stderr.
NS3_TIMED = f"""
import runpy, sys, time
from ns import ns
run = ns.Simulator.Run
def timed_run():
    start = time.process_time()
    run()
    print("{TIMING_PREFIX}" + repr(time.process_time() - start), file=sys.stderr)
ns.Simulator.Run = timed_run
runpy.run_path(sys.argv[1], run_name="__main__")
"""


def ns3_side(python: str) -> tuple[float, int]:
    """ns-3's CPU seconds in Simulator.Run and the bytes its flows delivered."""
    script = CROSSCHECK / "ns3_two_sack_flows.py"
    proc = subprocess.run([python, "-c", NS3_TIMED, str(script)], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"the ns-3 side failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    seconds = next(
        float(line.removeprefix(TIMING_PREFIX)) for line in proc.stderr.splitlines() if line.startswith(TIMING_PREFIX)
    )
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    return seconds, sum(flow["bytes"] for flow in result["flows"])


def cclab_side(repeat: int) -> tuple[float, int]:
    """cclab's best CPU seconds for one run and the bytes its flows delivered."""
    scenario = cclab.load(CROSSCHECK / "two_sack_flows.toml")
    best, delivered = float("inf"), 0
    for _ in range(repeat):
        start = time.process_time()
        result = cclab.run(scenario)
        best = min(best, time.process_time() - start)
        delivered = int(result.flows["bytes_delivered"].sum())
    return best, delivered


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--ns3-python", required=True, help="a Python interpreter that can import ns-3 (`from ns import ns`)"
    )
    parser.add_argument("--repeat", type=int, default=5, help="cclab runs to time, the best counts (default 5)")
    args = parser.parse_args()
    print(f"machine {machine_line()}")
    cclab_cpu, cclab_bytes = cclab_side(args.repeat)
    print(f"cclab       {cclab_cpu:8.3f} s CPU (best of {args.repeat})  {cclab_bytes / 1e6:7.1f} MB delivered")
    ns3_cpu, ns3_bytes = ns3_side(args.ns3_python)
    print(f"ns-3 3.44   {ns3_cpu:8.3f} s CPU (Simulator::Run)  {ns3_bytes / 1e6:7.1f} MB delivered")
    print(f"ns-3 / cclab: {ns3_cpu / cclab_cpu:.0f}x the CPU time")


if __name__ == "__main__":
    main()
