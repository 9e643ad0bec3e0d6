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
use crate::schedule::{Cursor, Schedule};
use cclab_wire::time::serialization_time;
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

/// The sending side: a rate (its schedule read through a cursor, and the
/// last two packet sizes' serialisation times at the current rate, as on the
/// fast path) or a trace (the opportunity in use and its bytes left).
enum Sender {
    Rate { rate: Cursor, busy_until: Time, last_serialization: [(u32, Time); 2], cached_rate: u64 },
    Trace { trace: Arc<DeliveryTrace>, opportunity: Option<Time>, budget: u64, partial: Option<Partial> },
}

pub struct Transmitter {
    queue: Box<dyn DequeueDiscipline>,
    service: Service,
    sender: Sender,
    delay: Cursor,
    /// Packets and bytes the discipline holds (counted here: asking it is a virtual call).
    held: QueueOccupancy,
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
        let sender = match &service {
            Service::Rate(rate) => Sender::Rate {
                rate: Cursor::new(rate.clone()),
                busy_until: 0,
                last_serialization: [(0, 0); 2],
                cached_rate: 0,
            },
            Service::Trace(trace) => {
                Sender::Trace { trace: trace.clone(), opportunity: None, budget: 0, partial: None }
            }
        };
        Self {
            queue,
            service,
            sender,
            delay: Cursor::new(delay),
            held: QueueOccupancy::default(),
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
        self.delay.schedule()
    }

    /// Offers `packet` to the discipline at `now` (after serving anything due
    /// at `now`, which the caller does first: departures at an instant go
    /// before arrivals, as on a FIFO link and in Mahimahi).
    #[inline(always)]
    pub fn offer(&mut self, now: Time, packet: Queued, dropped: &mut Vec<Dropped>) -> Admission {
        if let Some(since) = self.idle_since.take() {
            if since <= now && self.is_empty() {
                self.queue.idle(since);
            }
        }
        let before = dropped.len();
        let admission = self.queue.enqueue(now, packet, dropped);
        if matches!(admission, Admission::Enqueue | Admission::EnqueueMarked) {
            self.held.packets += 1;
            self.held.bytes += packet.packet.wire_bytes as u64;
        }
        self.forget(&dropped[before..]);
        admission
    }

    /// Packets the discipline no longer holds (dropped, or sent).
    #[inline]
    fn forget(&mut self, gone: &[Dropped]) {
        for d in gone {
            self.held.packets -= 1;
            self.held.bytes -= d.packet.packet.wire_bytes as u64;
        }
        debug_assert_eq!(self.held, self.queue.occupancy());
    }

