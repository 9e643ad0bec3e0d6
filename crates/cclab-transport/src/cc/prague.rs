//! TCP Prague, the L4S congestion control: draft-briscoe-iccrg-prague-
//! congestion-control-04 (De Schepper, Tilmans, Briscoe, Goel, July 2024)
//! and its reference, Linux `net/ipv4/tcp_prague.c` v0.7 (L4STeam, 2024),
//! whose fractional-window mode (`prague_cwnd_mode` 0) is modelled here.
//!
//! Prague is DCTCP adapted to the Internet (RFC 9331 Appendix A, the
//! "Prague requirements"): its packets are ECT(1), it needs AccECN, it paces,
//! and it is RTT-independent below a target RTT.
//!
//! - **The marked fraction.** Per packet-timed round (from SND.NXT when the
//!   round began until SND.UNA reaches it), alpha = (1 - g) alpha + g F, F the
//!   fraction of delivered segments the receiver reported CE-marked (AccECN's
//!   CE bytes over the segment size; at most 1), g = 1/16. Alpha is not
//!   updated before the first mark ("proof that there's an AQM on the path").
//! - **The window** is a fractional `frac_cwnd`; the sender's cwnd follows
//!   it one segment per ACK, up or down, to ceil(frac_cwnd), at least 2 (on
//!   a step down ssthresh = cwnd), in loss recovery too: Prague owns cwnd,
//!   as Linux's `cong_control` does (no proportional rate reduction, no
//!   NewReno inflation).
//! - **Growth.** In slow start, cwnd += the unmarked segments delivered (up
//!   to ssthresh), frac_cwnd = cwnd. After it, frac_cwnd += a x unmarked /
//!   frac_cwnd per ACK: only unmarked segments grow the window, so with a
//!   marking probability p the growth per round is proportional to (1 - p).
//!   `a` is 1 (one segment per round) until RTT independence starts, then
//!   (srtt / rtt_target)^2 while srtt < rtt_target (25 ms): a flow of any
//!   shorter RTT gains rate as fast as a 25 ms flow.
//! - **RTT independence** starts `rtt_transition` (4) rounds after slow
//!   start; from then the EWMA and the window reduction happen at most once
//!   per rtt_target.
//! - **The first mark** halves frac_cwnd and ends slow start (`alpha_mode =
//!   "halve"`: alpha starts at 0), or alpha starts at 1 (`"one"`), Linux
//!   `prague_alpha_mode`.
//! - **A mark** reduces frac_cwnd by alpha / 2 of itself, once per window of
//!   data (the sender's rule, Linux's CWR state); ssthresh is left as it is
//!   (Linux `prague_ssthresh`), and cwnd steps down on the next ACKs.
//! - **A loss** halves frac_cwnd, as Reno (the draft's classic response to
//!   loss), also within a window already reduced for a mark (Linux enters
//!   recovery from CWR), and the window does not grow until the loss episode
//!   ends (SND.UNA passes what was outstanding at the loss, or recovery
//!   ends); a timeout leaves a loss window of one segment, from where cwnd
//!   climbs one segment per ACK back to frac_cwnd; ssthresh is left as it is.
//! - **Pacing** at mss x max(frac_cwnd, in flight) / srtt, doubled while
//!   cwnd is below half ssthresh (slow start).
//!
//! Where this departs from its sources, and why:
//! - Linux's default switches to a rate-based mode below 4 MTUs of window
//!   (`prague_cwnd_mode` 2) and adapts the MTU down to 150 bytes so that a
//!   window can shrink below 2 packets; neither is modelled (windows here are
//!   whole segments of the flow's `mss`, at least 2).
//! - The pacing rate's +/-3 % alternation within each round (Linux's
//!   RATE_OFFSET, only in the rate-based mode) is not modelled.
//! - Linux scales the additive increase to 1500-byte MTUs
//!   (`MTU_SYS / mtu`); here it is one segment of the flow's size.
//! - The rate paces whole packets from a payload rate, as BBR here does: with
//!   40-byte headers on 1000-byte segments the flow paces 4 % below
//!   cwnd / srtt.
//! - Linux enters CWR (and reduces, with the alpha it had) before the ACK's
//!   window update and EWMA; here the ACK's update and a round's EWMA come
//!   first and the sender then asks for the reduction, with the new alpha (so
//!   in "halve" mode the first mark also cuts by g F / 2 after halving).
//!   Within RTT independence a mark less than rtt_target after the last
//!   reduction is not reduced for, and the next marked ACK asks again (Linux
//!   waits for its CWR episode to end).
//! - Linux halves frac_cwnd at the first mark but, when the same ACK also
//!   delivered unmarked segments in slow start, sets frac_cwnd back to the
//!   grown cwnd, so the halving the mode is named for is lost; here the
//!   first mark also ends slow start (ssthresh = the halved window), as a
//!   mark ends Reno's and DCTCP's.
//! - The draft's detection of a classic ECN AQM (§2.4.3, a research
//!   placeholder in Linux) is not modelled.

