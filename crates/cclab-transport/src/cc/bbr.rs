//! BBR v1: Cardwell, Cheng, Gunn, Hassas Yeganeh, Jacobson, "BBR:
//! Congestion-Based Congestion Control", ACM Queue 14(5), 2016;
//! draft-cardwell-iccrg-bbr-congestion-control-00 (2017); Linux
//! `net/ipv4/tcp_bbr.c` as of torvalds/linux 02dc96ef6c25f990452c114c59d75c368a1f4c8f.
//!
//! The model is two numbers: BtlBw, the windowed maximum of the delivery-rate
//! samples over the last `bw_window_rounds` packet-timed round trips (a
//! [`WindowedFilter`]; application-limited samples only enter if they raise
//! the maximum), and RTprop, the minimum RTT, refreshed by any sample below
//! it and replaced by the next sample once it is `probe_rtt_interval` old. From them: pacing rate = pacing_gain x BtlBw x (1 - `pacing_margin`),
//! and cwnd = cwnd_gain x BDP + a quantisation allowance, at least 4 segments.
//!
//! RTprop is renewed only by a strictly lower RTT (`rtprop_refresh_on_equal
//! = false`, the default), as Linux does since "tcp: only postpone PROBE_RTT
//! if RTT is < current min_rtt estimate" (Sharpelletti and Cardwell, November
//! 2020, in v5.10 and the stable kernels): an equal sample renewed it before
//! (the version read here, and the 2017 draft and ns-3), and a flow whose RTT
//! was flat then never probed. On a simulated path whose queue empties every
//! gain cycle the RTT equals the propagation delay to the nanosecond, so with
//! `rtprop_refresh_on_equal = true` PROBE_RTT never comes (tests/bbr.rs).

//! States (gains as Linux's fixed-point constants, here as reals):
//! - STARTUP: pacing and cwnd gain `high_gain` (2/ln 2; Linux 2885/1000).
//!   Ends when, at three successive round starts (`full_bw_rounds`) with a
//!   sample not application-limited, BtlBw has not grown by 25 %
//!   (`full_bw_growth`) over the last value that did.
//! - DRAIN: pacing gain 1/`high_gain` (Linux 1000/2885), cwnd gain
//!   `high_gain`, until the in-flight data is at most one BDP (plus the
//!   allowance).
//! - PROBE_BW: pacing gain cycles through [5/4, 3/4, 1, 1, 1, 1, 1, 1], cwnd
//!   gain `cwnd_gain`. A phase lasts one RTprop, except that the 5/4 phase also
//!   waits until the flight before the ACK reaches 5/4 BDP or a loss was
//!   detected, and the 3/4 phase ends early once that flight is at most one
//!   BDP. The first phase is drawn uniformly among the seven that are not 3/4
//!   (Linux `bbr_cycle_rand = 7`), from the seed the driver hands
//!   [`CongestionControl::seed`].
//! - PROBE_RTT: entered from any other state when RTprop is older than
//!   `probe_rtt_interval`; cwnd at most 4 segments; once the flight is down to
//!   4, it lasts `probe_rtt_duration` and at least until the next round start;
//!   then RTprop's timestamp is renewed, cwnd restored to what it was before,
//!   and the state is PROBE_BW (a new random phase), or STARTUP if the pipe was
//!   never found full. Its low delivery-rate samples are treated as
//!   application-limited, as Linux marks them.
//!
//! cwnd follows Linux `bbr_set_cwnd`: on each ACK that delivers segments it
//! grows by the segments delivered ([`AckSample::delivered`]: each segment
//! once, when first SACKed or acknowledged, as Linux's `rs->acked_sacked`;
//! a cumulative ACK over SACKed segments delivers only the others) up to the target (before the pipe is full,
//! it grows without a cap while below the target), and snaps down to the
//! target once the pipe was found full. The allowance is Linux's
//! `bbr_quantization_budget` for a send quantum of one segment (our sender
//! sends single segments, so Linux's 3 x TSO goal is 3 segments), then
//! rounded up to an even number, plus 2 in the 5/4 phase. Loss does not enter
//! the model (v1). Loss recovery: on its first round, packet conservation,
//! cwnd = max(cwnd, pipe + delivered), starting from pipe + delivered; the cwnd
//! from before the loss is restored when recovery ends (Linux `bbr_save_cwnd`,
//! `bbr_set_cwnd_to_recover_or_restore`). A timeout cuts cwnd to one segment
//! and restarts the growth-of-BtlBw detection (Linux `bbr_set_state`), from
//! where cwnd regrows by the delivered segments per ACK until everything
//! outstanding at the timeout is acknowledged; then the cwnd from before the
//! timeout is restored (Linux on leaving its Loss state).
//!
//! Where this departs from Linux, and why:
//! - Round trips are the sender's ([`AckSample::round_start`]); Linux restarts
//!   its round count when recovery or PROBE_RTT's 4-segment phase begins, so
//!   here the first round of recovery, and the round PROBE_RTT waits for, may
//!   end earlier than a full RTT after that moment.
//! - Linux deducts the segments newly marked lost from cwnd in recovery; the
//!   ACK sample does not carry that count, so only the entry's cut applies.
//!   The flight BBR reads is [`AckSample::pipe`], which leaves out the
//!   retransmissions in flight that Linux's `tcp_packets_in_flight` counts.
//! - No long-term ("policer") bandwidth mode, no ACK-aggregation allowance
//!   (added to Linux after the 2017 draft), no idle restart, no EDT
//!   correction of the flight; RTT samples are not screened for delayed ACKs.
//! - Before the first ACK the segment size is unknown here, so the initial
//!   window leaves unpaced; from the first ACK until the model has a
//!   bandwidth, the rate is Linux's `high_gain` x cwnd / srtt (1 ms without an
//!   RTT sample). The rate, computed from delivered payload, paces whole
//!   packets (as, to our reading, Linux's pacing does with each packet's
//!   length), so with 40-byte headers on 1000-byte segments the flow paces
//!   about 4 % below the link.
//! - Loss detection is the flow's loss recovery (RFC 6675 with `sack`), which
//!   sends a segment at most once per recovery: a lost retransmission waits for
//!   the retransmission timeout, where Linux's RACK (RFC 8985) finds it about an
//!   RTT later. BBR v1 keeps its cwnd through losses, so where several flows
//!   keep a drop-tail buffer full, retransmissions are lost as often as new
//!   data and those flows time out (tests/bbr.rs, two flows).
//! - Linux keeps the SACK information after a timeout unless the receiver
//!   reneged; `sack`'s default `clear_on_timeout = true` (RFC 2018 §5) forgets
//!   it, and the go-back-N that follows resends data the receiver holds. Those
//!   segments deliver nothing new, so BtlBw, and with it cwnd, can fall to a
//!   few segments until the go-back-N has passed the data sent before the
//!   timeout (tests/bbr.rs: a 200 ms flow at 0.07 Mbit/s, 0.98 with
//!   `clear_on_timeout = false`, the closer model of Linux).
//! - After a timeout the cwnd from before is restored once everything
//!   outstanding at the timeout is acknowledged (Linux leaves its Loss state),
//!   as the loss recoveries that keep that point (`tahoe`, `newreno`, `sack`,
//!   `sack1`) tell; with `reno` recovery, cwnd only regrows toward the target.

