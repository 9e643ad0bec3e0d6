//! A one-way link: a queue, a transmitter, a propagation delay and an
//! optional loss process.
//!
//! Two shapes (docs/architecture.md, "Links that dequeue"):
//!
//! - **The fast path**: a FIFO discipline (DropTail, RED, CW) on a link of
//!   constant rate and delay. The link is work-conserving, so a packet's
//!   departure time is known the moment it is admitted; the link keeps its
//!   packets in a delay line ordered by arrival time at the far end, and only
//!   the head of that line is an event in the engine's queue: one event per
//!   packet hop, and an event queue whose size is the number of links, not the
//!   number of packets. (A packet whose next link this one alone feeds skips
//!   even that event: the engine offers it to the next link at admission, see
//!   `Engine::forward`.)
//! - **A link that dequeues**: anything else (a discipline that decides at
//!   dequeue, a rate or delay that changes, a delivery trace). A
//!   [`Transmitter`] pulls from the discipline when it can send; a packet's
//!   departure is known only then, and it joins the same delay line.

use crate::delivery_trace::DeliveryTrace;
use crate::events::Seq;
use crate::loss::{LossModel, LossProcess};
use crate::pool::PacketRef;
use crate::queue::{
    droptail, fifo::FifoQueue, Admission, BufferLimit, Discipline, Dropped, QueueDiscipline, QueueOccupancy,
    Queued,
};
use crate::ring::Ring;
use crate::schedule::Schedule;
use crate::stats::{Departures, LinkStats, MeasurementWindow};
use crate::trace::DropCause;
use crate::transmitter::{Departure, Service, Transmitter};
use cclab_wire::time::{serialization_time, Time};
use cclab_wire::{Metrics, Packet};
use serde::Serialize;
use std::sync::Arc;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkSpec {
    pub name: String,
    pub from: u32,
    pub to: u32,
    /// The rate; for a link whose rate varies, its nominal rate (what a
    /// BDP-sized buffer and the memory estimate are computed from).
    pub rate_bps: u64,
    /// One-way propagation delay (at time 0, if it varies).
    pub delay: Time,
    pub buffer: BufferLimit,
    /// How transmitted packets are lost (corrupted) on this link.
    pub loss: LossModel,
    /// How the rate and delay change over time; `None` if they do not.
    /// Boxed: 72 bytes inline on every link, read only when it is built,
    /// and at 20 000 flows there are 80 000 links of constant rate and delay.
    #[serde(skip)]
    pub variation: Option<Box<Variation>>,
}

/// A link's rate and delay over time: constant unless given here.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Variation {
    /// The rate in bit/s over time (instead of `rate_bps`).
    pub rate: Option<Schedule>,
    /// A Mahimahi delivery trace (instead of any rate).
    pub trace: Option<Arc<DeliveryTrace>>,
    /// The propagation delay over time (instead of `delay`).
    pub delay: Option<Schedule>,
}

impl Variation {
    pub fn is_constant(&self) -> bool {
        self.rate.is_none() && self.trace.is_none() && self.delay.is_none()
    }

    /// What [`LinkSpec::variation`] holds: nothing for a constant link.
    pub fn boxed(self) -> Option<Box<Variation>> {
        (!self.is_constant()).then(|| Box::new(self))
    }
}

/// A packet inside the link: its slot in the engine's [`crate::pool::PacketPool`]
/// with the fields the next hop reads.
#[derive(Clone, Copy, Debug)]
struct InFlight {
    arrival: Time,
    seq: Seq,
    packet: PacketRef,
}

/// What became of a packet offered by [`Link::enqueue`].
#[cfg(test)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enqueued {
    /// Refused by the queue discipline (buffer full, or an early drop); the
    /// caller frees the packet.
    Dropped(DropCause),
    /// Admitted; `head` is the new head key when the delay line was empty (the
    /// caller must schedule it); `marked`: the caller sets the packet's CE bit.
    Admitted { head: Option<HeadKey>, marked: bool },
}

pub struct Link {
    pub spec: LinkSpec,
    rule: Rule,
    busy_until: Time,
    /// Every admitted packet not yet at the far end, in arrival order.
    delay_line: Ring<InFlight>,
    /// Start of transmission and size of each packet still waiting for the transmitter.
    waiting: Ring<(Time, u32)>,
    waiting_bytes: u64,
    /// Boxed: the generator's state and buffer (about 300 bytes) are read
    /// only by lossy links, and inline they doubled the size of every link,
    /// so the fields each hop touches spread over more cache lines.
    loss: Option<Box<LossProcess>>,
    /// The last two packet sizes and their serialisation times: most packets
    /// of a link have one of a few sizes (a bottleneck carries one direction's
    /// data and the other's ACKs, interleaved), and this saves a 64-bit
    /// division per hop.
    last_serialization: [(u32, Time); 2],
    pub stats: LinkStats,
    /// Departures, counted only when an observation reads them: counting on
    /// every link cost 3.4 % of bench-p1's instructions (reading the packet's
    /// kind in the pool, about eleven per hop).
    departures: Option<Box<Departures>>,
    /// The transmitter of a link that dequeues; `None` on the fast path.
    /// Boxed: the fast path reads only whether it is there.
    transmitter: Option<Box<Pulled>>,
}

