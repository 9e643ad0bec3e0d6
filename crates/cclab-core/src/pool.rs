//! Storage for packets inside the network. Links hold ids, so a hop moves a
//! few bytes instead of the packet; freed slots are reused, so after warm-up
//! nothing is allocated per packet.

use cclab_wire::Packet;

/// Index of a packet in a [`PacketPool`].
pub type PacketId = u32;

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
    use cclab_wire::{Header, TcpHeader, TcpKind};

    fn packet(kind: TcpKind) -> Packet {
        Packet::new(Header::Tcp(TcpHeader::new(kind)), 40)
    }

    #[test]
    fn pool_reuses_released_slots() {
        let mut pool = PacketPool::default();
        let a = pool.insert(packet(TcpKind::Data));
        let b = pool.insert(packet(TcpKind::Ack));
        pool.release(a);
        assert_eq!(pool.insert(packet(TcpKind::Ack)), a);
        assert_eq!(pool.get(b).tcp().map(|h| h.kind), Some(TcpKind::Ack));
        assert_eq!(pool.live(), 2);
    }
}
