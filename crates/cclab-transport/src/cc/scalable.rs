//! Scalable TCP: Kelly, "Scalable TCP: Improving Performance in Highspeed Wide
//! Area Networks", ACM CCR 33(2), April 2003, §2 (the window update rules and
//! the legacy window), as summarised in RFC 3649 §8; Linux
//! net/ipv4/tcp_scalable.c for the `linux` variant.
//!
//! `variant = "kelly"` (default; the seed paper's rules):
//! - Congestion avoidance above the legacy window (`low_window`, 16 segments):
//!   `cwnd += a` per ACK (a = 0.01), a fixed fraction of the window per RTT, so
//!   the time between congestion events, `ln(1/(1-b)) / ln(1+a)` = 13.4 RTTs
//!   with one ACK per segment, does not depend on the rate (Kelly §2).
//! - Congestion event with the window above the legacy window:
//!   `cwnd = (1 - b) cwnd` (b = 0.125), at least two segments.
//! - At or below the legacy window, and in slow start, Reno's rules
//!   ([`Reno::increase`], [`Reno::halved`]).
//!
//! `variant = "linux"` (tcp_scalable.c since 5.x: `TCP_SCALABLE_AI_CNT` 100,
//! `TCP_SCALABLE_MD_SCALE` 3): `tcp_cong_avoid_ai(tp, min(cwnd, AI_CNT), acked)`,
//! i.e. a counter of acknowledged *segments* that adds one segment each time
//! it reaches `min(cwnd, ai_cnt)`; for cwnd <= ai_cnt that is Reno, above it
//! +1/ai_cnt per segment. Linux has no legacy window, so `low_window` and `a`
//! are ignored; the decrease is `(1 - b)` of the basis at any window (Linux
//! computes `cwnd - (cwnd >> 3)` in whole segments; the rounding is not
//! modelled). Older kernels used AI_CNT 50 (to allow for delayed ACKs):
//! `ai_cnt = 50`.
//!
//! Decisions where the sources are silent:
//! - **ACK counting** (kelly): per ACK that acknowledges new data, as Kelly
//!   states the rule and as [`Reno::increase`] and `highspeed` count.
//! - **The decrease applies to the event's basis** (FlightSize, pipe or cwnd
//!   as the flow's `ssthresh_basis` chooses) and the legacy-window test is
//!   made on it too. The basis is capped at cwnd, for the reason `highspeed`
//!   gives: after chained recoveries FlightSize can exceed cwnd by more than
//!   1/(1 - b), and a decrease of 1/8 from it would raise the window.
//! - **Timeouts**: ssthresh by the same rule as a loss (Linux's `tcp_enter_loss`
//!   asks the algorithm's `ssthresh`), cwnd the loss window of one segment
//!   (RFC 5681 §3.1); the Linux counter restarts (`snd_cwnd_cnt = 0`).
//! - A congestion mark is answered like a loss, and an ACK echoing one does
//!   not grow the window, as Reno (RFC 3168 §6.1.2).

use super::reno::Reno;
use super::{
    AckSample, CcBuilder, CcDescriptor, CongestionControl, CongestionEvent, EcnUse, EventKind, Response,
    Window,
};
use cclab_wire::{Descriptor, ParamDefault, ParamError, ParamType, Parameter, Params, Role};

pub const DESCRIPTOR: CcDescriptor = Descriptor {
    name: "scalable",
    role: Role::CongestionControl,
    summary: "Scalable TCP (MIMD): cwnd += 0.01 per ACK, cwnd -= cwnd/8 per event above the legacy window",
    source: "Kelly, ACM CCR 33(2) 2003, §2; RFC 3649 §8; Linux net/ipv4/tcp_scalable.c (variant linux)",
    parameters: &[
        Parameter {
            name: "a",
            ty: ParamType::Number,
            unit: "segments",
            min: 1e-4,
            max: 1.0,
            default: ParamDefault::Value("0.01"),
            meaning: "increase per ACK above the legacy window (kelly)",
        },
        Parameter {
            name: "b",
            ty: ParamType::Number,
            unit: "",
            min: 0.01,
            max: 0.5,
            default: ParamDefault::Value("0.125"),
            meaning: "fraction of the window removed at a congestion event",
        },
        Parameter {
            name: "low_window",
            ty: ParamType::Integer,
            unit: "segments",
            min: 0.0,
            max: 1_000_000.0,
            default: ParamDefault::Value("16"),
            meaning: "legacy window: at or below it the rules are Reno's (kelly)",
        },
        Parameter {
            name: "variant",
            ty: ParamType::Choice(&["kelly", "linux"]),
            unit: "",
            min: 0.0,
            max: 0.0,
            default: ParamDefault::Value("kelly"),
            meaning: "kelly: the paper's per-ACK rules; linux: tcp_scalable.c's min(cwnd, ai_cnt) counter",
        },
        Parameter {
            name: "ai_cnt",
            ty: ParamType::Integer,
            unit: "segments",
            min: 1.0,
            max: 1_000_000.0,
            default: ParamDefault::Value("100"),
            meaning: "linux: acknowledged segments per one-segment increase above ai_cnt (50 before 5.x)",
        },
    ],
    metrics: &[],
    build: CcBuilder { build, paces_itself: false, ecn: EcnUse::Optional },
};

