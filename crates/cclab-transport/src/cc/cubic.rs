//! CUBIC: RFC 9438 §4 (Xu, Ha, Rhee, Goel, Eggert, 2023), windows in
//! segments and times in seconds as the RFC writes them.
//!
//! - §4.2: W_cubic(t) = C (t - K)^3 + W_max, where t is the time since the
//!   current congestion avoidance stage began (its first ACK in congestion
//!   avoidance, `t_epoch`) and K = cbrt((W_max - cwnd_epoch) / C), cwnd_epoch
//!   being cwnd at that moment (K = 0 if cwnd_epoch >= W_max). Each ACK aims
//!   at target = W_cubic(t + RTT) clamped to [cwnd, 1.5 cwnd], with RTT the
//!   smoothed round-trip time (RFC 6298 srtt, as §4.1.2 defines RTT; not
//!   min_rtt).
//! - §4.3, Reno-friendly region: W_est starts at cwnd_epoch and grows by
//!   alpha_cubic x segments_acked / cwnd per ACK, alpha_cubic = 3 (1 - beta) /
//!   (1 + beta) until W_est reaches cwnd_prior, 1 after. While W_cubic(t) <
//!   W_est, cwnd is set to W_est; we never let that lower cwnd (the cubic
//!   target is clamped at cwnd for the same reason).
//! - §4.4 and §4.5, concave (cwnd < W_max) and convex regions: cwnd grows by
//!   (target - cwnd) / cwnd per ACK.
//! - §4.6, multiplicative decrease on a loss detected by ACKs or a congestion
//!   mark: ssthresh = beta x flight_size, here `event.basis` (FlightSize by
//!   default; pipe or cwnd if the flow's `ssthresh_basis` says so, cwnd
//!   being what Linux and §4.6's "some implementations" use), at least two
//!   segments; cwnd = beta x basis, at least two segments after a loss and
//!   one after a mark; cwnd_prior = cwnd before the reduction.
//! - §4.7, fast convergence: W_max = cwnd (1 + beta) / 2 if cwnd is below the
//!   previous W_max, else W_max = cwnd.
//! - §4.8, timeout: cwnd is the loss window of one segment (RFC 5681) and
//!   ssthresh is set as in §4.6; the first congestion avoidance stage after
//!   it uses K = 0 and W_max = W_est = cwnd at its beginning. We also start
//!   that way when congestion avoidance begins before any congestion event
//!   (an initial ssthresh), where W_max is not yet defined.
//! - §4.10, slow start: RFC 5681's (Reno's), with no HyStart++; ACKs in loss
//!   recovery or echoing a mark do not grow the window (RFC 3168 §6.1.2).
//!   §4.9's undo of spurious congestion events is not implemented.

use super::reno::Reno;
use super::{
    AckSample, CcBuilder, CcDescriptor, CongestionControl, CongestionEvent, EcnUse, EventKind, Response,
    Window,
};
use cclab_wire::time::to_secs_f64;
use cclab_wire::{
    Descriptor, MetricDesc, Metrics, ParamDefault, ParamError, ParamType, Parameter, Params, Role, Time,
};

pub const DESCRIPTOR: CcDescriptor = Descriptor {
    name: "cubic",
    role: Role::CongestionControl,
    summary: "window W_cubic(t) = C (t - K)^3 + W_max since the last reduction, at least Reno's; beta 0.7",
    source: "RFC 9438 §4.2-§4.8 (no HyStart++, no §4.9 undo)",
    parameters: &[
        Parameter {
            name: "c",
            ty: ParamType::Number,
            unit: "segments/s^3",
            min: 1e-3,
            max: 1e3,
            default: ParamDefault::Value("0.4"),
            meaning: "C, the aggressiveness of the cubic function (§4.1.1)",
        },
        Parameter {
            name: "beta",
            ty: ParamType::Number,
            unit: "",
            min: 0.01,
            max: 0.99,
            default: ParamDefault::Value("0.7"),
            meaning: "beta_cubic, the fraction of the window kept at a congestion event (§4.6)",
        },
        Parameter {
            name: "fast_convergence",
            ty: ParamType::Bool,
            unit: "",
            min: 0.0,
            max: 0.0,
            default: ParamDefault::Value("true"),
            meaning: "a congestion event below the previous W_max sets W_max = cwnd (1 + beta) / 2 (§4.7)",
        },
        Parameter {
            name: "reno_friendly",
            ty: ParamType::Bool,
            unit: "",
            min: 0.0,
            max: 0.0,
            default: ParamDefault::Value("true"),
            meaning: "never grow slower than the AIMD estimate W_est (§4.3)",
        },
    ],
    metrics: &[
        MetricDesc { name: "w_max", unit: "segments", meaning: "W_max, the plateau of the cubic function" },
        MetricDesc { name: "k", unit: "s", meaning: "K, the time from the epoch start to reach W_max" },
        MetricDesc {
            name: "target",
            unit: "segments",
            meaning: "the target of the last ACK in congestion avoidance",
        },
        MetricDesc { name: "w_est", unit: "segments", meaning: "W_est, the Reno-friendly estimate" },
    ],
    build: CcBuilder { build, paces_itself: false, ecn: EcnUse::Optional },
};

