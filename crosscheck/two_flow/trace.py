"""The first 3 s of the RTT-fairness run (120 ms flow from 50 ms), cclab beside ns-3 3.44
(run by hand, not in CI).

Prints, every 50 ms, each simulator's 40 ms flow: cwnd, ssthresh, the pipe
(cclab's recovery.pipe in recovery, ns-3's BytesInFlight, both RFC 6675's),
FlightSize (highest sent - highest ACKed) and the cumulative ACK, in segments.
ns3_trace_start0.05.json comes from

    python3 ns3_two_flow.py --start 0 0.05 --duration 3 --sample-until 3 > ns3_trace_start0.05.json

    pip install . && python3 crosscheck/two_flow/trace.py > crosscheck/two_flow/trace.txt
"""

import json
from pathlib import Path

import cclab

HERE = Path(__file__).parent
METRICS = ["cwnd", "ssthresh", "in_flight", "recovery.pipe", "recovery.in_recovery", "seq_acked"]


def main() -> None:
    ns3 = json.loads((HERE / "ns3_trace_start0.05.json").read_text())
    cols = ns3["series_columns"]
    ns3_rows = {round(r[0], 2): dict(zip(cols, r, strict=True)) for r in ns3["series"]}
    sc = cclab.load(HERE / "rtt_fairness.toml").with_(
        **{
            "flows[1].start": "0.05s",
            "run.duration": "3s",
            "observe": [{"flows": ["rtt40"], "metrics": METRICS, "every": "50ms"}],
        }
    )
    m = cclab.run(sc, seed=1).metrics
    ours: dict[float, dict[str, float]] = {}
    for t, metric, value in zip(m["time_s"], m["metric"], m["value"], strict=True):
        ours.setdefault(round(t, 2), {})[metric] = value
    print("40 ms flow, 120 ms flow from 0.05 s; segments. rec: in recovery (cclab) / ns-3 state (3 recovery, 4 loss)")
    print("pipe: RFC 6675's in recovery; cclab outside recovery shows FlightSize there, ns-3 its BytesInFlight")
    head = f"{'t s':>5} | {'cwnd':>7} {'ssthresh':>8} {'pipe':>6} {'flight':>6} {'acked':>6} {'rec':>3}"
    print(f"{'':5}   {'cclab':^42} | {'ns-3 3.44':^42}")
    print(f"{head} |{head[7:]}")
    for t in sorted(ours):
        if t < 0.3 or t > 3.0:
            continue
        o, n = ours[t], ns3_rows.get(t)
        pipe = o["recovery.pipe"] if o["recovery.in_recovery"] else o["in_flight"]
        line = (
            f"{t:5.2f} | {o['cwnd']:7.1f} {min(o['ssthresh'], 1e6):8.1f} {pipe:6.0f} {o['in_flight']:6.0f} "
            f"{o['seq_acked'] / 1000:6.0f} {o['recovery.in_recovery']:3.0f}"
        )
        if n:
            line += (
                f" | {n['0:cwnd']:7.1f} {min(n['0:ssthresh'], 1e6):8.1f} {n['0:in_flight']:6.0f} "
                f"{n['0:high_sent'] - n['0:high_ack']:6.0f} {n['0:high_ack']:6.0f} {n['0:state']:3.0f}"
            )
        print(line)


if __name__ == "__main__":
    main()
