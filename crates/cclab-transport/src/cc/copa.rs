//! Copa: Arun and Balakrishnan, "Copa: Practical Delay-Based Congestion
//! Control for the Internet", NSDI 2018: §2 the algorithm, §3 its dynamics,
//! §4 competing with buffer-filling schemes. Only the paper's abstract could
//! be read for this port (the copies found stop there), so every rule below
//! was checked against the implementations: the authors' genericCC
//! (venkatarun95/genericCC `markoviancc.cc` @25fa626b, `rtt-window.cc`
//! @262c9558), mvfst (facebook/mvfst `quic/congestion_control/Copa.cpp`
//! @00e67c1b, which has no mode switch) and xquic (alibaba/xquic
//! `src/congestion_control/xqc_copa.c` @58cfb168, which implements §4's
//! switch: 5 RTTs, RTTmax over 4 RTTs, a tenth of its range).
//!
//! The rules, per ACK:
//! - RTTmin is the smallest RTT sample over the last `min_rtt_window` (10 s);
//!   RTTstanding the smallest over the last τ = `standing_rtt_srtts` x srtt
//!   (srtt/2); the queueing delay d_q = RTTstanding - RTTmin. Both are exact
//!   windowed minima, as genericCC's `ExtremeWindow` keeps them (a queue of
//!   the samples that can still become the minimum; the newest always stays).
//! - Target rate λt = 1/(δ d_q) packets per second, unlimited when d_q = 0;
//!   current rate λ = cwnd / RTTstanding. λ <= λt: cwnd += v/(δ cwnd) per
//!   segment delivered; otherwise cwnd -= v/(δ cwnd), so in one RTT cwnd
//!   moves by about v/δ segments.
//! - Velocity v, 1 at first: once per window the direction is up if cwnd is
//!   larger than when the window began, down otherwise; the same direction
//!   as before counts one more window, and from the third (`velocity_rtts`)
//!   on v doubles each window; a change of direction resets v to 1 and the
//!   count to 0.
//! - Slow start: cwnd grows by the segments delivered (doubling per RTT)
//!   while λ <= λt; the first ACK with λ > λt ends it and decreases as above.
//! - Pacing at `pacing_gain` x cwnd / RTTstanding (2 x).
//! - Mode switch (§4, `competitive = true`): "nearly empty" is d_q < 0.1 x
//!   (RTTmax - RTTmin), RTTmax the largest RTT of the last 4 srtt. A flow that
//!   saw no nearly empty queue in the last 5 srtt is in competitive mode; the
//!   first nearly empty queue returns it to default mode with δ reset to the
//!   configured value. In competitive mode 1/δ follows AIMD: +1 each srtt
//!   unless a loss halved it within that srtt; halved at a loss, at most once
//!   per srtt; δ never above the configured value (genericCC's
//!   `update_delta`, xquic).
//!
//! Steady state (§3): a lone flow turns when RTTstanding crosses its target
//! of 1/δ packets queued; the srtt/2 window and an RTT of feedback delay
//! carry the queue past it, so the queue swings between about 0 and 2.5/δ
//! packets and back in about 5 RTTs, the period §4's detector relies on
//! (tests/copa.rs measures 4.6 to 4.9 RTTs and a mean queue of 3 packets at
//! δ = 0.5).
//!
//! Loss. Copa's update rule reads only delay; loss enters only competitive
//! mode's AIMD on 1/δ (§4), and the abstract reports Copa robust to
//! non-congestive loss. genericCC's `onDupACK` and `onTimeout` do nothing
//! (its latest `onACK` also cuts the window to 0.7 when a loss filter,
//! `reduce_on_loss`, fires: a later addition, not in the paper, not
//! modelled); mvfst changes nothing at a loss but persistent congestion,
//! where cwnd drops to its minimum. Here a fast retransmit changes no window (in
//! competitive mode it halves 1/δ); a retransmission timeout also sets cwnd
//! to 2 segments, as mvfst at persistent congestion, the rest of Copa's state
//! staying; a congestion mark changes nothing. Copa owns cwnd in loss
//! recovery (mvfst and xquic keep adjusting it there): recovery retransmits,
//! and every ACK keeps moving cwnd toward the target.
//!
//! Where this departs from the paper, and why:
//! - From the implementations, not the paper: cwnd never falls below 2
//!   segments (genericCC, mvfst's minimum window); v is halved back when it
//!   would move cwnd by more than cwnd in one RTT (v > δ cwnd; genericCC,
//!   xquic); and when an ACK's decision goes against a direction whose v is
//!   above 1, v resets to 1, that direction is taken and a new window begins
//!   (mvfst, xquic: a v doubled over a long climb would carry cwnd far past
//!   the target before the window ends).
//! - A window is one srtt of time from its start (mvfst), where the paper
//!   says "once per window". Packet-timed rounds (xquic) were tried: a
//!   direction change inside a round then starts its count at the next round
//!   boundary, v can double after little more than two RTTs, and two flows
//!   starting 0-5 s apart (tests/copa.rs) settled into a cycle of about 15
//!   RTTs with v reaching 16 and the link 93 and 92 % busy at two seeds of
//!   three.
//!   RTTmax, the detection window and the AIMD step on 1/δ are counted in
//!   srtt too, as genericCC counts them.
//! - Slow start grows per ACK (genericCC's +1 per ACK, xquic), not in one
//!   step per srtt as mvfst doubles it.
//! - A queueing delay of exactly 0 always counts as nearly empty: with a
//!   strict "<", a path whose RTT never varies (RTTmax = RTTmin, which a
//!   simulator produces to the nanosecond) would look like a buffer filler.
//!   xquic uses "<=" for the same reason.
//! - RTTmin over 10 s equals the paper's "smaller of 10 s and the time since
//!   the flow started". Against a buffer filler whose queue never drains it
//!   climbs to that queue's trough after 10 s, d_q is then measured from the
//!   trough, and every trough looks nearly empty (tests/copa.rs, CUBIC).
//! - An ACK that carries no RTT sample (a duplicate ACK, or one covering a
//!   retransmission without timestamps) still moves cwnd, with the estimates
//!   of the last sample. Increases obey the flow's `cwnd_growth`.
//! - The pacing rate is computed from payload (cwnd x MSS) and paces whole
//!   packets; at a gain of 2 the header bytes do not make it bind.

