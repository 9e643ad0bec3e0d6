//! The steady-state throughput of a Reno sender under loss: Padhye, Firoiu,
//! Towsley and Kurose, "Modeling TCP Throughput: A Simple Model and its
//! Empirical Validation", SIGCOMM 1998 ("PFTK"); the approximation is seed
//! paper 004's eq. (1), which RTBA evaluates once per RTT. Both forms as
//! written in the reference notes (algorithms.md §10.2), whose test vectors
//! the tests reproduce.
//!
//! Rates are in packets per second; multiply by the segment size for bytes.
//! `p` is the loss-event rate (loss indications per packet sent), `b` the
//! packets acknowledged per ACK, `wm_segments` the receiver's window limit.
//!
//! Decisions where the sources are silent (the model assumes `p > 0` and a
//! positive RTT):
//! - **`p <= 0` (or NaN)**: no loss, so the window limit alone binds:
//!   `Wm / RTT`. The loss term would divide by zero.
//! - **`rtt <= 0` (or NaN)**: there is no RTT sample yet and the model has no
//!   meaning; the result is 0, "no estimate", rather than an infinite
//!   `Wm / 0`. RTBA calls it only once it has an RTT.
//! - **`p >= 1`** is clamped to 1 in the approximation (finite and small);
//!   the full model is 0 there (every packet lost, its `1 - p` terms vanish).
//! - A negative RTO or `Wm` counts as 0; a `b` below 1 is taken as given
//!   (the descriptor of RTBA allows 1..=8).

/// Seed paper 004 eq. (1), the PFTK approximation, in packets per second:
/// `min(Wm/RTT, 1 / (RTT sqrt(2bp/3) + RTO min(1, 3 sqrt(3bp/8)) p (1 + 32p²)))`.
pub fn expected_rate(p: f64, rtt_s: f64, rto_s: f64, wm_segments: f64, b: f64) -> f64 {
    let Some(window_limit) = window_limit(rtt_s, wm_segments) else { return 0.0 };
    if p.is_nan() || p <= 0.0 {
        return window_limit;
    }
    let p = p.min(1.0);
    let rto_s = rto_s.max(0.0);
    let fast_retransmit = rtt_s * (2.0 * b * p / 3.0).sqrt();
    let timeouts = rto_s * (3.0 * (3.0 * b * p / 8.0).sqrt()).min(1.0) * p * (1.0 + 32.0 * p * p);
    let loss_limit = 1.0 / (fast_retransmit + timeouts);
    // f64::min ignores a NaN operand and an infinite loss limit (b = 0) leaves the window's.
    window_limit.min(loss_limit)
}

/// The PFTK full model (algorithms.md §10.2, "numerically self-consistent
/// with the approximation", pinned to its test vectors), in packets per
/// second. Not what RTBA uses; kept to compare the approximation against.
pub fn full_model(p: f64, rtt_s: f64, rto_s: f64, wm_segments: f64, b: f64) -> f64 {
    let Some(window_limit) = window_limit(rtt_s, wm_segments) else { return 0.0 };
    if p.is_nan() || p <= 0.0 {
        return window_limit;
    }
    if p >= 1.0 {
        return 0.0;
    }
    let q = 1.0 - p;
    let rto_s = rto_s.max(0.0);
    let wm = wm_segments.max(0.0);
    let c = (2.0 + b) / (3.0 * b);
    let expected_window = c + (8.0 * q / (3.0 * b * p) + c * c).sqrt();
    // Q̂(w): the probability that a loss in a window of w is detected by a timeout.
    let timeout_share = |w: f64| {
        ((1.0 - q.powi(3)) * (1.0 + q.powi(3) * (1.0 - q.powf(w - 3.0))) / (1.0 - q.powf(w))).min(1.0)
    };
    let backoff =
        1.0 + p + 2.0 * p.powi(2) + 4.0 * p.powi(3) + 8.0 * p.powi(4) + 16.0 * p.powi(5) + 32.0 * p.powi(6);
    if expected_window < wm {
        let w = expected_window;
        let qw = timeout_share(w);
        (q / p + w + qw / q) / (rtt_s * (b / 2.0 * w + 1.0) + qw * rto_s * backoff / q)
    } else {
        let qw = timeout_share(wm);
        (q / p + wm + qw / q) / (rtt_s * (b / 8.0 * wm + q / (p * wm) + 2.0) + qw * rto_s * backoff / q)
    }
}