use super::{
    AckPhase, AckSample, CcBuilder, CcDescriptor, CongestionControl, CongestionEvent, EcnUse, EventKind,
    Response, Window,
};
use crate::windowed_filter::{Extreme, WindowedFilter};
use cclab_wire::random::SplitMix64;
use cclab_wire::time::{millis, to_secs_f64};
use cclab_wire::{
    Descriptor, MetricDesc, Metrics, ParamDefault, ParamError, ParamType, Parameter, Params, Role, Time,
};

pub const DESCRIPTOR: CcDescriptor = Descriptor {
    name: "bbr",
    role: Role::CongestionControl,
    summary: "BBR v1: paces at the windowed max delivery rate, cwnd 2 BDP; STARTUP, DRAIN, PROBE_BW, PROBE_RTT",
    source: "Cardwell et al., ACM Queue 14(5) 2016; draft-cardwell-iccrg-bbr-congestion-control-00; \
             Linux net/ipv4/tcp_bbr.c (torvalds/linux 02dc96ef), lib/minmax.c",
    parameters: &[
        Parameter {
            name: "high_gain",
            ty: ParamType::Number,
            unit: "",
            min: 1.0,
            max: 10.0,
            default: ParamDefault::Value("2.885"),
            meaning: "STARTUP's pacing and cwnd gain, 2/ln 2 (Linux 2885/1000); DRAIN paces at its inverse",
        },
        Parameter {
            name: "cwnd_gain",
            ty: ParamType::Number,
            unit: "",
            min: 1.0,
            max: 10.0,
            default: ParamDefault::Value("2"),
            meaning: "PROBE_BW's cwnd in BDPs (Linux bbr_cwnd_gain)",
        },
        Parameter {
            name: "bw_window_rounds",
            ty: ParamType::Integer,
            unit: "round trips",
            min: 1.0,
            max: 1000.0,
            default: ParamDefault::Value("10"),
            meaning: "length of BtlBw's windowed max filter (Linux bbr_bw_rtts = 10)",
        },
        Parameter {
            name: "probe_rtt_interval",
            ty: ParamType::Duration,
            unit: "",
            min: 0.001,
            max: 3600.0,
            default: ParamDefault::Value("10s"),
            meaning: "RTprop expires this long after it was last renewed, which starts PROBE_RTT",
        },
        Parameter {
            name: "probe_rtt_duration",
            ty: ParamType::Duration,
            unit: "",
            min: 0.0,
            max: 60.0,
            default: ParamDefault::Value("200ms"),
            meaning: "time PROBE_RTT holds the flight at 4 segments (and at least one round)",
        },
        Parameter {
            name: "rtprop_refresh_on_equal",
            ty: ParamType::Bool,
            unit: "",
            min: 0.0,
            max: 0.0,
            default: ParamDefault::Value("false"),
            meaning: "an RTT equal to RTprop renews it (Linux before v5.10, the 2017 draft, ns-3); false: only a lower one (Linux since v5.10)",
        },
        Parameter {
            name: "pacing_margin",
            ty: ParamType::Number,
            unit: "",
            min: 0.0,
            max: 0.5,
            default: ParamDefault::Value("0.01"),
            meaning: "pace this fraction below pacing_gain x BtlBw (Linux bbr_pacing_margin_percent = 1)",
        },
        Parameter {
            name: "full_bw_growth",
            ty: ParamType::Number,
            unit: "",
            min: 1.0,
            max: 4.0,
            default: ParamDefault::Value("1.25"),
            meaning: "growth of BtlBw per round that keeps STARTUP going (Linux bbr_full_bw_thresh)",
        },
        Parameter {
            name: "full_bw_rounds",
            ty: ParamType::Integer,
            unit: "round trips",
            min: 1.0,
            max: 100.0,
            default: ParamDefault::Value("3"),
            meaning: "rounds without that growth that end STARTUP (Linux bbr_full_bw_cnt)",
        },
    ],
    metrics: &[
        MetricDesc { name: "btl_bw", unit: "bit/s", meaning: "BtlBw, the windowed max delivery rate (payload)" },
        MetricDesc { name: "rtprop", unit: "s", meaning: "RTprop, the min RTT (0 before the first sample)" },
        MetricDesc { name: "mode", unit: "", meaning: "0 STARTUP, 1 DRAIN, 2 PROBE_BW, 3 PROBE_RTT" },
        MetricDesc { name: "pacing_gain", unit: "", meaning: "the current pacing gain" },
    ],
    build: CcBuilder { build, paces_itself: true, ecn: EcnUse::Optional },
};

