//! TCP-Jersey's available-bandwidth estimate (ABE): Xu, Tian, Ansari,
//! "TCP-Jersey for wireless IP communications", IEEE JSAC 22(4), 2004,
//! after the time-sliding-window (TSW) rate estimator of Clark and Fang
//! ("Explicit allocation of best-effort packet delivery service", IEEE/ACM
//! ToN 6(4), 1998), with the window one RTT long:
//!
//!   R_n = (RTT_n R_{n-1} + L_n) / ((t_n - t_{n-1}) + RTT_n),
//!
//! L_n the bytes the n-th ACK newly reports delivered ([`DeliveredBytes`]),
//! t_n its arrival time, RTT_n the sender's smoothed RTT at that ACK.
//! The formula as read in two independent ns-3 implementations (NITK 2017,
//! `tcp-jersey.cc`); the paper itself was not at hand, so the choice of SRTT
//! for RTT_n is our reading (those implementations take the current RTT
//! estimate). Before the first RTT estimate there is no window: the ACK only
//! starts the clock.
//!
//! In steady state with L bytes every Δ, R settles at L / Δ; a pause of T
//! scales it by RTT / (T + RTT) at the next ACK, so it forgets on the scale of
//! one round trip, and with ACKs clustered once per round trip it swings
//! around the delivered rate (within a factor of two in the tests), not the
//! spacing inside the clusters.

use super::{BandwidthEstimator, DeliveredBytes, EstimatorEntry};
use crate::cc::AckSample;
use cclab_wire::time::to_secs_f64;
use cclab_wire::{ParamError, Params, Time};

pub const ENTRY: EstimatorEntry = EstimatorEntry {
    name: "jersey",
    source: "Xu, Tian, Ansari, IEEE JSAC 22(4) 2004 (ABE); Clark and Fang, IEEE/ACM ToN 6(4) 1998 (TSW)",
    build,
};

fn build(_: &Params) -> Result<Box<dyn BandwidthEstimator>, ParamError> {
    Ok(Box::new(TimeSlidingWindow::default()))
}

#[derive(Debug, Default)]
pub struct TimeSlidingWindow {
    delivered: DeliveredBytes,
    /// R, bytes per second.
    rate: f64,
    last_arrival: Option<Time>,
}

impl BandwidthEstimator for TimeSlidingWindow {
    fn name(&self) -> &'static str {
        "jersey"
    }

    fn on_ack(&mut self, ack: &AckSample) {
        let bytes = self.delivered.on_ack(ack) as f64;
        let rtt = to_secs_f64(ack.srtt);
        let Some(last) = self.last_arrival.filter(|_| rtt > 0.0) else {
            self.last_arrival = Some(ack.now);
            return;
        };
        let gap = to_secs_f64(ack.now.saturating_sub(last));
        self.rate = (rtt * self.rate + bytes) / (gap + rtt);
        self.last_arrival = Some(ack.now);
    }

    fn estimate(&self) -> f64 {
        self.rate
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::estimate::test_streams::{ack_at, clustered, steady};
    use cclab_wire::time::millis;

    /// By hand: RTT 100 ms, 1000 bytes after 10 ms from R = 0 gives
    /// 1000 / 0.11; the next, 10 ms later, (0.1 R + 1000) / 0.11.
    #[test]
    fn the_tsw_formula_by_hand() {
        let mut e = TimeSlidingWindow::default();
        e.on_ack(&ack_at(0, millis(100)));
        assert_eq!(e.estimate(), 0.0, "the first ACK only starts the clock");
        e.on_ack(&ack_at(millis(10), millis(100)));
        let first = 1000.0 / 0.11;
        assert!((e.estimate() - first).abs() < 1e-6);
        e.on_ack(&ack_at(millis(20), millis(100)));
        assert!((e.estimate() - (0.1 * first + 1000.0) / 0.11).abs() < 1e-6);
    }

    /// 1000 segments per second: R settles at 1 MB/s (each step removes a
    /// share gap / (gap + RTT) = 1/101 of the error: 1000 steps leave e^-10).
    #[test]
    fn a_steady_stream_settles_at_its_rate() {
        let mut e = TimeSlidingWindow::default();
        steady(0, millis(1), 1000, millis(100), |a| e.on_ack(a));
        assert!((e.estimate() / 1e6 - 1.0).abs() < 1e-3, "{}", e.estimate());
    }

    /// Clusters of 10 ACKs 1 ms apart once per 100 ms (100 kB/s delivered,
    /// 1 MB/s spacing inside a cluster): the one-RTT window decays R across
    /// the 91 ms gap (x 0.1 / 0.191) and raises it through the cluster, so it
    /// swings around the delivered rate, from 96 kB/s at a cluster's first
    /// ACK to 174 kB/s at its last (by the formula), far below the spacing
    /// inside the clusters that WABE reads.
    #[test]
    fn clustered_acks_swing_around_the_delivered_rate() {
        let mut e = TimeSlidingWindow::default();
        let mut last_cluster = Vec::new();
        clustered(100, 10, millis(1), millis(100), |a| {
            e.on_ack(a);
            if a.now >= millis(9900) {
                last_cluster.push(e.estimate());
            }
        });
        let (first, last) = (last_cluster[0], last_cluster[9]);
        assert!((first / 96_077.0 - 1.0).abs() < 1e-3, "{first}");
        assert!((last / 173_507.0 - 1.0).abs() < 1e-3, "{last}");
        assert!(first < 1e5 && last < 2e5);
    }

    /// A pause of one RTT halves the estimate at the next ACK: RTT / (T + RTT).
    #[test]
    fn a_pause_scales_the_estimate_by_rtt_over_pause_plus_rtt() {
        let mut e = TimeSlidingWindow::default();
        let end = steady(0, millis(1), 1000, millis(100), |a| e.on_ack(a));
        let before = e.estimate();
        let mut late = ack_at(end + millis(100), millis(100));
        late.acked = 0;
        late.duplicate = false;
        e.on_ack(&late);
        assert!((e.estimate() / before - 0.5).abs() < 1e-9, "{}", e.estimate() / before);
    }
}
