//! The seed paper's congestion-prediction flow window (Park et al. 2011,
//! §III.2, eq. 7-10 and Fig. 7), after TCP Vegas: at each rate-control
//! step after slow start, compare the window's rate at the previous step's
//! RTT with its rate at the current RTT,
//!
//! ```text
//! Expected = W / prevRTT      (eq. 7)
//! Actual   = W / RTT          (eq. 8)
//! nDiff    = Expected - Actual, not multiplied by an RTT (eq. 9, see below)
//! nDiff > beta            -> W = 0.9 x receive rate x (RTT + SYN)   (decrease)
//! alpha <= nDiff <= beta  -> W unchanged                            (keep)
//! nDiff < alpha           -> W = 1.1 x receive rate x (RTT + SYN)   (increase)
//! ```
//!
//! and `prevRTT = RTT` afterwards, where native UDT always sets
//! `W = receive rate x (RTT + SYN) + 16`.
//!
//! Readings of an ambiguous text (documented choices, the first a parameter):
//! - **eq. 9** as printed divides `(Actual - Expected)` by
//!   `(W/prevRTT - W/RTT)`, which is -1 whatever the state. The text says
//!   nDiff is the difference of the two rates, left unmultiplied by the RTT
//!   because UDT's windows are large; so nDiff = Expected - Actual, positive
//!   when the RTT grew (queueing builds: decrease above beta), as in Vegas.
//!   A rate difference needs a time unit, which the paper does not give:
//!   `ndiff_unit` (default packets per millisecond, the only unit in which
//!   the paper's thresholds 0.5 to 4 separate the cases: at 1 Gbit/s and
//!   100 ms, a 2 % RTT rise gives nDiff of about 1.8 per ms, but 1800 per
//!   second and 0.002 per microsecond).
//! - **Fig. 7's windows** are printed `RcvRate x 0.9 / (Interval + RTT) x
//!   1e6`, a division where UDT multiplies (`RcvRate / 1e6 x (RTT +
//!   Interval)`); the evident intent, and the issue's reading, is 0.9 and
//!   1.1 times UDT's own window. Fig. 7 drops UDT's `+ 16`; so does the model.
//! - **A floor.** Without the `+ 16`, a low receive-rate report (UDT starts
//!   from 16 packets per second) makes the window less than one packet, and
//!   the sender then only moves on EXP timeouts: the literal reading
//!   deadlocks (seen in the model: 288 packets in 60 s). The window is kept
//!   at least `window_floor` packets (default 16, native UDT's own minimum).
//! - The RTT is the sender's smoothed RTT, the one UDT's congestion control
//!   sees and native UDT uses in the same formula; the first step after
//!   slow start, with no previous RTT, uses UDT's own rule.

use super::daimd::{self, Decrease, Window};
use super::UdtCcDescriptor;
use cclab_wire::{Descriptor, Role};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Decrease,
    Keep,
    Increase,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Prediction {
    pub alpha: f64,
    pub beta: f64,
    /// Microseconds in the time unit of nDiff (1000 for packets per millisecond).
    pub unit_us: f64,
    /// The least window, packets.
    pub floor: f64,
}

impl Prediction {
    /// nDiff for window `w` (packets) between RTTs in microseconds.
    pub fn n_diff(&self, w: f64, prev_rtt_us: f64, rtt_us: f64) -> f64 {
        let per_unit = |rtt_us: f64| w / (rtt_us.max(1.0) / self.unit_us);
        per_unit(prev_rtt_us) - per_unit(rtt_us)
    }

    pub fn decide(&self, w: f64, prev_rtt_us: f64, rtt_us: f64) -> Decision {
        let d = self.n_diff(w, prev_rtt_us, rtt_us);
        if d > self.beta {
            Decision::Decrease
        } else if d < self.alpha {
            Decision::Increase
        } else {
            Decision::Keep
        }
    }

    /// The window after `decision`, from UDT's `receive rate x (RTT + SYN)`
    /// (`native_base`, without its `+ 16`), or `None` to keep the window.
    pub fn window(&self, decision: Decision, native_base: f64) -> Option<f64> {
        let scaled = match decision {
            Decision::Decrease => 0.9 * native_base,
            Decision::Keep => return None,
            Decision::Increase => 1.1 * native_base,
        };
        Some(scaled.max(self.floor))
    }
}

pub const DESCRIPTOR: UdtCcDescriptor = Descriptor {
    name: "udt_prediction",
    role: Role::CongestionControl,
    summary: "UDT DAIMD with the seed's Vegas-style congestion-prediction flow window (alpha 1.5, beta 3.5)",
    source: "Park et al. 2011 (seed 002) §III.2, eq. 7-10, Fig. 7; UDT 4.11 src/ccc.cpp",
    parameters: &daimd::parameters(Decrease::Fixed, Window::Prediction),
    metrics: daimd::PREDICTION_METRICS,
    build: daimd::build,
};

#[cfg(test)]
mod tests {
    use super::*;

    const SEED: Prediction = Prediction { alpha: 1.5, beta: 3.5, unit_us: 1000.0, floor: 16.0 };

    #[test]
    fn n_diff_is_the_rate_difference_per_millisecond() {
        // W = 9000 packets: 90 per ms at 100 ms, 88.235 at 102 ms.
        let d = SEED.n_diff(9000.0, 100_000.0, 102_000.0);
        assert!((d - (90.0 - 9000.0 / 102.0)).abs() < 1e-9, "{d}");
        assert!(SEED.n_diff(9000.0, 100_000.0, 100_000.0).abs() < 1e-12);
        assert!(SEED.n_diff(9000.0, 100_000.0, 98_000.0) < 0.0, "a falling RTT gives a negative nDiff");
    }

    #[test]
    fn decisions_follow_eq_10_with_the_bounds_kept() {
        // Choose RTTs that give nDiff exactly at and around the thresholds.
        let w = 1000.0;
        let rtt_for = |d: f64| 1000.0 * w / (w / 100.0 - d); // prev RTT 100 ms = 100 000 µs
        let at = |d: f64| SEED.decide(w, 100_000.0, rtt_for(d));
        assert_eq!(at(0.0), Decision::Increase, "stable RTT: below alpha");
        assert_eq!(at(1.4), Decision::Increase);
        assert_eq!(at(1.6), Decision::Keep);
        assert_eq!(at(3.4), Decision::Keep);
        assert_eq!(at(3.6), Decision::Decrease);
        assert_eq!(at(-5.0), Decision::Increase);
    }

    #[test]
    fn the_new_window_is_nine_or_eleven_tenths_of_udts_without_its_16() {
        assert_eq!(SEED.window(Decision::Decrease, 1000.0), Some(900.0));
        assert_eq!(SEED.window(Decision::Increase, 1000.0), Some(1100.0));
        assert_eq!(SEED.window(Decision::Keep, 1000.0), None);
        assert_eq!(SEED.window(Decision::Decrease, 10.0), Some(16.0), "the floor");
    }

    #[test]
    fn the_unit_scales_n_diff() {
        let per_s = Prediction { unit_us: 1e6, ..SEED };
        let per_ms = SEED.n_diff(9000.0, 100_000.0, 102_000.0);
        assert!((per_s.n_diff(9000.0, 100_000.0, 102_000.0) - 1000.0 * per_ms).abs() < 1e-6);
    }
}
