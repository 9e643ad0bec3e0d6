"""ns-3 3.44 side of the AQM cross-check (run by hand, not in CI).

The network of the scenario files beside it (codel-2.toml ... pie-8.toml): N
long-lived bulk flows (N = 2 and 8; TcpNewReno with SACK, timestamps and
classic recovery, not ns-3's default PRR; 1000-byte segments, initial window
4, an ACK per segment, min RTO 1 s) start 0.1 s apart and share a 100 Mbit/s,
10 ms bottleneck with a 40 ms base RTT (1 Gbit/s access links of 5 ms each).
The bottleneck's traffic-control layer (both directions) runs CoDelQueueDisc,
FqCoDelQueueDisc or PieQueueDisc as its root queue disc with every attribute
that decides a drop set (below) and a hard limit of 500 packets; the device
queue under it holds one packet, so the queue builds in the queue disc. Other
links have no queue disc.

From 10 s to 30 s it measures, at the forward bottleneck device: the bytes it
sent and its busy share; each packet's time from its admission to the queue
disc to its dequeue (the queue disc's own sojourn, what the AQM judges) and
to the start of its transmission (what cclab's trace gives), for the packets
that start transmission in the window (packets the AQM drops at the head are
dequeued but never sent, and are left out); drops by the queue disc's reason;
marks; the queue sampled every 10 ms; and per flow the payload delivered and
the TCP recoveries and timeouts (entries into CA_RECOVERY and CA_LOSS) and
retransmissions. Over the whole run it also records every drop (time, flow,
reason), the time and flow of every timeout, and every 10 ms the queue and
each flow's cwnd and congestion state (compare.py reads the growth of cwnd in
congestion avoidance from them).

    python3 -m venv /work/venv-ns3 && /work/venv-ns3/bin/pip install ns3==3.44.post0
    /work/venv-ns3/bin/python crosscheck/aqm/ns3_aqm.py      # writes crosscheck/aqm/ns3_result.json

Each case runs in its own process (`ns3_aqm.py codel 2` prints one case's
JSON line), so no ns-3 state is carried from one to the next.
"""

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DURATION_S = 30.0
FROM_S = 10.0
RTT_MS = 40
BOTTLENECK_RATE = "100Mbps"
BOTTLENECK_BPS = 100e6
BOTTLENECK_DELAY_MS = 10
BUFFER_PACKETS = 500  # 1 BDP: 100 Mbit/s x 40 ms / (1000 bytes x 8)
SEGMENT = 1000
START_GAP_S = 0.1
SAMPLE_S = 0.01
FLOW_COUNTS = (2, 8)
FQ_CODEL_QUANTUM = 1514  # not an attribute: FqCoDelQueueDisc::SetQuantum (else the device MTU, 1500)

# Every attribute of each queue disc that decides a drop or a mark, set
# explicitly (the defaults of ns-3 3.44 except MaxSize, and FqCoDel's UseEcn,
# whose ns-3 default is true), except those whose default Time::Max() turns a
# feature off (CeThreshold; PIE's ActiveThreshold). The result records every
# attribute as the installed queue disc holds it.
DISCS: dict[str, tuple[str, dict[str, str]]] = {
    "codel": (
        "ns3::CoDelQueueDisc",
        {
            "MaxSize": f"{BUFFER_PACKETS}p",
            "Target": "5ms",
            "Interval": "100ms",
            "MinBytes": "1500",
            "UseEcn": "false",
            "UseL4s": "false",
        },
    ),
    "fq_codel": (
        "ns3::FqCoDelQueueDisc",
        {
            "MaxSize": f"{BUFFER_PACKETS}p",
            "Target": "5ms",
            "Interval": "100ms",
            "Flows": "1024",
            "DropBatchSize": "64",
            "Perturbation": "0",
            "UseEcn": "false",
            "UseL4s": "false",
            "EnableSetAssociativeHash": "false",
        },
    ),
    "pie": (
        "ns3::PieQueueDisc",
        {
            "MaxSize": f"{BUFFER_PACKETS}p",
            "QueueDelayReference": "15ms",
            "Tupdate": "15ms",
            "Supdate": "0s",
            "A": "0.125",
            "B": "1.25",
            "MaxBurstAllowance": "150ms",
            "MeanPktSize": "1000",
            "DequeueThreshold": "16384",
            "UseDequeueRateEstimator": "false",
            "UseCapDropAdjustment": "true",
            "UseDerandomization": "false",
            "UseEcn": "false",
            "MarkEcnThreshold": "0.1",
            "UseL4s": "false",
        },
    ),
}

