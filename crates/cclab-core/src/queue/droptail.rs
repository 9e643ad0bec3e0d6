//! Tail drop: a FIFO that refuses an arrival that would exceed its limit in
//! packets or bytes, counting only packets waiting behind the one being
//! transmitted (ns-2 `Queue/DropTail` and its `limit_`).

use super::{Admission, BufferLimit, QueueDescriptor, QueueDiscipline, QueueOccupancy};
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

fn build(_: &Params, limit: BufferLimit) -> Result<Box<dyn QueueDiscipline>, ParamError> {
    Ok(Box::new(DropTail::new(limit)))
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

    fn admit(&mut self, _now: Time, waiting: QueueOccupancy, packet: &PacketRef) -> Admission {
        let fits = match self.limit {
            BufferLimit::Packets(n) => waiting.packets < n,
            BufferLimit::Bytes(b) => waiting.bytes + packet.wire_bytes as u64 <= b,
            BufferLimit::Unlimited => true,
        };
        if fits {
            Admission::Enqueue
        } else {
            Admission::Drop
        }
    }
}
