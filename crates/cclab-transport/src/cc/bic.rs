//! BI-TCP, binary increase congestion control: Xu, Harfoush and Rhee,
//! "Binary Increase Congestion Control for Fast, Long Distance Networks",
//! INFOCOM 2004, §III (binary search increase, additive increase, max
//! probing, fast convergence), with the parameters of seed paper 000 (Table 1
//! and §IV: Smax 32, Smin 0.01, beta 0.125, Low_Window 14). Linux
//! `net/ipv4/tcp_bic.c` is the named alternative `constants = "linux"`.
//!
//! Our reading of the paper (`constants = "paper"`), per round trip, in
//! segments. The increment is chosen once per round trip (when as many
//! segments as the window held at the last choice have been acknowledged)
//! and each ACK adds a cwnd-th of it, so that the binary search halves the
//! distance to Wmax each round, as the paper's per-RTT description has it;
//! recomputing it on every ACK would shrink the distance by e^-1/2 per round
//! instead, and grow it e-fold rather than double it in max probing.
//!
//! - Binary search (cwnd < Wmax): the target is the midpoint of cwnd (the
//!   current minimum, Wmin) and Wmax, so the increment is (Wmax - cwnd) / 2;
//!   when that is more than Smax the flow adds Smax instead (additive
//!   increase), and it never adds less than Smin, so it crosses Wmax after
//!   the distance has shrunk below Smin.
//! - Max probing (cwnd >= Wmax): the mirror image, "slow start" then
//!   additive increase: the increment is the distance already gone past
//!   Wmax, starting at Smin and doubling each round until it reaches Smax.
//! - Loss: Wmax is the window before the reduction, except that a flow
//!   losing below its previous Wmax (fast convergence) lowers it further to
//!   cwnd (2 - beta) / 2, the midpoint of the window and the one it falls
//!   to; the window is then (1 - beta) times `event.basis` (the paper writes
//!   cwnd; FlightSize, pipe or cwnd as the flow's `ssthresh_basis` says).
//!   Wmax is taken from cwnd, the saturation point the flow reached, as RFC
//!   9438 does for CUBIC, whatever the basis.
//! - At or below `low_window`, Reno (RFC 5681) grows and halves the window,
//!   so BI-TCP is as friendly as TCP where TCP works well. The window that
//!   decides at a loss is the basis the decrease applies to.
//! - Slow start, timeouts (loss window of one segment) and marks follow
//!   RFC 5681 and RFC 3168 as Reno does; a timeout updates Wmax as any loss.
//!
//! `constants = "linux"` follows `tcp_bic.c` (Linux 5.x): B = 4, max_increment
//! 16, beta 819/1024, smooth_part 20, integer windows, and its per-ACK count
//! `cnt` (cwnd grows by one after cnt acknowledged segments) with the 16x
//! scaled EWMA of segments per ACK that divides it; with no known maximum
//! (after a timeout, which resets the state) cnt is at most 20. There the
//! paper's `smax`, `smin` and `beta` do not apply; `low_window` and
//! `fast_convergence` do.

use super::reno::Reno;
use super::{
    AckSample, CcBuilder, CcDescriptor, CongestionControl, CongestionEvent, EcnUse, EventKind, Response,
    Window,
};
use cclab_wire::{
    Descriptor, MetricDesc, Metrics, ParamDefault, ParamError, ParamType, Parameter, Params, Role,
};

