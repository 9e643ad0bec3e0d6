//! Queue disciplines: the admission decision a link makes for each arriving packet.
//!
//! Links are FIFO and compute each packet's departure when it is admitted, so a
//! discipline only decides *whether* (and with which mark) a packet joins the
//! queue. The occupancy it sees counts packets waiting behind the one being
//! transmitted, as ns-2's DropTail `limit_` does.

use crate::packet::Packet;
use crate::time::Time;
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
    fn admit(&mut self, now: Time, waiting: QueueOccupancy, packet: &Packet) -> Admission;
}

/// Tail drop: refuse an arrival that would exceed the buffer.
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

    fn admit(&mut self, _now: Time, waiting: QueueOccupancy, packet: &Packet) -> Admission {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::PacketKind;

    fn pkt(bytes: u32) -> Packet {
        let mut p = Packet::new(PacketKind::Data);
        p.wire_bytes = bytes;
        p
    }

    #[test]
    fn droptail_packets_admits_up_to_limit() {
        let mut q = DropTail::new(BufferLimit::Packets(2));
        let occ = |n| QueueOccupancy { packets: n, bytes: n * 1000 };
        assert_eq!(q.admit(0, occ(1), &pkt(1000)), Admission::Enqueue);
        assert_eq!(q.admit(0, occ(2), &pkt(1000)), Admission::Drop);
    }

    #[test]
    fn droptail_bytes_counts_the_arrival() {
        let mut q = DropTail::new(BufferLimit::Bytes(2500));
        let occ = QueueOccupancy { packets: 2, bytes: 2000 };
        assert_eq!(q.admit(0, occ, &pkt(500)), Admission::Enqueue);
        assert_eq!(q.admit(0, occ, &pkt(501)), Admission::Drop);
    }
}
