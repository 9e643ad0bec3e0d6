//! What the queue disciplines' tests share: 1000-byte packets and occupancies.

use super::QueueOccupancy;
use crate::pool::PacketRef;
use cclab_wire::Ect;

/// A 1000-byte packet, ECT(0) if `ect`.
pub(super) fn packet(ect: bool) -> PacketRef {
    PacketRef { id: 0, dst: 0, wire_bytes: 1000, ect: codepoint(ect) }
}

/// ECT(0) if `ect`, else Not-ECT: the classic-ECN packets most tests offer.
pub(super) fn codepoint(ect: bool) -> Ect {
    if ect {
        Ect::Ect0
    } else {
        Ect::NotEct
    }
}

/// `packets` 1000-byte packets waiting.
pub(super) fn waiting(packets: u64) -> QueueOccupancy {
    QueueOccupancy { packets, bytes: packets * 1000 }
}