pub const DESCRIPTOR: CcDescriptor = Descriptor {
    name: "bic",
    role: Role::CongestionControl,
    summary:
        "binary search toward the last maximum Wmax, max probing above it, increments in [Smin, Smax] per RTT",
    source: "Xu, Harfoush, Rhee, INFOCOM 2004, §III; seed paper 000 Table 1 and §IV (parameters); \
             Linux net/ipv4/tcp_bic.c (constants = \"linux\")",
    parameters: &[
        Parameter {
            name: "constants",
            ty: ParamType::Choice(&["paper", "linux"]),
            unit: "",
            min: 0.0,
            max: 0.0,
            default: ParamDefault::Value("paper"),
            meaning:
                "the paper's rules with smax, smin and beta, or Linux tcp_bic.c's (B 4, max_increment 16, \
                      beta 819/1024, smooth_part 20, its cnt rules), which ignore those three",
        },
        Parameter {
            name: "smax",
            ty: ParamType::Number,
            unit: "segments",
            min: 1e-6,
            max: 1e6,
            default: ParamDefault::Value("32"),
            meaning: "largest increment per RTT (additive increase far from Wmax)",
        },
        Parameter {
            name: "smin",
            ty: ParamType::Number,
            unit: "segments",
            min: 1e-6,
            max: 1e6,
            default: ParamDefault::Value("0.01"),
            meaning:
                "smallest increment per RTT (binary search ends when the distance to Wmax is below it); \
                      at most smax",
        },
        Parameter {
            name: "beta",
            ty: ParamType::Number,
            unit: "",
            min: 0.001,
            max: 0.999,
            default: ParamDefault::Value("0.125"),
            meaning: "fraction of the window removed at a loss: w = (1 - beta) w",
        },
        Parameter {
            name: "low_window",
            ty: ParamType::Number,
            unit: "segments",
            min: 0.0,
            max: 1e9,
            default: ParamDefault::Value("14"),
            meaning: "at or below this window, Reno's increase and halving",
        },
        Parameter {
            name: "fast_convergence",
            ty: ParamType::Bool,
            unit: "",
            min: 0.0,
            max: 0.0,
            default: ParamDefault::Value("true"),
            meaning: "a loss below the previous Wmax sets Wmax to cwnd (2 - beta) / 2",
        },
    ],
    metrics: &[
        MetricDesc { name: "w_max", unit: "segments", meaning: "Wmax, the window the binary search aims at" },
        MetricDesc {
            name: "increment",
            unit: "segments",
            meaning: "the increment per RTT in force at the last ACK (1/cwnd per ACK times cwnd for Reno)",
        },
    ],
    build: CcBuilder { build, paces_itself: false, ecn: EcnUse::Optional },
};

fn build(p: &Params) -> Result<Box<dyn CongestionControl>, ParamError> {
    let smax = p.number("smax")?;
    let smin = p.number("smin")?;
    if smin > smax {
        return Err(ParamError { name: "smin".into(), problem: "must be at most smax" });
    }
    let config = Config {
        smax,
        smin,
        beta: p.number("beta")?,
        low_window: p.number("low_window")?,
        fast_convergence: p.bool("fast_convergence")?,
    };
    Ok(Box::new(match p.choice("constants")? {
        "linux" => Bic::linux(config),
        _ => Bic::paper(config),
    }))
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    pub smax: f64,
    pub smin: f64,
    pub beta: f64,
    pub low_window: f64,
    pub fast_convergence: bool,
}

impl Default for Config {
    /// The seed paper's values.
    fn default() -> Self {
        Self { smax: 32.0, smin: 0.01, beta: 0.125, low_window: 14.0, fast_convergence: true }
    }
}

/// Linux tcp_bic.c's constants.
pub mod linux {
    pub const BETA_SCALE: u64 = 1024;
    pub const B: u64 = 4;
    pub const MAX_INCREMENT: u64 = 16;
    pub const BETA: u64 = 819;
    pub const SMOOTH_PART: u64 = 20;
    /// The segments-per-ACK EWMA is kept scaled by 2^4.
    pub const ACK_RATIO_SHIFT: u32 = 4;
    /// The EWMA starts at two segments per ACK.
    pub const INITIAL_DELAYED_ACK: u64 = 2 << ACK_RATIO_SHIFT;
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Rules {
    Paper,
    /// Linux keeps its scaled segments-per-ACK average here.
    Linux {
        delayed_ack: u64,
    },
}

#[derive(Debug)]
pub struct Bic {
    config: Config,
    rules: Rules,
    /// Wmax in segments (Linux: `last_max_cwnd`, whole segments; 0 = unknown).
    w_max: f64,
    /// The increment per RTT in force.
    increment: f64,
    /// Segments still to be acknowledged before the paper's increment is chosen again.
    round_left: f64,
}

impl Bic {
    pub fn paper(config: Config) -> Self {
        Self { config, rules: Rules::Paper, w_max: 0.0, increment: 0.0, round_left: 0.0 }
    }

