//! WABE, the wireless available-bandwidth estimate of Decoupled TCP (seed
//! paper 001, Kang and Mo, "Decoupled TCP: TCP for Wireless Networks", §2.2).
//!
//! The seed's diagnosis: on a lossy path the window stays small, ACKs arrive
//! in one cluster per round trip, and the long gap between clusters enters a
//! per-ACK estimate as a tiny sample that drags it down each round trip. Its
//! remedy filters the *inverse* of the ACK inter-arrival time,
//!
//!   IA <- (1 - g_IA) IA + g_IA / (t_k - t_{k-1}),
//!
//! and uses 1 / IA, the mean inter-arrival it implies, in place of the raw
//! interval in the estimate: BE_k = d_k / (1 / IA) = d_k IA, and
//! ABE <- (1 - g) ABE + g BE_k, the low pass the seed writes for the ABE.
//! A long gap adds only g_IA / gap to IA, so it barely moves the estimate;
//! short gaps dominate. The flip side, measured in the tests: ACKs compressed
//! closer than the bottleneck spaced their data (ACK compression, back-to-back
//! delayed ACKs) dominate just as strongly and make WABE read high.
//!
//! What the inverse buys, found in review: with ACKs of equal size, d x IA
//! has the long-run mean of d / gap, so WABE reads what any filter weighting
//! every ACK's d / gap alike reads (Westwood with a constant gain, as ns-3 and
//! UDT implement it, comes as close); it differs from that in a second
//! smoothing stage. What drags the paper's Westwood down is its Tustin filter,
//! whose weight grows with the time a sample covers, so one long gap outweighs
//! the cluster. The tests compare the three.
//!
//! Readings where the seed is silent: d_k is what the ACK newly reports
//! delivered ([`DeliveredBytes`], as for Westwood); both gains default to the
//! seed's "α below 0.1" bound, 0.1; the first ACK only starts the clock, the
//! first interval initialises IA and the first sample the estimate; ACKs at
//! the same instant are merged into the next sample, whose interval is then
//! the time since the last distinct arrival.

use super::{BandwidthEstimator, DeliveredBytes, EstimatorEntry};
use crate::cc::AckSample;
use cclab_wire::time::to_secs_f64;
use cclab_wire::{Metrics, ParamDefault, ParamError, ParamType, Parameter, Params, Time};

pub const ENTRY: EstimatorEntry = EstimatorEntry {
    name: "wabe",
    source: "Kang and Mo, Decoupled TCP: TCP for Wireless Networks (seed paper 001), §2.2",
    build,
};

pub const GAIN: Parameter = Parameter {
    name: "gain",
    ty: ParamType::Number,
    unit: "",
    min: 0.001,
    max: 0.999,
    default: ParamDefault::Value("0.1"),
    meaning: "weight of a new sample in the bandwidth estimate, ABE = (1 - gain) ABE + gain BE, in (0, 1)",
};

pub const IA_GAIN: Parameter = Parameter {
    name: "ia_gain",
    ty: ParamType::Number,
    unit: "",
    min: 0.001,
    max: 0.999,
    default: ParamDefault::Value("0.1"),
    meaning:
        "weight of a new inverse ACK inter-arrival time in IA = (1 - ia_gain) IA + ia_gain / gap, in (0, 1)",
};

fn build(p: &Params) -> Result<Box<dyn BandwidthEstimator>, ParamError> {
    let open = |name: &'static str| -> Result<f64, ParamError> {
        let g = p.number(name)?;
        if g <= 0.0 || g >= 1.0 {
            return Err(ParamError { name: name.into(), problem: "must lie in (0, 1)" });
        }
        Ok(g)
    };
    Ok(Box::new(Wabe::new(open("gain")?, open("ia_gain")?)))
}

#[derive(Debug)]
pub struct Wabe {
    gain: f64,
    ia_gain: f64,
    delivered: DeliveredBytes,
    /// IA, the filtered inverse inter-arrival time, per second (0 before the first interval).
    ia: f64,
    /// ABE, bytes per second (0 before the first sample).
    estimate: f64,
    last_arrival: Option<Time>,
    /// Bytes of ACKs that arrived at the same instant as the previous one.
    pending: u64,
}

impl Wabe {
    pub fn new(gain: f64, ia_gain: f64) -> Self {
        Self {
            gain,
            ia_gain,
            delivered: DeliveredBytes::default(),
            ia: 0.0,
            estimate: 0.0,
            last_arrival: None,
            pending: 0,
        }
    }

