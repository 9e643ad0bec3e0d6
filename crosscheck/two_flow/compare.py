"""cclab side of the two-flow cross-check (run by hand, not in CI).

Runs rtt_fairness.toml (CUBIC/SACK, 40 ms against 120 ms) and same_rtt.toml
(two flows of one algorithm, 40 ms each) with the second flow starting at
each of START_TIMES, deterministic (no send overhead, seed irrelevant) and
with ns-2's `send_overhead` of 1 ms under SEEDS, and prints each run beside
the ns-3 3.44 result for the same start time (ns3_result.json, written by
run_ns3.py). ns-3 has nothing random on this path, so it has one run per
start time.

    pip install . && python3 crosscheck/two_flow/compare.py > crosscheck/two_flow/result.txt
"""

import json
import statistics
import subprocess
from pathlib import Path

import cclab

HERE = Path(__file__).parent
START_TIMES = (0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)
SEEDS = (1, 2, 3)
OVERHEAD = "1ms"
# Same-RTT pairs: (flow 0's cc, flow 1's cc) as cclab and ns3_two_flow.py name them.
PAIRS = (("cubic", "cubic"), ("highspeed", "highspeed"), ("bic", "bic"), ("cubic", "newreno"))
CCLAB_CC = {"newreno": "reno"}  # ns-3's TcpNewReno is Reno's window with NewReno recovery; here recovery is SACK
# ns-3's TcpBic has Linux's constants and rules (cclab's `constants = "linux"`); cclab's default is the paper's.
CCLAB_PARAMS = {"bic": ({}, {"constants": "linux"})}


def ns3_runs() -> dict[str, dict]:
    path = HERE / "ns3_result.json"
    if not path.exists():
        return {}
    return {r["job"]: r for r in json.loads(path.read_text())}


def run(scenario: cclab.Scenario, seed: int) -> tuple[int, int, list[int]]:
    res = cclab.run(scenario, seed=seed)
    f = res.flows
    b = f["bytes_delivered"].to_list()
    return b[0], b[1], f["timeouts"].to_list()


def summary(values: list[float]) -> str:
    v = sorted(values)
    return f"min {v[0]:.2f}  median {statistics.median(v):.2f}  max {v[-1]:.2f}  (n={len(v)})"


def overlap(a: list[float], b: list[float]) -> str:
    lo, hi = max(min(a), min(b)), min(max(a), max(b))
    return f"ranges overlap on [{lo:.2f}, {hi:.2f}]" if lo <= hi else "ranges do not overlap"


def rtt_fairness(ns3: dict[str, dict]) -> None:
    base = cclab.load(HERE / "rtt_fairness.toml")
    print("## RTT fairness: CUBIC/SACK, 40 ms (from 0 s) against 120 ms (from the start below)")
    print("## throughput ratio rtt40 / rtt120 over 0-60 s; [timeouts rtt40, rtt120]")
    head = f"{'start s':>7}  {'ns-3':>12}  {'cclab det.':>12}  {'cclab 40 B hdr':>14}"
    print(f"{head}  cclab send_overhead {OVERHEAD}, seeds {SEEDS[0]}-{SEEDS[-1]}")
    cols: dict[str, list[float]] = {"ns3": [], "det": [], "h40": [], "ovh": []}
    for start in START_TIMES:
        sc = base.with_(**{"flows[1].start": f"{start}s"})
        a, b, to = run(sc, 1)
        cols["det"].append(a / b)
        a40, b40, to40 = run(sc.with_(**{"flows[*].header": 40}), 1)
        cols["h40"].append(a40 / b40)
        seeded = []
        for seed in SEEDS:
            x, y, tx = run(sc.with_(**{"flows[*].send_overhead": OVERHEAD}), seed)
            seeded.append(f"{x / y:5.2f} {tx}")
            cols["ovh"].append(x / y)
        n = ns3.get(f"rtt_cubic_{start}")
        if n:
            f0, f1 = n["flows"]
            cols["ns3"].append(f0["bytes"] / f1["bytes"])
            ns3_cell = f"{f0['bytes'] / f1['bytes']:5.2f} [{f0['timeouts']}, {f1['timeouts']}]"
        else:
            ns3_cell = "-"
        det, h40 = f"{a / b:5.2f} {to}", f"{a40 / b40:5.2f} {to40}"
        print(f"{start:7.2f}  {ns3_cell:>12}  {det:>12}  {h40:>14}  {'  '.join(seeded)}")
    for key, label in (("ns3", "ns-3 3.44"), ("det", "cclab, deterministic"), ("h40", "cclab, 40-byte headers"),
                       ("ovh", f"cclab, send_overhead {OVERHEAD}")):  # fmt: skip
        if cols[key]:
            print(f"{label:<28} {summary(cols[key])}")
    if cols["ns3"]:
        print(f"ns-3 against cclab deterministic: {overlap(cols['ns3'], cols['det'])}")
        print(f"ns-3 against cclab with send_overhead: {overlap(cols['ns3'], cols['ovh'])}")
    # The NewReno swing: Reno's window with SACK recovery (no ns-3 runs: their cost).
    reno = []
    for header in (54, 40):
        for start in START_TIMES:
            changes = {"flows[1].start": f"{start}s", "flows[*].cc": "reno", "flows[*].header": header}
            a, b, _ = run(base.with_(**changes), 1)
            reno.append(a / b)
        cells = " ".join(f"{r:.1f}" for r in reno[-len(START_TIMES) :])
        print(f"cclab Reno/SACK, {header} B, deterministic, by start time: {cells}")
    print()


