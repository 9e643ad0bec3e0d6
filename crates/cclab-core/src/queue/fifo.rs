//! A FIFO discipline (DropTail, RED, CW) on a link that dequeues: its
//! admission rule decides at arrival, and packets leave in arrival order.
//!
//! A link of constant rate and delay never needs this: it computes a FIFO
//! packet's departure at admission (the fast path). A link whose rate or
//! delay varies, or that replays a delivery trace, cannot, and pulls from
//! its discipline as it would from CoDel; this gives every FIFO rule that
//! shape unchanged.

use super::{
    droptail, Admission, BufferLimit, DequeueDiscipline, Dequeued, Dropped, QueueDiscipline, QueueOccupancy,
    Queued,
};
use cclab_wire::{Metrics, Time};
use std::collections::VecDeque;

pub struct FifoQueue {
    rule: Box<dyn QueueDiscipline>,
    /// The rule's limit if it is plain tail drop, decided here without a virtual call.
    tail_drop: Option<BufferLimit>,
    packets: VecDeque<Queued>,
    bytes: u64,
    /// When the transmitter went idle, for the next arrival only (RED's
    /// average decays over the idle period; ns-2 starts it when a dequeue
    /// finds the queue empty, which is when the transmitter goes idle).
    idle_since: Option<Time>,
}

impl FifoQueue {
    pub fn new(rule: Box<dyn QueueDiscipline>) -> Self {
        Self { tail_drop: rule.tail_drop_limit(), rule, packets: VecDeque::new(), bytes: 0, idle_since: None }
    }
}

impl DequeueDiscipline for FifoQueue {
    fn name(&self) -> &'static str {
        self.rule.name()
    }

    fn enqueue(&mut self, now: Time, packet: Queued, _: &mut Vec<Dropped>) -> Admission {
        let idle_since = self.idle_since.take();
        let admission = match self.tail_drop {
            Some(limit) if droptail::fits(limit, self.occupancy(), packet.packet.wire_bytes) => {
                Admission::Enqueue
            }
            Some(_) => Admission::Drop,
            None => self.rule.admit(now, self.occupancy(), idle_since, &packet.packet),
        };
        if matches!(admission, Admission::Enqueue | Admission::EnqueueMarked) {
            self.bytes += packet.packet.wire_bytes as u64;
            self.packets.push_back(packet);
        }
        admission
    }

    fn dequeue(&mut self, _: Time, _: &mut Vec<Dropped>) -> Option<Dequeued> {
        let packet = self.packets.pop_front()?;
        self.bytes -= packet.packet.wire_bytes as u64;
        Some(Dequeued { packet, marked: false })
    }

    fn occupancy(&self) -> QueueOccupancy {
        QueueOccupancy { packets: self.packets.len() as u64, bytes: self.bytes }
    }

    fn idle(&mut self, since: Time) {
        self.idle_since = Some(since);
    }

    fn metrics(&self, m: &mut Metrics) {
        self.rule.metrics(m);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::Seq;
    use crate::pool::PacketRef;
    use crate::queue::DropTail;

    fn queued(id: u32, at: Time) -> Queued {
        let packet = PacketRef { id, dst: 0, wire_bytes: 1000, ect: cclab_wire::Ect::NotEct };
        Queued { packet, enqueued_at: at, flow: 0, seq: Seq::default() }
    }

    #[test]
    fn packets_leave_in_arrival_order_and_the_rule_sees_what_waits() {
        let mut q = FifoQueue::new(Box::new(DropTail::new(BufferLimit::Packets(2))));
        let mut dropped = Vec::new();
        assert_eq!(q.enqueue(0, queued(1, 0), &mut dropped), Admission::Enqueue);
        assert_eq!(q.enqueue(1, queued(2, 1), &mut dropped), Admission::Enqueue);
        assert_eq!(q.enqueue(2, queued(3, 2), &mut dropped), Admission::Drop);
        assert_eq!(q.occupancy(), QueueOccupancy { packets: 2, bytes: 2000 });
        let ids: Vec<u32> =
            std::iter::from_fn(|| q.dequeue(5, &mut dropped)).map(|d| d.packet.packet.id).collect();
        assert_eq!(ids, [1, 2]);
        assert!(dropped.is_empty());
        assert_eq!(q.occupancy(), QueueOccupancy::default());
    }
}
