"""ns-3 3.44 side of the two-flow cross-check (run by hand, not in CI).

Two TCP flows share a 100 Mbit/s, 10 ms DropTail bottleneck (traffic control
removed, so the device queue of `--buffer` packets is the only queue). Each
flow has its own sender and receiver behind 1 Gbit/s access links whose
delays give it the base RTT asked for, as cclab's dumbbell does. TCP as in
every cross-check (crosscheck/ns3_tcp.py: classic recovery, SACK, timestamps,
an ACK per segment, min RTO 1 s) with 1000-byte segments, limited transmit
and an initial window of `--iw`. CUBIC without HyStart, which cclab does not
model (its slow start is RFC 5681's).

    /work/venv-ns3/bin/python3 ns3_two_flow.py --cc cubic cubic --rtt 40 120 \\
        --start 0 1 --buffer 1000 --duration 60

Prints one JSON line: per flow its bytes received, timeouts (entries into
CA_LOSS) and fast recoveries (entries into CA_RECOVERY); with
`--sample-until T` also each flow's cwnd, ssthresh, bytes in flight (ns-3's
RFC 6675 pipe), congestion state, highest ACK and highest sequence sent every
10 ms (`--sample-every`) until T.
"""

import argparse
import json
import sys
from pathlib import Path

import cppyy
from ns import ns

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from ns3_tcp import bulk_send, configure_tcp, dumbbell, packet_sink  # noqa: E402 (a sibling module, found through the path above)

BOTTLENECK_DELAY_MS = 10
SEGMENT = 1000
SOCKET_TYPES = {
    "cubic": "ns3::TcpCubic",
    "newreno": "ns3::TcpNewReno",
    "highspeed": "ns3::TcpHighSpeed",
    "bic": "ns3::TcpBic",
}

# Trace sinks must be C++ callables; each counts a flow's entries into the
# loss (timeout) and recovery states.
cppyy.cppdef(
    """
    #include <array>
    #include <iostream>
    #include <vector>
    namespace twoflow {
    using CongState = ns3::TcpSocketState::TcpCongState_t;
    std::vector<unsigned> timeouts(2), recoveries(2);
    // The latest value of each traced variable, per flow, and rows sampled from them.
    std::array<std::array<double, 6>, 2> now{};  // cwnd, ssthresh, bytes in flight, state, highest ack, highest sent
    std::vector<std::array<double, 13>> rows;
    void StateChange(int flow, CongState, CongState s) {
        if (s == ns3::TcpSocketState::CA_LOSS) timeouts[flow]++;
        if (s == ns3::TcpSocketState::CA_RECOVERY) recoveries[flow]++;
        now[flow][3] = s;
    }
    template <int F> void OnState(CongState a, CongState b) { StateChange(F, a, b); }
    template <int F> void OnCwnd(uint32_t, uint32_t v) { now[F][0] = v; }
    template <int F> void OnSsthresh(uint32_t, uint32_t v) { now[F][1] = v; }
    template <int F> void OnInFlight(uint32_t, uint32_t v) { now[F][2] = v; }
    template <int F> void OnAck(ns3::SequenceNumber32, ns3::SequenceNumber32 v) { now[F][4] = v.GetValue(); }
    template <int F> void OnHigh(ns3::SequenceNumber32, ns3::SequenceNumber32 v) { now[F][5] = v.GetValue(); }
    template <int F> void ConnectAll(const std::string& p, bool sample) {
        ns3::Config::ConnectWithoutContext(p + "CongState", ns3::MakeCallback(&OnState<F>));
        if (!sample) return;
        ns3::Config::ConnectWithoutContext(p + "CongestionWindow", ns3::MakeCallback(&OnCwnd<F>));
        ns3::Config::ConnectWithoutContext(p + "SlowStartThreshold", ns3::MakeCallback(&OnSsthresh<F>));
        ns3::Config::ConnectWithoutContext(p + "BytesInFlight", ns3::MakeCallback(&OnInFlight<F>));
        ns3::Config::ConnectWithoutContext(p + "HighestRxAck", ns3::MakeCallback(&OnAck<F>));
        ns3::Config::ConnectWithoutContext(p + "HighestSequence", ns3::MakeCallback(&OnHigh<F>));
    }
    void Connect(uint32_t node, int flow, bool sample) {
        std::string p = "/NodeList/" + std::to_string(node) + "/$ns3::TcpL4Protocol/SocketList/0/";
        if (flow == 0) ConnectAll<0>(p, sample); else ConnectAll<1>(p, sample);
    }
    void ScheduleConnect(double at, uint32_t node, int flow, bool sample) {
        ns3::Simulator::Schedule(ns3::Seconds(at), &Connect, node, flow, sample);
    }
    void Sample(double every, double until) {
        std::array<double, 13> r{ns3::Simulator::Now().GetSeconds()};
        for (int f = 0; f < 2; f++) for (int i = 0; i < 6; i++) r[1 + 6 * f + i] = now[f][i];
        rows.push_back(r);
        if (ns3::Simulator::Now().GetSeconds() + every <= until)
            ns3::Simulator::Schedule(ns3::Seconds(every), &Sample, every, until);
    }
    void ScheduleSample(double every, double until) {
        ns3::Simulator::Schedule(ns3::Seconds(every), &Sample, every, until);
    }
    void Progress() { std::cerr << "simulated " << ns3::Simulator::Now().GetSeconds() << " s" << std::endl; }
    void ScheduleProgress(double at) { ns3::Simulator::Schedule(ns3::Seconds(at), &Progress); }
    }
    """
)


