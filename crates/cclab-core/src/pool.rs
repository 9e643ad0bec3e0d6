//! Storage for packets inside the network. Links hold ids, so a hop moves a
//! few bytes instead of the packet; freed slots are reused, so after warm-up
//! nothing is allocated per packet.

use cclab_wire::{Ect, NodeId, Packet};

/// Index of a packet in a [`PacketPool`].
pub type PacketId = u32;

/// A packet in the pool with the fields every hop reads: links keep these in
/// their delay lines and queue disciplines decide on them, so that a hop does
/// not touch the packet itself (128 bytes, in a pool far larger than the
/// cache at gigabit rates); only the delivery to an endpoint reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketRef {
    pub id: PacketId,
    pub dst: NodeId,
    pub wire_bytes: u32,
    /// The ECN codepoint: a marking discipline marks an ECN-capable packet
    /// instead of dropping it, and DualPI2 classifies on ECT(1). Fits the
    /// padding of the delay line's entries, which stay 32 bytes.
    pub ect: Ect,
}

impl PacketRef {
    pub fn new(id: PacketId, dst: NodeId, packet: &Packet) -> Self {
        Self { id, dst, wire_bytes: packet.wire_bytes, ect: packet.ect }
    }
}

/// A packet on two whole cache lines ([`Packet`]'s layout).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Slot(Packet);

#[derive(Default)]
pub struct PacketPool {
    slots: Vec<Slot>,
    free: Vec<PacketId>,
    /// Each packet's source and destination nodes, where a trace asks for them
    /// ([`PacketPool::set_route`]); a hop reads the destination from the
    /// packet's [`PacketRef`].
    routes: Vec<(NodeId, NodeId)>,
}

impl PacketPool {
    /// Stores `packet`, bound for node `dst`.
    pub fn insert(&mut self, packet: &Packet, dst: NodeId) -> PacketRef {
        let (wire_bytes, ect) = (packet.wire_bytes, packet.ect);
        let id = match self.free.pop() {
            Some(id) => {
                self.slots[id as usize] = Slot(*packet);
                id
            }
            None => {
                self.slots.push(Slot(*packet));
                (self.slots.len() - 1) as PacketId
            }
        };
        PacketRef { id, dst, wire_bytes, ect }
    }

    pub fn get(&self, id: PacketId) -> &Packet {
        &self.slots[id as usize].0
    }

    /// Notes packet `id`'s source and destination nodes, for [`PacketPool::route`].
    pub fn set_route(&mut self, id: PacketId, src: NodeId, dst: NodeId) {
        let i = id as usize;
        if i >= self.routes.len() {
            self.routes.resize(i + 1, (0, 0));
        }
        self.routes[i] = (src, dst);
    }

    /// Packet `id`'s source and destination as last noted by [`PacketPool::set_route`].
    pub fn route(&self, id: PacketId) -> (NodeId, NodeId) {
        self.routes.get(id as usize).copied().unwrap_or((0, 0))
    }

    /// Sets the congestion-experienced bit of packet `id` (a queue marked it).
    pub fn mark_ce(&mut self, id: PacketId) {
        self.slots[id as usize].0.ce = true;
    }

    /// Starts loading packet `id`, which will be read soon.
    #[inline]
    pub fn prefetch(&self, id: PacketId) {
        if let Some(slot) = self.slots.get(id as usize) {
            cclab_wire::prefetch::prefetch(slot);
        }
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
    use cclab_wire::{Header, TcpHeader, TcpKind};

    fn packet(kind: TcpKind) -> Packet {
        Packet::new(Header::Tcp(TcpHeader::new(kind)), 40)
    }

    #[test]
    fn pool_reuses_released_slots() {
        let mut pool = PacketPool::default();
        let a = pool.insert(&packet(TcpKind::Data), 1).id;
        let b = pool.insert(&packet(TcpKind::Ack), 1).id;
        pool.release(a);
        assert_eq!(pool.insert(&packet(TcpKind::Ack), 1).id, a);
        assert_eq!(pool.get(b).tcp().map(|h| h.kind), Some(TcpKind::Ack));
        assert_eq!(pool.live(), 2);
    }

    #[test]
    fn a_reference_carries_the_ect_bit_and_a_mark_sets_ce_in_the_pool() {
        let mut pool = PacketPool::default();
        let mut p = packet(TcpKind::Data);
        p.ect = Ect::Ect0;
        let r = pool.insert(&p, 1);
        assert!(r.ect.capable() && PacketRef::new(r.id, 1, &p).ect == Ect::Ect0);
        assert!(!pool.get(r.id).ce);
        pool.mark_ce(r.id);
        assert!(pool.get(r.id).ce);
    }
}
