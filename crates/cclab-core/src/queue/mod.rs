//! Queue disciplines: the admission decision a link makes for each arriving packet.
//!
//! Links are FIFO and compute each packet's departure when it is admitted, so a
//! discipline only decides *whether* (and with which mark) a packet joins the
//! queue. The occupancy it sees counts packets waiting behind the one being
//! transmitted, as ns-2's DropTail `limit_` does.

pub mod droptail;

pub use droptail::DropTail;

use crate::pool::PacketRef;
use cclab_wire::{Descriptor, ParamError, Params, Time};
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
    Drop,
}

pub trait QueueDiscipline {
    fn name(&self) -> &'static str;
    /// Decides on the fields a hop carries ([`PacketRef`]), not the packet:
    /// reading the pool on every hop was most of a hop's cost. A discipline
    /// that needs more (an ECN-marking one: the packet's ECT bit) adds the
    /// field to `PacketRef`.
    fn admit(&mut self, now: Time, waiting: QueueOccupancy, packet: &PacketRef) -> Admission;

    /// The buffer limit when this discipline is plain tail drop (admission
    /// depends on the occupancy and the limit alone, and `admit` keeps no
    /// state). A link then decides admission inline: the virtual `admit`
    /// call was a measurable part of a hop. Other disciplines keep `None`.
    fn tail_drop_limit(&self) -> Option<BufferLimit> {
        None
    }
}

/// How to build a discipline for a link with this buffer limit.
pub type QueueBuild = fn(&Params, BufferLimit) -> Result<Box<dyn QueueDiscipline>, ParamError>;
pub type QueueDescriptor = Descriptor<QueueBuild>;

/// The queue disciplines a link can use (`queue = NAME`).
pub const QUEUE_DISCIPLINES: &[QueueDescriptor] = &[droptail::DESCRIPTOR];

pub fn find(name: &str) -> Option<&'static QueueDescriptor> {
    QUEUE_DISCIPLINES.iter().find(|d| d.name == name)
}
