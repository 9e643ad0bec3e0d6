//! The event loop.
//!
//! Events are `(time, seq, target)` in a binary heap; `seq` is a global insertion
//! counter, so ties in time resolve in insertion order and a run is a pure
//! function of its inputs. Targets are links (the packet at the head of a
//! link's delay line arrives at the far end), endpoints (their timer fires) and
//! the engine's own bookkeeping (window start, time-series samples).
//!
//! Endpoint timers are lazy: an endpoint has at most one entry in the heap. When
//! its wanted wake-up moves later (an RTO restarted by every ACK) nothing is
//! pushed; the early entry fires, finds nothing due, and re-arms at the new time.

use crate::endpoint::{Endpoint, EndpointCounters, Outbox};
use crate::link::Enqueued;
use crate::network::Network;
use crate::packet::{EndpointId, LinkId, NodeId, PacketId, PacketPool};
use crate::stats::{FlowSample, LinkSample, MeasurementWindow, TimeSeries};
use crate::time::{Time, NEVER};
use std::cmp::Reverse;
use std::collections::binary_heap::PeekMut;
use std::collections::BinaryHeap;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    WindowStart,
    Sample,
    Link(LinkId),
    Endpoint(EndpointId),
}

/// A heap entry ordered by `(time, seq)` packed into one integer; `seq` is
/// unique, so the target never takes part in the comparison.
#[derive(Clone, Copy, Debug)]
struct Event {
    key: u128,
    target: Target,
}

impl Event {
    fn new(time: Time, seq: u64, target: Target) -> Self {
        Self { key: ((time as u128) << 64) | seq as u128, target }
    }

    fn time(&self) -> Time {
        (self.key >> 64) as Time
    }
}

impl PartialEq for Event {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl Eq for Event {}

impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Event {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key.cmp(&other.key)
    }
}

struct Slot {
    endpoint: Box<dyn Endpoint>,
    node: NodeId,
    peer_node: NodeId,
    peer: EndpointId,
    flow: u32,
    /// Time of this endpoint's entry in the heap, or NEVER.
    armed: Time,
}

/// Totals of one run, for reports and benchmarks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunTotals {
    pub events: u64,
    pub packet_hops: u64,
    pub packets_sent: u64,
    pub packets_received: u64,
    pub unroutable: u64,
}

pub struct Engine {
    now: Time,
    next_seq: u64,
    heap: BinaryHeap<Reverse<Event>>,
    pub net: Network,
    pool: PacketPool,
    slots: Vec<Slot>,
    outbox: Outbox,
    window: MeasurementWindow,
    sample_every: Option<Time>,
    totals: RunTotals,
    counters_at_start: Vec<EndpointCounters>,
    pub series: TimeSeries,
}

impl Engine {
    /// `net` must already have its routes computed.
    pub fn new(net: Network, window: MeasurementWindow, sample_every: Option<Time>) -> Self {
        Self {
            now: 0,
            next_seq: 0,
            heap: BinaryHeap::new(),
            net,
            pool: PacketPool::default(),
            slots: Vec::new(),
            outbox: Outbox::default(),
            window,
            sample_every,
            totals: RunTotals::default(),
            counters_at_start: Vec::new(),
            series: TimeSeries::default(),
        }
    }

    /// Attaches two endpoints that talk to each other: `a` at `a_node`, `b` at `b_node`.
    pub fn connect(
        &mut self,
        flow: u32,
        a: Box<dyn Endpoint>,
        a_node: NodeId,
        b: Box<dyn Endpoint>,
        b_node: NodeId,
    ) -> (EndpointId, EndpointId) {
        let ia = self.slots.len() as EndpointId;
        let ib = ia + 1;
        self.slots.push(Slot { endpoint: a, node: a_node, peer_node: b_node, peer: ib, flow, armed: NEVER });
        self.slots.push(Slot { endpoint: b, node: b_node, peer_node: a_node, peer: ia, flow, armed: NEVER });
        (ia, ib)
    }

    pub fn window(&self) -> MeasurementWindow {
        self.window
    }

    pub fn endpoint(&self, id: EndpointId) -> &dyn Endpoint {
        self.slots[id as usize].endpoint.as_ref()
    }

    pub fn endpoint_mut(&mut self, id: EndpointId) -> &mut dyn Endpoint {
        self.slots[id as usize].endpoint.as_mut()
    }

    /// Counters at the start of the window and now (the end, after `run`).
    pub fn window_counters(&self, id: EndpointId) -> (EndpointCounters, EndpointCounters) {
        let start = self.counters_at_start.get(id as usize).copied().unwrap_or_default();
        (start, self.slots[id as usize].endpoint.counters())
    }

    pub fn totals(&self) -> RunTotals {
        self.totals
    }

    /// Packets inside links (waiting, in transmission or propagating).
    pub fn packets_in_flight(&self) -> u64 {
        self.net.links.iter().map(|l| l.in_flight()).sum()
    }

