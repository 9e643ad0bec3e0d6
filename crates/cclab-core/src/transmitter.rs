//! The transmitter of a link that dequeues: it pulls packets from the link's
//! discipline when it can send and serialises them at the link's current
//! rate, or sends them in a delivery trace's opportunities.
//!
//! A link of constant rate and delay with a FIFO discipline never gets one:
//! it computes each departure at admission (see `link.rs`). Everything else
//! needs one: a discipline that decides at dequeue (CoDel, FQ-CoDel, PIE), a
//! rate or delay that changes over time, a Mahimahi trace. The transmitter
//! knows nothing of events: the engine asks it when it can next send
//! ([`Transmitter::next_service`]), lets it serve at that time, and places
//! the packets that leave.

use crate::delivery_trace::DeliveryTrace;
use crate::queue::{Admission, DequeueDiscipline, Dequeued, Dropped, QueueOccupancy, Queued};
use crate::schedule::Schedule;
use cclab_wire::{Metrics, Time, NEVER};
use std::sync::Arc;

/// How the transmitter sends.
#[derive(Clone, Debug, PartialEq)]
pub enum Service {
    /// At a rate in bit/s that may change in steps, pausing while it is zero.
    Rate(Schedule),
    /// In the delivery opportunities of a Mahimahi trace.
    Trace(Arc<DeliveryTrace>),
}

impl Service {
    /// Bytes it could send in `[a, b)`.
    pub fn capacity_bytes(&self, a: Time, b: Time) -> f64 {
        match self {
            Service::Rate(s) => s.capacity_bytes(a, b),
            Service::Trace(t) => t.capacity_bytes(a, b),
        }
    }
}

/// A packet that leaves the transmitter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Departure {
    pub packet: Queued,
    /// Its CE bit is to be set (the discipline marked it at dequeue).
    pub marked: bool,
    /// When it left the queue (its transmission started) and when its last bit left.
    pub start: Time,
    pub finish: Time,
    /// When it reaches the far end: `finish` plus the delay then, never
    /// before the packet ahead of it.
    pub arrival: Time,
}

/// A packet whose transmission started in an earlier trace opportunity.
#[derive(Clone, Copy, Debug)]
struct Partial {
    dequeued: Dequeued,
    start: Time,
    bytes_left: u64,
}

pub struct Transmitter {
    queue: Box<dyn DequeueDiscipline>,
    service: Service,
    delay: Schedule,
    /// Rate service: when the transmission in progress ends.
    busy_until: Time,
    /// Trace service: the packet part-way through, and the last opportunity used.
    partial: Option<Partial>,
    served: Option<Time>,
    /// Arrivals keep the order of departures when the delay shrinks.
    last_arrival: Time,
    /// When the transmitter went idle with nothing held, for the next arrival.
    idle_since: Option<Time>,
    /// The sojourn time of the packet that left the queue last.
    pub last_sojourn: Time,
    /// Time of the engine's service event for this link, or `NEVER`.
    pub armed: Time,
    /// Service events made, for their keys (the engine's `Maker`).
    pub made: u64,
}

impl Transmitter {
    pub fn new(queue: Box<dyn DequeueDiscipline>, service: Service, delay: Schedule) -> Self {
        Self {
            queue,
            service,
            delay,
            busy_until: 0,
            partial: None,
            served: None,
            last_arrival: 0,
            idle_since: None,
            last_sojourn: 0,
            armed: NEVER,
            made: 0,
        }
    }

    pub fn service(&self) -> &Service {
        &self.service
    }

    pub fn delay(&self) -> &Schedule {
        &self.delay
    }

    /// Offers `packet` to the discipline at `now` (after serving anything due
    /// at `now`, which the caller does first: departures at an instant go
    /// before arrivals, as on a FIFO link and in Mahimahi).
    pub fn offer(&mut self, now: Time, packet: Queued, dropped: &mut Vec<Dropped>) -> Admission {
        if let Some(since) = self.idle_since.take() {
            if since <= now && self.is_empty() {
                self.queue.idle(since);
            }
        }
        self.queue.enqueue(now, packet, dropped)
    }

    /// Packets held: queued, and one part-way through a trace's opportunities.
    pub fn is_empty(&self) -> bool {
        self.partial.is_none() && self.queue.occupancy().packets == 0
    }

    /// Packets and bytes waiting in the discipline.
    pub fn occupancy(&self) -> QueueOccupancy {
        self.queue.occupancy()
    }

    /// Packets the transmitter holds, waiting or part-way through.
    pub fn held(&self) -> u64 {
        self.queue.occupancy().packets + self.partial.is_some() as u64
    }

