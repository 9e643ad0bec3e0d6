"""cclab side of the AQM cross-check (run by hand, not in CI).

Runs the six scenario files beside it (codel, fq_codel and pie, each with 2
and 8 SACK Reno flows) through the Rust example runner, one after the other,
and prints beside the ns-3 3.44 results saved in ns3_result.json, from 10 s to
30 s: the bottleneck's utilisation and the total goodput; the mean and 99th
percentile of the sojourn time of the packets that leave the bottleneck queue
(cclab: from the `[[trace]]` of `left->right`, depart - enqueue - serialisation,
for the packets whose transmission starts in the window; ns-3: admission to
the queue disc to the start of transmission, and also the queue disc's own
sojourn); cclab's Little's-law `queue_delay_mean_s`; drops by the AQM and at
the hard limit, marks; per-flow goodput shares and Jain's index; the TCP
recoveries, timeouts and retransmissions; the growth of cwnd in congestion
avoidance; and the ratios cclab / ns-3. As evidence for the differences it
also prints each drop of the window (time and flow), the drops per flow, and
for the first 10 s (the start-up, outside the statistics) the queue and the
drops of each second and the timeouts. Writes the same text to result.txt.

    CARGO_TARGET_DIR=/work/target-xcheck python3 crosscheck/aqm/compare.py   # from the repository root
"""

import json
import math
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from cclab_runner import run_scenario  # noqa: E402 (a sibling module, found through the path above)

HERE = Path(__file__).parent
FROM_NS = 10_000_000_000
TO_NS = 30_000_000_000
SECONDS = 20.0
RATE_BPS = 100e6
SAMPLE_S = 0.01
WINDOW_TRACE = 1  # the scenario's [[trace]] entry from 9.5 s; entry 0 is the first second
LINK = "left->right"
CA_OPEN = 0  # ns-3's TcpSocketState::CA_OPEN

# ns-3's drop reasons (the queue disc's DropBeforeEnqueue / DropAfterDequeue
# reason strings, "(Dropped by child queue disc) " before those of FQ-CoDel's
# per-flow CoDels) and what they are.
AQM_REASONS = ("Target exceeded drop", "Unforced drop")
LIMIT_REASONS = ("Overlimit drop", "Forced drop")


