//! Tail drop: a FIFO that refuses an arrival that would exceed its limit in
//! packets or bytes, counting only packets waiting behind the one being
//! transmitted (ns-2 `Queue/DropTail` and its `limit_`).

use super::{
    Admission, BufferLimit, Discipline, QueueDescriptor, QueueDiscipline, QueueLink, QueueOccupancy,
};
use crate::pool::PacketRef;
use cclab_wire::{Descriptor, ParamError, Params, Role, Time};

pub const DESCRIPTOR: QueueDescriptor = Descriptor {
    name: "droptail",
    role: Role::QueueDiscipline,
    summary: "FIFO that drops an arrival when the waiting packets (or bytes) would exceed the buffer",
    source: "ns-2 Queue/DropTail (queue/drop-tail.cc)",
    parameters: &[],
    metrics: &[],
    build,
};

fn build(_: &Params, link: QueueLink) -> Result<Discipline, ParamError> {
    Ok(Discipline::Fifo(Box::new(DropTail::new(link.buffer))))
}

pub struct DropTail {
    limit: BufferLimit,
}

impl DropTail {
    pub fn new(limit: BufferLimit) -> Self {
        Self { limit }
    }
}

impl QueueDiscipline for DropTail {
    fn name(&self) -> &'static str {
        "droptail"
    }

    fn admit(&mut self, _: Time, waiting: QueueOccupancy, _: Option<Time>, packet: &PacketRef) -> Admission {
        if fits(self.limit, waiting, packet.wire_bytes) {
            Admission::Enqueue
        } else {
            Admission::Drop
        }
    }

    fn tail_drop_limit(&self) -> Option<BufferLimit> {
        Some(self.limit)
    }
}

/// Whether an arrival of `wire_bytes` fits behind `waiting` under `limit`: the
/// one tail-drop rule, shared by [`DropTail::admit`] and a link's inline path.
#[inline]
pub fn fits(limit: BufferLimit, waiting: QueueOccupancy, wire_bytes: u32) -> bool {
    match limit {
        BufferLimit::Packets(n) => waiting.packets < n,
        BufferLimit::Bytes(b) => waiting.bytes + wire_bytes as u64 <= b,
        BufferLimit::Unlimited => true,
    }
}
