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
from ns3_tcp import configure_tcp  # noqa: E402 (a sibling module, found through the path above)

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

    # Nodes: 0 sender, 1 and 2 routers, 3 receiver.
    nodes = ns.NodeContainer()
    nodes.Create(4)
    stack = ns.InternetStackHelper()
    stack.Install(nodes)
    tc = ns.TrafficControlHelper()
    address = ns.Ipv4AddressHelper()

    def link(a: int, b: int, rate: str, delay_ms: float, queue: str, subnet: int) -> ns.NetDeviceContainer:
        p2p = ns.PointToPointHelper()
        p2p.SetDeviceAttribute("DataRate", ns.StringValue(rate))
        p2p.SetChannelAttribute("Delay", ns.TimeValue(ns.MilliSeconds(delay_ms)))
        p2p.SetQueue("ns3::DropTailQueue", "MaxSize", ns.StringValue(queue))
        pair = ns.NodeContainer()
        pair.Add(nodes.Get(a))
        pair.Add(nodes.Get(b))
        devices = p2p.Install(pair)
        address.SetBase(ns.Ipv4Address(f"10.{subnet}.0.0"), ns.Ipv4Mask("255.255.255.0"))
        interfaces = address.Assign(devices)
        tc.Uninstall(devices)  # after Assign, which installs the default queue disc
        return devices, interfaces

    access_ms = (RTT_MS / 2 - BOTTLENECK_DELAY_MS) / 2
    link(0, 1, "1Gbps", access_ms, "100000p", 1)
    bottleneck, _ = link(1, 2, "20Mbps", BOTTLENECK_DELAY_MS, f"{BUFFER_PACKETS}p", 2)
    _, far = link(2, 3, "1Gbps", access_ms, "100000p", 3)
    if loss > 0:
        em = ns.CreateObject[ns.RateErrorModel]()
        em.SetAttribute("ErrorRate", ns.DoubleValue(loss))
        em.SetAttribute("ErrorUnit", ns.StringValue("ERROR_UNIT_PACKET"))
        bottleneck.Get(1).SetAttribute("ReceiveErrorModel", ns.PointerValue(em))
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    port = 5000
    sink = ns.PacketSinkHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo())
    sink_apps = sink.Install(nodes.Get(3))
    sink_apps.Start(ns.Seconds(0.0))
    bulk = ns.BulkSendHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(far.GetAddress(1), port).ConvertTo())
    bulk.SetAttribute("MaxBytes", ns.UintegerValue(0))
    bulk.SetAttribute("SendSize", ns.UintegerValue(SEGMENT))
    sender = bulk.Install(nodes.Get(0))
    sender.Start(ns.Seconds(0.0))
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