/// What a link that dequeues keeps beside its transmitter.
struct Pulled {
    transmitter: Transmitter,
    /// Time up to which the window's queue integrals are counted (they
    /// change only when the occupancy does).
    integrated_to: Time,
}

/// The fast path's admission rule. Tail drop, the common case, is decided
/// inline (no virtual call per arrival); any other goes through the trait.
enum Rule {
    TailDrop(BufferLimit),
    Other(Box<dyn QueueDiscipline>),
}

impl Rule {
    fn new(discipline: Box<dyn QueueDiscipline>) -> Self {
        match discipline.tail_drop_limit() {
            Some(limit) => Rule::TailDrop(limit),
            None => Rule::Other(discipline),
        }
    }

    /// `busy_until` is read only by the disciplines that go through the trait.
    #[inline]
    fn admit(
        &mut self,
        now: Time,
        waiting: QueueOccupancy,
        busy_until: Time,
        packet: &PacketRef,
    ) -> Admission {
        match self {
            Rule::TailDrop(limit) => {
                if droptail::fits(*limit, waiting, packet.wire_bytes) {
                    Admission::Enqueue
                } else {
                    Admission::Drop
                }
            }
            Rule::Other(d) => d.admit(now, waiting, (busy_until <= now).then_some(busy_until), packet),
        }
    }
}

/// The event key `(arrival, seq)` of the packet at the head of a link's delay line.
pub type HeadKey = (Time, Seq);

impl Link {
    pub fn new(spec: LinkSpec, discipline: Discipline, loss: Option<LossProcess>) -> Self {
        let mut link = Self {
            spec,
            rule: Rule::TailDrop(BufferLimit::Unlimited),
            busy_until: 0,
            delay_line: Ring::new(),
            waiting: Ring::new(),
            waiting_bytes: 0,
            loss: loss.map(Box::new),
            last_serialization: [(0, 0); 2],
            stats: LinkStats::default(),
            departures: None,
            transmitter: None,
        };
        link.set_discipline(discipline);
        link
    }

    /// Replaces the buffer limit and queue discipline (before the run starts).
    pub fn set_queue(&mut self, buffer: BufferLimit, discipline: Discipline) {
        self.spec.buffer = buffer;
        self.set_discipline(discipline);
    }

    /// A FIFO discipline on a link of constant rate and delay takes the fast
    /// path; anything else gets a transmitter that pulls from it.
    fn set_discipline(&mut self, discipline: Discipline) {
        let queue = match discipline {
            Discipline::Fifo(rule) if self.spec.variation.is_none() => {
                self.rule = Rule::new(rule);
                self.transmitter = None;
                return;
            }
            Discipline::Fifo(rule) => Box::new(FifoQueue::new(rule)) as Box<_>,
            Discipline::Dequeue(queue) => queue,
        };
        let constant = Variation::default();
        let v = self.spec.variation.as_deref().unwrap_or(&constant);
        let service = match (&v.trace, &v.rate) {
            (Some(trace), _) => Service::Trace(trace.clone()),
            (None, Some(rate)) => Service::Rate(rate.clone()),
            (None, None) => Service::Rate(Schedule::constant(self.spec.rate_bps)),
        };
        let delay = v.delay.clone().unwrap_or_else(|| Schedule::constant(self.spec.delay));
        let transmitter = Transmitter::new(queue, service, delay);
        self.transmitter = Some(Box::new(Pulled { transmitter, integrated_to: 0 }));
    }

    /// Whether this link dequeues (has a transmitter) rather than computing
    /// departures at admission.
    #[inline(always)]
    pub fn dequeues(&self) -> bool {
        self.transmitter.is_some()
    }

    /// Drops packets that have started transmission by `now` from the waiting set.
    fn advance(&mut self, now: Time) {
        while let Some(&(start, bytes)) = self.waiting.front() {
            if start > now {
                break;
            }
            self.waiting.pop_front();
            self.waiting_bytes -= bytes as u64;
        }
    }

    /// Packets and bytes waiting behind the transmitter at `now`.
    pub fn waiting_at(&mut self, now: Time) -> QueueOccupancy {
        if let Some(p) = &self.transmitter {
            return p.transmitter.occupancy();
        }
        self.advance(now);
        QueueOccupancy { packets: self.waiting.len() as u64, bytes: self.waiting_bytes }
    }

    /// Offers `packet` at `now` and puts it into the delay line if admitted;
    /// `id` is its event's id (see [`Seq`]). (The engine calls the two halves
    /// itself, since it may pass the packet through instead.)
    #[cfg(test)]
    pub fn enqueue(&mut self, now: Time, packet: PacketRef, id: u64, window: &MeasurementWindow) -> Enqueued {
        let seq = Seq { made_at: now, id };
        match self.admit(now, &packet, window) {
            Err(cause) => Enqueued::Dropped(cause),
            Ok((arrival, marked)) => {
                Enqueued::Admitted { head: self.push_admitted(arrival, seq, packet), marked }
            }
        }
    }

