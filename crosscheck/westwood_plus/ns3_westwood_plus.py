"""ns-3 3.44 side of the Westwood+ cross-check (run by hand, not in CI).

The network of crosscheck/bbr: one bulk flow crosses a 20 Mbit/s, 10 ms
DropTail bottleneck with 96 packets of buffer (about one BDP) and a 40 ms
base RTT; access links at 1 Gbit/s. 1000-byte segments, initial window 4, an
ACK per segment, SACK and timestamps, min RTO 1 s, classic recovery (not
ns-3's default PRR), traffic control removed. Random loss, when asked, drops
1 % of the packets arriving at the far end of the bottleneck. Runs
ns3::TcpWestwoodPlus with its defaults (FilterType Tustin) and prints one
JSON line: bytes delivered from 5 s to 30 s, the EstimatedBW trace
(bit/s, sampled every 0.5 s) and every value ssthresh was set to (bytes);
then, with FilterType None (raw samples), how many bytes the estimator
counted from 5 s against the bytes the receiver got.

    python3 -m venv v && . v/bin/activate && pip install ns3==3.44.post0
    python3 crosscheck/westwood_plus/ns3_westwood_plus.py > crosscheck/westwood_plus/ns3_result.json
"""

import json
import sys
from pathlib import Path

import cppyy
from ns import ns

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from ns3_tcp import configure_tcp, one_flow_path  # noqa: E402 (a sibling module, found through the path above)

DURATION_S = 30.0
FROM_S = 5.0
RTT_MS = 40
BOTTLENECK_DELAY_MS = 10
BUFFER_PACKETS = 96
SEGMENT = 1000
SAMPLE_S = 0.5

cppyy.cppdef(
    """
    #include <vector>
    namespace wwcheck {
    double bw = 0;
    std::vector<double> samples;
    std::vector<double> ssthresh_t, ssthresh_v;
    void Ssthresh(uint32_t, uint32_t v) {
        ssthresh_t.push_back(ns3::Simulator::Now().GetSeconds());
        ssthresh_v.push_back(v);
    }
    std::vector<double> change_t, change_bw, change_rx;
    ns3::Ptr<ns3::Application> sink;
    void Bw(ns3::DataRate, ns3::DataRate v) {
        bw = v.GetBitRate();
        change_t.push_back(ns3::Simulator::Now().GetSeconds());
        change_bw.push_back(bw);
        change_rx.push_back(sink ? ns3::DynamicCast<ns3::PacketSink>(sink)->GetTotalRx() : 0);
    }
    void Sample() { samples.push_back(bw); }
    void Connect() {
        ns3::Config::ConnectWithoutContext(
            "/NodeList/0/$ns3::TcpL4Protocol/SocketList/0/CongestionOps/$ns3::TcpWestwoodPlus/EstimatedBW",
            ns3::MakeCallback(&Bw));
        ns3::Config::ConnectWithoutContext(
            "/NodeList/0/$ns3::TcpL4Protocol/SocketList/0/SlowStartThreshold", ns3::MakeCallback(&Ssthresh));
    }
    void Schedule(double connect_at, double every, double until) {
        ns3::Simulator::Schedule(ns3::Seconds(connect_at), &Connect);
        for (double t = every; t <= until + 1e-9; t += every) ns3::Simulator::Schedule(ns3::Seconds(t), &Sample);
    }
    uint64_t rx_at_from = 0;
    void Mark() { rx_at_from = ns3::DynamicCast<ns3::PacketSink>(sink)->GetTotalRx(); }
    void ScheduleMark(double at, ns3::Ptr<ns3::Application> s) {
        sink = s;
        ns3::Simulator::Schedule(ns3::Seconds(at), &Mark);
    }
    }
    """
)


def counted_over_delivered(check: object) -> float:
    """With FilterType None every EstimatedBW change is one raw sample, the
    segments counted since the previous sample over one RTT: sample x (time
    since the previous sample, about that RTT) is what was counted. Over the
    samples from 5 s, the total counted over the bytes the sink received."""
    t, bw, rx = list(check.change_t), list(check.change_bw), list(check.change_rx)
    keep = [i for i in range(1, len(t)) if t[i - 1] >= FROM_S]
    counted = sum(bw[i] / 8 * (t[i] - t[i - 1]) for i in keep)
    return counted / (rx[keep[-1]] - rx[keep[0] - 1])


def run(loss: float, filter_type: str = "Tustin") -> dict:
    for v in (cppyy.gbl.wwcheck.change_t, cppyy.gbl.wwcheck.change_bw, cppyy.gbl.wwcheck.change_rx):
        v.clear()
    cppyy.gbl.wwcheck.samples.clear()
    cppyy.gbl.wwcheck.bw = 0
    cppyy.gbl.wwcheck.ssthresh_t.clear()
    cppyy.gbl.wwcheck.ssthresh_v.clear()
    configure_tcp("ns3::TcpWestwoodPlus", SEGMENT)
    ns.Config.SetDefault("ns3::TcpWestwoodPlus::FilterType", ns.StringValue(filter_type))

    sink_apps = one_flow_path(RTT_MS, "20Mbps", BOTTLENECK_DELAY_MS, BUFFER_PACKETS, loss, SEGMENT)
    cppyy.gbl.wwcheck.Schedule(1e-6, SAMPLE_S, DURATION_S - 1e-3)
    cppyy.gbl.wwcheck.ScheduleMark(FROM_S, sink_apps.Get(0))

    ns.Simulator.Stop(ns.Seconds(DURATION_S))
    ns.Simulator.Run()
    print(f"ran loss {loss} filter {filter_type}", file=sys.stderr)
    total = cppyy.gbl.ns3.DynamicCast[cppyy.gbl.ns3.PacketSink](sink_apps.Get(0)).GetTotalRx()
    check = cppyy.gbl.wwcheck
    if filter_type == "None":
        result = {"cc": "ns3::TcpWestwoodPlus", "loss": loss, "filter": filter_type}
        result["counted_over_delivered"] = round(counted_over_delivered(check), 4)
        ns.Simulator.Destroy()
        return result
    result = {
        "cc": "ns3::TcpWestwoodPlus",
        "loss": loss,
        "bytes_from_5s": int(total - cppyy.gbl.wwcheck.rx_at_from),
        "bwe_every_s": SAMPLE_S,
        "bwe_bps": [round(v) for v in cppyy.gbl.wwcheck.samples],
        "ssthresh_set": [[round(t, 4), int(v)] for t, v in zip(check.ssthresh_t, check.ssthresh_v, strict=True)],
    }
    ns.Simulator.Destroy()
    return result


def main() -> None:
    runs = [run(0.0), run(0.01)]
    # Diagnosis: how much the estimator counts against what is delivered.
    counts = [run(0.0, "None"), run(0.01, "None")]
    json.dump(
        {"simulator": "ns-3 3.44", "duration_s": DURATION_S, "from_s": FROM_S, "runs": runs, "counts": counts},
        sys.stdout,
    )
    print()


if __name__ == "__main__":
    main()