CPP = """
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>
namespace aqmcheck {
using namespace ns3;
Ptr<QueueDisc> qd;
Ptr<Queue<Packet>> devq;
std::vector<Ptr<PacketSink>> sinks;
std::vector<uint64_t> rx_from;
double from = 0, until = 0;
std::unordered_map<uint64_t, int64_t> enq_ns;  // packet uid -> admission to the queue disc
std::unordered_map<uint64_t, int64_t> deq_ns;  // packet uid -> dequeue (not dropped after it)
std::vector<double> sojourn_disc, sojourn_wire;  // seconds, packets that start transmission in the window
std::map<std::string, uint64_t> drops;  // "before: reason" / "after: reason" -> drops in the window
std::map<std::string, uint64_t> drops_warmup;  // the same before the window
std::vector<double> drop_times;  // each drop of the run: when, which flow, why
std::vector<int> drop_flows;
std::vector<std::string> drop_reasons;
uint32_t codel_count = 0;
bool codel_dropping = false;
std::vector<double> codel_counts, codel_droppings, pie_qdelays;  // 10 ms samples
uint64_t marks = 0, arrivals = 0, tx_bytes = 0, tx_packets = 0;
std::vector<double> queue, disc;
std::vector<uint64_t> recoveries, losses, retransmits;
// Over the whole run, every 10 ms: the queue, and each flow's cwnd (segments) and congestion state.
std::vector<double> queue_all;
std::vector<uint32_t> cwnd_now, state_now;
std::vector<std::vector<double>> cwnd_samples;
std::vector<std::vector<int>> state_samples;
std::vector<double> timeout_times;  // every entry into CA_LOSS over the whole run, and its flow
std::vector<int> timeout_flows;

bool InWindow() {
    double t = Simulator::Now().GetSeconds();
    return t >= from && t < until;
}
void Enqueue(Ptr<const QueueDiscItem> item) {
    enq_ns[item->GetPacket()->GetUid()] = Simulator::Now().GetNanoSeconds();
    if (InWindow()) arrivals++;
}
void Dequeue(Ptr<const QueueDiscItem> item) {
    deq_ns[item->GetPacket()->GetUid()] = Simulator::Now().GetNanoSeconds();
}
// The flow of a data packet: its destination port less 5000 (the packet starts with its TCP header).
int FlowOf(Ptr<const QueueDiscItem> item) {
    TcpHeader h;
    item->GetPacket()->PeekHeader(h);
    return static_cast<int>(h.GetDestinationPort()) - 5000;
}
void LogDrop(Ptr<const QueueDiscItem> item, const std::string& reason) {
    drop_times.push_back(Simulator::Now().GetSeconds());
    drop_flows.push_back(FlowOf(item));
    drop_reasons.push_back(reason);
    if (InWindow()) {
        drops[reason]++;
    } else if (Simulator::Now().GetSeconds() < from) {
        drops_warmup[reason]++;
    }
}
void DropBefore(Ptr<const QueueDiscItem> item, const char* reason) {
    if (InWindow()) arrivals++;
    LogDrop(item, std::string("before: ") + reason);
}
void DropAfter(Ptr<const QueueDiscItem> item, const char* reason) {
    uint64_t uid = item->GetPacket()->GetUid();
    enq_ns.erase(uid);
    deq_ns.erase(uid);
    LogDrop(item, std::string("after: ") + reason);
}
void Marked(Ptr<const QueueDiscItem> item, const char* reason) {
    if (InWindow()) marks++;
}
void TxBegin(Ptr<const Packet> p) {
    uint64_t uid = p->GetUid();
    auto e = enq_ns.find(uid);
    auto d = deq_ns.find(uid);
    if (e != enq_ns.end() && d != deq_ns.end() && InWindow()) {
        int64_t now = Simulator::Now().GetNanoSeconds();
        sojourn_disc.push_back((d->second - e->second) * 1e-9);
        sojourn_wire.push_back((now - e->second) * 1e-9);
    }
    if (e != enq_ns.end()) enq_ns.erase(e);
    if (d != deq_ns.end()) deq_ns.erase(d);
}
void TxEnd(Ptr<const Packet> p) {
    if (InWindow()) {
        tx_bytes += p->GetSize();
        tx_packets++;
    }
}
void Sample() {
    queue.push_back(qd->GetNPackets() + devq->GetNPackets());
    disc.push_back(qd->GetNPackets());
    if (DynamicCast<CoDelQueueDisc>(qd)) {
        codel_counts.push_back(codel_count);
        codel_droppings.push_back(codel_dropping ? 1 : 0);
    }
    if (auto pie = DynamicCast<PieQueueDisc>(qd)) pie_qdelays.push_back(pie->GetQueueDelay().GetSeconds());
}
void CodelCount(uint32_t old_value, uint32_t new_value) { codel_count = new_value; }
void CodelDropping(bool old_value, bool new_value) { codel_dropping = new_value; }
void CongState(uint32_t flow, TcpSocketState::TcpCongState_t old_state, TcpSocketState::TcpCongState_t new_state) {
    state_now[flow] = new_state;
    if (old_state == new_state) return;
    if (new_state == TcpSocketState::CA_LOSS) {
        timeout_times.push_back(Simulator::Now().GetSeconds());
        timeout_flows.push_back(flow);
    }
    if (!InWindow()) return;
    if (new_state == TcpSocketState::CA_RECOVERY) recoveries[flow]++;
    if (new_state == TcpSocketState::CA_LOSS) losses[flow]++;
}
void Retransmitted(uint32_t flow, Ptr<const Packet> p, const TcpHeader& h, const Address& a, const Address& b,
                   Ptr<const TcpSocketBase> s) {
    if (InWindow()) retransmits[flow]++;
}
void Cwnd(uint32_t flow, uint32_t old_value, uint32_t new_value) { cwnd_now[flow] = new_value; }
void HookSocket(uint32_t flow, Ptr<Application> app) {
    Ptr<Socket> s = DynamicCast<BulkSendApplication>(app)->GetSocket();
    s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&CongState, flow));
    s->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&Cwnd, flow));
}
void SampleAll(uint32_t segment) {
    queue_all.push_back(qd->GetNPackets() + devq->GetNPackets());
    for (size_t i = 0; i < cwnd_now.size(); i++) {
        cwnd_samples[i].push_back(static_cast<double>(cwnd_now[i]) / segment);
        state_samples[i].push_back(state_now[i]);
    }
}
void MarkStart() {
    for (size_t i = 0; i < sinks.size(); i++) rx_from[i] = sinks[i]->GetTotalRx();
}
uint64_t Delivered(uint32_t i) { return sinks[i]->GetTotalRx() - rx_from[i]; }
size_t Classes() { return qd->GetNQueueDiscClasses(); }
void SetQuantum(Ptr<QueueDisc> q, uint32_t quantum) { DynamicCast<FqCoDelQueueDisc>(q)->SetQuantum(quantum); }
// Nearest rank: the smallest value with at least q of the values at or below it.
double Percentile(std::vector<double>& v, double q) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    size_t rank = static_cast<size_t>(std::ceil(q * v.size()));
    return v[std::max<size_t>(rank, 1) - 1];
}
double Mean(const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0 : s / v.size();
}
double Max(const std::vector<double>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }
void Setup(Ptr<QueueDisc> q, Ptr<NetDevice> dev, ApplicationContainer sink_apps, ApplicationContainer senders,
           std::vector<double> starts, double at, double end, double every, uint32_t segment) {
    qd = q;
    from = at;
    until = end;
    uint32_t n = sink_apps.GetN();
    for (uint32_t i = 0; i < n; i++) sinks.push_back(DynamicCast<PacketSink>(sink_apps.Get(i)));
    rx_from.assign(n, 0);
    recoveries.assign(n, 0);
    losses.assign(n, 0);
    retransmits.assign(n, 0);
    cwnd_now.assign(n, 0);
    state_now.assign(n, 0);
    cwnd_samples.assign(n, {});
    state_samples.assign(n, {});
    auto p2p = DynamicCast<PointToPointNetDevice>(dev);
    devq = p2p->GetQueue();
    q->TraceConnectWithoutContext("Enqueue", MakeCallback(&Enqueue));
    q->TraceConnectWithoutContext("Dequeue", MakeCallback(&Dequeue));
    q->TraceConnectWithoutContext("DropBeforeEnqueue", MakeCallback(&DropBefore));
    q->TraceConnectWithoutContext("DropAfterDequeue", MakeCallback(&DropAfter));
    q->TraceConnectWithoutContext("Mark", MakeCallback(&Marked));
    if (DynamicCast<CoDelQueueDisc>(q)) {
        q->TraceConnectWithoutContext("Count", MakeCallback(&CodelCount));
        q->TraceConnectWithoutContext("DropState", MakeCallback(&CodelDropping));
    }
    p2p->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&TxBegin));
    p2p->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&TxEnd));
    for (uint32_t i = 0; i < senders.GetN(); i++) {
        senders.Get(i)->TraceConnectWithoutContext("TcpRetransmission", MakeBoundCallback(&Retransmitted, i));
        // The socket exists once the application has started.
        Simulator::Schedule(Seconds(starts[i] + 1e-6), &HookSocket, i, senders.Get(i));
    }
    Simulator::Schedule(Seconds(at), &MarkStart);
    for (double t = at; t < end - 1e-9; t += every) Simulator::Schedule(Seconds(t), &Sample);
    for (int k = 0; k * every < end - 1e-9; k++) Simulator::Schedule(Seconds(k * every), &SampleAll, segment);
}
}
"""