    /// Puts an admitted packet into the delay line; returns the new head key if the line was empty.
    #[inline]
    pub fn push_admitted(&mut self, arrival: Time, seq: Seq, packet: PacketRef) -> Option<HeadKey> {
        let was_empty = self.delay_line.is_empty();
        self.delay_line.push_back(InFlight { arrival, seq, packet });
        was_empty.then_some((arrival, seq))
    }

    /// Offers `packet` at `now`: its arrival time at the far end and whether it
    /// is marked, or why it was refused. The caller puts it into the delay line
    /// ([`Link::push_admitted`]) or passes it through ([`Link::pass_through`]).
    /// Always inlined: a packet is admitted up to twice per event, and the call
    /// itself cost 2 % of the instructions of the Table 2 scenario.
    #[inline(always)]
    pub fn admit(
        &mut self,
        now: Time,
        packet: &PacketRef,
        window: &MeasurementWindow,
    ) -> Result<(Time, bool), DropCause> {
        let in_window = window.contains(now);
        self.stats.arrivals += 1;
        if in_window {
            self.stats.window_arrivals += 1;
        }
        let occupancy = self.waiting_at(now);
        let marked = match self.rule.admit(now, occupancy, self.busy_until, packet) {
            Admission::Enqueue => false,
            Admission::EnqueueMarked => {
                self.stats.count_mark(in_window);
                true
            }
            Admission::Drop => {
                self.stats.count_drop(in_window);
                return Err(DropCause::BufferFull);
            }
            Admission::EarlyDrop => {
                self.stats.count_drop(in_window);
                self.stats.count_early_drop(in_window);
                return Err(DropCause::EarlyDrop);
            }
        };

        let bytes = packet.wire_bytes;
        let start = self.busy_until.max(now);
        let [newest, older] = self.last_serialization;
        let serialization = if newest.0 == bytes {
            newest.1
        } else if older.0 == bytes {
            self.last_serialization = [older, newest];
            older.1
        } else {
            let t = serialization_time(bytes, self.spec.rate_bps);
            self.last_serialization = [(bytes, t), newest];
            t
        };
        let finish = start + serialization;
        self.busy_until = finish;
        let arrival = finish + self.spec.delay;

        if start > now {
            self.waiting.push_back((start, bytes));
            self.waiting_bytes += bytes as u64;
        }
        // Most packets are admitted, wait and leave either wholly before the
        // window or wholly inside it: two comparisons decide that, instead of
        // clipping each interval to the window. (Strict on `finish`, so a
        // zero-length transmission at a window edge takes the general path.)
        if finish < window.start {
            // Nothing of it falls inside the window.
        } else if now >= window.start && finish < window.end {
            self.stats.window_busy += finish - start;
            self.stats.window_bytes += bytes as u64;
            self.stats.window_departures += 1;
            if start > now {
                self.add_waiting_time(start - now, bytes);
                self.count_queue_max();
            }
        } else {
            self.stats.window_busy += window.overlap(start, finish);
            if window.contains(start) {
                self.stats.window_bytes += bytes as u64;
                self.stats.window_departures += 1;
            }
            if start > now {
                self.add_waiting_time(window.overlap(now, start), bytes);
                if in_window {
                    self.count_queue_max();
                }
            }
        }
        Ok((arrival, marked))
    }

    /// A packet of `bytes` waits `waited` inside the window behind the transmitter.
    #[inline(always)]
    fn add_waiting_time(&mut self, waited: Time, bytes: u32) {
        self.stats.queue_packet_time += waited as u128;
        self.stats.queue_byte_time += waited as u128 * bytes as u128;
    }

    #[inline(always)]
    fn count_queue_max(&mut self) {
        let s = &mut self.stats;
        s.queue_max_packets = s.queue_max_packets.max(self.waiting.len() as u64);
        s.queue_max_bytes = s.queue_max_bytes.max(self.waiting_bytes);
    }

    /// Publishes the queue's state: the sojourn time, the current rate, the
    /// capacity offered so far, and the discipline's own metrics (RED's and
    /// CW's `avg_queue`, CoDel's state...).
    pub fn queue_metrics(&self, now: Time, m: &mut Metrics) {
        match &self.transmitter {
            Some(p) => {
                let t = &p.transmitter;
                m.put("queue.sojourn_ms", t.last_sojourn as f64 / 1e6);
                m.put("rate_bps", self.rate_at(now));
                m.put("capacity_bytes", t.service().capacity_bytes(0, now));
                t.metrics(m);
            }
            None => {
                m.put("queue.sojourn_ms", self.busy_until.saturating_sub(now) as f64 / 1e6);
                m.put("rate_bps", self.spec.rate_bps as f64);
                m.put("capacity_bytes", self.spec.rate_bps as f64 * now as f64 / 8e9);
                if let Rule::Other(d) = &self.rule {
                    d.metrics(m);
                }
            }
        }
    }

