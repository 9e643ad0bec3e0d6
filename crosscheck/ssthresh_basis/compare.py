"""cclab side of the ssthresh-basis cross-check (run by hand, not in CI).

Runs two_sack_flows.toml with each `ssthresh_basis` and prints, beside the
ns-3 3.44 result saved in ns3_result.json (from ns3_two_sack_flows.py), each
flow's goodput over 0-20 s, the split between the flows, and the ssthresh
after each flow's first congestion events.

    pip install . && python3 crosscheck/ssthresh_basis/compare.py
"""

import json
from pathlib import Path

import cclab

HERE = Path(__file__).parent


def ours(basis: str) -> dict:
    scenario = cclab.load(HERE / "two_sack_flows.toml").with_(**{"flows[*].ssthresh_basis": basis})
    res = cclab.run(scenario, seed=1)
    flows = []
    for name in ("rtt40", "rtt80"):
        row = res.flows.filter(res.flows["name"] == name).row(0, named=True)
        m = res.metrics
        changes = m.filter((m["component"] == name) & (m["metric"] == "ssthresh")).sort("time_s")
        events = [(round(t, 6), v) for t, v in zip(changes["time_s"], changes["value"], strict=True) if v < 1e8]
        flows.append({"bytes": int(row["bytes_delivered"]), "ssthresh": events[:5]})
    return {"flows": flows}


def split(result: dict) -> float:
    a, b = (f["bytes"] for f in result["flows"])
    return a / (a + b)


def main() -> None:
    ns3 = json.loads((HERE / "ns3_result.json").read_text())
    ns3["flows"] = [{**f, "ssthresh": [e for e in f["ssthresh"] if e[1] < 1e6]} for f in ns3["flows"]]
    rows = [("ns-3 3.44 (pipe)", ns3)] + [(f"cclab {b}", ours(b)) for b in ("flight", "pipe", "cwnd")]
    print(
        f"{'run':<18} {'rtt40 MB':>9} {'rtt80 MB':>9} {'rtt40 share':>11}  first ssthresh (s, segments) rtt40 | rtt80"
    )
    for label, r in rows:
        f0, f1 = r["flows"]
        print(
            f"{label:<18} {f0['bytes'] / 1e6:9.2f} {f1['bytes'] / 1e6:9.2f} {split(r):11.3f}  "
            f"{f0['ssthresh'][:3]} | {f1['ssthresh'][:2]}"
        )
    ref = split(ns3)
    for label, r in rows[1:]:
        print(f"{label}: rtt40 share / ns-3's = {split(r) / ref:.3f}")


if __name__ == "__main__":
    main()
