//! Westwood+'s bandwidth estimate: Grieco and Mascolo, "Performance
//! evaluation and comparison of Westwood+, New Reno, and Vegas TCP
//! congestion control", ACM CCR 34(2), 2004, as Linux implements it in
//! `net/ipv4/tcp_westwood.c` (read at torvalds/linux commit
//! e5451c8f8330e03ad3cfa16048b4daf961af434f: `westwood_update_window`,
//! `westwood_filter`, `westwood_acked_count`).
//!
//! - One sample per round trip, not per ACK, so that ACK compression cannot
//!   inflate it: the bytes ACKs report delivered ([`DeliveredBytes`]) over
//!   an interval that closes at the first ACK more than max(RTT, 50 ms)
//!   after it opened; the sample is those bytes over the interval. The ACK
//!   that closes an interval counts in the next one (Linux updates the
//!   window before adding the ACK's bytes). RTT is the latest RTT sample
//!   (Linux 4.x `pkts_acked`); before the first there is no sample.
//! - Two cascaded filters of gain 7/8: bw_ns = (7 bw_ns + sample) / 8, then
//!   bw = (7 bw + bw_ns) / 8; the first sample sets both (Linux: "if the
//!   filter is empty fill it with the first sample").
//! - Linux opens the first interval when the connection starts; here the
//!   first ACK opens it, and its own bytes are not counted (they were
//!   delivered before the interval).

use super::{BandwidthEstimator, DeliveredBytes, EstimatorEntry};
use crate::cc::AckSample;
use cclab_wire::time::{millis, to_secs_f64};
use cclab_wire::{ParamError, Params, Time};

pub const ENTRY: EstimatorEntry = EstimatorEntry {
    name: "westwood_plus",
    source: "Grieco and Mascolo, ACM CCR 34(2) 2004; Linux net/ipv4/tcp_westwood.c \
             (westwood_update_window, westwood_filter; commit e5451c8f8330)",
    build,
};

/// Linux `TCP_WESTWOOD_RTT_MIN` (HZ / 20): the shortest sampling interval.
pub const MIN_INTERVAL: Time = millis(50);

fn build(_: &Params) -> Result<Box<dyn BandwidthEstimator>, ParamError> {
    Ok(Box::new(WestwoodPlus::default()))
}

#[derive(Debug, Default)]
pub struct WestwoodPlus {
    delivered: DeliveredBytes,
    /// When the current interval opened; None before the first ACK.
    interval_start: Option<Time>,
    /// Bytes delivered in the current interval (Linux `bk`).
    bytes: u64,
    /// The latest RTT sample.
    rtt: Option<Time>,
    /// First stage (Linux `bw_ns_est`) and estimate (`bw_est`), bytes per second;
    /// None before the first sample.
    stages: Option<(f64, f64)>,
    last_sample: f64,
}

impl WestwoodPlus {
    /// Linux `westwood_do_filter`.
    fn seven_eighths(old: f64, new: f64) -> f64 {
        (7.0 * old + new) / 8.0
    }

    fn filter(&mut self, sample: f64) {
        self.last_sample = sample;
        self.stages = Some(match self.stages {
            None => (sample, sample),
            Some((ns, est)) => {
                let ns = Self::seven_eighths(ns, sample);
                (ns, Self::seven_eighths(est, ns))
            }
        });
    }

    /// The latest raw per-interval sample, bytes per second.
    pub fn last_sample(&self) -> f64 {
        self.last_sample
    }
}

