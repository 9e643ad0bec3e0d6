"""cclab side of the RED cross-check (run by hand, not in CI).

Runs red.toml (eight SACK Reno flows, RED with the parameters of ns3_red.py)
through the Rust example runner and prints beside the ns-3 3.44 result saved
in ns3_result.json, from 10 s to 30 s: the queue (packets waiting, sampled
every 10 ms; cclab also its time mean and RED's average), early (ns-3:
unforced) and forced drops (cclab: buffer full), the bottleneck's
utilisation, the total goodput, drops per arriving packet (ns-3: per packet
sent or dropped), and the ratios cclab / ns-3.

    python3 crosscheck/red/compare.py          # from the repository root
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from cclab_runner import run_scenario  # noqa: E402 (a sibling module, found through the path above)

HERE = Path(__file__).parent
FROM_S = 10.0
SECONDS = 20.0  # 10 s to 30 s


def ours() -> dict:
    r = run_scenario((HERE / "red.toml").read_text())
    link = next(link for link in r["links"] if link["name"] == "left->right")
    ts = r["timeseries"]
    names = [s["metric"] for s in ts["series"]]
    m = ts["metrics"]
    samples: dict[str, list[float]] = {name: [] for name in names}
    for t, s, v in zip(m["time_s"], m["series"], m["value"], strict=True):
        if FROM_S - 1e-9 <= t < FROM_S + SECONDS - 1e-9:
            samples[names[s]].append(v)
    return {
        "queue_mean_pkts": sum(samples["queue_packets"]) / len(samples["queue_packets"]),
        "queue_time_mean_pkts": link["queue_mean_pkts"],
        "avg_queue_mean": sum(samples["avg_queue"]) / len(samples["avg_queue"]),
        "queue_max_pkts": link["queue_max_pkts"],
        "early_drops": link["early_drops"],
        "forced_drops": link["drops"] - link["early_drops"],
        "utilization": link["utilization"],
        "goodput_mbps": sum(f["bytes_delivered"] for f in r["flows"]) * 8 / SECONDS / 1e6,
        "drop_share": link["drops"] / link["arrivals"],
    }


def main() -> None:
    ns3 = json.loads((HERE / "ns3_result.json").read_text())
    theirs = {
        "queue_mean_pkts": ns3["queue_mean_pkts"],
        "queue_max_pkts": ns3["queue_max_pkts"],
        "early_drops": ns3["unforced_drops"],
        "forced_drops": ns3["forced_drops"],
        "utilization": ns3["utilization"],
        "goodput_mbps": ns3["bytes_delivered"] * 8 / SECONDS / 1e6,
        "drop_share": (ns3["unforced_drops"] + ns3["forced_drops"])
        / (ns3["packets_sent"] + ns3["unforced_drops"] + ns3["forced_drops"]),
    }
    mine = ours()
    print(f"{'from 10 s to 30 s':<40} {'ns-3':>8} {'cclab':>8} {'ratio':>6}")
    for key, label in [
        ("queue_mean_pkts", "queue, packets waiting (10 ms samples)"),
        ("queue_max_pkts", "queue max, packets"),
        ("early_drops", "early (unforced) drops"),
        ("forced_drops", "forced drops"),
        ("utilization", "bottleneck utilisation"),
        ("goodput_mbps", "total goodput, Mbit/s"),
        ("drop_share", "drops per arriving packet"),
    ]:
        a, b = theirs[key], mine[key]
        ratio = f"{b / a:6.3f}" if a else f"{'-':>6}"
        print(f"{label:<40} {a:8.3f} {b:8.3f} {ratio}")
    print(f"{'ns-3 only: queue disc alone (RED sees)':<40} {ns3['queue_disc_mean_pkts']:8.3f}")
    print(f"{'cclab only: queue, time mean':<40} {'':>8} {mine['queue_time_mean_pkts']:8.3f}")
    print(f"{'cclab only: RED average (10 ms samples)':<40} {'':>8} {mine['avg_queue_mean']:8.3f}")


if __name__ == "__main__":
    main()
