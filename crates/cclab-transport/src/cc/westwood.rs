//! TCP Westwood: Casetti, Gerla, Mascolo, Sanadidi, Wang, "TCP Westwood:
//! bandwidth estimation for enhanced transport over wireless links", ACM
//! MobiCom 2001, §2.3 and §3.1; the estimator is [`crate::estimate::westwood`].
//! The response here is shared with `westwood_plus` (cc/westwood_plus.rs),
//! which differs only in its estimator.
//!
//! - Increase: Reno's (RFC 5681 slow start and congestion avoidance).
//! - bw_rttmin = max(2, BWE x RTTmin / MSS) segments: the window that fills
//!   the path at the estimated rate without a queue (Linux
//!   `tcp_westwood_bw_rttmin`; the paper's floor of 2 after a timeout, ns-3's
//!   `GetSsThresh` floor of 2 segments, applied here to every event).
//! - `response = "original"` (the paper): after three duplicate ACKs
//!   ssthresh = bw_rttmin and cwnd = min(cwnd, ssthresh), then fast
//!   recovery as the flow's loss recovery does it; a congestion mark is
//!   answered the same way.
//! - `response = "linux"` (net/ipv4/tcp_westwood.c at torvalds/linux
//!   e5451c8f8330): entering recovery halves like Reno (`.ssthresh =
//!   tcp_reno_ssthresh`, here of the flow's ssthresh basis), and at its end
//!   (`CA_EVENT_COMPLETE_CWR`, our `on_recovery_exit`) cwnd = ssthresh =
//!   bw_rttmin, which may raise cwnd. A mark (CWR, no recovery to end) sets
//!   both at once.
//! - After a timeout, both: ssthresh = bw_rttmin, cwnd = the loss window of
//!   one segment (Linux `CA_EVENT_LOSS`). Linux also resets its own RTTmin
//!   there; ours is the sender's, which is never reset. A timeout inside a
//!   loss episode keeps the lower of the two ssthresh (the sender's rule
//!   for every algorithm; Linux does not ask Westwood there either), and
//!   it ends recovery without `on_recovery_exit`, so the Linux rule's end
//!   of recovery does not apply after it.
//! - RTTmin is the sender's minimum RTT; with no estimate yet (no sample),
//!   bw_rttmin is the floor of 2 segments.

use super::reno::Reno;
use super::{
    AckSample, CcBuilder, CcDescriptor, CongestionControl, CongestionEvent, EcnUse, EventKind, Response,
    Window,
};
use crate::estimate::{self, BandwidthEstimator};
use cclab_wire::time::to_secs_f64;
use cclab_wire::{
    Descriptor, MetricDesc, Metrics, ParamDefault, ParamError, ParamType, Parameter, Params, Role, Time,
};

pub const DESCRIPTOR: CcDescriptor = Descriptor {
    name: "westwood",
    role: Role::CongestionControl,
    summary: "Reno increase; after a loss ssthresh = BWE x RTTmin from a per-ACK, low-pass filtered bandwidth estimate",
    source: "Casetti, Gerla, Mascolo, Sanadidi, Wang, MobiCom 2001, §2.2-§3.1; ns-3 tcp-westwood.cc \
             and UDT CWestwood (constant filter); Linux tcp_westwood.c (response = \"linux\")",
    parameters: &[
        estimate::westwood::FILTER,
        estimate::westwood::TAU,
        estimate::westwood::ALPHA,
        RESPONSE,
    ],
    metrics: METRICS,
    build: CcBuilder { build, paces_itself: false, ecn: EcnUse::Optional },
};

/// The response rule, shared with `westwood_plus`.
pub const RESPONSE: Parameter = Parameter {
    name: "response",
    ty: ParamType::Choice(&["original", "linux"]),
    unit: "",
    min: 0.0,
    max: 0.0,
    default: ParamDefault::Value("original"),
    meaning: "original: ssthresh = BWE x RTTmin and cwnd = min(cwnd, ssthresh) at the loss; \
              linux: halve at the loss, cwnd = ssthresh = BWE x RTTmin when recovery ends",
};

/// The metrics of both names.
pub const METRICS: &[MetricDesc] = &[
    MetricDesc { name: "bwe", unit: "bit/s", meaning: "the bandwidth estimate (0 before the first sample)" },
    MetricDesc {
        name: "bw_rttmin",
        unit: "segments",
        meaning: "max(2, BWE x RTTmin / MSS), what a congestion event would set ssthresh to",
    },
];

fn build(p: &Params) -> Result<Box<dyn CongestionControl>, ParamError> {
    BweResponse::build("westwood", p)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    Original,
    Linux,
}

/// Reno's increase with a bandwidth-estimate decrease, over any estimator.
pub struct BweResponse {
    name: &'static str,
    estimator: Box<dyn BandwidthEstimator>,
    rule: Rule,
    /// The sender's minimum RTT and MSS as of the latest ACK, for the end of recovery.
    min_rtt: Time,
    mss: u32,
}