def run_case(disc: str, flows: int) -> dict[str, Any]:
    """Runs one discipline with `flows` flows; returns its measurements."""
    import cppyy
    from ns import ns

    sys.path.insert(0, str(HERE.parent))
    from ns3_tcp import address, attributes_of, configure_tcp, packet_sink, point_to_point

    cppyy.cppdef(CPP)
    configure_tcp("ns3::TcpNewReno", SEGMENT)
    type_id, attributes = DISCS[disc]
    for name, value in attributes.items():
        ns.Config.SetDefault(f"{type_id}::{name}", ns.StringValue(value))

    # Nodes: 0 senders, 1 and 2 routers, 3 receivers.
    nodes = ns.NodeContainer()
    nodes.Create(4)
    ns.InternetStackHelper().Install(nodes)
    access_ms = (RTT_MS / 2 - BOTTLENECK_DELAY_MS) / 2
    address(point_to_point(nodes, 0, 1, "1Gbps", access_ms, "100000p"), "10.1.0.0")
    bottleneck = point_to_point(nodes, 1, 2, BOTTLENECK_RATE, BOTTLENECK_DELAY_MS, "1p")
    tch = ns.TrafficControlHelper()
    tch.SetRootQueueDisc(type_id)
    discs = tch.Install(bottleneck)  # before Assign, so it does not install the default queue disc
    address(bottleneck, "10.2.0.0", queue_disc=True)
    far = address(point_to_point(nodes, 2, 3, "1Gbps", access_ms, "100000p"), "10.3.0.0")
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
    ac = cppyy.gbl.aqmcheck
    if disc == "fq_codel":
        for i in range(discs.GetN()):
            ac.SetQuantum(discs.Get(i), FQ_CODEL_QUANTUM)

    sinks = ns.ApplicationContainer()
    senders = ns.ApplicationContainer()
    starts = cppyy.gbl.std.vector["double"]()
    for i in range(flows):
        port = 5000 + i
        sinks.Add(packet_sink(nodes.Get(3), port))
        bulk = ns.BulkSendHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(far.GetAddress(1), port).ConvertTo())
        bulk.SetAttribute("MaxBytes", ns.UintegerValue(0))
        bulk.SetAttribute("SendSize", ns.UintegerValue(SEGMENT))
        app = bulk.Install(nodes.Get(0))
        app.Start(ns.Seconds(i * START_GAP_S))
        senders.Add(app)
        starts.push_back(i * START_GAP_S)
    ac.Setup(discs.Get(0), bottleneck.Get(0), sinks, senders, starts, FROM_S, DURATION_S, SAMPLE_S, SEGMENT)

    ns.Simulator.Stop(ns.Seconds(DURATION_S))
    ns.Simulator.Run()
    installed = attributes_of(discs.Get(0))
    if disc == "fq_codel":
        fq = cppyy.gbl.ns3.DynamicCast["ns3::FqCoDelQueueDisc"](discs.Get(0))
        installed["(quantum, SetQuantum)"] = str(fq.GetQuantum())
    seconds = DURATION_S - FROM_S
    delivered = [int(ac.Delivered(i)) for i in range(flows)]
    result = {
        "disc": disc,
        "flows": flows,
        "type_id": type_id,
        "attributes_set": attributes,
        "attributes_installed": installed,
        "bytes_delivered": delivered,
        "recoveries": [int(x) for x in ac.recoveries],
        "timeouts": [int(x) for x in ac.losses],
        "retransmits": [int(x) for x in ac.retransmits],
        "utilization": ac.tx_bytes * 8 / (BOTTLENECK_BPS * seconds),
        "packets_sent": int(ac.tx_packets),
        "arrivals": int(ac.arrivals),
        "drops": {str(k): int(v) for k, v in ac.drops},
        "drops_before_window": {str(k): int(v) for k, v in ac.drops_warmup},
        "drop_log": [
            [round(float(ac.drop_times[i]), 6), int(ac.drop_flows[i]), str(ac.drop_reasons[i])]
            for i in range(ac.drop_times.size())
        ],
        "marks": int(ac.marks),
        "sojourn_packets": int(ac.sojourn_wire.size()),
        "sojourn_wire_mean_s": ac.Mean(ac.sojourn_wire),
        "sojourn_wire_p99_s": ac.Percentile(ac.sojourn_wire, 0.99),
        "sojourn_wire_max_s": ac.Max(ac.sojourn_wire),
        "sojourn_disc_mean_s": ac.Mean(ac.sojourn_disc),
        "sojourn_disc_p99_s": ac.Percentile(ac.sojourn_disc, 0.99),
        "queue_mean_pkts": ac.Mean(ac.queue),
        "queue_max_pkts": ac.Max(ac.queue),
        "queue_disc_mean_pkts": ac.Mean(ac.disc),
        "queue_disc_classes": int(ac.Classes()),
        "codel_count_mean": ac.Mean(ac.codel_counts),
        "codel_count_max": ac.Max(ac.codel_counts),
        "codel_dropping_share": ac.Mean(ac.codel_droppings),
        "pie_qdelay_mean_s": ac.Mean(ac.pie_qdelays),
        "timeout_log": [
            [round(float(ac.timeout_times[i]), 6), int(ac.timeout_flows[i])] for i in range(ac.timeout_times.size())
        ],
        "queue_10ms": [float(x) for x in ac.queue_all],
        "cwnd_10ms": [[round(float(x), 3) for x in ac.cwnd_samples[i]] for i in range(flows)],
        "state_10ms": [[int(x) for x in ac.state_samples[i]] for i in range(flows)],
    }
    ns.Simulator.Destroy()
    return result


def main() -> None:
    if len(sys.argv) == 3:
        print(json.dumps(run_case(sys.argv[1], int(sys.argv[2]))))
        return
    cases = []
    for disc in DISCS:
        for flows in FLOW_COUNTS:
            out = subprocess.run(
                [sys.executable, __file__, disc, str(flows)], check=True, capture_output=True, text=True
            )
            line = [x for x in out.stdout.splitlines() if x.startswith("{")][-1]
            cases.append(json.loads(line))
            print(f"{disc} {flows}: done", file=sys.stderr)
    result = {
        "simulator": "ns-3 3.44",
        "duration_s": DURATION_S,
        "from_s": FROM_S,
        "buffer_packets": BUFFER_PACKETS,
        "cases": cases,
    }
    # One line per case: the 10 ms series make a case long.
    head = json.dumps({k: v for k, v in result.items() if k != "cases"})[:-1]
    body = ",\n".join(json.dumps(case) for case in cases)
    (HERE / "ns3_result.json").write_text(f'{head}, "cases": [\n{body}\n]}}\n')


if __name__ == "__main__":
    main()
