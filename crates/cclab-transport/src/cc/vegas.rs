//! TCP Vegas: Brakmo and Peterson, "TCP Vegas: end to end congestion
//! avoidance on a global Internet", IEEE JSAC 13(8):1465-1480, 1995 (and
//! Brakmo, O'Malley, Peterson, SIGCOMM 1994), as ns-2 ports it
//! (`tcp/tcp-vegas.cc` v1.37, hbatmit/ns2.35 @0400ea50, defaults in
//! `tcl/lib/ns-default.tcl`); `variant = "linux"` is Linux
//! `net/ipv4/tcp_vegas.c` (Rtoax/linux-5.10.13 @4145aee3).
//!
//! Both variants:
//! - BaseRTT is the smallest RTT sample of the connection (every sample the
//!   sender takes, in every phase; the sender's Karn rule already drops
//!   samples of retransmitted segments).
//! - A round is a packet-timed round trip: it ends at the ACK that delivers
//!   the first segment sent after the round began (the sender's
//!   `round_start`, the same test as Linux's `after(ack, beg_snd_nxt)` and
//!   ns-2's `seqno >= v_begseq_`). Vegas decides once per round, at that ACK,
//!   from the samples of the round just ended; between decisions only slow
//!   start grows the window. The sample an ACK carries counts in the round
//!   that ACK closes (Linux calls `pkts_acked` before `cong_avoid`; ns-2
//!   adds it after its per-RTT step, to the next round).
//! - Decisions happen only outside loss recovery, on an ACK that echoes no
//!   mark. A congestion event or the end of recovery restarts the round
//!   bookkeeping, and the first round after it only collects samples (Linux
//!   `vegas_enable` at every return to Open: the window and the samples of
//!   the round that contained the loss are stale).
//! - cwnd never falls below 2 segments through a Vegas decision (Linux's
//!   clamp, ns-2's `if (cwnd_ < 2) cwnd_ = 2`).
//! - Loss response: Reno's ([`Reno`]: ssthresh = half the flow's ssthresh
//!   basis, one segment after a timeout). Linux uses `tcp_reno_ssthresh`.
//!   The paper's (and ns-2's) new retransmission mechanism, a fine-grained
//!   per-segment timer checked on the first duplicate ACKs with its own 3/4
//!   window decrease, belongs to loss recovery and is not modelled here: the
//!   flow's `recovery` option chooses recovery, and every variant halves.
//!   A congestion mark is answered like a loss (RFC 3168 §6.1.2).
//!
//! `variant = "paper"` (default; alpha, beta, gamma = 1, 3, 1, ns-2's defaults):
//! - Expected = floor(cwnd) / BaseRTT: the paper's WindowSize, which it
//!   takes to equal the data in transit (ns-2 uses the segments outstanding);
//!   a fractional segment is never sent, and counting it would add up to one
//!   segment to Diff, enough to stall a flow below alpha (seen: two flows
//!   split a link 4.4 to 1). Actual = (segments first sent during the
//!   round) / RTT of the round, with the round's RTT the mean of its samples
//!   (ns-2's `v_sumRTT_ / v_cntRTT_`; the paper times one distinguished
//!   segment per round, which the mean of all samples of that round
//!   estimates with less noise). Diff = (Expected - Actual) x BaseRTT,
//!   segments, kept as a real number (ns-2 rounds it to the nearest integer).
//!   A round without an RTT sample makes no decision.
//! - Congestion avoidance: Diff < alpha: cwnd grows by one segment spread
//!   over the next round (by acked / cwnd per ACK, stopping at one segment,
//!   so delayed ACKs do not halve it); Diff > beta: cwnd -= 1 at once
//!   (ns-2's `--cwnd_`); otherwise hold. At Diff exactly alpha or beta, hold.
//! - Modified slow start (cwnd < ssthresh): rounds alternate between holding
//!   cwnd and growing it as slow start does (one segment per ACK, not above
//!   ssthresh), starting with a hold round, so that each growth decision is
//!   taken after a round at a constant window. At the start of a growth
//!   round, if Diff > gamma, Vegas leaves slow start instead: ssthresh = 2
//!   and cwnd -= cwnd / 8, at least 2 (ns-2's exit: the paper names the
//!   gamma test but no window; ssthresh 2 keeps the connection in
//!   congestion avoidance until a timeout).
//! - Not modelled from ns-2's port: its `(cwnd - outstanding) <= 2` guard on
//!   increases, its BaseRTT reset when one segment is in flight, its two
//!   hold rounds at the very start (we hold one).
//!
//! `variant = "linux"` (alpha, beta, gamma = 2, 4, 1):
//! - RTT of the round = the minimum sample of the round (filters delayed
//!   ACKs). With fewer than three samples in the round the decision is
//!   Reno's increase for that one ACK (Linux: `cntRTT <= 2` means delayed
//!   ACKs only). Otherwise target = floor(cwnd x BaseRTT / RTT) and
//!   diff = floor(cwnd x (RTT - BaseRTT) / BaseRTT), Linux's integer
//!   arithmetic (so diff divides by BaseRTT where the paper's Diff divides by
//!   the RTT, and truncates: cwnd holds for 2 <= cwnd x (RTT - BaseRTT) /
//!   BaseRTT < 5 at the defaults).
//!   - slow start and diff > gamma: cwnd = min(cwnd, target + 1), ssthresh =
//!     min(ssthresh, cwnd): slow start ends;
//!   - slow start otherwise: Reno's slow start, on every ACK of every round;
//!   - congestion avoidance: diff > beta: cwnd -= 1 and ssthresh = min(ssthresh,
//!     cwnd); diff < alpha: cwnd += 1 at once; otherwise hold;
//!   - then ssthresh = max(ssthresh, floor(cwnd/2) + floor(cwnd/4))
//!     (`tcp_current_ssthresh` outside a reduction).
//! - Not modelled: Linux keeps Reno's rules (not Vegas's) in its Loss state
//!   after a timeout until everything then outstanding is acknowledged, and
//!   resets BaseRTT when a connection restarts from idle (`CA_EVENT_TX_START`,
//!   `CA_EVENT_CWND_RESTART`); here Vegas resumes after a timeout with the
//!   next full round, and BaseRTT is never reset. RTT samples are not
//!   incremented by 1 us (`vrtt = rtt_us + 1` only guards against zero).