def run(ccs: list[str], rtts_ms: list[float], starts_s: list[float], buffer: int, duration_s: float,
        iw: int, sample_until: float = 0.0, sample_every: float = 0.01) -> dict:  # fmt: skip
    configure_tcp("ns3::TcpNewReno", SEGMENT, limited_transmit=True)
    ns.Config.SetDefault("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(iw))
    ns.Config.SetDefault("ns3::TcpCubic::HyStart", ns.BooleanValue(False))

    # Nodes: 0, 1 senders; 2, 3 routers; 4, 5 receivers.
    net = dumbbell(rtts_ms, "100Mbps", BOTTLENECK_DELAY_MS, buffer)
    for flow, cc in enumerate(ccs):
        tid = ns.TypeId.LookupByName(SOCKET_TYPES[cc])
        ns.Config.Set(f"/NodeList/{flow}/$ns3::TcpL4Protocol/SocketType", ns.TypeIdValue(tid))

    sinks = []
    for flow, start in enumerate(starts_s):
        port = 5000 + flow
        sinks.append(packet_sink(net.receiver(flow), port).Get(0))
        bulk_send(net.sender(flow), net.receivers[flow], port, SEGMENT, start)
        cppyy.gbl.twoflow.ScheduleConnect(start + 1e-6, flow, flow, sample_until > 0)

    if sample_until > 0:
        cppyy.gbl.twoflow.ScheduleSample(sample_every, sample_until)
    for at in range(10, int(duration_s), 10):
        cppyy.gbl.twoflow.ScheduleProgress(float(at))
    ns.Simulator.Stop(ns.Seconds(duration_s))
    ns.Simulator.Run()
    flows = []
    for flow, sink in enumerate(sinks):
        received = cppyy.gbl.ns3.DynamicCast[cppyy.gbl.ns3.PacketSink](sink).GetTotalRx()
        flows.append(
            {
                "cc": ccs[flow],
                "rtt_ms": rtts_ms[flow],
                "start_s": starts_s[flow],
                "bytes": int(received),
                "timeouts": int(cppyy.gbl.twoflow.timeouts[flow]),
                "recoveries": int(cppyy.gbl.twoflow.recoveries[flow]),
            }
        )
    ns.Simulator.Destroy()
    result = {"simulator": "ns-3 3.44", "duration_s": duration_s, "buffer": buffer, "iw": iw, "flows": flows}
    if sample_until > 0:
        # Segments for windows, sequence numbers as segment counts (ns-3 numbers bytes from 1 after the SYN).
        scale = [SEGMENT, SEGMENT, SEGMENT, 1, SEGMENT, SEGMENT]
        result["series"] = [
            [round(r[0], 3)] + [round(r[1 + 6 * f + i] / scale[i], 1) for f in (0, 1) for i in range(6)]
            for r in cppyy.gbl.twoflow.rows
        ]
        result["series_columns"] = ["time_s"] + [
            f"{f}:{n}" for f in (0, 1) for n in ("cwnd", "ssthresh", "in_flight", "state", "high_ack", "high_sent")
        ]
    return result


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--cc", nargs=2, default=["cubic", "cubic"], choices=sorted(SOCKET_TYPES))
    p.add_argument("--rtt", nargs=2, type=float, default=[40, 120])
    p.add_argument("--start", nargs=2, type=float, default=[0.0, 1.0])
    p.add_argument("--buffer", type=int, default=1000)
    p.add_argument("--duration", type=float, default=60.0)
    p.add_argument("--iw", type=int, default=10)
    p.add_argument("--sample-until", type=float, default=0.0, help="sample each flow's state until then")
    p.add_argument("--sample-every", type=float, default=0.01, help="the sampling interval, s")
    a = p.parse_args()
    json.dump(run(a.cc, a.rtt, a.start, a.buffer, a.duration, a.iw, a.sample_until, a.sample_every), sys.stdout)
    print()


if __name__ == "__main__":
    main()