    fn push(&mut self, time: Time, target: Target) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Reverse(Event::new(time, seq, target)));
    }

    /// Runs until the end of the measurement window.
    pub fn run(&mut self) -> RunTotals {
        self.push(self.window.start, Target::WindowStart);
        if self.sample_every.is_some() {
            self.push(0, Target::Sample);
        }
        for id in 0..self.slots.len() as EndpointId {
            self.rearm(id);
        }
        let end = self.window.end;
        while let Some(&Reverse(event)) = self.heap.peek() {
            let time = event.time();
            if time >= end {
                break;
            }
            let target = event.target;
            self.now = time;
            if !matches!(target, Target::Link(_)) {
                self.heap.pop();
            }
            match target {
                // Leaves the event at the top of the heap for link_arrival to replace.
                Target::Link(l) => self.link_arrival(l),
                Target::Endpoint(e) => self.endpoint_timer(e, time),
                Target::WindowStart => {
                    self.counters_at_start = self.slots.iter().map(|s| s.endpoint.counters()).collect();
                }
                Target::Sample => self.sample(),
            }
            self.totals.events += 1;
        }
        self.now = end;
        if self.counters_at_start.is_empty() {
            self.counters_at_start = self.slots.iter().map(|s| s.endpoint.counters()).collect();
        }
        self.totals
    }

    fn link_arrival(&mut self, l: LinkId) {
        let link = &mut self.net.links[l as usize];
        let Some((packet, survived, next)) = link.pop_arrival(self.now, &self.window) else {
            self.heap.pop();
            return;
        };
        let at = link.spec.to;
        // This link's event is still at the top: replacing it in place is one
        // sift-down instead of a pop and a push.
        match (next, self.heap.peek_mut()) {
            (Some((time, seq)), Some(mut top)) => *top = Reverse(Event::new(time, seq, Target::Link(l))),
            (None, Some(top)) => {
                PeekMut::pop(top);
            }
            (_, None) => {}
        }
        self.totals.packet_hops += 1;
        if survived {
            self.forward(packet, at);
        } else {
            self.pool.release(packet);
        }
    }

    /// Moves a packet that is at node `at` one step on: into its endpoint if it
    /// has arrived, otherwise onto the next link of its route.
    fn forward(&mut self, id: PacketId, at: NodeId) {
        let packet = self.pool.get(id);
        if at == packet.dst {
            self.totals.packets_received += 1;
            let to = packet.to_endpoint;
            self.slots[to as usize].endpoint.on_packet(self.now, packet, &mut self.outbox);
            self.pool.release(id);
            self.flush(to);
            return;
        }
        let Some(l) = self.net.next_link(at, packet.dst) else {
            self.totals.unroutable += 1;
            self.pool.release(id);
            return;
        };
        let seq = self.next_seq;
        self.next_seq += 1;
        match self.net.links[l as usize].enqueue(self.now, packet, id, seq, &self.window) {
            Enqueued::Dropped => self.pool.release(id),
            Enqueued::Admitted(Some((time, seq))) => {
                self.heap.push(Reverse(Event::new(time, seq, Target::Link(l))));
            }
            Enqueued::Admitted(None) => {}
        }
    }

    fn endpoint_timer(&mut self, id: EndpointId, time: Time) {
        let slot = &mut self.slots[id as usize];
        if slot.armed != time {
            return; // superseded by an earlier entry that already fired
        }
        slot.armed = NEVER;
        if slot.endpoint.next_wakeup() <= time {
            slot.endpoint.on_timer(time, &mut self.outbox);
            self.flush(id);
        } else {
            self.rearm(id);
        }
    }

    /// Stamps and routes what endpoint `id` just sent, then re-arms its timer.
    fn flush(&mut self, id: EndpointId) {
        let mut packets = std::mem::take(&mut self.outbox.packets);
        let slot = &self.slots[id as usize];
        let (node, peer_node, peer, flow) = (slot.node, slot.peer_node, slot.peer, slot.flow);
        for mut packet in packets.drain(..) {
            packet.src = node;
            packet.dst = peer_node;
            packet.to_endpoint = peer;
            packet.flow = flow;
            self.totals.packets_sent += 1;
            let id = self.pool.insert(packet);
            self.forward(id, node);
        }
        self.outbox.packets = packets;
        self.rearm(id);
    }

    fn rearm(&mut self, id: EndpointId) {
        let slot = &mut self.slots[id as usize];
        // Time never runs backwards, whatever an endpoint asks for.
        let wake = slot.endpoint.next_wakeup().max(self.now);
        if wake < slot.armed {
            slot.armed = wake;
            self.push(wake, Target::Endpoint(id));
        }
    }

    fn sample(&mut self) {
        let now = self.now;
        for (i, slot) in self.slots.iter().enumerate() {
            if let Some(p) = slot.endpoint.probe() {
                let delivered = self.slots[slot.peer as usize].endpoint.counters().bytes_delivered;
                self.series.flows.push(FlowSample {
                    time: now,
                    endpoint: i as u32,
                    flow: slot.flow,
                    cwnd: p.cwnd,
                    ssthresh: p.ssthresh,
                    srtt: p.srtt,
                    rtt: p.rtt,
                    seq_sent: p.seq_sent,
                    seq_acked: p.seq_acked,
                    in_flight: p.in_flight,
                    bytes_delivered: delivered,
                });
            }
        }
        for (i, link) in self.net.links.iter_mut().enumerate() {
            let occ = link.waiting_at(now);
            self.series.links.push(LinkSample {
                time: now,
                link: i as u32,
                queue_packets: occ.packets,
                queue_bytes: occ.bytes,
            });
        }
        if let Some(every) = self.sample_every {
            self.push(now + every, Target::Sample);
        }
    }
}