fn build(p: &Params) -> Result<Box<dyn CongestionControl>, ParamError> {
    Ok(Box::new(Cubic::new(Config {
        c: p.number("c")?,
        beta: p.number("beta")?,
        fast_convergence: p.bool("fast_convergence")?,
        reno_friendly: p.bool("reno_friendly")?,
    })))
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    pub c: f64,
    pub beta: f64,
    pub fast_convergence: bool,
    pub reno_friendly: bool,
}

impl Default for Config {
    /// RFC 9438 §4.1.1, §4.3, §4.7.
    fn default() -> Self {
        Self { c: 0.4, beta: 0.7, fast_convergence: true, reno_friendly: true }
    }
}

/// The current congestion avoidance stage.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Epoch {
    start: Time,
    k: f64,
    w_est: f64,
}

#[derive(Debug)]
pub struct Cubic {
    config: Config,
    /// W_max; 0 before the first congestion event.
    w_max: f64,
    cwnd_prior: f64,
    /// None until the first ACK of the next congestion avoidance stage.
    epoch: Option<Epoch>,
    /// The next stage starts as §4.8 says (K = 0, W_max = cwnd_epoch).
    restart: bool,
    target: f64,
}

impl Cubic {
    pub fn new(config: Config) -> Self {
        Self { config, w_max: 0.0, cwnd_prior: 0.0, epoch: None, restart: true, target: 0.0 }
    }

    pub fn w_max(&self) -> f64 {
        self.w_max
    }

    /// K of the current stage, if one has begun.
    pub fn k(&self) -> Option<f64> {
        self.epoch.map(|e| e.k)
    }

    pub fn w_est(&self) -> Option<f64> {
        self.epoch.map(|e| e.w_est)
    }

    /// §4.3: AIMD(alpha, beta) with this alpha has Reno's average window.
    pub fn alpha(beta: f64) -> f64 {
        3.0 * (1.0 - beta) / (1.0 + beta)
    }

    /// §4.2, eq. (2).
    pub fn k_for(c: f64, w_max: f64, cwnd_epoch: f64) -> f64 {
        if cwnd_epoch >= w_max {
            0.0
        } else {
            ((w_max - cwnd_epoch) / c).cbrt()
        }
    }

    /// §4.2, eq. (1): the window `t` seconds into the stage.
    pub fn w_cubic(&self, t: f64) -> f64 {
        let k = self.epoch.map_or(0.0, |e| e.k);
        self.config.c * (t - k).powi(3) + self.w_max
    }

