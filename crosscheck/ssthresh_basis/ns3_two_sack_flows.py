"""ns-3 3.44 side of the ssthresh-basis cross-check (run by hand, not in CI).

Two TCP NewReno flows with SACK and timestamps share a 100 Mbit/s, 10 ms
DropTail bottleneck (250 packets waiting, traffic control removed); flow 0 has
a 40 ms base RTT and starts at 0 s, flow 1 an 80 ms base RTT and starts at
1 s. Access links run at 1 Gbit/s with the delays cclab's dumbbell gives the
same RTTs. ns-3 is set to what cclab's scenario `two_sack_flows.toml` says:
1000-byte segments, initial window 4, an ACK for every segment, classic (not
PRR) recovery, limited transmit on, min RTO 1 s. Prints one JSON line: each
flow's goodput over 0-20 s and the ssthresh after each of its first congestion
events.

    python3 -m venv v && . v/bin/activate && pip install ns3==3.44.post0
    python3 crosscheck/ssthresh_basis/ns3_two_sack_flows.py
"""

import json
import sys
from pathlib import Path

import cppyy
from ns import ns

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from ns3_tcp import bulk_send, configure_tcp, dumbbell, packet_sink  # noqa: E402 (a sibling module, found through the path above)

DURATION_S = 20.0
RTTS_MS = (40, 80)
STARTS_S = (0.0, 1.0)
BOTTLENECK_DELAY_MS = 10
BUFFER_PACKETS = 250
SEGMENT = 1000

# Trace sinks must be C++ callables; each records (time, ssthresh) per flow.
cppyy.cppdef(
    """
    #include <vector>
    #include <utility>
    namespace crosscheck {
    std::vector<std::vector<std::pair<double, uint32_t>>> ssthresh(2);
    void Record0(uint32_t, uint32_t v) { ssthresh[0].push_back({ns3::Simulator::Now().GetSeconds(), v}); }
    void Record1(uint32_t, uint32_t v) { ssthresh[1].push_back({ns3::Simulator::Now().GetSeconds(), v}); }
    void Connect(uint32_t node, int flow) {
        std::string path = "/NodeList/" + std::to_string(node) +
                           "/$ns3::TcpL4Protocol/SocketList/0/SlowStartThreshold";
        if (flow == 0) ns3::Config::ConnectWithoutContext(path, ns3::MakeCallback(&Record0));
        else ns3::Config::ConnectWithoutContext(path, ns3::MakeCallback(&Record1));
    }
    void ScheduleConnect(double at, uint32_t node, int flow) {
        ns3::Simulator::Schedule(ns3::Seconds(at), &Connect, node, flow);
    }
    }
    """
)


def main() -> None:
    configure_tcp("ns3::TcpNewReno", SEGMENT, limited_transmit=True)

    # Nodes: 0, 1 senders; 2, 3 routers; 4, 5 receivers.
    net = dumbbell(list(RTTS_MS), "100Mbps", BOTTLENECK_DELAY_MS, BUFFER_PACKETS)

    sinks = []
    for flow, start in enumerate(STARTS_S):
        port = 5000 + flow
        sinks.append(packet_sink(net.receiver(flow), port).Get(0))
        bulk_send(net.sender(flow), net.receivers[flow], port, SEGMENT, start)
        cppyy.gbl.crosscheck.ScheduleConnect(start + 1e-6, flow, flow)

    ns.Simulator.Stop(ns.Seconds(DURATION_S))
    ns.Simulator.Run()
    result = {"simulator": "ns-3 3.44", "duration_s": DURATION_S, "flows": []}
    for flow, sink in enumerate(sinks):
        received = cppyy.gbl.ns3.DynamicCast[cppyy.gbl.ns3.PacketSink](sink).GetTotalRx()
        events = [(round(t, 6), v / SEGMENT) for t, v in cppyy.gbl.crosscheck.ssthresh[flow]]
        result["flows"].append(
            {"rtt_ms": RTTS_MS[flow], "start_s": STARTS_S[flow], "bytes": int(received), "ssthresh": events[:6]}
        )
    ns.Simulator.Destroy()
    json.dump(result, sys.stdout)
    print()


if __name__ == "__main__":
    main()