use super::reno::Reno;
use super::{
    AckPhase, AckSample, CcBuilder, CcDescriptor, CongestionControl, CongestionEvent, EcnUse, Response,
    Window,
};
use cclab_wire::time::to_secs_f64;
use cclab_wire::{
    Descriptor, MetricDesc, Metrics, ParamDefault, ParamError, ParamType, Parameter, Params, Role, Time,
};

pub const DESCRIPTOR: CcDescriptor = Descriptor {
    name: "vegas",
    role: Role::CongestionControl,
    summary: "Delay-based: once per RTT, Diff = (cwnd/BaseRTT - Actual) x BaseRTT segments queued; \
              +1 below alpha, -1 above beta; slow start ends when Diff > gamma; Reno halving on loss",
    source: "Brakmo and Peterson, IEEE JSAC 13(8) 1995; ns-2 tcp/tcp-vegas.cc v1.37 (paper variant); \
             Linux net/ipv4/tcp_vegas.c 5.10 (variant = \"linux\")",
    parameters: &[
        Parameter {
            name: "variant",
            ty: ParamType::Choice(&["paper", "linux"]),
            unit: "",
            min: 0.0,
            max: 0.0,
            default: ParamDefault::Value("paper"),
            meaning: "paper: alpha, beta, gamma 1, 3, 1, Actual = segments sent in the round / mean RTT of \
                      the round, slow start grows every other RTT; linux: 2, 4, 1, Actual from the round's \
                      minimum RTT, Linux's integer diff, slow start every RTT, exit at cwnd = min(cwnd, \
                      target + 1), Reno's increase when the round had fewer than 3 RTT samples",
        },
        Parameter {
            name: "alpha",
            ty: ParamType::Number,
            unit: "segments",
            min: 0.0,
            max: 1e6,
            default: ParamDefault::Absent,
            meaning: "below this Diff (segments queued) cwnd grows by 1 per RTT; unset: the variant's, \
                      1 (paper) or 2 (linux)",
        },
        Parameter {
            name: "beta",
            ty: ParamType::Number,
            unit: "segments",
            min: 0.0,
            max: 1e6,
            default: ParamDefault::Absent,
            meaning: "above this Diff cwnd shrinks by 1 per RTT; at least alpha; unset: the variant's, \
                      3 (paper) or 4 (linux)",
        },
        Parameter {
            name: "gamma",
            ty: ParamType::Number,
            unit: "segments",
            min: 0.0,
            max: 1e6,
            default: ParamDefault::Absent,
            meaning: "above this Diff slow start ends; unset: the variant's, 1 (paper and linux)",
        },
    ],
    metrics: &[
        MetricDesc { name: "base_rtt", unit: "s", meaning: "BaseRTT, the smallest RTT sample (0 before the first)" },
        MetricDesc {
            name: "diff",
            unit: "segments",
            meaning: "Diff at the latest decision, the segments Vegas believes queued (linux: its truncated diff)",
        },
        MetricDesc { name: "expected", unit: "bit/s", meaning: "Expected = cwnd / BaseRTT at the latest decision" },
        MetricDesc {
            name: "actual",
            unit: "bit/s",
            meaning: "Actual at the latest decision (paper: sent in the round / its mean RTT; linux: cwnd / its min RTT)",
        },
        MetricDesc { name: "round_rtt", unit: "s", meaning: "the RTT of the round at the latest decision" },
    ],
    build: CcBuilder { build, paces_itself: false, ecn: EcnUse::Optional },
};