    /// The backlog of the queue packets of `flow` (a [`Queued::flow`] key)
    /// join, if the link's discipline keeps flows apart.
    pub fn flow_backlog(&self, flow: u64) -> Option<QueueOccupancy> {
        self.transmitter.as_ref()?.transmitter.flow_backlog(flow)
    }

    /// The rate at `now`, in bit/s: a trace's is its capacity over the last
    /// 100 ms (a trace offers opportunities, not a rate).
    pub fn rate_at(&self, now: Time) -> f64 {
        const TRACE_RATE_WINDOW: Time = 100_000_000;
        match self.transmitter.as_ref().map(|p| p.transmitter.service()) {
            None => self.spec.rate_bps as f64,
            Some(Service::Rate(rate)) => rate.value_at(now) as f64,
            Some(Service::Trace(trace)) => {
                let from = now.saturating_sub(TRACE_RATE_WINDOW);
                let span = now - from;
                if span == 0 {
                    0.0
                } else {
                    trace.capacity_bytes(from, now) * 8e9 / span as f64
                }
            }
        }
    }

    /// Removes the head packet (its arrival event fired) and returns it with the
    /// key of the next head to schedule, and whether it survived the link's loss process.
    ///
    /// Always inlined into the event loop: called out of line, its result went
    /// back through the stack, written in 8-byte halves and read back as one
    /// 16-byte load, a failed store-to-load forward on every hop (8 % of the
    /// event loop's samples at 2.5 Gbit/s).
    #[inline(always)]
    pub fn pop_arrival(
        &mut self,
        now: Time,
        window: &MeasurementWindow,
    ) -> Option<(PacketRef, bool, Option<HeadKey>)> {
        let head = self.delay_line.pop_front()?;
        let next = self.head_key();
        let survived = self.pass_through(now, window);
        Some((head.packet, survived, next))
    }

    /// The far end of the link at `arrival` for a packet admitted but never
    /// put into the delay line: draws its loss and counts it; true if it survived.
    #[inline(always)]
    pub fn pass_through(&mut self, arrival: Time, window: &MeasurementWindow) -> bool {
        let lost = match self.loss.as_mut() {
            Some(process) => process.next_lost(),
            None => false,
        };
        if lost {
            self.stats.losses += 1;
            if window.contains(arrival) {
                self.stats.window_losses += 1;
            }
        } else {
            self.stats.delivered += 1;
        }
        !lost
    }

    /// Removes the packet at the head of the delay line without its arrival
    /// event, which the caller takes care of: its arrival time and the packet.
    #[inline(always)]
    pub fn take_head(&mut self) -> Option<(Time, PacketRef)> {
        self.delay_line.pop_front().map(|f| (f.arrival, f.packet))
    }

    /// The event key of the packet at the head of the delay line.
    #[inline(always)]
    pub fn head_key(&self) -> Option<HeadKey> {
        self.delay_line.front().map(|f| (f.arrival, f.seq))
    }

    /// A bound on the arrival of any packet not yet admitted: one admitted at
    /// `now` or later starts its transmission no earlier than `now` and than
    /// the end of the last one, and arrives a transmission time and the
    /// propagation delay after that.
    #[inline]
    pub fn no_new_arrival_before(&self, now: Time) -> Time {
        self.busy_until.max(now) + self.spec.delay
    }

    /// The packet at the head of the delay line (the next to arrive).
    #[inline]
    pub fn head(&self) -> Option<PacketRef> {
        self.delay_line.front().map(|f| f.packet)
    }

    /// When this link's transmitter can next send, if it holds packets; `NEVER` otherwise.
    pub fn next_service(&mut self, now: Time) -> Time {
        self.transmitter.as_mut().map_or(cclab_wire::NEVER, |p| p.transmitter.next_service(now))
    }

    /// The time of the engine's service event for this link's transmitter,
    /// or `NEVER` (none, or the fast path).
    #[inline]
    pub fn service_armed(&self) -> Time {
        self.transmitter.as_ref().map_or(cclab_wire::NEVER, |p| p.transmitter.armed)
    }

    /// Notes a service event at `time`, if that is earlier than the one
    /// armed: the count of the link's service events, for the event's key.
    pub fn arm_service_at(&mut self, time: Time) -> Option<&mut u64> {
        let t = &mut self.transmitter.as_mut()?.transmitter;
        if time >= t.armed || time == cclab_wire::NEVER {
            return None;
        }
        t.armed = time;
        Some(&mut t.made)
    }

    /// The service event at `time` fired: whether it is the one armed (an
    /// earlier one may have been replaced, or served by an arrival at its time).
    pub fn service_event(&mut self, time: Time) -> bool {
        match self.transmitter.as_mut() {
            Some(p) if p.transmitter.armed == time => {
                p.transmitter.armed = cclab_wire::NEVER;
                true
            }
            _ => false,
        }
    }