    pub fn linux(config: Config) -> Self {
        Self {
            config,
            rules: Rules::Linux { delayed_ack: linux::INITIAL_DELAYED_ACK },
            w_max: 0.0,
            increment: 0.0,
            round_left: 0.0,
        }
    }

    pub fn w_max(&self) -> f64 {
        self.w_max
    }

    /// The paper's increment per RTT at window `cwnd`, given Wmax.
    pub fn paper_increment(c: &Config, cwnd: f64, w_max: f64) -> f64 {
        let inc = if cwnd < w_max { (w_max - cwnd) / 2.0 } else { cwnd - w_max };
        // Not f64::clamp: smin <= smax is checked by the builder, but a
        // hand-built Config must not panic.
        inc.min(c.smax).max(c.smin)
    }

    /// Linux `bictcp_update()`: how many acknowledged segments make cwnd grow
    /// by one, before the delayed-ACK scaling.
    pub fn linux_cnt(cwnd: u64, last_max: u64, low_window: u64) -> u64 {
        use linux::*;
        if cwnd <= low_window {
            return cwnd;
        }
        let cnt = if cwnd < last_max {
            let dist = (last_max - cwnd) / B;
            if dist > MAX_INCREMENT {
                cwnd / MAX_INCREMENT
            } else if dist <= 1 {
                cwnd * SMOOTH_PART / B
            } else {
                cwnd / dist
            }
        } else if cwnd < last_max + B {
            cwnd * SMOOTH_PART / B
        } else if cwnd < last_max + MAX_INCREMENT * (B - 1) {
            cwnd * (B - 1) / (cwnd - last_max)
        } else {
            cwnd / MAX_INCREMENT
        };
        if last_max == 0 {
            cnt.min(20)
        } else {
            cnt
        }
    }

    /// `cnt` scaled by the segments-per-ACK average, never below one.
    pub fn linux_scaled_cnt(cnt: u64, delayed_ack: u64) -> u64 {
        ((cnt << linux::ACK_RATIO_SHIFT) / delayed_ack.max(1)).max(1)
    }

