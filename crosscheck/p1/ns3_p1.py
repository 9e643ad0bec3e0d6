"""ns-3 3.44 side of benchmark P1, examples/bench-p1.toml (run by hand, not in CI; benchmarks/ns3_p1.py times it).

The network (crosscheck/ns3_tcp.py's dumbbell, as cclab builds it): two bulk
TCP flows, each with its own sender and receiver behind 1 Gbit/s access links
of 5 ms (a 40 ms base RTT), share a 100 Mbit/s, 10 ms DropTail bottleneck
holding 481 packets waiting, traffic control removed. 481 is cclab's "1bdp":
100 Mbit/s x 40 ms in packets of its 1040-byte full-segment wire size
(`cclab validate --json`, docs/scenario.md "Buffers and the BDP"). Both flows
run ns3::TcpNewReno congestion control (Reno's slow start and AIMD, cclab's
`cc = "reno"`) with ns3::TcpClassicRecovery, not ns-3's default PRR (RFC
6937): classic recovery sets cwnd to ssthresh on entry, inflates it by a
segment per duplicate ACK and deflates at the exit, which is ns-3's nearest to
RFC 6582 NewReno for the flow without SACK and, with ns-3's RFC 6675
scoreboard, pipe and NextSeg, to RFC 6675 for the flow with it. The flow
named `newreno` runs with SACK off, the flow named `sack` with SACK on (the
script checks after the run that each connection used what it asked for).
As cclab's defaults: 1000-byte segments, initial window 4, an ACK for every
segment, timestamps, limited transmit off, duplicate-ACK threshold 3, min RTO
1 s, clock granularity 1 ms, no receiver-window limit. Each flow starts at the
time cclab drew for it (the defaults are cclab's draws from 0-0.1 s for seed
1; benchmarks/ns3_p1.py passes the draws of the run it compares with). 20 s.

Prints one JSON line: the bytes each flow's receiver got, the total, each
flow's entries into fast recovery and into loss (timeouts) with the time and
the ssthresh set, and the CPU seconds of ns.Simulator.Run alone
(time.process_time around it).

What cannot be matched:

- Headers: ns-3 puts 54 bytes on the wire with each segment (IPv4 20, TCP 20,
  the timestamp option 12, PPP 2), cclab 40, so ns-3's data packets are 1054
  bytes against 1040 and its best goodput is 1.3 % lower; its ACKs also grow
  with SACK blocks. The buffer is the same in packets, 1.3 % larger in bytes.
- The handshake: ns-3 opens each connection with SYN, SYN-ACK (one RTT before
  the first data segment); cclab's flows send their first window at their
  start time.
- The window a loss halves: ns-3 takes ssthresh from its bytes in flight by
  RFC 6675's pipe (without SACK, each duplicate ACK counted as a segment that
  left the network, plus one segment), cclab from FlightSize (RFC 5681 eq. 4,
  its default `ssthresh_basis = "flight"`).
- The end of NewReno's recovery: ns-3's classic recovery sets cwnd to ssthresh
  (RFC 6582's option 2); cclab's default `full_ack = "flight"` sets it to
  min(ssthresh, FlightSize + 1 segment) (option 1).
- Duplicate ACKs after a timeout: ns-3 ignores them until the timeout's
  recovery ends (tcp-socket-base.cc, DupAck); cclab counts them.
- Send buffer: ns-3's bulk sender fills a 1 GiB send buffer (ns3_tcp.py's
  setting for every cross-check, so the window is never limited by it); cclab's
  bulk flow has data without a buffer. ns-3's process peaks near 1.5 GB; on
  the ssthresh-basis network a 4 MiB buffer left its CPU per megabyte
  delivered as it was (benchmarks/results/speed-history-2026-11-29.md).

What it gave (2026-11-29, benchmarks/results/ns3_p1-2026-11-29.txt): ns-3
delivered 138.2 MB against cclab's 236.8 MB. The difference is ns-3's flow
without SACK: 7 timeouts and 43 fast recoveries (cclab: 2 and 3). From its
first timeout at 1.55 s it runs in cycles: some 1.5-2 s after a timeout, 7 or
8 fast recoveries about a round trip apart take its ssthresh down to 2
segments while the bottleneck queue fills to its 481 packets, and a timeout
1 s later ends the cycle; the SACK flow halves at each filling (7 times, cclab
2) and the queue stays empty for 1.5-3 s after each timeout. Why the recoveries
repeat and what fills the queue was not traced further. With SACK on for both
flows ns-3 delivers 233.8 MB, 0.987 of cclab's, which is the ratio of the
wire sizes (1040 / 1054).
"""