    /// Offers `packet` to a link that dequeues, at `now`; the answer is for
    /// that packet, and packets the discipline dropped to make room go to
    /// `dropped` (both counted here). The caller serves anything due at
    /// `now` first ([`Link::serve`]).
    #[inline(always)]
    pub fn offer(
        &mut self,
        now: Time,
        packet: Queued,
        window: &MeasurementWindow,
        dropped: &mut Vec<Dropped>,
    ) -> Admission {
        let in_window = window.contains(now);
        self.stats.arrivals += 1;
        if in_window {
            self.stats.window_arrivals += 1;
        }
        self.integrate_queue(now, window);
        let Some(p) = self.transmitter.as_mut() else { return Admission::Drop };
        let from = dropped.len();
        let admission = p.transmitter.offer(now, packet, dropped);
        match admission {
            Admission::Enqueue => {}
            Admission::EnqueueMarked => self.stats.count_mark(in_window),
            Admission::Drop => self.stats.count_drop(in_window),
            Admission::EarlyDrop => {
                self.stats.count_drop(in_window);
                self.stats.count_early_drop(in_window);
            }
        }
        self.count_dropped(&dropped[from..], in_window);
        admission
    }

    /// After an arrival (and any service it started): the largest queue, if
    /// the arrival was inside the window and something waits.
    pub fn note_queue_after_arrival(&mut self, now: Time, window: &MeasurementWindow) {
        if let Some(p) = &self.transmitter {
            let occupancy = p.transmitter.occupancy();
            if window.contains(now) && occupancy.packets > 0 {
                let s = &mut self.stats;
                s.queue_max_packets = s.queue_max_packets.max(occupancy.packets);
                s.queue_max_bytes = s.queue_max_bytes.max(occupancy.bytes);
            }
        }
    }

    /// The next packet the transmitter of a link that dequeues sends at
    /// `now`, if it can send one (counted here: bytes, busy time, a mark),
    /// and whether another may follow at `now` (a trace's opportunity may
    /// carry several; a rate is busy once it sends); what the discipline
    /// drops on the way goes to `dropped`.
    #[inline(always)]
    pub fn serve(
        &mut self,
        now: Time,
        window: &MeasurementWindow,
        dropped: &mut Vec<Dropped>,
    ) -> Option<(Departure, bool)> {
        self.integrate_queue(now, window);
        let p = self.transmitter.as_mut()?;
        let before = dropped.len();
        let departure = p.transmitter.serve(now, dropped);
        let more = p.transmitter.sends_several();
        if dropped.len() > before {
            self.count_dropped(&dropped[before..], window.contains(now));
        }
        let d = departure?;
        if d.marked {
            self.stats.count_mark(window.contains(d.start));
        }
        self.stats.window_busy += window.overlap(d.start, d.finish);
        if window.contains(d.start) {
            self.stats.window_bytes += d.packet.packet.wire_bytes as u64;
            self.stats.window_departures += 1;
        }
        Some((d, more))
    }

    fn count_dropped(&mut self, dropped: &[Dropped], in_window: bool) {
        for d in dropped {
            self.stats.count_drop(in_window);
            if d.cause == DropCause::EarlyDrop {
                self.stats.count_early_drop(in_window);
            }
        }
    }

    /// Adds the queue's occupancy since the last change, inside the window,
    /// to the window's integrals (a link that dequeues; the fast path adds
    /// each packet's wait at admission instead).
    #[inline]
    fn integrate_queue(&mut self, now: Time, window: &MeasurementWindow) {
        let Some(p) = self.transmitter.as_mut() else { return };
        if p.integrated_to >= now {
            return;
        }
        let occupancy = p.transmitter.occupancy();
        let span = window.overlap(p.integrated_to, now) as u128;
        p.integrated_to = p.integrated_to.max(now);
        self.stats.queue_packet_time += span * occupancy.packets as u128;
        self.stats.queue_byte_time += span * occupancy.bytes as u128;
    }

    /// Closes the window's queue integrals at its end (the run is over).
    pub fn close_window(&mut self, window: &MeasurementWindow) {
        self.integrate_queue(window.end, window);
    }

    /// The propagation delay of a packet that leaves the transmitter at `time`.
    pub fn delay_at(&self, time: Time) -> Time {
        match &self.transmitter {
            Some(p) => p.transmitter.delay().value_at(time),
            None => self.spec.delay,
        }
    }

    /// Makes this link count its departures, per kind and for flows
    /// `0..flows` each (before the run: an observation reads them). Counts
    /// start from zero when first called.
    pub fn count_departures(&mut self, flows: usize) {
        let departures = self.departures.get_or_insert_with(Box::default);
        if departures.by_flow.len() < flows {
            departures.by_flow.resize(flows, 0);
        }
    }

    /// The departures counted so far, if this link counts them (see [`Link::count_departures`]).
    #[inline]
    pub fn departures(&self) -> Option<&Departures> {
        self.departures.as_deref()
    }

