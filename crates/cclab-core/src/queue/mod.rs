//! Queue disciplines: what a link does with the packets that wait for its transmitter.
//!
//! Two kinds (see docs/architecture.md, "Links that dequeue"):
//!
//! - a FIFO discipline ([`QueueDiscipline`]: DropTail, RED, CW) decides only
//!   *whether* (and with which mark) an arriving packet joins. On a link of
//!   constant rate and delay the link then computes the packet's departure at
//!   admission, the fast path: one event per hop at most.
//! - a dequeuing discipline ([`DequeueDiscipline`]: CoDel, FQ-CoDel, PIE,
//!   DualPI2) holds its packets and chooses, when the transmitter asks, which
//!   to send next and which to drop or mark at the head, seeing each packet's
//!   sojourn time. A link of varying rate or delay pulls from every discipline this
//!   way (a FIFO one through [`fifo::FifoQueue`]).
//!
//! The occupancy a discipline sees counts packets waiting behind the one being
//! transmitted, as ns-2's DropTail `limit_` does.

cclab_wire::algorithms! {
    /// The queue disciplines a link can use (`queue = NAME`).
    pub const QUEUE_DISCIPLINES: QueueDescriptor = [droptail, red, cw, codel, fq_codel, pie, step, dualpi2];
}
pub mod avg_queue;
pub mod fifo;
pub mod periodic;
#[cfg(test)]
mod test_support;

pub use droptail::DropTail;

use crate::events::Seq;
use crate::pool::PacketRef;
use crate::rng::RngStream;
use crate::trace::DropCause;
use cclab_wire::{Descriptor, Metrics, ParamError, Params, Time};
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BufferLimit {
    /// At most this many packets waiting.
    Packets(u64),
    /// At most this many bytes (wire size) waiting.
    Bytes(u64),
    Unlimited,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueOccupancy {
    pub packets: u64,
    pub bytes: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    Enqueue,
    /// Enqueue with the congestion-experienced bit set (ECN, or Jersey's
    /// congestion warning); the link sets it on the pooled packet.
    EnqueueMarked,
    /// The buffer is full.
    Drop,
    /// Refused by an active queue management rule while the buffer had room
    /// (RED's random or forced drop), counted apart from buffer overflow.
    EarlyDrop,
}

pub trait QueueDiscipline {
    fn name(&self) -> &'static str;
    /// Decides on the fields a hop carries ([`PacketRef`]), not the packet:
    /// reading the pool on every hop was most of a hop's cost. A discipline
    /// that needs more (an ECN-marking one: the packet's ECT bit) adds the
    /// field to `PacketRef`. `idle_since` is when the transmitter went idle,
    /// if it is idle at `now`: an averaging discipline decays its average
    /// over the idle period (RED's idle correction).
    fn admit(
        &mut self,
        now: Time,
        waiting: QueueOccupancy,
        idle_since: Option<Time>,
        packet: &PacketRef,
    ) -> Admission;

    /// The buffer limit when this discipline is plain tail drop (admission
    /// depends on the occupancy and the limit alone, and `admit` keeps no
    /// state). A link then decides admission inline: the virtual `admit`
    /// call was a measurable part of a hop. Other disciplines keep `None`.
    fn tail_drop_limit(&self) -> Option<BufferLimit> {
        None
    }

    /// Publishes the discipline's state for time series (the link metric
    /// `avg_queue` of an averaging discipline); nothing by default.
    fn metrics(&self, _m: &mut Metrics) {}
}

/// A packet a dequeuing discipline holds: the fields a hop carries, when it
/// joined the queue and which flow it belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Queued {
    pub packet: PacketRef,
    pub enqueued_at: Time,
    /// The packet's connection and direction (its flow id and destination
    /// node): what a flow-queueing discipline hashes, the simulator's 5-tuple.
    pub flow: u64,
    /// The engine's event key for the packet; disciplines carry it unread.
    pub seq: Seq,
}

impl Queued {
    /// The time `self` has spent in the queue at `now`.
    #[inline]
    pub fn sojourn(&self, now: Time) -> Time {
        now.saturating_sub(self.enqueued_at)
    }
}