use super::{
    AckSample, CcBuilder, CcDescriptor, CongestionControl, CongestionEvent, EcnUse, EventKind, Response,
    Window,
};
use cclab_wire::time::{secs, to_secs_f64};
use cclab_wire::{
    Descriptor, MetricDesc, Metrics, ParamDefault, ParamError, ParamType, Parameter, Params, Role, Time,
};
use std::collections::VecDeque;

pub const DESCRIPTOR: CcDescriptor = Descriptor {
    name: "copa",
    role: Role::CongestionControl,
    summary:
        "Delay-based: target rate 1/(delta x queueing delay), cwnd moves toward it by v/(delta cwnd) per ACK \
              with a doubling velocity; paces at 2 cwnd / RTTstanding; competitive mode (AIMD on 1/delta) \
              when the queue never nearly empties",
    source: "Arun and Balakrishnan, Copa, NSDI 2018 §2-4; genericCC markoviancc.cc, rtt-window.cc \
             (venkatarun95/genericCC 25fa626b, 262c9558); mvfst quic/congestion_control/Copa.cpp (00e67c1b); \
             xquic xqc_copa.c (58cfb168)",
    parameters: &[
        Parameter {
            name: "delta",
            ty: ParamType::Number,
            unit: "",
            min: 0.001,
            max: 10.0,
            default: ParamDefault::Value("0.5"),
            meaning:
                "delta: the target rate is 1/(delta x queueing delay), so a flow keeps about 1/delta packets \
                      queued (default mode; competitive mode never raises delta above it)",
        },
        Parameter {
            name: "min_rtt_window",
            ty: ParamType::Duration,
            unit: "",
            min: 0.001,
            max: 3600.0,
            default: ParamDefault::Value("10s"),
            meaning: "RTTmin is the smallest RTT sample over this long",
        },
        Parameter {
            name: "competitive",
            ty: ParamType::Bool,
            unit: "",
            min: 0.0,
            max: 0.0,
            default: ParamDefault::Value("true"),
            meaning:
                "switch to competitive mode (AIMD on 1/delta) while the queue never nearly empties, as the \
                      paper does; false: always default mode, delta fixed",
        },
        Parameter {
            name: "standing_rtt_srtts",
            ty: ParamType::Number,
            unit: "srtt",
            min: 0.01,
            max: 4.0,
            default: ParamDefault::Value("0.5"),
            meaning:
                "tau: RTTstanding is the smallest RTT over the last tau = this x srtt (the paper's srtt/2)",
        },
        Parameter {
            name: "pacing_gain",
            ty: ParamType::Number,
            unit: "",
            min: 0.1,
            max: 10.0,
            default: ParamDefault::Value("2"),
            meaning: "pace at this x cwnd / RTTstanding",
        },
        Parameter {
            name: "velocity_rtts",
            ty: ParamType::Integer,
            unit: "srtt",
            min: 1.0,
            max: 100.0,
            default: ParamDefault::Value("3"),
            meaning: "v doubles each window (one srtt) once the direction stayed the same this many windows",
        },
        Parameter {
            name: "empty_fraction",
            ty: ParamType::Number,
            unit: "",
            min: 0.0,
            max: 1.0,
            default: ParamDefault::Value("0.1"),
            meaning: "the queue is nearly empty when the queueing delay is below this x (RTTmax - RTTmin)",
        },
        Parameter {
            name: "empty_srtts",
            ty: ParamType::Number,
            unit: "srtt",
            min: 0.1,
            max: 100.0,
            default: ParamDefault::Value("5"),
            meaning: "competitive mode when the queue was not nearly empty during the last this x srtt",
        },
        Parameter {
            name: "max_rtt_srtts",
            ty: ParamType::Number,
            unit: "srtt",
            min: 0.1,
            max: 100.0,
            default: ParamDefault::Value("4"),
            meaning: "RTTmax, against which nearly empty is judged, is the largest RTT over this x srtt",
        },
    ],
    metrics: &[
        MetricDesc {
            name: "delta",
            unit: "",
            meaning: "delta in use (1/delta is the target queue in packets)",
        },
        MetricDesc { name: "velocity", unit: "", meaning: "the velocity v" },
        MetricDesc { name: "rtt_standing", unit: "s", meaning: "RTTstanding (0 before an RTT sample)" },
        MetricDesc { name: "rtt_min", unit: "s", meaning: "RTTmin over the window (0 before an RTT sample)" },
        MetricDesc { name: "queueing_delay", unit: "s", meaning: "d_q = RTTstanding - RTTmin" },
        MetricDesc { name: "mode", unit: "", meaning: "0 default, 1 competitive" },
        MetricDesc { name: "slow_start", unit: "", meaning: "1 in slow start, 0 after" },
    ],
    build: CcBuilder { build, paces_itself: true, ecn: EcnUse::Optional },
};