    /// Counts `packet`'s transmission (its arrival event fired, lost or not), if this link counts.
    #[inline]
    pub fn count_departure(&mut self, packet: &Packet) {
        if let Some(departures) = self.departures.as_mut() {
            departures.count(packet);
        }
    }

    /// Whether the link loses packets on the way (a loss process).
    pub fn is_lossy(&self) -> bool {
        self.loss.is_some()
    }

    /// Packets admitted but not yet at the far end (waiting, in transmission or propagating).
    pub fn in_flight(&self) -> u64 {
        self.delay_line.len() as u64 + self.transmitter.as_ref().map_or(0, |p| p.transmitter.held())
    }

    /// Mean number of waiting packets and bytes over the window.
    pub fn queue_means(&self, window: &MeasurementWindow) -> (f64, f64) {
        if window.is_empty() {
            return (0.0, 0.0);
        }
        let len = window.len() as f64;
        (self.stats.queue_packet_time as f64 / len, self.stats.queue_byte_time as f64 / len)
    }

    /// The share of the window the transmitter was busy; on a link whose
    /// rate varies, the bytes sent over those it could have sent.
    /// Forgets the packets inside the link (see [`crate::Engine::release_packets`]);
    /// its counters stay.
    pub fn release_packets(&mut self) {
        self.delay_line = Ring::new();
        self.waiting = Ring::new();
        self.waiting_bytes = 0;
    }

    /// The mean time a packet waited in the queue inside the window, in
    /// nanoseconds: the window's queue integral over the packets that left
    /// the queue in it (Little's law; packets an AQM dropped at the head
    /// waited too and count in the integral, not among those that left).
    pub fn queue_delay_mean(&self) -> f64 {
        match self.stats.window_departures {
            0 => 0.0,
            n => self.stats.queue_packet_time as f64 / n as f64,
        }
    }

