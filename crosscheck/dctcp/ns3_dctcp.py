"""ns-3 3.44 side of the DCTCP cross-check (run by hand, not in CI).

The network of the scenario files beside it (dctcp-1g-2.toml ...
dctcp-10g-10.toml): N long-lived bulk flows (N = 2 and 10) start 5 ms apart
and share a 1 or 10 Gbit/s bottleneck with a 25 us one-way delay and a 250 us
base RTT, through access links 10 times faster than the bottleneck (cclab's
default), each flow with its own sender and receiver (ns3_tcp.dumbbell). TCP
is ns-3's `TcpDctcp` (DCTCP over TcpLinuxReno, g = 1/16, alpha starting at 1,
ECN with ns-3's DCTCP feedback: the receiver echoes each segment's CE state
and, when it changes while an ACK is held back, sends that ACK at once: RFC
8257 section 3.2) with 1448-byte segments (1500-byte IP packets with
timestamps), SACK, timestamps, classic recovery (not ns-3's default PRR: a
reduction sets cwnd at once), initial window 4, min RTO 1 s, and an ACK per
segment or per two (DelAckCount 1 or 2, the argument). The bottleneck's
traffic-control layer (both directions) runs RedQueueDisc configured as a step
marker: MinTh = MaxTh = K (20 packets at 1 Gbit/s, 65 at 10 Gbit/s), QW = 1
(the average is the queue the arrival finds), UseEcn, no hard drop, not
gentle: an ECN-capable arrival that finds K or more packets in the queue disc
is marked CE. Its limit is 2666 packets (the DCTCP example's 4 MB switch
buffer). The point-to-point device under it holds one packet (`1p`), so the
queue builds in the queue disc.

Over the measurement window it records, at the forward bottleneck device: the
bytes it sent (utilisation), the packets the queue disc admitted, marked and
dropped, the ACKs the reverse device sent, the queue sampled every 10 us
(queue disc plus device queue, packets waiting, as cclab's queue_packets;
and the queue disc alone, which RED compares with K) as histograms; per flow
the payload delivered, alpha and the marked fraction M from TcpDctcp's
`CongestionEstimate` trace (sampled every 1 ms, and the bytes marked and
acknowledged summed over the window), cwnd every 50 us (its mean, and its
growth: the sum of the rises between samples), cwnd's minimum and how often it
was set below 2 segments and below 1, entries into CA_CWR (window reductions
for marks; and those made on the ACK that ended the previous CA_CWR, so with
no growth between the two), CA_RECOVERY and CA_LOSS (and over the whole run
when each CA_LOSS came), retransmissions; the mean of cwnd / floor(cwnd) in
segments (TcpLinuxReno adds a segment per floor(cwnd) segments acknowledged);
and at the queue disc each flow's data packets, those marked, and how often
the mark state changed from one of the flow's packets to the next (each change
is where ns-3's DCTCP receiver may send an ACK at once).

    /work/venv-ns3/bin/python crosscheck/dctcp/ns3_dctcp.py     # all cases, writes ns3_result.json
    /work/venv-ns3/bin/python crosscheck/dctcp/ns3_dctcp.py 10 2 1   # one case (Gbit/s, flows, DelAckCount)

Each case runs in its own process, one after the other, under `nice -n 10`.
DCTCP_SHORT=1 shortens every case (a quick try of the script, not a result).
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SEGMENT = 1448  # 1448 + TCP 20 + timestamps 12 + IP 20 = 1500 bytes; 1502 on the wire with PPP's 2
RTT_MS = 0.25
BOTTLENECK_DELAY_MS = 0.025
BUFFER_PACKETS = 2666
START_GAP_S = 0.005
QUEUE_EVERY_S = 10e-6
FLOW_EVERY_S = 1e-3
CWND_EVERY_S = 50e-6  # cwnd's growth: the positive steps between samples this far apart
FLOW_COUNTS = (2, 10)
DELAYED_ACK_COUNTS = (1, 2)
# Gbit/s -> (K, run length, measured from): K as the DCTCP paper (20 packets at
# 1 Gbit/s, 65 at 10 Gbit/s; RFC 8257 section 3.1 asks for more than BDP / 7).
RATES = {1: (20, 3.0, 1.0), 10: (65, 1.5, 0.5)}
if os.environ.get("DCTCP_SHORT"):  # a quick timing run
    RATES = {1: (20, 0.6, 0.3), 10: (65, 0.3, 0.15)}

CPP = """
#include <algorithm>
#include <cstdint>
#include <vector>
namespace dctcpcheck {
using namespace ns3;
Ptr<QueueDisc> qd;
Ptr<Queue<Packet>> devq;
std::vector<Ptr<PacketSink>> sinks;
std::vector<uint64_t> rx_from;
double from = 0, until = 0, queue_every = 0, flow_every = 0;
uint64_t arrivals = 0, marks = 0, drops = 0, drops_all = 0, tx_bytes = 0, tx_packets = 0, acks = 0;
uint64_t bad_estimates = 0;  // CongestionEstimate calls whose marked bytes exceed the acked bytes
std::vector<uint64_t> queue_hist, disc_hist;  // samples in the window, by packets waiting
std::vector<double> alpha_now, m_now;
std::vector<uint32_t> cwnd_now;
std::vector<double> alpha_sum, m_sum, cwnd_sum;
uint64_t flow_samples = 0, cwnd_samples = 0;
std::vector<uint64_t> bytes_marked, bytes_acked, windows, cwr, recoveries, losses, retransmits;
double cwnd_every = 0;
std::vector<uint32_t> cwnd_last_sample;  // for the growth: positive steps between cwnd samples
std::vector<double> growth;  // segments gained between cwnd samples in the window
std::vector<uint32_t> cwnd_min;  // bytes, over the window
std::vector<uint64_t> below_two, below_one;  // cwnd set below 2 (1) segments in the window
std::vector<double> loss_times;  // every entry into CA_LOSS of the run, and its flow
std::vector<int> loss_flows;
std::vector<int> last_ce;  // per flow: whether its last data packet admitted was marked (-1: none yet)
std::vector<uint64_t> flow_arrivals, flow_marks, ce_changes;  // data packets admitted, marked, and CE changes
uint32_t segment = 0;
std::vector<double> cwr_exit_at;  // when each flow last left CA_CWR
std::vector<uint64_t> cwr_again;  // entries into CA_CWR on the very ACK that ended the previous one
std::vector<double> speedup_sum;  // TcpLinuxReno counts w = floor(cwnd / segment): cwnd/w, summed over samples

bool InWindow() {
    double t = Simulator::Now().GetSeconds();
    return t >= from && t < until;
}
void Count(std::vector<uint64_t>& hist, uint32_t n) {
    if (hist.size() <= n) hist.resize(n + 1, 0);
    hist[n]++;
}
// Data packets (the forward queue disc also sees the handshake's packets) by flow: destination port - 5000.
void Enqueue(Ptr<const QueueDiscItem> item) {
    if (!InWindow()) return;
    arrivals++;
    TcpHeader h;
    uint32_t header = item->GetPacket()->PeekHeader(h);
    if (item->GetPacket()->GetSize() <= header) return;
    uint32_t flow = h.GetDestinationPort() - 5000;
    int ce = DynamicCast<const Ipv4QueueDiscItem>(item)->GetHeader().GetEcn() == Ipv4Header::ECN_CE ? 1 : 0;
    flow_arrivals[flow]++;
    flow_marks[flow] += ce;
    if (last_ce[flow] >= 0 && last_ce[flow] != ce) ce_changes[flow]++;
    last_ce[flow] = ce;
}
void Drop(Ptr<const QueueDiscItem> item, const char* reason) {
    drops_all++;
    if (InWindow()) {
        arrivals++;
        drops++;
    }
}
void Marked(Ptr<const QueueDiscItem> item, const char* reason) {
    if (InWindow()) marks++;
}
void TxEnd(Ptr<const Packet> p) {
    if (InWindow()) {
        tx_bytes += p->GetSize();
        tx_packets++;
    }
}
void AckTxEnd(Ptr<const Packet> p) {
    if (InWindow()) acks++;
}
void SampleQueue() {
    Count(queue_hist, qd->GetNPackets() + devq->GetNPackets());
    Count(disc_hist, qd->GetNPackets());
    if (Simulator::Now().GetSeconds() + queue_every < until - 1e-12)
        Simulator::Schedule(Seconds(queue_every), &SampleQueue);
}
void SampleCwnd() {
    for (size_t i = 0; i < cwnd_now.size(); i++) {
        if (cwnd_samples > 0 && cwnd_now[i] > cwnd_last_sample[i])
            growth[i] += static_cast<double>(cwnd_now[i] - cwnd_last_sample[i]) / segment;
        cwnd_last_sample[i] = cwnd_now[i];
        cwnd_sum[i] += cwnd_now[i];
        uint32_t w = std::max<uint32_t>(cwnd_now[i] / segment, 1);
        speedup_sum[i] += static_cast<double>(cwnd_now[i]) / segment / w;
    }
    cwnd_samples++;
    if (Simulator::Now().GetSeconds() + cwnd_every < until - 1e-12)
        Simulator::Schedule(Seconds(cwnd_every), &SampleCwnd);
}
void SampleFlows() {
    for (size_t i = 0; i < alpha_now.size(); i++) {
        alpha_sum[i] += alpha_now[i];
        m_sum[i] += m_now[i];
    }
    flow_samples++;
    if (Simulator::Now().GetSeconds() + flow_every < until - 1e-12)
        Simulator::Schedule(Seconds(flow_every), &SampleFlows);
}
// TcpDctcp calls it m_traceCongestionEstimate(m_ackedBytesEcn, m_ackedBytesTotal, m_alpha)
// at the end of each observation window (its typedef names the first two the other way round).
void Estimate(uint32_t flow, uint32_t marked, uint32_t acked, double alpha) {
    alpha_now[flow] = alpha;
    m_now[flow] = acked > 0 ? static_cast<double>(marked) / acked : 0.0;
    if (marked > acked) bad_estimates++;
    if (InWindow()) {
        bytes_marked[flow] += marked;
        bytes_acked[flow] += acked;
        windows[flow]++;
    }
}
void CongState(uint32_t flow, TcpSocketState::TcpCongState_t old_state, TcpSocketState::TcpCongState_t new_state) {
    if (old_state != new_state && new_state == TcpSocketState::CA_LOSS) {
        loss_times.push_back(Simulator::Now().GetSeconds());
        loss_flows.push_back(flow);
    }
    if (old_state == new_state || !InWindow()) return;
    double now = Simulator::Now().GetSeconds();
    if (old_state == TcpSocketState::CA_CWR) cwr_exit_at[flow] = now;
    if (new_state == TcpSocketState::CA_CWR && cwr_exit_at[flow] == now) cwr_again[flow]++;
    if (new_state == TcpSocketState::CA_CWR) cwr[flow]++;
    if (new_state == TcpSocketState::CA_RECOVERY) recoveries[flow]++;
    if (new_state == TcpSocketState::CA_LOSS) losses[flow]++;
}
void Cwnd(uint32_t flow, uint32_t old_value, uint32_t new_value) {
    cwnd_now[flow] = new_value;
    if (!InWindow()) return;
    cwnd_min[flow] = std::min(cwnd_min[flow], new_value);
    if (new_value < 2 * segment) below_two[flow]++;
    if (new_value < segment) below_one[flow]++;
}
void Retransmitted(uint32_t flow, Ptr<const Packet> p, const TcpHeader& h, const Address& a, const Address& b,
                   Ptr<const TcpSocketBase> s) {
    if (InWindow()) retransmits[flow]++;
}
void HookSocket(uint32_t flow, Ptr<Application> app) {
    Ptr<Socket> s = DynamicCast<BulkSendApplication>(app)->GetSocket();
    s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&CongState, flow));
    s->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&Cwnd, flow));
    PointerValue ops;
    s->GetAttribute("CongestionOps", ops);
    ops.Get<TcpCongestionOps>()->TraceConnectWithoutContext("CongestionEstimate", MakeBoundCallback(&Estimate, flow));
}
void MarkStart() {
    for (size_t i = 0; i < sinks.size(); i++) rx_from[i] = sinks[i]->GetTotalRx();
}
uint64_t Delivered(uint32_t i) { return sinks[i]->GetTotalRx() - rx_from[i]; }
void Setup(Ptr<QueueDisc> q, Ptr<NetDevice> fwd, Ptr<NetDevice> rev, ApplicationContainer sink_apps,
           ApplicationContainer senders, std::vector<double> starts, double at, double end, double q_every,
           double f_every, double c_every, uint32_t seg) {
    cwnd_every = c_every;
    segment = seg;
    qd = q;
    from = at;
    until = end;
    queue_every = q_every;
    flow_every = f_every;
    uint32_t n = sink_apps.GetN();
    for (uint32_t i = 0; i < n; i++) sinks.push_back(DynamicCast<PacketSink>(sink_apps.Get(i)));
    rx_from.assign(n, 0);
    alpha_now.assign(n, 1.0);  // DctcpAlphaOnInit
    m_now.assign(n, 0.0);
    cwnd_now.assign(n, 0);
    alpha_sum.assign(n, 0.0);
    m_sum.assign(n, 0.0);
    cwnd_sum.assign(n, 0.0);
    for (auto* v : {&bytes_marked, &bytes_acked, &windows, &cwr, &recoveries, &losses, &retransmits, &below_two,
                    &below_one, &flow_arrivals, &flow_marks, &ce_changes})
        v->assign(n, 0);
    cwnd_last_sample.assign(n, 0);
    growth.assign(n, 0.0);
    cwnd_min.assign(n, UINT32_MAX);
    last_ce.assign(n, -1);
    cwr_exit_at.assign(n, -1.0);
    cwr_again.assign(n, 0);
    speedup_sum.assign(n, 0.0);
    auto p2p = DynamicCast<PointToPointNetDevice>(fwd);
    devq = p2p->GetQueue();
    q->TraceConnectWithoutContext("Enqueue", MakeCallback(&Enqueue));
    q->TraceConnectWithoutContext("DropBeforeEnqueue", MakeCallback(&Drop));
    q->TraceConnectWithoutContext("Mark", MakeCallback(&Marked));
    p2p->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&TxEnd));
    rev->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&AckTxEnd));
    for (uint32_t i = 0; i < senders.GetN(); i++) {
        senders.Get(i)->TraceConnectWithoutContext("TcpRetransmission", MakeBoundCallback(&Retransmitted, i));
        // The socket exists once the application has started.
        Simulator::Schedule(Seconds(starts[i] + 1e-6), &HookSocket, i, senders.Get(i));
    }
    Simulator::Schedule(Seconds(at), &MarkStart);
    Simulator::Schedule(Seconds(at), &SampleQueue);
    Simulator::Schedule(Seconds(at), &SampleFlows);
    // The first sample only sets the reference: growth counts from the window's start.
    Simulator::Schedule(Seconds(at), &SampleCwnd);
}
}
"""


def hist_stats(hist: list[int]) -> dict[str, float]:
    """Mean, nearest-rank 99th percentile and maximum of the samples a histogram (index = packets) counts."""
    total = sum(hist)
    mean = sum(i * c for i, c in enumerate(hist)) / total
    rank, seen, p99 = 0.99 * total, 0, 0
    for i, c in enumerate(hist):
        seen += c
        if seen >= rank:
            p99 = i
            break
    return {"mean": mean, "p99": p99, "max": max(i for i, c in enumerate(hist) if c)}


def run_case(gbps: int, flows: int, delayed_ack_count: int) -> dict[str, Any]:
    """Runs one case; returns its measurements."""
    import cppyy
    from ns import ns

    sys.path.insert(0, str(HERE.parent))
    from ns3_tcp import attributes_of, bulk_send, configure_tcp, dumbbell, packet_sink

    cppyy.cppdef(CPP)
    k, duration, from_s = RATES[gbps]
    red = {
        "MaxSize": f"{BUFFER_PACKETS}p",
        "MinTh": str(k),
        "MaxTh": str(k),
        "QW": "1",
        "UseEcn": "true",
        "UseHardDrop": "false",
        "Gentle": "false",
        "Wait": "true",
        "LInterm": "50",
        "MeanPktSize": "1500",
        "IdlePktSize": "0",
        "LinkBandwidth": f"{gbps}Gbps",
        "LinkDelay": f"{BOTTLENECK_DELAY_MS * 1000:g}us",
        "ARED": "false",
        "AdaptMaxP": "false",
        "FengAdaptive": "false",
        "NLRED": "false",
        "Ns1Compat": "false",
    }
    configure_tcp("ns3::TcpDctcp", SEGMENT, delayed_ack_count=delayed_ack_count)
    tch = ns.TrafficControlHelper()
    tch.SetRootQueueDisc("ns3::RedQueueDisc")
    for name, value in red.items():
        ns.Config.SetDefault(f"ns3::RedQueueDisc::{name}", ns.StringValue(value))
    net = dumbbell(
        [RTT_MS] * flows, f"{gbps}Gbps", BOTTLENECK_DELAY_MS, 1, access_rate=f"{10 * gbps}Gbps", queue_disc=tch
    )
    sinks = ns.ApplicationContainer()
    senders = ns.ApplicationContainer()
    starts = cppyy.gbl.std.vector["double"]()
    for i in range(flows):
        port = 5000 + i
        sinks.Add(packet_sink(net.receiver(i), port))
        senders.Add(bulk_send(net.sender(i), net.receivers[i], port, SEGMENT, i * START_GAP_S))
        starts.push_back(i * START_GAP_S)
    dc = cppyy.gbl.dctcpcheck
    dc.Setup(
        net.discs.Get(0),
        net.bottleneck.Get(0),
        net.bottleneck.Get(1),
        sinks,
        senders,
        starts,
        from_s,
        duration,
        QUEUE_EVERY_S,
        FLOW_EVERY_S,
        CWND_EVERY_S,
        SEGMENT,
    )
    ns.Simulator.Stop(ns.Seconds(duration))
    began = time.monotonic()
    ns.Simulator.Run()
    wall_s = time.monotonic() - began
    print(f"{gbps} Gbit/s, {flows} flows, DelAckCount {delayed_ack_count}: ran {wall_s:.0f} s", file=sys.stderr)

    socket = cppyy.gbl.ns3.DynamicCast[cppyy.gbl.ns3.BulkSendApplication](senders.Get(0)).GetSocket()
    ops = ns.PointerValue()
    socket.GetAttribute("CongestionOps", ops)
    seconds = duration - from_s
    samples = dc.flow_samples
    result = {
        "gbps": gbps,
        "flows": flows,
        "delayed_ack_count": delayed_ack_count,
        "k": k,
        "run_wall_s": round(wall_s, 1),
        "duration_s": duration,
        "from_s": from_s,
        "red_set": red,
        "red_installed": attributes_of(net.discs.Get(0)),
        "tcp_installed": attributes_of(socket),
        "congestion_ops": attributes_of(ops.Get[cppyy.gbl.ns3.TcpCongestionOps]()),
        "utilization": dc.tx_bytes * 8 / (gbps * 1e9 * seconds),
        "packets_sent": int(dc.tx_packets),
        "acks_sent": int(dc.acks),
        "arrivals": int(dc.arrivals),
        "marks": int(dc.marks),
        "drops": int(dc.drops),
        "drops_whole_run": int(dc.drops_all),
        "queue": hist_stats(list(dc.queue_hist)),
        "queue_disc": hist_stats(list(dc.disc_hist)),
        "queue_hist": [int(x) for x in dc.queue_hist],
        "disc_hist": [int(x) for x in dc.disc_hist],
        "bytes_delivered": [int(dc.Delivered(i)) for i in range(flows)],
        "alpha_mean": [dc.alpha_sum[i] / samples for i in range(flows)],
        "marked_fraction_mean": [dc.m_sum[i] / samples for i in range(flows)],
        "cwnd_mean_segments": [dc.cwnd_sum[i] / dc.cwnd_samples / SEGMENT for i in range(flows)],
        "bytes_marked": [int(x) for x in dc.bytes_marked],
        "bytes_acked": [int(x) for x in dc.bytes_acked],
        "windows": [int(x) for x in dc.windows],
        "bad_estimates": int(dc.bad_estimates),
        "cwr_entries": [int(x) for x in dc.cwr],
        "recoveries": [int(x) for x in dc.recoveries],
        "timeouts": [int(x) for x in dc.losses],
        "retransmits": [int(x) for x in dc.retransmits],
        "cwnd_growth_segments": [float(x) for x in dc.growth],
        "cwr_entries_at_cwr_exit": [int(x) for x in dc.cwr_again],
        "cwnd_over_floor_mean": [dc.speedup_sum[i] / dc.cwnd_samples for i in range(flows)],
        "cwnd_min_segments": [x / SEGMENT for x in dc.cwnd_min],
        "cwnd_set_below_2_segments": [int(x) for x in dc.below_two],
        "cwnd_set_below_1_segment": [int(x) for x in dc.below_one],
        "loss_log": [[round(float(dc.loss_times[i]), 6), int(dc.loss_flows[i])] for i in range(dc.loss_times.size())],
        "flow_data_arrivals": [int(x) for x in dc.flow_arrivals],
        "flow_data_marks": [int(x) for x in dc.flow_marks],
        "flow_ce_changes": [int(x) for x in dc.ce_changes],
    }
    ns.Simulator.Destroy()
    return result


def main() -> None:
    if len(sys.argv) == 4:
        print(json.dumps(run_case(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))))
        return
    cases = []
    for gbps in RATES:
        for flows in FLOW_COUNTS:
            for delack in DELAYED_ACK_COUNTS:
                command = ["nice", "-n", "10", sys.executable, __file__, str(gbps), str(flows), str(delack)]
                out = subprocess.run(command, check=True, capture_output=True, text=True, env=os.environ)
                line = [x for x in out.stdout.splitlines() if x.startswith("{")][-1]
                cases.append(json.loads(line))
                print(f"{gbps} Gbit/s, {flows} flows, DelAckCount {delack}: done", file=sys.stderr)
    head = json.dumps({"simulator": "ns-3 3.44", "buffer_packets": BUFFER_PACKETS, "segment": SEGMENT})[:-1]
    body = ",\n".join(json.dumps(case) for case in cases)
    (HERE / "ns3_result.json").write_text(f'{head}, "cases": [\n{body}\n]}}\n')


if __name__ == "__main__":
    main()