fn build(p: &Params) -> Result<Box<dyn CongestionControl>, ParamError> {
    let duration = |name: &'static str| {
        p.duration(name)?
            .ok_or(ParamError { name: name.into(), problem: "missing (not resolved by the validator)" })
    };
    Ok(Box::new(Bbr::new(Config {
        high_gain: p.number("high_gain")?,
        cwnd_gain: p.number("cwnd_gain")?,
        bw_window_rounds: p.number("bw_window_rounds")? as u64,
        probe_rtt_interval: duration("probe_rtt_interval")?,
        probe_rtt_duration: duration("probe_rtt_duration")?,
        pacing_margin: p.number("pacing_margin")?,
        rtprop_refresh_on_equal: p.bool("rtprop_refresh_on_equal")?,
        full_bw_growth: p.number("full_bw_growth")?,
        full_bw_rounds: p.number("full_bw_rounds")? as u32,
    })))
}

/// The PROBE_BW pacing gains, one phase per RTprop (Linux `bbr_pacing_gain`).
pub const CYCLE: [f64; 8] = [5.0 / 4.0, 3.0 / 4.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// The smallest cwnd, and PROBE_RTT's cap (Linux `bbr_cwnd_min_target`).
pub const MIN_CWND: f64 = 4.0;
/// Segments sent as one unit: our sender sends single segments.
const SEND_QUANTUM: f64 = 1.0;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    pub high_gain: f64,
    pub cwnd_gain: f64,
    pub bw_window_rounds: u64,
    pub probe_rtt_interval: Time,
    pub probe_rtt_duration: Time,
    pub pacing_margin: f64,
    pub rtprop_refresh_on_equal: bool,
    pub full_bw_growth: f64,
    pub full_bw_rounds: u32,
}

impl Default for Config {
    /// Linux's constants.
    fn default() -> Self {
        Self {
            high_gain: 2.885,
            cwnd_gain: 2.0,
            bw_window_rounds: 10,
            probe_rtt_interval: millis(10_000),
            probe_rtt_duration: millis(200),
            pacing_margin: 0.01,
            rtprop_refresh_on_equal: false,
            full_bw_growth: 1.25,
            full_bw_rounds: 3,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup = 0,
    Drain = 1,
    ProbeBw = 2,
    ProbeRtt = 3,
}

/// Where loss recovery stands, as Linux's `prev_ca_state` and `packet_conservation` track it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Recovery {
    None,
    /// A loss was detected; the next ACK in recovery starts conservation.
    Detected,
    /// The first round of recovery: packet conservation.
    Conserving,
    /// Later rounds: cwnd grows toward the target again.
    Growing,
}

#[derive(Debug)]
pub struct Bbr {
    config: Config,
    mode: Mode,
    /// Bytes per second, over round trips.
    btl_bw: WindowedFilter,
    rounds: u64,
    rtprop: Option<Time>,
    rtprop_stamp: Time,
    full_bw: f64,
    full_bw_count: u32,
    full_bw_reached: bool,
    cycle_index: usize,
    cycle_stamp: Time,
    loss_in_phase: bool,
    pacing_gain: f64,
    cwnd_gain: f64,
    /// Bytes per second; 0 until the first ACK.
    pacing_rate: f64,
    has_seen_rtt: bool,
    prior_cwnd: f64,
    recovery: Recovery,
    /// When PROBE_RTT may end, once the flight is down to 4 segments.
    probe_rtt_done_at: Option<Time>,
    probe_rtt_round_done: bool,
    /// The flow's initial window (cwnd at the first ACK): the target before an RTT sample.
    initial_cwnd: Option<f64>,
    delivered: u64,
    mss: u32,
    draws: SplitMix64,
}

impl Bbr {
    pub fn new(config: Config) -> Self {
        Self {
            config,
            mode: Mode::Startup,
            btl_bw: WindowedFilter::new(Extreme::Max, config.bw_window_rounds, 0, 0.0),
            rounds: 0,
            rtprop: None,
            rtprop_stamp: 0,
            full_bw: 0.0,
            full_bw_count: 0,
            full_bw_reached: false,
            cycle_index: 0,
            cycle_stamp: 0,
            loss_in_phase: false,
            pacing_gain: config.high_gain,
            cwnd_gain: config.high_gain,
            pacing_rate: 0.0,
            has_seen_rtt: false,
            prior_cwnd: 0.0,
            recovery: Recovery::None,
            probe_rtt_done_at: None,
            probe_rtt_round_done: false,
            initial_cwnd: None,
            delivered: 0,
            mss: 0,
            draws: SplitMix64::new(0),
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// BtlBw in bytes per second.
    pub fn btl_bw(&self) -> f64 {
        self.btl_bw.best()
    }

    pub fn rtprop(&self) -> Option<Time> {
        self.rtprop
    }

    pub fn pacing_gain(&self) -> f64 {
        self.pacing_gain
    }

    pub fn cycle_index(&self) -> usize {
        self.cycle_index
    }

    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }

    /// BDP x `gain` in segments, rounded up (Linux `bbr_bdp`); the initial
    /// window before an RTT sample.
    fn bdp(&self, gain: f64) -> f64 {
        match self.rtprop {
            Some(rtprop) if self.mss > 0 => {
                (self.btl_bw() * to_secs_f64(rtprop) * gain / self.mss as f64).ceil()
            }
            _ => self.initial_cwnd.unwrap_or(MIN_CWND),
        }
    }

    /// The flight a gain aims at: BDP x gain plus the quantisation allowance
    /// (Linux `bbr_inflight`, `bbr_quantization_budget`).
    fn inflight_target(&self, gain: f64) -> f64 {
        let with_quanta = self.bdp(gain) + 3.0 * SEND_QUANTUM;
        let even = 2.0 * (with_quanta / 2.0).ceil();
        if self.mode == Mode::ProbeBw && self.cycle_index == 0 {
            even + 2.0
        } else {
            even
        }
    }

    fn enter_probe_bw(&mut self, now: Time) {
        self.mode = Mode::ProbeBw;
        // Linux: cycle_idx = CYCLE_LEN - 1 - random(7), then advance: any phase but 3/4.
        let r = (self.draws.next_f64() * 7.0) as usize;
        self.cycle_index = CYCLE.len() - 1 - r.min(6);
        self.advance_cycle(now);
    }

    fn advance_cycle(&mut self, now: Time) {
        self.cycle_index = (self.cycle_index + 1) % CYCLE.len();
        self.cycle_stamp = now;
        self.loss_in_phase = false;
    }

    /// Linux `bbr_is_next_cycle_phase`; `prior_inflight` is the flight before this ACK.
    fn phase_done(&self, now: Time, prior_inflight: f64) -> bool {
        let full_length = self.rtprop.is_some_and(|r| now.saturating_sub(self.cycle_stamp) > r);
        let gain = CYCLE[self.cycle_index];
        if gain > 1.0 {
            full_length && (self.loss_in_phase || prior_inflight >= self.inflight_target(gain))
        } else if gain < 1.0 {
            full_length || prior_inflight <= self.inflight_target(1.0)
        } else {
            full_length
        }
    }

    /// Linux `bbr_check_full_bw_reached`.
    fn check_full_bw(&mut self, round_start: bool, app_limited: bool) {
        if self.full_bw_reached || !round_start || app_limited {
            return;
        }
        if self.btl_bw() >= self.full_bw * self.config.full_bw_growth {
            self.full_bw = self.btl_bw();
            self.full_bw_count = 0;
            return;
        }
        self.full_bw_count += 1;
        self.full_bw_reached = self.full_bw_count >= self.config.full_bw_rounds;
    }

    fn save_cwnd(&mut self, cwnd: f64) {
        self.prior_cwnd = if self.recovery == Recovery::None && self.mode != Mode::ProbeRtt {
            cwnd
        } else {
            self.prior_cwnd.max(cwnd)
        };
    }

    /// Linux `bbr_update_min_rtt`: RTprop, and PROBE_RTT's entry and exit.
    fn update_rtprop(&mut self, w: &mut Window, ack: &AckSample, inflight: f64) {
        let now = ack.now;
        let expired =
            self.rtprop.is_some() && now > self.rtprop_stamp.saturating_add(self.config.probe_rtt_interval);
        if let Some(rtt) = ack.rtt {
            let renews = |m: Time| rtt < m || (rtt == m && self.config.rtprop_refresh_on_equal);
            if self.rtprop.is_none_or(renews) || expired {
                self.rtprop = Some(rtt);
                self.rtprop_stamp = now;
            }
        }
        if expired && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(w.cwnd);
            self.probe_rtt_done_at = None;
        }
        if self.mode != Mode::ProbeRtt {
            return;
        }
        match self.probe_rtt_done_at {
            None if inflight <= MIN_CWND => {
                self.probe_rtt_done_at = Some(now + self.config.probe_rtt_duration);
                self.probe_rtt_round_done = false;
            }
            None => {}
            Some(done_at) => {
                self.probe_rtt_round_done |= ack.round_start;
                if self.probe_rtt_round_done && now > done_at {
                    self.rtprop_stamp = now;
                    w.cwnd = w.cwnd.max(self.prior_cwnd);
                    if self.full_bw_reached {
                        self.enter_probe_bw(now);
                    } else {
                        self.mode = Mode::Startup;
                    }
                }
            }
        }
    }

