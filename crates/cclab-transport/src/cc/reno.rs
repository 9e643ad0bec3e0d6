//! Reno congestion avoidance: RFC 5681 §3.1 (slow start and congestion avoidance)
//! and §3.2 equation (4) for ssthresh after a loss.
//!
//! - Slow start (cwnd < ssthresh): `cwnd += min(N, SMSS)` per ACK, N = bytes newly
//!   acknowledged; in segments `cwnd += min(acked, 1)`.
//! - Congestion avoidance: `cwnd += SMSS*SMSS/cwnd` per ACK (RFC 5681 eq. 3), i.e.
//!   `cwnd += 1/cwnd` in segments: about one segment per RTT without delayed ACKs.
//! - Loss: `ssthresh = max(FlightSize / 2, 2*SMSS)` (eq. 4).

use super::{AckPhase, AckSample, CcState, CongestionControl, LossEvent};

#[derive(Debug, Default)]
pub struct Reno;

impl Reno {
    /// The RFC 5681 per-ACK increase, shared by algorithms that fall back to Reno.
    pub fn increase(state: &mut CcState, acked: u64) {
        if acked == 0 {
            return;
        }
        if state.in_slow_start() {
            state.cwnd += (acked as f64).min(1.0);
        } else {
            state.cwnd += 1.0 / state.cwnd;
        }
    }

    /// RFC 5681 eq. (4).
    pub fn halved_flight(flight: u64) -> f64 {
        (flight as f64 / 2.0).max(2.0)
    }
}

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }

    fn on_ack(&mut self, state: &mut CcState, ack: &AckSample) {
        if ack.phase == AckPhase::Open {
            Self::increase(state, ack.acked);
        }
    }

    fn ssthresh_on_loss(&mut self, _state: &CcState, loss: &LossEvent) -> f64 {
        Self::halved_flight(loss.flight)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::LossKind;

    fn ack(acked: u64, phase: AckPhase) -> AckSample {
        let mut a = AckSample::new(0, 1000);
        a.acked = acked;
        a.phase = phase;
        a
    }

    #[test]
    fn slow_start_adds_at_most_one_segment_per_ack() {
        let mut s = CcState { cwnd: 2.0, ssthresh: 100.0 };
        Reno.on_ack(&mut s, &ack(1, AckPhase::Open));
        assert_eq!(s.cwnd, 3.0);
        // A delayed ACK covering two segments still adds one SMSS (RFC 5681 §3.1).
        Reno.on_ack(&mut s, &ack(2, AckPhase::Open));
        assert_eq!(s.cwnd, 4.0);
    }

    #[test]
    fn congestion_avoidance_adds_one_over_cwnd_per_ack() {
        let mut s = CcState { cwnd: 10.0, ssthresh: 5.0 };
        Reno.on_ack(&mut s, &ack(1, AckPhase::Open));
        assert!((s.cwnd - 10.1).abs() < 1e-12);
        // One window of ACKs adds about one segment.
        let mut s = CcState { cwnd: 10.0, ssthresh: 5.0 };
        for _ in 0..10 {
            Reno.on_ack(&mut s, &ack(1, AckPhase::Open));
        }
        assert!((s.cwnd - 10.0 - 1.0).abs() < 0.05, "{}", s.cwnd);
    }

    #[test]
    fn ssthresh_at_entry_to_slow_start_boundary_uses_congestion_avoidance() {
        // cwnd == ssthresh: RFC 5681 allows either; we use congestion avoidance.
        let mut s = CcState { cwnd: 8.0, ssthresh: 8.0 };
        Reno.on_ack(&mut s, &ack(1, AckPhase::Open));
        assert!((s.cwnd - 8.125).abs() < 1e-12);
    }

    #[test]
    fn no_growth_in_recovery_or_on_duplicate_acks() {
        let mut s = CcState { cwnd: 10.0, ssthresh: 5.0 };
        Reno.on_ack(&mut s, &ack(3, AckPhase::Recovery));
        Reno.on_ack(&mut s, &ack(0, AckPhase::Open));
        assert_eq!(s.cwnd, 10.0);
    }

    #[test]
    fn ssthresh_is_half_the_flight_but_at_least_two() {
        let s = CcState { cwnd: 40.0, ssthresh: 100.0 };
        let loss = |flight| LossEvent::new(0, LossKind::FastRetransmit, flight, 1000);
        assert_eq!(Reno.ssthresh_on_loss(&s, &loss(30)), 15.0);
        assert_eq!(Reno.ssthresh_on_loss(&s, &loss(3)), 2.0);
    }
}
