//! The packet: a small plain struct moved by value through the network.
//!
//! Routing fields (`src`, `dst`, `to_endpoint`, `flow`) are stamped by the engine;
//! the transport fields are written and read only by endpoints. Sequence numbers
//! are 64-bit byte offsets from the start of the stream, so they never wrap.

use crate::time::Time;

pub type NodeId = u32;
pub type LinkId = u32;
pub type EndpointId = u32;

/// Up to four SACK blocks (RFC 2018); three fit beside the timestamp option.
pub const MAX_SACK_BLOCKS: usize = 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketKind {
    Data,
    Ack,
}

/// SACK blocks `[left, right)` in byte sequence space, most recent first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlocks {
    len: u8,
    blocks: [(u64, u64); MAX_SACK_BLOCKS],
}

impl SackBlocks {
    /// Appends a block; returns false (and ignores it) when full.
    pub fn push(&mut self, left: u64, right: u64) -> bool {
        if (self.len as usize) < MAX_SACK_BLOCKS {
            self.blocks[self.len as usize] = (left, right);
            self.len += 1;
            true
        } else {
            false
        }
    }

    pub fn as_slice(&self) -> &[(u64, u64)] {
        &self.blocks[..self.len as usize]
    }

    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Packet {
    // Routing, stamped by the engine.
    pub src: NodeId,
    pub dst: NodeId,
    pub to_endpoint: EndpointId,
    pub flow: u32,
    /// Bytes on the wire: payload plus headers.
    pub wire_bytes: u32,
    /// Congestion Experienced, set by a marking queue.
    pub ce: bool,

    // Transport header.
    pub kind: PacketKind,
    /// First payload byte (data) .
    pub seq: u64,
    /// Payload bytes.
    pub len: u32,
    /// Cumulative acknowledgment: next byte expected (ACKs).
    pub ack: u64,
    /// Advertised receive window in bytes (ACKs).
    pub window: u64,
    /// Timestamp value (sender clock) and echo reply (RFC 7323).
    pub ts_val: Time,
    pub ts_ecr: Time,
    /// ECN-Echo: the receiver saw a CE mark.
    pub ece: bool,
    pub sack: SackBlocks,
}

impl Packet {
    /// A packet with zeroed fields of the given kind, for endpoints to fill in.
    pub fn new(kind: PacketKind) -> Self {
        Self {
            src: 0,
            dst: 0,
            to_endpoint: 0,
            flow: 0,
            wire_bytes: 0,
            ce: false,
            kind,
            seq: 0,
            len: 0,
            ack: 0,
            window: 0,
            ts_val: 0,
            ts_ecr: 0,
            ece: false,
            sack: SackBlocks::default(),
        }
    }
}

/// Index of a packet in a [`PacketPool`].
pub type PacketId = u32;

/// Storage for packets inside the network. Links hold ids, so a hop moves a
/// few bytes instead of the packet; freed slots are reused, so after warm-up
/// nothing is allocated per packet.
#[derive(Default)]
pub struct PacketPool {
    slots: Vec<Packet>,
    free: Vec<PacketId>,
}

impl PacketPool {
    pub fn insert(&mut self, packet: Packet) -> PacketId {
        match self.free.pop() {
            Some(id) => {
                self.slots[id as usize] = packet;
                id
            }
            None => {
                self.slots.push(packet);
                (self.slots.len() - 1) as PacketId
            }
        }
    }

    pub fn get(&self, id: PacketId) -> &Packet {
        &self.slots[id as usize]
    }

    pub fn release(&mut self, id: PacketId) {
        self.free.push(id);
    }

    /// Packets currently stored.
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sack_blocks_hold_at_most_four() {
        let mut s = SackBlocks::default();
        for i in 0..4 {
            assert!(s.push(i * 10, i * 10 + 5));
        }
        assert!(!s.push(100, 105));
        assert_eq!(s.len(), 4);
        assert_eq!(s.as_slice()[0], (0, 5));
    }

    #[test]
    fn pool_reuses_released_slots() {
        let mut pool = PacketPool::default();
        let a = pool.insert(Packet::new(PacketKind::Data));
        let b = pool.insert(Packet::new(PacketKind::Ack));
        pool.release(a);
        assert_eq!(pool.insert(Packet::new(PacketKind::Ack)), a);
        assert_eq!(pool.get(b).kind, PacketKind::Ack);
        assert_eq!(pool.live(), 2);
    }

    #[test]
    fn packet_stays_small() {
        // Packets are copied on every hop; keep them within two cache lines.
        assert!(std::mem::size_of::<Packet>() <= 160, "{}", std::mem::size_of::<Packet>());
    }
}
