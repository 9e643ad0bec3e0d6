"""ns-3 3.44 side of the Vegas cross-check (run by hand, not in CI).

One and then two bulk TCP flows (both starting at 0 s, each with a 40 ms
base RTT) cross a 20 Mbit/s, 10 ms DropTail bottleneck with 200 packets of
buffer (about two BDPs); access links at 1 Gbit/s, traffic control removed.
1000-byte segments, initial window 4, an ACK per segment, SACK and
timestamps, min RTO 1 s, classic recovery (crosscheck/ns3_tcp.py). Runs
ns3::TcpVegas at its defaults (Alpha 2, Beta 4, Gamma 1) and prints one JSON
line per case in a list: each flow's bytes delivered from 5 s to 30 s, its
cwnd (segments) every 100 ms, the bottleneck queue (packets waiting) every
10 ms, and the packets the bottleneck dropped before and after 5 s.

    python3 -m venv v && . v/bin/activate && pip install ns3==3.44.post0
    python3 crosscheck/vegas/ns3_vegas.py > crosscheck/vegas/ns3_result.json
"""

import json
import sys
from pathlib import Path

import cppyy
from ns import ns

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from ns3_tcp import bulk_send, configure_tcp, dumbbell, packet_sink  # noqa: E402 (a sibling module, found through the path above)

DURATION_S = 30.0
FROM_S = 5.0
RTT_MS = 40
BOTTLENECK = "20Mbps"
BOTTLENECK_DELAY_MS = 10
BUFFER_PACKETS = 200
SEGMENT = 1000
CWND_EVERY_S = 0.1
QUEUE_EVERY_S = 0.01

cppyy.cppdef(
    """
    #include <vector>
    namespace vegascheck {
    std::vector<double> cwnd_now(2, 0);
    std::vector<std::vector<double>> cwnd(2);
    std::vector<double> queue_len;
    ns3::Ptr<ns3::Queue<ns3::Packet>> queue;
    std::vector<ns3::Ptr<ns3::Application>> sinks;
    std::vector<uint64_t> rx_at_from(2, 0);
    uint64_t drops_at_from = 0;
    void Cwnd0(uint32_t, uint32_t v) { cwnd_now[0] = v; }
    void Cwnd1(uint32_t, uint32_t v) { cwnd_now[1] = v; }
    void Connect(uint32_t node, int flow) {
        std::string path = "/NodeList/" + std::to_string(node) + "/$ns3::TcpL4Protocol/SocketList/0/CongestionWindow";
        if (flow == 0) ns3::Config::ConnectWithoutContext(path, ns3::MakeCallback(&Cwnd0));
        else ns3::Config::ConnectWithoutContext(path, ns3::MakeCallback(&Cwnd1));
    }
    void SampleCwnd() { for (size_t i = 0; i < cwnd.size(); ++i) cwnd[i].push_back(cwnd_now[i]); }
    void SampleQueue() { queue_len.push_back(queue->GetNPackets()); }
    void Mark() {
        for (size_t i = 0; i < sinks.size(); ++i)
            rx_at_from[i] = ns3::DynamicCast<ns3::PacketSink>(sinks[i])->GetTotalRx();
        drops_at_from = queue->GetTotalDroppedPackets();
    }
    void Reset(uint32_t segment) {
        for (size_t i = 0; i < 2; ++i) { cwnd_now[i] = 4.0 * segment; cwnd[i].clear(); rx_at_from[i] = 0; }
        queue_len.clear();
        sinks.clear();
        drops_at_from = 0;
    }
    void Setup(ns3::Ptr<ns3::NetDevice> bottleneck, double from, double cwnd_every, double queue_every, double until) {
        queue = ns3::DynamicCast<ns3::PointToPointNetDevice>(bottleneck)->GetQueue();
        ns3::Simulator::Schedule(ns3::Seconds(from), &Mark);
        for (double t = cwnd_every; t <= until + 1e-9; t += cwnd_every)
            ns3::Simulator::Schedule(ns3::Seconds(t), &SampleCwnd);
        for (double t = queue_every; t <= until + 1e-9; t += queue_every)
            ns3::Simulator::Schedule(ns3::Seconds(t), &SampleQueue);
    }
    void ScheduleConnect(double at, uint32_t node, int flow) {
        ns3::Simulator::Schedule(ns3::Seconds(at), &Connect, node, flow);
    }
    void AddSink(ns3::Ptr<ns3::Application> s) { sinks.push_back(s); }
    }
    """
)


def run(flows: int) -> dict:
    """`flows` Vegas flows, from sender i (node i) to its own receiver (ns3_tcp.dumbbell); all start at 0 s."""
    check = cppyy.gbl.vegascheck
    check.Reset(SEGMENT)
    configure_tcp("ns3::TcpVegas", SEGMENT)
    net = dumbbell([RTT_MS] * flows, BOTTLENECK, BOTTLENECK_DELAY_MS, BUFFER_PACKETS)
    sinks = []
    for flow in range(flows):
        port = 5000 + flow
        sink = packet_sink(net.receiver(flow), port).Get(0)
        sinks.append(sink)
        check.AddSink(sink)
        bulk_send(net.sender(flow), net.receivers[flow], port, SEGMENT, 0.0)
        check.ScheduleConnect(1e-6, flow, flow)
    check.Setup(net.bottleneck.Get(0), FROM_S, CWND_EVERY_S, QUEUE_EVERY_S, DURATION_S - 1e-3)

    ns.Simulator.Stop(ns.Seconds(DURATION_S))
    ns.Simulator.Run()
    print(f"ran {flows} flow(s)", file=sys.stderr)
    result = {
        "cc": "ns3::TcpVegas",
        "flows": flows,
        "bytes_from_5s": [
            int(cppyy.gbl.ns3.DynamicCast[cppyy.gbl.ns3.PacketSink](s).GetTotalRx() - check.rx_at_from[i])
            for i, s in enumerate(sinks)
        ],
        "drops_before_5s": int(check.drops_at_from),
        "drops_from_5s": int(check.queue.GetTotalDroppedPackets() - check.drops_at_from),
        "cwnd_every_s": CWND_EVERY_S,
        "cwnd_segments": [[v / SEGMENT for v in check.cwnd[i]] for i in range(flows)],
        "queue_every_s": QUEUE_EVERY_S,
        "queue_packets": [int(v) for v in check.queue_len],
    }
    ns.Simulator.Destroy()
    return result


def main() -> None:
    runs = [run(1), run(2)]
    json.dump({"simulator": "ns-3 3.44", "duration_s": DURATION_S, "from_s": FROM_S, "runs": runs}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
