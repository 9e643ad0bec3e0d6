"""cclab side of the DCTCP cross-check (run by hand, not in CI).

Runs the four scenario files beside it (2 and 10 DCTCP flows at 1 and
10 Gbit/s) with an ACK per segment and with delayed ACKs (`delayed_ack`),
each with RFC 3168 feedback (`ecn = true`, as ns-3's TcpDctcp echoes) and
with AccECN (`ecn = "accecn"`, which ns-3 does not have), through
`crosscheck/cclab_runner.py`, and prints beside the ns-3 3.44 results saved
in ns3_result.json, over each case's measurement window (1 to 3 s at
1 Gbit/s, 0.5 to 1.5 s at 10 Gbit/s): the bottleneck's utilisation (wire bits
sent over the capacity, on both sides; cclab's busy share too), the total
goodput and Jain's index over the flows' goodput; the queue (packets waiting,
10 us samples: mean, nearest-rank 99th percentile, maximum; ns-3's queue disc
alone, which its RED compares with K; cclab's exact time mean); the mean
alpha and the mean of each window's marked fraction M as the senders see them
(1 ms samples, averaged over the flows), beside the fraction of the packets
the bottleneck marked; marks and drops; ACKs per data packet (the reverse
bottleneck's packets over the forward's); window reductions for marks per
flow per second (ns-3: entries into CA_CWR; cclab: changes of ssthresh); the
mean cwnd, its growth (the sum of its rises between 50 us samples, per flow per
second and per round trip) and its minimum; retransmissions and timeouts; and
the ratios cclab / ns-3. As evidence it also prints ns-3's share of data
packets whose CE state differs from the flow's previous one and its ACKs
beyond 1/DelAckCount, how often ns-3 set cwnd below 2 and 1 segments, its
timeouts, how many of its window reductions came on the ACK that ended the
previous reduction's CA_CWR, the mean of cwnd / floor(cwnd) (ns-3's Reno
adds a segment per floor(cwnd) segments acknowledged), and for 10 flows each
flow's share of the goodput. Writes the same text to result.txt.

    CCLAB_PYTHON=/work/venv-fair/bin/python python3 crosscheck/dctcp/compare.py   # from the repository root
    python3 crosscheck/dctcp/compare.py     # or through the Rust example runner (cargo builds it)
"""

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from cclab_runner import run_scenario  # noqa: E402 (a sibling module, found through the path above)

HERE = Path(__file__).parent
LINK = "left->right"
REVERSE = "right->left"
FEEDBACK = {"classic": "true", "accecn": '"accecn"'}


def percentile(hist: list[int], q: float) -> int:
    """Nearest rank over the samples a histogram (index = packets) counts, as ns3_dctcp.py."""
    total, seen = sum(hist), 0
    for i, c in enumerate(hist):
        seen += c
        if seen >= q * total:
            return i
    return len(hist) - 1


def jain(xs: list[float]) -> float:
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs)) if any(xs) else 0.0


def mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else float("nan")


def queue_stats(hist: list[int]) -> dict[str, float]:
    total = sum(hist)
    return {
        "mean": sum(i * c for i, c in enumerate(hist)) / total,
        "p99": percentile(hist, 0.99),
        "max": max(i for i, c in enumerate(hist) if c),
    }


def growth(samples: list[float]) -> float:
    """cwnd's growth: the sum of its rises from one sample to the next (segments)."""
    return sum(max(b - a, 0.0) for a, b in zip(samples, samples[1:], strict=False))


def per_rtt(run: dict[str, Any], gbps: int) -> float:
    """cwnd's growth per round trip: per second times the mean RTT (250 us and the mean queue's wait)."""
    rtt = 250e-6 + run["queue"]["mean"] * 1502 * 8 / (gbps * 1e9)
    return run["growth_per_flow_s"] * rtt


def theirs(case: dict[str, Any]) -> dict[str, Any]:
    """ns3_result.json's case in the shape `ours` returns."""
    seconds = case["duration_s"] - case["from_s"]
    goodput = [b * 8 / seconds for b in case["bytes_delivered"]]
    flows = case["flows"]
    return {
        "utilization": case["utilization"],
        "goodput_gbps": sum(goodput) / 1e9,
        "jain": jain(goodput),
        "queue": case["queue"],
        "queue_disc": case["queue_disc"],
        "alpha": mean(case["alpha_mean"]),
        "m_sender": mean(case["marked_fraction_mean"]),
        "m_sender_bytes": sum(case["bytes_marked"]) / sum(case["bytes_acked"]),
        "m_queue": case["marks"] / case["arrivals"],
        "marks": case["marks"],
        "drops": case["drops"],
        "acks_per_packet": case["acks_sent"] / case["packets_sent"],
        "cuts_per_flow_s": sum(case["cwr_entries"]) / flows / seconds,
        "cwnd": mean(case["cwnd_mean_segments"]),
        "growth_per_flow_s": sum(case["cwnd_growth_segments"]) / flows / seconds,
        "cwnd_min": min(case["cwnd_min_segments"]),
        "retransmits": sum(case["retransmits"]),
        "timeouts": sum(case["timeouts"]),
        "shares": [g / sum(goodput) for g in goodput],
    }


