//! TCP-Jersey: Xu, Tian, Ansari, "TCP-Jersey for wireless IP communications",
//! IEEE JSAC 22(4):747-756, 2004. The available-bandwidth estimate is
//! [`crate::estimate::jersey`]; the congestion warning (CW) is a router that
//! marks every packet while its average queue is above a threshold (the `cw`
//! queue discipline), echoed by the receiver as ECN-Echo, so the flow needs
//! `ecn = true` and a `cw` (or marking) queue at its bottleneck.
//!
//! - Increase: Reno's.
//! - Optimal window ownd = max(2, R x RTT / MSS) segments, RTT the smoothed
//!   RTT; "rate control" sets ssthresh = cwnd = ownd.
//! - An ACK carrying a CW mark, with no loss: rate control (at most once per
//!   window of data, as the sender answers every mark).
//! - Three duplicate ACKs with a CW mark: a congestion loss; fast retransmit
//!   and rate control.
//! - Three duplicate ACKs without a CW mark on a flow that reads marks: a
//!   wireless loss; the segment is retransmitted (by the flow's loss
//!   recovery) and the window is left alone.
//! - Without ECN the flow cannot tell the two apart and treats every loss as
//!   congestion (rate control).
//! - A timeout: ssthresh = ownd, cwnd = 1.
//!
//! The loss-differentiation rules are as summarised in the project's
//! algorithm notes (../shared/reference/algorithms.md §5, marked there as not
//! verified against the paper's text, which was not at hand); the ABE
//! formula and rate control were read in two ns-3 implementations.

use super::reno::Reno;
use super::{
    AckSample, CcBuilder, CcDescriptor, CongestionControl, CongestionEvent, EcnUse, EventKind, MarkStatus,
    Response, Window,
};
use crate::estimate::jersey::TimeSlidingWindow;
use crate::estimate::BandwidthEstimator;
use cclab_wire::time::to_secs_f64;
use cclab_wire::{Descriptor, MetricDesc, Metrics, ParamError, Params, Role, Time};

pub const DESCRIPTOR: CcDescriptor = Descriptor {
    name: "jersey",
    role: Role::CongestionControl,
    summary: "TCP-Jersey: Reno increase, window = ABE x RTT on a CW mark or a marked loss, unmarked losses only retransmitted",
    source: "Xu, Tian, Ansari, TCP-Jersey for wireless IP communications, IEEE JSAC 22(4) 2004",
    parameters: &[],
    metrics: &[
        MetricDesc { name: "bwe", unit: "bit/s", meaning: "the time-sliding-window ABE (0 before the first sample)" },
        MetricDesc { name: "ownd", unit: "segments", meaning: "max(2, ABE x SRTT / MSS), the window rate control sets" },
    ],
    build: CcBuilder { build, paces_itself: false, ecn: EcnUse::Optional },
};

fn build(_: &Params) -> Result<Box<dyn CongestionControl>, ParamError> {
    Ok(Box::new(Jersey::default()))
}

#[derive(Debug, Default)]
pub struct Jersey {
    abe: TimeSlidingWindow,
    /// The sender's SRTT and MSS as of the latest ACK, for the metric.
    srtt: Time,
    mss: u32,
}

impl Jersey {
    /// ownd = max(2, R x RTT / MSS) segments.
    pub fn ownd(rate: f64, rtt: Time, mss: u32) -> f64 {
        if mss == 0 {
            return 2.0;
        }
        (rate * to_secs_f64(rtt) / f64::from(mss)).max(2.0)
    }
}