impl BweResponse {
    /// Builds the congestion control `name` over the estimator of the same name.
    pub fn build(name: &'static str, p: &Params) -> Result<Box<dyn CongestionControl>, ParamError> {
        let entry = estimate::by_name(name)
            .ok_or(ParamError { name: name.into(), problem: "has no bandwidth estimator" })?;
        let rule = match p.choice("response")? {
            "linux" => Rule::Linux,
            _ => Rule::Original,
        };
        Ok(Box::new(Self::new(name, (entry.build)(p)?, rule)))
    }

    pub fn new(name: &'static str, estimator: Box<dyn BandwidthEstimator>, rule: Rule) -> Self {
        Self { name, estimator, rule, min_rtt: 0, mss: 0 }
    }

    /// max(2, BWE x RTTmin / MSS), segments.
    pub fn bw_rttmin(bwe: f64, min_rtt: Time, mss: u32) -> f64 {
        if mss == 0 {
            return 2.0;
        }
        (bwe * to_secs_f64(min_rtt) / f64::from(mss)).max(2.0)
    }

    pub fn estimate(&self) -> f64 {
        self.estimator.estimate()
    }
}

impl CongestionControl for BweResponse {
    fn name(&self) -> &'static str {
        self.name
    }

    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        self.estimator.on_ack(ack);
        self.min_rtt = ack.min_rtt;
        self.mss = ack.mss;
        if ack.opens_window() {
            Reno::increase(w, ack.acked);
        }
    }

    fn on_congestion(&mut self, w: &Window, event: &CongestionEvent) -> Response {
        let target = Self::bw_rttmin(self.estimate(), event.min_rtt, event.mss);
        match (event.kind, self.rule) {
            (EventKind::Timeout, _) => Response::Reduce { ssthresh: target, cwnd: 1.0 },
            (EventKind::FastRetransmit | EventKind::Mark, Rule::Original) => {
                Response::Reduce { ssthresh: target, cwnd: w.cwnd.min(target) }
            }
            (EventKind::FastRetransmit, Rule::Linux) => {
                let ssthresh = Reno::halved(event.basis);
                Response::Reduce { ssthresh, cwnd: ssthresh }
            }
            (EventKind::Mark, Rule::Linux) => Response::Reduce { ssthresh: target, cwnd: target },
        }
    }

    fn on_recovery_exit(&mut self, w: &mut Window, _now: Time) {
        if self.rule == Rule::Linux {
            let target = Self::bw_rttmin(self.estimate(), self.min_rtt, self.mss);
            *w = Window { cwnd: target, ssthresh: target };
        }
    }

    fn metrics(&self, out: &mut Metrics<'_>) {
        out.put("bwe", self.estimate() * 8.0);
        out.put("bw_rttmin", Self::bw_rttmin(self.estimate(), self.min_rtt, self.mss));
        self.estimator.metrics(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_support::{ack_of, event};
    use cclab_wire::time::millis;

    /// An estimator that reports a fixed rate.
    struct Fixed(f64);

    impl BandwidthEstimator for Fixed {
        fn name(&self) -> &'static str {
            "fixed"
        }
        fn on_ack(&mut self, _: &AckSample) {}
        fn estimate(&self) -> f64 {
            self.0
        }
    }

    /// 1.25 MB/s (10 Mbit/s) and RTTmin 80 ms with MSS 1000: bw_rttmin = 100.
    const BWE: f64 = 1.25e6;

    fn westwood(rule: Rule, bwe: f64) -> BweResponse {
        let mut w = BweResponse::new("westwood", Box::new(Fixed(bwe)), rule);
        let mut a = ack_of(1);
        a.min_rtt = millis(80);
        w.on_ack(&mut Window { cwnd: 1.0, ssthresh: 1.0 }, &a);
        w
    }

    fn at(kind: EventKind, basis: f64) -> CongestionEvent {
        let mut e = event(kind, basis);
        e.min_rtt = millis(80);
        e
    }

    #[test]
    fn bw_rttmin_is_the_estimate_times_rttmin_in_segments_at_least_two() {
        assert!((BweResponse::bw_rttmin(BWE, millis(80), 1000) - 100.0).abs() < 1e-9);
        assert_eq!(BweResponse::bw_rttmin(10_000.0, millis(80), 1000), 2.0);
        assert_eq!(BweResponse::bw_rttmin(0.0, millis(80), 1000), 2.0);
    }

    /// The paper, after three duplicate ACKs: ssthresh = BWE x RTTmin / MSS,
    /// and cwnd = ssthresh only if it was larger.
    #[test]
    fn three_duplicate_acks_set_ssthresh_to_bw_rttmin_and_cap_cwnd() {
        let mut cc = westwood(Rule::Original, BWE);
        let big = Window { cwnd: 150.0, ssthresh: 1e9 };
        assert_eq!(
            cc.on_congestion(&big, &at(EventKind::FastRetransmit, 150.0)),
            Response::Reduce { ssthresh: 100.0, cwnd: 100.0 }
        );
        let small = Window { cwnd: 60.0, ssthresh: 1e9 };
        assert_eq!(
            cc.on_congestion(&small, &at(EventKind::FastRetransmit, 60.0)),
            Response::Reduce { ssthresh: 100.0, cwnd: 60.0 }
        );
        // A mark is answered alike.
        assert_eq!(
            cc.on_congestion(&big, &at(EventKind::Mark, 150.0)),
            Response::Reduce { ssthresh: 100.0, cwnd: 100.0 }
        );
    }

    #[test]
    fn a_timeout_sets_ssthresh_to_bw_rttmin_and_one_segment() {
        for rule in [Rule::Original, Rule::Linux] {
            let mut cc = westwood(rule, BWE);
            let w = Window { cwnd: 150.0, ssthresh: 1e9 };
            assert_eq!(
                cc.on_congestion(&w, &at(EventKind::Timeout, 150.0)),
                Response::Reduce { ssthresh: 100.0, cwnd: 1.0 }
            );
        }
    }

    /// 0.1 Mbit/s x 80 ms = 1 segment: the floor of 2 applies.
    #[test]
    fn the_floor_is_two_segments() {
        let mut cc = westwood(Rule::Original, 12_500.0);
        let w = Window { cwnd: 30.0, ssthresh: 1e9 };
        assert_eq!(
            cc.on_congestion(&w, &at(EventKind::FastRetransmit, 30.0)),
            Response::Reduce { ssthresh: 2.0, cwnd: 2.0 }
        );
        assert_eq!(
            cc.on_congestion(&w, &at(EventKind::Timeout, 30.0)),
            Response::Reduce { ssthresh: 2.0, cwnd: 1.0 }
        );
    }

    /// Linux: Reno's halving at the loss, then cwnd = ssthresh = bw_rttmin
    /// when recovery ends, above or below what recovery left; the original
    /// rule leaves the end of recovery alone.
    #[test]
    fn the_linux_rule_sets_both_to_bw_rttmin_when_recovery_ends() {
        let mut cc = westwood(Rule::Linux, BWE);
        let w = Window { cwnd: 150.0, ssthresh: 1e9 };
        assert_eq!(
            cc.on_congestion(&w, &at(EventKind::FastRetransmit, 150.0)),
            Response::Reduce { ssthresh: 75.0, cwnd: 75.0 }
        );
        let mut after = Window { cwnd: 75.0, ssthresh: 75.0 };
        cc.on_recovery_exit(&mut after, 0);
        assert_eq!(after, Window { cwnd: 100.0, ssthresh: 100.0 });
        assert_eq!(
            cc.on_congestion(&w, &at(EventKind::Mark, 150.0)),
            Response::Reduce { ssthresh: 100.0, cwnd: 100.0 }
        );
        let mut original = westwood(Rule::Original, BWE);
        let mut after = Window { cwnd: 75.0, ssthresh: 75.0 };
        original.on_recovery_exit(&mut after, 0);
        assert_eq!(after, Window { cwnd: 75.0, ssthresh: 75.0 });
    }

    /// Reno's increase: slow start below ssthresh, 1/cwnd above, nothing in
    /// recovery; the estimator sees every ACK.
    #[test]
    fn the_increase_is_renos() {
        let mut cc = westwood(Rule::Original, BWE);
        let mut w = Window { cwnd: 4.0, ssthresh: 10.0 };
        cc.on_ack(&mut w, &ack_of(1));
        assert_eq!(w.cwnd, 5.0);
        let mut w = Window { cwnd: 10.0, ssthresh: 5.0 };
        cc.on_ack(&mut w, &ack_of(1));
        assert!((w.cwnd - 10.1).abs() < 1e-12);
        let mut r = ack_of(1);
        r.phase = crate::cc::AckPhase::Recovery;
        cc.on_ack(&mut w, &r);
        assert!((w.cwnd - 10.1).abs() < 1e-12);
    }

    /// The estimate is published in bit/s, with every metric the descriptor lists.
    #[test]
    fn the_estimate_is_published_in_bits_per_second() {
        let cc = westwood(Rule::Original, BWE);
        let mut log = cclab_wire::MetricLog::default();
        cc.metrics(&mut Metrics::new(&mut log));
        assert_eq!(log.get("bwe"), Some(1e7));
        assert!((log.get("bw_rttmin").unwrap() - 100.0).abs() < 1e-9);
        assert!(METRICS.iter().all(|m| log.get(m.name).is_some()));
    }
}