    /// When the transmitter can next take a packet, if it holds any; `NEVER` otherwise.
    pub fn next_service(&self, now: Time) -> Time {
        if self.is_empty() {
            return NEVER;
        }
        match &self.service {
            Service::Rate(rate) => rate.next_nonzero(self.busy_until.max(now)),
            Service::Trace(trace) => {
                let after = self.served.map_or(now, |s| s.max(now));
                trace.next_after(after).0
            }
        }
    }

    /// Sends what it can at `now` (a time `next_service` gave, or an arrival
    /// at an idle rate transmitter): one packet for a rate, as many as the
    /// opportunity carries for a trace. Departures go to `out` in order;
    /// what the discipline drops on the way goes to `dropped`.
    pub fn serve(&mut self, now: Time, dropped: &mut Vec<Dropped>, out: &mut Vec<Departure>) {
        match self.service {
            Service::Rate(_) => self.serve_rate(now, dropped, out),
            Service::Trace(_) => self.serve_opportunity(now, dropped, out),
        }
    }

    fn rate(&self) -> &Schedule {
        match &self.service {
            Service::Rate(rate) => rate,
            Service::Trace(_) => unreachable!("asked a trace for its rate"),
        }
    }

    fn serve_rate(&mut self, now: Time, dropped: &mut Vec<Dropped>, out: &mut Vec<Departure>) {
        if self.busy_until > now || self.rate().value_at(now) == 0 {
            return;
        }
        let Some(d) = self.dequeue(now, dropped) else { return };
        let finish = self.rate().finish(now, d.packet.packet.wire_bytes);
        self.busy_until = finish;
        self.depart(d, now, finish, out);
        if self.is_empty() {
            self.idle_since = Some(finish);
        }
    }

    fn serve_opportunity(&mut self, now: Time, dropped: &mut Vec<Dropped>, out: &mut Vec<Departure>) {
        let Service::Trace(trace) = &self.service else { return };
        let (at, mut budget) = trace.next_after(now.saturating_sub(1));
        if at != now || self.served.is_some_and(|s| s >= now) {
            return;
        }
        self.served = Some(now);
        while budget > 0 {
            let mut partial = match self.partial.take() {
                Some(p) => p,
                None => {
                    let Some(dequeued) = self.dequeue(now, dropped) else { break };
                    let bytes_left = dequeued.packet.packet.wire_bytes as u64;
                    Partial { dequeued, start: now, bytes_left }
                }
            };
            let sent = partial.bytes_left.min(budget);
            partial.bytes_left -= sent;
            budget -= sent;
            if partial.bytes_left == 0 {
                self.depart(partial.dequeued, partial.start, now, out);
            } else {
                self.partial = Some(partial);
            }
        }
        if self.is_empty() {
            self.idle_since = Some(now);
        }
    }

    fn dequeue(&mut self, now: Time, dropped: &mut Vec<Dropped>) -> Option<Dequeued> {
        let d = self.queue.dequeue(now, dropped);
        match &d {
            Some(d) => self.last_sojourn = d.packet.sojourn(now),
            None => self.idle_since = Some(now),
        }
        d
    }

    fn depart(&mut self, d: Dequeued, start: Time, finish: Time, out: &mut Vec<Departure>) {
        let arrival = finish.saturating_add(self.delay.value_at(finish)).max(self.last_arrival);
        self.last_arrival = arrival;
        out.push(Departure { packet: d.packet, marked: d.marked, start, finish, arrival });
    }

    pub fn metrics(&self, m: &mut Metrics) {
        self.queue.metrics(m);
    }

    pub fn discipline_name(&self) -> &'static str {
        self.queue.name()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::Seq;
    use crate::pool::PacketRef;
    use crate::queue::{fifo::FifoQueue, BufferLimit, DropTail};
    use cclab_wire::time::{micros, millis};

    fn queued(id: u32, bytes: u32, at: Time) -> Queued {
        let packet = PacketRef { id, dst: 0, wire_bytes: bytes, ect: false };
        Queued { packet, enqueued_at: at, flow: 0, seq: Seq::default() }
    }

    fn fifo() -> Box<dyn DequeueDiscipline> {
        Box::new(FifoQueue::new(Box::new(DropTail::new(BufferLimit::Unlimited))))
    }

    /// Serves every time `next_service` gives until nothing is held.
    fn drain(t: &mut Transmitter, from: Time) -> Vec<Departure> {
        let (mut dropped, mut out) = (Vec::new(), Vec::new());
        let mut now = from;
        while !t.is_empty() {
            now = t.next_service(now);
            assert_ne!(now, NEVER, "a held packet never leaves");
            t.serve(now, &mut dropped, &mut out);
        }
        out
    }

