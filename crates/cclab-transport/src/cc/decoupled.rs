//! Decoupled TCP's congestion control (seed paper 001, Kang and Mo,
//! "Decoupled TCP: TCP for Wireless Networks", §2.1 eq. 1, with the WABE
//! estimate of §2.2, [`crate::estimate::wabe`]):
//!
//!   cwnd <- cwnd + 1 / cwnd   upon an ACK,
//!   cwnd <- ABE x RTT         upon congestion.
//!
//! It pairs with the `decoupled` loss recovery, which decides what is sent
//! and tells this module of each loss (at most once per window of data by
//! default); it runs with any other recovery too.
//!
//! Readings where the seed is silent, each a parameter:
//!
//! - `rtt = "min"` (default): the RTT of eq. 1 is the minimum RTT, as in the
//!   Westwood and Jersey rules the seed builds on (ABE x RTTmin fills the path
//!   without a standing queue); `"smoothed"` takes SRTT, which includes the
//!   queueing delay.
//! - `slow_start = true` (default): below ssthresh (initially unbounded) the
//!   window grows by one segment per ACK, as the TCP agent the seed extended
//!   does; the first congestion sets ssthresh = cwnd = ABE x RTT and growth is
//!   eq. 1's from then on. `false` applies eq. 1 from the start.
//! - "Upon ACK" is any ACK that reports data delivered, cumulatively or by
//!   SACK: with the decoupled recovery the cumulative ACK may stand still for
//!   a whole round trip while data flows.
//! - The window never goes below 2 segments; with no estimate yet (no ACK
//!   interval seen), a congestion event halves the window as Reno would.
//! - A timeout (only with a recovery that keeps the RFC 6298 timer) sets
//!   ssthresh = ABE x RTT and cwnd = 1.

use super::reno::Reno;
use super::{
    AckSample, CcBuilder, CcDescriptor, CongestionControl, CongestionEvent, EcnUse, EventKind, Response,
    Window,
};
use crate::estimate::wabe::{Wabe, GAIN, IA_GAIN};
use crate::estimate::{BandwidthEstimator, DeliveredBytes};
use cclab_wire::time::to_secs_f64;
use cclab_wire::{
    Descriptor, MetricDesc, Metrics, ParamDefault, ParamError, ParamType, Parameter, Params, Role, Time,
};

pub const DESCRIPTOR: CcDescriptor = Descriptor {
    name: "decoupled",
    role: Role::CongestionControl,
    summary: "Decoupled TCP: cwnd += 1/cwnd per ACK, cwnd = ABE x RTT on congestion, ABE from WABE",
    source: "Kang and Mo, Decoupled TCP: TCP for Wireless Networks (seed paper 001), §2.1 eq. 1, §2.2",
    parameters: &[
        Parameter {
            name: "rtt",
            ty: ParamType::Choice(&["min", "smoothed"]),
            unit: "",
            min: 0.0,
            max: 0.0,
            default: ParamDefault::Value("min"),
            meaning: "the RTT of cwnd = ABE x RTT: the minimum RTT, or SRTT (which includes queueing)",
        },
        Parameter {
            name: "slow_start",
            ty: ParamType::Bool,
            unit: "",
            min: 0.0,
            max: 0.0,
            default: ParamDefault::Value("true"),
            meaning: "slow start until the first congestion event (false: eq. 1's increase from the start)",
        },
        GAIN,
        IA_GAIN,
    ],
    metrics: &[
        MetricDesc {
            name: "bwe",
            unit: "bit/s",
            meaning: "the WABE bandwidth estimate (0 before the first sample)",
        },
        MetricDesc { name: "ack_gap", unit: "s", meaning: "WABE's mean ACK inter-arrival time, 1 / IA" },
    ],
    build: CcBuilder { build, paces_itself: false, ecn: EcnUse::Optional },
};

fn build(p: &Params) -> Result<Box<dyn CongestionControl>, ParamError> {
    let smoothed = p.choice("rtt")? == "smoothed";
    let wabe = Wabe::new(p.number("gain")?, p.number("ia_gain")?);
    Ok(Box::new(Decoupled::new(wabe, smoothed, p.bool("slow_start")?)))
}

pub struct Decoupled {
    wabe: Wabe,
    delivered: DeliveredBytes,
    smoothed_rtt: bool,
    slow_start: bool,
}

impl Decoupled {
    pub fn new(wabe: Wabe, smoothed_rtt: bool, slow_start: bool) -> Self {
        Self { wabe, delivered: DeliveredBytes::default(), smoothed_rtt, slow_start }
    }

    /// ABE x RTT in segments, at least 2; `None` before the first estimate.
    fn target(&self, srtt: Time, min_rtt: Time, mss: u32) -> Option<f64> {
        let rtt = if self.smoothed_rtt { srtt } else { min_rtt };
        let abe = self.wabe.estimate();
        (abe > 0.0 && mss > 0).then(|| (abe * to_secs_f64(rtt) / f64::from(mss)).max(2.0))
    }
}