use super::{
    AckPhase, AckSample, CcBuilder, CcDescriptor, CongestionControl, CongestionEvent, EcnUse, EventKind,
    Response, Window,
};
use cclab_wire::time::{millis, to_secs_f64};
use cclab_wire::{
    Descriptor, MetricDesc, Metrics, ParamDefault, ParamError, ParamType, Parameter, Params, Role, Time,
};

pub const DESCRIPTOR: CcDescriptor = Descriptor {
    name: "prague",
    role: Role::CongestionControl,
    summary:
        "L4S: DCTCP's alpha-scaled response to ECT(1) marks, fractional window, RTT-independent growth, paced",
    source:
        "draft-briscoe-iccrg-prague-congestion-control-04; Linux tcp_prague.c v0.7 (fractional-window mode)",
    parameters: &[
        Parameter {
            name: "g",
            ty: ParamType::Number,
            unit: "",
            min: 1e-6,
            max: 1.0,
            default: ParamDefault::Value("0.0625"),
            meaning: "the EWMA gain of alpha per round (Linux PRAGUE_SHIFT_G: 1/16)",
        },
        Parameter {
            name: "rtt_target",
            ty: ParamType::Duration,
            unit: "s",
            min: 0.0,
            max: 10.0,
            default: ParamDefault::Value("25ms"),
            meaning:
                "below this RTT the flow grows as if its RTT were this (RTT independence); 0 turns it off",
        },
        Parameter {
            name: "rtt_transition",
            ty: ParamType::Integer,
            unit: "rounds",
            min: 0.0,
            max: 1e6,
            default: ParamDefault::Value("4"),
            meaning: "rounds after slow start before RTT independence starts",
        },
        Parameter {
            name: "alpha_mode",
            ty: ParamType::Choice(&["halve", "one"]),
            unit: "",
            min: 0.0,
            max: 0.0,
            default: ParamDefault::Value("halve"),
            meaning: "halve: alpha starts at 0 and the first mark halves the window; one: alpha starts at 1",
        },
    ],
    metrics: &[
        MetricDesc {
            name: "alpha",
            unit: "",
            meaning: "the EWMA of the fraction of segments marked per round",
        },
        MetricDesc { name: "frac_cwnd", unit: "segments", meaning: "the fractional window cwnd follows" },
        MetricDesc {
            name: "ai",
            unit: "segments",
            meaning: "the additive increase per round (below 1 when RTT-independent under rtt_target)",
        },
        MetricDesc { name: "round", unit: "", meaning: "rounds since slow start ended" },
        MetricDesc {
            name: "saw_ce",
            unit: "",
            meaning: "1 once a CE mark was reported: an AQM marks on the path",
        },
    ],
    build: CcBuilder { build, paces_itself: true, ecn: EcnUse::L4s },
};

/// Above this RTT the increase is never scaled (Linux MAX_SCALED_RTT).
const MAX_SCALED_RTT: Time = millis(100);

fn build(p: &Params) -> Result<Box<dyn CongestionControl>, ParamError> {
    let config = Config {
        g: p.number("g")?,
        rtt_target: p.duration("rtt_target")?.unwrap_or(Config::default().rtt_target),
        rtt_transition: p.number("rtt_transition")? as u64,
        halve_on_first_mark: p.choice("alpha_mode")? == "halve",
    };
    Ok(Box::new(Prague::new(config)))
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    pub g: f64,
    pub rtt_target: Time,
    pub rtt_transition: u64,
    pub halve_on_first_mark: bool,
}