    /// Whether it holds nothing: none queued, none part-way through.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.held.packets == 0 && !matches!(self.sender, Sender::Trace { partial: Some(_), .. })
    }

    /// Packets and bytes waiting in the discipline.
    #[inline]
    pub fn occupancy(&self) -> QueueOccupancy {
        self.held
    }

    /// Packets the transmitter holds, waiting or part-way through.
    pub fn held(&self) -> u64 {
        self.held.packets + matches!(self.sender, Sender::Trace { partial: Some(_), .. }) as u64
    }

    /// When the transmitter can next take a packet, if it holds any; `NEVER` otherwise.
    #[inline]
    pub fn next_service(&mut self, now: Time) -> Time {
        if self.is_empty() {
            return NEVER;
        }
        match &self.sender {
            Sender::Rate { rate, busy_until, .. } => {
                let t = (*busy_until).max(now);
                if rate.nonzero_in_current_step(t) {
                    t
                } else {
                    self.next_service_elsewhere(t)
                }
            }
            Sender::Trace { .. } => self.next_service_elsewhere(now),
        }
    }

    /// [`Transmitter::next_service`] outside the rate's current step, or of a trace.
    #[inline(never)]
    fn next_service_elsewhere(&mut self, t: Time) -> Time {
        match &mut self.sender {
            Sender::Rate { rate, .. } => {
                if rate.value_at(t) > 0 {
                    t
                } else {
                    rate.schedule().next_nonzero(t)
                }
            }
            // Strictly after the last opportunity used, and after `t`: an
            // arrival at an opportunity's instant comes after it was used.
            Sender::Trace { trace, opportunity, .. } => trace.next_after(opportunity.unwrap_or(0).max(t)).0,
        }
    }

    /// Whether several packets may leave at one instant (a trace's
    /// opportunity); a rate sends one and is then busy.
    #[inline]
    pub fn sends_several(&self) -> bool {
        matches!(self.sender, Sender::Trace { .. })
    }

    /// The next packet to leave at `now` (a time `next_service` gave, or an
    /// arrival at an idle rate transmitter), if one can: a rate sends one and
    /// is then busy; a trace's opportunity sends packets until its bytes run
    /// out. What the discipline drops on the way goes to `dropped`.
    #[inline(always)]
    pub fn serve(&mut self, now: Time, dropped: &mut Vec<Dropped>) -> Option<Departure> {
        match self.sender {
            Sender::Rate { .. } => self.serve_rate(now, dropped),
            Sender::Trace { .. } => self.serve_opportunity(now, dropped),
        }
    }

    fn serve_rate(&mut self, now: Time, dropped: &mut Vec<Dropped>) -> Option<Departure> {
        let Sender::Rate { rate, busy_until, .. } = &mut self.sender else { return None };
        if *busy_until > now || (!rate.nonzero_in_current_step(now) && rate.value_at(now) == 0) {
            return None;
        }
        let d = self.dequeue(now, dropped)?;
        let finish = self.finish(now, d.packet.packet.wire_bytes);
        if let Sender::Rate { busy_until, .. } = &mut self.sender {
            *busy_until = finish;
        }
        if self.is_empty() {
            self.idle_since = Some(finish);
        }
        Some(self.depart(d, now, finish))
    }

    /// When the last bit of `bytes` starting at `now` leaves: within the
    /// rate's current step as on a constant link (with the same cache of two
    /// sizes), across steps by integrating the schedule.
    fn finish(&mut self, now: Time, bytes: u32) -> Time {
        let Sender::Rate { rate, last_serialization, cached_rate, .. } = &mut self.sender else { return now };
        let step = rate.step_at(now);
        if *cached_rate != step.value {
            // The rate changed: the sizes' times are those of the old rate.
            *last_serialization = [(0, 0); 2];
            *cached_rate = step.value;
        }
        let [newest, older] = *last_serialization;
        let serialization = if newest.0 == bytes {
            newest.1
        } else if older.0 == bytes {
            *last_serialization = [older, newest];
            older.1
        } else {
            let t = serialization_time(bytes, step.value);
            *last_serialization = [(bytes, t), newest];
            t
        };
        let finish = now + serialization;
        if finish <= step.until {
            return finish;
        }
        rate.schedule().finish(now, bytes)
    }

    fn serve_opportunity(&mut self, now: Time, dropped: &mut Vec<Dropped>) -> Option<Departure> {
        let Sender::Trace { trace, opportunity, budget, .. } = &mut self.sender else { return None };
        if *opportunity != Some(now) {
            // A new opportunity, if there is one now and it was not used yet.
            let (at, bytes) = trace.next_after(now.saturating_sub(1));
            if at != now || opportunity.is_some_and(|o| o >= now) {
                return None;
            }
            *opportunity = Some(now);
            *budget = bytes;
        }
        loop {
            let Sender::Trace { budget, partial, .. } = &mut self.sender else { return None };
            if *budget == 0 {
                return None;
            }
            let mut p = match partial.take() {
                Some(p) => p,
                None => {
                    let Some(dequeued) = self.dequeue(now, dropped) else {
                        // Bytes nobody uses are lost, even to a packet arriving at this instant.
                        if let Sender::Trace { budget, .. } = &mut self.sender {
                            *budget = 0;
                        }
                        return None;
                    };
                    let bytes_left = dequeued.packet.packet.wire_bytes as u64;
                    Partial { dequeued, start: now, bytes_left }
                }
            };
            let Sender::Trace { budget, partial, .. } = &mut self.sender else { return None };
            let sent = p.bytes_left.min(*budget);
            p.bytes_left -= sent;
            *budget -= sent;
            if p.bytes_left > 0 {
                *partial = Some(p);
                continue;
            }
            if self.is_empty() {
                self.idle_since = Some(now);
            }
            return Some(self.depart(p.dequeued, p.start, now));
        }
    }

    fn dequeue(&mut self, now: Time, dropped: &mut Vec<Dropped>) -> Option<Dequeued> {
        let before = dropped.len();
        let d = self.queue.dequeue(now, dropped);
        if let Some(d) = &d {
            self.held.packets -= 1;
            self.held.bytes -= d.packet.packet.wire_bytes as u64;
        }
        self.forget(&dropped[before..]);
        match &d {
            Some(d) => self.last_sojourn = d.packet.sojourn(now),
            None => self.idle_since = Some(now),
        }
        d
    }

    fn depart(&mut self, d: Dequeued, start: Time, finish: Time) -> Departure {
        let arrival = finish.saturating_add(self.delay.value_at(finish)).max(self.last_arrival);
        self.last_arrival = arrival;
        Departure { packet: d.packet, marked: d.marked, start, finish, arrival }
    }

    pub fn metrics(&self, m: &mut Metrics) {
        self.queue.metrics(m);
    }

    /// The backlog of the queue `flow`'s packets join, if the discipline keeps flows apart.
    pub fn flow_backlog(&self, flow: u64) -> Option<QueueOccupancy> {
        self.queue.flow_backlog(flow)
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
        let packet = PacketRef { id, dst: 0, wire_bytes: bytes, ect: cclab_wire::Ect::NotEct };
        Queued { packet, enqueued_at: at, flow: 0, seq: Seq::default() }
    }

    fn fifo() -> Box<dyn DequeueDiscipline> {
        Box::new(FifoQueue::new(Box::new(DropTail::new(BufferLimit::Unlimited))))
    }

    /// Everything that leaves at `now`.
    fn serve_all(t: &mut Transmitter, now: Time, out: &mut Vec<Departure>) {
        let mut dropped = Vec::new();
        while let Some(d) = t.serve(now, &mut dropped) {
            out.push(d);
        }
    }

    /// Serves every time `next_service` gives until nothing is held.
    fn drain(t: &mut Transmitter, from: Time) -> Vec<Departure> {
        let mut out = Vec::new();
        let mut now = from;
        while !t.is_empty() {
            now = t.next_service(now);
            assert_ne!(now, NEVER, "a held packet never leaves");
            serve_all(t, now, &mut out);
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
        serve_all(&mut t, millis(5), &mut out);
        t.offer(millis(5), queued(2, 100, millis(5)), &mut dropped);
        assert_eq!(t.next_service(millis(5)), millis(10));
        serve_all(&mut t, millis(10), &mut out);
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