impl CongestionControl for Decoupled {
    fn name(&self) -> &'static str {
        "decoupled"
    }

    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        self.wabe.on_ack(ack);
        let delivered = self.delivered.on_ack(ack);
        // In another recovery's fast recovery the window is that recovery's.
        if delivered == 0 || ack.ece || ack.phase == super::AckPhase::Recovery || !ack.cwnd_limited {
            return;
        }
        if self.slow_start && w.in_slow_start() {
            Reno::increase(w, 1);
        } else {
            w.cwnd += 1.0 / w.cwnd;
        }
    }

    fn on_congestion(&mut self, w: &Window, event: &CongestionEvent) -> Response {
        let target =
            self.target(event.srtt, event.min_rtt, event.mss).unwrap_or_else(|| Reno::halved(w.cwnd));
        match event.kind {
            EventKind::Timeout => Response::Reduce { ssthresh: target, cwnd: 1.0 },
            EventKind::FastRetransmit | EventKind::Mark => {
                Response::Reduce { ssthresh: target, cwnd: target }
            }
        }
    }

    fn metrics(&self, out: &mut Metrics<'_>) {
        out.put("bwe", self.wabe.estimate() * 8.0);
        self.wabe.metrics(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_support::{ack_of, event};
    use cclab_wire::time::millis;

    fn decoupled(slow_start: bool) -> Decoupled {
        Decoupled::new(Wabe::new(0.1, 0.1), false, slow_start)
    }

    /// ACKs 1 ms apart, one segment each: WABE reads 1 MB/s.
    fn feed_steady(cc: &mut Decoupled, w: &mut Window, n: u64) {
        for k in 0..n {
            let mut a = ack_of(1);
            a.now = k * millis(1);
            a.min_rtt = millis(40);
            a.srtt = millis(60);
            cc.on_ack(w, &a);
        }
    }

    /// Eq. 1 upon ACK: 1/cwnd per ACK once past slow start (or always without it).
    #[test]
    fn each_ack_adds_one_over_cwnd() {
        let mut cc = decoupled(false);
        let mut w = Window { cwnd: 10.0, ssthresh: f64::INFINITY };
        cc.on_ack(&mut w, &ack_of(1));
        assert!((w.cwnd - 10.1).abs() < 1e-12);
        let mut dup = ack_of(0);
        dup.duplicate = true;
        dup.sacked = 1;
        cc.on_ack(&mut w, &dup);
        assert!((w.cwnd - (10.1 + 1.0 / 10.1)).abs() < 1e-12, "a SACK reports delivery too");
        let mut slow = decoupled(true);
        let mut w = Window { cwnd: 10.0, ssthresh: f64::INFINITY };
        slow.on_ack(&mut w, &ack_of(1));
        assert_eq!(w.cwnd, 11.0, "slow start before the first congestion");
    }

    /// Eq. 1 upon congestion: cwnd = ssthresh = ABE x RTTmin = 1 MB/s x 40 ms / 1000 B = 40,
    /// above or below the window it replaces; SRTT (60 ms) gives 60.
    #[test]
    fn congestion_sets_the_window_to_abe_times_rtt() {
        for cwnd in [20.0, 100.0] {
            let mut cc = decoupled(true);
            let mut w = Window { cwnd, ssthresh: f64::INFINITY };
            feed_steady(&mut cc, &mut w, 200);
            let mut e = event(EventKind::FastRetransmit, cwnd);
            e.min_rtt = millis(40);
            e.srtt = millis(60);
            let Response::Reduce { ssthresh, cwnd } = cc.on_congestion(&w, &e) else {
                panic!("no reduction")
            };
            assert!((ssthresh - 40.0).abs() < 0.05 && (cwnd - 40.0).abs() < 0.05, "{ssthresh} {cwnd}");
        }
        let mut cc = Decoupled::new(Wabe::new(0.1, 0.1), true, true);
        let mut w = Window { cwnd: 10.0, ssthresh: f64::INFINITY };
        feed_steady(&mut cc, &mut w, 200);
        let mut e = event(EventKind::FastRetransmit, 10.0);
        e.min_rtt = millis(40);
        e.srtt = millis(60);
        let Response::Reduce { cwnd, .. } = cc.on_congestion(&w, &e) else { panic!("no reduction") };
        assert!((cwnd - 60.0).abs() < 0.1, "{cwnd}");
    }

    #[test]
    fn without_an_estimate_congestion_halves_and_a_timeout_leaves_one_segment() {
        let mut cc = decoupled(true);
        let w = Window { cwnd: 30.0, ssthresh: f64::INFINITY };
        assert_eq!(
            cc.on_congestion(&w, &event(EventKind::FastRetransmit, 30.0)),
            Response::Reduce { ssthresh: 15.0, cwnd: 15.0 }
        );
        assert_eq!(
            cc.on_congestion(&w, &event(EventKind::Timeout, 30.0)),
            Response::Reduce { ssthresh: 15.0, cwnd: 1.0 }
        );
    }

    #[test]
    fn the_estimate_is_published_in_bits_per_second() {
        let mut cc = decoupled(true);
        let mut w = Window { cwnd: 10.0, ssthresh: f64::INFINITY };
        feed_steady(&mut cc, &mut w, 100);
        let mut log = cclab_wire::MetricLog::default();
        cc.metrics(&mut Metrics::new(&mut log));
        assert!((log.get("bwe").unwrap_or(0.0) / 8e6 - 1.0).abs() < 1e-3);
        assert!((log.get("ack_gap").unwrap_or(0.0) - 0.001).abs() < 1e-6);
        assert!(DESCRIPTOR.metrics.iter().all(|m| log.get(m.name).is_some()));
    }
}