impl Default for Config {
    fn default() -> Self {
        Self { g: 1.0 / 16.0, rtt_target: millis(25), rtt_transition: 4, halve_on_first_mark: true }
    }
}

#[derive(Debug)]
pub struct Prague {
    config: Config,
    alpha: f64,
    frac_cwnd: f64,
    /// The additive increase per round: 1, or (srtt / rtt_target)^2.
    ai: f64,
    saw_ce: bool,
    in_loss: bool,
    /// SND.NXT when the loss was detected: the loss episode ends when SND.UNA passes it.
    loss_end: u64,
    /// SND.NXT after the last ACK.
    snd_max: u64,
    /// Rounds since slow start ended.
    round: u64,
    /// The round ends when SND.UNA reaches this segment.
    round_end: u64,
    round_delivered: u64,
    round_marked: f64,
    last_alpha_update: Time,
    last_reduction: Option<Time>,
    srtt: Time,
    in_flight: u64,
    mss: u32,
    in_slow_start: bool,
}

impl Prague {
    pub fn new(config: Config) -> Self {
        Self {
            alpha: if config.halve_on_first_mark { 0.0 } else { 1.0 },
            config,
            frac_cwnd: 0.0,
            ai: 1.0,
            saw_ce: false,
            in_loss: false,
            loss_end: 0,
            snd_max: 0,
            round: 0,
            round_end: 0,
            round_delivered: 0,
            round_marked: 0.0,
            last_alpha_update: 0,
            last_reduction: None,
            srtt: 0,
            in_flight: 0,
            mss: 0,
            in_slow_start: true,
        }
    }

    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// RTT independence applies: out of slow start for `rtt_transition` rounds.
    fn rtt_independent(&self) -> bool {
        !self.in_slow_start && self.round >= self.config.rtt_transition
    }

    /// The segments this ACK reported CE-marked: AccECN's byte count in
    /// segments, or (classic feedback) all it delivered when it echoes a mark.
    fn marked_segments(ack: &AckSample) -> f64 {
        match ack.ce_bytes {
            Some(bytes) => bytes as f64 / f64::from(ack.mss.max(1)),
            None if ack.ece => ack.delivered as f64,
            None => 0.0,
        }
    }

    /// The additive increase per round (Linux `prague_ai_ack_increase`).
    fn additive_increase(&self) -> f64 {
        let target = self.config.rtt_target;
        if self.round < self.config.rtt_transition || self.srtt == 0 || self.srtt > MAX_SCALED_RTT {
            return 1.0;
        }
        if self.srtt >= target {
            return 1.0;
        }
        let ratio = to_secs_f64(self.srtt) / to_secs_f64(target);
        ratio * ratio
    }

    /// The window update of one ACK (Linux `prague_update_cwnd`).
    fn update_window(&mut self, w: &mut Window, ack: &AckSample, marked: f64) {
        if self.frac_cwnd == 0.0 {
            self.frac_cwnd = w.cwnd;
        }
        if marked > 0.0 {
            if !self.saw_ce && self.config.halve_on_first_mark {
                self.frac_cwnd /= 2.0;
                w.ssthresh = w.ssthresh.min(self.frac_cwnd.max(2.0));
            }
            self.saw_ce = true;
        }
        let unmarked = (ack.delivered as f64 - marked).max(0.0);
        if unmarked > 0.0 && !self.in_loss && ack.cwnd_limited && ack.phase == AckPhase::Open {
            if w.in_slow_start() {
                w.cwnd = (w.cwnd + unmarked).min(w.ssthresh);
                self.frac_cwnd = w.cwnd;
            } else {
                self.frac_cwnd += self.ai * unmarked / self.frac_cwnd;
            }
        }
        // cwnd follows frac_cwnd one segment per ACK (Linux's step-wise adjustment).
        let target = self.frac_cwnd.ceil().max(2.0);
        if w.cwnd > target {
            w.cwnd = (w.cwnd - 1.0).max(target);
            w.ssthresh = w.cwnd;
        } else if w.cwnd < target {
            w.cwnd = (w.cwnd + 1.0).min(target);
        }
    }