def percentile(values: list[float], q: float) -> float:
    """Nearest rank, as ns3_aqm.py: the smallest value with at least q of the values at or below it."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[max(math.ceil(q * len(ordered)), 1) - 1]


def jain(xs: list[float]) -> float:
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs)) if any(xs) else 0.0


def sojourns(trace: dict[str, list[Any]]) -> list[float]:
    """Seconds from enqueue to the start of transmission of each packet that starts it in the window.

    A packet is named by its flow, first byte and TSval (a retransmission has
    a later TSval); head drops and buffer drops never depart, so they are left out.
    """
    enqueued: dict[tuple[int, int, int], int] = {}
    out = []
    columns = zip(trace["trace"], trace["event"], trace["time_ns"], trace["flow_id"], trace["seq"],
                  trace["ts_val_ns"], trace["wire_bytes"], strict=True)  # fmt: skip
    for entry, event, t, flow, seq, ts, wire in columns:
        if entry != WINDOW_TRACE:
            continue
        key = (flow, seq, ts)
        if event == "enqueue":
            if key in enqueued:
                raise ValueError(f"two enqueues of {key}")
            enqueued[key] = t
        elif event == "depart":
            start = t - round(wire * 8e9 / RATE_BPS)
            at = enqueued.pop(key, None)
            if at is not None and FROM_NS <= start < TO_NS:
                out.append((start - at) / 1e9)
    return out


def ca_growth(cwnd: list[list[float]], calm: list[list[bool]], first: int) -> float:
    """Segments per second cwnd grew between 10 ms samples, from sample `first` on, over the
    pairs of samples of a flow in congestion avoidance at both ends (`calm`: not in recovery)."""
    grown, pairs = 0.0, 0
    for w, c in zip(cwnd, calm, strict=True):
        for k in range(max(first, 1), len(w)):
            if c[k - 1] and c[k] and w[k] >= w[k - 1]:
                grown += w[k] - w[k - 1]
                pairs += 1
    return grown / (pairs * SAMPLE_S) if pairs else 0.0


def drops_per_second(log: list[tuple[float, str]]) -> list[tuple[int, int]]:
    """(AQM, limit) drops in each second from 0 to 10 s."""
    out = [(0, 0)] * round(FROM_NS / 1e9)
    for t, cause in log:
        if t < FROM_NS / 1e9:
            aqm, limit = out[int(t)]
            out[int(t)] = (aqm + 1, limit) if cause == "early_drop" else (aqm, limit + 1)
    return out


def truncation(cwnd: list[list[float]], states: list[list[int]]) -> float:
    """What ns-3's whole-byte increase costs in congestion avoidance, from 10 s on: the growth
    per ACK of 1000 x 1000 / cwnd bytes (RFC 5681 eq. 3) over the floor ns-3 adds
    (TcpNewReno::CongestionAvoidance), averaged over the 10 ms samples in CA_OPEN."""
    ratios = [
        (1e6 / (w * 1000)) / max(1, math.floor(1e6 / (w * 1000)))
        for ws, ss in zip(cwnd, states, strict=True)
        for w, st in zip(ws[round(FROM_NS / 1e9 / SAMPLE_S) :], ss[round(FROM_NS / 1e9 / SAMPLE_S) :], strict=True)
        if st == CA_OPEN
    ]
    return sum(ratios) / len(ratios)


def first_second(log: list[tuple[float, int, str]], flows: int) -> list[tuple[int, int]]:
    """(AQM, limit) drops of each flow in the first second."""
    out = [(0, 0)] * flows
    for t, flow, cause in log:
        if t < 1.0:
            aqm, limit = out[flow]
            out[flow] = (aqm + 1, limit) if cause == "early_drop" else (aqm, limit + 1)
    return out


def per_second(queue: list[float]) -> list[float]:
    """Means of the 10 ms queue samples over each second from 0 to 10 s."""
    per = round(1 / SAMPLE_S)
    return [sum(queue[i * per : (i + 1) * per]) / per for i in range(round(FROM_NS / 1e9))]


def ours(disc: str, flows: int) -> dict[str, Any]:
    r = run_scenario((HERE / f"{disc}-{flows}.toml").read_text())
    link = next(link for link in r["links"] if link["name"] == "left->right")
    ts = r["timeseries"]
    m = ts["metrics"]
    # Every series, each a list of (time, value) in time order.
    series: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for t, s, v in zip(m["time_s"], m["series"], m["value"], strict=True):
        info = ts["series"][s]
        series.setdefault((info["component"], info["metric"]), []).append((t, v))
    lo, hi = FROM_NS / 1e9 - 1e-9, TO_NS / 1e9 - 1e-9
    samples = {metric: [v for t, v in values if lo <= t < hi] for (c, metric), values in series.items() if c == LINK}
    soj = sojourns(r["trace"])
    delivered = [f["bytes_delivered"] for f in r["flows"]]
    extra: dict[str, float] = {}
    for name, values in samples.items():
        if name not in ("queue_packets", "drops", "early_drops") and values:
            extra[f"{name} mean"] = sum(values) / len(values)
            extra[f"{name} max"] = max(values)
    if disc == "fq_codel":
        both = zip(samples["fq_codel.new_flows"], samples["fq_codel.old_flows"], strict=True)
        extra["fq_codel queues on the lists, max"] = max(a + b for a, b in both)
    # Drops so far at 10 s (the first sample of the window), and each drop in the window.
    early_before = samples["early_drops"][0]
    limit_before = samples["drops"][0] - early_before
    trace = r["trace"]
    all_drops = [
        (t / 1e9, flow, cause)
        for event, t, flow, cause in zip(
            trace["event"], trace["time_ns"], trace["flow_id"], trace["cause"], strict=True
        )
        if event == "drop"
    ]
    log = [d for d in all_drops if FROM_NS / 1e9 <= d[0] < TO_NS / 1e9]
    # Each flow's cwnd and recovery state every 10 ms from 0 (flow groups f0, f1, ...); a
    # timeout sets cwnd to one segment, which lasts at least a round trip (4 samples).
    names = [f["name"] for f in r["flows"]]
    cwnd = [[v for _, v in series[(name, "cwnd")]] for name in names]
    calm = [[v == 0 for _, v in series[(name, "recovery.in_recovery")]] for name in names]
    times = [t for t, _ in series[(names[0], "cwnd")]]
    first = next(k for k, t in enumerate(times) if t >= lo)
    timeouts = sorted((times[k], i) for i, w in enumerate(cwnd) for k in range(1, len(w)) if w[k] <= 1 < w[k - 1])
    queue_all = [v for _, v in series[(LINK, "queue_packets")]]
    # Drops in each second before 10 s, from the counters of the run so far (sampled every 10 ms).
    per = round(1 / SAMPLE_S)
    drops_so_far = [v for _, v in series[(LINK, "drops")]]
    early_so_far = [v for _, v in series[(LINK, "early_drops")]]
    drops_per_sec = []
    for i in range(round(FROM_NS / 1e9)):
        a, b = i * per, (i + 1) * per  # samples at i s and i + 1 s
        early = early_so_far[b] - (early_so_far[a] if i else 0)
        drops_per_sec.append((round(early), round(drops_so_far[b] - (drops_so_far[a] if i else 0) - early)))
    return {
        "aqm_drops_before": early_before,
        "limit_drops_before": limit_before,
        "drop_log": log,
        "first_second": first_second(all_drops, flows),
        "timeouts_before": [(t, i) for t, i in timeouts if t < lo],
        "drops_per_second": drops_per_sec,
        "queue_per_second": per_second(queue_all),
        "ca_growth": ca_growth(cwnd, calm, first),
        "utilization": link["utilization"],
        "goodput_mbps": sum(delivered) * 8 / SECONDS / 1e6,
        "sojourn_mean_ms": 1e3 * sum(soj) / len(soj),
        "sojourn_p99_ms": 1e3 * percentile(soj, 0.99),
        "sojourn_max_ms": 1e3 * max(soj),
        "sojourn_packets": len(soj),
        "little_ms": 1e3 * link["queue_delay_mean_s"],
        "queue_mean_pkts": sum(samples["queue_packets"]) / len(samples["queue_packets"]),
        "aqm_drops": link["early_drops"],
        "limit_drops": link["drops"] - link["early_drops"],
        "marks": link["marks"],
        "drop_share": link["drops"] / link["arrivals"],
        "shares": [d / sum(delivered) for d in delivered],
        "jain": jain(delivered),
        "recoveries": sum(f["recoveries"] for f in r["flows"]),
        "timeouts": sum(f["timeouts"] for f in r["flows"]),
        "retransmits": sum(f["retransmits"] for f in r["flows"]),
        "extra": extra,
    }


def theirs(case: dict[str, Any]) -> dict[str, Any]:
    drops: dict[str, int] = case["drops"]
    aqm = sum(n for reason, n in drops.items() if reason.endswith(AQM_REASONS))
    limit = sum(n for reason, n in drops.items() if reason.endswith(LIMIT_REASONS))
    if aqm + limit != sum(drops.values()):
        raise ValueError(f"unknown drop reason in {drops}")
    delivered = case["bytes_delivered"]
    before: dict[str, int] = case["drops_before_window"]
    return {
        "aqm_drops_before": sum(n for reason, n in before.items() if reason.endswith(AQM_REASONS)),
        "limit_drops_before": sum(n for reason, n in before.items() if reason.endswith(LIMIT_REASONS)),
        "drops_per_second": drops_per_second(
            [(t, "early_drop" if r.endswith(AQM_REASONS) else "buffer_full") for t, _, r in case["drop_log"]]
        ),
        "first_second": first_second(
            [(t, f, "early_drop" if r.endswith(AQM_REASONS) else "buffer_full") for t, f, r in case["drop_log"]],
            case["flows"],
        ),
        "drop_log": [
            (t, flow, "early_drop" if r.endswith(AQM_REASONS) else "buffer_full")
            for t, flow, r in case["drop_log"]
            if FROM_NS / 1e9 <= t < TO_NS / 1e9
        ],
        "codel_count_mean": case["codel_count_mean"],
        "codel_count_max": case["codel_count_max"],
        "codel_dropping_share": case["codel_dropping_share"],
        "pie_qdelay_mean_ms": 1e3 * case["pie_qdelay_mean_s"],
        "timeouts_before": [(t, i) for t, i in case["timeout_log"] if t < FROM_NS / 1e9],
        "truncation": truncation(case["cwnd_10ms"], case["state_10ms"]),
        "queue_per_second": per_second(case["queue_10ms"]),
        "ca_growth": ca_growth(
            case["cwnd_10ms"],
            [[x == CA_OPEN for x in states] for states in case["state_10ms"]],
            round(FROM_NS / 1e9 / SAMPLE_S),
        ),
        "utilization": case["utilization"],
        "goodput_mbps": sum(delivered) * 8 / SECONDS / 1e6,
        "sojourn_mean_ms": 1e3 * case["sojourn_wire_mean_s"],
        "sojourn_p99_ms": 1e3 * case["sojourn_wire_p99_s"],
        "sojourn_max_ms": 1e3 * case["sojourn_wire_max_s"],
        "sojourn_packets": case["sojourn_packets"],
        "disc_mean_ms": 1e3 * case["sojourn_disc_mean_s"],
        "disc_p99_ms": 1e3 * case["sojourn_disc_p99_s"],
        "queue_mean_pkts": case["queue_mean_pkts"],
        "aqm_drops": aqm,
        "limit_drops": limit,
        "marks": case["marks"],
        "drop_share": (aqm + limit) / case["arrivals"],
        "shares": [d / sum(delivered) for d in delivered],
        "jain": jain(delivered),
        "recoveries": sum(case["recoveries"]),
        "timeouts": sum(case["timeouts"]),
        "retransmits": sum(case["retransmits"]),
        "classes": case["queue_disc_classes"],
    }


ROWS = [
    ("utilization", "bottleneck utilisation", "{:.4f}"),
    ("goodput_mbps", "total goodput, Mbit/s", "{:.2f}"),
    ("sojourn_mean_ms", "sojourn, mean, ms", "{:.3f}"),
    ("sojourn_p99_ms", "sojourn, 99th percentile, ms", "{:.3f}"),
    ("sojourn_max_ms", "sojourn, max, ms", "{:.3f}"),
    ("sojourn_packets", "packets that left the queue", "{:.0f}"),
    ("queue_mean_pkts", "queue, packets (10 ms samples)", "{:.2f}"),
    ("aqm_drops", "AQM drops (CoDel head, PIE early)", "{:.0f}"),
    ("limit_drops", "drops at the 500-packet limit", "{:.0f}"),
    ("marks", "marks", "{:.0f}"),
    ("aqm_drops_before", "AQM drops before 10 s", "{:.0f}"),
    ("limit_drops_before", "limit drops before 10 s", "{:.0f}"),
    ("drop_share", "drops per arriving packet", "{:.5f}"),
    ("jain", "Jain's index of goodputs", "{:.4f}"),
    ("ca_growth", "cwnd growth in cong. avoidance, seg/s", "{:.2f}"),
    ("recoveries", "TCP fast recoveries (all flows)", "{:.0f}"),
    ("timeouts", "TCP timeouts (all flows)", "{:.0f}"),
    ("retransmits", "TCP retransmissions (all flows)", "{:.0f}"),
]


def main() -> None:
    ns3 = json.loads((HERE / "ns3_result.json").read_text())
    lines: list[str] = []
    for case in ns3["cases"]:
        disc, flows = case["disc"], case["flows"]
        a, b = theirs(case), ours(disc, flows)
        block = [f"== {disc}, {flows} flows, from 10 s to 30 s", f"{'':<40} {'ns-3':>10} {'cclab':>10} {'ratio':>7}"]
        for key, label, fmt in ROWS:
            x, y = a[key], b[key]
            ratio = f"{y / x:7.3f}" if x else f"{'-':>7}"
            block.append(f"{label:<40} {fmt.format(x):>10} {fmt.format(y):>10} {ratio}")
        block.append(f"{'ns-3 only: queue disc sojourn, mean, ms':<40} {a['disc_mean_ms']:>10.3f}")
        block.append(f"{'ns-3 only: queue disc sojourn, p99, ms':<40} {a['disc_p99_ms']:>10.3f}")
        block.append(f"{'cclab only: Little queue_delay_mean, ms':<40} {'':>10} {b['little_ms']:>10.3f}")
        block.append(f"{'ns-3: CA growth lost to whole bytes, x':<40} {a['truncation']:>10.4f}")
        if disc == "fq_codel":
            block.append(f"{'ns-3 only: flow queues created':<40} {a['classes']:>10}")
        if disc == "codel":
            block.append(f"{'ns-3: CoDel count, mean of samples':<40} {a['codel_count_mean']:>10.4g}")
            block.append(f"{'ns-3: CoDel count, max of samples':<40} {a['codel_count_max']:>10.4g}")
            block.append(f"{'ns-3: CoDel dropping, mean of samples':<40} {a['codel_dropping_share']:>10.4g}")
        if disc == "pie":
            block.append(f"{'ns-3: PIE qdelay, mean of samples, ms':<40} {a['pie_qdelay_mean_ms']:>10.4g}")
        for name, value in b["extra"].items():
            block.append(f"{'cclab only: ' + name:<40} {'':>10} {value:>10.4g}")
        block.append("goodput shares, ns-3:  " + " ".join(f"{s:.3f}" for s in a["shares"]))
        block.append("goodput shares, cclab: " + " ".join(f"{s:.3f}" for s in b["shares"]))
        for side, x in (("ns-3: ", a), ("cclab:", b)):
            counts = [sum(1 for _, f, _ in x["drop_log"] if f == i) for i in range(flows)]
            block.append(f"drops per flow, {side} " + " ".join(f"{n:5d}" for n in counts))
        for side, x in (("ns-3 ", a), ("cclab", b)):
            log = " ".join(
                f"{t:.3f}/f{flow}{'' if cause == 'early_drop' else '(limit)'}" for t, flow, cause in x["drop_log"]
            )
            block.append(f"drops (s/flow), {side}: {log}")
        for side, x in (("ns-3 ", a), ("cclab", b)):
            block.append(
                f"queue before 10 s, mean of each second, {side}: "
                + " ".join(f"{q:.0f}" for q in x["queue_per_second"])
            )
        for side, x in (("ns-3 ", a), ("cclab", b)):
            block.append(
                f"drops before 10 s, each second (AQM+limit), {side}: "
                + " ".join(f"{e}+{lim}" for e, lim in x["drops_per_second"])
            )
        for side, x in (("ns-3 ", a), ("cclab", b)):
            block.append(
                f"drops in the first second, each flow (AQM+limit), {side}: "
                + " ".join(f"{e}+{lim}" for e, lim in x["first_second"])
            )
        for side, x in (("ns-3 ", a), ("cclab", b)):
            block.append(
                f"timeouts before 10 s (s/flow), {side}: " + " ".join(f"{t:.2f}/f{i}" for t, i in x["timeouts_before"])
            )
        block.append("")
        print("\n".join(block), flush=True)
        lines.extend(block)
    (HERE / "result.txt").write_text("\n".join(lines))


if __name__ == "__main__":
    main()