    /// Linux `bbr_update_gains`.
    fn update_gains(&mut self) {
        let high = self.config.high_gain;
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (high, high),
            Mode::Drain => (1.0 / high, high),
            Mode::ProbeBw => (CYCLE[self.cycle_index], self.config.cwnd_gain),
            Mode::ProbeRtt => (1.0, 1.0),
        };
    }

    /// Linux `bbr_set_pacing_rate`: before the pipe is full the rate only rises.
    fn update_pacing_rate(&mut self, w: &Window, srtt: Time) {
        let margin = 1.0 - self.config.pacing_margin;
        if !self.has_seen_rtt && srtt > 0 {
            self.has_seen_rtt = true;
            self.pacing_rate = self.initial_rate(w.cwnd, srtt);
        }
        let rate = self.pacing_gain * self.btl_bw() * margin;
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// Linux `bbr_init_pacing_rate_from_rtt`: high_gain x cwnd per srtt, or per 1 ms without one.
    fn initial_rate(&self, cwnd: f64, srtt: Time) -> f64 {
        let rtt = if srtt > 0 { srtt } else { millis(1) };
        self.config.high_gain * cwnd * self.mss as f64 / to_secs_f64(rtt) * (1.0 - self.config.pacing_margin)
    }

    /// Linux `bbr_set_cwnd` with `bbr_set_cwnd_to_recover_or_restore`.
    fn update_cwnd(&mut self, w: &mut Window, ack: &AckSample, delivered: f64, inflight: f64) {
        if delivered > 0.0 {
            if self.recovery == Recovery::Detected && ack.phase == AckPhase::Recovery {
                self.recovery = Recovery::Conserving;
                w.cwnd = inflight + delivered;
            }
            if self.recovery == Recovery::Conserving {
                w.cwnd = w.cwnd.max(inflight + delivered);
            } else {
                let target = self.inflight_target(self.cwnd_gain);
                let early = (self.delivered as f64) < self.initial_cwnd.unwrap_or(0.0);
                if self.full_bw_reached {
                    w.cwnd = (w.cwnd + delivered).min(target);
                } else if w.cwnd < target || early {
                    w.cwnd += delivered;
                }
                w.cwnd = w.cwnd.max(MIN_CWND);
            }
        }
        if self.mode == Mode::ProbeRtt {
            w.cwnd = w.cwnd.min(MIN_CWND);
        }
    }
}

impl CongestionControl for Bbr {
    fn name(&self) -> &'static str {
        "bbr"
    }