/// `Wm / RTT`, or `None` when there is no RTT.
fn window_limit(rtt_s: f64, wm_segments: f64) -> Option<f64> {
    (rtt_s > 0.0).then(|| wm_segments.max(0.0) / rtt_s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No receiver limit in the reference's test vectors.
    const UNLIMITED: f64 = 1e12;

    /// algorithms.md §10.2 test vectors (RTT 0.1 s, T0 1 s, no Wmax limit):
    /// (p, b, PFTK full, PFTK approx) in packets per second.
    const TABLE: [(f64, f64, f64, f64); 8] = [
        (1e-4, 1.0, 1219.59, 1222.00),
        (1e-4, 2.0, 861.63, 864.08),
        (1e-3, 1.0, 376.60, 378.78),
        (1e-3, 2.0, 265.57, 267.83),
        (1e-2, 1.0, 98.83, 99.92),
        (1e-2, 2.0, 69.52, 70.65),
        (3e-2, 2.0, 29.78, 29.51),
        (1e-1, 2.0, 9.11, 6.90),
    ];

    fn within(got: f64, want: f64, rel: f64) -> bool {
        (got - want).abs() <= rel * want
    }

    #[test]
    fn approximation_matches_every_reference_row() {
        for (p, b, _, approx) in TABLE {
            let got = expected_rate(p, 0.1, 1.0, UNLIMITED, b);
            assert!(within(got, approx, 1e-3), "p {p} b {b}: {got} vs {approx}");
        }
    }

    #[test]
    fn full_model_matches_every_reference_row() {
        for (p, b, full, _) in TABLE {
            let got = full_model(p, 0.1, 1.0, UNLIMITED, b);
            assert!(within(got, full, 1e-3), "p {p} b {b}: {got} vs {full}");
        }
    }

    /// With Wm = 20 segments and RTT 0.1 s the window allows 200 pkt/s: it
    /// binds at p = 1e-3 (model 378.78) and not at p = 1e-2 (99.92).
    #[test]
    fn receiver_window_caps_the_rate() {
        assert_eq!(expected_rate(1e-3, 0.1, 1.0, 20.0, 1.0), 200.0);
        assert!(within(expected_rate(1e-2, 0.1, 1.0, 20.0, 1.0), 99.92, 1e-3));
        // Full model, second branch (E[W] = 18.9 at p = 1e-2, b = 1 is not below Wm = 10):
        // below the window's own 100 pkt/s, as fast-retransmit and timeout pauses cost time.
        let capped = full_model(1e-2, 0.1, 1.0, 10.0, 1.0);
        assert!(capped > 50.0 && capped < 100.0, "{capped}");
    }

    #[test]
    fn no_loss_gives_the_window_over_the_rtt() {
        // 44 segments per 0.05 s = 880 pkt/s, no division by zero.
        assert_eq!(expected_rate(0.0, 0.05, 1.0, 44.0, 1.0), 880.0);
        assert_eq!(expected_rate(f64::NAN, 0.05, 1.0, 44.0, 1.0), 880.0);
        assert_eq!(full_model(0.0, 0.05, 1.0, 44.0, 2.0), 880.0);
    }

    #[test]
    fn no_rtt_gives_no_estimate() {
        for rtt in [0.0, -1.0, f64::NAN] {
            assert_eq!(expected_rate(1e-2, rtt, 1.0, 44.0, 1.0), 0.0);
            assert_eq!(full_model(1e-2, rtt, 1.0, 44.0, 1.0), 0.0);
        }
    }

    #[test]
    fn extreme_inputs_stay_finite() {
        // p = 1: 1 / (0.1 sqrt(2/3) + 1 x 1 x 1 x 33) = 0.03026 pkt/s.
        let all_lost = expected_rate(1.0, 0.1, 1.0, UNLIMITED, 1.0);
        assert!(within(all_lost, 1.0 / (0.1 * (2.0f64 / 3.0).sqrt() + 33.0), 1e-12));
        assert_eq!(expected_rate(5.0, 0.1, 1.0, UNLIMITED, 1.0), all_lost);
        assert_eq!(full_model(1.0, 0.1, 1.0, UNLIMITED, 1.0), 0.0);
        // A zero RTO leaves the fast-retransmit term: sqrt(3/(2bp))/RTT = 122.47 at p = 1e-2.
        assert!(within(expected_rate(1e-2, 0.1, 0.0, UNLIMITED, 1.0), 122.474, 1e-4));
    }
}