    fn begin_stage(&mut self, now: Time, cwnd: f64) -> Epoch {
        if self.restart {
            self.w_max = cwnd;
            self.restart = false;
        }
        Epoch { start: now, k: Self::k_for(self.config.c, self.w_max, cwnd), w_est: cwnd }
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        if !ack.opens_window() {
            return;
        }
        if w.in_slow_start() {
            Reno::increase(w, ack.acked);
            return;
        }
        let mut epoch = match self.epoch {
            Some(e) => e,
            None => self.begin_stage(ack.now, w.cwnd),
        };
        let t = to_secs_f64(ack.now.saturating_sub(epoch.start));
        self.epoch = Some(epoch);
        let target = self.w_cubic(t + to_secs_f64(ack.srtt)).max(w.cwnd).min(1.5 * w.cwnd);
        self.target = target;
        let alpha = if epoch.w_est >= self.cwnd_prior { 1.0 } else { Self::alpha(self.config.beta) };
        epoch.w_est += alpha * ack.acked as f64 / w.cwnd;
        self.epoch = Some(epoch);
        if self.config.reno_friendly && self.w_cubic(t) < epoch.w_est {
            w.cwnd = w.cwnd.max(epoch.w_est);
        } else {
            w.cwnd += (target - w.cwnd) / w.cwnd;
        }
    }

    fn on_congestion(&mut self, w: &Window, event: &CongestionEvent) -> Response {
        let c = self.config;
        let reduced = c.beta * event.basis_within_cwnd(w);
        let ssthresh = reduced.max(2.0);
        self.cwnd_prior = w.cwnd;
        self.epoch = None;
        if event.kind == EventKind::Timeout {
            self.restart = true;
            return Response::Reduce { ssthresh, cwnd: 1.0 };
        }
        self.w_max =
            if c.fast_convergence && w.cwnd < self.w_max { w.cwnd * (1.0 + c.beta) / 2.0 } else { w.cwnd };
        self.restart = false;
        let cwnd = if event.kind == EventKind::Mark { reduced.max(1.0) } else { ssthresh };
        Response::Reduce { ssthresh, cwnd }
    }

