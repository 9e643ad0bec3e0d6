"""Why the RTT-fairness ratio swings in deterministic runs (run by hand, not in CI).

For rtt_fairness.toml, prints (1) the 40 ms flow's throughput over the
120 ms flow's as the header size moves by a few bytes with everything else
fixed (and with faster access links), and (2) for each start time of the 120 ms flow, how many window
reductions (congestion events: ssthresh lowered) each flow took from 10 s to
60 s, deterministic and with a 1 ms send overhead. In a deterministic
DropTail run the drops at each overflow fall on the flow whose packets reach
the full queue first after a departure; which flow that is depends on the
packets' exact timing (Floyd and Jacobson 1992), so one flow can take nearly
every drop for tens of seconds.

    pip install . && python3 crosscheck/two_flow/phase.py > crosscheck/two_flow/phase.txt
"""

from pathlib import Path

import cclab

HERE = Path(__file__).parent
START_TIMES = (0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)
OBSERVE = [{"flows": ["*"], "metrics": ["ssthresh"], "every": "1ms", "on_change": True}]


def reductions(res: cclab.Result, flow: str, after_s: float) -> int:
    m = res.metrics
    s = m.filter((m["component"] == flow) & (m["metric"] == "ssthresh")).sort("time_s")
    values = s["value"].to_list()
    times = s["time_s"].to_list()
    return sum(1 for i in range(1, len(values)) if times[i] >= after_s and values[i] < values[i - 1])


def ratio(res: cclab.Result) -> float:
    b = res.flows["bytes_delivered"].to_list()
    return b[0] / b[1]


def main() -> None:
    base = cclab.load(HERE / "rtt_fairness.toml")
    print("## (1) rtt40/rtt120 throughput ratio against header bytes (start 1 s, deterministic)")
    for header in range(40, 62, 2):
        res = cclab.run(base.with_(**{"flows[*].header": header}), seed=1)
        print(f"header {header:2d} B: ratio {ratio(res):6.2f}  timeouts {res.flows['timeouts'].to_list()}")
    print("the same with 10 Gbit/s access links instead of 1 Gbit/s (a window's packets arrive 10x closer together):")
    for header in (40, 54):
        res = cclab.run(base.with_(**{"flows[*].header": header, "topology.access.rate": "10Gbps"}), seed=1)
        print(f"header {header:2d} B: ratio {ratio(res):6.2f}  timeouts {res.flows['timeouts'].to_list()}")
    print()
    print("## (2) window reductions from 10 s to 60 s, rtt40 / rtt120 (ratio in brackets)")
    print(f"{'start s':>7}  {'54 B, det.':>16}  {'40 B, det.':>16}  54 B, send_overhead 1 ms, seeds 1-3")
    for start in START_TIMES:
        cells = []
        for header, overhead, seed in ((54, "0s", 1), (40, "0s", 1), (54, "1ms", 1), (54, "1ms", 2), (54, "1ms", 3)):
            sc = base.with_(**{"flows[1].start": f"{start}s", "flows[*].header": header,
                               "flows[*].send_overhead": overhead, "observe": OBSERVE})  # fmt: skip
            res = cclab.run(sc, seed=seed)
            a, b = reductions(res, "rtt40", 10.0), reductions(res, "rtt120", 10.0)
            cells.append(f"{a:3d} / {b:3d} ({ratio(res):5.2f})")
        print(f"{start:7.2f}  {cells[0]:>16}  {cells[1]:>16}  {'  '.join(cells[2:])}")


if __name__ == "__main__":
    main()
