//! Retransmission timer per RFC 6298.
//!
//! - §2.2 first sample R: SRTT = R, RTTVAR = R/2.
//! - §2.3 later samples R': RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R'| (with the old
//!   SRTT), then SRTT = 7/8 SRTT + 1/8 R'.
//! - RTO = SRTT + max(G, 4 RTTVAR), rounded up to the minimum (§2.4; 1 s in the
//!   RFC, configurable) and capped at the maximum (§2.5, at least 60 s).
//! - §5.5 on expiry RTO doubles (exponential back-off) up to the maximum; the
//!   back-off is kept until a valid sample arrives (Karn).
//!
//! Before any sample RTO is the initial value (§2.1, 1 s).

use cclab_wire::Time;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RttEstimator {
    srtt: Time,
    rttvar: Time,
    has_sample: bool,
    base_rto: Time,
    backoff: u32,
    min_rto: Time,
    max_rto: Time,
    granularity: Time,
    latest: Time,
    min_rtt: Time,
}

impl RttEstimator {
    pub fn new(initial_rto: Time, min_rto: Time, max_rto: Time, granularity: Time) -> Self {
        Self {
            srtt: 0,
            rttvar: 0,
            has_sample: false,
            base_rto: initial_rto,
            backoff: 0,
            min_rto,
            max_rto,
            granularity,
            latest: 0,
            min_rtt: Time::MAX,
        }
    }

    pub fn on_sample(&mut self, r: Time) {
        if self.has_sample {
            let delta = self.srtt.abs_diff(r);
            self.rttvar = (3 * self.rttvar + delta) / 4;
            self.srtt = (7 * self.srtt + r) / 8;
        } else {
            self.srtt = r;
            self.rttvar = r / 2;
            self.has_sample = true;
        }
        self.latest = r;
        self.min_rtt = self.min_rtt.min(r);
        let rto = self.srtt + self.granularity.max(4 * self.rttvar);
        self.base_rto = rto.clamp(self.min_rto, self.max_rto);
        self.backoff = 0;
    }

    /// The current timeout, back-off included.
    pub fn rto(&self) -> Time {
        self.backed_off(self.backoff)
    }

    /// The timeout without back-off doubled `times` times, at most the maximum
    /// (RFC 6298 §5.5 for a timer of its own, as Decoupled TCP's per-segment ones).
    pub fn backed_off(&self, times: u32) -> Time {
        let factor = 1u64.checked_shl(times).unwrap_or(u64::MAX);
        self.base_rto.saturating_mul(factor).min(self.max_rto)
    }

    /// The timeout without back-off: SRTT + max(G, 4 RTTVAR), clamped.
    pub fn base_rto(&self) -> Time {
        self.base_rto
    }

    /// Doubles the timeout after an expiry (RFC 6298 §5.5).
    pub fn back_off(&mut self) {
        if self.rto() < self.max_rto {
            self.backoff += 1;
        }
    }

    pub fn srtt(&self) -> Time {
        self.srtt
    }

    pub fn rttvar(&self) -> Time {
        self.rttvar
    }

    pub fn latest(&self) -> Time {
        self.latest
    }

    /// Smallest sample so far (0 before the first).
    pub fn min_rtt(&self) -> Time {
        if self.has_sample {
            self.min_rtt
        } else {
            0
        }
    }

    pub fn has_sample(&self) -> bool {
        self.has_sample
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_wire::time::{millis, secs};

    fn est() -> RttEstimator {
        RttEstimator::new(secs(1), millis(200), secs(60), millis(1))
    }

    #[test]
    fn initial_rto_before_any_sample() {
        assert_eq!(est().rto(), secs(1));
    }

    #[test]
    fn first_sample_sets_srtt_and_half_variance() {
        let mut e = est();
        e.on_sample(millis(100));
        assert_eq!(e.srtt(), millis(100));
        assert_eq!(e.rttvar(), millis(50));
        // RTO = 100 + max(1, 4*50) = 300 ms.
        assert_eq!(e.rto(), millis(300));
    }

    #[test]
    fn later_samples_use_alpha_one_eighth_beta_one_quarter_with_old_srtt() {
        let mut e = est();
        e.on_sample(millis(100));
        e.on_sample(millis(200));
        // RTTVAR = 3/4*50 + 1/4*|100-200| = 62.5; SRTT = 7/8*100 + 1/8*200 = 112.5.
        assert_eq!(e.rttvar(), 62_500_000);
        assert_eq!(e.srtt(), 112_500_000);
        assert_eq!(e.rto(), 112_500_000 + 4 * 62_500_000);
    }

    #[test]
    fn rto_is_floored_at_the_minimum() {
        let mut e = RttEstimator::new(secs(1), secs(1), secs(60), millis(1));
        e.on_sample(millis(40));
        assert_eq!(e.rto(), secs(1));
    }

    #[test]
    fn granularity_bounds_the_variance_term() {
        let mut e = RttEstimator::new(secs(1), 0, secs(60), millis(10));
        for _ in 0..200 {
            e.on_sample(millis(40));
        }
        // RTTVAR decays to ~0, so RTO = SRTT + G.
        assert_eq!(e.rto(), millis(50));
    }

    #[test]
    fn backoff_doubles_up_to_the_maximum_and_a_sample_clears_it() {
        let mut e = est();
        e.on_sample(millis(100)); // 300 ms
        e.back_off();
        assert_eq!(e.rto(), millis(600));
        e.back_off();
        assert_eq!(e.rto(), millis(1200));
        for _ in 0..20 {
            e.back_off();
        }
        assert_eq!(e.rto(), secs(60));
        e.on_sample(millis(100));
        assert!(e.rto() < secs(1));
    }
}