    /// Linux `bictcp_recalc_ssthresh()` at whole windows `cwnd` (for Wmax)
    /// and `basis` (for the decrease): (new last_max, ssthresh).
    pub fn linux_loss(
        cwnd: u64,
        basis: u64,
        last_max: u64,
        low_window: u64,
        fast_convergence: bool,
    ) -> (u64, u64) {
        use linux::*;
        let w_max = if cwnd < last_max && fast_convergence {
            cwnd * (BETA_SCALE + BETA) / (2 * BETA_SCALE)
        } else {
            cwnd
        };
        let ssthresh =
            if basis <= low_window { (basis / 2).max(2) } else { (basis * BETA / BETA_SCALE).max(2) };
        (w_max, ssthresh)
    }
}

impl CongestionControl for Bic {
    fn name(&self) -> &'static str {
        "bic"
    }

    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        if !ack.opens_window() {
            return;
        }
        let c = self.config;
        match &mut self.rules {
            Rules::Paper => {
                if w.in_slow_start() || w.cwnd <= c.low_window {
                    self.increment = if w.in_slow_start() { w.cwnd } else { 1.0 };
                    self.round_left = 0.0;
                    Reno::increase(w, ack.acked);
                } else {
                    if self.round_left <= 0.0 {
                        self.increment = Self::paper_increment(&c, w.cwnd, self.w_max);
                        self.round_left = w.cwnd;
                    }
                    self.round_left -= ack.acked as f64;
                    w.cwnd += self.increment / w.cwnd;
                }
            }
            Rules::Linux { delayed_ack } => {
                // bictcp_acked(): only acknowledgments in the Open state count.
                *delayed_ack =
                    (*delayed_ack + ack.acked).saturating_sub(*delayed_ack >> linux::ACK_RATIO_SHIFT);
                if w.in_slow_start() {
                    self.increment = w.cwnd;
                    Reno::increase(w, ack.acked);
                    return;
                }
                let whole = w.cwnd.floor().max(1.0) as u64;
                let cnt = Self::linux_cnt(whole, self.w_max as u64, c.low_window as u64);
                // bictcp_update() returns before the delayed-ACK scaling at or
                // below low_window: there it is plain Reno.
                let cnt = if whole <= c.low_window as u64 {
                    cnt
                } else {
                    Self::linux_scaled_cnt(cnt, *delayed_ack)
                };
                // tcp_cong_avoid_ai(): one segment per cnt acknowledged segments.
                self.increment = whole as f64 / cnt as f64;
                w.cwnd += ack.acked as f64 / cnt as f64;
            }
        }
    }

    fn on_congestion(&mut self, w: &Window, event: &CongestionEvent) -> Response {
        let c = self.config;
        self.round_left = 0.0;
        let basis = event.basis_within_cwnd(w);
        let ssthresh = match &mut self.rules {
            Rules::Paper => {
                self.w_max = if w.cwnd < self.w_max && c.fast_convergence {
                    w.cwnd * (2.0 - c.beta) / 2.0
                } else {
                    w.cwnd
                };
                if basis <= c.low_window {
                    Reno::halved(basis)
                } else {
                    ((1.0 - c.beta) * basis).max(2.0)
                }
            }
            Rules::Linux { delayed_ack } => {
                let whole = |x: f64| x.floor().max(0.0) as u64;
                let (last_max, ssthresh) = Self::linux_loss(
                    whole(w.cwnd),
                    whole(basis),
                    self.w_max as u64,
                    c.low_window as u64,
                    c.fast_convergence,
                );
                self.w_max = last_max as f64;
                if event.kind == EventKind::Timeout {
                    // bictcp_state(TCP_CA_Loss) resets everything it learnt.
                    self.w_max = 0.0;
                    *delayed_ack = linux::INITIAL_DELAYED_ACK;
                }
                ssthresh as f64
            }
        };
        let cwnd = if event.kind == EventKind::Timeout { 1.0 } else { ssthresh };
        Response::Reduce { ssthresh, cwnd }
    }

    fn metrics(&self, out: &mut Metrics<'_>) {
        out.put("w_max", self.w_max);
        out.put("increment", self.increment);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_support::{ack_of, event};
    use crate::cc::AckPhase;

    fn ack() -> AckSample {
        ack_of(1)
    }

    fn loss(basis: f64) -> CongestionEvent {
        event(EventKind::FastRetransmit, basis)
    }

    /// A paper-rules flow in congestion avoidance at `cwnd` with Wmax `w_max`.
    fn paper_at(w_max: f64) -> Bic {
        let mut b = Bic::paper(Config::default());
        b.w_max = w_max;
        b
    }

    /// Sends one round of ACKs (one per segment of the window at its start)
    /// and returns the growth.
    fn one_rtt(b: &mut Bic, w: &mut Window) -> f64 {
        let start = w.cwnd;
        for _ in 0..start.round() as usize {
            b.on_ack(w, &ack());
        }
        w.cwnd - start
    }

    /// Paper §III, additive increase: far below Wmax, half the distance
    /// exceeds Smax and the window grows by Smax = 32 per RTT.
    #[test]
    fn far_below_w_max_the_increment_is_smax_per_rtt() {
        let mut b = paper_at(1000.0);
        assert_eq!(Bic::paper_increment(&b.config, 500.0, 1000.0), 32.0);
        let mut w = Window { cwnd: 500.0, ssthresh: 10.0 };
        let grown = one_rtt(&mut b, &mut w);
        // 500 ACKs of 32/cwnd each, cwnd rising from 500 to 532.
        assert!((grown - 32.0).abs() < 1.1, "{grown}");
        assert!(grown <= 32.0);
    }

    /// Paper §III, binary search: within 2 Smax of Wmax the target is the
    /// midpoint, so the increment is (Wmax - cwnd) / 2 per RTT and the
    /// distance halves each round.
    #[test]
    fn binary_search_adds_half_the_distance_to_w_max_per_rtt() {
        let c = Config::default();
        assert_eq!(Bic::paper_increment(&c, 980.0, 1000.0), 10.0);
        let mut b = paper_at(1000.0);
        let mut w = Window { cwnd: 960.0, ssthresh: 10.0 };
        let mut distances = vec![40.0];
        for _ in 0..4 {
            one_rtt(&mut b, &mut w);
            distances.push(1000.0 - w.cwnd);
        }
        for d in distances.windows(2) {
            assert!((d[1] - d[0] / 2.0).abs() < 0.05 * d[0], "{distances:?}");
        }
    }

    /// Paper §III: the increment is never below Smin, so near Wmax the
    /// window creeps by Smin = 0.01 per RTT.
    #[test]
    fn near_w_max_the_increment_is_smin() {
        let c = Config::default();
        assert_eq!(Bic::paper_increment(&c, 999.995, 1000.0), 0.01);
        let mut b = paper_at(1000.0);
        let mut w = Window { cwnd: 999.99, ssthresh: 10.0 };
        let grown = one_rtt(&mut b, &mut w);
        assert!((grown - 0.01).abs() < 1e-6, "{grown}");
    }

    /// Paper §III, max probing: above Wmax the increment is the distance past
    /// Wmax (starting from Smin), so it doubles each RTT like slow start,
    /// until it is capped at Smax.
    #[test]
    fn max_probing_above_w_max_doubles_the_increment_up_to_smax() {
        let c = Config::default();
        assert_eq!(Bic::paper_increment(&c, 1000.0, 1000.0), 0.01);
        assert_eq!(Bic::paper_increment(&c, 1004.0, 1000.0), 4.0);
        assert_eq!(Bic::paper_increment(&c, 1100.0, 1000.0), 32.0);
        let mut b = paper_at(1000.0);
        let mut w = Window { cwnd: 1001.0, ssthresh: 10.0 };
        let mut incs = Vec::new();
        for _ in 0..8 {
            incs.push(one_rtt(&mut b, &mut w));
        }
        for i in incs.windows(2).take(4) {
            assert!(i[1] > 1.8 * i[0] && i[1] < 2.1 * i[0], "{incs:?}");
        }
        assert!(incs.iter().all(|&i| i <= 32.0));
        assert!((incs[7] - 32.0).abs() < 1.0, "capped at Smax: {incs:?}");
    }

    /// Paper §III: a loss at or above the previous Wmax remembers the window
    /// as Wmax; a loss below it (fast convergence) sets Wmax = cwnd (2 - beta) / 2.
    #[test]
    fn fast_convergence_sets_w_max_below_cwnd_when_losing_below_the_previous_w_max() {
        let w = Window { cwnd: 800.0, ssthresh: 10.0 };
        let mut b = paper_at(700.0);
        b.on_congestion(&w, &loss(800.0));
        assert_eq!(b.w_max(), 800.0);
        let mut b = paper_at(1000.0);
        b.on_congestion(&w, &loss(800.0));
        assert_eq!(b.w_max(), 800.0 * (2.0 - 0.125) / 2.0);
        assert!(b.w_max() < w.cwnd);
        let mut off = Bic::paper(Config { fast_convergence: false, ..Config::default() });
        off.w_max = 1000.0;
        off.on_congestion(&w, &loss(800.0));
        assert_eq!(off.w_max(), 800.0);
    }

    /// Paper §III: w = (1 - beta) w, taken from the event's basis (here a
    /// flight smaller than cwnd); a timeout leaves one segment (RFC 5681).
    #[test]
    fn the_decrease_removes_beta_of_the_basis() {
        let w = Window { cwnd: 800.0, ssthresh: 10.0 };
        let mut b = paper_at(0.0);
        assert_eq!(b.on_congestion(&w, &loss(600.0)), Response::Reduce { ssthresh: 525.0, cwnd: 525.0 });
        assert_eq!(b.w_max(), 800.0, "Wmax is the window reached");
        let mut timeout = loss(600.0);
        timeout.kind = EventKind::Timeout;
        assert_eq!(b.on_congestion(&w, &timeout), Response::Reduce { ssthresh: 525.0, cwnd: 1.0 });
    }

    /// Seed paper 000 Table 1: regular TCP at or below Low_Window = 14 — one
    /// segment per RTT and halving.
    #[test]
    fn at_or_below_the_low_window_it_is_reno() {
        let mut b = paper_at(1000.0);
        let mut w = Window { cwnd: 14.0, ssthresh: 2.0 };
        b.on_ack(&mut w, &ack());
        assert_eq!(w.cwnd, 14.0 + 1.0 / 14.0);
        assert_eq!(b.on_congestion(&w, &loss(14.0)), Response::Reduce { ssthresh: 7.0, cwnd: 7.0 });
        // A basis above cwnd (now just above the low window) is capped at it
        // (CongestionEvent::basis_within_cwnd), and BI-TCP's decrease applies.
        let kept = 0.875 * w.cwnd;
        assert_eq!(b.on_congestion(&w, &loss(16.0)), Response::Reduce { ssthresh: kept, cwnd: kept });
        let mut b = paper_at(1000.0);
        let mut w = Window { cwnd: 14.5, ssthresh: 2.0 };
        b.on_ack(&mut w, &ack());
        assert_eq!(w.cwnd, 14.5 + 32.0 / 14.5, "above it, BI-TCP");
    }

    /// Slow start, ACKs in recovery and ACKs echoing a mark behave as Reno.
    #[test]
    fn slow_start_is_reno_and_recovery_or_marks_do_not_grow() {
        let mut b = paper_at(1000.0);
        let mut w = Window { cwnd: 100.0, ssthresh: 200.0 };
        b.on_ack(&mut w, &ack());
        assert_eq!(w.cwnd, 101.0);
        let mut r = ack();
        r.phase = AckPhase::Recovery;
        b.on_ack(&mut w, &r);
        let mut m = ack();
        m.ece = true;
        b.on_ack(&mut w, &m);
        assert_eq!(w.cwnd, 101.0);
    }

    /// algorithms.md §3.2, Linux tcp_bic.c cnt: (cwnd, last_max) -> cnt with
    /// delayed_ack 16 (one segment per ACK) and 32 (two).
    #[test]
    fn linux_rules_at_or_below_the_low_window_are_reno() {
        // Linux bictcp_update(): `if (cwnd <= low_window) { ca->cnt = cwnd; return; }`
        // comes before the delayed-ACK scaling: +1 per 14 segments at cwnd 14,
        // where the scaled count (224 / 32 = 7) would give +2.
        let mut b = Bic::linux(Config::default());
        let mut w = Window { cwnd: 14.0, ssthresh: 2.0 };
        for _ in 0..7 {
            b.on_ack(&mut w, &ack());
        }
        assert!((w.cwnd - 14.5).abs() < 1e-9, "{}", w.cwnd);
    }

    #[test]
    fn linux_cnt_test_vectors() {
        for (cwnd, last_max, one, two) in
            [(100, 200, 6, 3), (100, 140, 10, 5), (100, 104, 500, 250), (100, 90, 30, 15)]
        {
            let cnt = Bic::linux_cnt(cwnd, last_max, 14);
            assert_eq!(Bic::linux_scaled_cnt(cnt, 16), one, "cwnd {cwnd} last_max {last_max}");
            assert_eq!(Bic::linux_scaled_cnt(cnt, 32), two, "cwnd {cwnd} last_max {last_max}");
        }
        assert_eq!(Bic::linux_cnt(14, 200, 14), 14, "Reno at the low window");
        assert_eq!(Bic::linux_cnt(1000, 0, 14), 20, "no known maximum: at least 5 % per RTT");
        assert_eq!(Bic::linux_cnt(1000, 900, 14), 62);
    }

    /// algorithms.md §3.2, Linux tcp_bic.c ssthresh: loss at 100 -> 79 and
    /// last_max 89 (fast convergence); 14 -> 7; 15 -> 11.
    #[test]
    fn linux_loss_test_vectors() {
        assert_eq!(Bic::linux_loss(100, 100, 200, 14, true), (89, 79));
        assert_eq!(Bic::linux_loss(100, 100, 50, 14, true), (100, 79));
        assert_eq!(Bic::linux_loss(14, 14, 0, 14, true).1, 7);
        assert_eq!(Bic::linux_loss(15, 15, 0, 14, true).1, 11);
        let mut b = Bic::linux(Config::default());
        b.w_max = 200.0;
        let w = Window { cwnd: 100.0, ssthresh: 10.0 };
        assert_eq!(b.on_congestion(&w, &loss(100.0)), Response::Reduce { ssthresh: 79.0, cwnd: 79.0 });
        assert_eq!(b.w_max(), 89.0);
    }

    /// Linux tcp_bic.c in the simulator's terms: `delayed_ack += acked -
    /// (delayed_ack >> 4)` truncates, so with one segment per ACK it falls
    /// from its initial 32 to 31 and stays there (every value in [16, 31] is
    /// a fixed point): cnt 6 for cwnd 100 below last_max 200 is scaled to
    /// 96 / 31 = 3, and cwnd grows by 1/3 per ACK. A timeout forgets last_max.
    #[test]
    fn linux_rules_grow_by_one_per_cnt_segments() {
        let mut b = Bic::linux(Config::default());
        b.w_max = 200.0;
        let mut w = Window { cwnd: 100.0, ssthresh: 10.0 };
        for _ in 0..200 {
            b.on_ack(&mut w, &ack());
            w.cwnd = 100.0;
        }
        assert_eq!(b.rules, Rules::Linux { delayed_ack: 31 });
        b.on_ack(&mut w, &ack());
        assert!((w.cwnd - (100.0 + 1.0 / 3.0)).abs() < 1e-12, "{}", w.cwnd);
        let mut timeout = loss(100.0);
        timeout.kind = EventKind::Timeout;
        assert_eq!(b.on_congestion(&w, &timeout), Response::Reduce { ssthresh: 79.0, cwnd: 1.0 });
        assert_eq!((b.w_max(), b.rules), (0.0, Rules::Linux { delayed_ack: 32 }));
    }

    /// The builder rejects Smin above Smax, naming smin.
    #[test]
    fn smin_above_smax_is_rejected() {
        let mut p = DESCRIPTOR.info().defaults().unwrap();
        p.insert("smin", cclab_wire::ParamValue::Number(40.0));
        let e = (DESCRIPTOR.build.build)(&p).err().unwrap();
        assert_eq!(e.name, "smin");
        p.insert("smin", cclab_wire::ParamValue::Number(32.0));
        assert!((DESCRIPTOR.build.build)(&p).is_ok());
    }
}