    fn metrics(&self, out: &mut Metrics<'_>) {
        out.put("w_max", self.w_max);
        out.put("k", self.k().unwrap_or(0.0));
        out.put("target", self.target);
        out.put("w_est", self.w_est().unwrap_or(0.0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_support::{ack_of, event};
    use crate::cc::AckPhase;
    use cclab_wire::time::millis;

    const SEC: f64 = 1e9;

    fn ack(now: Time, srtt: Time) -> AckSample {
        let mut a = ack_of(1);
        a.now = now;
        a.srtt = srtt;
        a
    }

    /// Drives a flow in congestion avoidance for `secs` seconds, one ACK per
    /// segment of the window spread evenly over each round trip of `rtt`,
    /// and returns cwnd at each requested time.
    fn drive(cubic: &mut Cubic, w: &mut Window, rtt: Time, start: Time, at: &[f64]) -> Vec<f64> {
        let mut now = start;
        let mut out = Vec::new();
        for &t in at {
            let until = start + (t * SEC) as Time;
            while now < until {
                let n = w.cwnd.floor().max(1.0) as u64;
                for _ in 0..n {
                    now += rtt / n;
                    cubic.on_ack(w, &ack(now, rtt));
                }
            }
            out.push(w.cwnd);
        }
        out
    }

    /// A flow that lost at W_max = 100 and starts congestion avoidance at
    /// cwnd = 70 at time 1 s, as after a fast recovery with beta 0.7.
    fn after_loss_at_100(config: Config) -> (Cubic, Window) {
        let mut c = Cubic::new(config);
        let w = Window { cwnd: 100.0, ssthresh: 1e9 };
        assert_eq!(
            c.on_congestion(&w, &event(EventKind::FastRetransmit, 100.0)),
            Response::Reduce { ssthresh: 70.0, cwnd: 70.0 }
        );
        (c, Window { cwnd: 70.0, ssthresh: 70.0 })
    }

    /// §4.2: after a loss at W_max 100 with beta 0.7 the window is 70 and
    /// K = cbrt(30 / 0.4) = 4.217 s; W_cubic is 70 at t = 0, 100 - 0.4 (K/2)^3
    /// = 96.25 at K/2, 100 at K and 130 at 2K (eq. 1); each ACK's target is
    /// W_cubic(t + srtt).
    #[test]
    fn the_window_after_a_loss_follows_the_cubic_function() {
        let (mut c, mut w) = after_loss_at_100(Config { reno_friendly: false, ..Config::default() });
        let rtt = millis(100);
        c.on_ack(&mut w, &ack(secs_ns(1.0), rtt));
        let k = c.k().unwrap();
        assert!((k - (30.0f64 / 0.4).cbrt()).abs() < 1e-12 && (k - 4.217).abs() < 1e-3, "{k}");
        assert!((c.w_cubic(0.0) - 70.0).abs() < 1e-9);
        assert!((c.w_cubic(k / 2.0) - 96.25).abs() < 1e-9);
        assert!((c.w_cubic(k) - 100.0).abs() < 1e-9);
        assert!((c.w_cubic(2.0 * k) - 130.0).abs() < 1e-9);
        assert!((c.target - c.w_cubic(0.1)).abs() < 1e-9, "target = W_cubic(t + RTT)");
        // Driven by ACKs, cwnd tracks W_cubic a round trip ahead.
        let got = drive(&mut c, &mut w, rtt, secs_ns(1.0), &[k / 2.0, k, 2.0 * k]);
        for (cwnd, t) in got.iter().zip([k / 2.0, k, 2.0 * k]) {
            let (now, next) = (c.w_cubic(t), c.w_cubic(t + 0.1));
            assert!(
                *cwnd >= now - 0.5 && *cwnd <= next + 0.5,
                "t {t:.2}: cwnd {cwnd:.2} vs {now:.2}..{next:.2}"
            );
        }
    }

    /// §4.2: the target is clamped to at most 1.5 cwnd, so cwnd grows by at
    /// most half a segment per ACK even far past K.
    #[test]
    fn the_target_is_at_most_one_and_a_half_cwnd() {
        let (mut c, mut w) = after_loss_at_100(Config { reno_friendly: false, ..Config::default() });
        c.on_ack(&mut w, &ack(0, millis(100)));
        let before = w.cwnd;
        c.on_ack(&mut w, &ack(secs_ns(60.0), millis(100)));
        assert_eq!(c.target, 1.5 * before);
        assert!((w.cwnd - (before + 0.5)).abs() < 1e-9);
    }

    /// §4.3: with a short RTT and a small window W_cubic grows slower than
    /// AIMD(alpha_cubic, beta), so cwnd follows W_est: 7 + 0.5294 per RTT,
    /// then one segment per RTT once W_est reaches cwnd_prior = 10.
    #[test]
    fn the_reno_friendly_region_takes_over_at_small_rtt_and_window() {
        let mut c = Cubic::new(Config::default());
        let w = Window { cwnd: 10.0, ssthresh: 1e9 };
        c.on_congestion(&w, &event(EventKind::FastRetransmit, 10.0));
        let mut w = Window { cwnd: 7.0, ssthresh: 7.0 };
        assert!((Cubic::alpha(0.7) - 0.9 / 1.7).abs() < 1e-12);
        // 1 ms RTT: K = cbrt(3 / 0.4) = 1.96 s, ~2000 round trips.
        let rtt = millis(1);
        let got = drive(&mut c, &mut w, rtt, 0, &[0.004, 0.010]);
        let w_cubic = c.w_cubic(0.010);
        assert!(w_cubic < 7.1, "{w_cubic}");
        assert!((got[0] - (7.0 + 4.0 * 0.5294)).abs() < 0.3, "{got:?}");
        // 3 / 0.5294 = 5.7 round trips to reach 10, then ~1 per round trip.
        assert!(got[1] > 12.5 && got[1] < 14.5, "{got:?}");
        assert_eq!(w.cwnd, c.w_est().unwrap());
        // Without the region, cwnd stays on the cubic curve.
        let mut plain = Cubic::new(Config { reno_friendly: false, ..Config::default() });
        plain.on_congestion(&Window { cwnd: 10.0, ssthresh: 1e9 }, &event(EventKind::FastRetransmit, 10.0));
        let mut w = Window { cwnd: 7.0, ssthresh: 7.0 };
        let got = drive(&mut plain, &mut w, rtt, 0, &[0.010]);
        assert!(got[0] < 7.2, "{got:?}");
    }

    /// §4.7: a congestion event below the previous W_max sets W_max = cwnd
    /// (1 + beta) / 2 = 0.85 cwnd; at or above it, W_max = cwnd; disabled,
    /// always cwnd.
    #[test]
    fn fast_convergence_lowers_w_max_below_cwnd() {
        let (mut c, _) = after_loss_at_100(Config::default());
        c.on_congestion(&Window { cwnd: 90.0, ssthresh: 70.0 }, &event(EventKind::FastRetransmit, 90.0));
        assert!((c.w_max() - 76.5).abs() < 1e-9);
        c.on_congestion(&Window { cwnd: 80.0, ssthresh: 70.0 }, &event(EventKind::FastRetransmit, 80.0));
        assert_eq!(c.w_max(), 80.0);
        let (mut off, _) = after_loss_at_100(Config { fast_convergence: false, ..Config::default() });
        off.on_congestion(&Window { cwnd: 90.0, ssthresh: 70.0 }, &event(EventKind::FastRetransmit, 90.0));
        assert_eq!(off.w_max(), 90.0);
    }

    /// §4.6: ssthresh = beta x the basis (FlightSize here, smaller than
    /// cwnd), at least 2; W_max and cwnd_prior are cwnd before the reduction;
    /// a mark reduces like a loss, but cwnd may go down to one segment.
    #[test]
    fn the_decrease_keeps_beta_of_the_basis() {
        let mut c = Cubic::new(Config::default());
        let w = Window { cwnd: 100.0, ssthresh: 1e9 };
        assert_eq!(
            c.on_congestion(&w, &event(EventKind::FastRetransmit, 80.0)),
            Response::Reduce { ssthresh: 56.0, cwnd: 56.0 }
        );
        assert_eq!((c.w_max(), c.cwnd_prior), (100.0, 100.0));
        assert_eq!(
            c.on_congestion(&w, &event(EventKind::Mark, 40.0)),
            Response::Reduce { ssthresh: 28.0, cwnd: 28.0 }
        );
        assert_eq!(
            c.on_congestion(&w, &event(EventKind::FastRetransmit, 2.0)),
            Response::Reduce { ssthresh: 2.0, cwnd: 2.0 }
        );
        assert_eq!(
            c.on_congestion(&w, &event(EventKind::Mark, 1.0)),
            Response::Reduce { ssthresh: 2.0, cwnd: 1.0 }
        );
    }

    /// §4.8: a timeout leaves one segment and ssthresh = beta x basis; slow
    /// start follows, and the first congestion avoidance stage after it has
    /// K = 0 and W_max = W_est = cwnd at its start.
    #[test]
    fn after_a_timeout_the_next_stage_starts_with_k_zero() {
        let (mut c, _) = after_loss_at_100(Config::default());
        let w = Window { cwnd: 80.0, ssthresh: 70.0 };
        assert_eq!(
            c.on_congestion(&w, &event(EventKind::Timeout, 60.0)),
            Response::Reduce { ssthresh: 42.0, cwnd: 1.0 }
        );
        let mut w = Window { cwnd: 1.0, ssthresh: 42.0 };
        let mut now = 0;
        while w.in_slow_start() {
            now += millis(1);
            c.on_ack(&mut w, &ack(now, millis(10)));
        }
        assert_eq!(c.k(), None, "slow start is not a stage");
        c.on_ack(&mut w, &ack(now, millis(10)));
        assert_eq!((c.k(), c.w_max()), (Some(0.0), 42.0));
        assert!(c.w_est().unwrap() > 42.0 && c.w_est().unwrap() < 42.1);
    }

    /// §4.10 and RFC 3168: slow start is Reno's; ACKs in recovery or echoing
    /// a mark do not grow the window.
    #[test]
    fn slow_start_is_reno_and_recovery_or_marks_do_not_grow() {
        let mut c = Cubic::new(Config::default());
        let mut w = Window { cwnd: 10.0, ssthresh: 100.0 };
        c.on_ack(&mut w, &ack(0, millis(10)));
        assert_eq!(w.cwnd, 11.0);
        let mut r = ack(0, millis(10));
        r.phase = AckPhase::Recovery;
        c.on_ack(&mut w, &r);
        let mut m = ack(0, millis(10));
        m.ece = true;
        c.on_ack(&mut w, &m);
        assert_eq!(w.cwnd, 11.0);
    }

    fn secs_ns(s: f64) -> Time {
        (s * SEC) as Time
    }
}
