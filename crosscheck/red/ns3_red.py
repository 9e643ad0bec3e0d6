"""ns-3 3.44 side of the RED cross-check (run by hand, not in CI).

The network of red.toml: eight long-lived bulk flows (TcpNewReno with SACK,
timestamps and classic recovery, not ns-3's default PRR; 1000-byte segments,
initial window 4, an ACK per segment, min RTO 1 s) start 0.125 s apart and
share a 10 Mbit/s, 10 ms bottleneck with a 60 ms base RTT (1 Gbit/s access
links of 10 ms each). The bottleneck's traffic-control layer runs
ns3::RedQueueDisc with every attribute set (below); the device queue under it
holds one packet, so the queue builds in the queue disc. Other links have no
queue disc. Prints one JSON line: from 10 s to 30 s, the bytes delivered, the
packets the bottleneck sent and its busy time, the queue (queue disc plus
device queue, packets waiting; and the queue disc alone, which RED averages)
sampled every 10 ms, and RED's unforced and forced drops.

    python3 -m venv v && . v/bin/activate && pip install ns3==3.44.post0
    python3 crosscheck/red/ns3_red.py > crosscheck/red/ns3_result.json
"""

import json
import sys
from pathlib import Path

import cppyy
from ns import ns

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from ns3_tcp import address, bulk_send, configure_tcp, packet_sink, point_to_point  # noqa: E402 (a sibling module, found through the path above)

DURATION_S = 30.0
FROM_S = 10.0
FLOWS = 8
RTT_MS = 60
BOTTLENECK_DELAY_MS = 10
BUFFER_PACKETS = 100
SEGMENT = 1000

# Every RedQueueDisc attribute that decides a drop, set explicitly: packet
# mode (MaxSize in packets), fixed thresholds and weight, no adaptive variant.
RED = {
    "MaxSize": f"{BUFFER_PACKETS}p",
    "MinTh": "5",
    "MaxTh": "15",
    "QW": "0.002",
    "LInterm": "10",
    "Gentle": "true",
    "Wait": "true",
    "MeanPktSize": "500",
    "IdlePktSize": "0",
    "LinkBandwidth": "10Mbps",
    "LinkDelay": f"{BOTTLENECK_DELAY_MS}ms",
    "ARED": "false",
    "AdaptMaxP": "false",
    "FengAdaptive": "false",
    "NLRED": "false",
    "Ns1Compat": "false",
    "UseEcn": "false",
    "UseHardDrop": "true",
}

cppyy.cppdef(
    """
    #include <vector>
    namespace redcheck {
    ns3::Ptr<ns3::QueueDisc> qd;
    ns3::Ptr<ns3::Queue<ns3::Packet>> devq;
    ns3::Ptr<ns3::Application> sink;
    std::vector<double> queue, disc;
    uint64_t tx_bytes = 0, tx_packets = 0;
    double from = 0;
    uint64_t rx_from = 0, unforced_from = 0, forced_from = 0;
    void TxEnd(ns3::Ptr<const ns3::Packet> p) {
        if (ns3::Simulator::Now().GetSeconds() >= from) {
            tx_bytes += p->GetSize();
            tx_packets += 1;
        }
    }
    void Sample() {
        queue.push_back(qd->GetNPackets() + devq->GetNPackets());
        disc.push_back(qd->GetNPackets());
    }
    uint64_t Unforced() { return qd->GetStats().GetNDroppedPackets(ns3::RedQueueDisc::UNFORCED_DROP); }
    uint64_t Forced() { return qd->GetStats().GetNDroppedPackets(ns3::RedQueueDisc::FORCED_DROP); }
    uint64_t Rx() { return ns3::DynamicCast<ns3::PacketSink>(sink)->GetTotalRx(); }
    void Mark() { rx_from = Rx(); unforced_from = Unforced(); forced_from = Forced(); }
    void Setup(ns3::Ptr<ns3::QueueDisc> q, ns3::Ptr<ns3::NetDevice> dev, ns3::Ptr<ns3::Application> s,
               double at, double until, double every) {
        qd = q;
        sink = s;
        from = at;
        queue.clear();
        disc.clear();
        tx_bytes = 0;
        tx_packets = 0;
        auto p2p = ns3::DynamicCast<ns3::PointToPointNetDevice>(dev);
        devq = p2p->GetQueue();
        p2p->TraceConnectWithoutContext("PhyTxEnd", ns3::MakeCallback(&TxEnd));
        ns3::Simulator::Schedule(ns3::Seconds(at), &Mark);
        for (double t = at; t < until - 1e-9; t += every) ns3::Simulator::Schedule(ns3::Seconds(t), &Sample);
    }
    }
    """
)


def main() -> None:
    configure_tcp("ns3::TcpNewReno", SEGMENT)
    for name, value in RED.items():
        ns.Config.SetDefault(f"ns3::RedQueueDisc::{name}", ns.StringValue(value))

    # Nodes: 0 senders, 1 and 2 routers, 3 receivers.
    nodes = ns.NodeContainer()
    nodes.Create(4)
    ns.InternetStackHelper().Install(nodes)
    access_ms = (RTT_MS / 2 - BOTTLENECK_DELAY_MS) / 2
    address(point_to_point(nodes, 0, 1, "1Gbps", access_ms, "100000p"), "10.1.0.0")
    bottleneck = point_to_point(nodes, 1, 2, "10Mbps", BOTTLENECK_DELAY_MS, "1p")
    red = ns.TrafficControlHelper()
    red.SetRootQueueDisc("ns3::RedQueueDisc")
    discs = red.Install(bottleneck)  # before Assign, so it does not install the default queue disc
    address(bottleneck, "10.2.0.0", queue_disc=True)
    far = address(point_to_point(nodes, 2, 3, "1Gbps", access_ms, "100000p"), "10.3.0.0")
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    port = 5000
    sink_apps = packet_sink(nodes.Get(3), port)
    for i in range(FLOWS):
        bulk_send(nodes.Get(0), far.GetAddress(1), port, SEGMENT, i * 0.125)
    rc = cppyy.gbl.redcheck
    rc.Setup(discs.Get(0), bottleneck.Get(0), sink_apps.Get(0), FROM_S, DURATION_S, 0.01)

    ns.Simulator.Stop(ns.Seconds(DURATION_S))
    ns.Simulator.Run()
    seconds = DURATION_S - FROM_S
    result = {
        "simulator": "ns-3 3.44",
        "duration_s": DURATION_S,
        "from_s": FROM_S,
        "red": RED,
        "bytes_delivered": int(rc.Rx() - rc.rx_from),
        "unforced_drops": int(rc.Unforced() - rc.unforced_from),
        "forced_drops": int(rc.Forced() - rc.forced_from),
        "packets_sent": int(rc.tx_packets),
        "utilization": rc.tx_bytes * 8 / (10e6 * seconds),
        "queue_mean_pkts": sum(rc.queue) / len(rc.queue),
        "queue_max_pkts": max(rc.queue),
        "queue_disc_mean_pkts": sum(rc.disc) / len(rc.disc),
    }
    ns.Simulator.Destroy()
    json.dump(result, sys.stdout)
    print()


if __name__ == "__main__":
    main()