def scenario(gbps: int, flows: int, delayed_ack_count: int, feedback: str) -> str:
    text = (HERE / f"dctcp-{gbps}g-{flows}.toml").read_text()
    text = text.replace("ecn = true", f"ecn = {FEEDBACK[feedback]}")
    return text.replace("delayed_ack = false", f"delayed_ack = {'true' if delayed_ack_count == 2 else 'false'}")


def ours(case: dict[str, Any], feedback: str) -> dict[str, Any]:
    """One cclab run of the case, measured over the same window."""
    flows = case["flows"]
    r = run_scenario(scenario(case["gbps"], flows, case["delayed_ack_count"], feedback))
    start, end = case["from_s"], case["duration_s"]
    assert abs(r["warmup_s"] - start) < 1e-9 and abs(r["sim_time_s"] - end) < 1e-9
    seconds = end - start
    link = next(x for x in r["links"] if x["name"] == LINK)
    reverse = next(x for x in r["links"] if x["name"] == REVERSE)
    ts = r["timeseries"]
    series = ts["series"]
    m = ts["metrics"]
    hist: list[int] = []
    per_flow: dict[str, list[list[float]]] = {
        name: [[] for _ in range(flows)] for name in ("cc.alpha", "cc.marked_fraction", "cwnd")
    }  # cwnd every 50 us, the others every 1 ms
    cuts = 0
    for t, s, v in zip(m["time_s"], m["series"], m["value"], strict=True):
        if not start - 1e-9 <= t < end - 1e-9:
            continue
        info = series[s]
        metric = info["metric"]
        if metric == "queue_packets":
            n = int(v)
            hist.extend([0] * (n + 1 - len(hist)))
            hist[n] += 1
        elif metric == "ssthresh":
            cuts += 1
        else:
            per_flow[metric][info["flow_id"]].append(v)
    goodput = [f["bytes_delivered"] * 8 / seconds for f in r["flows"]]
    departures = link["arrivals"] - link["drops"]
    return {
        "utilization": link["throughput_bps"] / (case["gbps"] * 1e9),
        "busy": link["utilization"],
        "goodput_gbps": sum(goodput) / 1e9,
        "jain": jain(goodput),
        "queue": queue_stats(hist),
        "queue_time_mean": link["queue_mean_pkts"],
        "alpha": mean([mean(x) for x in per_flow["cc.alpha"]]),
        "m_sender": mean([mean(x) for x in per_flow["cc.marked_fraction"]]),
        "m_queue": link["marks"] / link["arrivals"],
        "marks": link["marks"],
        "drops": link["drops"],
        "acks_per_packet": reverse["arrivals"] / departures,
        "cuts_per_flow_s": cuts / flows / seconds,
        "cwnd": mean([mean(x) for x in per_flow["cwnd"]]),
        "growth_per_flow_s": sum(growth(x) for x in per_flow["cwnd"]) / flows / seconds,
        "cwnd_min": min(min(x) for x in per_flow["cwnd"]),
        "retransmits": sum(f["retransmits"] for f in r["flows"]),
        "timeouts": sum(f["timeouts"] for f in r["flows"]),
        "shares": [g / sum(goodput) for g in goodput],
    }


def ratio(a: float, b: float) -> str:
    return f"({b / a:.3f})" if a else "(-)"


ROWS = [
    ("utilisation", lambda x: x["utilization"], "{:.4f}"),
    ("goodput, Gbit/s", lambda x: x["goodput_gbps"], "{:.4f}"),
    ("Jain's index", lambda x: x["jain"], "{:.4f}"),
    ("queue mean, packets", lambda x: x["queue"]["mean"], "{:.2f}"),
    ("queue p99, packets", lambda x: x["queue"]["p99"], "{:.0f}"),
    ("queue max, packets", lambda x: x["queue"]["max"], "{:.0f}"),
    ("mean alpha", lambda x: x["alpha"], "{:.4f}"),
    ("mean M (senders)", lambda x: x["m_sender"], "{:.4f}"),
    ("marked share at the queue", lambda x: x["m_queue"], "{:.4f}"),
    ("marks", lambda x: x["marks"], "{:.0f}"),
    ("drops", lambda x: x["drops"], "{:.0f}"),
    ("ACKs per data packet", lambda x: x["acks_per_packet"], "{:.4f}"),
    ("cuts per flow per s", lambda x: x["cuts_per_flow_s"], "{:.1f}"),
    ("mean cwnd, segments", lambda x: x["cwnd"], "{:.2f}"),
    ("cwnd growth, seg/flow/s", lambda x: x["growth_per_flow_s"], "{:.0f}"),
    ("cwnd growth per RTT", lambda x: x["growth_per_rtt"], "{:.3f}"),
    ("min cwnd, segments", lambda x: x["cwnd_min"], "{:.2f}"),
    ("retransmissions", lambda x: x["retransmits"], "{:.0f}"),
    ("timeouts", lambda x: x["timeouts"], "{:.0f}"),
]


