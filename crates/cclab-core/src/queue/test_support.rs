//! What the queue disciplines' tests share: 1000-byte packets and occupancies.

use super::QueueOccupancy;
use crate::pool::PacketRef;

pub(super) fn packet(ect: bool) -> PacketRef {
    PacketRef { id: 0, dst: 0, wire_bytes: 1000, ect }
}

/// `packets` 1000-byte packets waiting.
pub(super) fn waiting(packets: u64) -> QueueOccupancy {
    QueueOccupancy { packets, bytes: packets * 1000 }
}