/// A packet a dequeuing discipline dropped, and why: `BufferFull` for a
/// drop to respect the buffer (FQ-CoDel's drop from the fattest queue),
/// `EarlyDrop` for one its active queue management chose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dropped {
    pub packet: Queued,
    pub cause: DropCause,
}

/// The packet a dequeuing discipline hands the transmitter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dequeued {
    pub packet: Queued,
    /// Set its CE bit (an ECN-marking AQM chose it instead of dropping it).
    pub marked: bool,
}

/// A discipline that holds its packets and decides when the transmitter
/// pulls: AQMs that act on sojourn time (CoDel), schedulers (FQ-CoDel).
/// It has no timer of its own: it acts only when a packet arrives or the
/// transmitter asks, as the Linux qdiscs do, and catches up on any periodic
/// work (PIE's probability update) then.
pub trait DequeueDiscipline {
    fn name(&self) -> &'static str;

    /// Offers `packet` at `now` (its `enqueued_at`). The answer is for that
    /// packet: `Drop` and `EarlyDrop` refuse it (the caller frees it),
    /// `EnqueueMarked` keeps it with CE set. Packets already held that the
    /// discipline drops to make room go to `dropped`.
    fn enqueue(&mut self, now: Time, packet: Queued, dropped: &mut Vec<Dropped>) -> Admission;

    /// The packet to transmit at `now`, if any; packets it drops at the head
    /// on the way (an AQM's drops) go to `dropped`.
    fn dequeue(&mut self, now: Time, dropped: &mut Vec<Dropped>) -> Option<Dequeued>;

    /// Packets and bytes held.
    fn occupancy(&self) -> QueueOccupancy;

    /// The packets and bytes held for `flow` (a [`Queued::flow`]), where the
    /// discipline keeps flows apart (FQ-CoDel: the queue the flow hashes
    /// to, which other flows may share); `None` otherwise.
    fn flow_backlog(&self, _flow: u64) -> Option<QueueOccupancy> {
        None
    }

    /// The transmitter has been idle since `since` with nothing held: called
    /// just before the arrival that ends the idle period (RED's average
    /// decays over it). Nothing by default.
    fn idle(&mut self, _since: Time) {}

    /// Publishes the discipline's state for time series; nothing by default.
    fn metrics(&self, _m: &mut Metrics) {}
}

/// What a discipline's builder makes: a FIFO admission rule or a discipline
/// that dequeues.
pub enum Discipline {
    Fifo(Box<dyn QueueDiscipline>),
    Dequeue(Box<dyn DequeueDiscipline>),
}

impl Discipline {
    pub fn name(&self) -> &'static str {
        match self {
            Discipline::Fifo(d) => d.name(),
            Discipline::Dequeue(d) => d.name(),
        }
    }
}

/// What a discipline is built for: its link's buffer and rate, and the
/// link's own random stream (named after the link, so a discipline's draws
/// never shift another component's).
pub struct QueueLink {
    pub buffer: BufferLimit,
    pub rate_bps: u64,
    pub rng: RngStream,
}

/// The problem a builder reports for a threshold above the buffer: the
/// scenario builder recognises it and adds the buffer's size to the message.
pub const ABOVE_BUFFER: &str = "must not exceed the link's buffer";

/// Checks that a threshold in packets fits the buffer. A buffer in bytes is
/// compared as that many bytes of `mean_packet_bytes` packets.
pub fn check_threshold(
    name: &str,
    packets: f64,
    buffer: BufferLimit,
    mean_packet_bytes: u64,
) -> Result<(), ParamError> {
    let capacity = match buffer {
        BufferLimit::Packets(n) => n as f64,
        BufferLimit::Bytes(b) => b as f64 / mean_packet_bytes.max(1) as f64,
        BufferLimit::Unlimited => f64::INFINITY,
    };
    if packets > capacity {
        return Err(ParamError { name: name.into(), problem: ABOVE_BUFFER });
    }
    Ok(())
}

/// How to build a discipline for a link.
pub type QueueBuild = fn(&Params, QueueLink) -> Result<Discipline, ParamError>;
pub type QueueDescriptor = Descriptor<QueueBuild>;

pub fn find(name: &str) -> Option<&'static QueueDescriptor> {
    QUEUE_DISCIPLINES.iter().find(|d| d.name == name)
}
