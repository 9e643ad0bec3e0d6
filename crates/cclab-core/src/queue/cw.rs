//! TCP-Jersey's congestion warning (CW) (Xu, Tian and Ansari, "TCP-Jersey for
//! Wireless IP Communications", IEEE JSAC 22(4), 2004): a router marks every
//! packet while its average queue exceeds a threshold, so that a Jersey
//! sender, seeing the mark echoed, can tell congestion losses from wireless
//! ones. The average is RED's ([`super::avg_queue`]), with a single
//! threshold and no randomness; the buffer is the hard limit (tail drop).
//!
//! Only ECN-capable packets are marked. The abstract (the paper itself was
//! not read, see algorithms.md §5) says "marking all packets"; a mark is a
//! congestion signal only to an endpoint that echoes it, and a receiver here
//! echoes CE as ECE only on flows with `ecn = true`, whose packets are
//! ECN-capable. Marking the others would set a bit nobody reads.

use super::avg_queue::{AverageQueue, MEAN_PACKET_SIZE, W_Q};
use super::red::{check_weight, AVG_QUEUE};
use super::{
    check_threshold, droptail, Admission, BufferLimit, Discipline, QueueDescriptor, QueueDiscipline,
    QueueLink, QueueOccupancy,
};
use crate::pool::PacketRef;
use cclab_wire::{Descriptor, Metrics, ParamDefault, ParamError, ParamType, Parameter, Params, Role, Time};

pub const DESCRIPTOR: QueueDescriptor = Descriptor {
    name: "cw",
    role: Role::QueueDiscipline,
    summary: "TCP-Jersey's congestion warning: marks every ECN-capable packet while the average queue exceeds a threshold",
    source: "Xu, Tian & Ansari, TCP-Jersey, IEEE JSAC 22(4) 2004 (CW router); average queue as ns-2.35 queue/red.cc",
    parameters: &[
        Parameter {
            name: "threshold",
            ty: ParamType::Number,
            unit: "packets",
            min: 0.0,
            max: 1e9,
            default: ParamDefault::Value("5"),
            meaning: "average queue above which every ECN-capable packet is marked; at most the buffer",
        },
        W_Q,
        MEAN_PACKET_SIZE,
    ],
    metrics: &[AVG_QUEUE],
    build,
};

fn build(p: &Params, link: QueueLink) -> Result<Discipline, ParamError> {
    let threshold = p.number("threshold")?;
    let w_q = p.number("w_q")?;
    let mean_packet_bytes = p.size("mean_packet_size")?;
    check_weight(w_q)?;
    check_threshold("threshold", threshold, link.buffer, mean_packet_bytes)?;
    Ok(Discipline::Fifo(Box::new(CongestionWarning {
        threshold,
        buffer: link.buffer,
        average: AverageQueue::new(w_q, link.rate_bps, mean_packet_bytes),
    })))
}

pub struct CongestionWarning {
    threshold: f64,
    buffer: BufferLimit,
    average: AverageQueue,
}

impl QueueDiscipline for CongestionWarning {
    fn name(&self) -> &'static str {
        "cw"
    }

    fn admit(
        &mut self,
        now: Time,
        waiting: QueueOccupancy,
        idle_since: Option<Time>,
        packet: &PacketRef,
    ) -> Admission {
        let avg = self.average.on_arrival(now, waiting.packets, idle_since);
        if !droptail::fits(self.buffer, waiting, packet.wire_bytes) {
            Admission::Drop
        } else if avg > self.threshold && packet.ect.capable() {
            Admission::EnqueueMarked
        } else {
            Admission::Enqueue
        }
    }

    fn metrics(&self, m: &mut Metrics) {
        m.put(AVG_QUEUE.name, self.average.value());
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{packet, waiting};
    use super::*;
    use crate::rng::RngStream;

    fn cw(threshold: f64, w_q: f64, buffer: BufferLimit) -> CongestionWarning {
        CongestionWarning { threshold, buffer, average: AverageQueue::new(w_q, 8_000_000, 500) }
    }

    /// With the queue held at 20 and w_q = 0.01, the average crosses 5 at
    /// arrival n = ceil(ln(1 - 5/20) / ln(0.99)) = 29: every ECT packet from
    /// then on is marked, none before; non-ECT packets never are.
    #[test]
    fn marks_every_ect_packet_exactly_while_the_average_is_above_the_threshold() {
        let mut q = cw(5.0, 0.01, BufferLimit::Unlimited);
        let crossing = ((1.0f64 - 5.0 / 20.0).ln() / 0.99f64.ln()).ceil() as usize;
        assert_eq!(crossing, 29);
        for n in 1..=200 {
            let a = q.admit(0, waiting(20), None, &packet(true));
            let want = if n >= crossing { Admission::EnqueueMarked } else { Admission::Enqueue };
            assert_eq!(a, want, "arrival {n}, average {}", q.average.value());
        }
        assert_eq!(q.admit(0, waiting(20), None, &packet(false)), Admission::Enqueue);
        // The queue drains: the average falls back below 5 and marking stops.
        let mut last = Admission::EnqueueMarked;
        for _ in 0..1000 {
            last = q.admit(0, waiting(0), None, &packet(true));
        }
        assert_eq!(last, Admission::Enqueue);
        assert!(q.average.value() < 5.0);
    }

    #[test]
    fn the_buffer_is_the_hard_limit() {
        let mut q = cw(0.0, 0.5, BufferLimit::Packets(4));
        assert_eq!(q.admit(0, waiting(4), None, &packet(true)), Admission::Drop);
        assert_eq!(q.admit(0, waiting(3), None, &packet(true)), Admission::EnqueueMarked);
    }

    #[test]
    fn a_threshold_above_the_buffer_or_a_weight_outside_the_open_interval_is_refused() {
        let build_with = |threshold: &str, w_q: &str, buffer| {
            let mut p = Params::new();
            for (d, text) in DESCRIPTOR.parameters.iter().zip([threshold, w_q, "500B"]) {
                p.insert(d.name, d.parse_text(text).unwrap_or_else(|e| panic!("{e}")));
            }
            let link = QueueLink { buffer, rate_bps: 1_000_000, rng: RngStream::new(1, "t") };
            build(&p, link).err().map(|e| e.name)
        };
        assert_eq!(build_with("20", "0.002", BufferLimit::Packets(20)), None);
        assert_eq!(build_with("21", "0.002", BufferLimit::Packets(20)).as_deref(), Some("threshold"));
        assert_eq!(build_with("5", "0", BufferLimit::Packets(20)).as_deref(), Some("w_q"));
        assert_eq!(build_with("5", "1", BufferLimit::Packets(20)).as_deref(), Some("w_q"));
    }
}