    /// The mean ACK inter-arrival time WABE uses, 1 / IA, in seconds (0 before the first interval).
    pub fn mean_gap(&self) -> f64 {
        if self.ia > 0.0 {
            1.0 / self.ia
        } else {
            0.0
        }
    }
}

/// An exponentially weighted average that starts at its first value.
fn ewma(average: f64, gain: f64, value: f64) -> f64 {
    if average == 0.0 {
        value
    } else {
        (1.0 - gain) * average + gain * value
    }
}

impl BandwidthEstimator for Wabe {
    fn name(&self) -> &'static str {
        "wabe"
    }

    fn on_ack(&mut self, ack: &AckSample) {
        self.pending += self.delivered.on_ack(ack);
        let Some(last) = self.last_arrival else {
            self.last_arrival = Some(ack.now);
            self.pending = 0;
            return;
        };
        if ack.now <= last {
            return;
        }
        self.ia = ewma(self.ia, self.ia_gain, 1.0 / to_secs_f64(ack.now - last));
        let sample = self.pending as f64 * self.ia;
        self.pending = 0;
        self.estimate = ewma(self.estimate, self.gain, sample);
        self.last_arrival = Some(ack.now);
    }

    fn estimate(&self) -> f64 {
        self.estimate
    }

    fn metrics(&self, out: &mut Metrics<'_>) {
        out.put("ack_gap", self.mean_gap());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimate::test_streams::{ack_at, clustered, steady, MSS};
    use crate::estimate::westwood::{Filter, Westwood};
    use cclab_wire::time::{micros, millis};

    fn wabe() -> Wabe {
        Wabe::new(0.1, 0.1)
    }

    /// By hand: intervals of 10 ms then 20 ms with one segment each. IA
    /// starts at 100/s, then 0.9 x 100 + 0.1 x 50 = 95/s; the estimate starts
    /// at 1000 x 100 B/s and moves to 0.9 x 1e5 + 0.1 x 1000 x 95.
    #[test]
    fn the_filters_follow_the_seed_by_hand() {
        let mut w = wabe();
        w.on_ack(&ack_at(0, millis(100)));
        assert_eq!(w.estimate(), 0.0, "the first ACK only starts the clock");
        w.on_ack(&ack_at(millis(10), millis(100)));
        assert!((w.ia - 100.0).abs() < 1e-9 && (w.estimate() - 1e5).abs() < 1e-6);
        w.on_ack(&ack_at(millis(30), millis(100)));
        assert!((w.ia - 95.0).abs() < 1e-9, "IA {}", w.ia);
        assert!((w.estimate() - (0.9e5 + 0.1 * 95_000.0)).abs() < 1e-6, "{}", w.estimate());
        assert!((w.mean_gap() - 1.0 / 95.0).abs() < 1e-12);
    }

    /// 1000 segments per second: within 0.1 % (every interval is the same, so
    /// both filters sit at their input).
    #[test]
    fn a_steady_stream_is_estimated_exactly() {
        let mut w = wabe();
        steady(0, millis(1), 2000, millis(100), |a| w.on_ack(a));
        assert!((w.estimate() / 1e6 - 1.0).abs() < 1e-3, "{}", w.estimate());
    }

    /// The seed's case: per 100 ms round trip a cluster of 10 ACKs 1 ms apart
    /// (the bottleneck's spacing: 1 MB/s), then silence. Averaged over the last
    /// cluster's ACKs, WABE reads 0.90 of the spacing inside the clusters
    /// (IA loses 10 % at each gap and regains it through the cluster), where
    /// the paper's Westwood (Tustin, 500 ms) reads 0.55: its weight for the
    /// one 91 ms sample outweighs the cluster. A constant-gain Westwood (0.9,
    /// ns-3's) also reads 0.90: weighting every ACK alike is what WABE shares
    /// with it; WABE swings 0.013 within the cluster, it 0.082 (the second
    /// stage).
    #[test]
    fn clustered_acks_leave_wabe_near_the_bottleneck_rate_where_tustin_westwood_sags() {
        let mut w = wabe();
        let mut tustin = Westwood::new(Filter::Tustin { tau: millis(500) });
        let mut constant = Westwood::new(Filter::Constant { alpha: 0.9 });
        let mut last = [Vec::new(), Vec::new(), Vec::new()];
        clustered(100, 10, millis(1), millis(100), |a| {
            w.on_ack(a);
            tustin.on_ack(a);
            constant.on_ack(a);
            if a.now >= millis(9900) {
                for (k, e) in [w.estimate(), tustin.estimate(), constant.estimate()].into_iter().enumerate() {
                    last[k].push(e / 1e6);
                }
            }
        });
        let mean = |v: &Vec<f64>| v.iter().sum::<f64>() / v.len() as f64;
        let spread = |v: &Vec<f64>| {
            v.iter().cloned().fold(f64::MIN, f64::max) - v.iter().cloned().fold(f64::MAX, f64::min)
        };
        let (wabe, tustin, constant) = (mean(&last[0]), mean(&last[1]), mean(&last[2]));
        eprintln!(
            "clustered ACKs, share of the bottleneck rate: WABE {wabe:.3} (spread {:.3}), Westwood Tustin {tustin:.3}, \
             Westwood constant {constant:.3} (spread {:.3})",
            spread(&last[0]),
            spread(&last[2])
        );
        assert!((0.8..=1.0).contains(&wabe), "WABE {wabe}");
        assert!(tustin < 0.7, "Westwood (Tustin) {tustin}");
        assert!((wabe - constant).abs() < 0.1, "WABE {wabe} vs constant-gain Westwood {constant}");
        assert!(spread(&last[0]) < spread(&last[2]), "the second stage smooths");
    }

    /// A pause of 2 s is one interval: IA drops by 10 % of its value at most,
    /// and the estimate by at most 10 %, where a per-ACK sample would be zero.
    #[test]
    fn a_pause_moves_the_estimate_by_at_most_its_gain() {
        let mut w = wabe();
        let end = steady(0, millis(1), 1000, millis(100), |a| w.on_ack(a));
        let before = w.estimate();
        w.on_ack(&ack_at(end + 2_000_000_000, millis(100)));
        // IA: 0.9 x 1000 + 0.1 x 0.5 per s; the estimate 0.9 x before + 0.1 x 1000 x IA: 0.99 x before.
        assert!(w.estimate() >= 0.985 * before, "{} from {before}", w.estimate());
        steady(end + 2_000_000_000, millis(1), 50, millis(100), |a| w.on_ack(a));
        assert!((w.estimate() / before - 1.0).abs() < 0.02, "recovered to {}", w.estimate());
    }

    /// ACK compression: the same 1 MB/s, but ACKs in pairs 10 us apart every
    /// 2 ms. The pairs' 100 000/s dominates IA, so WABE reads many times the
    /// rate (measured 50x), as any filter weighting each ACK's bytes over its
    /// gap alike would (a constant-gain one read 53x in review).
    #[test]
    fn compressed_acks_make_wabe_read_high() {
        let mut w = wabe();
        for k in 0..2000u64 {
            let t = k * millis(2);
            w.on_ack(&ack_at(t, millis(100)));
            w.on_ack(&ack_at(t + micros(10), millis(100)));
        }
        eprintln!("compressed ACKs at 1 MB/s: WABE {:.0} B/s", w.estimate());
        assert!(w.estimate() > 20.0 * 1e6, "{}", w.estimate());
    }

    /// ACKs at the same instant merge into the next sample.
    #[test]
    fn simultaneous_acks_are_merged() {
        let mut w = wabe();
        w.on_ack(&ack_at(0, millis(100)));
        w.on_ack(&ack_at(millis(10), millis(100)));
        w.on_ack(&ack_at(millis(10), millis(100)));
        assert!((w.estimate() - 1e5).abs() < 1e-6, "the second is held: {}", w.estimate());
        w.on_ack(&ack_at(millis(20), millis(100)));
        assert!((w.estimate() - (0.9e5 + 0.1 * 2.0 * u64::from(MSS) as f64 * 100.0)).abs() < 1e-6);
    }

    #[test]
    fn gains_outside_the_open_unit_interval_are_refused() {
        for (gain, ia_gain) in [(0.0, 0.1), (1.0, 0.1), (0.1, 0.0), (0.1, 1.0)] {
            let mut p = Params::new();
            p.insert("gain", cclab_wire::ParamValue::Number(gain));
            p.insert("ia_gain", cclab_wire::ParamValue::Number(ia_gain));
            assert!(build(&p).is_err(), "{gain} {ia_gain}");
        }
    }
}