    fn seed(&mut self, seed: u64) {
        self.draws = SplitMix64::new(seed);
    }

    fn owns_cwnd_in_recovery(&self) -> bool {
        true
    }

    fn uses_delivery_rate(&self) -> bool {
        true
    }

    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        let now = ack.now;
        self.mss = ack.mss;
        self.initial_cwnd.get_or_insert(w.cwnd);
        let delivered = ack.delivered as f64;
        self.delivered += ack.delivered;
        let inflight = ack.pipe.unwrap_or(ack.in_flight) as f64;

        // Linux bbr_update_bw.
        if ack.round_start {
            self.rounds += 1;
            if self.recovery == Recovery::Conserving {
                self.recovery = Recovery::Growing;
            }
        }
        // PROBE_RTT's samples measure the 4-segment flight, not the path: Linux marks them app-limited.
        let app_limited = ack.rate.is_some_and(|r| r.app_limited) || self.mode == Mode::ProbeRtt;
        if let Some(r) = ack.rate {
            let bw = r.bytes_per_second();
            if !app_limited || bw >= self.btl_bw() {
                self.btl_bw.update(self.rounds, bw);
            }
        }

        if self.mode == Mode::ProbeBw && self.phase_done(now, inflight + delivered) {
            self.advance_cycle(now);
        }
        self.check_full_bw(ack.round_start, app_limited);
        // Linux bbr_check_drain.
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
        }
        if self.mode == Mode::Drain && inflight <= self.inflight_target(1.0) {
            self.enter_probe_bw(now);
        }
        self.update_rtprop(w, ack, inflight);
        self.update_gains();
        self.update_pacing_rate(w, ack.srtt);
        self.update_cwnd(w, ack, delivered, inflight);
    }

    fn on_congestion(&mut self, w: &Window, event: &CongestionEvent) -> Response {
        match event.kind {
            EventKind::FastRetransmit => {
                self.save_cwnd(w.cwnd);
                self.recovery = Recovery::Detected;
                self.loss_in_phase = true;
                Response::NoReduction
            }
            EventKind::Timeout => {
                self.save_cwnd(w.cwnd);
                self.recovery = Recovery::None;
                self.loss_in_phase = true;
                self.full_bw = 0.0;
                Response::Reduce { ssthresh: w.ssthresh, cwnd: 1.0 }
            }
            // v1 does not answer congestion marks.
            EventKind::Mark => Response::NoReduction,
        }
    }

    fn on_recovery_exit(&mut self, w: &mut Window, _now: Time) {
        if self.recovery != Recovery::None {
            w.cwnd = w.cwnd.max(self.prior_cwnd);
        }
        self.recovery = Recovery::None;
    }

    /// Linux `bbr_set_cwnd_to_recover_or_restore` on leaving the Loss state.
    fn on_timeout_recovered(&mut self, w: &mut Window, _now: Time) {
        w.cwnd = w.cwnd.max(self.prior_cwnd);
    }

    fn pacing_rate(&self, w: &Window, srtt: Time) -> Option<f64> {
        if self.pacing_rate > 0.0 {
            Some(self.pacing_rate)
        } else if self.mss > 0 {
            Some(self.initial_rate(w.cwnd, srtt))
        } else {
            None
        }
    }

    fn metrics(&self, out: &mut Metrics<'_>) {
        out.put("btl_bw", self.btl_bw() * 8.0);
        out.put("rtprop", self.rtprop.map_or(0.0, to_secs_f64));
        out.put("mode", self.mode as u8 as f64);
        out.put("pacing_gain", self.pacing_gain);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_support::event;
    use crate::tcp::rate::RateSample;
    use cclab_wire::time::secs;

    const MSS: u32 = 1000;
    /// 10 Mbit/s of payload and 40 ms: a BDP of 50 segments.
    const BW: f64 = 1.25e6;
    const RTPROP: Time = 40_000_000;

    /// An ACK at `now` delivering `delivered` segments and leaving `inflight` in the pipe.
    fn ack(now: Time, delivered: u64, inflight: u64) -> AckSample {
        let mut a = AckSample::new(now, MSS);
        a.acked = delivered;
        a.delivered = delivered;
        a.in_flight = inflight;
        a.pipe = Some(inflight);
        a.srtt = RTPROP;
        a
    }

    /// A delivery-rate sample of `bytes_per_second` over one RTprop.
    fn rate(bytes_per_second: f64) -> RateSample {
        let delivered = (bytes_per_second * 0.04).round() as u64;
        RateSample {
            delivered,
            interval: RTPROP,
            prior_delivered: 0,
            app_limited: false,
            lost: 0,
            tx_in_flight: 0,
        }
    }

    /// PROBE_BW in phase `index` with the model BW x RTPROP, RTprop measured at 0.
    fn probe_bw(index: usize) -> Bbr {
        let mut b = Bbr::new(Config::default());
        b.mss = MSS;
        b.initial_cwnd = Some(4.0);
        b.btl_bw.reset(0, BW);
        b.rtprop = Some(RTPROP);
        b.full_bw_reached = true;
        b.mode = Mode::ProbeBw;
        b.cycle_index = index;
        b.update_gains();
        b
    }

    fn window(cwnd: f64) -> Window {
        Window { cwnd, ssthresh: 1e9 }
    }

    #[test]
    fn gains_are_linux_constants_and_the_cycle_is_eight_phases_of_one_probe_one_drain() {
        let c = Config::default();
        assert_eq!(c.high_gain, 2.885);
        assert!((2.0 / std::f64::consts::LN_2 - c.high_gain).abs() < 1e-3, "2/ln 2 = 2.8854");
        assert_eq!(CYCLE, [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]);
        assert_eq!((c.cwnd_gain, c.bw_window_rounds, c.full_bw_growth, c.full_bw_rounds), (2.0, 10, 1.25, 3));
        assert_eq!((c.probe_rtt_interval, c.probe_rtt_duration), (secs(10), millis(200)));
        let mut b = Bbr::new(c);
        assert_eq!((b.pacing_gain, b.cwnd_gain), (2.885, 2.885));
        b.mode = Mode::Drain;
        b.update_gains();
        assert!((b.pacing_gain - 1000.0 / 2885.0).abs() < 1e-12);
        assert_eq!(b.cwnd_gain, 2.885);
        b.mode = Mode::ProbeRtt;
        b.update_gains();
        assert_eq!((b.pacing_gain, b.cwnd_gain), (1.0, 1.0));
        // The defaults in the descriptor are the same constants.
        let p = DESCRIPTOR.info().defaults().unwrap_or_default();
        assert_eq!(p.number("high_gain"), Ok(2.885));
        assert_eq!(p.duration("probe_rtt_interval"), Ok(Some(secs(10))));
    }

    #[test]
    fn startup_ends_after_three_round_starts_without_25_percent_growth_and_not_before() {
        let mut b = Bbr::new(Config::default());
        let mut w = window(10.0);
        let round = |b: &mut Bbr, w: &mut Window, i: u64, bw: f64| {
            let mut a = ack(millis(40 * i), 1, 1000);
            a.rtt = Some(RTPROP);
            a.rate = Some(rate(bw));
            a.round_start = true;
            b.on_ack(w, &a);
        };
        round(&mut b, &mut w, 1, 100_000.0);
        round(&mut b, &mut w, 2, 200_000.0); // doubled: growth
        round(&mut b, &mut w, 3, 249_000.0); // +24.5 %: not enough
        round(&mut b, &mut w, 4, 249_900.0);
        assert_eq!(b.mode(), Mode::Startup, "two rounds without growth are not enough");
        // An ACK that is not a round start does not count.
        let mut a = ack(millis(170), 1, 1000);
        a.rate = Some(rate(240_000.0));
        b.on_ack(&mut w, &a);
        assert_eq!(b.mode(), Mode::Startup);
        round(&mut b, &mut w, 5, 240_000.0);
        assert!(b.full_bw_reached());
        assert_eq!(b.mode(), Mode::Drain, "1000 segments in flight is far above one BDP");
    }

    #[test]
    fn growth_of_25_percent_restarts_the_count() {
        let mut b = Bbr::new(Config::default());
        let mut w = window(10.0);
        for (i, bw) in [100.0, 100.0, 100.0, 125.0, 125.0, 125.0].into_iter().enumerate() {
            let mut a = ack(millis(40 * (i as u64 + 1)), 1, 1000);
            a.rate = Some(rate(bw * 1000.0));
            a.round_start = true;
            b.on_ack(&mut w, &a);
        }
        assert_eq!(b.mode(), Mode::Startup, "the fourth round grew by exactly 25 %");
    }

    #[test]
    fn drain_ends_when_the_flight_is_at_most_one_bdp() {
        let mut b = probe_bw(2);
        b.mode = Mode::Drain;
        let mut w = window(150.0);
        // BDP = 1.25e6 B/s x 40 ms = 50 segments, + 3 quanta = 53, even: 54.
        b.on_ack(&mut w, &ack(millis(100), 1, 55));
        assert_eq!(b.mode(), Mode::Drain);
        b.on_ack(&mut w, &ack(millis(101), 1, 54));
        assert_eq!(b.mode(), Mode::ProbeBw);
        assert_ne!(b.cycle_index(), 1, "PROBE_BW never starts in the 3/4 phase");
    }

    #[test]
    fn probe_bw_starts_in_any_phase_but_the_draining_one_from_the_seed() {
        let mut seen = [0; 8];
        for seed in 0..700 {
            let mut b = probe_bw(2);
            b.seed(seed);
            b.enter_probe_bw(0);
            seen[b.cycle_index()] += 1;
        }
        assert_eq!(seen[1], 0);
        // Seven phases, 100 expected each.
        assert!(seen.iter().enumerate().all(|(i, &n)| i == 1 || (60..140).contains(&n)), "{seen:?}");
        let draw = |seed| {
            let mut b = probe_bw(2);
            b.seed(seed);
            b.enter_probe_bw(0);
            b.cycle_index()
        };
        assert_eq!(draw(42), draw(42), "same seed, same phase");
    }

    #[test]
    fn the_probing_phase_lasts_one_rtprop_and_until_the_flight_reaches_five_quarters_bdp_or_a_loss() {
        // 5/4 target: ceil(50 x 1.25) = 63, + 3 = 66 (even), + 2 in this phase = 68.
        let mut b = probe_bw(0);
        let mut w = window(120.0);
        b.on_ack(&mut w, &ack(millis(20), 1, 100));
        assert_eq!(b.cycle_index(), 0, "not yet one RTprop");
        b.on_ack(&mut w, &ack(millis(41), 1, 66));
        assert_eq!(b.cycle_index(), 0, "one RTprop, but the flight before this ACK (67) is below 68");
        b.on_ack(&mut w, &ack(millis(42), 1, 67));
        assert_eq!(b.cycle_index(), 1);
        assert_eq!(b.pacing_gain(), 0.75);

        let mut b = probe_bw(0);
        b.on_ack(&mut w, &ack(millis(41), 1, 10));
        assert_eq!(b.cycle_index(), 0);
        let _ = b.on_congestion(&w, &event(EventKind::FastRetransmit, 100.0));
        b.on_ack(&mut w, &ack(millis(42), 1, 10));
        assert_eq!(b.cycle_index(), 1, "a loss ends the probe after one RTprop");
    }

    #[test]
    fn the_draining_phase_ends_early_at_one_bdp_and_the_others_after_one_rtprop() {
        // The 1.0 target: 50 + 3 = 53, even: 54.
        let mut b = probe_bw(1);
        let mut w = window(120.0);
        b.on_ack(&mut w, &ack(millis(10), 1, 54));
        assert_eq!(b.cycle_index(), 1, "flight before the ACK 55 > 54");
        b.on_ack(&mut w, &ack(millis(11), 1, 53));
        assert_eq!(b.cycle_index(), 2, "flight before the ACK 54: drained early");
        let stamp = millis(11);
        b.on_ack(&mut w, &ack(stamp + RTPROP, 1, 10));
        assert_eq!(b.cycle_index(), 2, "a phase of 1.0 lasts more than one RTprop, whatever the flight");
        b.on_ack(&mut w, &ack(stamp + RTPROP + 1, 1, 200));
        assert_eq!(b.cycle_index(), 3);

        let mut b = probe_bw(1);
        b.on_ack(&mut w, &ack(millis(41), 1, 200));
        assert_eq!(b.cycle_index(), 2, "the draining phase also ends after one RTprop");
        // 7 -> 0: the cycle wraps.
        let mut b = probe_bw(7);
        b.on_ack(&mut w, &ack(millis(41), 1, 10));
        assert_eq!((b.cycle_index(), b.pacing_gain()), (0, 1.25));
    }

    #[test]
    fn pacing_and_cwnd_follow_the_model() {
        let mut b = probe_bw(2);
        let mut w = window(10.0);
        b.on_ack(&mut w, &ack(millis(1), 1, 10));
        let pacing = b.pacing_rate(&w, RTPROP).unwrap_or(0.0);
        assert!((pacing - BW * 0.99).abs() < 1e-6, "{pacing}");
        // cwnd grows by the delivered segments toward 2 BDP + 3 = 103, even: 104.
        assert_eq!(w.cwnd, 11.0);
        let mut w = window(500.0);
        b.on_ack(&mut w, &ack(millis(2), 1, 10));
        assert_eq!(w.cwnd, 104.0, "above the target once the pipe was full: snap down");
        let mut log = cclab_wire::metrics::MetricLog::default();
        b.metrics(&mut Metrics::new(&mut log));
        assert!(log.0.contains(&("btl_bw".to_string(), BW * 8.0)), "{:?}", log.0);
        assert!(log.0.contains(&("mode".to_string(), 2.0)));
    }

    #[test]
    fn before_a_bandwidth_sample_the_rate_comes_from_the_initial_window_and_srtt() {
        let mut b = Bbr::new(Config::default());
        let mut w = window(4.0);
        assert_eq!(b.pacing_rate(&w, 0), None, "the segment size is not known before the first ACK");
        let mut a = ack(millis(40), 1, 3);
        a.rtt = Some(RTPROP);
        b.on_ack(&mut w, &a);
        // Linux: high_gain x cwnd x mss / srtt, less the margin; cwnd was 4 at the ACK.
        let expected = 2.885 * 4.0 * 1000.0 / 0.04 * 0.99;
        let pacing = b.pacing_rate(&w, RTPROP).unwrap_or(0.0);
        assert!((pacing - expected).abs() < 1e-6, "{pacing} {expected}");
    }

    #[test]
    fn btl_bw_forgets_a_peak_after_ten_rounds_and_ignores_low_app_limited_samples() {
        let mut b = probe_bw(2);
        let mut w = window(100.0);
        let mut a = ack(millis(1), 1, 50);
        a.rate = Some(rate(2.0 * BW));
        a.round_start = true;
        b.on_ack(&mut w, &a); // round 1
        let mut low = rate(BW / 2.0);
        low.app_limited = true;
        for r in 2..=11 {
            let mut a = ack(millis(r), 1, 50);
            a.rate = Some(if r == 2 { low } else { rate(BW) });
            a.round_start = true;
            b.on_ack(&mut w, &a);
            assert_eq!(b.btl_bw(), 2.0 * BW, "round {r}: the peak of round 1 is within 10 rounds");
        }
        let mut a = ack(millis(12), 1, 50);
        a.rate = Some(rate(BW));
        a.round_start = true;
        b.on_ack(&mut w, &a);
        assert_eq!(b.btl_bw(), BW, "round 12: the peak has left the window");
        // An app-limited sample above the max still enters.
        let mut high = rate(3.0 * BW);
        high.app_limited = true;
        let mut a = ack(millis(13), 1, 50);
        a.rate = Some(high);
        b.on_ack(&mut w, &a);
        assert_eq!(b.btl_bw(), 3.0 * BW);
    }

    #[test]
    fn rtprop_keeps_its_minimum_for_ten_seconds_then_takes_the_next_sample() {
        let mut b = Bbr::new(Config::default());
        let mut w = window(10.0);
        let mut sample = |b: &mut Bbr, now: Time, rtt_ms: u64| {
            let mut a = ack(now, 1, 10);
            a.rtt = Some(millis(rtt_ms));
            b.on_ack(&mut w, &a);
            b.rtprop()
        };
        assert_eq!(sample(&mut b, 0, 40), Some(millis(40)));
        assert_eq!(sample(&mut b, secs(5), 50), Some(millis(40)));
        assert_eq!(sample(&mut b, secs(10), 50), Some(millis(40)), "exactly 10 s old: not expired");
        assert_eq!(
            sample(&mut b, secs(10) + 1, 50),
            Some(millis(50)),
            "expired: the next sample replaces it"
        );
    }

    #[test]
    fn an_equal_rtt_renews_rtprop_only_under_linux_s_rule() {
        for (on_equal, expect_probe_rtt) in [(true, false), (false, true)] {
            let mut b = probe_bw(2);
            b.config.rtprop_refresh_on_equal = on_equal;
            let mut w = window(100.0);
            for t in [secs(5), secs(10) + 1] {
                let mut a = ack(t, 1, 50);
                a.rtt = Some(RTPROP);
                b.on_ack(&mut w, &a);
            }
            assert_eq!(b.mode() == Mode::ProbeRtt, expect_probe_rtt, "refresh on equal: {on_equal}");
        }
    }

    #[test]
    fn probe_rtt_after_ten_seconds_holds_four_segments_for_200_ms_and_a_round_then_restores() {
        let mut b = probe_bw(2);
        let mut w = window(100.0);
        let at = |b: &mut Bbr, w: &mut Window, now: Time, inflight: u64, round_start: bool| {
            let mut a = ack(now, 1, inflight);
            a.rtt = Some(RTPROP + millis(5));
            a.round_start = round_start;
            b.on_ack(w, &a);
            b.mode()
        };
        assert_eq!(at(&mut b, &mut w, secs(10), 50, false), Mode::ProbeBw);
        assert_eq!(w.cwnd, 101.0);
        let entry = secs(10) + 1;
        assert_eq!(at(&mut b, &mut w, entry, 50, false), Mode::ProbeRtt);
        assert_eq!(w.cwnd, MIN_CWND);
        assert_eq!(b.pacing_gain(), 1.0);
        // The flight reaches 4 at 10.05 s: 200 ms from there, and a round start.
        let low = secs(10) + millis(50);
        at(&mut b, &mut w, low, 4, false);
        assert_eq!(at(&mut b, &mut w, low + millis(100), 4, true), Mode::ProbeRtt);
        assert_eq!(at(&mut b, &mut w, low + millis(200), 4, false), Mode::ProbeRtt, "200 ms not yet passed");
        assert_eq!(w.cwnd, MIN_CWND);
        let exit = low + millis(200) + 1;
        assert_eq!(at(&mut b, &mut w, exit, 4, false), Mode::ProbeBw);
        assert_eq!(w.cwnd, 102.0, "cwnd before PROBE_RTT (101) restored, then grown by one segment");
        // The next PROBE_RTT comes 10 s after the exit (RTprop's new timestamp),
        // given RTT samples above RTprop (45 ms, from the entry) since.
        let later = |b: &mut Bbr, w: &mut Window, now: Time| {
            let mut a = ack(now, 1, 50);
            a.rtt = Some(millis(50));
            b.on_ack(w, &a);
            b.mode()
        };
        assert_eq!(later(&mut b, &mut w, exit + secs(10)), Mode::ProbeBw);
        assert_eq!(later(&mut b, &mut w, exit + secs(10) + 1), Mode::ProbeRtt);
    }

    #[test]
    fn probe_rtt_waits_for_a_round_start_and_returns_to_startup_if_the_pipe_was_never_full() {
        let mut b = probe_bw(2);
        b.full_bw_reached = false;
        let mut w = window(100.0);
        let at = |b: &mut Bbr, w: &mut Window, now: Time| {
            b.on_ack(w, &ack(now, 1, 4));
            b.mode()
        };
        assert_eq!(at(&mut b, &mut w, secs(10) + 1), Mode::ProbeRtt);
        assert_eq!(at(&mut b, &mut w, secs(11)), Mode::ProbeRtt, "200 ms passed, no round yet");
        let mut a = ack(secs(11) + 1, 1, 4);
        a.round_start = true;
        b.on_ack(&mut w, &a);
        assert_eq!(b.mode(), Mode::Startup);
    }

    #[test]
    fn recovery_conserves_packets_for_a_round_then_grows_and_restores_cwnd_on_exit() {
        let mut b = probe_bw(2);
        let mut w = window(100.0);
        assert!(b.owns_cwnd_in_recovery());
        assert!(b.uses_delivery_rate(), "rounds and rate samples drive every mode");
        assert_eq!(b.on_congestion(&w, &event(EventKind::FastRetransmit, 100.0)), Response::NoReduction);
        let recovery = |now: Time, delivered: u64, pipe: u64| {
            let mut a = ack(now, delivered, pipe);
            a.phase = AckPhase::Recovery;
            a
        };
        // Entry: cwnd = pipe + delivered.
        b.on_ack(&mut w, &recovery(millis(1), 1, 60));
        assert_eq!(w.cwnd, 61.0);
        // Conservation: never below pipe + delivered, never cut further.
        b.on_ack(&mut w, &recovery(millis(2), 2, 50));
        assert_eq!(w.cwnd, 61.0);
        b.on_ack(&mut w, &recovery(millis(3), 3, 65));
        assert_eq!(w.cwnd, 68.0);
        // The next round: growth by the delivered segments toward the target (104).
        let mut a = recovery(millis(50), 2, 40);
        a.round_start = true;
        b.on_ack(&mut w, &a);
        assert_eq!(w.cwnd, 70.0);
        b.on_recovery_exit(&mut w, millis(60));
        assert_eq!(w.cwnd, 100.0, "the cwnd from before the loss");
    }

    #[test]
    fn a_timeout_leaves_one_segment_and_a_mark_changes_nothing() {
        let mut b = probe_bw(2);
        let w = window(100.0);
        assert_eq!(
            b.on_congestion(&w, &event(EventKind::Timeout, 100.0)),
            Response::Reduce { ssthresh: 1e9, cwnd: 1.0 }
        );
        assert_eq!(b.on_congestion(&w, &event(EventKind::Mark, 100.0)), Response::NoReduction);
        // Then cwnd regrows by the delivered segments.
        let mut w = window(1.0);
        b.on_ack(&mut w, &ack(millis(1), 1, 0));
        assert_eq!(w.cwnd, MIN_CWND, "the floor of 4 segments");
        b.on_ack(&mut w, &ack(millis(2), 2, 4));
        assert_eq!(w.cwnd, 6.0);
    }
}