    /// The name of the link's queue discipline.
    pub fn discipline_name(&self) -> &'static str {
        match (&self.transmitter, &self.rule) {
            (Some(p), _) => p.transmitter.discipline_name(),
            (None, Rule::TailDrop(_)) => droptail::DESCRIPTOR.name,
            (None, Rule::Other(d)) => d.name(),
        }
    }

    pub fn utilization(&self, window: &MeasurementWindow) -> f64 {
        if window.is_empty() {
            return 0.0;
        }
        match &self.transmitter {
            Some(p) if self.spec.variation.is_some() => {
                let capacity = p.transmitter.service().capacity_bytes(window.start, window.end);
                if capacity > 0.0 {
                    self.stats.window_bytes as f64 / capacity
                } else {
                    0.0
                }
            }
            _ => self.stats.window_busy as f64 / window.len() as f64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::DropTail;
    use crate::rng::RngStream;
    use cclab_wire::time::{micros, millis};
    use cclab_wire::{Header, TcpHeader, TcpKind, TrafficKind, UdpHeader};
    use std::collections::VecDeque;

    fn link(buffer: BufferLimit) -> Link {
        let spec = LinkSpec {
            name: "l".into(),
            from: 0,
            to: 1,
            rate_bps: 8_000_000, // 1 byte per microsecond
            delay: millis(1),
            buffer,
            loss: LossModel::NONE,
            variation: None,
        };
        Link::new(spec, Discipline::Fifo(Box::new(DropTail::new(buffer))), None)
    }

    fn pkt(bytes: u32) -> Packet {
        Packet::new(Header::Udp(UdpHeader { seq: 0, sent_at: 0, payload: bytes }), bytes)
    }

    const ALL: MeasurementWindow = MeasurementWindow { start: 0, end: u64::MAX };

    #[test]
    fn back_to_back_packets_serialise_then_propagate() {
        let mut l = link(BufferLimit::Unlimited);
        assert_eq!(
            l.enqueue(0, PacketRef::new(0, 0, &pkt(1000)), 1, &ALL),
            Enqueued::Admitted {
                head: Some((micros(1000) + millis(1), Seq { made_at: 0, id: 1 })),
                marked: false
            }
        );
        assert_eq!(
            l.enqueue(0, PacketRef::new(1, 0, &pkt(1000)), 2, &ALL),
            Enqueued::Admitted { head: None, marked: false }
        );
        let (_, ok, next) = l.pop_arrival(millis(2), &ALL).unwrap();
        assert!(ok);
        assert_eq!(next, Some((micros(2000) + millis(1), Seq { made_at: 0, id: 2 })));
    }

    #[test]
    fn droptail_limit_counts_waiting_packets_only() {
        let mut l = link(BufferLimit::Packets(1));
        l.enqueue(0, PacketRef::new(0, 0, &pkt(1000)), 1, &ALL); // in transmission
        l.enqueue(0, PacketRef::new(0, 0, &pkt(1000)), 2, &ALL); // waiting
        l.enqueue(0, PacketRef::new(0, 0, &pkt(1000)), 3, &ALL); // dropped
        assert_eq!(l.stats.drops, 1);
        assert_eq!(l.in_flight(), 2);
        // Once the first finishes, the second is in service and there is room again.
        assert_eq!(l.waiting_at(micros(1000)).packets, 0);
        l.enqueue(micros(1000), PacketRef::new(0, 0, &pkt(1000)), 4, &ALL);
        assert_eq!(l.stats.drops, 1);
    }

    #[test]
    fn queue_integral_is_total_waiting_time() {
        let mut l = link(BufferLimit::Unlimited);
        for seq in 0..3 {
            l.enqueue(0, PacketRef::new(0, 0, &pkt(1000)), seq, &ALL);
        }
        // Waits: 0, 1000 us, 2000 us.
        assert_eq!(l.stats.queue_packet_time, micros(3000) as u128);
        assert_eq!(l.stats.queue_max_packets, 2);
        let w = MeasurementWindow { start: 0, end: micros(3000) };
        assert!((l.queue_means(&w).0 - 1.0).abs() < 1e-12);
    }

    /// The window's counters, whichever way `admit` reaches them, equal each
    /// packet's transmission and wait clipped to the window: packets before,
    /// across both edges of, inside and after windows of random placement.
    #[test]
    fn window_counters_equal_the_clipped_intervals() {
        use cclab_wire::random::SplitMix64;
        use cclab_wire::time::overlap;
        let mut rng = SplitMix64::new(11);
        for _ in 0..200 {
            let mut l = link(BufferLimit::Unlimited);
            let start = rng.next_u64() % micros(20_000);
            let w = MeasurementWindow { start, end: start + rng.next_u64() % micros(20_000) };
            let (mut busy, mut bytes, mut waited, mut byte_time) = (0, 0, 0u128, 0u128);
            let (mut max_packets, mut max_bytes) = (0, 0);
            let mut admitted: Vec<(Time, u32)> = Vec::new();
            let mut now = 0;
            for seq in 0..60 {
                now += rng.next_u64() % micros(1500);
                let size = [40, 1000, 1500][(rng.next_u64() % 3) as usize];
                let begin = l.busy_until.max(now);
                let Enqueued::Admitted { .. } = l.enqueue(now, PacketRef::new(0, 0, &pkt(size)), seq, &w)
                else {
                    panic!("an unlimited buffer drops nothing");
                };
                let finish = begin + serialization_time(size, 8_000_000);
                admitted.push((begin, size));
                busy += overlap(begin, finish, w.start, w.end);
                if w.contains(begin) {
                    bytes += size as u64;
                }
                if begin > now {
                    let wait = overlap(now, begin, w.start, w.end) as u128;
                    waited += wait;
                    byte_time += wait * size as u128;
                    if w.contains(now) {
                        let queued = admitted.iter().filter(|&&(b, _)| b > now);
                        max_packets = max_packets.max(queued.clone().count() as u64);
                        max_bytes = max_bytes.max(queued.map(|&(_, s)| s as u64).sum());
                    }
                }
            }
            let s = &l.stats;
            assert_eq!((s.window_busy, s.window_bytes), (busy, bytes), "window {w:?}");
            assert_eq!((s.queue_packet_time, s.queue_byte_time), (waited, byte_time), "window {w:?}");
            assert_eq!((s.queue_max_packets, s.queue_max_bytes), (max_packets, max_bytes), "window {w:?}");
        }
    }

    #[test]
    fn utilization_clips_busy_time_to_window() {
        let mut l = link(BufferLimit::Unlimited);
        let w = MeasurementWindow { start: micros(500), end: micros(2500) };
        l.enqueue(0, PacketRef::new(0, 0, &pkt(1000)), 1, &w);
        l.enqueue(0, PacketRef::new(0, 0, &pkt(1000)), 2, &w);
        // Busy [0, 2000) us; inside the window [500, 2000) = 1500 of 2000 us.
        assert!((l.utilization(&w) - 0.75).abs() < 1e-12);
    }

    #[test]
    fn random_loss_consumes_the_link_but_not_the_packet_count() {
        let spec = LinkSpec {
            name: "l".into(),
            from: 0,
            to: 1,
            rate_bps: 8_000_000,
            delay: 0,
            buffer: BufferLimit::Unlimited,
            loss: LossModel::Bernoulli { p: 1.0 },
            variation: None,
        };
        let loss = LossProcess::new(spec.loss, RngStream::new(1, "x"));
        let mut l =
            Link::new(spec, Discipline::Fifo(Box::new(DropTail::new(BufferLimit::Unlimited))), Some(loss));
        l.enqueue(0, PacketRef::new(0, 0, &pkt(100)), 1, &ALL);
        let (_, ok, _) = l.pop_arrival(micros(100), &ALL).unwrap();
        assert!(!ok);
        assert_eq!((l.stats.arrivals, l.stats.losses, l.stats.delivered), (1, 1, 0));
    }

    fn tcp(kind: TcpKind, bytes: u32) -> Packet {
        Packet::new(Header::Tcp(TcpHeader::new(kind)), bytes)
    }

    /// Offers a mixed stream of three flows to a small buffer and drains part
    /// of it: departed bytes per kind sum to the total, departed = offered -
    /// dropped - still in the link, in bytes, at every step, and each counted
    /// flow gets exactly its own bytes (flow 2 is beyond the counted flows).
    #[test]
    fn departed_bytes_by_kind_and_flow_conserve_bytes() {
        let mut l = link(BufferLimit::Packets(3));
        l.count_departures(2);
        let mut packets = [tcp(TcpKind::Data, 1040), tcp(TcpKind::Ack, 40), pkt(1028), pkt(200)];
        for (i, p) in packets.iter_mut().enumerate() {
            p.flow = (i % 3) as u32;
        }
        let (mut offered, mut dropped) = (0u64, 0u64);
        let mut in_link: VecDeque<u64> = VecDeque::new();
        let mut by_kind = [0u64; TrafficKind::COUNT];
        let mut by_flow = [0u64; 3];
        let mut admitted = Vec::new();
        for (seq, p) in packets.iter().cycle().take(40).enumerate() {
            offered += p.wire_bytes as u64;
            match l.enqueue(0, PacketRef::new(0, 0, p), seq as u64, &ALL) {
                Enqueued::Dropped(_) => dropped += p.wire_bytes as u64,
                Enqueued::Admitted { .. } => {
                    in_link.push_back(p.wire_bytes as u64);
                    admitted.push(*p);
                }
            }
        }
        assert!(dropped > 0, "the buffer must overflow for this test to mean anything");
        for p in &admitted {
            let Some((_, _, _)) = l.pop_arrival(millis(100), &ALL) else { panic!("admitted packet missing") };
            l.count_departure(p);
            by_kind[p.traffic_kind().index()] += p.wire_bytes as u64;
            by_flow[p.flow as usize] += p.wire_bytes as u64;
            in_link.pop_front();
            let queued: u64 = in_link.iter().sum();
            let Some(d) = l.departures() else { panic!("departures not counted") };
            assert_eq!(d.total(), offered - dropped - queued);
        }
        let Some(d) = l.departures() else { panic!("departures not counted") };
        assert_eq!(d.by_kind, by_kind);
        assert_eq!(d.by_flow, by_flow[..2]);
        assert_eq!(l.in_flight(), 0);
        assert!(by_kind.iter().take(3).all(|&b| b > 0), "{by_kind:?}");
        assert!(by_flow.iter().all(|&b| b > 0), "{by_flow:?}");
    }

    /// A CW link (threshold 0, w_q 0.5), four arrivals at time 0. The first
    /// finds the link idle and empty, the second the first in transmission and
    /// nothing waiting: the average stays 0, no mark. The third finds one
    /// waiting (average 0.5): marked. The fourth finds two (average 1.25) but
    /// is not ECN-capable: not marked. The link counts the mark, reports it to
    /// the caller, and publishes the discipline's average.
    #[test]
    fn a_marking_discipline_marks_through_the_link_and_counts_it() {
        let mut l = link(BufferLimit::Packets(10));
        let d = crate::queue::find("cw").expect("cw registered");
        let mut params = cclab_wire::Params::new();
        for (p, text) in d.parameters.iter().zip(["0", "0.5", "500B"]) {
            params.insert(p.name, p.parse_text(text).expect("valid"));
        }
        let q = crate::queue::QueueLink {
            buffer: BufferLimit::Packets(10),
            rate_bps: 8_000_000,
            rng: RngStream::new(1, "q"),
        };
        l.set_queue(BufferLimit::Packets(10), (d.build)(&params, q).expect("builds"));
        let mut ect = pkt(1000);
        ect.ect = cclab_wire::Ect::Ect0;
        let marked = |e: Enqueued| matches!(e, Enqueued::Admitted { marked: true, .. });
        assert!(!marked(l.enqueue(0, PacketRef::new(0, 0, &ect), 1, &ALL)));
        assert!(!marked(l.enqueue(0, PacketRef::new(1, 0, &ect), 2, &ALL)));
        assert!(marked(l.enqueue(0, PacketRef::new(2, 0, &ect), 3, &ALL)));
        assert!(!marked(l.enqueue(0, PacketRef::new(3, 0, &pkt(1000)), 4, &ALL)));
        assert_eq!((l.stats.marks, l.stats.window_marks, l.stats.drops), (1, 1, 0));
        let mut log = cclab_wire::MetricLog::default();
        l.queue_metrics(0, &mut Metrics::new(&mut log));
        assert_eq!(log.get("avg_queue"), Some(1.25));
    }

    #[test]
    fn a_link_that_is_not_observed_counts_nothing() {
        let mut l = link(BufferLimit::Unlimited);
        l.enqueue(0, PacketRef::new(0, 0, &pkt(100)), 1, &ALL);
        l.pop_arrival(millis(100), &ALL);
        l.count_departure(&pkt(100));
        assert!(l.departures().is_none());
    }
}
