//! Queue disciplines: the admission decision a link makes for each arriving packet.
//!
//! Links are FIFO and compute each packet's departure when it is admitted, so a
//! discipline only decides *whether* (and with which mark) a packet joins the
//! queue. The occupancy it sees counts packets waiting behind the one being
//! transmitted, as ns-2's DropTail `limit_` does.

pub mod avg_queue;
pub mod cw;
pub mod droptail;
pub mod red;
#[cfg(test)]
mod test_support;

pub use droptail::DropTail;

use crate::pool::PacketRef;
use crate::rng::RngStream;
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
pub type QueueBuild = fn(&Params, QueueLink) -> Result<Box<dyn QueueDiscipline>, ParamError>;
pub type QueueDescriptor = Descriptor<QueueBuild>;

/// The queue disciplines a link can use (`queue = NAME`).
pub const QUEUE_DISCIPLINES: &[QueueDescriptor] = &[droptail::DESCRIPTOR, red::DESCRIPTOR, cw::DESCRIPTOR];

pub fn find(name: &str) -> Option<&'static QueueDescriptor> {
    QUEUE_DISCIPLINES.iter().find(|d| d.name == name)
}
