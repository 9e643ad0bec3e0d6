"""ns-3 3.44 side of the BBR cross-check (run by hand, not in CI).

One bulk flow crosses a 20 Mbit/s, 10 ms DropTail bottleneck with 96 packets
of buffer (about one BDP) and a 40 ms base RTT; access links at 1 Gbit/s
with the delays cclab's dumbbell gives the same RTT. ns-3 is set to what
cclab's `one_flow.toml` says: 1000-byte segments, initial window 4, an ACK
per segment, SACK and timestamps, min RTO 1 s, traffic control removed.
Random loss, when asked, drops packets arriving at the far end of the
bottleneck (a RateErrorModel per packet), as cclab's link loss does. Runs
TcpBbr, and TcpNewReno for the lossy case, and prints one JSON line: bytes
delivered from 5 s to 30 s, and when cwnd fell to 4 segments or below (PROBE_RTT).

    python3 -m venv v && . v/bin/activate && pip install ns3==3.44.post0
    python3 crosscheck/bbr/ns3_bbr.py > crosscheck/bbr/ns3_result.json
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

# Trace sinks must be C++ callables: the times cwnd dropped to 4 segments or below.
cppyy.cppdef(
    """
    #include <vector>
    namespace bbrcheck {
    std::vector<double> low;
    uint32_t last = 0;
    void Cwnd(uint32_t, uint32_t v) {
        if (v <= 4000 && last > 4000) low.push_back(ns3::Simulator::Now().GetSeconds());
        last = v;
    }
    void Connect() {
        ns3::Config::ConnectWithoutContext(
            "/NodeList/0/$ns3::TcpL4Protocol/SocketList/0/CongestionWindow", ns3::MakeCallback(&Cwnd));
    }
    void ScheduleConnect(double at) { ns3::Simulator::Schedule(ns3::Seconds(at), &Connect); }
    uint64_t rx_at_from = 0;
    ns3::Ptr<ns3::Application> sink;
    void Mark() { rx_at_from = ns3::DynamicCast<ns3::PacketSink>(sink)->GetTotalRx(); }
    void ScheduleMark(double at, ns3::Ptr<ns3::Application> s) {
        sink = s;
        ns3::Simulator::Schedule(ns3::Seconds(at), &Mark);
    }
    }
    """
)


def run(socket_type: str, loss: float) -> dict:
    cppyy.gbl.bbrcheck.low.clear()
    cppyy.gbl.bbrcheck.last = 0
    configure_tcp(socket_type, SEGMENT)

    sink_apps = one_flow_path(RTT_MS, "20Mbps", BOTTLENECK_DELAY_MS, BUFFER_PACKETS, loss, SEGMENT)
    cppyy.gbl.bbrcheck.ScheduleConnect(1e-6)
    cppyy.gbl.bbrcheck.ScheduleMark(FROM_S, sink_apps.Get(0))

    ns.Simulator.Stop(ns.Seconds(DURATION_S))
    ns.Simulator.Run()
    total = cppyy.gbl.ns3.DynamicCast[cppyy.gbl.ns3.PacketSink](sink_apps.Get(0)).GetTotalRx()
    result = {
        "cc": socket_type,
        "loss": loss,
        "bytes_from_5s": int(total - cppyy.gbl.bbrcheck.rx_at_from),
        "cwnd_down_to_4_at_s": [round(t, 3) for t in cppyy.gbl.bbrcheck.low],
    }
    ns.Simulator.Destroy()
    return result


def main() -> None:
    runs = [run("ns3::TcpBbr", 0.0), run("ns3::TcpBbr", 0.01), run("ns3::TcpNewReno", 0.01)]
    json.dump({"simulator": "ns-3 3.44", "duration_s": DURATION_S, "from_s": FROM_S, "runs": runs}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