import argparse
import json
import sys
import time
from pathlib import Path

import cppyy
from ns import ns

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from ns3_tcp import bulk_send, configure_tcp, dumbbell, packet_sink  # noqa: E402 (a sibling module, found through the path above)

DURATION_S = 20.0
RTT_MS = 40
BOTTLENECK = "100Mbps"
BOTTLENECK_DELAY_MS = 10
BUFFER_PACKETS = 481
SEGMENT = 1000
# cclab's draws for examples/bench-p1.toml with seed 1 (start_s of `cclab run --json`).
DEFAULT_STARTS_S = {"newreno": 0.068947393, "sack": 0.007372797}
SACK = {"newreno": False, "sack": True}
STATES = {3: "recovery", 4: "loss"}  # TcpSocketState::TcpCongState_t

# ns-3 reads TcpSocketBase::Sack when a socket is created, and the bulk sender
# creates its socket when it starts: setting the default just before each
# sender starts gives each flow its own. Events scheduled before Simulator.Run
# run before the applications' start events of the same time, which are
# scheduled only when the nodes initialise at time 0.
cppyy.cppdef(
    """
    namespace p1 {
    void SetSack(bool on) { ns3::Config::SetDefault("ns3::TcpSocketBase::Sack", ns3::BooleanValue(on)); }
    void ScheduleSack(double at, bool on) { ns3::Simulator::Schedule(ns3::Seconds(at), &SetSack, on); }
    bool SackOf(ns3::Ptr<ns3::Socket> socket) {
        ns3::BooleanValue on;
        socket->GetAttribute("Sack", on);
        return on.Get();
    }
    bool SenderSack(ns3::Ptr<ns3::Application> app) {
        return SackOf(ns3::DynamicCast<ns3::BulkSendApplication>(app)->GetSocket());
    }
    bool ReceiverSack(ns3::Ptr<ns3::Application> app) {
        auto sockets = ns3::DynamicCast<ns3::PacketSink>(app)->GetAcceptedSockets();
        return sockets.size() == 1 && SackOf(sockets.front());
    }
    uint64_t Received(ns3::Ptr<ns3::Application> app) { return ns3::DynamicCast<ns3::PacketSink>(app)->GetTotalRx(); }

    // Each flow's entries into recovery and into loss (a timeout): time, state, ssthresh in segments.
    using CongState = ns3::TcpSocketState::TcpCongState_t;
    struct Event { double at; int state; double ssthresh; };
    std::vector<std::vector<Event>> events(2);
    std::vector<double> ssthresh(2);
    template <int F> void OnSsthresh(uint32_t, uint32_t v) { ssthresh[F] = v / 1000.0; }  // SEGMENT bytes
    // ns-3 may set ssthresh after the state (or leave it): read it once the ACK or timeout is handled.
    template <int F> void Read() { events[F].back().ssthresh = ssthresh[F]; }
    template <int F> void OnState(CongState, CongState s) {
        if (s == ns3::TcpSocketState::CA_RECOVERY || s == ns3::TcpSocketState::CA_LOSS) {
            events[F].push_back({ns3::Simulator::Now().GetSeconds(), int(s), 0.0});
            ns3::Simulator::ScheduleNow(&Read<F>);
        }
    }
    void Connect(ns3::Ptr<ns3::Application> app, int flow) {
        auto socket = ns3::DynamicCast<ns3::BulkSendApplication>(app)->GetSocket();
        if (flow == 0) {
            socket->TraceConnectWithoutContext("CongState", ns3::MakeCallback(&OnState<0>));
            socket->TraceConnectWithoutContext("SlowStartThreshold", ns3::MakeCallback(&OnSsthresh<0>));
        } else {
            socket->TraceConnectWithoutContext("CongState", ns3::MakeCallback(&OnState<1>));
            socket->TraceConnectWithoutContext("SlowStartThreshold", ns3::MakeCallback(&OnSsthresh<1>));
        }
    }
    void ScheduleConnect(double at, ns3::Ptr<ns3::Application> app, int flow) {
        ns3::Simulator::Schedule(ns3::Seconds(at), &Connect, app, flow);
    }
    }
    """
)


