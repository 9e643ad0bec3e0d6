//! Packet traces: an opt-in record of what happened to selected packets at
//! the links and endpoints they passed (enqueue, departure, drop with its
//! cause, delivery), for the trace table and the pcap files built from it
//! (cclab-sim `trace` and `pcap` modules).
//!
//! The engine holds a tracer as `Option<Box<Tracer>>` and tests it only at the
//! few places a packet changes hands, so a run without traces pays one
//! predictable branch there and nothing else. A record copies the packet (a
//! plain value of at most 160 bytes): the trace then shows each header as it
//! was at that moment, whatever the endpoints do with their state afterwards.

use cclab_wire::{FlowId, LinkId, NodeId, Packet, Time};

/// Why a packet was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropCause {
    /// The link's queue discipline refused it: the buffer was full.
    BufferFull,
    /// An active queue management rule (RED) refused it while the buffer had room.
    EarlyDrop,
    /// The link's Bernoulli loss process destroyed it in transit.
    RandomLoss,
    /// It reached a connection that was already reclaimed.
    Orphan,
}

impl DropCause {
    pub fn as_str(self) -> &'static str {
        match self {
            DropCause::BufferFull => "buffer_full",
            DropCause::EarlyDrop => "early_drop",
            DropCause::RandomLoss => "random_loss",
            DropCause::Orphan => "orphan",
        }
    }
}

/// What happened to a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceEvent {
    /// Admitted to a link's queue (at the link's entrance).
    Enqueue,
    /// Its last bit left the link's transmitter.
    Depart,
    Drop(DropCause),
    /// Handed to its endpoint at the destination node.
    Deliver,
}

impl TraceEvent {
    pub fn as_str(self) -> &'static str {
        match self {
            TraceEvent::Enqueue => "enqueue",
            TraceEvent::Depart => "depart",
            TraceEvent::Drop(_) => "drop",
            TraceEvent::Deliver => "deliver",
        }
    }

    pub fn cause(self) -> Option<DropCause> {
        match self {
            TraceEvent::Drop(c) => Some(c),
            _ => None,
        }
    }
}

/// One event of one traced packet.
#[derive(Clone, Copy, Debug)]
pub struct TraceRecord {
    pub time: Time,
    pub event: TraceEvent,
    /// The link it happened at; `None` for events at an endpoint (delivery, orphan).
    pub link: Option<LinkId>,
    /// The node it happened at: the link's sending end, or the destination.
    pub node: NodeId,
    /// Which `[[trace]]` entry selected it.
    pub trace: u32,
    pub packet: Packet,
    /// The packet's source and destination nodes.
    pub src: NodeId,
    pub dst: NodeId,
}

/// What one `[[trace]]` entry selects: packets of `flows` (every flow if
/// empty) at `links` (every link and endpoint if empty), in `[from, to)`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceFilter {
    /// Sorted flow ids.
    pub flows: Vec<FlowId>,
    /// Sorted link ids.
    pub links: Vec<LinkId>,
    pub from: Time,
    pub to: Time,
}

impl TraceFilter {
    fn matches(&self, time: Time, link: Option<LinkId>, flow: FlowId) -> bool {
        if time < self.from || time >= self.to {
            return false;
        }
        if !self.flows.is_empty() && self.flows.binary_search(&flow).is_err() {
            return false;
        }
        match link {
            _ if self.links.is_empty() => true,
            Some(l) => self.links.binary_search(&l).is_ok(),
            // A link trace watches links only: it has no endpoint events.
            None => false,
        }
    }
}

/// Collects the records of every `[[trace]]` entry of a run.
#[derive(Clone, Debug, Default)]
pub struct Tracer {
    filters: Vec<TraceFilter>,
    pub records: Vec<TraceRecord>,
}

impl Tracer {
    pub fn new(mut filters: Vec<TraceFilter>) -> Self {
        for f in &mut filters {
            f.flows.sort_unstable();
            f.flows.dedup();
            f.links.sort_unstable();
            f.links.dedup();
        }
        Self { filters, records: Vec::new() }
    }

    /// Records `event` for every entry that selects it. Cold and out of line:
    /// the engine's packet path then keeps the code (and registers) of a run
    /// without traces, plus a test of the tracer's presence.
    #[cold]
    #[inline(never)]
    pub fn record(
        &mut self,
        time: Time,
        event: TraceEvent,
        link: Option<LinkId>,
        node: NodeId,
        packet: &Packet,
        (src, dst): (NodeId, NodeId),
    ) {
        for (i, f) in self.filters.iter().enumerate() {
            if f.matches(time, link, packet.flow) {
                let trace = i as u32;
                self.records.push(TraceRecord { time, event, link, node, trace, packet: *packet, src, dst });
            }
        }
    }

    /// The records in time order, as indices into `records`. Departures are
    /// recorded when the packet reaches the far end (that is when the engine
    /// looks at it again), so `records` is out of order. The sort is stable,
    /// so events at the same time keep the order in which the engine
    /// processed them; it moves 4-byte indices, not 184-byte records (sorting
    /// the records in place was four times slower than the whole run).
    pub fn time_order(&self) -> Vec<u32> {
        let mut order: Vec<u32> = (0..self.records.len() as u32).collect();
        order.sort_by_key(|&i| self.records[i as usize].time);
        order
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_wire::{Header, UdpHeader};

    fn packet(flow: FlowId) -> Packet {
        let mut p = Packet::new(Header::Udp(UdpHeader { seq: 0, sent_at: 0, payload: 100 }), 128);
        p.flow = flow;
        p
    }

    #[test]
    fn a_filter_selects_by_flow_link_and_time() {
        let f = TraceFilter { flows: vec![2], links: vec![], from: 10, to: 20 };
        assert!(f.matches(10, Some(0), 2));
        assert!(f.matches(19, None, 2));
        assert!(!f.matches(20, Some(0), 2));
        assert!(!f.matches(15, Some(0), 3));
        let l = TraceFilter { flows: vec![], links: vec![4], from: 0, to: 100 };
        assert!(l.matches(5, Some(4), 9));
        assert!(!l.matches(5, Some(3), 9));
        assert!(!l.matches(5, None, 9));
    }

    #[test]
    fn records_come_out_in_time_order_and_per_entry() {
        let all = TraceFilter { flows: vec![], links: vec![], from: 0, to: 100 };
        let mut t = Tracer::new(vec![all.clone(), all]);
        t.record(30, TraceEvent::Deliver, None, 1, &packet(0), (0, 1));
        t.record(10, TraceEvent::Depart, Some(0), 0, &packet(0), (0, 1));
        let order = t.time_order();
        assert_eq!(
            order
                .iter()
                .map(|&i| (t.records[i as usize].time, t.records[i as usize].trace))
                .collect::<Vec<_>>(),
            [(10, 0), (10, 1), (30, 0), (30, 1)]
        );
    }
}