def main() -> None:  # noqa: PLR0914 (one table per case)
    ns3 = json.loads((HERE / "ns3_result.json").read_text())
    lines: list[str] = []
    summary: list[str] = []
    for case in ns3["cases"]:
        ref = theirs(case)
        runs = {fb: ours(case, fb) for fb in FEEDBACK}
        for run in (ref, *runs.values()):
            run["growth_per_rtt"] = per_rtt(run, case["gbps"])
        acks = "an ACK per segment" if case["delayed_ack_count"] == 1 else "delayed ACKs (every 2nd segment)"
        title = (
            f"{case['gbps']} Gbit/s, {case['flows']} flows, K = {case['k']}, {acks}; "
            f"{case['from_s']:g} to {case['duration_s']:g} s"
        )
        lines.append(title)
        lines.append(f"  {'':<27} {'ns-3':>10} {'cclab classic (ratio)':>24} {'cclab AccECN (ratio)':>24}")
        for label, get, fmt in ROWS:
            a = get(ref)
            cells = [f"{fmt.format(get(runs[fb]))} {ratio(a, get(runs[fb]))}" for fb in FEEDBACK]
            lines.append(f"  {label:<27} {fmt.format(a):>10} {cells[0]:>24} {cells[1]:>24}")
        qd = ref["queue_disc"]
        lines.append(
            f"  ns-3 queue disc alone (what RED compares with K): mean {qd['mean']:.2f}, p99 {qd['p99']:.0f}, "
            f"max {qd['max']:.0f}; ns-3 senders' M over all bytes {ref['m_sender_bytes']:.4f}"
        )
        lines.append(
            f"  cclab queue time mean: classic {runs['classic']['queue_time_mean']:.2f}, "
            f"AccECN {runs['accecn']['queue_time_mean']:.2f}; cclab link busy share: classic "
            f"{runs['classic']['busy']:.4f}, AccECN {runs['accecn']['busy']:.4f}"
        )
        data, changes = sum(case["flow_data_arrivals"]), sum(case["flow_ce_changes"])
        extra = case["acks_sent"] / case["packets_sent"] - 1 / case["delayed_ack_count"]
        lines.append(
            f"  ns-3: CE state changed at {changes / data:.4f} of the data packets (per flow); ACKs per data packet "
            f"beyond 1/DelAckCount: {extra:.4f}"
        )
        lines.append(
            f"  ns-3: cwnd set below 2 segments {sum(case['cwnd_set_below_2_segments'])} times, below 1 "
            f"{sum(case['cwnd_set_below_1_segment'])} times; CA_LOSS entries (s, flow): {case['loss_log']}"
        )
        again, cuts = sum(case["cwr_entries_at_cwr_exit"]), sum(case["cwr_entries"])
        lines.append(
            f"  ns-3: {again} of its {cuts} window reductions came on the ACK that ended the previous one (no growth "
            f"between); cwnd / floor(cwnd) {mean(case['cwnd_over_floor_mean']):.3f} on average"
        )
        if case["flows"] > 2:
            for name, run in (("ns-3", ref), ("cclab classic", runs["classic"]), ("cclab AccECN", runs["accecn"])):
                lines.append(f"  goodput shares, {name + ':':<15} " + " ".join(f"{x:.3f}" for x in run["shares"]))
        lines.append("")
        c = runs["classic"]
        summary.append(
            f"{case['gbps']:>2}G {case['flows']:>2} fl {'dack' if case['delayed_ack_count'] == 2 else 'ack1'}  "
            f"util {ref['utilization']:.4f}/{c['utilization']:.4f}  "
            f"queue {ref['queue']['mean']:.1f}/{c['queue']['mean']:.1f} p99 {ref['queue']['p99']}/{c['queue']['p99']}  "
            f"jain {ref['jain']:.4f}/{c['jain']:.4f}  alpha {ref['alpha']:.4f}/{c['alpha']:.4f}/"
            f"{runs['accecn']['alpha']:.4f}  marks {ref['marks']}/{c['marks']}  drops {ref['drops']}/{c['drops']}"
        )
    lines.append("Summary, ns-3 / cclab classic (alpha also / cclab AccECN):")
    lines.extend(summary)
    text = "\n".join(lines) + "\n"
    print(text, end="")
    (HERE / "result.txt").write_text(text)


if __name__ == "__main__":
    main()