impl CongestionControl for Jersey {
    fn name(&self) -> &'static str {
        "jersey"
    }

    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        self.abe.on_ack(ack);
        self.srtt = ack.srtt;
        self.mss = ack.mss;
        if ack.opens_window() {
            Reno::increase(w, ack.acked);
        }
    }

    fn on_congestion(&mut self, _w: &Window, event: &CongestionEvent) -> Response {
        let ownd = Self::ownd(self.abe.estimate(), event.srtt, event.mss);
        match (event.kind, event.mark) {
            (EventKind::Timeout, _) => Response::Reduce { ssthresh: ownd, cwnd: 1.0 },
            (EventKind::FastRetransmit, MarkStatus::Unmarked) => Response::NoReduction,
            (EventKind::FastRetransmit, _) | (EventKind::Mark, _) => {
                Response::Reduce { ssthresh: ownd, cwnd: ownd }
            }
        }
    }

    fn metrics(&self, out: &mut Metrics<'_>) {
        out.put("bwe", self.abe.estimate() * 8.0);
        out.put("ownd", Self::ownd(self.abe.estimate(), self.srtt, self.mss));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_support::{ack_of, event};
    use cclab_wire::time::millis;

    /// A Jersey whose ABE read 1 MB/s (ACKs 1 ms apart, SRTT 50 ms): ownd = 50.
    fn jersey() -> Jersey {
        let mut j = Jersey::default();
        let mut w = Window { cwnd: 10.0, ssthresh: 5.0 };
        for k in 0..2000u64 {
            let mut a = ack_of(1);
            a.now = k * millis(1);
            a.srtt = millis(50);
            j.on_ack(&mut w, &a);
        }
        j
    }

    fn at(kind: EventKind, mark: MarkStatus) -> CongestionEvent {
        let mut e = event(kind, 80.0);
        e.srtt = millis(50);
        e.mark = mark;
        e
    }

    fn reduced_to(r: Response) -> (f64, f64) {
        match r {
            Response::Reduce { ssthresh, cwnd } => (ssthresh, cwnd),
            Response::NoReduction => (f64::NAN, f64::NAN),
        }
    }

    #[test]
    fn a_cw_mark_or_a_marked_loss_sets_the_window_to_ownd() {
        let mut j = jersey();
        let w = Window { cwnd: 80.0, ssthresh: 1e9 };
        for e in [at(EventKind::Mark, MarkStatus::Marked), at(EventKind::FastRetransmit, MarkStatus::Marked)]
        {
            let (ssthresh, cwnd) = reduced_to(j.on_congestion(&w, &e));
            assert!((ssthresh - 50.0).abs() < 0.1 && (cwnd - 50.0).abs() < 0.1, "{ssthresh} {cwnd}");
        }
    }

    #[test]
    fn an_unmarked_loss_is_wireless_and_leaves_the_window() {
        let mut j = jersey();
        let w = Window { cwnd: 80.0, ssthresh: 1e9 };
        assert_eq!(
            j.on_congestion(&w, &at(EventKind::FastRetransmit, MarkStatus::Unmarked)),
            Response::NoReduction
        );
    }

    #[test]
    fn without_marks_every_loss_is_congestion_and_a_timeout_leaves_one_segment() {
        let mut j = jersey();
        let w = Window { cwnd: 80.0, ssthresh: 1e9 };
        let (ssthresh, cwnd) =
            reduced_to(j.on_congestion(&w, &at(EventKind::FastRetransmit, MarkStatus::Unknown)));
        assert!((ssthresh - 50.0).abs() < 0.1 && (cwnd - 50.0).abs() < 0.1);
        let (ssthresh, cwnd) = reduced_to(j.on_congestion(&w, &at(EventKind::Timeout, MarkStatus::Unmarked)));
        assert!((ssthresh - 50.0).abs() < 0.1 && cwnd == 1.0);
    }

    #[test]
    fn ownd_has_a_floor_of_two_segments() {
        assert_eq!(Jersey::ownd(0.0, millis(50), 1000), 2.0);
        assert!((Jersey::ownd(1e6, millis(50), 1000) - 50.0).abs() < 1e-9);
    }

    #[test]
    fn the_estimate_and_ownd_are_published() {
        let j = jersey();
        let mut log = cclab_wire::MetricLog::default();
        j.metrics(&mut Metrics::new(&mut log));
        assert!((log.get("bwe").unwrap_or(0.0) / 8e6 - 1.0).abs() < 1e-3);
        assert!((log.get("ownd").unwrap_or(0.0) - 50.0).abs() < 0.1);
        assert!(DESCRIPTOR.metrics.iter().all(|m| log.get(m.name).is_some()));
    }
}