fn build(params: &Params) -> Result<Box<dyn CongestionControl>, ParamError> {
    let variant = match params.choice("variant")? {
        "kelly" => Variant::Kelly,
        "linux" => Variant::Linux { ai_cnt: params.number("ai_cnt")? },
        _ => return Err(ParamError { name: "variant".into(), problem: "is not kelly or linux" }),
    };
    Ok(Box::new(Scalable::new(
        params.number("a")?,
        params.number("b")?,
        params.number("low_window")?,
        variant,
    )))
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Variant {
    Kelly,
    Linux { ai_cnt: f64 },
}

#[derive(Debug)]
pub struct Scalable {
    a: f64,
    b: f64,
    low_window: f64,
    variant: Variant,
    /// Linux's `snd_cwnd_cnt`: segments acknowledged towards the next increment.
    count: f64,
}

impl Scalable {
    pub fn new(a: f64, b: f64, low_window: f64, variant: Variant) -> Self {
        Self { a, b, low_window, variant, count: 0.0 }
    }

    /// Linux `tcp_cong_avoid_ai(tp, w, acked)`.
    fn linux_increase(&mut self, w: &mut Window, acked: u64, ai_cnt: f64) {
        let step = w.cwnd.floor().min(ai_cnt).max(1.0);
        if self.count >= step {
            self.count = 0.0;
            w.cwnd += 1.0;
        }
        self.count += acked as f64;
        if self.count >= step {
            let delta = (self.count / step).floor();
            self.count -= delta * step;
            w.cwnd += delta;
        }
    }

    fn decreased(&self, basis: f64) -> f64 {
        let legacy = matches!(self.variant, Variant::Kelly) && basis <= self.low_window;
        if legacy {
            Reno::halved(basis)
        } else {
            ((1.0 - self.b) * basis).max(2.0)
        }
    }
}

impl CongestionControl for Scalable {
    fn name(&self) -> &'static str {
        "scalable"
    }

    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        if !ack.opens_window() {
            return;
        }
        if w.in_slow_start() {
            Reno::increase(w, ack.acked);
            return;
        }
        match self.variant {
            Variant::Kelly if w.cwnd <= self.low_window => Reno::increase(w, ack.acked),
            Variant::Kelly => w.cwnd += self.a,
            Variant::Linux { ai_cnt } => self.linux_increase(w, ack.acked, ai_cnt),
        }
    }

    fn on_congestion(&mut self, w: &Window, event: &CongestionEvent) -> Response {
        let ssthresh = self.decreased(event.basis_within_cwnd(w));
        // Linux zeroes snd_cwnd_cnt at every reduction: tcp_init_cwnd_reduction()
        // (fast recovery, ECN) and tcp_enter_loss() (timeout).
        self.count = 0.0;
        if event.kind == EventKind::Timeout {
            return Response::Reduce { ssthresh, cwnd: 1.0 };
        }
        Response::Reduce { ssthresh, cwnd: ssthresh }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_support::{ack_of, ca, event};

    fn kelly() -> Scalable {
        Scalable::new(0.01, 0.125, 16.0, Variant::Kelly)
    }

    fn ack(acked: u64) -> AckSample {
        ack_of(acked)
    }

    /// Kelly §2: cwnd += 0.01 per ACK above the legacy window, whatever the
    /// window, and per ACK rather than per acknowledged segment.
    #[test]
    fn increase_is_a_per_ack_above_the_legacy_window() {
        let mut s = kelly();
        for cwnd in [17.0, 100.0, 10_000.0] {
            let mut w = ca(cwnd);
            s.on_ack(&mut w, &ack(1));
            assert!((w.cwnd - (cwnd + 0.01)).abs() < 1e-9, "cwnd {cwnd}");
        }
        let mut w = ca(100.0);
        s.on_ack(&mut w, &ack(2));
        assert!((w.cwnd - 100.01).abs() < 1e-9);
        // One window of ACKs multiplies the window by about 1.01.
        let mut w = ca(1000.0);
        for _ in 0..1000 {
            s.on_ack(&mut w, &ack(1));
        }
        assert!((w.cwnd - 1010.0).abs() < 1e-6);
    }

    /// Kelly §2 (legacy window) and RFC 5681: Reno at and below low_window, and in slow start.
    #[test]
    fn reno_at_and_below_the_legacy_window() {
        let mut s = kelly();
        let mut w = ca(16.0);
        s.on_ack(&mut w, &ack(1));
        assert!((w.cwnd - (16.0 + 1.0 / 16.0)).abs() < 1e-12);
        let mut w = Window { cwnd: 100.0, ssthresh: 1000.0 };
        s.on_ack(&mut w, &ack(1));
        assert_eq!(w.cwnd, 101.0);
        assert_eq!(
            s.on_congestion(&ca(16.0), &event(EventKind::FastRetransmit, 16.0)),
            Response::Reduce { ssthresh: 8.0, cwnd: 8.0 }
        );
    }

    /// Kelly §2: cwnd = (1 - 1/8) cwnd at a congestion event, taken from the
    /// event's basis; a timeout leaves one segment.
    #[test]
    fn decrease_is_an_eighth_of_the_basis() {
        let mut s = kelly();
        let w = ca(1000.0);
        assert_eq!(
            s.on_congestion(&w, &event(EventKind::FastRetransmit, 800.0)),
            Response::Reduce { ssthresh: 700.0, cwnd: 700.0 }
        );
        assert_eq!(
            s.on_congestion(&w, &event(EventKind::Mark, 17.0)),
            Response::Reduce { ssthresh: 14.875, cwnd: 14.875 }
        );
        assert_eq!(
            s.on_congestion(&w, &event(EventKind::Timeout, 800.0)),
            Response::Reduce { ssthresh: 700.0, cwnd: 1.0 }
        );
        // A FlightSize above cwnd (chained recoveries) is capped at cwnd.
        assert_eq!(
            s.on_congestion(&ca(800.0), &event(EventKind::FastRetransmit, 1600.0)),
            Response::Reduce { ssthresh: 700.0, cwnd: 700.0 }
        );
    }

    /// Linux tcp_scalable.c: tcp_cong_avoid_ai(min(cwnd, 100)): +1 segment per
    /// cwnd acknowledged segments up to 100 (Reno), per 100 above; no legacy window.
    #[test]
    fn linux_counter_adds_one_segment_per_min_cwnd_ai_cnt_segments() {
        let mut s = Scalable::new(0.01, 0.125, 16.0, Variant::Linux { ai_cnt: 100.0 });
        let mut w = ca(50.0);
        for _ in 0..49 {
            s.on_ack(&mut w, &ack(1));
        }
        assert_eq!(w.cwnd, 50.0);
        s.on_ack(&mut w, &ack(1));
        assert_eq!(w.cwnd, 51.0);
        let mut s = Scalable::new(0.01, 0.125, 16.0, Variant::Linux { ai_cnt: 100.0 });
        let mut w = ca(1000.0);
        for _ in 0..99 {
            s.on_ack(&mut w, &ack(1));
        }
        assert_eq!(w.cwnd, 1000.0);
        s.on_ack(&mut w, &ack(1));
        assert_eq!(w.cwnd, 1001.0);
        // A stretch ACK counts its segments: 250 at once add two, 50 carried.
        s.on_ack(&mut w, &ack(250));
        assert_eq!(w.cwnd, 1003.0);
        assert_eq!(s.count, 50.0);
        // The decrease has no legacy window.
        assert_eq!(
            s.on_congestion(&w, &event(EventKind::FastRetransmit, 16.0)),
            Response::Reduce { ssthresh: 14.0, cwnd: 14.0 }
        );
        // Every reduction zeroes the counter (tcp_init_cwnd_reduction), so no
        // credit from before the loss hastens the first increase after it.
        assert_eq!(s.count, 0.0);
    }
}