def same_rtt(ns3: dict[str, dict]) -> None:
    base = cclab.load(HERE / "same_rtt.toml")
    print("## Same RTT: two flows, 40 ms, 500-packet buffer; flow 0's share of the two flows' bytes over 0-60 s")
    for pair in PAIRS:
        if not any(k.startswith(f"same_{pair[0]}_{pair[1]}_") for k in ns3) and pair != PAIRS[0]:
            continue
        for params in CCLAB_PARAMS.get(pair[0], ({},)):
            same_rtt_pair(base, ns3, pair, params)


def same_rtt_pair(base: cclab.Scenario, ns3: dict[str, dict], pair: tuple[str, str], params: dict) -> None:
    suffix = f", cclab cc_params {params}" if params else ""
    print(f"### {pair[0]} (from 0 s) against {pair[1]} (from the start below){suffix}")
    head = f"{'start s':>7}  {'ns-3':>6}  {'cclab det.':>10}"
    print(f"{head}  cclab send_overhead {OVERHEAD}, seeds {SEEDS[0]}-{SEEDS[-1]}")
    cols: dict[str, list[float]] = {"ns3": [], "det": [], "ovh": []}
    changes = {f"flows[{i}].cc": CCLAB_CC.get(cc, cc) for i, cc in enumerate(pair)}
    if params:
        changes |= {f"flows[{i}].cc_params": params for i, cc in enumerate(pair) if cc == pair[0]}
    for start in START_TIMES:
        sc = base.with_(**{"flows[1].start": f"{start}s", **changes})
        a, b, _ = run(sc, 1)
        cols["det"].append(a / (a + b))
        seeded = []
        for seed in SEEDS:
            x, y, _ = run(sc.with_(**{"flows[*].send_overhead": OVERHEAD}), seed)
            seeded.append(f"{x / (x + y):.3f}")
            cols["ovh"].append(x / (x + y))
        n = ns3.get(f"same_{pair[0]}_{pair[1]}_{start}")
        if n:
            f0, f1 = n["flows"]
            cols["ns3"].append(f0["bytes"] / (f0["bytes"] + f1["bytes"]))
            ns3_cell = f"{cols['ns3'][-1]:.3f}"
        else:
            ns3_cell = "-"
        print(f"{start:7.2f}  {ns3_cell:>6}  {a / (a + b):10.3f}  {'  '.join(seeded)}")
    labels = (("ns3", "ns-3 3.44"), ("det", "cclab, deterministic"), ("ovh", f"cclab, send_overhead {OVERHEAD}"))
    for key, label in labels:
        if cols[key]:
            print(f"{label:<28} {summary(cols[key])}")
    if cols["ns3"]:
        print(f"ns-3 against cclab deterministic: {overlap(cols['ns3'], cols['det'])}")
        print(f"ns-3 against cclab with send_overhead: {overlap(cols['ns3'], cols['ovh'])}")
    print()


def main() -> None:
    build = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True)
    print(f"cclab {cclab.__version__}, worktree at {build.stdout.strip()}")
    ns3 = ns3_runs()
    rtt_fairness(ns3)
    same_rtt(ns3)


if __name__ == "__main__":
    main()
