//! Step marking: the switch DCTCP assumes (RFC 8257 §3.1; Alizadeh et al.,
//! SIGCOMM 2010, §3.1): an arriving packet is marked CE when the queue it
//! joins is above a threshold K, with no averaging and no randomness.
//!
//! An arrival is marked when at least K packets wait ahead of it, not
//! counting the one being transmitted (this link's occupancy): the queue
//! including the packet on the wire is then above K, RFC 8257's words. ns-3's
//! `RedQueueDisc` configured as a step (MinTh = MaxTh = K, QW = 1, ECN on)
//! marks when the packets queued at the arrival reach MaxTh, and only if more
//! than one is queued, so for K <= 1 it marks less than this rule.
//!
//! A packet that is not ECN-capable is dropped where it would be marked
//! (`not_ect = "drop"`, what RED with ECN does in Linux and ns-3, the way
//! step marking is configured in practice), or joins the queue up to the
//! buffer (`not_ect = "enqueue"`, a switch that marks only what can be
//! marked). The buffer is the hard limit for every packet (tail drop).

use super::{
    check_threshold, droptail, Admission, BufferLimit, Discipline, QueueDescriptor, QueueDiscipline,
    QueueLink, QueueOccupancy,
};
use crate::pool::PacketRef;
use cclab_wire::{Descriptor, ParamDefault, ParamError, ParamType, Parameter, Params, Role, Time};

pub const DESCRIPTOR: QueueDescriptor = Descriptor {
    name: "step",
    role: Role::QueueDiscipline,
    summary: "marks CE every arrival that finds K or more packets waiting (DCTCP's switch); tail drop at the buffer",
    source: "RFC 8257 §3.1; Alizadeh et al., DCTCP, SIGCOMM 2010 §3.1; as ns-3 RedQueueDisc with MinTh = MaxTh = K",
    parameters: &[
        Parameter {
            name: "threshold",
            ty: ParamType::Integer,
            unit: "packets",
            min: 0.0,
            max: 1e9,
            default: ParamDefault::Required,
            meaning: "K: an arrival that finds this many packets waiting or more is marked; at most the buffer \
                      (the DCTCP paper, §3.3, suggests K > BDP / 7)",
        },
        Parameter {
            name: "not_ect",
            ty: ParamType::Choice(&["drop", "enqueue"]),
            unit: "",
            min: 0.0,
            max: 0.0,
            default: ParamDefault::Value("drop"),
            meaning: "what happens to a packet that is not ECN-capable above K: dropped (as RED with ECN) \
                      or queued up to the buffer",
        },
    ],
    metrics: &[],
    build,
};

fn build(p: &Params, link: QueueLink) -> Result<Discipline, ParamError> {
    let threshold = p.number("threshold")?;
    check_threshold("threshold", threshold, link.buffer, 1500)?;
    let drop_not_ect = p.choice("not_ect")? == "drop";
    Ok(Discipline::Fifo(Box::new(Step { threshold: threshold as u64, drop_not_ect, buffer: link.buffer })))
}

pub struct Step {
    threshold: u64,
    drop_not_ect: bool,
    buffer: BufferLimit,
}

impl QueueDiscipline for Step {
    fn name(&self) -> &'static str {
        "step"
    }

    fn admit(&mut self, _: Time, waiting: QueueOccupancy, _: Option<Time>, packet: &PacketRef) -> Admission {
        if !droptail::fits(self.buffer, waiting, packet.wire_bytes) {
            Admission::Drop
        } else if waiting.packets < self.threshold {
            Admission::Enqueue
        } else if packet.ect.capable() {
            Admission::EnqueueMarked
        } else if self.drop_not_ect {
            Admission::EarlyDrop
        } else {
            Admission::Enqueue
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{packet, waiting};
    use super::*;

    fn step(threshold: u64, drop_not_ect: bool, buffer: u64) -> Step {
        Step { threshold, drop_not_ect, buffer: BufferLimit::Packets(buffer) }
    }

    #[test]
    fn an_ecn_capable_arrival_is_marked_once_k_packets_wait() {
        let mut q = step(20, true, 100);
        assert_eq!(q.admit(0, waiting(19), None, &packet(true)), Admission::Enqueue);
        assert_eq!(q.admit(0, waiting(20), None, &packet(true)), Admission::EnqueueMarked);
        assert_eq!(q.admit(0, waiting(99), None, &packet(true)), Admission::EnqueueMarked);
        assert_eq!(q.admit(0, waiting(100), None, &packet(true)), Admission::Drop, "the buffer still limits");
    }

    #[test]
    fn a_packet_that_is_not_ect_is_dropped_above_k_or_queued_as_configured() {
        let mut q = step(20, true, 100);
        assert_eq!(q.admit(0, waiting(19), None, &packet(false)), Admission::Enqueue);
        assert_eq!(q.admit(0, waiting(20), None, &packet(false)), Admission::EarlyDrop);
        let mut q = step(20, false, 100);
        assert_eq!(q.admit(0, waiting(50), None, &packet(false)), Admission::Enqueue);
        assert_eq!(q.admit(0, waiting(100), None, &packet(false)), Admission::Drop);
    }

    #[test]
    fn k_zero_marks_every_packet_and_k_above_the_buffer_is_refused() {
        let mut q = step(0, true, 100);
        assert_eq!(q.admit(0, waiting(0), None, &packet(true)), Admission::EnqueueMarked);
        let mut params = Params::default();
        params.insert("threshold", cclab_wire::ParamValue::Number(101.0));
        params.insert("not_ect", cclab_wire::ParamValue::Text("drop".into()));
        let link = QueueLink {
            buffer: BufferLimit::Packets(100),
            rate_bps: 1_000_000,
            rng: crate::rng::RngStream::new(1, "test"),
        };
        assert!(build(&params, link).is_err());
    }
}
