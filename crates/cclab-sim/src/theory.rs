//! Analytic throughput models of a long-lived Reno-style flow under random
//! loss, for validating the simulator (reference notes §10).
//!
//! - Mathis et al., CCR 27(3) 1997: `B = (MSS/RTT) * C / sqrt(p)`; C = sqrt(3/2)
//!   = 1.22 for periodic loss, about 1.31 for Bernoulli loss (one ACK per packet).
//! - Padhye, Firoiu, Towsley, Kurose, SIGCOMM 1998 ("PFTK"), full model with
//!   triple-duplicate and timeout loss indications, `b` packets per ACK, initial
//!   timeout `T0` and receiver window `Wmax`.
//!
//! Both return packets per second.

/// Mathis: `C / (RTT * sqrt(p))` packets per second.
pub fn mathis_pkts_per_s(p: f64, rtt_s: f64, c: f64) -> f64 {
    c / (rtt_s * p.sqrt())
}

/// PFTK full model (Padhye et al. 1998, eq. 33 with Q-hat of eq. 30).
pub fn padhye_pkts_per_s(p: f64, rtt_s: f64, t0_s: f64, b: f64, wmax: f64) -> f64 {
    let q = 1.0 - p;
    let f =
        1.0 + p + 2.0 * p.powi(2) + 4.0 * p.powi(3) + 8.0 * p.powi(4) + 16.0 * p.powi(5) + 32.0 * p.powi(6);
    let a = (2.0 + b) / (3.0 * b);
    let ew = a + (8.0 * q / (3.0 * b * p) + a * a).sqrt();
    let q_hat = |w: f64| -> f64 {
        let num = (1.0 - q.powi(3)) * (1.0 + q.powi(3) * (1.0 - q.powf(w - 3.0)));
        let den = 1.0 - q.powf(w);
        (num / den).min(1.0)
    };
    if ew < wmax {
        let qw = q_hat(ew);
        (q / p + ew + qw / q) / (rtt_s * (b / 2.0 * ew + 1.0) + qw * t0_s * f / q)
    } else {
        let qw = q_hat(wmax);
        (q / p + wmax + qw / q) / (rtt_s * (b / 8.0 * wmax + q / (p * wmax) + 2.0) + qw * t0_s * f / q)
    }
}

/// Jain's fairness index of a set of allocations (1 = perfectly fair).
pub fn jain_index(x: &[f64]) -> f64 {
    let sum: f64 = x.iter().sum();
    let sq: f64 = x.iter().map(|v| v * v).sum();
    if sq == 0.0 {
        return 1.0;
    }
    sum * sum / (x.len() as f64 * sq)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference values (reference notes §10.2: RTT 0.1 s, T0 1 s, no Wmax limit).
    #[test]
    fn padhye_full_model_matches_reference_table() {
        let cases = [
            (1e-4, 1.0, 1219.59),
            (1e-4, 2.0, 861.63),
            (1e-3, 1.0, 376.60),
            (1e-3, 2.0, 265.57),
            (1e-2, 1.0, 98.83),
            (1e-2, 2.0, 69.52),
            (3e-2, 2.0, 29.78),
            (1e-1, 2.0, 9.11),
        ];
        for (p, b, want) in cases {
            let got = padhye_pkts_per_s(p, 0.1, 1.0, b, f64::INFINITY);
            assert!((got - want).abs() / want < 2e-3, "p={p} b={b}: {got} vs {want}");
        }
    }

    #[test]
    fn mathis_periodic_constant() {
        let c = (1.5f64).sqrt();
        assert!((mathis_pkts_per_s(1e-3, 0.1, c) - 387.30).abs() < 0.01);
    }

    #[test]
    fn receiver_window_caps_padhye() {
        let capped = padhye_pkts_per_s(1e-4, 0.1, 1.0, 1.0, 20.0);
        assert!(capped <= 20.0 / 0.1 + 1e-9, "{capped}");
    }

    #[test]
    fn jain_index_extremes() {
        assert!((jain_index(&[1.0, 1.0, 1.0]) - 1.0).abs() < 1e-12);
        assert!((jain_index(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
    }
}