    /// 8 Mbit/s (a byte a microsecond), 1 ms delay: two 1000-byte packets
    /// offered at 0 leave back to back, as on a FIFO link.
    #[test]
    fn a_rate_serialises_back_to_back_then_propagates() {
        let mut t = Transmitter::new(
            fifo(),
            Service::Rate(Schedule::constant(8_000_000)),
            Schedule::constant(millis(1)),
        );
        let mut dropped = Vec::new();
        t.offer(0, queued(1, 1000, 0), &mut dropped);
        t.offer(0, queued(2, 1000, 0), &mut dropped);
        let out = drain(&mut t, 0);
        let times: Vec<(Time, Time, Time)> = out.iter().map(|d| (d.start, d.finish, d.arrival)).collect();
        assert_eq!(times, [(0, micros(1000), micros(2000)), (micros(1000), micros(2000), micros(3000))]);
        assert_eq!(t.last_sojourn, micros(1000));
    }

    /// A trace of one opportunity each millisecond (1504 bytes): 1000-byte
    /// packets share opportunities as Mahimahi's `rationalize` shares them:
    /// the first leaves at 1 ms with 504 bytes over, which start the second;
    /// the second finishes at 2 ms with 1008 bytes over, which start the third
    /// (1000 bytes: it finishes at 2 ms too), and so on.
    #[test]
    fn a_trace_shares_each_opportunity_between_packets_in_turn() {
        let trace = Arc::new(DeliveryTrace::parse("1\n2\n3\n4\n").expect("valid"));
        let mut t = Transmitter::new(fifo(), Service::Trace(trace), Schedule::constant(0));
        let mut dropped = Vec::new();
        for id in 0..6 {
            t.offer(0, queued(id, 1000, 0), &mut dropped);
        }
        let finishes: Vec<Time> = drain(&mut t, 0).iter().map(|d| d.finish).collect();
        // Cumulative bytes 1504 per ms: packets end at bytes 1000, 2000, ..., 6000.
        assert_eq!(finishes, [millis(1), millis(2), millis(2), millis(3), millis(4), millis(4)]);
    }

    /// A packet arriving at an opportunity's instant, once it has been used,
    /// waits for the next one; unused bytes are lost.
    #[test]
    fn a_trace_opportunity_is_only_for_packets_that_came_before_it() {
        let trace = Arc::new(DeliveryTrace::parse("5\n10\n").expect("valid"));
        let mut t = Transmitter::new(fifo(), Service::Trace(trace), Schedule::constant(millis(2)));
        let (mut dropped, mut out) = (Vec::new(), Vec::new());
        t.offer(millis(1), queued(1, 100, millis(1)), &mut dropped);
        assert_eq!(t.next_service(millis(1)), millis(5));
        t.serve(millis(5), &mut dropped, &mut out);
        t.offer(millis(5), queued(2, 100, millis(5)), &mut dropped);
        assert_eq!(t.next_service(millis(5)), millis(10));
        t.serve(millis(10), &mut dropped, &mut out);
        let got: Vec<(u32, Time)> = out.iter().map(|d| (d.packet.packet.id, d.arrival)).collect();
        assert_eq!(got, [(1, millis(7)), (2, millis(12))]);
    }

    /// When the delay shrinks, a later packet does not overtake an earlier one.
    #[test]
    fn arrivals_keep_their_order_when_the_delay_shrinks() {
        let delay = Schedule::steps(vec![(0, millis(10)), (micros(1500), millis(1))]).expect("valid");
        let mut t = Transmitter::new(fifo(), Service::Rate(Schedule::constant(8_000_000)), delay);
        let mut dropped = Vec::new();
        t.offer(0, queued(1, 1000, 0), &mut dropped);
        t.offer(0, queued(2, 1000, 0), &mut dropped);
        let arrivals: Vec<Time> = drain(&mut t, 0).iter().map(|d| d.arrival).collect();
        assert_eq!(arrivals, [millis(11), millis(11)]);
    }

    /// While the rate is zero nothing leaves the queue.
    #[test]
    fn an_off_period_holds_packets_in_the_queue() {
        let rate = Schedule::cycle(&[(millis(1), 8_000_000), (millis(1), 0)]).expect("valid");
        let mut t = Transmitter::new(fifo(), Service::Rate(rate), Schedule::constant(0));
        let mut dropped = Vec::new();
        t.offer(micros(1500), queued(1, 100, micros(1500)), &mut dropped);
        assert_eq!(t.next_service(micros(1500)), millis(2));
        let out = drain(&mut t, micros(1500));
        assert_eq!((out[0].start, out[0].finish), (millis(2), millis(2) + micros(100)));
        assert_eq!(t.last_sojourn, micros(500));
    }
}