impl BandwidthEstimator for WestwoodPlus {
    fn name(&self) -> &'static str {
        "westwood_plus"
    }

    fn on_ack(&mut self, ack: &AckSample) {
        let bytes = self.delivered.on_ack(ack);
        if let Some(rtt) = ack.rtt {
            self.rtt = Some(rtt);
        }
        let Some(start) = self.interval_start else {
            self.interval_start = Some(ack.now);
            return;
        };
        let elapsed = ack.now.saturating_sub(start);
        if let Some(rtt) = self.rtt {
            if elapsed > rtt.max(MIN_INTERVAL) {
                self.filter(self.bytes as f64 / to_secs_f64(elapsed));
                self.bytes = 0;
                self.interval_start = Some(ack.now);
            }
        }
        self.bytes += bytes;
    }

    fn estimate(&self) -> f64 {
        self.stages.map_or(0.0, |(_, est)| est)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimate::test_streams::{ack_at, clustered, steady, MSS};
    use cclab_wire::time::{micros, secs};

    /// Linux: the first sample fills both stages; each later one moves the
    /// first stage 1/8 of the way and the estimate 1/8 toward the first stage.
    #[test]
    fn two_cascaded_seven_eighths_filters_start_from_the_first_sample() {
        let mut w = WestwoodPlus::default();
        w.filter(800.0);
        assert_eq!(w.estimate(), 800.0);
        w.filter(0.0);
        assert_eq!(w.stages, Some((700.0, 787.5)));
        w.filter(1600.0);
        assert_eq!(w.stages, Some((812.5, (7.0 * 787.5 + 812.5) / 8.0)));
    }

    /// An interval closes at the first ACK more than max(RTT, 50 ms) after it
    /// opened, with the bytes of the ACKs before that one.
    #[test]
    fn one_sample_per_interval_of_at_least_max_rtt_and_50_ms() {
        let mut w = WestwoodPlus::default();
        // RTT 20 ms: intervals are 50 ms; ACKs every 10 ms.
        let rtt = millis(20);
        for k in 0..=5 {
            w.on_ack(&ack_at(k * millis(10), rtt));
        }
        assert_eq!(w.stages, None, "50 ms is not more than 50 ms");
        w.on_ack(&ack_at(millis(51), rtt));
        // ACKs at 10..50 ms: 5 segments in 51 ms.
        assert!((w.estimate() - 5000.0 / 0.051).abs() < 1e-6, "{}", w.estimate());
        assert_eq!(w.bytes, 1000, "the closing ACK counts in the next interval");
        // With RTT 100 ms the interval is the RTT.
        let mut w = WestwoodPlus::default();
        w.on_ack(&ack_at(0, millis(100)));
        w.on_ack(&ack_at(millis(60), millis(100)));
        w.on_ack(&ack_at(millis(100), millis(100)));
        assert_eq!(w.stages, None);
        w.on_ack(&ack_at(millis(101), millis(100)));
        assert!((w.estimate() - 2000.0 / 0.101).abs() < 1e-6);
    }

    #[test]
    fn no_sample_before_an_rtt_sample() {
        let mut w = WestwoodPlus::default();
        for k in 0..100 {
            let mut a = ack_at(k * millis(10), 0);
            a.rtt = None;
            w.on_ack(&a);
        }
        assert_eq!(w.estimate(), 0.0);
    }

    /// 1 MB/s steady, RTT 100 ms: every sample is the rate (10 ACKs per
    /// interval of just over 100 ms, within 1 %).
    #[test]
    fn a_steady_stream_is_estimated_within_one_percent() {
        let mut w = WestwoodPlus::default();
        steady(0, millis(1), 3000, millis(100), |a| w.on_ack(a));
        assert!((w.estimate() / 1e6 - 1.0).abs() < 0.01, "{}", w.estimate());
    }

    /// ACK pairs (0.1 ms apart every 2 ms, 1 MB/s): a sample spans many
    /// pairs, so the pairing does not bias it (within 2 %).
    #[test]
    fn bursty_acks_do_not_bias_the_per_rtt_sample() {
        let mut w = WestwoodPlus::default();
        for k in 0..1500u64 {
            w.on_ack(&ack_at(k * millis(2), millis(100)));
            w.on_ack(&ack_at(k * millis(2) + micros(100), millis(100)));
        }
        assert!((w.estimate() / 1e6 - 1.0).abs() < 0.02, "{}", w.estimate());
    }

    /// A 2 s pause: the interval that spans it yields one low sample (about
    /// 100 segments over 2.1 s, 0.05 MB/s), of which the cascade passes on
    /// 1/64 at once: 7/8 + (7/8 + 0.05/8)/8 = 0.985 of the rate. The
    /// estimate barely moves; steady ACKs afterwards keep it within 2 %.
    #[test]
    fn a_pause_gives_one_low_sample() {
        let mut w = WestwoodPlus::default();
        let end = steady(0, millis(1), 3000, millis(100), |a| w.on_ack(a));
        w.on_ack(&ack_at(end + secs(2), millis(100)));
        let low = w.estimate() / 1e6;
        let sample = w.last_sample() / 1e6;
        assert!(sample < 0.06, "{sample}");
        assert!((low - (7.0 / 8.0 + (7.0 / 8.0 + sample / 8.0) / 8.0)).abs() < 0.005, "{low}");
        steady(end + secs(2), millis(1), 3000, millis(100), |a| w.on_ack(a));
        assert!((w.estimate() / 1e6 - 1.0).abs() < 0.02, "{}", w.estimate());
    }

    /// The seed's case: 10 ACKs 1 ms apart once per 100 ms round trip
    /// (100 000 B/s delivered; the 1 ms spacing is a capacity of 1 MB/s).
    /// Each sample covers a round trip, so the estimate stays within 10 % of
    /// the delivered rate once settled (measured 1.032 to 1.045: an interval
    /// closes at the first ACK past 100 ms, so some hold 11 ACKs). It reads
    /// the sending rate of a window-limited sender, not the capacity the
    /// seed's Fig. 1 compares with.
    #[test]
    fn acks_clustered_once_per_rtt_are_estimated_within_ten_percent() {
        let truth = 10.0 * f64::from(MSS) / 0.1;
        let mut w = WestwoodPlus::default();
        let (mut lo, mut hi) = (f64::MAX, 0.0f64);
        clustered(100, 10, millis(1), millis(100), |a| {
            w.on_ack(a);
            if a.now >= secs(3) {
                lo = lo.min(w.estimate());
                hi = hi.max(w.estimate());
            }
        });
        eprintln!("clustered: westwood+ {:.3}..{:.3} of the rate", lo / truth, hi / truth);
        assert!(lo / truth > 0.9 && hi / truth < 1.1, "{lo} {hi}");
    }
}
