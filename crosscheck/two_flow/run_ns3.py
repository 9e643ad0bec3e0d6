"""Runs every ns-3 3.44 job of the two-flow cross-check (run by hand, not in CI).

Each job is one ns3_two_flow.py run (a minute of start-up and 5-25 minutes of
one core at 100 Mbit/s: ns-3 walks its whole sent list on each ACK, and after
a slow-start overshoot that list holds thousands of segments). Results go to
ns3_result.json, a list with one entry per job, which compare.py reads; a
job already in it is skipped, so the script resumes where it stopped.

    python3 run_ns3.py [--workers 2] [--only rtt|same]

with ns-3's Python bindings installed (`pip install ns3==3.44.post0`).
"""

import argparse
import json
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).parent
RESULT = HERE / "ns3_result.json"
START_TIMES = (0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)
# Same-RTT pairs beyond CUBIC against CUBIC run at three start times only (ns-3's cost).
OTHER_PAIRS = (("cubic", "newreno"), ("highspeed", "highspeed"), ("bic", "bic"))
OTHER_STARTS = (0.05, 1.0, 3.0)


def jobs() -> list[tuple[str, list[str]]]:
    out = []
    for start in START_TIMES:
        args = ["--cc", "cubic", "cubic", "--rtt", "40", "120", "--start", "0", str(start), "--buffer", "1000"]
        out.append((f"rtt_cubic_{start}", args))
    pairs = [(("cubic", "cubic"), START_TIMES)] + [(p, OTHER_STARTS) for p in OTHER_PAIRS]
    for pair, starts in pairs:
        for start in starts:
            args = ["--cc", *pair, "--rtt", "40", "40", "--start", "0", str(start), "--buffer", "500"]
            out.append((f"same_{pair[0]}_{pair[1]}_{start}", args))
    return out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--only", choices=("rtt", "same"))
    a = p.parse_args()
    results = json.loads(RESULT.read_text()) if RESULT.exists() else []
    done = {r["job"] for r in results}
    todo = [(k, args) for k, args in jobs() if k not in done and (a.only is None or k.startswith(a.only))]
    lock = threading.Lock()

    def run(job: tuple[str, list[str]]) -> None:
        key, args = job
        out = subprocess.run([sys.executable, str(HERE / "ns3_two_flow.py"), *args], capture_output=True, text=True)
        if out.returncode != 0:
            print(f"{key} failed:\n{out.stderr[-2000:]}", file=sys.stderr)
            return
        result = {"job": key, **json.loads(out.stdout.strip().splitlines()[-1])}
        with lock:
            results.append(result)
            results.sort(key=lambda r: r["job"])
            RESULT.write_text(json.dumps(results, indent=1) + "\n")
        print(f"{key} done", file=sys.stderr)

    with ThreadPoolExecutor(a.workers) as pool:
        list(pool.map(run, todo))


if __name__ == "__main__":
    main()