fn build(p: &Params) -> Result<Box<dyn CongestionControl>, ParamError> {
    let min_rtt_window = p.duration("min_rtt_window")?.ok_or(ParamError {
        name: "min_rtt_window".into(),
        problem: "missing (not resolved by the validator)",
    })?;
    Ok(Box::new(Copa::new(Config {
        delta: p.number("delta")?,
        min_rtt_window,
        competitive: p.bool("competitive")?,
        standing_rtt_srtts: p.number("standing_rtt_srtts")?,
        pacing_gain: p.number("pacing_gain")?,
        velocity_rtts: p.number("velocity_rtts")? as u32,
        empty_fraction: p.number("empty_fraction")?,
        empty_srtts: p.number("empty_srtts")?,
        max_rtt_srtts: p.number("max_rtt_srtts")?,
    })))
}

/// The smallest window, segments (genericCC's floor, mvfst's minimum window).
pub const MIN_CWND: f64 = 2.0;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    pub delta: f64,
    pub min_rtt_window: Time,
    pub competitive: bool,
    pub standing_rtt_srtts: f64,
    pub pacing_gain: f64,
    pub velocity_rtts: u32,
    pub empty_fraction: f64,
    pub empty_srtts: f64,
    pub max_rtt_srtts: f64,
}

impl Default for Config {
    /// The paper's constants.
    fn default() -> Self {
        Self {
            delta: 0.5,
            min_rtt_window: secs(10),
            competitive: true,
            standing_rtt_srtts: 0.5,
            pacing_gain: 2.0,
            velocity_rtts: 3,
            empty_fraction: 0.1,
            empty_srtts: 5.0,
            max_rtt_srtts: 4.0,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Default = 0,
    Competitive = 1,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Up,
    Down,
}

/// The exact minimum (or maximum) of the RTT samples of a sliding time
/// window: a queue of samples, each better than all before it in the queue,
/// so the front is the answer (genericCC `ExtremeWindow`). It holds at most
/// the samples of one window, and only those that could still become the
/// extreme; the newest is kept however old.
#[derive(Clone, Debug)]
struct RttWindow {
    max: bool,
    /// (time, rtt), rtt strictly improving from back to front.
    samples: VecDeque<(Time, Time)>,
}

impl RttWindow {
    fn new(max: bool) -> Self {
        Self { max, samples: VecDeque::new() }
    }

    fn update(&mut self, now: Time, rtt: Time, window: Time) {
        let max = self.max;
        // A newer sample at least as good outlives an older one.
        while self.samples.back().is_some_and(|&(_, v)| if max { v <= rtt } else { v >= rtt }) {
            self.samples.pop_back();
        }
        self.samples.push_back((now, rtt));
        let oldest = now.saturating_sub(window);
        while self.samples.len() > 1 && self.samples.front().is_some_and(|&(at, _)| at < oldest) {
            self.samples.pop_front();
        }
    }

    fn best(&self) -> Option<Time> {
        self.samples.front().map(|&(_, v)| v)
    }
}

#[derive(Debug)]
pub struct Copa {
    config: Config,
    delta: f64,
    mode: Mode,
    slow_start: bool,
    velocity: f64,
    direction: Direction,
    /// Windows in a row the direction stayed the same.
    same_direction: u32,
    /// When the current window began, and cwnd then.
    window_start: Option<(Time, f64)>,
    min_rtt: RttWindow,
    standing: RttWindow,
    max_rtt: RttWindow,
    /// The latest time the queue was nearly empty (or the first sample).
    nearly_empty_at: Option<Time>,
    /// When 1/δ last stepped up (or competitive mode began).
    delta_step_at: Time,
    /// A loss halved 1/δ since that step.
    halved_since_step: bool,
    mss: u32,
}

impl Copa {
    pub fn new(config: Config) -> Self {
        Self {
            config,
            delta: config.delta,
            mode: Mode::Default,
            slow_start: true,
            velocity: 1.0,
            direction: Direction::Up,
            same_direction: 0,
            window_start: None,
            min_rtt: RttWindow::new(false),
            standing: RttWindow::new(false),
            max_rtt: RttWindow::new(true),
            nearly_empty_at: None,
            delta_step_at: 0,
            halved_since_step: false,
            mss: 0,
        }
    }

    pub fn delta(&self) -> f64 {
        self.delta
    }

    pub fn velocity(&self) -> f64 {
        self.velocity
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    pub fn in_slow_start(&self) -> bool {
        self.slow_start
    }

    pub fn direction(&self) -> Direction {
        self.direction
    }

    pub fn rtt_standing(&self) -> Option<Time> {
        self.standing.best()
    }

    pub fn rtt_min(&self) -> Option<Time> {
        self.min_rtt.best()
    }

    /// d_q = RTTstanding - RTTmin.
    pub fn queueing_delay(&self) -> Option<Time> {
        Some(self.standing.best()?.saturating_sub(self.min_rtt.best()?))
    }

    /// λt = 1/(δ d_q) in packets per second; infinite when d_q = 0.
    pub fn target_rate(&self) -> Option<f64> {
        let dq = self.queueing_delay()?;
        Some(if dq == 0 { f64::INFINITY } else { 1.0 / (self.delta * to_secs_f64(dq)) })
    }

    /// λ = cwnd / RTTstanding in packets per second.
    pub fn current_rate(&self, cwnd: f64) -> Option<f64> {
        Some(cwnd / to_secs_f64(self.standing.best().filter(|&s| s > 0)?))
    }

    /// λ <= λt: cwnd moves up. Compared as cwnd δ d_q <= RTTstanding, which
    /// is the same inequality without dividing by a zero d_q.
    fn should_increase(&self, cwnd: f64) -> Option<bool> {
        let standing = self.standing.best()?;
        let dq = self.queueing_delay()?;
        Some(dq == 0 || cwnd * self.delta * to_secs_f64(dq) <= to_secs_f64(standing))
    }

    fn scaled(srtt: Time, factor: f64) -> Time {
        (srtt as f64 * factor).round() as Time
    }

    fn on_rtt_sample(&mut self, now: Time, rtt: Time, srtt: Time) {
        let c = &self.config;
        let srtt = if srtt > 0 { srtt } else { rtt };
        self.min_rtt.update(now, rtt, c.min_rtt_window);
        self.standing.update(now, rtt, Self::scaled(srtt, c.standing_rtt_srtts));
        self.max_rtt.update(now, rtt, Self::scaled(srtt, c.max_rtt_srtts));
    }

    /// §4: nearly empty is d_q < `empty_fraction` x (RTTmax - RTTmin).
    fn nearly_empty(&self) -> bool {
        let (Some(dq), Some(max), Some(min)) =
            (self.queueing_delay(), self.max_rtt.best(), self.min_rtt.best())
        else {
            return false;
        };
        dq == 0 || (dq as f64) < self.config.empty_fraction * max.saturating_sub(min) as f64
    }

    /// §4's detector: default mode after a nearly empty queue, competitive
    /// once none was seen for `empty_srtts` x srtt.
    fn update_mode(&mut self, now: Time, srtt: Time) {
        if !self.config.competitive {
            return;
        }
        if self.nearly_empty() || self.nearly_empty_at.is_none() {
            self.nearly_empty_at = Some(now);
            if self.mode == Mode::Competitive {
                self.mode = Mode::Default;
                self.delta = self.config.delta;
            }
        } else if self.mode == Mode::Default
            && self
                .nearly_empty_at
                .is_some_and(|at| now.saturating_sub(at) > Self::scaled(srtt, self.config.empty_srtts))
        {
            self.mode = Mode::Competitive;
            self.delta_step_at = now;
            self.halved_since_step = false;
        }
    }

    /// Competitive mode's additive increase: 1/δ += 1 per srtt without a loss.
    fn step_delta(&mut self, now: Time, srtt: Time) {
        if self.mode != Mode::Competitive || now.saturating_sub(self.delta_step_at) < srtt {
            return;
        }
        if !self.halved_since_step {
            self.delta = 1.0 / (1.0 / self.delta + 1.0);
        }
        self.halved_since_step = false;
        self.delta_step_at = now;
    }

    /// Competitive mode's multiplicative decrease: 1/δ halves, at most once per step.
    fn on_loss(&mut self) {
        if self.mode == Mode::Competitive && !self.halved_since_step {
            self.delta = (2.0 * self.delta).min(self.config.delta);
            self.halved_since_step = true;
        }
    }

    /// Once per window (an srtt after it began): the direction, and v.
    fn update_velocity(&mut self, now: Time, srtt: Time, cwnd: f64) {
        let Some((began, before)) = self.window_start else {
            self.window_start = Some((now, cwnd));
            return;
        };
        if now.saturating_sub(began) < srtt {
            return;
        }
        let direction = if cwnd > before { Direction::Up } else { Direction::Down };
        if direction == self.direction {
            self.same_direction += 1;
            if self.same_direction >= self.config.velocity_rtts {
                self.velocity *= 2.0;
            }
        } else {
            self.velocity = 1.0;
            self.same_direction = 0;
        }
        // Never faster than doubling per RTT: v/δ at most cwnd (genericCC, xquic).
        if self.velocity > self.delta * cwnd {
            self.velocity /= 2.0;
        }
        self.velocity = self.velocity.max(1.0);
        self.direction = direction;
        self.window_start = Some((now, cwnd));
    }

    /// mvfst's sudden direction change: the decision goes against a direction
    /// whose v grew above 1; a new window begins.
    fn take_direction(&mut self, now: Time, direction: Direction, cwnd: f64) {
        if self.direction != direction && self.velocity > 1.0 {
            self.direction = direction;
            self.velocity = 1.0;
            self.same_direction = 0;
            self.window_start = Some((now, cwnd));
        }
    }
}

impl CongestionControl for Copa {
    fn name(&self) -> &'static str {
        "copa"
    }

    fn owns_cwnd_in_recovery(&self) -> bool {
        true
    }

    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        let now = ack.now;
        self.mss = ack.mss;
        if let Some(rtt) = ack.rtt.filter(|&r| r > 0) {
            self.on_rtt_sample(now, rtt, ack.srtt);
        }
        if self.standing.best().is_none() {
            return; // no RTT sample yet
        }
        let srtt = if ack.srtt > 0 { ack.srtt } else { self.standing.best().unwrap_or(0) };
        self.update_mode(now, srtt);
        self.step_delta(now, srtt);
        let Some(increase) = self.should_increase(w.cwnd) else {
            return;
        };
        let segments = ack.delivered as f64;
        let grows = ack.cwnd_limited;
        if self.slow_start {
            if increase {
                if grows {
                    w.cwnd += segments;
                }
                return;
            }
            self.slow_start = false;
        }
        self.update_velocity(now, srtt, w.cwnd);
        let direction = if increase { Direction::Up } else { Direction::Down };
        self.take_direction(now, direction, w.cwnd);
        let step = segments * self.velocity / (self.delta * w.cwnd);
        if !increase {
            w.cwnd = (w.cwnd - step).max(MIN_CWND);
        } else if grows {
            w.cwnd += step;
        }
    }

    fn on_congestion(&mut self, w: &Window, event: &CongestionEvent) -> Response {
        match event.kind {
            EventKind::FastRetransmit => {
                self.on_loss();
                Response::NoReduction
            }
            EventKind::Timeout => {
                self.on_loss();
                Response::Reduce { ssthresh: w.ssthresh, cwnd: MIN_CWND }
            }
            EventKind::Mark => Response::NoReduction,
        }
    }

    fn pacing_rate(&self, w: &Window, _srtt: Time) -> Option<f64> {
        let rate = self.current_rate(w.cwnd)?;
        (self.mss > 0).then_some(self.config.pacing_gain * rate * self.mss as f64)
    }

    fn metrics(&self, out: &mut Metrics<'_>) {
        let secs = |t: Option<Time>| t.map_or(0.0, to_secs_f64);
        out.put("delta", self.delta);
        out.put("velocity", self.velocity);
        out.put("rtt_standing", secs(self.rtt_standing()));
        out.put("rtt_min", secs(self.rtt_min()));
        out.put("queueing_delay", secs(self.queueing_delay()));
        out.put("mode", self.mode as u8 as f64);
        out.put("slow_start", if self.slow_start { 1.0 } else { 0.0 });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_support::event;
    use cclab_wire::time::millis;

    const MSS: u32 = 1000;
    const SRTT: Time = millis(100);

    /// An ACK at `now` (ms) delivering `delivered` segments with an RTT sample of `rtt_ms`.
    fn ack(now_ms: u64, delivered: u64, rtt_ms: Option<u64>) -> AckSample {
        let mut a = AckSample::new(millis(now_ms), MSS);
        a.acked = delivered;
        a.delivered = delivered;
        a.rtt = rtt_ms.map(millis);
        a.srtt = SRTT;
        a
    }

    fn window(cwnd: f64) -> Window {
        Window { cwnd, ssthresh: 1e9 }
    }

    /// Past slow start, with RTTmin 40 ms (sampled at 0) and RTTstanding 44 ms
    /// (a sample at 1 s; srtt 100 ms, so the window is the last 50 ms): d_q = 4 ms.
    fn steady(cwnd: f64) -> (Copa, Window) {
        let mut c = Copa::new(Config { competitive: false, ..Config::default() });
        c.slow_start = false;
        let mut w = window(cwnd);
        c.on_ack(&mut w, &ack(0, 0, Some(40)));
        c.on_ack(&mut w, &ack(1000, 0, Some(44)));
        assert_eq!((c.rtt_min(), c.rtt_standing()), (Some(millis(40)), Some(millis(44))));
        // As when slow start ends: no window begun yet, v = 1.
        (c.window_start, c.direction, c.same_direction, c.velocity) = (None, Direction::Up, 0, 1.0);
        (c, w)
    }

    #[test]
    fn defaults_are_the_paper_s_constants() {
        let c = Config::default();
        assert_eq!((c.delta, c.min_rtt_window, c.competitive), (0.5, secs(10), true));
        assert_eq!((c.standing_rtt_srtts, c.pacing_gain, c.velocity_rtts), (0.5, 2.0, 3));
        assert_eq!((c.empty_fraction, c.empty_srtts, c.max_rtt_srtts), (0.1, 5.0, 4.0));
        let p = DESCRIPTOR.info().defaults().unwrap_or_default();
        assert_eq!(p.number("delta"), Ok(0.5));
        assert_eq!(p.duration("min_rtt_window"), Ok(Some(secs(10))));
        assert_eq!(p.bool("competitive"), Ok(true));
        let b = DESCRIPTOR.build;
        assert!(b.paces_itself);
        let built = (b.build)(&p).map(|c| c.name());
        assert_eq!(built, Ok("copa"));
    }

    #[test]
    fn the_target_rate_is_one_over_delta_times_the_queueing_delay() {
        let (c, _) = steady(10.0);
        assert_eq!(c.queueing_delay(), Some(millis(4)));
        // 1 / (0.5 x 0.004 s) = 500 packets per second.
        let target = c.target_rate().unwrap_or(0.0);
        assert!((target - 500.0).abs() < 1e-9, "{target}");
        let mut c = c;
        c.delta = 0.25;
        assert!((c.target_rate().unwrap_or(0.0) - 1000.0).abs() < 1e-9);
        // No queueing delay: no limit.
        let mut fresh = Copa::new(Config::default());
        assert_eq!(fresh.target_rate(), None, "nothing before an RTT sample");
        fresh.on_ack(&mut window(10.0), &ack(0, 1, Some(40)));
        assert_eq!(fresh.target_rate(), Some(f64::INFINITY));
    }

    #[test]
    fn cwnd_moves_up_while_the_current_rate_is_at_most_the_target_and_down_above_it() {
        // λt = 500 packets/s and λ = cwnd / 44 ms: the boundary is cwnd = 22.
        let (mut c, mut w) = steady(21.9);
        assert!(c.current_rate(w.cwnd).unwrap_or(0.0) < c.target_rate().unwrap_or(0.0));
        c.on_ack(&mut w, &ack(1001, 2, None));
        // + v/(δ cwnd) per segment delivered, v = 1.
        assert!((w.cwnd - (21.9 + 2.0 / (0.5 * 21.9))).abs() < 1e-12, "{}", w.cwnd);

        let (mut c, mut w) = steady(22.1);
        assert!(c.current_rate(w.cwnd).unwrap_or(0.0) > c.target_rate().unwrap_or(0.0));
        c.on_ack(&mut w, &ack(1001, 2, None));
        assert!((w.cwnd - (22.1 - 2.0 / (0.5 * 22.1))).abs() < 1e-12, "{}", w.cwnd);

        // A decrease never takes cwnd below 2 segments.
        let (mut c, mut w) = steady(2.2);
        c.delta = 100.0;
        c.on_ack(&mut w, &ack(1001, 100, None)); // a step of 100 / (100 x 2.2) = 0.45
        assert!(c.current_rate(2.2).unwrap_or(0.0) > c.target_rate().unwrap_or(f64::INFINITY));
        assert_eq!(w.cwnd, MIN_CWND);
    }

    #[test]
    fn rtt_standing_is_the_minimum_over_the_last_half_srtt_and_rtt_min_over_ten_seconds() {
        let mut c = Copa::new(Config::default());
        let mut w = window(10.0);
        let mut sample = |c: &mut Copa, at_ms: u64, rtt_ms: u64| {
            c.on_ack(&mut w, &ack(at_ms, 1, Some(rtt_ms)));
            (c.rtt_standing().map(|t| t / 1_000_000), c.rtt_min().map(|t| t / 1_000_000))
        };
        // srtt 100 ms: the standing window is 50 ms.
        assert_eq!(sample(&mut c, 0, 80), (Some(80), Some(80)));
        assert_eq!(sample(&mut c, 10, 90), (Some(80), Some(80)));
        assert_eq!(sample(&mut c, 50, 100), (Some(80), Some(80)), "the 80 ms sample is exactly 50 ms old");
        assert_eq!(
            sample(&mut c, 51, 95),
            (Some(90), Some(80)),
            "80 ms left the window; 100 was beaten by 95"
        );
        assert_eq!(sample(&mut c, 61, 97), (Some(95), Some(80)));
        assert_eq!(c.queueing_delay(), Some(millis(15)));
        // RTTmin keeps its minimum for 10 s, then takes the smallest of what is left.
        assert_eq!(sample(&mut c, 10_000, 99), (Some(99), Some(80)));
        assert_eq!(sample(&mut c, 10_011, 98), (Some(98), Some(95)), "80 and 90 are older than 10 s");
        // An RTT sample alone always counts, however old.
        assert_eq!(sample(&mut c, 60_000, 120), (Some(120), Some(120)));
    }

    #[test]
    fn the_standing_window_follows_srtt() {
        let mut c = Copa::new(Config::default());
        let mut w = window(10.0);
        for (at, rtt) in [(0, 80), (30, 90)] {
            c.on_ack(&mut w, &ack(at, 1, Some(rtt)));
        }
        let mut a = ack(55, 1, Some(95));
        a.srtt = millis(40); // window 20 ms: only the sample at 55 ms
        c.on_ack(&mut w, &a);
        assert_eq!(c.rtt_standing(), Some(millis(95)));
    }

    #[test]
    fn velocity_doubles_from_the_third_rtt_in_the_same_direction_and_resets_on_a_change() {
        let mut c = Copa::new(Config::default());
        c.slow_start = false;
        let mut cwnd = 100.0;
        let mut now = millis(1000);
        c.update_velocity(now, SRTT, cwnd); // the first window begins
        let mut seen = Vec::new();
        for _ in 0..5 {
            cwnd += 10.0;
            now += SRTT;
            c.update_velocity(now, SRTT, cwnd);
            seen.push(c.velocity());
        }
        assert_eq!(seen, [1.0, 1.0, 2.0, 4.0, 8.0]);
        assert_eq!(c.direction(), Direction::Up);
        now += SRTT;
        c.update_velocity(now, SRTT, cwnd - 1.0);
        assert_eq!((c.velocity(), c.direction()), (1.0, Direction::Down), "a change of direction resets v");
        // An unchanged cwnd counts as down (the paper: up only if larger).
        let mut seen = Vec::new();
        for _ in 0..3 {
            now += SRTT;
            c.update_velocity(now, SRTT, cwnd - 1.0);
            seen.push(c.velocity());
        }
        assert_eq!(seen, [1.0, 1.0, 2.0]);
    }

    #[test]
    fn the_direction_is_judged_once_per_srtt() {
        let mut c = Copa::new(Config::default());
        c.update_velocity(0, SRTT, 100.0);
        for (at, cwnd) in [(SRTT, 101.0), (2 * SRTT, 102.0)] {
            c.update_velocity(at, SRTT, cwnd);
        }
        // Within the third window: not judged, whatever cwnd does.
        for at in [2 * SRTT + 1, 3 * SRTT - 1] {
            c.update_velocity(at, SRTT, 90.0);
            assert_eq!((c.direction(), c.same_direction), (Direction::Up, 2), "at {at}");
        }
        c.update_velocity(3 * SRTT - 1 + SRTT, SRTT, 103.0);
        assert_eq!(c.velocity(), 2.0, "compared with cwnd when the window began (102)");
    }

    #[test]
    fn velocity_is_halved_back_when_it_would_more_than_double_cwnd_per_rtt() {
        // v/δ at most cwnd: with δ = 0.5 and cwnd 5, v at most 2.5.
        let mut c = Copa::new(Config::default());
        c.update_velocity(0, SRTT, 3.0);
        let mut seen = Vec::new();
        for (i, cwnd) in [3.5, 4.0, 4.5, 5.0, 5.0].into_iter().enumerate() {
            c.update_velocity((i as u64 + 1) * SRTT, SRTT, cwnd);
            seen.push(c.velocity());
        }
        // The fifth is down (5 is not above 5): reset.
        assert_eq!(seen, [1.0, 1.0, 2.0, 2.0, 1.0]);
    }

    #[test]
    fn the_velocity_scales_the_step() {
        // Below the target (boundary 22): every ACK moves up; one ACK per srtt.
        let (mut c, mut w) = steady(10.0);
        let steps: Vec<(f64, f64)> = (1..=5)
            .map(|i| {
                let before = w.cwnd;
                c.on_ack(&mut w, &ack(1000 + 100 * i, 1, None));
                (c.velocity(), w.cwnd - before)
            })
            .collect();
        // The first ACK begins the window; each later one finds cwnd larger.
        let v: Vec<f64> = steps.iter().map(|s| s.0).collect();
        assert_eq!(v, [1.0, 1.0, 1.0, 2.0, 4.0]);
        let cwnd_before_last = w.cwnd - steps[4].1;
        assert!((steps[4].1 - 4.0 / (0.5 * cwnd_before_last)).abs() < 1e-12, "{steps:?}");
    }

    #[test]
    fn a_decision_against_a_grown_velocity_resets_it_at_once() {
        let (mut c, mut w) = steady(30.0); // above the boundary of 22: down
        c.window_start = Some((millis(1000), 10.0));
        c.direction = Direction::Up;
        c.velocity = 8.0;
        c.on_ack(&mut w, &ack(1001, 1, None));
        assert_eq!((c.direction(), c.velocity()), (Direction::Down, 1.0));
        assert!((w.cwnd - (30.0 - 1.0 / 15.0)).abs() < 1e-12, "stepped with v = 1: {}", w.cwnd);
        assert_eq!(c.window_start, Some((millis(1001), 30.0)), "and a new window begins");
    }

    #[test]
    fn slow_start_grows_by_the_segments_delivered_until_the_rate_exceeds_the_target() {
        let mut c = Copa::new(Config { competitive: false, ..Config::default() });
        let mut w = window(10.0);
        assert!(c.in_slow_start());
        c.on_ack(&mut w, &ack(0, 2, Some(40)));
        assert_eq!(w.cwnd, 12.0, "no queue: the target is unlimited");
        c.on_ack(&mut w, &ack(40, 2, Some(40)));
        assert_eq!(w.cwnd, 14.0);
        // d_q = 4 ms and RTTstanding 44 ms: the target is 500 packets/s, 22 in 44 ms.
        w.cwnd = 21.5;
        c.on_ack(&mut w, &ack(1000, 1, Some(44)));
        assert_eq!((w.cwnd, c.in_slow_start()), (22.5, true), "21.5 / 44 ms is below 500 packets/s");
        c.on_ack(&mut w, &ack(1001, 1, None));
        assert!(!c.in_slow_start(), "22.5 / 44 ms exceeds the target");
        assert!(
            (w.cwnd - (22.5 - 1.0 / (0.5 * 22.5))).abs() < 1e-12,
            "and the same ACK decreases: {}",
            w.cwnd
        );
        // Slow start does not come back.
        w.cwnd = 5.0;
        c.on_ack(&mut w, &ack(1003, 1, None));
        assert!(!c.in_slow_start());
        assert!((w.cwnd - (5.0 + 1.0 / 2.5)).abs() < 1e-12);
    }

    /// RTTmin 40 ms at 0, an 80 ms sample at 10 ms (the queue was empty until
    /// then), then 60 ms every 10 ms from 100 ms: d_q = 20 ms against a
    /// threshold of 0.1 x (80 - 40) = 4 ms (2 ms once the 80 ms sample is 4
    /// srtt old): not nearly empty.
    fn queue_that_stays(c: &mut Copa, w: &mut Window, until_ms: u64) {
        c.on_ack(w, &ack(0, 1, Some(40)));
        c.on_ack(w, &ack(10, 1, Some(80)));
        for at in (100..=until_ms).step_by(10) {
            c.on_ack(w, &ack(at, 1, Some(60)));
        }
    }

    #[test]
    fn competitive_mode_when_the_queue_was_not_nearly_empty_for_five_srtts() {
        let mut c = Copa::new(Config::default());
        let mut w = window(10.0);
        queue_that_stays(&mut c, &mut w, 510);
        assert_eq!(c.queueing_delay(), Some(millis(20)));
        assert_eq!(c.mode(), Mode::Default, "500 ms (5 srtt) since the queue was empty at 10 ms: not more");
        c.on_ack(&mut w, &ack(520, 1, Some(60)));
        assert_eq!(c.mode(), Mode::Competitive);
        // d_q = 1 ms is below 0.1 x (60 - 40) = 2 ms: nearly empty, default mode, δ restored.
        c.delta = 0.1;
        c.on_ack(&mut w, &ack(530, 1, Some(41)));
        assert_eq!(c.queueing_delay(), Some(millis(1)));
        assert_eq!((c.mode(), c.delta()), (Mode::Default, 0.5));

        // 3 ms is not below 2 ms.
        let mut c = Copa::new(Config::default());
        queue_that_stays(&mut c, &mut w, 520);
        c.on_ack(&mut w, &ack(530, 1, Some(43)));
        assert_eq!(c.mode(), Mode::Competitive);

        // With the switch off, the mode never changes.
        let mut c = Copa::new(Config { competitive: false, ..Config::default() });
        queue_that_stays(&mut c, &mut w, 2000);
        assert_eq!(c.mode(), Mode::Default);
    }

    #[test]
    fn a_flat_rtt_is_an_empty_queue() {
        let mut c = Copa::new(Config::default());
        let mut w = window(10.0);
        for at in (0..2000).step_by(10) {
            c.on_ack(&mut w, &ack(at, 1, Some(40)));
        }
        assert_eq!(c.mode(), Mode::Default, "RTTmax = RTTmin, d_q = 0");
    }

    #[test]
    fn competitive_mode_adds_one_to_one_over_delta_per_srtt_and_halves_it_at_a_loss() {
        let mut c = Copa::new(Config::default());
        let mut w = window(10.0);
        queue_that_stays(&mut c, &mut w, 520);
        assert_eq!(c.mode(), Mode::Competitive, "since 520 ms");
        let w = window(10.0);
        let inverse = |c: &Copa| (1.0 / c.delta() * 1e9).round() / 1e9;
        let at = |c: &mut Copa, ms: u64| c.on_ack(&mut window(10.0), &ack(ms, 1, Some(60)));
        at(&mut c, 619);
        assert_eq!(inverse(&c), 2.0, "not yet one srtt");
        at(&mut c, 620);
        at(&mut c, 720);
        at(&mut c, 820);
        assert_eq!(inverse(&c), 5.0, "2 + 1 + 1 + 1");
        let _ = c.on_congestion(&w, &event(EventKind::FastRetransmit, 10.0));
        assert_eq!(inverse(&c), 2.5);
        let _ = c.on_congestion(&w, &event(EventKind::FastRetransmit, 10.0));
        assert_eq!(inverse(&c), 2.5, "at most once per srtt");
        at(&mut c, 920);
        assert_eq!(inverse(&c), 2.5, "no increase for the srtt that had the loss");
        at(&mut c, 1020);
        assert_eq!(inverse(&c), 3.5);
        let _ = c.on_congestion(&w, &event(EventKind::Timeout, 10.0));
        assert_eq!(inverse(&c), 2.0, "halved to 1.75, but delta never above 0.5");

        // Default mode: δ stays whatever happens.
        let (mut c, _) = steady(10.0);
        let _ = c.on_congestion(&w, &event(EventKind::FastRetransmit, 10.0));
        c.on_ack(&mut window(10.0), &ack(2000, 1, None));
        assert_eq!(c.delta(), 0.5);
    }

    #[test]
    fn pacing_is_twice_cwnd_per_rtt_standing() {
        let c = Copa::new(Config::default());
        assert_eq!(c.pacing_rate(&window(50.0), SRTT), None, "nothing before an RTT sample");
        let (c, _) = steady(50.0);
        // 2 x 50 segments x 1000 bytes / 44 ms.
        let rate = c.pacing_rate(&window(50.0), SRTT).unwrap_or(0.0);
        assert!((rate - 2.0 * 50.0 * 1000.0 / 0.044).abs() < 1e-6, "{rate}");
    }

    #[test]
    fn losses_change_no_window_a_timeout_leaves_two_segments_and_marks_nothing() {
        let (mut c, _) = steady(50.0);
        let w = window(50.0);
        assert!(c.owns_cwnd_in_recovery());
        assert_eq!(c.on_congestion(&w, &event(EventKind::FastRetransmit, 50.0)), Response::NoReduction);
        assert_eq!(c.on_congestion(&w, &event(EventKind::Mark, 50.0)), Response::NoReduction);
        assert_eq!(
            c.on_congestion(&w, &event(EventKind::Timeout, 50.0)),
            Response::Reduce { ssthresh: 1e9, cwnd: MIN_CWND }
        );
    }

    #[test]
    fn an_ack_in_recovery_moves_cwnd_like_any_other() {
        let (mut c, mut w) = steady(10.0);
        let mut a = ack(1001, 1, None);
        a.phase = crate::cc::AckPhase::Recovery;
        c.on_ack(&mut w, &a);
        assert!((w.cwnd - 10.2).abs() < 1e-12, "{}", w.cwnd);
    }

    #[test]
    fn metrics_publish_the_state() {
        let (c, _) = steady(10.0);
        let mut log = cclab_wire::metrics::MetricLog::default();
        c.metrics(&mut Metrics::new(&mut log));
        let get = |name: &str| log.0.iter().find(|(n, _)| n == name).map(|&(_, v)| v);
        assert_eq!(get("delta"), Some(0.5));
        assert_eq!(get("velocity"), Some(1.0));
        assert_eq!(get("rtt_standing"), Some(0.044));
        assert_eq!(get("rtt_min"), Some(0.04));
        assert_eq!(get("queueing_delay"), Some(0.004));
        assert_eq!(get("mode"), Some(0.0));
        assert_eq!(get("slow_start"), Some(0.0));
        let listed: Vec<&str> = DESCRIPTOR.metrics.iter().map(|m| m.name).collect();
        let published: Vec<&str> = log.0.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(listed, published);
    }
}