    /// The round's end: alpha's EWMA and a new round (Linux
    /// `prague_should_update_ewma`, `prague_update_alpha`, `prague_new_round`).
    fn end_round_if_due(&mut self, ack: &AckSample) {
        if ack.snd_una < self.round_end {
            return;
        }
        if self.rtt_independent() && ack.now < self.last_alpha_update + self.config.rtt_target {
            return;
        }
        if self.saw_ce {
            // Marks may be reported on an ACK that delivers nothing new (a
            // duplicate): counted in the round, and the fraction capped.
            let fraction = (self.round_marked / self.round_delivered.max(1) as f64).min(1.0);
            self.alpha = (1.0 - self.config.g) * self.alpha + self.config.g * fraction;
            self.last_alpha_update = ack.now;
        }
        self.round_end = ack.snd_max;
        self.round_delivered = 0;
        self.round_marked = 0.0;
        if !self.in_slow_start {
            self.round += 1;
        }
        self.ai = self.additive_increase();
    }
}

impl CongestionControl for Prague {
    fn name(&self) -> &'static str {
        "prague"
    }

    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        self.srtt = ack.srtt;
        self.in_flight = ack.in_flight;
        self.mss = ack.mss;
        if self.in_loss && ack.phase == AckPhase::Open && ack.snd_una >= self.loss_end {
            self.in_loss = false;
        }
        let marked = Self::marked_segments(ack);
        self.round_delivered += ack.delivered;
        self.round_marked += marked;
        self.update_window(w, ack, marked);
        self.in_slow_start = w.in_slow_start();
        self.end_round_if_due(ack);
        self.snd_max = ack.snd_max;
    }

    fn on_congestion(&mut self, w: &Window, event: &CongestionEvent) -> Response {
        if self.frac_cwnd == 0.0 {
            self.frac_cwnd = w.cwnd;
        }
        match event.kind {
            EventKind::Mark => {
                let recent = self.last_reduction.is_some_and(|t| event.now < t + self.config.rtt_target);
                if self.rtt_independent() && recent {
                    return Response::NoReduction;
                }
                self.last_reduction = Some(event.now);
                self.frac_cwnd -= self.alpha * self.frac_cwnd / 2.0;
                // cwnd follows frac_cwnd on the next ACKs; the response keeps
                // both so that the sender counts this window as reduced for.
                Response::Reduce { ssthresh: w.ssthresh, cwnd: w.cwnd }
            }
            EventKind::FastRetransmit | EventKind::Timeout => {
                self.frac_cwnd /= 2.0;
                self.in_loss = true;
                self.loss_end = self.snd_max;
                let cwnd = if event.kind == EventKind::Timeout { 1.0 } else { w.cwnd };
                Response::Reduce { ssthresh: w.ssthresh, cwnd }
            }
        }
    }

    fn owns_cwnd_in_recovery(&self) -> bool {
        true
    }

    fn answers_loss_after_mark(&self) -> bool {
        true
    }

    fn on_recovery_exit(&mut self, _w: &mut Window, _now: Time) {
        self.in_loss = false;
    }

    fn on_timeout_recovered(&mut self, _w: &mut Window, _now: Time) {
        self.in_loss = false;
    }

    fn pacing_rate(&self, w: &Window, srtt: Time) -> Option<f64> {
        if srtt == 0 || self.mss == 0 {
            return None;
        }
        let window = self.frac_cwnd.max(self.in_flight as f64).max(1.0);
        let rate = f64::from(self.mss) * window / to_secs_f64(srtt);
        Some(if w.cwnd < w.ssthresh / 2.0 { 2.0 * rate } else { rate })
    }

    fn metrics(&self, out: &mut Metrics<'_>) {
        out.put("alpha", self.alpha);
        out.put("frac_cwnd", self.frac_cwnd);
        out.put("ai", self.ai);
        out.put("round", self.round as f64);
        out.put("saw_ce", f64::from(u8::from(self.saw_ce)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_support::event;

    const G: f64 = 1.0 / 16.0;

    /// An ACK at `now` ms delivering `delivered` segments of which `marked`
    /// were reported CE (AccECN), leaving SND.UNA and SND.NXT at `una`, `nxt`.
    fn ack(now: u64, delivered: u64, marked: u64, una: u64, nxt: u64, srtt_ms: u64) -> AckSample {
        let mut a = AckSample::new(millis(now), 1000);
        a.acked = delivered;
        a.delivered = delivered;
        a.ce_bytes = Some(marked * 1000);
        a.ece = marked > 0;
        (a.snd_una, a.snd_max) = (una, nxt);
        a.srtt = millis(srtt_ms);
        a
    }

    fn prague() -> Prague {
        Prague::new(Config::default())
    }

    fn descriptor_default(name: &str) -> &'static str {
        match DESCRIPTOR.parameters.iter().find(|p| p.name == name).map(|p| p.default) {
            Some(ParamDefault::Value(v)) => v,
            _ => "",
        }
    }

    #[test]
    fn the_defaults_are_linuxs() {
        assert_eq!(descriptor_default("g"), "0.0625", "PRAGUE_SHIFT_G 4");
        assert_eq!(descriptor_default("rtt_target"), "25ms", "RTT_TARGET");
        assert_eq!(descriptor_default("rtt_transition"), "4", "DEFAULT_RTT_TRANSITION");
        assert_eq!(descriptor_default("alpha_mode"), "halve", "prague_alpha_mode 0");
        assert_eq!(DESCRIPTOR.build.ecn, EcnUse::L4s);
        const { assert!(DESCRIPTOR.build.paces_itself) };
    }

    #[test]
    fn slow_start_grows_by_the_unmarked_segments_and_the_first_mark_halves_the_window() {
        let mut p = prague();
        let mut w = Window { cwnd: 10.0, ssthresh: 1e9 };
        p.on_ack(&mut w, &ack(10, 2, 0, 2, 12, 10));
        assert_eq!(w.cwnd, 12.0, "two unmarked segments");
        p.on_ack(&mut w, &ack(11, 2, 1, 4, 14, 10));
        // The first mark halved 12 and ended slow start; the unmarked
        // segment then grew the window by a / frac_cwnd.
        assert!((p.frac_cwnd - (6.0 + 1.0 / 6.0)).abs() < 1e-12, "{}", p.frac_cwnd);
        assert_eq!((w.cwnd, w.ssthresh), (11.0, 11.0), "cwnd steps down one segment, ssthresh follows");
        assert!(p.saw_ce);
        for i in 0..10 {
            p.on_ack(&mut w, &ack(12 + i, 0, 0, 4, 14, 10));
        }
        assert_eq!(w.cwnd, 7.0, "one step per ACK to ceil(frac_cwnd)");
    }

    /// Only unmarked segments grow the window: a x unmarked / frac_cwnd.
    #[test]
    fn additive_increase_counts_unmarked_segments_only() {
        let mut p = prague();
        p.saw_ce = true;
        p.in_slow_start = false;
        p.frac_cwnd = 20.0;
        let mut w = Window { cwnd: 20.0, ssthresh: 20.0 };
        p.round_end = 100;
        p.on_ack(&mut w, &ack(0, 4, 1, 10, 40, 50));
        assert!((p.frac_cwnd - (20.0 + 3.0 / 20.0)).abs() < 1e-12);
        let before = p.frac_cwnd;
        p.on_ack(&mut w, &ack(1, 2, 2, 12, 40, 50));
        assert_eq!(p.frac_cwnd, before, "all marked: no growth");
    }

    /// Linux `prague_rate_scaled_ai_ack_increase`: (srtt / target)^2 below the
    /// target, once RTT independence has started; 1 otherwise.
    #[test]
    fn the_increase_is_scaled_by_the_square_of_srtt_over_the_target() {
        let mut p = prague();
        p.in_slow_start = false;
        p.srtt = millis(5);
        p.round = 3;
        assert_eq!(p.additive_increase(), 1.0, "before rtt_transition rounds");
        p.round = 4;
        assert!((p.additive_increase() - 0.04).abs() < 1e-12, "(5 / 25)^2");
        p.srtt = millis(25);
        assert_eq!(p.additive_increase(), 1.0);
        p.srtt = millis(101);
        assert_eq!(p.additive_increase(), 1.0, "above MAX_SCALED_RTT");
    }

    /// The rate gained per second is the same for any RTT below the target:
    /// a round of a 5 ms flow adds 0.04 segments, 200 rounds a second, as a
    /// 25 ms flow adds 1 segment in each of its 40: 8 and 40 segments a
    /// second of window, i.e. 8/5ms = 40/25ms = 1600 segments/s^2 of rate.
    #[test]
    fn rtt_independence_equalises_the_rate_increase() {
        let gain = |srtt_ms: u64| {
            let mut p = prague();
            p.in_slow_start = false;
            p.round = 10;
            p.srtt = millis(srtt_ms);
            let rounds_per_second = 1000.0 / srtt_ms as f64;
            p.additive_increase() * rounds_per_second / (srtt_ms as f64 / 1000.0)
        };
        assert!((gain(5) - gain(25)).abs() < 1e-6 * gain(25), "{} vs {}", gain(5), gain(25));
        assert!(gain(50) < gain(25), "above the target a longer RTT gains more slowly, as Reno");
    }

    #[test]
    fn alpha_is_the_ewma_of_the_marked_fraction_per_round() {
        let mut p = prague();
        p.saw_ce = true;
        p.in_slow_start = false;
        p.frac_cwnd = 10.0;
        let mut w = Window { cwnd: 10.0, ssthresh: 10.0 };
        p.round_end = 10;
        p.on_ack(&mut w, &ack(0, 5, 1, 5, 15, 50));
        assert_eq!(p.alpha, 0.0, "within the round");
        p.on_ack(&mut w, &ack(1, 5, 1, 10, 20, 50));
        assert!((p.alpha - G * 0.2).abs() < 1e-12, "F = 2 / 10");
        assert_eq!((p.round_end, p.round), (20, 1));
    }

    /// Before any mark alpha keeps its initial value (1 in mode "one", where
    /// an update with F = 0 would lower it); the first mark starts the EWMA.
    #[test]
    fn alpha_waits_for_the_first_mark() {
        let mut one = Prague::new(Config { halve_on_first_mark: false, ..Config::default() });
        let mut w = Window { cwnd: 10.0, ssthresh: 10.0 };
        assert_eq!(one.alpha, 1.0, "alpha_mode one");
        one.on_ack(&mut w, &ack(0, 10, 0, 10, 20, 50));
        assert_eq!(one.alpha, 1.0, "no AQM seen yet: alpha is not updated");
        assert_eq!(one.round_end, 20, "the round still ended");
        one.on_ack(&mut w, &ack(1, 10, 5, 20, 30, 50));
        assert!((one.alpha - ((1.0 - G) + G * 0.5)).abs() < 1e-12, "{}", one.alpha);
    }

    /// Marks reported on an ACK that delivers nothing new (a duplicate ACK
    /// without SACK) still count toward the round's fraction.
    #[test]
    fn marks_on_a_duplicate_ack_count_toward_alpha() {
        let mut p = prague();
        (p.saw_ce, p.in_slow_start, p.frac_cwnd, p.round_end) = (true, false, 10.0, 10);
        let mut w = Window { cwnd: 10.0, ssthresh: 10.0 };
        p.on_ack(&mut w, &ack(0, 0, 2, 5, 15, 50));
        p.on_ack(&mut w, &ack(1, 8, 0, 10, 20, 50));
        assert!((p.alpha - G * 0.25).abs() < 1e-12, "F = 2 / 8: {}", p.alpha);
    }

    /// Once RTT-independent, the EWMA moves at most once per rtt_target.
    #[test]
    fn rtt_independent_rounds_last_at_least_the_target_rtt() {
        let mut p = prague();
        p.saw_ce = true;
        p.in_slow_start = false;
        p.round = 4;
        p.frac_cwnd = 10.0;
        let mut w = Window { cwnd: 10.0, ssthresh: 10.0 };
        p.on_ack(&mut w, &ack(30, 10, 10, 10, 20, 5));
        let after = p.alpha;
        assert!(after > 0.0);
        p.on_ack(&mut w, &ack(40, 10, 10, 20, 30, 5));
        assert_eq!(p.alpha, after, "10 ms after the last update, below 25 ms");
        p.on_ack(&mut w, &ack(56, 10, 10, 30, 40, 5));
        assert!(p.alpha > after);
    }

    #[test]
    fn a_mark_cuts_the_fractional_window_by_alpha_over_two() {
        let mut p = prague();
        p.frac_cwnd = 40.0;
        p.alpha = 0.5;
        let w = Window { cwnd: 40.0, ssthresh: 100.0 };
        let r = p.on_congestion(&w, &event(EventKind::Mark, 40.0));
        assert_eq!(p.frac_cwnd, 30.0);
        assert_eq!(r, Response::Reduce { ssthresh: 100.0, cwnd: 40.0 }, "cwnd follows on the next ACKs");
    }

    #[test]
    fn rtt_independent_reductions_are_at_least_the_target_rtt_apart() {
        let mut p = prague();
        (p.frac_cwnd, p.alpha, p.in_slow_start, p.round) = (40.0, 0.5, false, 4);
        let w = Window { cwnd: 40.0, ssthresh: 40.0 };
        let at = |ms| {
            let mut e = event(EventKind::Mark, 40.0);
            e.now = millis(ms);
            e
        };
        assert!(matches!(p.on_congestion(&w, &at(100)), Response::Reduce { .. }));
        assert_eq!(p.on_congestion(&w, &at(110)), Response::NoReduction);
        assert!(matches!(p.on_congestion(&w, &at(126)), Response::Reduce { .. }));
    }

    /// The loss episode ends when SND.UNA passes SND.NXT of the loss, however
    /// far SND.NXT has moved since; the window steps down to the halved
    /// frac_cwnd meanwhile (Prague owns cwnd in recovery).
    #[test]
    fn a_loss_halves_the_window_and_stops_growth_until_the_episode_ends() {
        let mut p = prague();
        (p.frac_cwnd, p.in_slow_start) = (40.0, false);
        let mut w = Window { cwnd: 40.0, ssthresh: 40.0 };
        p.on_ack(&mut w, &ack(0, 0, 0, 10, 50, 50));
        let r = p.on_congestion(&w, &event(EventKind::FastRetransmit, 40.0));
        assert_eq!(p.frac_cwnd, 20.0);
        assert_eq!(r, Response::Reduce { ssthresh: 40.0, cwnd: 40.0 }, "Linux keeps both; cwnd steps down");
        assert!(p.owns_cwnd_in_recovery() && p.answers_loss_after_mark());
        let frac = p.frac_cwnd;
        let mut in_recovery = ack(1, 5, 0, 20, 60, 50);
        in_recovery.phase = AckPhase::Recovery;
        p.on_ack(&mut w, &in_recovery);
        assert_eq!((p.frac_cwnd, w.cwnd), (frac, 39.0), "no growth; one step down");
        p.on_ack(&mut w, &ack(2, 5, 0, 45, 70, 50));
        assert!(p.in_loss, "SND.NXT moved on to 70, but the loss's was 50");
        p.on_ack(&mut w, &ack(3, 5, 0, 50, 80, 50));
        assert!(!p.in_loss, "SND.UNA passed the data outstanding at the loss");
        let timeout = p.on_congestion(&w, &event(EventKind::Timeout, 40.0));
        assert!(matches!(timeout, Response::Reduce { cwnd, .. } if cwnd == 1.0));
    }

    #[test]
    fn pacing_is_the_window_over_srtt_doubled_in_slow_start() {
        let mut p = prague();
        (p.frac_cwnd, p.mss) = (20.0, 1000);
        let ca = Window { cwnd: 20.0, ssthresh: 20.0 };
        assert_eq!(p.pacing_rate(&ca, millis(10)), Some(2_000_000.0), "20 x 1000 bytes / 10 ms");
        p.in_flight = 30;
        assert_eq!(p.pacing_rate(&ca, millis(10)), Some(3_000_000.0), "in flight above the window");
        let ss = Window { cwnd: 20.0, ssthresh: 1e9 };
        assert_eq!(p.pacing_rate(&ss, millis(10)), Some(6_000_000.0));
        assert_eq!(p.pacing_rate(&ca, 0), None, "no rate before an RTT sample");
    }
}