fn build(p: &Params) -> Result<Box<dyn CongestionControl>, ParamError> {
    let (variant, config) = settings(p)?;
    Ok(Box::new(Vegas::new(variant, config)))
}

/// The variant, and its thresholds unless the scenario sets them.
fn settings(p: &Params) -> Result<(Variant, Config), ParamError> {
    let variant = match p.choice("variant")? {
        "linux" => Variant::Linux,
        _ => Variant::Paper,
    };
    let d = variant.defaults();
    let config = Config {
        alpha: p.optional_number("alpha")?.unwrap_or(d.alpha),
        beta: p.optional_number("beta")?.unwrap_or(d.beta),
        gamma: p.optional_number("gamma")?.unwrap_or(d.gamma),
    };
    if config.beta < config.alpha {
        return Err(ParamError { name: "beta".into(), problem: "must be at least alpha" });
    }
    Ok((variant, config))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    Paper,
    Linux,
}

impl Variant {
    /// alpha, beta, gamma as the source sets them (ns-default.tcl; Linux's module parameters).
    pub fn defaults(self) -> Config {
        match self {
            Variant::Paper => Config { alpha: 1.0, beta: 3.0, gamma: 1.0 },
            Variant::Linux => Config { alpha: 2.0, beta: 4.0, gamma: 1.0 },
        }
    }
}

/// The thresholds, in segments queued.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    pub alpha: f64,
    pub beta: f64,
    pub gamma: f64,
}

/// What the samples of one round add up to.
#[derive(Clone, Copy, Debug)]
struct Round {
    samples: u64,
    sum: Time,
    min: Time,
    /// New segments put on the wire since the round began.
    sent: u64,
}

impl Round {
    const EMPTY: Round = Round { samples: 0, sum: 0, min: Time::MAX, sent: 0 };
}

/// What the latest decision saw, for metrics.
#[derive(Clone, Copy, Debug, Default)]
struct Decision {
    diff: f64,
    expected: f64,
    actual: f64,
    rtt: Time,
}

#[derive(Debug)]
pub struct Vegas {
    variant: Variant,
    config: Config,
    base_rtt: Time,
    round: Round,
    /// A round began since the last restart, so the next round start closes
    /// a round whose samples may be used.
    round_open: bool,
    /// Paper slow start: the current round is one in which cwnd grows.
    ss_growing: bool,
    /// Paper congestion avoidance: what is left of the one-segment increase
    /// decided for this round.
    increase_left: f64,
    last: Decision,
    mss: u32,
}

impl Vegas {
    pub fn new(variant: Variant, config: Config) -> Self {
        Self {
            variant,
            config,
            base_rtt: Time::MAX,
            round: Round::EMPTY,
            round_open: false,
            ss_growing: false,
            increase_left: 0.0,
            last: Decision::default(),
            mss: 0,
        }
    }

    /// Forgets the round in progress: its samples and window are stale
    /// (after a congestion event, at the end of recovery).
    fn restart(&mut self) {
        self.round = Round::EMPTY;
        self.round_open = false;
        self.ss_growing = false;
        self.increase_left = 0.0;
    }

    fn decide(&mut self, w: &mut Window, ack: &AckSample) {
        match self.variant {
            Variant::Paper => self.decide_paper(w),
            Variant::Linux => self.decide_linux(w, ack),
        }
    }