def run(starts_s: dict[str, float]) -> dict:
    configure_tcp("ns3::TcpNewReno", SEGMENT, limited_transmit=False)
    names = list(SACK)
    net = dumbbell([RTT_MS] * len(names), BOTTLENECK, BOTTLENECK_DELAY_MS, BUFFER_PACKETS)
    p1 = cppyy.gbl.p1
    sinks, senders = [], []
    for flow, name in enumerate(names):
        port = 5000 + flow
        sinks.append(packet_sink(net.receiver(flow), port).Get(0))
        senders.append(bulk_send(net.sender(flow), net.receivers[flow], port, SEGMENT, starts_s[name]).Get(0))
        p1.ScheduleSack(starts_s[name], SACK[name])
        p1.ScheduleConnect(starts_s[name] + 1e-6, senders[-1], flow)

    ns.Simulator.Stop(ns.Seconds(DURATION_S))
    start = time.process_time()
    ns.Simulator.Run()
    run_cpu_s = time.process_time() - start
    flows = {}
    for flow, name in enumerate(names):
        sender, receiver = bool(p1.SenderSack(senders[flow])), bool(p1.ReceiverSack(sinks[flow]))
        if sender != SACK[name] or receiver != SACK[name]:
            raise SystemExit(f"flow {name}: SACK {SACK[name]} asked, the sender used {sender}, the receiver {receiver}")
        events = [(round(e.at, 4), STATES[e.state], e.ssthresh) for e in p1.events[flow]]
        flows[name] = {
            "start_s": starts_s[name],
            "sack": sender,
            "bytes": int(p1.Received(sinks[flow])),
            "recoveries": sum(e[1] == "recovery" for e in events),
            "timeouts": sum(e[1] == "loss" for e in events),
            "events": events,
        }
    ns.Simulator.Destroy()
    return {
        "simulator": "ns-3 3.44",
        "duration_s": DURATION_S,
        "buffer_packets": BUFFER_PACKETS,
        "flows": flows,
        "bytes": sum(f["bytes"] for f in flows.values()),
        "simulator_run_cpu_s": run_cpu_s,
    }


def start_time(text: str) -> float:
    # Not at 0: a SACK setting made then would come before the receivers' listening sockets are made.
    value = float(text)
    if not 0 < value < DURATION_S:
        raise argparse.ArgumentTypeError(f"must be above 0 and below {DURATION_S:g} s")
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, default in DEFAULT_STARTS_S.items():
        parser.add_argument(
            f"--{name}-start", type=start_time, default=default, help=f"seconds (default {default}, cclab's seed 1)"
        )
    args = parser.parse_args()
    starts = {"newreno": args.newreno_start, "sack": args.sack_start}
    if starts["newreno"] == starts["sack"]:
        # Both SACK settings would be made before either sender starts.
        parser.error("--newreno-start and --sack-start must differ")
    json.dump(run(starts), sys.stdout)
    print()


if __name__ == "__main__":
    main()
