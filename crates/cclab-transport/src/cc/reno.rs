//! Reno congestion avoidance: RFC 5681 §3.1 (slow start and congestion avoidance)
//! and §3.2 equation (4) for ssthresh after a loss.
//!
//! - Slow start (cwnd < ssthresh): `cwnd += min(N, SMSS)` per ACK, N = bytes newly
//!   acknowledged; in segments `cwnd += min(acked, 1)`.
//! - Congestion avoidance: `cwnd += SMSS*SMSS/cwnd` per ACK (RFC 5681 eq. 3), i.e.
//!   `cwnd += 1/cwnd` in segments: about one segment per RTT without delayed ACKs.
//! - Loss: `ssthresh = max(FlightSize / 2, 2*SMSS)` (eq. 4), or half the pipe or
//!   cwnd if the flow's `ssthresh_basis` says so; the window after a
//!   fast retransmit is ssthresh (recovery then adds its own inflation), after a
//!   timeout the loss window of one segment (§3.1).
//! - A congestion mark (ECN-Echo) is answered like a loss, without a
//!   retransmission, and an ACK echoing a mark does not grow cwnd (RFC 3168 §6.1.2).

use super::{
    AckSample, CcBuilder, CcDescriptor, CongestionControl, CongestionEvent, EcnUse, EventKind, Response,
    Window,
};
use cclab_wire::{Descriptor, ParamError, Params, Role};

pub const DESCRIPTOR: CcDescriptor = Descriptor {
    name: "reno",
    role: Role::CongestionControl,
    summary: "AIMD: slow start, +1 segment per RTT, ssthresh = max(FlightSize/2, 2) on loss",
    source: "RFC 5681 §3.1, eq. (3) and (4); RFC 3168 §6.1.2 for congestion marks",
    parameters: &[],
    metrics: &[],
    build: CcBuilder { build, paces_itself: false, ecn: EcnUse::Optional },
};

fn build(_: &Params) -> Result<Box<dyn CongestionControl>, ParamError> {
    Ok(Box::new(Reno))
}

#[derive(Debug, Default)]
pub struct Reno;

impl Reno {
    /// The RFC 5681 per-ACK increase, shared by algorithms that fall back to Reno.
    pub fn increase(w: &mut Window, acked: u64) {
        if acked == 0 {
            return;
        }
        if w.in_slow_start() {
            w.cwnd += (acked as f64).min(1.0);
        } else {
            w.cwnd += 1.0 / w.cwnd;
        }
    }

    /// RFC 5681 eq. (4), applied to the event's basis (FlightSize unless the
    /// flow chose another).
    pub fn halved(basis: f64) -> f64 {
        (basis / 2.0).max(2.0)
    }
}

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }

    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        if ack.opens_window() {
            Self::increase(w, ack.acked);
        }
    }

    /// Eq. (4) for every kind of event; after a timeout the window is the loss
    /// window of one segment (§3.1), otherwise the new ssthresh (§3.2 step 2,
    /// RFC 3168 §6.1.2 for a mark).
    fn on_congestion(&mut self, _w: &Window, event: &CongestionEvent) -> Response {
        let ssthresh = Self::halved(event.basis);
        let cwnd = if event.kind == EventKind::Timeout { 1.0 } else { ssthresh };
        Response::Reduce { ssthresh, cwnd }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::AckPhase;
    use crate::cc::EventKind;

    fn ack(acked: u64, phase: AckPhase) -> AckSample {
        let mut a = AckSample::new(0, 1000);
        a.acked = acked;
        a.phase = phase;
        a
    }

    #[test]
    fn slow_start_adds_at_most_one_segment_per_ack() {
        let mut s = Window { cwnd: 2.0, ssthresh: 100.0 };
        Reno.on_ack(&mut s, &ack(1, AckPhase::Open));
        assert_eq!(s.cwnd, 3.0);
        // A delayed ACK covering two segments still adds one SMSS (RFC 5681 §3.1).
        Reno.on_ack(&mut s, &ack(2, AckPhase::Open));
        assert_eq!(s.cwnd, 4.0);
    }

    #[test]
    fn congestion_avoidance_adds_one_over_cwnd_per_ack() {
        let mut s = Window { cwnd: 10.0, ssthresh: 5.0 };
        Reno.on_ack(&mut s, &ack(1, AckPhase::Open));
        assert!((s.cwnd - 10.1).abs() < 1e-12);
        // One window of ACKs adds about one segment.
        let mut s = Window { cwnd: 10.0, ssthresh: 5.0 };
        for _ in 0..10 {
            Reno.on_ack(&mut s, &ack(1, AckPhase::Open));
        }
        assert!((s.cwnd - 10.0 - 1.0).abs() < 0.05, "{}", s.cwnd);
    }

    #[test]
    fn ssthresh_at_entry_to_slow_start_boundary_uses_congestion_avoidance() {
        // cwnd == ssthresh: RFC 5681 allows either; we use congestion avoidance.
        let mut s = Window { cwnd: 8.0, ssthresh: 8.0 };
        Reno.on_ack(&mut s, &ack(1, AckPhase::Open));
        assert!((s.cwnd - 8.125).abs() < 1e-12);
    }

    #[test]
    fn no_growth_in_recovery_or_on_duplicate_acks() {
        let mut s = Window { cwnd: 10.0, ssthresh: 5.0 };
        Reno.on_ack(&mut s, &ack(3, AckPhase::Recovery));
        Reno.on_ack(&mut s, &ack(0, AckPhase::Open));
        assert_eq!(s.cwnd, 10.0);
    }

    #[test]
    fn no_growth_on_an_ack_echoing_a_congestion_mark() {
        let mut s = Window { cwnd: 10.0, ssthresh: 5.0 };
        let mut marked = ack(1, AckPhase::Open);
        marked.ece = true;
        Reno.on_ack(&mut s, &marked);
        assert_eq!(s.cwnd, 10.0);
    }

    #[test]
    fn ssthresh_is_half_the_flight_but_at_least_two() {
        let s = Window { cwnd: 40.0, ssthresh: 100.0 };
        let loss = |flight| CongestionEvent::new(0, EventKind::FastRetransmit, flight, 1000);
        assert_eq!(Reno.on_congestion(&s, &loss(30)), Response::Reduce { ssthresh: 15.0, cwnd: 15.0 });
        assert_eq!(Reno.on_congestion(&s, &loss(3)), Response::Reduce { ssthresh: 2.0, cwnd: 2.0 });
    }

    #[test]
    fn a_timeout_leaves_a_loss_window_of_one_segment() {
        let s = Window { cwnd: 40.0, ssthresh: 100.0 };
        let timeout = CongestionEvent::new(0, EventKind::Timeout, 30, 1000);
        assert_eq!(Reno.on_congestion(&s, &timeout), Response::Reduce { ssthresh: 15.0, cwnd: 1.0 });
    }

    #[test]
    fn a_congestion_mark_halves_like_a_loss() {
        let s = Window { cwnd: 40.0, ssthresh: 100.0 };
        let mark = CongestionEvent::new(0, EventKind::Mark, 40, 1000);
        assert_eq!(Reno.on_congestion(&s, &mark), Response::Reduce { ssthresh: 20.0, cwnd: 20.0 });
    }
}