    fn decide_paper(&mut self, w: &mut Window) {
        let r = self.round;
        if r.samples == 0 || self.base_rtt == Time::MAX {
            return;
        }
        let rtt = to_secs_f64(r.sum) / r.samples as f64;
        let base = to_secs_f64(self.base_rtt);
        let expected = w.cwnd.floor() / base;
        let actual = r.sent as f64 / rtt;
        let diff = (expected - actual) * base;
        self.last = Decision { diff, expected, actual, rtt: r.sum / r.samples };
        self.increase_left = 0.0;
        if w.in_slow_start() {
            self.ss_growing = !self.ss_growing;
            if self.ss_growing && diff > self.config.gamma {
                self.ss_growing = false;
                w.ssthresh = 2.0;
                w.cwnd = (w.cwnd - w.cwnd / 8.0).max(2.0);
            }
        } else {
            self.ss_growing = false;
            if diff > self.config.beta {
                w.cwnd = (w.cwnd - 1.0).max(2.0);
            } else if diff < self.config.alpha {
                self.increase_left = 1.0;
            }
        }
    }

    fn decide_linux(&mut self, w: &mut Window, ack: &AckSample) {
        let r = self.round;
        if r.samples <= 2 || self.base_rtt == Time::MAX {
            if ack.opens_window() {
                Reno::increase(w, ack.acked);
            }
            return;
        }
        let (rtt, base) = (to_secs_f64(r.min), to_secs_f64(self.base_rtt));
        let target = (w.cwnd * base / rtt).floor();
        let diff = (w.cwnd * (rtt - base) / base).floor();
        self.last = Decision { diff, expected: w.cwnd / base, actual: w.cwnd / rtt, rtt: r.min };
        if w.in_slow_start() && diff > self.config.gamma {
            w.cwnd = w.cwnd.min(target + 1.0);
            w.ssthresh = w.ssthresh.min(w.cwnd);
        } else if w.in_slow_start() {
            if ack.opens_window() {
                Reno::increase(w, ack.acked);
            }
        } else if diff > self.config.beta {
            w.cwnd -= 1.0;
            w.ssthresh = w.ssthresh.min(w.cwnd);
        } else if diff < self.config.alpha && ack.cwnd_limited {
            // A flow held back by something else does not grow (the flow's cwnd_growth; Linux's
            // Vegas gates only its Reno fallback, but a window nobody fills measures nothing).
            w.cwnd += 1.0;
        }
        w.cwnd = w.cwnd.max(2.0);
        let three_quarters = (w.cwnd / 2.0).floor() + (w.cwnd / 4.0).floor();
        w.ssthresh = w.ssthresh.max(three_quarters);
    }

    /// Growth between decisions.
    fn grow(&mut self, w: &mut Window, ack: &AckSample) {
        if !ack.opens_window() {
            return;
        }
        match self.variant {
            Variant::Linux => {
                if w.in_slow_start() {
                    Reno::increase(w, ack.acked);
                }
            }
            Variant::Paper => {
                if w.in_slow_start() {
                    if self.ss_growing {
                        Reno::increase(w, ack.acked);
                    }
                } else if self.increase_left > 0.0 {
                    let step = (ack.acked as f64 / w.cwnd).min(self.increase_left);
                    w.cwnd += step;
                    self.increase_left -= step;
                }
            }
        }
    }
}

