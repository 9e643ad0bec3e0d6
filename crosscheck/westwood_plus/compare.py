"""cclab side of the Westwood+ cross-check (run by hand, not in CI).

Runs one_flow.toml (cc = "westwood_plus", SACK recovery) without loss and with
1 % random loss on the bottleneck through the Rust example runner, and prints
beside the ns-3 3.44 result saved in ns3_result.json the goodput from 5 s to
30 s, the ratio to ns-3's, and the bandwidth estimate (ns-3's EstimatedBW,
cclab's `cc.bwe`): its mean from 5 s to 30 s, the share of samples above the
20 Mbit/s link, and its value every 2.5 s; how often ssthresh was set
from 5 s on, and to what on average; and, from ns-3's diagnostic runs, how
many bytes its estimator counted against those delivered.

    python3 crosscheck/westwood_plus/compare.py          # from the repository root
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from cclab_runner import run_scenario  # noqa: E402 (a sibling module, found through the path above)

HERE = Path(__file__).parent
SECONDS = 25.0  # 5 s to 30 s
FROM_S = 5.0
LINK_BPS = 20e6
SHOW_EVERY_S = 2.5


def ours(loss: float) -> tuple[float, dict[float, float], dict]:
    text = (HERE / "one_flow.toml").read_text().replace("loss = 0.0", f"loss = {loss}")
    r = run_scenario(text)
    flow = r["flows"][0]
    names = [s["metric"] for s in r["timeseries"]["series"]]
    m = r["timeseries"]["metrics"]
    bwe: dict[float, float] = {}
    ssthresh: list[float] = []
    for t, s, v in zip(m["time_s"], m["series"], m["value"], strict=True):
        if names[s] == "cc.bwe":
            bwe[round(t, 3)] = v
        elif t >= FROM_S:
            ssthresh.append(v)
    flow["ssthresh_set"] = ssthresh
    return flow["bytes_delivered"] * 8 / SECONDS / 1e6, bwe, flow


def summary(bwe: dict[float, float]) -> str:
    window = [v for t, v in bwe.items() if t >= FROM_S]
    mean = sum(window) / len(window) / 1e6
    above = sum(v > LINK_BPS for v in window) / len(window)
    shown = " ".join(f"{bwe[t] / 1e6:.1f}" for t in sorted(bwe) if t >= FROM_S and t % SHOW_EVERY_S < 1e-9)
    return f"mean {mean:.2f}, above link {above:.2f}; {shown}"


def cuts(values: list[float]) -> str:
    """How many times ssthresh was set from 5 s, and the mean value, segments."""
    if not values:
        return "none"
    return f"{len(values)} times, mean {sum(values) / len(values):.1f} segments"


def main() -> None:
    ns3 = json.loads((HERE / "ns3_result.json").read_text())
    print(f"{'loss':<5} {'ns-3 Mb/s':>9} {'cclab Mb/s':>10} {'ratio':>6}  cclab recoveries, timeouts, retransmits")
    lines = []
    ssthresh = []
    for ref in ns3["runs"]:
        loss = ref["loss"]
        ref_goodput = ref["bytes_from_5s"] * 8 / SECONDS / 1e6
        goodput, bwe, flow = ours(loss)
        print(
            f"{loss:<5} {ref_goodput:9.2f} {goodput:10.2f} {goodput / ref_goodput:6.3f}  "
            f"{flow['recoveries']}, {flow['timeouts']}, {flow['retransmits']}"
        )
        every = ref["bwe_every_s"]
        theirs = {round((i + 1) * every, 3): v for i, v in enumerate(ref["bwe_bps"])}
        lines.append(f"loss {loss}: ns-3  {summary(theirs)}")
        lines.append(f"loss {loss}: cclab {summary(bwe)}")
        set_from = [v / 1000 for t, v in ref.get("ssthresh_set", []) if t >= FROM_S]
        ssthresh.append(f"loss {loss}: ns-3  {cuts(set_from)}")
        ssthresh.append(f"loss {loss}: cclab {cuts(flow['ssthresh_set'])}")
    print(f"\nbandwidth estimate, Mbit/s, from {FROM_S:g} s (values every {SHOW_EVERY_S:g} s):")
    print("\n".join(lines))
    print(f"\nssthresh set from {FROM_S:g} s:")
    print("\n".join(ssthresh))
    print(f"\nns-3's estimator (FilterType None), bytes counted over bytes delivered from {FROM_S:g} s:")
    for count in ns3.get("counts", []):
        print(f"loss {count['loss']}: {count['counted_over_delivered']:.3f}")


if __name__ == "__main__":
    main()