impl CongestionControl for Vegas {
    fn name(&self) -> &'static str {
        "vegas"
    }

    /// Its once-per-RTT decision is taken at packet-timed round starts.
    fn uses_delivery_rate(&self) -> bool {
        true
    }

    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        self.mss = ack.mss;
        if let Some(rtt) = ack.rtt.filter(|&r| r > 0) {
            self.base_rtt = self.base_rtt.min(rtt);
            let r = &mut self.round;
            r.samples += 1;
            r.sum += rtt;
            r.min = r.min.min(rtt);
        }
        let vegas_on = ack.phase == AckPhase::Open && !ack.ece;
        if ack.round_start && vegas_on {
            let decides = self.round_open;
            if decides {
                self.decide(w, ack);
            }
            self.round = Round::EMPTY;
            self.round_open = true;
            // Linux's decision already applied its slow start to this ACK;
            // in the paper variant this ACK is the first of the new round.
            if decides && self.variant == Variant::Linux {
                return;
            }
        }
        self.grow(w, ack);
    }

    fn on_congestion(&mut self, w: &Window, event: &CongestionEvent) -> Response {
        self.restart();
        Reno.on_congestion(w, event)
    }

    fn on_recovery_exit(&mut self, _w: &mut Window, _now: Time) {
        self.restart();
    }

    fn on_send(&mut self, _now: Time, retransmission: bool, _in_flight: u64) {
        if !retransmission {
            self.round.sent += 1;
        }
    }

    fn metrics(&self, out: &mut Metrics<'_>) {
        let base = if self.base_rtt == Time::MAX { 0.0 } else { to_secs_f64(self.base_rtt) };
        let bits = 8.0 * f64::from(self.mss);
        out.put("base_rtt", base);
        out.put("diff", self.last.diff);
        out.put("expected", self.last.expected * bits);
        out.put("actual", self.last.actual * bits);
        out.put("round_rtt", to_secs_f64(self.last.rtt));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_support::{ack_of, event};
    use crate::cc::EventKind;
    use cclab_wire::time::millis;
    use cclab_wire::ParamValue;

    /// 125 ms, 187.5 ms and 250 ms are exact in binary, so Diff lands exactly
    /// on the thresholds where a test wants it to.
    const BASE: Time = millis(125);
    /// 1.5 x BASE.
    const RTT_1_5: Time = cclab_wire::time::micros(187_500);

    fn paper() -> Vegas {
        Vegas::new(Variant::Paper, Variant::Paper.defaults())
    }

    fn linux() -> Vegas {
        Vegas::new(Variant::Linux, Variant::Linux.defaults())
    }

    /// Drives one Vegas instance round by round.
    struct Flow {
        cc: Vegas,
        w: Window,
    }

    impl Flow {
        fn new(cc: Vegas, cwnd: f64, ssthresh: f64) -> Self {
            Self { cc, w: Window { cwnd, ssthresh } }
        }

        fn ack(&mut self, rtt: Option<Time>, round_start: bool) {
            let mut a = ack_of(1);
            a.rtt = rtt;
            a.round_start = round_start;
            self.cc.on_ack(&mut self.w, &a);
        }

        /// A round of `acks` ACKs carrying RTT samples of `rtt`, the first of
        /// them starting the round, after which `sent` new segments leave.
        fn round(&mut self, rtt: Time, acks: u64, sent: u64) {
            for i in 0..acks {
                self.ack(Some(rtt), i == 0);
                if i == 0 {
                    for _ in 0..sent {
                        self.cc.on_send(0, false, 0);
                    }
                }
            }
        }

        /// The ACK that closes the current round (and decides), without a sample of its own.
        fn close(&mut self) {
            self.ack(None, true);
        }

        /// A flow in congestion avoidance whose BaseRTT is 125 ms, with a
        /// round just opened: what the tests then feed is what Vegas decides on.
        fn in_ca(cc: Vegas, cwnd: f64) -> Self {
            let mut f = Self::new(cc, cwnd, 2.0);
            f.ack(Some(BASE), true);
            f.w.cwnd = cwnd;
            f
        }

        /// cwnd after the rest of the open round (`sent` segments sent, one
        /// ACK per segment of cwnd carrying RTT `rtt`) and the ACK that closes it.
        fn decide(&mut self, rtt: Time, sent: u64) -> f64 {
            for _ in 0..sent {
                self.cc.on_send(0, false, 0);
            }
            for _ in 0..self.w.cwnd as u64 {
                self.ack(Some(rtt), false);
            }
            self.close();
            self.w.cwnd
        }
    }

    #[test]
    fn paper_diff_is_expected_minus_actual_times_base_rtt() {
        // cwnd 10, BaseRTT 125 ms, 10 sent in a round of 250 ms:
        // Expected 80/s, Actual 40/s, Diff = 40 x 0.125 = 5 segments.
        let mut f = Flow::in_ca(paper(), 10.0);
        f.decide(millis(250), 10);
        assert_eq!(f.cc.last.diff, 5.0);
        assert_eq!(f.cc.last.expected, 80.0);
        assert_eq!(f.cc.last.actual, 40.0);
        // With no queue, Actual falls short of Expected only by what was not sent.
        let mut f = Flow::in_ca(paper(), 10.0);
        f.decide(BASE, 7);
        assert_eq!(f.cc.last.diff, 3.0);
        // The fraction of a segment that cwnd allows but nobody sends does not count.
        let mut f = Flow::in_ca(paper(), 10.6);
        f.decide(BASE, 10);
        assert_eq!(f.cc.last.diff, 0.0);
    }

    #[test]
    fn paper_decisions_below_between_above_and_at_the_bounds() {
        // Diff = cwnd - sent at RTT = BaseRTT; alpha 1, beta 3.
        let after = |sent: u64| {
            let mut f = Flow::in_ca(paper(), 10.0);
            f.decide(BASE, sent);
            // The increase is spread over the next round: run it.
            for _ in 0..20 {
                f.ack(Some(BASE), false);
            }
            f.w.cwnd
        };
        assert!((after(10) - 11.0).abs() < 1e-9, "Diff 0 < alpha: +1");
        assert!((after(9) - 10.0).abs() < 1e-9, "Diff 1 = alpha: hold");
        assert!((after(8) - 10.0).abs() < 1e-9, "Diff 2: hold");
        assert!((after(7) - 10.0).abs() < 1e-9, "Diff 3 = beta: hold");
        assert!((after(6) - 9.0).abs() < 1e-9, "Diff 4 > beta: -1");
        // The same from the RTT: 12 sent over 187.5 ms at cwnd 12 is Diff 4.
        let mut f = Flow::in_ca(paper(), 12.0);
        assert_eq!(f.decide(RTT_1_5, 12), 11.0);
    }

    #[test]
    fn paper_increase_is_one_segment_spread_over_the_next_round() {
        let mut f = Flow::in_ca(paper(), 10.0);
        // The deciding ACK is the first of the next round (ns-2 adds
        // v_incr_ on it), and each ACK adds acked / cwnd.
        f.decide(BASE, 10);
        assert!((f.w.cwnd - 10.1).abs() < 1e-12, "{}", f.w.cwnd);
        for _ in 0..50 {
            f.ack(Some(BASE), false);
        }
        assert!((f.w.cwnd - 11.0).abs() < 1e-12, "stops at one segment: {}", f.w.cwnd);
    }

    #[test]
    fn decisions_are_once_per_round_not_per_ack() {
        for cc in [paper(), linux()] {
            let mut f = Flow::in_ca(cc, 10.0);
            // Hundreds of ACKs with RTTs that would call for a decrease, no round start.
            for _ in 0..300 {
                f.ack(Some(millis(500)), false);
            }
            assert_eq!(f.w.cwnd, 10.0, "{:?}", f.cc.variant);
            f.close();
            assert_eq!(f.w.cwnd, 9.0, "{:?}: one decrease at the round's end", f.cc.variant);
        }
    }

    #[test]
    fn base_rtt_is_the_smallest_sample_in_any_phase() {
        let mut cc = paper();
        let mut w = Window { cwnd: 10.0, ssthresh: 2.0 };
        let mut log = cclab_wire::MetricLog::default();
        cc.metrics(&mut Metrics::new(&mut log));
        assert_eq!(log.get("base_rtt"), Some(0.0), "0 before the first sample");
        for (rtt, phase) in [(80, AckPhase::Open), (60, AckPhase::Recovery), (90, AckPhase::Open)] {
            let mut a = ack_of(1);
            a.rtt = Some(millis(rtt));
            a.phase = phase;
            cc.on_ack(&mut w, &a);
        }
        assert_eq!(cc.base_rtt, millis(60));
        let mut log = cclab_wire::MetricLog::default();
        cc.metrics(&mut Metrics::new(&mut log));
        assert_eq!(log.get("base_rtt"), Some(0.06));
    }

    #[test]
    fn paper_slow_start_grows_every_other_round() {
        let mut f = Flow::new(paper(), 2.0, 1e9);
        let mut seen = vec![];
        for _ in 0..6 {
            let cwnd = f.w.cwnd as u64;
            f.round(BASE, cwnd, cwnd);
            seen.push(f.w.cwnd);
        }
        // The first round (it only opens) holds; then grow, hold, grow...
        // (one segment per ACK while growing).
        assert_eq!(seen, vec![2.0, 4.0, 4.0, 8.0, 8.0, 16.0]);
    }

    #[test]
    fn linux_slow_start_grows_every_round() {
        let mut f = Flow::new(linux(), 2.0, 1e9);
        let mut seen = vec![];
        for _ in 0..5 {
            let cwnd = f.w.cwnd as u64;
            f.round(BASE, cwnd, cwnd);
            seen.push(f.w.cwnd);
        }
        assert_eq!(seen, vec![4.0, 8.0, 16.0, 32.0, 64.0]);
    }

    #[test]
    fn paper_slow_start_ends_when_diff_exceeds_gamma_before_a_growth_round() {
        // The opening round holds cwnd at 16 with 14 sent: Diff = 2 > gamma
        // where the growth round would start, so slow start ends instead
        // (ns-2: cwnd - cwnd/8, ssthresh 2).
        let mut f = Flow::new(paper(), 16.0, 1e9);
        f.round(BASE, 16, 14);
        f.close();
        assert_eq!(f.w, Window { cwnd: 14.0, ssthresh: 2.0 });
        assert!(!f.cc.ss_growing);
        // Diff = gamma exactly: slow start goes on, and this round grows.
        let mut f = Flow::new(paper(), 16.0, 1e9);
        f.round(BASE, 16, 15);
        f.close();
        assert_eq!(f.w, Window { cwnd: 17.0, ssthresh: 1e9 });
        assert!(f.cc.ss_growing);
    }

    #[test]
    fn paper_slow_start_ignores_gamma_before_a_hold_round() {
        let mut f = Flow::new(paper(), 16.0, 1e9);
        f.round(BASE, 16, 16);
        // A growth round (16 to 32) with 24 sent: Diff 8 > gamma, but its end
        // starts a hold round, where the test is not taken.
        f.round(BASE, 16, 24);
        assert_eq!(f.w.cwnd, 32.0);
        f.close();
        assert_eq!(f.w, Window { cwnd: 32.0, ssthresh: 1e9 });
        // The next boundary takes it: 32 - 32/8 = 28.
        for _ in 0..24 {
            f.cc.on_send(0, false, 0);
        }
        for _ in 0..32 {
            f.ack(Some(BASE), false);
        }
        f.close();
        assert_eq!(f.w, Window { cwnd: 28.0, ssthresh: 2.0 });
    }

    #[test]
    fn linux_slow_start_exit_sets_cwnd_to_target_plus_one() {
        let mut f = Flow::new(linux(), 20.0, 1e9);
        f.ack(Some(BASE), true);
        // Slow start grows on each ACK to 31; round minimum 187.5 ms: target =
        // floor(31 x 125 / 187.5) = 20, diff = floor(31 x 62.5 / 125) = 15 > gamma.
        for _ in 0..5 {
            f.ack(Some(millis(250)), false);
        }
        for _ in 0..5 {
            f.ack(Some(RTT_1_5), false);
        }
        let before = f.w.cwnd;
        f.close();
        assert_eq!(f.cc.last.diff, (before * 0.5).floor());
        assert_eq!(before, 31.0);
        assert_eq!(f.cc.last.diff, 15.0);
        assert_eq!(f.w.cwnd, 21.0);
        assert_eq!(f.w.ssthresh, f.w.cwnd, "ssthresh = min(ssthresh, cwnd): slow start is over");
        assert!(!f.w.in_slow_start());
    }

    #[test]
    fn linux_decisions_use_the_rounds_minimum_rtt_and_truncated_diff() {
        // diff = floor(cwnd x (RTT - 125) / 125); alpha 2, beta 4.
        let after = |cwnd: f64, rtt: Time| {
            let mut f = Flow::in_ca(linux(), cwnd);
            // One large sample must not matter: the round's minimum decides.
            f.ack(Some(millis(900)), false);
            f.decide(rtt, cwnd as u64)
        };
        let rtt = RTT_1_5; // diff = floor(cwnd / 2)
        assert_eq!(after(10.0, rtt), 9.0, "diff 5 > beta: -1");
        assert_eq!(after(9.0, rtt), 9.0, "diff floor(4.5) = 4 = beta: hold");
        assert_eq!(after(6.0, rtt), 6.0, "diff 3: hold");
        assert_eq!(after(4.0, rtt), 4.0, "diff 2 = alpha: hold");
        assert_eq!(after(3.0, rtt), 4.0, "diff floor(1.5) = 1 < alpha: +1 at once");
    }

    #[test]
    fn linux_behaves_like_reno_with_fewer_than_three_samples_in_the_round() {
        let mut f = Flow::in_ca(linux(), 10.0);
        // Two samples, both far above BaseRTT: no Vegas decrease, Reno's +1/cwnd.
        f.ack(Some(millis(500)), false);
        f.ack(Some(millis(500)), false);
        f.close();
        assert!((f.w.cwnd - 10.1).abs() < 1e-12, "{}", f.w.cwnd);
        // Three samples: Vegas decides (-1).
        let mut f = Flow::in_ca(linux(), 10.0);
        for _ in 0..3 {
            f.ack(Some(millis(500)), false);
        }
        f.close();
        assert_eq!(f.w.cwnd, 9.0);
    }

    #[test]
    fn linux_ssthresh_follows_three_quarters_of_cwnd_and_decreases() {
        let mut f = Flow::in_ca(linux(), 40.0);
        f.decide(BASE, 40);
        assert_eq!(f.w, Window { cwnd: 41.0, ssthresh: 30.0 }, "max(2, 20 + 10)");
        let mut f = Flow::in_ca(linux(), 40.0);
        f.w.ssthresh = 40.0;
        f.decide(millis(250), 40);
        assert_eq!(f.w, Window { cwnd: 39.0, ssthresh: 39.0 }, "a decrease lowers ssthresh to cwnd");
    }

    #[test]
    fn cwnd_never_falls_below_two_segments() {
        // Diff <= cwnd, so a window this small needs a beta below it to shrink.
        let low = Config { alpha: 0.5, beta: 1.0, gamma: 1.0 };
        let mut f = Flow::in_ca(Vegas::new(Variant::Paper, low), 2.5);
        f.decide(millis(500), 0);
        assert_eq!(f.w.cwnd, 2.0, "2.5 - 1 is floored at 2");
        f.decide(millis(500), 0);
        assert_eq!(f.w.cwnd, 2.0);
        let mut f = Flow::in_ca(linux(), 2.0);
        for _ in 0..3 {
            f.ack(Some(millis(900)), false);
        }
        f.close();
        assert_eq!(f.w.cwnd, 2.0);
        // Leaving slow start with cwnd - cwnd/8 below 2.
        let mut f = Flow::new(paper(), 2.0, 1e9);
        f.round(BASE, 2, 0);
        f.close();
        assert_eq!(f.w, Window { cwnd: 2.0, ssthresh: 2.0 });
    }

    #[test]
    fn a_loss_is_answered_like_reno_and_the_next_decision_waits_a_full_round() {
        for cc in [paper(), linux()] {
            let mut f = Flow::in_ca(cc, 40.0);
            let w = f.w;
            let fr = f.cc.on_congestion(&w, &event(EventKind::FastRetransmit, 30.0));
            assert_eq!(fr, Response::Reduce { ssthresh: 15.0, cwnd: 15.0 });
            let rto = f.cc.on_congestion(&w, &event(EventKind::Timeout, 30.0));
            assert_eq!(rto, Response::Reduce { ssthresh: 15.0, cwnd: 1.0 });
            let mark = f.cc.on_congestion(&w, &event(EventKind::Mark, 40.0));
            assert_eq!(mark, Response::Reduce { ssthresh: 20.0, cwnd: 20.0 });
            // Recovery ends; the round that straddled it is not used.
            f.w = Window { cwnd: 20.0, ssthresh: 20.0 };
            f.cc.on_recovery_exit(&mut f.w, 0);
            for _ in 0..5 {
                f.ack(Some(millis(900)), false);
            }
            f.close();
            assert_eq!(f.w.cwnd, 20.0, "{:?}", f.cc.variant);
            f.decide(millis(900), 20);
            assert_eq!(f.w.cwnd, 19.0, "{:?}: a full round decides", f.cc.variant);
        }
    }

    #[test]
    fn no_decision_or_growth_in_recovery() {
        for cc in [paper(), linux()] {
            let mut f = Flow::in_ca(cc, 10.0);
            for _ in 0..10 {
                f.cc.on_send(0, false, 0);
                f.ack(Some(millis(900)), false);
            }
            let mut a = ack_of(1);
            a.rtt = Some(BASE);
            a.round_start = true;
            a.phase = AckPhase::Recovery;
            f.cc.on_ack(&mut f.w, &a);
            assert_eq!(f.w.cwnd, 10.0, "{:?}", f.cc.variant);
        }
    }

    fn params(pairs: &[(&str, ParamValue)]) -> Params {
        let mut p = DESCRIPTOR.info().defaults().unwrap();
        for (name, value) in pairs {
            p.insert(*name, value.clone());
        }
        p
    }

    #[test]
    fn the_variant_sets_the_thresholds_and_explicit_ones_override() {
        let text = |s: &str| ParamValue::Text(s.into());
        let paper = settings(&params(&[])).unwrap();
        assert_eq!(paper, (Variant::Paper, Config { alpha: 1.0, beta: 3.0, gamma: 1.0 }));
        let linux = settings(&params(&[("variant", text("linux"))])).unwrap();
        assert_eq!(linux, (Variant::Linux, Config { alpha: 2.0, beta: 4.0, gamma: 1.0 }));
        let mixed =
            settings(&params(&[("variant", text("linux")), ("alpha", ParamValue::Number(1.0))])).unwrap();
        assert_eq!(mixed.1, Config { alpha: 1.0, beta: 4.0, gamma: 1.0 });
        let bad = settings(&params(&[("alpha", ParamValue::Number(5.0))]));
        assert_eq!(bad.unwrap_err().name, "beta");
    }
}
