//! BBRv3: draft-ietf-ccwg-bbr-06 ("BBR Congestion Control", Cardwell, Swett,
//! Beshay; the repository ietf-wg-ccwg/draft-ietf-ccwg-bbr at c82a6a17, the
//! newest version found; -02 read for comparison) and Linux
//! `net/ipv4/tcp_bbr.c` of google/bbr branch v3 (`BBR_VERSION 3`, commit
//! 001a430b3ddbbc6d9173061a74d8b580c757b91b), with its rate sampling in
//! `net/ipv4/tcp_rate.c` (0b496e28). Section numbers below are the draft's.
//!
//! The model (§2.9, §5.5): `max_bw`, the windowed maximum of the delivery-rate
//! samples over the current and the previous PROBE_BW cycle (a
//! [`WindowedFilter`] whose time is the cycle count, §5.5.3-5.5.6); `min_rtt`,
//! the minimum RTT over 10 s, fed by the minimum over the last 5 s
//! (`probe_rtt_min`, §5.3.4.3); the long-term bound `inflight_hi` (the draft's
//! `inflight_longterm`), set where a bandwidth probe saw excess loss or marks;
//! and the short-term bounds `bw_lo` and `inflight_lo` (`bw_shortterm`,
//! `inflight_shortterm`), cut once per round trip with loss outside probing.
//! Pacing rate = pacing_gain x min(max_bw, bw_lo) x (1 - 1 %); cwnd grows by
//! the segments each ACK delivers toward cwnd_gain x BDP (at least 4
//! segments, the quantisation budget of a one-segment send quantum, + 2 in
//! PROBE_UP, §5.6.4.2) and is capped by the bounds of the state (§5.6.4.7).
//!
//! States and gains (pacing, cwnd), §5.6.1:
//! - STARTUP (2.77 = 4 ln 2, 2). Ends when three round starts in a row bring a
//!   delivery-rate sample, not application-limited, under 1.25 x the last one
//!   that grew by 25 % (§5.3.1.2); or, in recovery, at the end of a loss round
//!   (one round trip from its first loss) with at least 6 ACKs that marked
//!   losses and a sample whose loss rate exceeds 2 % (§5.3.1.3; Linux
//!   `bbr_check_loss_too_high_in_startup`), which sets inflight_hi to
//!   max(BDP, the most delivered in a sample over the last round); or after
//!   two rounds with at least half the delivered segments marked (Linux
//!   `bbr_check_ecn_too_high_in_startup`).
//! - DRAIN (0.5, 2), until the flight is at most one BDP, or for at most 3
//!   rounds (§5.3.2).
//! - PROBE_BW (cwnd gain 2): DOWN (0.9) until the flight is at most one BDP
//!   and below (1 - 0.15) x inflight_hi; CRUISE (1.0) with cwnd at most
//!   0.85 x inflight_hi; REFILL (1.0) for one round, the short-term bounds
//!   forgotten; UP (1.25, cwnd gain 2.25) until the rate plateaus (three
//!   rounds without 25 % growth while inflight_hi does not hold it back), a
//!   sample shows excess loss or marks, or, after a probe that saw excess,
//!   the flight reaches inflight_hi (§5.3.3.6-5.3.3.7). From DOWN or CRUISE
//!   the next probe (REFILL) starts after a wait drawn uniformly in 2-3 s, or
//!   after min(63, target inflight in segments) rounds, counted from a draw of
//!   0 or 1, whichever comes first (§5.3.3.8). inflight_hi grows in UP while
//!   cwnd is held at it: by 1, 2, 4, ... segments per round (§5.3.3.5).
//! - PROBE_RTT (1.0, 0.5): entered when no RTT below `probe_rtt_min` came for
//!   5 s; cwnd at most max(0.5 BDP, 4); once the flight is down to that, it
//!   lasts 200 ms and at least a round, then CRUISE (via DOWN, which restarts
//!   the probe clock) with the short-term bounds forgotten, or STARTUP if the
//!   pipe was never filled (§5.3.4).
//!
//! Congestion signals (§5.5.10, Linux `bbr_is_inflight_too_high`): a sample is
//! "too high" if the segments marked lost since its segment was sent exceed
//! 2 % of the flight that segment joined (`RateSample::lost` over
//! `RateSample::tx_in_flight`, both counted by the sender), or (ECN, Linux
//! only) if more than half of what the last round delivered was marked. Too
//! high in a probe (REFILL's samples and later): inflight_hi = max(the
//! sample's tx_in_flight, 0.7 x target inflight), and UP ends. Outside
//! probing, at the end of each round with a loss: bw_lo = max(bw_latest,
//! 0.7 x bw_lo), inflight_lo = max(inflight_latest, 0.7 x inflight_lo)
//! (started from max_bw and cwnd), where the latest values are the round's
//! largest rate and delivered volume; with marks, inflight_lo x= 1 - alpha/3,
//! alpha the per-round EWMA (gain 1/16) of the marked fraction (v3's
//! `ecn_factor`). In DOWN or CRUISE of a cycle that saw marks and no loss,
//! the next probe starts at once, its first round growing inflight_hi by
//! half of it (Linux `ecn_reprobe_gain`).
//!
//! The ECN input is read through one function, [`ce_marked_segments`]: with
//! AccECN (`ecn = "accecn"`) the CE-marked bytes the receiver counted, in
//! segments; with classic ECN all the segments an echoing ACK delivered. As in
//! Linux, marks count only where min_rtt is at most `ecn_max_rtt` (5 ms; Linux
//! also asks for a route that declares low-threshold ECN).
//!
//! Loss recovery (§5.6.4.4): entering fast recovery or a timeout saves cwnd;
//! fast recovery keeps cwnd (the model's loss response applies), a timeout
//! cuts it to one segment, and leaving either restores the saved cwnd, then
//! capped by the model. Where the draft and Linux differ, this follows the
//! draft: DRAIN's gain 0.5 and DOWN's 0.9 (Linux 1/2.885 and 0.91, both
//! parameters), DRAIN's 3-round limit (not in Linux), the full-bandwidth test
//! at round starts only (Linux also resets the count on any ACK whose sample
//! grew 25 %), and a 0.5 cwnd gain in PROBE_RTT (Linux: gain 1 and the same
//! cap). ECN follows Linux (the draft leaves it unspecified, §3.7).
//!
//! Where this departs from the sources, and why:
//! - Packet conservation in the first round of recovery, which BBR v1 here
//!   does, is in neither the draft (-02 to -06) nor Linux v3 (BBRv2's drafts
//!   had it): off by default, `packet_conservation = true` turns it on (cwnd =
//!   pipe + delivered on the first ACK of recovery, never less for that round,
//!   then the model's caps).
//! - Linux also answers each lost segment as it is marked
//!   (`bbr_skb_marked_lost`, the draft's HandleLostPacket, which estimates the
//!   flight at which the loss rate crossed 2 % inside the lost segment); the
//!   congestion-control contract has no per-segment loss hook, so the check
//!   runs on each ACK's sample only, as Linux also does, and inflight_hi is
//!   the sample's tx_in_flight rather than the interpolated value.
//! - Losses are the sender's marks ([`AckSample::newly_lost`]): RFC 6675
//!   IsLost on the scoreboard (a segment with 3 SACKed segments above it),
//!   fast retransmits and partial ACKs, and everything outstanding at a
//!   timeout; a lost retransmission is not marked again (Linux's RACK would).
//! - The ECN "too high" test is per round (the marked fraction of the last
//!   round, at its end), not per rate sample (Linux compares
//!   `rs->delivered_ce` with `rs->delivered`): the sample carries no CE count.
//! - Round trips are counted here from the rate samples (a sample whose
//!   segment was sent after the round's start ends it), so that DOWN, REFILL,
//!   UP and PROBE_RTT can restart the count as the draft's StartRound does
//!   (the sender's [`AckSample::round_start`] cannot); the loss round restarts
//!   at the first loss as Linux's `bbr_note_loss` does. Delivered volumes are
//!   the sampler's bytes; between samples the count adds whole segments.
//! - C.inflight is [`AckSample::packets_in_flight`], Linux's count: not
//!   SACKed, not marked lost, plus retransmissions not yet delivered; a
//!   retransmission lost again counts until the segment is sent again or
//!   acknowledged, where Linux's RACK would mark it lost. The rate sample's
//!   `tx_in_flight` is that count when its segment left, the segment included.
//! - Not modelled: ACK-aggregation allowance (`extra_acked`), idle restart,
//!   undo after spurious recovery (the sender does not detect it), TLP, the
//!   EDT correction of the flight, PLB, the fast path. Values the kernel
//!   keeps in integers (segments, 1/256 gains) are reals here.
//! - is_cwnd_limited (C.is_cwnd_limited) is judged at ACKs: the flight before
//!   an ACK reached cwnd in this round or the last.
//! - Without SACK (`recovery` tahoe, reno or newreno) the draft's two rules
//!   hold: any loss in a sample is too high (§5.5.10.2) and a loss found in
//!   fast recovery ends STARTUP (§5.3.1.3); the sender says which at build.
//! - Known, not yet fixed (an independent review): samples are marked
//!   application-limited while they arrive in PROBE_RTT, where the draft and
//!   Linux mark those of segments sent in it, so the round after PROBE_RTT
//!   may advance max_bw's cycle count; segments sent at the same instant
//!   give the first one's sample, not the highest-numbered (§4.1.2.3
//!   IsNewestPacket), understating tx_in_flight in a burst; the flight before
//!   an ACK is rebuilt as inflight + delivered + newly lost, which after a
//!   timeout overstates it (Linux keeps `prior_in_flight`); the quantisation
//!   budget's floor is 4 segments (the draft and Linux: 6), a timeout sets
//!   cwnd to 1 (the draft: inflight + 1), and STARTUP's loss exit counts ACKs
//!   that marked losses (Linux), not discontiguous lost ranges (the draft).

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

const fn number(
    name: &'static str,
    min: f64,
    max: f64,
    default: &'static str,
    meaning: &'static str,
) -> Parameter {
    Parameter {
        name,
        ty: ParamType::Number,
        unit: "",
        min,
        max,
        default: ParamDefault::Value(default),
        meaning,
    }
}

const fn integer(
    name: &'static str,
    unit: &'static str,
    max: f64,
    default: &'static str,
    meaning: &'static str,
) -> Parameter {
    Parameter {
        name,
        ty: ParamType::Integer,
        unit,
        min: 0.0,
        max,
        default: ParamDefault::Value(default),
        meaning,
    }
}

const fn duration(
    name: &'static str,
    min: f64,
    max: f64,
    default: &'static str,
    meaning: &'static str,
) -> Parameter {
    Parameter {
        name,
        ty: ParamType::Duration,
        unit: "",
        min,
        max,
        default: ParamDefault::Value(default),
        meaning,
    }
}

pub const DESCRIPTOR: CcDescriptor = Descriptor {
    name: "bbr3",
    role: Role::CongestionControl,
    summary: "BBRv3: BBR's model with loss and ECN bounds (inflight_hi, bw_lo, inflight_lo); PROBE_BW's DOWN, CRUISE, REFILL, UP; PROBE_RTT every 5 s at half a BDP",
    source: "draft-ietf-ccwg-bbr-06 (ietf-wg-ccwg/draft-ietf-ccwg-bbr c82a6a17); \
             Linux net/ipv4/tcp_bbr.c, google/bbr v3 (001a430b)",
    parameters: &[
        number("startup_pacing_gain", 1.0, 10.0, "2.77", "STARTUP's pacing gain, 4 ln 2 (draft BBR.StartupPacingGain)"),
        number("startup_cwnd_gain", 1.0, 10.0, "2", "STARTUP's and DRAIN's cwnd gain (draft BBR.DefaultCwndGain)"),
        number("drain_pacing_gain", 0.1, 1.0, "0.5", "DRAIN's pacing gain (draft BBR.DrainPacingGain; Linux 1/2.885)"),
        number("cwnd_gain", 1.0, 10.0, "2", "PROBE_BW's cwnd gain but in UP (draft BBR.DefaultCwndGain)"),
        number("up_pacing_gain", 1.0, 4.0, "1.25", "PROBE_BW UP's pacing gain"),
        number("up_cwnd_gain", 1.0, 10.0, "2.25", "PROBE_BW UP's cwnd gain (Linux cwnd_gain + bw_probe_cwnd_gain/4)"),
        number("down_pacing_gain", 0.1, 1.0, "0.9", "PROBE_BW DOWN's pacing gain (draft 0.90; Linux 0.91)"),
        number("loss_thresh", 0.0, 1.0, "0.02", "loss rate of a sample (lost since its segment left / the flight it joined) above which the flight was too high (BBR.LossThresh)"),
        number("beta", 0.0, 1.0, "0.7", "fraction of bw_lo and inflight_lo kept per round with loss, and of the target inflight that inflight_hi keeps at least after excess loss (BBR.Beta)"),
        number("headroom", 0.0, 0.5, "0.15", "fraction of inflight_hi left free in CRUISE and PROBE_RTT (BBR.Headroom)"),
        number("ecn_thresh", 0.0, 1.0, "0.5", "marked fraction of a round's deliveries above which the flight was too high; 0: marks never are (Linux bbr_ecn_thresh)"),
        number("ecn_factor", 0.0, 1.0, "0.333333", "a round with marks cuts inflight_lo to (1 - ecn_factor x alpha) of it; 0: no ECN response (Linux bbr_ecn_factor)"),
        number("ecn_alpha_gain", 0.0, 1.0, "0.0625", "EWMA gain of alpha, the marked fraction per round (Linux bbr_ecn_alpha_gain)"),
        number("ecn_alpha_init", 0.0, 1.0, "1", "alpha before the first round (Linux bbr_ecn_alpha_init)"),
        duration("ecn_max_rtt", 0.0, 10.0, "5ms", "marks count only while min_rtt is at most this; 0: at any RTT (Linux bbr_ecn_max_rtt_us)"),
        number("ecn_reprobe_gain", 0.0, 1.0, "0.5", "after a cycle with marks and no loss, probe again at once, first growing inflight_hi by this fraction of it; 0: never (Linux bbr_ecn_reprobe_gain)"),
        number("full_bw_growth", 1.0, 4.0, "1.25", "rate growth per round that keeps STARTUP (and an UP probe) going"),
        integer("full_bw_rounds", "round trips", 100.0, "3", "rounds without that growth that fill the pipe"),
        integer("full_loss_events", "ACKs", 15.0, "6", "ACKs marking losses in a recovery round, with a loss rate above loss_thresh, that end STARTUP; 0: never (draft BBRStartupFullLossCnt)"),
        integer("full_ecn_rounds", "round trips", 100.0, "2", "rounds with a marked fraction of at least ecn_thresh that end STARTUP; 0: never (Linux bbr_full_ecn_cnt)"),
        integer("drain_max_rounds", "round trips", 1000.0, "3", "DRAIN ends after this many rounds whatever the flight; 0: only at one BDP (Linux)"),
        integer("bw_filter_cycles", "PROBE_BW cycles", 100.0, "2", "max_bw's window: the current cycle and the previous (BBR.MaxBwFilterLen)"),
        duration("probe_rtt_interval", 0.001, 3600.0, "5s", "PROBE_RTT comes when no RTT sample went below the minimum of this window (BBR.ProbeRTTInterval)"),
        duration("probe_rtt_duration", 0.0, 60.0, "200ms", "time PROBE_RTT holds the flight at its cwnd, and at least a round (BBR.ProbeRTTDuration)"),
        number("probe_rtt_cwnd_gain", 0.0, 1.0, "0.5", "PROBE_RTT's cwnd in BDPs, at least 4 segments (BBR.ProbeRTTCwndGain)"),
        duration("min_rtt_window", 0.001, 3600.0, "10s", "min_rtt's window (BBR.MinRTTFilterLen)"),
        duration("probe_wait_base", 0.0, 3600.0, "2s", "least wall-clock wait from DOWN to the next probe"),
        duration("probe_wait_random", 0.0, 3600.0, "1s", "a uniform draw below this is added to the wait (T_bbr = 2-3 s)"),
        integer("probe_max_rounds", "round trips", 10000.0, "63", "the Reno-coexistence wait: at most this many rounds, fewer if the target inflight is smaller (T_reno)"),
        integer("probe_random_rounds", "round trips", 100.0, "2", "the round count toward T_reno starts from a uniform draw below this (0 or 1)"),
        number("pacing_margin", 0.0, 0.5, "0.01", "pace this fraction below pacing_gain x bw (BBR.PacingMarginPercent)"),
        Parameter {
            name: "packet_conservation",
            ty: ParamType::Bool,
            unit: "",
            min: 0.0,
            max: 0.0,
            default: ParamDefault::Value("false"),
            meaning: "conserve packets in the first round of fast recovery as BBR v1 does (not in the draft or Linux v3)",
        },
    ],
    metrics: &[
        MetricDesc { name: "state", unit: "", meaning: "0 STARTUP, 1 DRAIN, 2 PROBE_BW, 3 PROBE_RTT" },
        MetricDesc { name: "phase", unit: "", meaning: "PROBE_BW's phase: 1 DOWN, 2 CRUISE, 3 REFILL, 4 UP; 0 in other states" },
        MetricDesc { name: "max_bw", unit: "bit/s", meaning: "max_bw, the max delivery rate (payload) over 2 cycles" },
        MetricDesc { name: "bw_lo", unit: "bit/s", meaning: "bw_lo, the short-term rate bound; 0 while unset" },
        MetricDesc { name: "inflight_hi", unit: "segments", meaning: "inflight_hi, the long-term volume bound; 0 while unset" },
        MetricDesc { name: "inflight_lo", unit: "segments", meaning: "inflight_lo, the short-term volume bound; 0 while unset" },
        MetricDesc { name: "min_rtt", unit: "s", meaning: "min_rtt (0 before the first sample)" },
        MetricDesc { name: "pacing_gain", unit: "", meaning: "the current pacing gain" },
        MetricDesc { name: "ecn_alpha", unit: "", meaning: "alpha, the EWMA of the marked fraction per round" },
        MetricDesc { name: "loss_rate", unit: "", meaning: "segments marked lost / (delivered + marked lost) in the last round" },
    ],
    build: CcBuilder { build, paces_itself: true, ecn: EcnUse::Optional },
};

fn build(p: &Params) -> Result<Box<dyn CongestionControl>, ParamError> {
    Ok(Box::new(Bbr3::new(config(p)?)))
}

fn config(p: &Params) -> Result<Config, ParamError> {
    let duration = |name: &'static str| {
        p.duration(name)?
            .ok_or(ParamError { name: name.into(), problem: "missing (not resolved by the validator)" })
    };
    let whole = |name: &'static str| p.number(name).map(|n| n as u64);
    Ok(Config {
        startup_pacing_gain: p.number("startup_pacing_gain")?,
        startup_cwnd_gain: p.number("startup_cwnd_gain")?,
        drain_pacing_gain: p.number("drain_pacing_gain")?,
        cwnd_gain: p.number("cwnd_gain")?,
        up_pacing_gain: p.number("up_pacing_gain")?,
        up_cwnd_gain: p.number("up_cwnd_gain")?,
        down_pacing_gain: p.number("down_pacing_gain")?,
        loss_thresh: p.number("loss_thresh")?,
        beta: p.number("beta")?,
        headroom: p.number("headroom")?,
        ecn_thresh: p.number("ecn_thresh")?,
        ecn_factor: p.number("ecn_factor")?,
        ecn_alpha_gain: p.number("ecn_alpha_gain")?,
        ecn_alpha_init: p.number("ecn_alpha_init")?,
        ecn_max_rtt: duration("ecn_max_rtt")?,
        ecn_reprobe_gain: p.number("ecn_reprobe_gain")?,
        full_bw_growth: p.number("full_bw_growth")?,
        full_bw_rounds: whole("full_bw_rounds")?,
        full_loss_events: whole("full_loss_events")?,
        full_ecn_rounds: whole("full_ecn_rounds")?,
        drain_max_rounds: whole("drain_max_rounds")?,
        bw_filter_cycles: whole("bw_filter_cycles")?.max(1),
        probe_rtt_interval: duration("probe_rtt_interval")?,
        probe_rtt_duration: duration("probe_rtt_duration")?,
        probe_rtt_cwnd_gain: p.number("probe_rtt_cwnd_gain")?,
        min_rtt_window: duration("min_rtt_window")?,
        probe_wait_base: duration("probe_wait_base")?,
        probe_wait_random: duration("probe_wait_random")?,
        probe_max_rounds: whole("probe_max_rounds")?,
        probe_random_rounds: whole("probe_random_rounds")?.max(1),
        pacing_margin: p.number("pacing_margin")?,
        packet_conservation: p.bool("packet_conservation")?,
    })
}

/// The smallest cwnd (BBR.MinPipeCwnd, Linux `bbr_cwnd_min_target`).
pub const MIN_CWND: f64 = 4.0;
/// Segments sent as one unit: our sender sends single segments, so the
/// offload budget (3 quanta, §5.5.8.1) is 3 segments.
const SEND_QUANTUM: f64 = 1.0;
/// UP's additive growth of inflight_hi doubles per round up to 2^30 (Linux, draft).
const MAX_PROBE_UP_ROUNDS: u32 = 30;

/// The segments an ACK reports as having carried a congestion mark: with
/// AccECN the CE-marked bytes in segments (Linux's `delivered_ce`, rounded
/// to the nearest, at most what the ACK delivered); with classic ECN every
/// segment an echoing ACK delivered.
pub fn ce_marked_segments(ack: &AckSample) -> u64 {
    match ack.ce_bytes {
        Some(bytes) => ((bytes + u64::from(ack.mss) / 2) / u64::from(ack.mss.max(1))).min(ack.delivered),
        None if ack.ece => ack.delivered,
        None => 0,
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    pub startup_pacing_gain: f64,
    pub startup_cwnd_gain: f64,
    pub drain_pacing_gain: f64,
    pub cwnd_gain: f64,
    pub up_pacing_gain: f64,
    pub up_cwnd_gain: f64,
    pub down_pacing_gain: f64,
    pub loss_thresh: f64,
    pub beta: f64,
    pub headroom: f64,
    pub ecn_thresh: f64,
    pub ecn_factor: f64,
    pub ecn_alpha_gain: f64,
    pub ecn_alpha_init: f64,
    pub ecn_max_rtt: Time,
    pub ecn_reprobe_gain: f64,
    pub full_bw_growth: f64,
    pub full_bw_rounds: u64,
    pub full_loss_events: u64,
    pub full_ecn_rounds: u64,
    pub drain_max_rounds: u64,
    pub bw_filter_cycles: u64,
    pub probe_rtt_interval: Time,
    pub probe_rtt_duration: Time,
    pub probe_rtt_cwnd_gain: f64,
    pub min_rtt_window: Time,
    pub probe_wait_base: Time,
    pub probe_wait_random: Time,
    pub probe_max_rounds: u64,
    pub probe_random_rounds: u64,
    pub pacing_margin: f64,
    pub packet_conservation: bool,
}

impl Default for Config {
    /// The draft's constants (and Linux's for ECN).
    fn default() -> Self {
        Self {
            startup_pacing_gain: 2.77,
            startup_cwnd_gain: 2.0,
            drain_pacing_gain: 0.5,
            cwnd_gain: 2.0,
            up_pacing_gain: 1.25,
            up_cwnd_gain: 2.25,
            down_pacing_gain: 0.9,
            loss_thresh: 0.02,
            beta: 0.7,
            headroom: 0.15,
            ecn_thresh: 0.5,
            ecn_factor: 0.333333,
            ecn_alpha_gain: 0.0625,
            ecn_alpha_init: 1.0,
            ecn_max_rtt: millis(5),
            ecn_reprobe_gain: 0.5,
            full_bw_growth: 1.25,
            full_bw_rounds: 3,
            full_loss_events: 6,
            full_ecn_rounds: 2,
            drain_max_rounds: 3,
            bw_filter_cycles: 2,
            probe_rtt_interval: millis(5_000),
            probe_rtt_duration: millis(200),
            probe_rtt_cwnd_gain: 0.5,
            min_rtt_window: millis(10_000),
            probe_wait_base: millis(2_000),
            probe_wait_random: millis(1_000),
            probe_max_rounds: 63,
            probe_random_rounds: 2,
            pacing_margin: 0.01,
            packet_conservation: false,
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

/// PROBE_BW's phases, in cycle order (the `phase` metric's numbers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Down = 1,
    Cruise = 2,
    Refill = 3,
    Up = 4,
}

/// What the ACKs arriving now say about bandwidth probing (draft BBR.ack_phase).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Acks {
    Init,
    Refilling,
    ProbeStarting,
    ProbeFeedback,
    ProbeStopping,
}

/// Packet conservation's progress through a fast recovery (only with `packet_conservation`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Conservation {
    Off,
    /// A loss was detected; the next ACK in recovery starts conservation.
    Pending,
    /// The first round of recovery.
    Round,
}

/// The parts of a delivery-rate sample the model reads, in its units.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Sample {
    /// Bytes per second.
    bw: f64,
    /// Segments delivered over the sample.
    delivered: f64,
    /// Bytes delivered before the sample's segment was sent.
    prior_delivered: u64,
    lost: f64,
    tx_in_flight: f64,
    app_limited: bool,
}

#[derive(Debug)]
pub struct Bbr3 {
    config: Config,
    mode: Mode,
    phase: Phase,
    acks: Acks,
    /// Bytes per second, over PROBE_BW cycles.
    max_bw: WindowedFilter,
    cycle_count: u64,
    /// Bytes per second; infinite while unset.
    bw_lo: f64,
    /// Segments; infinite while unset.
    inflight_hi: f64,
    inflight_lo: f64,
    /// The largest rate (bytes/s) and delivered volume (segments) of a sample in the loss round.
    bw_latest: f64,
    inflight_latest: f64,
    min_rtt: Option<Time>,
    min_rtt_stamp: Time,
    probe_rtt_min: Option<Time>,
    probe_rtt_min_stamp: Time,
    probe_rtt_done_at: Option<Time>,
    probe_rtt_round_done: bool,
    /// Round trips: a sample whose segment was sent once `next_round_delivered` bytes were delivered ends one.
    round_count: u64,
    round_start: bool,
    next_round_delivered: u64,
    rounds_since_probe: u64,
    drain_start_round: u64,
    /// Bytes delivered so far (C.delivered).
    delivered_bytes: u64,
    /// Segments delivered and marked so far, and those marked at the last alpha update.
    delivered: u64,
    delivered_ce: u64,
    alpha_last_delivered: u64,
    alpha_last_delivered_ce: u64,
    ecn_alpha: f64,
    ecn_eligible: bool,
    /// The last round's marked fraction exceeded `ecn_thresh` (set on the ACK that ends it).
    ecn_too_high: bool,
    /// The receiver sends SACK blocks; without them any loss is too much
    /// (§5.5.10.2) and STARTUP ends at a loss in recovery (§5.3.1.3).
    selective_acks: bool,
    startup_ecn_rounds: u64,
    /// The loss round, which restarts at its first loss (Linux `loss_round_delivered`).
    loss_round_delivered: u64,
    loss_round_start: bool,
    loss_in_round: bool,
    ecn_in_round: bool,
    loss_in_cycle: bool,
    ecn_in_cycle: bool,
    loss_events_in_round: u64,
    /// Segments delivered and marked lost in the current round, for the `loss_rate` metric.
    round_delivered: u64,
    round_lost: u64,
    last_round_loss_rate: f64,
    full_bw: f64,
    full_bw_count: u64,
    full_bw_now: bool,
    full_bw_reached: bool,
    bw_probe_samples: bool,
    prev_probe_too_high: bool,
    stopped_risky_probe: bool,
    bw_probe_up_rounds: u32,
    /// Segments to deliver per segment of inflight_hi growth in UP; infinite outside it.
    bw_probe_up_count: f64,
    bw_probe_up_acks: f64,
    probe_wait: Time,
    cycle_stamp: Time,
    /// The flight reached cwnd in this round, in the last.
    cwnd_used: bool,
    cwnd_used_last_round: bool,
    pacing_gain: f64,
    cwnd_gain: f64,
    /// Bytes per second; 0 until the first ACK.
    pacing_rate: f64,
    has_seen_rtt: bool,
    prior_cwnd: f64,
    in_recovery: bool,
    /// After a timeout, until everything outstanding then is acknowledged (Linux's Loss state).
    in_loss: bool,
    conservation: Conservation,
    initial_cwnd: Option<f64>,
    mss: u32,
    draws: SplitMix64,
}

impl Bbr3 {
    pub fn new(config: Config) -> Self {
        Self {
            config,
            mode: Mode::Startup,
            phase: Phase::Down,
            acks: Acks::Init,
            max_bw: WindowedFilter::new(Extreme::Max, config.bw_filter_cycles.saturating_sub(1), 0, 0.0),
            cycle_count: 0,
            bw_lo: f64::INFINITY,
            inflight_hi: f64::INFINITY,
            inflight_lo: f64::INFINITY,
            bw_latest: 0.0,
            inflight_latest: 0.0,
            min_rtt: None,
            min_rtt_stamp: 0,
            probe_rtt_min: None,
            probe_rtt_min_stamp: 0,
            probe_rtt_done_at: None,
            probe_rtt_round_done: false,
            round_count: 0,
            round_start: false,
            next_round_delivered: 0,
            rounds_since_probe: 0,
            drain_start_round: 0,
            delivered_bytes: 0,
            delivered: 0,
            delivered_ce: 0,
            alpha_last_delivered: 0,
            alpha_last_delivered_ce: 0,
            ecn_alpha: config.ecn_alpha_init,
            ecn_eligible: false,
            ecn_too_high: false,
            selective_acks: true,
            startup_ecn_rounds: 0,
            // Linux starts the first loss round after the first delivery.
            loss_round_delivered: 1,
            loss_round_start: false,
            loss_in_round: false,
            ecn_in_round: false,
            loss_in_cycle: false,
            ecn_in_cycle: false,
            loss_events_in_round: 0,
            round_delivered: 0,
            round_lost: 0,
            last_round_loss_rate: 0.0,
            full_bw: 0.0,
            full_bw_count: 0,
            full_bw_now: false,
            full_bw_reached: false,
            bw_probe_samples: false,
            prev_probe_too_high: false,
            stopped_risky_probe: false,
            bw_probe_up_rounds: 0,
            bw_probe_up_count: f64::INFINITY,
            bw_probe_up_acks: 0.0,
            probe_wait: 0,
            cycle_stamp: 0,
            cwnd_used: false,
            cwnd_used_last_round: false,
            pacing_gain: config.startup_pacing_gain,
            cwnd_gain: config.startup_cwnd_gain,
            pacing_rate: 0.0,
            has_seen_rtt: false,
            prior_cwnd: 0.0,
            in_recovery: false,
            in_loss: false,
            conservation: Conservation::Off,
            initial_cwnd: None,
            mss: 0,
            draws: SplitMix64::new(0),
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// PROBE_BW's phase (meaningful in PROBE_BW only).
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// max_bw in bytes per second.
    pub fn max_bw(&self) -> f64 {
        self.max_bw.best()
    }

    /// BBR.bw: max_bw bounded by bw_lo, bytes per second.
    pub fn bw(&self) -> f64 {
        self.max_bw().min(self.bw_lo)
    }

    pub fn bw_lo(&self) -> f64 {
        self.bw_lo
    }

    pub fn inflight_hi(&self) -> f64 {
        self.inflight_hi
    }

    pub fn inflight_lo(&self) -> f64 {
        self.inflight_lo
    }

    pub fn min_rtt(&self) -> Option<Time> {
        self.min_rtt
    }

    pub fn pacing_gain(&self) -> f64 {
        self.pacing_gain
    }

    pub fn cwnd_gain(&self) -> f64 {
        self.cwnd_gain
    }

    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }

    pub fn ecn_alpha(&self) -> f64 {
        self.ecn_alpha
    }

    /// The wall-clock wait drawn for the current cycle.
    pub fn probe_wait(&self) -> Time {
        self.probe_wait
    }

    fn is_probing_bw(&self) -> bool {
        self.mode == Mode::Startup
            || (self.mode == Mode::ProbeBw && matches!(self.phase, Phase::Refill | Phase::Up))
    }

    /// BDP x `gain` in segments, rounded up (Linux `bbr_bdp`); the initial
    /// window before an RTT sample (§5.6.4.2 BDPMultiple).
    fn bdp(&self, bw: f64, gain: f64) -> f64 {
        match self.min_rtt {
            Some(rtt) if self.mss > 0 => (bw * to_secs_f64(rtt) * gain / self.mss as f64).ceil(),
            _ => self.initial_cwnd.unwrap_or(MIN_CWND),
        }
    }

    /// §5.6.4.2 QuantizationBudget: at least the offload budget and 4
    /// segments, and 2 more in UP so that small BDPs still probe.
    fn quantization_budget(&self, inflight: f64) -> f64 {
        let inflight = inflight.max(3.0 * SEND_QUANTUM).max(MIN_CWND);
        if self.mode == Mode::ProbeBw && self.phase == Phase::Up {
            inflight + 2.0
        } else {
            inflight
        }
    }

    /// §5.6.4.2 Inflight(gain) for a rate `bw`.
    fn inflight(&self, bw: f64, gain: f64) -> f64 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    /// §5.3.3.8 TargetInflight: the BDP, unless congestion cut cwnd.
    fn target_inflight(&self, cwnd: f64) -> f64 {
        self.inflight(self.bw(), 1.0).min(cwnd)
    }

    /// §5.3.3.9 InflightWithHeadroom.
    fn inflight_with_headroom(&self) -> f64 {
        if self.inflight_hi.is_infinite() {
            return f64::INFINITY;
        }
        let headroom = (self.config.headroom * self.inflight_hi).max(1.0);
        (self.inflight_hi - headroom).max(MIN_CWND)
    }

    fn probe_rtt_cwnd(&self) -> f64 {
        self.bdp(self.bw(), self.config.probe_rtt_cwnd_gain).max(MIN_CWND)
    }

    fn start_round(&mut self) {
        self.next_round_delivered = self.delivered_bytes;
    }

    /// §5.5.1 UpdateRound, from valid samples only, as Linux `bbr_update_round_start`.
    fn update_round(&mut self, sample: Option<&Sample>) {
        self.round_start = false;
        let Some(s) = sample else { return };
        if s.prior_delivered >= self.next_round_delivered {
            self.start_round();
            self.round_count += 1;
            self.rounds_since_probe += 1;
            self.round_start = true;
        }
    }

    /// The draft's NoteLoss, Linux `bbr_note_loss`: the loss round starts at its first loss.
    fn note_loss(&mut self) {
        if !self.loss_in_round {
            self.loss_round_delivered = self.delivered_bytes;
        }
        self.loss_in_round = true;
        self.loss_in_cycle = true;
    }

    /// Linux `bbr_update_ecn_alpha`, once per round; the round's marked fraction.
    fn update_ecn_alpha(&mut self) -> Option<f64> {
        let c = &self.config;
        let rtt_ok = c.ecn_max_rtt == 0 || self.min_rtt.is_some_and(|m| m <= c.ecn_max_rtt);
        if !self.ecn_eligible && c.ecn_factor > 0.0 && rtt_ok {
            self.ecn_eligible = true;
        }
        if !self.ecn_eligible {
            return None;
        }
        let delivered = self.delivered - self.alpha_last_delivered;
        let marked = self.delivered_ce - self.alpha_last_delivered_ce;
        if delivered == 0 {
            return None;
        }
        let ratio = marked as f64 / delivered as f64;
        let g = c.ecn_alpha_gain;
        self.ecn_alpha = ((1.0 - g) * self.ecn_alpha + g * ratio).min(1.0);
        self.alpha_last_delivered = self.delivered;
        self.alpha_last_delivered_ce = self.delivered_ce;
        self.check_ecn_too_high_in_startup(ratio);
        Some(ratio)
    }

    /// Linux `bbr_check_ecn_too_high_in_startup`.
    fn check_ecn_too_high_in_startup(&mut self, ratio: f64) {
        let c = &self.config;
        if self.full_bw_reached || c.full_ecn_rounds == 0 || c.ecn_thresh == 0.0 {
            return;
        }
        if ratio >= c.ecn_thresh {
            self.startup_ecn_rounds += 1;
        } else {
            self.startup_ecn_rounds = 0;
        }
        if self.startup_ecn_rounds >= c.full_ecn_rounds {
            self.handle_queue_too_high_in_startup();
        }
    }

    /// §5.3.1.3, Linux `bbr_handle_queue_too_high_in_startup`.
    fn handle_queue_too_high_in_startup(&mut self) {
        self.full_bw_reached = true;
        self.inflight_hi = self.inflight(self.max_bw(), 1.0).max(self.inflight_latest);
    }

    /// §5.5.10.2 IsInflightTooHigh (Linux `bbr_is_inflight_too_high`); marks
    /// per round. Without SACK any loss is too high: the sender then sees
    /// about one loss a round trip, and the loss rate says nothing.
    fn inflight_too_high(&self, s: &Sample) -> bool {
        let lossy = s.lost > 0.0 && s.tx_in_flight > 0.0 && s.lost > s.tx_in_flight * self.config.loss_thresh;
        lossy || (s.lost > 0.0 && !self.selective_acks) || self.ecn_too_high
    }

    /// §5.5.10.3 UpdateLatestDeliverySignals.
    fn update_latest_delivery_signals(&mut self, sample: Option<&Sample>) {
        self.loss_round_start = false;
        let Some(s) = sample else { return };
        self.bw_latest = self.bw_latest.max(s.bw);
        self.inflight_latest = self.inflight_latest.max(s.delivered);
        if s.prior_delivered >= self.loss_round_delivered {
            self.loss_round_delivered = self.delivered_bytes;
            self.loss_round_start = true;
        }
    }

    /// §5.5.10.3 AdvanceLatestDeliverySignals.
    fn advance_latest_delivery_signals(&mut self, sample: Option<&Sample>) {
        if let (true, Some(s)) = (self.loss_round_start, sample) {
            self.bw_latest = s.bw;
            self.inflight_latest = s.delivered;
        }
    }

    /// §5.5.10.3 UpdateCongestionSignals with UpdateMaxBw.
    fn update_congestion_signals(&mut self, sample: Option<&Sample>, cwnd: f64) {
        let Some(s) = sample else { return };
        if !s.app_limited || s.bw >= self.max_bw() {
            self.max_bw.update(self.cycle_count, s.bw);
        }
        if !self.loss_round_start {
            return;
        }
        self.adapt_lower_bounds(cwnd);
        self.loss_in_round = false;
        self.ecn_in_round = false;
    }

    /// Linux `bbr_adapt_lower_bounds` (the draft's AdaptLowerBoundsFromCongestion, with ECN).
    fn adapt_lower_bounds(&mut self, cwnd: f64) {
        if self.is_probing_bw() {
            return;
        }
        let mut ecn_inflight_lo = f64::INFINITY;
        if self.ecn_in_round && self.config.ecn_factor > 0.0 {
            self.init_lower_bounds(cwnd, false);
            ecn_inflight_lo = self.inflight_lo * (1.0 - self.ecn_alpha * self.config.ecn_factor);
        }
        if self.loss_in_round {
            self.init_lower_bounds(cwnd, true);
            let beta = self.config.beta;
            self.bw_lo = self.bw_latest.max(beta * self.bw_lo);
            self.inflight_lo = self.inflight_latest.max(beta * self.inflight_lo);
        }
        self.inflight_lo = self.inflight_lo.min(ecn_inflight_lo);
    }

    fn init_lower_bounds(&mut self, cwnd: f64, init_bw: bool) {
        if init_bw && self.bw_lo.is_infinite() {
            self.bw_lo = self.max_bw();
        }
        if self.inflight_lo.is_infinite() {
            self.inflight_lo = cwnd;
        }
    }

    fn reset_lower_bounds(&mut self) {
        self.bw_lo = f64::INFINITY;
        self.inflight_lo = f64::INFINITY;
    }

    fn reset_congestion_signals(&mut self) {
        self.loss_in_round = false;
        self.ecn_in_round = false;
        self.loss_in_cycle = false;
        self.ecn_in_cycle = false;
        self.bw_latest = 0.0;
        self.inflight_latest = 0.0;
    }

    fn reset_full_bw(&mut self) {
        self.full_bw = 0.0;
        self.full_bw_count = 0;
        self.full_bw_now = false;
    }

    /// §5.3.1.3 CheckStartupHighLoss, as Linux `bbr_check_loss_too_high_in_startup`.
    fn check_startup_high_loss(&mut self, sample: Option<&Sample>, ack: &AckSample) {
        if self.full_bw_reached {
            return;
        }
        if ack.newly_lost > 0 {
            self.loss_events_in_round = (self.loss_events_in_round + 1).min(15);
            // §5.3.1.3: without SACK, any loss found in fast recovery ends STARTUP.
            if !self.selective_acks && ack.phase == AckPhase::Recovery {
                self.handle_queue_too_high_in_startup();
                return;
            }
        }
        let events = self.config.full_loss_events;
        if events > 0
            && self.loss_round_start
            && ack.phase == AckPhase::Recovery
            && self.loss_events_in_round >= events
            && sample.is_some_and(|s| self.inflight_too_high(s))
        {
            self.handle_queue_too_high_in_startup();
            return;
        }
        if self.loss_round_start {
            self.loss_events_in_round = 0;
        }
    }

    /// §5.3.1.2 CheckFullBWReached: at round starts, on samples not application-limited.
    fn check_full_bw(&mut self, sample: Option<&Sample>) {
        let Some(s) = sample else { return };
        if self.full_bw_now || !self.round_start || s.app_limited {
            return;
        }
        if s.bw >= self.full_bw * self.config.full_bw_growth {
            self.reset_full_bw();
            self.full_bw = s.bw;
            return;
        }
        self.full_bw_count += 1;
        self.full_bw_now = self.full_bw_count >= self.config.full_bw_rounds;
        self.full_bw_reached |= self.full_bw_now;
    }

    /// §5.3.1.1 CheckStartupDone and §5.3.2 CheckDrainDone.
    fn check_drain(&mut self, now: Time, inflight: f64) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            self.drain_start_round = self.round_count;
            self.reset_congestion_signals();
        }
        let limit = self.config.drain_max_rounds;
        let too_long = limit > 0 && self.round_count > self.drain_start_round + limit;
        if self.mode == Mode::Drain && (inflight <= self.inflight(self.max_bw(), 1.0) || too_long) {
            self.mode = Mode::ProbeBw;
            self.start_down(now);
        }
    }

    /// §5.3.3.8 PickProbeWait.
    fn pick_probe_wait(&mut self) {
        let c = &self.config;
        let rounds = (self.draws.next_f64() * c.probe_random_rounds as f64) as u64;
        self.rounds_since_probe = rounds.min(c.probe_random_rounds.saturating_sub(1));
        self.probe_wait = c.probe_wait_base + (self.draws.next_f64() * c.probe_wait_random as f64) as Time;
    }

    fn start_down(&mut self, now: Time) {
        self.reset_congestion_signals();
        self.bw_probe_up_count = f64::INFINITY;
        self.pick_probe_wait();
        self.cycle_stamp = now;
        self.acks = Acks::ProbeStopping;
        self.start_round();
        self.phase = Phase::Down;
    }

    fn start_cruise(&mut self) {
        if self.inflight_lo.is_finite() {
            self.inflight_lo = self.inflight_lo.min(self.inflight_hi);
        }
        self.phase = Phase::Cruise;
    }

    fn start_refill(&mut self, up_rounds: u32) {
        self.reset_lower_bounds();
        self.bw_probe_up_rounds = up_rounds;
        self.bw_probe_up_acks = 0.0;
        self.stopped_risky_probe = false;
        self.acks = Acks::Refilling;
        self.start_round();
        self.phase = Phase::Refill;
    }

    fn start_up(&mut self, now: Time, cwnd: f64, sample_bw: f64) {
        self.acks = Acks::ProbeStarting;
        self.start_round();
        self.cycle_stamp = now;
        self.reset_full_bw();
        self.full_bw = sample_bw;
        self.phase = Phase::Up;
        self.raise_inflight_hi_slope(cwnd);
    }

    /// §5.3.3.9 RaiseInflightLongtermSlope: 1, 2, 4, ... segments of growth per round.
    fn raise_inflight_hi_slope(&mut self, cwnd: f64) {
        let growth = f64::from(1u32 << self.bw_probe_up_rounds);
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(MAX_PROBE_UP_ROUNDS);
        self.bw_probe_up_count = (cwnd / growth).floor().max(1.0);
    }

    /// §5.3.3.9 ProbeInflightLongtermUpward.
    fn probe_inflight_hi_upward(&mut self, cwnd: f64, delivered: f64) {
        if !self.cwnd_limited() || cwnd < self.inflight_hi {
            return;
        }
        self.bw_probe_up_acks += delivered;
        if self.bw_probe_up_acks >= self.bw_probe_up_count {
            let delta = (self.bw_probe_up_acks / self.bw_probe_up_count).floor();
            self.bw_probe_up_acks -= delta * self.bw_probe_up_count;
            self.inflight_hi += delta;
        }
        if self.round_start {
            self.raise_inflight_hi_slope(cwnd);
        }
    }

    fn cwnd_limited(&self) -> bool {
        self.cwnd_used || self.cwnd_used_last_round
    }

    /// §5.5.10.2 HandleInflightTooHigh.
    fn handle_inflight_too_high(&mut self, now: Time, cwnd: f64, s: &Sample) {
        self.prev_probe_too_high = true;
        self.bw_probe_samples = false;
        if !s.app_limited {
            self.inflight_hi = s.tx_in_flight.max(self.target_inflight(cwnd) * self.config.beta);
        }
        if self.mode == Mode::ProbeBw && self.phase == Phase::Up {
            self.start_down(now);
        }
    }

    /// §5.3.3.9 AdaptLongTermModel (Linux `bbr_adapt_upper_bounds`); true if
    /// it decided a state transition.
    fn adapt_upper_bounds(&mut self, now: Time, cwnd: f64, sample: Option<&Sample>, delivered: f64) -> bool {
        if self.acks == Acks::ProbeStarting && self.round_start {
            self.acks = Acks::ProbeFeedback;
        }
        if self.acks == Acks::ProbeStopping && self.round_start {
            self.bw_probe_samples = false;
            self.acks = Acks::Init;
            if self.mode == Mode::ProbeBw && sample.is_some_and(|s| !s.app_limited) {
                self.cycle_count += 1;
            }
            if self.mode == Mode::ProbeBw && self.stopped_risky_probe && !self.prev_probe_too_high {
                self.start_refill(0);
                return true;
            }
        }
        let Some(s) = sample else { return false };
        if self.inflight_too_high(s) {
            if self.bw_probe_samples {
                self.handle_inflight_too_high(now, cwnd, s);
            }
        } else {
            if self.inflight_hi.is_infinite() {
                return false;
            }
            // A higher flight proved safe, whatever the phase: robust to random loss.
            self.inflight_hi = self.inflight_hi.max(s.tx_in_flight);
            if self.mode == Mode::ProbeBw && self.phase == Phase::Up {
                self.probe_inflight_hi_upward(cwnd, delivered);
            }
        }
        false
    }

    /// §5.3.3.8 IsTimeToProbeBW, with Linux's ECN re-probe.
    fn check_time_to_probe_bw(&mut self, now: Time, cwnd: f64) -> bool {
        let c = &self.config;
        let open = !self.in_recovery && !self.in_loss;
        if c.ecn_reprobe_gain > 0.0 && self.ecn_eligible && self.ecn_in_cycle && !self.loss_in_cycle && open {
            let volume = self.inflight_hi * c.ecn_reprobe_gain;
            let rounds =
                if volume.is_finite() { volume.max(1.0).log2().floor() as u32 } else { MAX_PROBE_UP_ROUNDS };
            self.start_refill(rounds.min(MAX_PROBE_UP_ROUNDS));
            return true;
        }
        let waited = now > self.cycle_stamp.saturating_add(self.probe_wait);
        let reno_rounds = (c.probe_max_rounds as f64).min(self.target_inflight(cwnd));
        if waited || self.rounds_since_probe as f64 >= reno_rounds {
            self.start_refill(0);
            return true;
        }
        false
    }

    /// §5.3.3.9 IsTimeToCruise.
    fn time_to_cruise(&self, inflight: f64) -> bool {
        inflight <= self.inflight_with_headroom() && inflight <= self.inflight(self.max_bw(), 1.0)
    }

    /// §5.3.3.9 UpdateProbeBWCyclePhase; `inflight` is the flight before this ACK.
    fn update_cycle_phase(
        &mut self,
        now: Time,
        cwnd: f64,
        sample: Option<&Sample>,
        inflight: f64,
        delivered: f64,
    ) {
        if !self.full_bw_reached {
            return;
        }
        if self.adapt_upper_bounds(now, cwnd, sample, delivered) || self.mode != Mode::ProbeBw {
            return;
        }
        match self.phase {
            Phase::Cruise => {
                self.check_time_to_probe_bw(now, cwnd);
            }
            Phase::Refill => {
                if self.round_start {
                    self.bw_probe_samples = true;
                    self.start_up(now, cwnd, sample.map_or(0.0, |s| s.bw));
                }
            }
            Phase::Up => {
                let mut done = false;
                if self.prev_probe_too_high && inflight >= self.inflight_hi {
                    self.stopped_risky_probe = true;
                    done = true;
                } else if self.cwnd_limited() && cwnd >= self.inflight_hi {
                    // inflight_hi, not the path, holds the rate back: keep probing.
                    self.reset_full_bw();
                    self.full_bw = sample.map_or(0.0, |s| s.bw);
                } else if self.full_bw_now {
                    done = true;
                }
                if done {
                    self.prev_probe_too_high = false;
                    self.start_down(now);
                }
            }
            Phase::Down => {
                if !self.check_time_to_probe_bw(now, cwnd) && self.time_to_cruise(inflight) {
                    self.start_cruise();
                }
            }
        }
    }

    fn save_cwnd(&mut self, cwnd: f64) {
        self.prior_cwnd = if !self.in_recovery && !self.in_loss && self.mode != Mode::ProbeRtt {
            cwnd
        } else {
            self.prior_cwnd.max(cwnd)
        };
    }

    /// §5.3.4.3 UpdateMinRTT and CheckProbeRTT.
    fn update_min_rtt(&mut self, w: &mut Window, ack: &AckSample, inflight: f64) {
        let now = ack.now;
        let c = self.config;
        let probe_rtt_expired = self.probe_rtt_min.is_some()
            && now > self.probe_rtt_min_stamp.saturating_add(c.probe_rtt_interval);
        if let Some(rtt) = ack.rtt {
            if self.probe_rtt_min.is_none_or(|m| rtt < m) || probe_rtt_expired {
                self.probe_rtt_min = Some(rtt);
                self.probe_rtt_min_stamp = now;
            }
        }
        let min_rtt_expired = now > self.min_rtt_stamp.saturating_add(c.min_rtt_window);
        if let Some(p) = self.probe_rtt_min {
            if self.min_rtt.is_none_or(|m| p <= m) || min_rtt_expired {
                self.min_rtt = Some(p);
                self.min_rtt_stamp = self.probe_rtt_min_stamp;
            }
        }
        if c.probe_rtt_duration > 0 && probe_rtt_expired && self.mode != Mode::ProbeRtt {
            self.save_cwnd(w.cwnd);
            self.mode = Mode::ProbeRtt;
            self.probe_rtt_done_at = None;
            self.acks = Acks::ProbeStopping;
            self.start_round();
        }
        if self.mode != Mode::ProbeRtt {
            return;
        }

        match self.probe_rtt_done_at {
            None if inflight <= self.probe_rtt_cwnd() => {
                self.probe_rtt_done_at = Some(now + c.probe_rtt_duration);
                self.probe_rtt_round_done = false;
                self.start_round();
            }
            None => {}
            Some(done_at) => {
                self.probe_rtt_round_done |= self.round_start;
                if self.probe_rtt_round_done && now > done_at {
                    self.probe_rtt_min_stamp = now;
                    w.cwnd = w.cwnd.max(self.prior_cwnd);
                    self.exit_probe_rtt(now);
                }
            }
        }
    }

    /// §5.3.4.4 ExitProbeRTT.
    fn exit_probe_rtt(&mut self, now: Time) {
        self.reset_lower_bounds();
        if self.full_bw_reached {
            self.mode = Mode::ProbeBw;
            self.start_down(now);
            self.start_cruise();
        } else {
            self.mode = Mode::Startup;
        }
    }

    fn update_gains(&mut self) {
        let c = &self.config;
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (c.startup_pacing_gain, c.startup_cwnd_gain),
            Mode::Drain => (c.drain_pacing_gain, c.startup_cwnd_gain),
            Mode::ProbeBw => match self.phase {
                Phase::Down => (c.down_pacing_gain, c.cwnd_gain),
                Phase::Cruise | Phase::Refill => (1.0, c.cwnd_gain),
                Phase::Up => (c.up_pacing_gain, c.up_cwnd_gain),
            },
            Mode::ProbeRtt => (1.0, c.probe_rtt_cwnd_gain),
        };
    }

    /// §5.6.2 SetPacingRate: before the pipe is full the rate only rises.
    fn update_pacing_rate(&mut self, w: &Window, srtt: Time) {
        if !self.has_seen_rtt && srtt > 0 {
            self.has_seen_rtt = true;
            self.pacing_rate = self.initial_rate(w.cwnd, srtt);
        }
        let rate = self.pacing_gain * self.bw() * (1.0 - self.config.pacing_margin);
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// §5.6.2 InitPacingRate: the startup gain x cwnd per srtt, or per 1 ms without one.
    fn initial_rate(&self, cwnd: f64, srtt: Time) -> f64 {
        let rtt = if srtt > 0 { srtt } else { millis(1) };
        self.config.startup_pacing_gain * cwnd * self.mss as f64 / to_secs_f64(rtt)
            * (1.0 - self.config.pacing_margin)
    }

    /// §5.6.4.6 SetCwnd (with BoundCwndForProbeRTT), and v1's packet
    /// conservation where asked for.
    fn update_cwnd(&mut self, w: &mut Window, ack: &AckSample, inflight: f64) {
        let delivered = ack.delivered as f64;
        if delivered > 0.0 {
            if self.conservation == Conservation::Pending && ack.phase == AckPhase::Recovery {
                self.conservation = Conservation::Round;
                w.cwnd = inflight + delivered;
            }
            if self.conservation == Conservation::Round {
                w.cwnd = w.cwnd.max(inflight + delivered);
            } else {
                let max_inflight = self.inflight(self.bw(), self.cwnd_gain);
                let early = (self.delivered as f64) < self.initial_cwnd.unwrap_or(0.0);
                if self.full_bw_reached {
                    w.cwnd = (w.cwnd + delivered).min(max_inflight);
                } else if w.cwnd < max_inflight || early {
                    w.cwnd += delivered;
                }
                w.cwnd = w.cwnd.max(MIN_CWND);
            }
        }
        if self.mode == Mode::ProbeRtt {
            w.cwnd = w.cwnd.min(self.probe_rtt_cwnd());
        }
    }

    /// §5.6.4.7 BoundCwndForModel.
    fn bound_cwnd_for_model(&self, w: &mut Window) {
        let mut cap = f64::INFINITY;
        if self.mode == Mode::ProbeBw && self.phase != Phase::Cruise {
            cap = self.inflight_hi;
        } else if self.mode == Mode::ProbeRtt || self.mode == Mode::ProbeBw {
            cap = self.inflight_with_headroom();
        }
        let cap = cap.min(self.inflight_lo).max(MIN_CWND);
        w.cwnd = w.cwnd.min(cap);
    }

    /// Leaving recovery (§5.6.4.4): the saved cwnd, then the caps SetCwnd
    /// would apply on the same ACK.
    fn restore_cwnd(&mut self, w: &mut Window) {
        w.cwnd = w.cwnd.max(self.prior_cwnd);
        if self.full_bw_reached {
            w.cwnd = w.cwnd.min(self.inflight(self.bw(), self.cwnd_gain));
        }
        if self.mode == Mode::ProbeRtt {
            w.cwnd = w.cwnd.min(self.probe_rtt_cwnd());
        }
        self.bound_cwnd_for_model(w);
    }

    /// The flight before this ACK reached cwnd (Linux's is_cwnd_limited, per round).
    fn track_cwnd_use(&mut self, w: &Window, ack: &AckSample) {
        if self.round_start {
            self.cwnd_used_last_round = self.cwnd_used;
            self.cwnd_used = false;
        }
        self.cwnd_used |= ack.cwnd_limited && (ack.in_flight + ack.acked) as f64 >= w.cwnd.floor();
    }

    fn end_round_loss_rate(&mut self) {
        let total = self.round_delivered + self.round_lost;
        self.last_round_loss_rate = if total > 0 { self.round_lost as f64 / total as f64 } else { 0.0 };
        self.round_delivered = 0;
        self.round_lost = 0;
    }
}

impl CongestionControl for Bbr3 {
    fn name(&self) -> &'static str {
        "bbr3"
    }

    fn seed(&mut self, seed: u64) {
        self.draws = SplitMix64::new(seed);
    }

    fn set_selective_acks(&mut self, negotiated: bool) {
        self.selective_acks = negotiated;
    }

    fn owns_cwnd_in_recovery(&self) -> bool {
        true
    }

    fn uses_delivery_rate(&self) -> bool {
        true
    }

    /// Linux `bbr_main`, in its order.
    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        let now = ack.now;
        self.mss = ack.mss;
        self.initial_cwnd.get_or_insert(w.cwnd);
        let mss = f64::from(ack.mss.max(1));
        let delivered = ack.delivered as f64;
        let inflight = ack.packets_in_flight.or(ack.pipe).unwrap_or(ack.in_flight) as f64;
        let prior_inflight = inflight + delivered + ack.newly_lost as f64;
        self.delivered += ack.delivered;
        self.delivered_ce += ce_marked_segments(ack);
        self.round_delivered += ack.delivered;
        self.round_lost += ack.newly_lost;
        // PROBE_RTT's samples measure its small flight, not the path: Linux marks them app-limited.
        let sample = ack.rate.map(|r| Sample {
            bw: r.bytes_per_second(),
            delivered: r.delivered as f64 / mss,
            prior_delivered: r.prior_delivered,
            lost: r.lost as f64,
            tx_in_flight: r.tx_in_flight as f64,
            app_limited: r.app_limited || self.mode == Mode::ProbeRtt,
        });
        self.delivered_bytes = match ack.rate {
            Some(r) => r.prior_delivered + r.delivered,
            None => self.delivered_bytes + ack.delivered * u64::from(ack.mss),
        };
        let sample = sample.as_ref();

        self.update_round(sample);
        self.ecn_too_high = false;
        if self.round_start {
            self.end_round_loss_rate();
            let ratio = self.update_ecn_alpha();
            let c = &self.config;
            self.ecn_too_high = c.ecn_thresh > 0.0 && ratio.is_some_and(|r| r > c.ecn_thresh);
        }
        self.track_cwnd_use(w, ack);
        self.ecn_in_round |= self.ecn_eligible && ack.ece;
        if ack.newly_lost > 0 {
            self.note_loss();
        }
        self.update_latest_delivery_signals(sample);

        self.update_congestion_signals(sample, w.cwnd);
        self.check_startup_high_loss(sample, ack);
        self.check_full_bw(sample);
        self.check_drain(now, inflight);
        self.update_cycle_phase(now, w.cwnd, sample, prior_inflight, delivered);
        self.update_min_rtt(w, ack, inflight);

        self.update_gains();
        self.update_pacing_rate(w, ack.srtt);
        if self.conservation == Conservation::Round && self.round_start {
            self.conservation = Conservation::Off;
        }
        self.update_cwnd(w, ack, inflight);
        self.bound_cwnd_for_model(w);

        self.advance_latest_delivery_signals(sample);
        self.loss_in_cycle |= sample.is_some_and(|s| s.lost > 0.0);
        self.ecn_in_cycle |= ce_marked_segments(ack) > 0;
    }

    fn on_congestion(&mut self, w: &Window, event: &CongestionEvent) -> Response {
        match event.kind {
            EventKind::FastRetransmit => {
                // Fast recovery comes only once a timeout's Loss state is over, which
                // a recovery without that point (`reno`) never reports.
                self.in_loss = false;
                self.save_cwnd(w.cwnd);
                self.in_recovery = true;
                self.note_loss();
                if self.config.packet_conservation {
                    self.conservation = Conservation::Pending;
                }
                Response::NoReduction
            }
            EventKind::Timeout => {
                self.save_cwnd(w.cwnd);
                self.in_recovery = false;
                self.in_loss = true;
                self.conservation = Conservation::Off;
                self.note_loss();
                // Linux `bbr_set_state` on entering its Loss state.
                self.reset_full_bw();
                if !self.is_probing_bw() && self.inflight_lo.is_infinite() {
                    self.inflight_lo = w.cwnd.max(self.prior_cwnd);
                }
                Response::Reduce { ssthresh: w.ssthresh, cwnd: 1.0 }
            }
            // Marks act through the model, once per round, not as a reduction.
            EventKind::Mark => Response::NoReduction,
        }
    }

    fn on_recovery_exit(&mut self, w: &mut Window, _now: Time) {
        if self.in_recovery {
            self.restore_cwnd(w);
        }
        self.in_recovery = false;
        self.conservation = Conservation::Off;
    }

    fn on_timeout_recovered(&mut self, w: &mut Window, _now: Time) {
        self.in_loss = false;
        self.restore_cwnd(w);
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
        let finite = |v: f64| if v.is_finite() { v } else { 0.0 };
        out.put("state", self.mode as u8 as f64);
        out.put("phase", if self.mode == Mode::ProbeBw { self.phase as u8 as f64 } else { 0.0 });
        out.put("max_bw", self.max_bw() * 8.0);
        out.put("bw_lo", finite(self.bw_lo) * 8.0);
        out.put("inflight_hi", finite(self.inflight_hi));
        out.put("inflight_lo", finite(self.inflight_lo));
        out.put("min_rtt", self.min_rtt.map_or(0.0, to_secs_f64));
        out.put("pacing_gain", self.pacing_gain);
        out.put("ecn_alpha", self.ecn_alpha);
        out.put("loss_rate", self.last_round_loss_rate);
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

    /// A rate sample of `bw` bytes per second for `b`'s next ACK, `a`, that
    /// ends the current round (its segment left after the round began) or not;
    /// C.delivered grows by what `a` delivers.
    fn sample(b: &Bbr3, a: &AckSample, bw: f64, round_start: bool) -> RateSample {
        let grows = a.delivered * u64::from(MSS);
        let prior = if round_start { b.delivered_bytes } else { b.next_round_delivered.saturating_sub(1) };
        let delivered = b.delivered_bytes - prior + grows;
        let interval = (delivered as f64 / bw * 1e9).round() as Time;
        RateSample {
            delivered,
            interval,
            prior_delivered: prior,
            app_limited: false,
            lost: 0,
            tx_in_flight: 0,
        }
    }

    /// `a` with a rate sample of `bw` that ends the round or not.
    fn with_rate(b: &Bbr3, mut a: AckSample, bw: f64, round_start: bool) -> AckSample {
        a.rate = Some(sample(b, &a, bw, round_start));
        a
    }

    /// PROBE_BW in `phase` with the model BW x RTPROP (min_rtt measured at 0), in a round begun now.
    fn probe_bw(phase: Phase) -> Bbr3 {
        let mut b = Bbr3::new(Config::default());
        b.mss = MSS;
        b.initial_cwnd = Some(4.0);
        b.max_bw.reset(0, BW);
        b.min_rtt = Some(RTPROP);
        b.probe_rtt_min = Some(RTPROP);
        b.full_bw_reached = true;
        b.full_bw_now = true;
        b.delivered = 10_000;
        b.delivered_bytes = 10_000_000;
        b.next_round_delivered = b.delivered_bytes;
        b.loss_round_delivered = b.delivered_bytes;
        b.mode = Mode::ProbeBw;
        b.phase = phase;
        b.acks = Acks::Init;
        b.probe_wait = millis(2_500);
        if phase == Phase::Up {
            // As UP's start leaves it: the plateau test begins again.
            b.reset_full_bw();
            b.full_bw = BW;
        }
        b.update_gains();
        b
    }

    fn window(cwnd: f64) -> Window {
        Window { cwnd, ssthresh: 1e9 }
    }

    #[test]
    fn the_constants_are_the_drafts_and_the_descriptor_defaults_are_the_same() {
        let c = Config::default();
        assert!((4.0 * std::f64::consts::LN_2 - c.startup_pacing_gain).abs() < 0.003, "4 ln 2 = 2.7726");
        assert_eq!(
            (c.startup_pacing_gain, c.startup_cwnd_gain, c.drain_pacing_gain, c.cwnd_gain),
            (2.77, 2.0, 0.5, 2.0)
        );
        assert_eq!((c.up_pacing_gain, c.up_cwnd_gain, c.down_pacing_gain), (1.25, 2.25, 0.9));
        assert_eq!((c.loss_thresh, c.beta, c.headroom), (0.02, 0.7, 0.15));
        assert_eq!(
            (c.ecn_thresh, c.ecn_alpha_gain, c.ecn_alpha_init, c.ecn_max_rtt),
            (0.5, 1.0 / 16.0, 1.0, millis(5))
        );
        assert!((c.ecn_factor - 1.0 / 3.0).abs() < 1e-6);
        assert_eq!(
            (c.full_bw_growth, c.full_bw_rounds, c.full_loss_events, c.full_ecn_rounds),
            (1.25, 3, 6, 2)
        );
        assert_eq!(
            (c.probe_rtt_interval, c.probe_rtt_duration, c.probe_rtt_cwnd_gain),
            (secs(5), millis(200), 0.5)
        );
        assert_eq!((c.min_rtt_window, c.probe_wait_base, c.probe_wait_random), (secs(10), secs(2), secs(1)));
        assert_eq!(
            (c.probe_max_rounds, c.probe_random_rounds, c.bw_filter_cycles, c.drain_max_rounds),
            (63, 2, 2, 3)
        );
        assert_eq!((c.pacing_margin, c.packet_conservation), (0.01, false));
        let p = DESCRIPTOR.info().defaults().unwrap_or_default();
        assert_eq!(config(&p), Ok(c));
    }

    #[test]
    fn each_state_and_phase_has_its_gains() {
        let mut b = Bbr3::new(Config::default());
        let gains = |b: &mut Bbr3, mode: Mode, phase: Phase| {
            b.mode = mode;
            b.phase = phase;
            b.update_gains();
            (b.pacing_gain(), b.cwnd_gain())
        };
        assert_eq!(gains(&mut b, Mode::Startup, Phase::Down), (2.77, 2.0));
        assert_eq!(gains(&mut b, Mode::Drain, Phase::Down), (0.5, 2.0));
        assert_eq!(gains(&mut b, Mode::ProbeBw, Phase::Down), (0.9, 2.0));
        assert_eq!(gains(&mut b, Mode::ProbeBw, Phase::Cruise), (1.0, 2.0));
        assert_eq!(gains(&mut b, Mode::ProbeBw, Phase::Refill), (1.0, 2.0));
        assert_eq!(gains(&mut b, Mode::ProbeBw, Phase::Up), (1.25, 2.25));
        assert_eq!(gains(&mut b, Mode::ProbeRtt, Phase::Down), (1.0, 0.5));
    }

    #[test]
    fn cwnd_aims_at_cwnd_gain_bdps_and_pacing_at_gain_times_bw_less_one_percent() {
        // CRUISE: target 2 x 50 = 100 segments; cwnd grows by the delivered segments up to it.
        let mut b = probe_bw(Phase::Cruise);
        let mut w = window(90.0);
        b.on_ack(&mut w, &ack(millis(1), 4, 40));
        assert_eq!(w.cwnd, 94.0);
        b.on_ack(&mut w, &ack(millis(2), 10, 40));
        assert_eq!(w.cwnd, 100.0, "snapped to the target");
        let pacing = b.pacing_rate(&w, RTPROP).unwrap_or(0.0);
        assert!((pacing - BW * 0.99).abs() < 1e-6, "{pacing}");
        // UP: 2.25 x 50 = 112.5 -> 113, + 2; pacing 1.25 x bw.
        let mut b = probe_bw(Phase::Up);
        let mut w = window(200.0);
        b.on_ack(&mut w, &ack(millis(1), 1, 40));
        assert_eq!(w.cwnd, 115.0);
        assert!((b.pacing_rate(&w, RTPROP).unwrap_or(0.0) - 1.25 * BW * 0.99).abs() < 1e-6);
        // bw_lo bounds the rate.
        let mut b = probe_bw(Phase::Cruise);
        b.bw_lo = BW / 2.0;
        b.on_ack(&mut window(50.0), &ack(millis(1), 1, 40));
        assert!((b.pacing_rate(&w, RTPROP).unwrap_or(0.0) - 0.5 * BW * 0.99).abs() < 1e-6);
    }

    #[test]
    fn startup_ends_after_three_round_starts_without_25_percent_growth_and_not_before() {
        let mut b = Bbr3::new(Config::default());
        let mut w = window(10.0);
        let round = |b: &mut Bbr3, w: &mut Window, i: u64, bw: f64| {
            let mut a = with_rate(b, ack(millis(40 * i), 1, 1000), bw, true);
            a.rtt = Some(RTPROP);
            b.on_ack(w, &a);
        };
        round(&mut b, &mut w, 1, 100_000.0);
        round(&mut b, &mut w, 2, 200_000.0); // doubled: growth
        round(&mut b, &mut w, 3, 249_000.0); // +24.5 %: not enough
        round(&mut b, &mut w, 4, 249_900.0);
        assert_eq!(b.mode(), Mode::Startup, "two rounds without growth are not enough");
        // An ACK that ends no round does not count.
        let a = with_rate(&b, ack(millis(170), 1, 1000), 240_000.0, false);
        b.on_ack(&mut w, &a);
        assert_eq!(b.mode(), Mode::Startup);
        round(&mut b, &mut w, 5, 240_000.0);
        assert!(b.full_bw_reached());
        assert_eq!(b.mode(), Mode::Drain, "1000 segments in flight is far above one BDP");
        assert_eq!(b.inflight_hi(), f64::INFINITY, "a plateau sets no volume bound");
    }

    #[test]
    fn growth_of_25_percent_restarts_the_count() {
        let mut b = Bbr3::new(Config::default());
        let mut w = window(10.0);
        for (i, bw) in [100.0, 100.0, 100.0, 125.0, 125.0, 125.0].into_iter().enumerate() {
            let a = with_rate(&b, ack(millis(40 * (i as u64 + 1)), 1, 1000), bw * 1000.0, true);
            b.on_ack(&mut w, &a);
        }
        assert_eq!(b.mode(), Mode::Startup, "the fourth round grew by exactly 25 %");
    }

    /// STARTUP in recovery with the model BW x RTPROP, then a loss round of
    /// `events` ACKs that mark a loss, ended by an ACK whose sample lost
    /// `lost` of `tx_in_flight`.
    fn startup_loss_round(events: u64, lost: u64, tx_in_flight: u64, phase: AckPhase) -> Bbr3 {
        let mut b = probe_bw(Phase::Down);
        b.mode = Mode::Startup;
        b.full_bw_reached = false;
        b.full_bw_now = false;
        b.update_gains();
        let mut w = window(200.0);
        for i in 0..events {
            let mut a = with_rate(&b, ack(millis(i + 1), 2, 150), BW, false);
            a.newly_lost = 1;
            a.phase = phase;
            b.on_ack(&mut w, &a);
        }
        let mut a = with_rate(&b, ack(millis(41), 2, 150), BW, true);
        if let Some(r) = a.rate.as_mut() {
            (r.lost, r.tx_in_flight) = (lost, tx_in_flight);
        }
        a.phase = phase;
        b.inflight_latest = 70.0;
        b.on_ack(&mut w, &a);
        b
    }

    #[test]
    fn startup_ends_on_a_recovery_round_with_six_loss_events_and_loss_above_two_percent() {
        let b = startup_loss_round(6, 3, 100, AckPhase::Recovery);
        assert!(b.full_bw_reached());
        assert_eq!(b.mode(), Mode::Drain);
        // inflight_hi = max(BDP with the budget (50), the round's largest delivered volume).
        assert_eq!(b.inflight_hi(), 70.0);
        // Each condition is needed.
        assert_eq!(startup_loss_round(5, 3, 100, AckPhase::Recovery).mode(), Mode::Startup, "5 events");
        assert_eq!(startup_loss_round(6, 2, 100, AckPhase::Recovery).mode(), Mode::Startup, "2 %: not above");
        assert_eq!(startup_loss_round(6, 3, 100, AckPhase::Open).mode(), Mode::Startup, "not in recovery");
    }

    /// §5.3.1.3 and §5.5.10.2 without SACK: one loss marked in recovery ends
    /// STARTUP, and any loss in a sample is "too high" (with SACK, 1 of 100 is not).
    #[test]
    fn without_sack_one_loss_in_recovery_ends_startup_and_any_loss_is_too_high() {
        let mut b = startup_loss_round(0, 0, 100, AckPhase::Recovery);
        assert_eq!(b.mode(), Mode::Startup);
        b.set_selective_acks(false);
        let mut w = window(200.0);
        let mut a = with_rate(&b, ack(millis(50), 2, 150), BW, false);
        a.newly_lost = 1;
        a.phase = AckPhase::Recovery;
        b.on_ack(&mut w, &a);
        assert!(b.full_bw_reached(), "one loss event in recovery, no SACK");
        let one_in_a_hundred = Sample {
            bw: BW,
            delivered: 10.0,
            prior_delivered: 0,
            lost: 1.0,
            tx_in_flight: 100.0,
            app_limited: false,
        };
        assert!(b.inflight_too_high(&one_in_a_hundred));
        b.set_selective_acks(true);
        assert!(!b.inflight_too_high(&one_in_a_hundred), "1 % is below loss_thresh");
        assert_eq!(startup_loss_round(1, 0, 100, AckPhase::Recovery).mode(), Mode::Startup, "with SACK");
    }

    #[test]
    fn startup_ends_after_two_rounds_with_half_the_deliveries_marked_where_marks_count() {
        let run = |rtt: Time, marked: bool| {
            let mut b = Bbr3::new(Config::default());
            let mut w = window(10.0);
            for i in 1..=3u64 {
                let mut a = with_rate(&b, ack(millis(i), 10, 1000), 100_000.0 * i as f64, true);
                a.rtt = Some(rtt);
                a.ece = marked;
                b.on_ack(&mut w, &a);
            }
            b
        };
        // min_rtt 1 ms <= 5 ms: marks count from the round after the first RTT sample.
        let b = run(millis(1), true);
        assert!(b.full_bw_reached() && b.mode() == Mode::Drain, "two marked rounds");
        assert!(!run(millis(1), false).full_bw_reached(), "rates still growing, no marks");
        assert!(!run(millis(40), true).full_bw_reached(), "min_rtt above ecn_max_rtt: marks do not count");
    }

    #[test]
    fn ecn_alpha_is_a_per_round_ewma_of_the_marked_fraction() {
        let mut b = probe_bw(Phase::Cruise);
        b.min_rtt = Some(millis(1));
        b.probe_rtt_min = Some(millis(1));
        let mut w = window(100.0);
        // The first round start makes the flow eligible and takes the fraction since the start.
        b.on_ack(&mut w, &with_rate(&b, ack(millis(1), 4, 40), BW, true));
        let before = b.ecn_alpha();
        // A round of 8 segments, 2 marked: alpha = 15/16 alpha + 1/16 x 1/4.
        let mut marked = ack(millis(2), 2, 40);
        marked.ece = true;
        assert_eq!(ce_marked_segments(&marked), 2);
        assert_eq!(ce_marked_segments(&ack(millis(2), 2, 40)), 0);
        let mut accurate = ack(millis(2), 4, 40);
        accurate.ce_bytes = Some(2 * u64::from(accurate.mss));
        accurate.ece = true;
        assert_eq!(ce_marked_segments(&accurate), 2, "AccECN counts the marked bytes, not the ACK");
        b.on_ack(&mut w, &with_rate(&b, marked, BW, false));
        b.on_ack(&mut w, &with_rate(&b, ack(millis(3), 2, 40), BW, false));
        b.on_ack(&mut w, &with_rate(&b, ack(millis(4), 2, 40), BW, false));
        b.on_ack(&mut w, &with_rate(&b, ack(millis(5), 2, 40), BW, true));
        let expected = 15.0 / 16.0 * before + 1.0 / 16.0 * 0.25;
        assert!((b.ecn_alpha() - expected).abs() < 1e-12, "{} {expected}", b.ecn_alpha());
    }

    #[test]
    fn lower_bounds_keep_beta_per_lossy_round_and_ecn_cuts_inflight_lo_by_alpha_over_three() {
        let mut b = probe_bw(Phase::Cruise);
        b.bw_latest = 0.2 * BW;
        b.inflight_latest = 10.0;
        b.loss_in_round = true;
        b.adapt_lower_bounds(90.0);
        // Started from max_bw and cwnd, cut to 0.7 of them (the latest values are lower).
        assert!((b.bw_lo() - 0.7 * BW).abs() < 1e-6);
        assert!((b.inflight_lo() - 63.0).abs() < 1e-9);
        b.adapt_lower_bounds(90.0);
        assert!((b.bw_lo() - 0.49 * BW).abs() < 1e-6);
        assert!((b.inflight_lo() - 44.1).abs() < 1e-9);
        // Never below what the last round delivered.
        b.bw_latest = 0.45 * BW;
        b.inflight_latest = 40.0;
        b.adapt_lower_bounds(90.0);
        assert_eq!((b.bw_lo(), b.inflight_lo()), (0.45 * BW, 40.0));
        // Marks without loss: inflight_lo x (1 - alpha x 1/3); bw_lo untouched.
        b.loss_in_round = false;
        b.ecn_in_round = true;
        b.ecn_alpha = 0.6;
        b.adapt_lower_bounds(90.0);
        assert!((b.inflight_lo() - 40.0 * (1.0 - 0.6 * 0.333333)).abs() < 1e-9);
        assert_eq!(b.bw_lo(), 0.45 * BW);
        // Not while probing: STARTUP, REFILL, UP.
        for (mode, phase) in
            [(Mode::Startup, Phase::Down), (Mode::ProbeBw, Phase::Refill), (Mode::ProbeBw, Phase::Up)]
        {
            let mut b = probe_bw(phase);
            b.mode = mode;
            b.loss_in_round = true;
            b.adapt_lower_bounds(90.0);
            assert_eq!((b.bw_lo(), b.inflight_lo()), (f64::INFINITY, f64::INFINITY), "{mode:?} {phase:?}");
        }
    }

    #[test]
    fn a_loss_in_cruise_cuts_the_short_term_model_when_its_round_ends() {
        let mut b = probe_bw(Phase::Cruise);
        let mut w = window(100.0);
        let mut lossy = with_rate(&b, ack(millis(1), 2, 90), 0.9 * BW, false);
        lossy.newly_lost = 1;
        b.on_ack(&mut w, &lossy);
        assert_eq!(b.bw_lo(), f64::INFINITY, "the round of the loss has not ended");
        b.on_ack(&mut w, &with_rate(&b, ack(millis(20), 2, 90), 0.8 * BW, false));
        assert_eq!(b.bw_lo(), f64::INFINITY);
        // The round that began at the loss ends: bw_lo = max(0.9 BW, 0.7 BW), inflight_lo = 0.7 x cwnd.
        b.on_ack(&mut w, &with_rate(&b, ack(millis(41), 2, 90), 0.5 * BW, true));
        assert!((b.bw_lo() / (0.9 * BW) - 1.0).abs() < 1e-6, "{}", b.bw_lo());
        assert!((b.inflight_lo() - 70.0).abs() < 1e-9, "{}", b.inflight_lo());
        assert!(w.cwnd <= 70.0, "cwnd capped by inflight_lo: {}", w.cwnd);
    }

    #[test]
    fn drain_ends_at_one_bdp_or_after_three_rounds() {
        let mut b = probe_bw(Phase::Down);
        b.mode = Mode::Drain;
        b.drain_start_round = b.round_count;
        let mut w = window(150.0);
        b.on_ack(&mut w, &ack(millis(10), 1, 51));
        assert_eq!(b.mode(), Mode::Drain);
        b.on_ack(&mut w, &ack(millis(11), 1, 50));
        assert_eq!((b.mode(), b.phase()), (Mode::ProbeBw, Phase::Down));

        let mut b = probe_bw(Phase::Down);
        b.mode = Mode::Drain;
        b.drain_start_round = b.round_count;
        for i in 1..=3 {
            b.on_ack(&mut w, &with_rate(&b, ack(millis(40 * i), 1, 140), BW, true));
            assert_eq!(b.mode(), Mode::Drain, "round {i}");
        }
        b.on_ack(&mut w, &with_rate(&b, ack(millis(160), 1, 140), BW, true));
        assert_eq!(b.mode(), Mode::ProbeBw, "a fourth round");
    }

    #[test]
    fn down_cruises_once_the_flight_is_at_most_a_bdp_and_leaves_headroom_below_inflight_hi() {
        // inflight_hi 100: headroom target 85; the BDP (50) decides. The flight before the ACK counts.
        let mut b = probe_bw(Phase::Down);
        b.inflight_hi = 100.0;
        let mut w = window(100.0);
        b.on_ack(&mut w, &ack(millis(10), 1, 50));
        assert_eq!(b.phase(), Phase::Down, "51 > 50");
        b.on_ack(&mut w, &ack(millis(11), 1, 49));
        assert_eq!(b.phase(), Phase::Cruise);
        // inflight_hi 55: 55 - 8.25 = 46.75 decides.
        let mut b = probe_bw(Phase::Down);
        b.inflight_hi = 55.0;
        b.on_ack(&mut w, &ack(millis(10), 1, 46));
        assert_eq!(b.phase(), Phase::Down, "47 > 46.75");
        b.on_ack(&mut w, &ack(millis(11), 1, 45));
        assert_eq!(b.phase(), Phase::Cruise);
    }

    #[test]
    fn the_next_probe_comes_after_the_drawn_wait_or_the_reno_rounds() {
        // The wall clock: 2.5 s after the cycle began.
        let mut b = probe_bw(Phase::Cruise);
        b.bw_lo = BW / 2.0;
        b.inflight_lo = 30.0;
        let mut w = window(100.0);
        b.on_ack(&mut w, &ack(millis(2_500), 1, 40));
        assert_eq!(b.phase(), Phase::Cruise);
        b.on_ack(&mut w, &ack(millis(2_500) + 1, 1, 40));
        assert_eq!(b.phase(), Phase::Refill);
        assert_eq!(
            (b.bw_lo(), b.inflight_lo()),
            (f64::INFINITY, f64::INFINITY),
            "REFILL forgets the short-term model"
        );
        // Round trips: min(63, target inflight) = min(63, BDP 50, cwnd 30) = 30
        // (cwnd held at 30 by inflight_lo).
        let mut b = probe_bw(Phase::Cruise);
        b.inflight_lo = 30.0;
        let mut w = window(30.0);
        for i in 1..30 {
            b.on_ack(&mut w, &with_rate(&b, ack(millis(i), 1, 20), BW, true));
            assert_eq!(b.phase(), Phase::Cruise, "round {i}");
        }
        b.on_ack(&mut w, &with_rate(&b, ack(millis(30), 1, 20), BW, true));
        assert_eq!(b.phase(), Phase::Refill, "round 30");
        // A large BDP: 63 rounds at most.
        let mut b = probe_bw(Phase::Cruise);
        b.max_bw.reset(0, 4.0 * BW);
        let mut w = window(400.0);
        for i in 1..63 {
            b.on_ack(&mut w, &with_rate(&b, ack(millis(i), 1, 20), 4.0 * BW, true));
        }
        assert_eq!(b.phase(), Phase::Cruise);
        b.on_ack(&mut w, &with_rate(&b, ack(millis(63), 1, 20), 4.0 * BW, true));
        assert_eq!(b.phase(), Phase::Refill, "round 63");
    }

    #[test]
    fn the_probe_wait_is_drawn_from_the_seed_in_2_to_3_seconds_and_the_round_count_from_0_or_1() {
        let mut waits = Vec::new();
        let mut rounds = [0; 2];
        for seed in 0..400 {
            let mut b = probe_bw(Phase::Cruise);
            b.seed(seed);
            b.start_down(0);
            waits.push(b.probe_wait());
            rounds[b.rounds_since_probe as usize] += 1;
        }
        assert!(waits.iter().all(|&t| (secs(2)..secs(3)).contains(&t)));
        let (low, high) = (waits.iter().min().copied(), waits.iter().max().copied());
        assert!(low < Some(millis(2_050)) && high > Some(millis(2_950)), "{low:?} {high:?}");
        assert!(rounds.iter().all(|&n| (150..250).contains(&n)), "{rounds:?}");
        let draw = |seed| {
            let mut b = probe_bw(Phase::Cruise);
            b.seed(seed);
            b.start_down(0);
            (b.probe_wait(), b.rounds_since_probe)
        };
        assert_eq!(draw(42), draw(42), "same seed, same draws");
    }

    #[test]
    fn refill_lasts_one_round_then_up_probes() {
        let mut b = probe_bw(Phase::Cruise);
        b.start_refill(0);
        let mut w = window(100.0);
        b.on_ack(&mut w, &with_rate(&b, ack(millis(1), 1, 50), BW, false));
        assert_eq!(b.phase(), Phase::Refill);
        assert!(!b.bw_probe_samples);
        b.on_ack(&mut w, &with_rate(&b, ack(millis(41), 1, 50), BW, true));
        assert_eq!(b.phase(), Phase::Up);
        assert!(b.bw_probe_samples, "samples now reflect the probe");
        assert_eq!((b.pacing_gain(), b.cwnd_gain()), (1.25, 2.25));
        assert_eq!(b.full_bw, BW, "the plateau test starts from the rate now");
    }

    #[test]
    fn up_ends_after_three_rounds_without_growth_unless_inflight_hi_holds_it() {
        let mut b = probe_bw(Phase::Refill);
        let mut w = window(100.0);
        b.on_ack(&mut w, &with_rate(&b, ack(millis(1), 1, 50), BW, true));
        assert_eq!(b.phase(), Phase::Up);
        for i in 2..=3 {
            b.on_ack(&mut w, &with_rate(&b, ack(millis(i), 1, 50), 1.2 * BW, true));
            assert_eq!(b.phase(), Phase::Up);
        }
        b.on_ack(&mut w, &with_rate(&b, ack(millis(4), 1, 50), 1.2 * BW, true));
        assert_eq!(b.phase(), Phase::Down, "three rounds below 1.25 x");
        assert!(!b.prev_probe_too_high);

        // cwnd limited by inflight_hi: the plateau restarts from each round.
        let mut b = probe_bw(Phase::Refill);
        b.inflight_hi = 60.0;
        let mut w = window(60.0);
        for i in 1..=6 {
            b.on_ack(&mut w, &with_rate(&b, ack(millis(i), 1, 59), BW, true));
        }
        assert_eq!(b.phase(), Phase::Up, "the flight is held at inflight_hi");
    }

    #[test]
    fn excess_loss_in_a_probe_cuts_inflight_hi_to_the_flight_at_loss_or_beta_times_the_target() {
        // UP's target inflight: min(50 + 2, cwnd 100) = 52; 0.7 x 52 = 36.4.
        for (lost, tx, expected) in
            [(3, 100, Some(100.0)), (1, 40, Some(40.0)), (1, 30, Some(36.4)), (2, 100, None)]
        {
            let mut b = probe_bw(Phase::Refill);
            let mut w = window(100.0);
            b.on_ack(&mut w, &with_rate(&b, ack(millis(1), 1, 50), BW, true));
            assert!(b.bw_probe_samples && b.phase() == Phase::Up);
            let mut a = with_rate(&b, ack(millis(2), 1, 50), BW, false);
            if let Some(r) = a.rate.as_mut() {
                (r.lost, r.tx_in_flight) = (lost, tx);
            }
            b.on_ack(&mut w, &a);
            match expected {
                Some(hi) => {
                    assert!((b.inflight_hi() - hi).abs() < 1e-9, "{lost}/{tx}: {}", b.inflight_hi());
                    assert_eq!(b.phase(), Phase::Down, "{lost}/{tx}");
                    assert!(b.prev_probe_too_high && !b.bw_probe_samples, "once per probe");
                }
                None => {
                    assert_eq!((b.inflight_hi(), b.phase()), (f64::INFINITY, Phase::Up), "2 % is not above")
                }
            }
        }
        // Outside a probe's samples nothing is cut.
        let mut b = probe_bw(Phase::Cruise);
        let mut a = with_rate(&b, ack(millis(2), 1, 50), BW, false);
        if let Some(r) = a.rate.as_mut() {
            (r.lost, r.tx_in_flight) = (10, 50);
        }
        b.on_ack(&mut window(100.0), &a);
        assert_eq!(b.inflight_hi(), f64::INFINITY);
    }

    #[test]
    fn after_a_probe_that_went_too_high_the_next_stops_at_inflight_hi_and_then_probes_again_at_once() {
        let mut b = probe_bw(Phase::Refill);
        b.prev_probe_too_high = true;
        b.inflight_hi = 60.0;
        let mut w = window(100.0);
        b.on_ack(&mut w, &with_rate(&b, ack(millis(1), 1, 50), BW, true));
        assert_eq!(b.phase(), Phase::Up);
        b.on_ack(&mut w, &ack(millis(2), 1, 58));
        assert_eq!(b.phase(), Phase::Up, "59 in flight");
        b.on_ack(&mut w, &ack(millis(3), 1, 59));
        assert_eq!(b.phase(), Phase::Down, "the flight reached inflight_hi");
        assert!(b.stopped_risky_probe && !b.prev_probe_too_high);
        // A round of feedback without excess loss: straight to REFILL, without
        // waiting in CRUISE (the flight, above 0.85 x 60, keeps DOWN until then).
        b.on_ack(&mut w, &with_rate(&b, ack(millis(4), 1, 55), BW, false));
        assert_eq!(b.phase(), Phase::Down);
        b.on_ack(&mut w, &with_rate(&b, ack(millis(41), 1, 55), BW, true));
        assert_eq!(b.phase(), Phase::Refill);
    }

    #[test]
    fn inflight_hi_grows_in_up_by_1_then_2_then_4_segments_a_round_while_cwnd_is_held_at_it() {
        // cwnd 100, used, at least inflight_hi (50): 1 segment per cwnd / 2^k delivered in UP's round k.
        let mut b = probe_bw(Phase::Up);
        b.inflight_hi = 50.0;
        b.cwnd_used = true;
        b.raise_inflight_hi_slope(100.0); // UP's start: 1 per 100 delivered
        let grow = |b: &mut Bbr3, round_start: bool, times: usize| {
            for _ in 0..times {
                b.round_start = round_start;
                b.probe_inflight_hi_upward(100.0, 10.0);
            }
        };
        grow(&mut b, false, 9);
        assert_eq!(b.inflight_hi(), 50.0);
        grow(&mut b, true, 1); // 100 delivered: +1; the next round: 1 per 50
        assert_eq!(b.inflight_hi(), 51.0);
        grow(&mut b, false, 10);
        assert_eq!(b.inflight_hi(), 53.0, "2 in a round's 100 delivered");
        grow(&mut b, true, 1); // the next round: 1 per 25
        grow(&mut b, false, 9);
        assert_eq!(b.inflight_hi(), 57.0, "4 in a round's 100 delivered");
        // Not while cwnd is below inflight_hi.
        b.probe_inflight_hi_upward(40.0, 1000.0);
        assert_eq!(b.inflight_hi(), 57.0);
    }

    #[test]
    fn a_sample_without_excess_loss_raises_inflight_hi_to_its_flight() {
        let mut b = probe_bw(Phase::Cruise);
        b.inflight_hi = 100.0;
        let mut a = with_rate(&b, ack(millis(1), 1, 50), BW, false);
        if let Some(r) = a.rate.as_mut() {
            (r.lost, r.tx_in_flight) = (1, 120);
        }
        b.on_ack(&mut window(100.0), &a);
        assert_eq!(b.inflight_hi(), 120.0, "1 of 120 is below 2 %");
    }

    #[test]
    fn cwnd_is_capped_by_inflight_hi_while_probing_by_85_percent_of_it_in_cruise_and_by_inflight_lo() {
        let cap = |phase: Phase, mode: Mode, lo: f64| {
            let mut b = probe_bw(phase);
            b.mode = mode;
            b.inflight_hi = 80.0;
            b.inflight_lo = lo;
            let mut w = window(1000.0);
            b.bound_cwnd_for_model(&mut w);
            w.cwnd
        };
        for phase in [Phase::Down, Phase::Refill, Phase::Up] {
            assert_eq!(cap(phase, Mode::ProbeBw, f64::INFINITY), 80.0, "{phase:?}");
        }
        assert_eq!(cap(Phase::Cruise, Mode::ProbeBw, f64::INFINITY), 68.0);
        assert_eq!(cap(Phase::Down, Mode::ProbeRtt, f64::INFINITY), 68.0);
        assert_eq!(cap(Phase::Down, Mode::Startup, f64::INFINITY), 1000.0);
        assert_eq!(cap(Phase::Up, Mode::ProbeBw, 30.0), 30.0);
        assert_eq!(cap(Phase::Up, Mode::ProbeBw, 1.0), MIN_CWND);
    }

    #[test]
    fn max_bw_holds_the_best_of_this_cycle_and_the_last() {
        let mut b = probe_bw(Phase::Cruise);
        let take = |b: &mut Bbr3, bw: f64| {
            let s = Sample {
                bw,
                delivered: 1.0,
                prior_delivered: 0,
                lost: 0.0,
                tx_in_flight: 0.0,
                app_limited: false,
            };
            b.update_congestion_signals(Some(&s), 100.0);
        };
        take(&mut b, 2.0 * BW);
        b.cycle_count += 1;
        take(&mut b, BW);
        assert_eq!(b.max_bw(), 2.0 * BW, "the previous cycle's best");
        b.cycle_count += 1;
        take(&mut b, BW);
        assert_eq!(b.max_bw(), BW, "two cycles later it is gone");
        // A cycle advances one round after UP ends (ProbeStopping's round), on a sample not app-limited.
        let mut b = probe_bw(Phase::Up);
        b.start_down(0);
        let before = b.cycle_count;
        b.on_ack(&mut window(100.0), &with_rate(&b, ack(millis(41), 1, 40), BW, true));
        assert_eq!(b.cycle_count, before + 1);
    }

    #[test]
    fn probe_rtt_after_5_s_holds_half_a_bdp_for_200_ms_and_a_round_then_cruises() {
        let mut b = probe_bw(Phase::Cruise);
        b.bw_lo = 0.8 * BW;
        b.probe_wait = secs(60); // no bandwidth probe meanwhile
        let mut w = window(100.0);
        let at = |b: &mut Bbr3, w: &mut Window, now: Time, inflight: u64, round_start: bool| {
            let mut a = with_rate(b, ack(now, 1, inflight), BW, round_start);
            a.rtt = Some(RTPROP + millis(5));
            b.on_ack(w, &a);
            b.mode()
        };
        assert_eq!(at(&mut b, &mut w, secs(5), 80, false), Mode::ProbeBw, "exactly 5 s: not expired");
        let cwnd = w.cwnd;
        assert_eq!(at(&mut b, &mut w, secs(5) + 1, 80, false), Mode::ProbeRtt);
        assert_eq!(b.min_rtt(), Some(RTPROP), "min_rtt keeps its 10 s window");
        // cwnd: max(0.5 x BDP at bw = min(max_bw, bw_lo), 4) = ceil(0.5 x 40) = 20.
        assert_eq!(w.cwnd, 20.0);
        assert_eq!(b.pacing_gain(), 1.0);
        let low = secs(5) + millis(30);
        at(&mut b, &mut w, low, 20, false); // the flight is down: 200 ms from here, and a round
        assert_eq!(at(&mut b, &mut w, low + millis(100), 20, true), Mode::ProbeRtt);
        assert_eq!(at(&mut b, &mut w, low + millis(200), 20, false), Mode::ProbeRtt, "200 ms not yet passed");
        assert_eq!(at(&mut b, &mut w, low + millis(200) + 1, 20, false), Mode::ProbeBw);
        assert_eq!(b.phase(), Phase::Cruise, "DOWN restarts the probe clock, then CRUISE");
        assert_eq!(b.bw_lo(), f64::INFINITY, "the short-term model is forgotten");
        assert_eq!(w.cwnd, cwnd + 1.0, "the cwnd from before, restored, then grown by the segment delivered");
        // Without a filled pipe, back to STARTUP.
        let mut b = probe_bw(Phase::Cruise);
        b.full_bw_reached = false;
        let mut w = window(100.0);
        at(&mut b, &mut w, secs(5) + 1, 4, false);
        assert_eq!(b.mode(), Mode::ProbeRtt);
        assert_eq!(at(&mut b, &mut w, secs(5) + millis(201), 4, true), Mode::Startup);
    }

    #[test]
    fn min_rtt_takes_lower_samples_at_once_and_a_higher_one_only_after_10_s() {
        let mut b = probe_bw(Phase::Cruise);
        b.config.probe_rtt_duration = 0; // no PROBE_RTT here
        let mut w = window(100.0);
        let rtt = |b: &mut Bbr3, w: &mut Window, now: Time, ms: u64| {
            let mut a = ack(now, 1, 40);
            a.rtt = Some(millis(ms));
            b.on_ack(w, &a);
            b.min_rtt()
        };
        assert_eq!(rtt(&mut b, &mut w, secs(1), 30), Some(millis(30)));
        assert_eq!(rtt(&mut b, &mut w, secs(6), 50), Some(millis(30)), "probe_rtt_min expired, min_rtt not");
        assert_eq!(rtt(&mut b, &mut w, secs(11), 50), Some(millis(30)), "exactly 10 s");
        assert_eq!(rtt(&mut b, &mut w, secs(11) + 1, 50), Some(millis(50)));
    }

    #[test]
    fn fast_recovery_keeps_cwnd_and_restores_it_on_exit_and_a_timeout_leaves_one_segment() {
        let mut b = probe_bw(Phase::Cruise);
        assert!(b.owns_cwnd_in_recovery() && b.uses_delivery_rate());
        let w = window(100.0);
        assert_eq!(b.on_congestion(&w, &event(EventKind::FastRetransmit, 100.0)), Response::NoReduction);
        assert_eq!(b.on_congestion(&w, &event(EventKind::Mark, 100.0)), Response::NoReduction);
        // In recovery cwnd follows the model: it grows by the delivered segments toward 2 BDPs.
        let mut w = window(90.0);
        let mut a = ack(millis(1), 3, 60);
        a.phase = AckPhase::Recovery;
        b.on_ack(&mut w, &a);
        assert_eq!(w.cwnd, 93.0, "no reduction, no conservation");
        // Leaving it restores the cwnd saved at the loss, under the model's caps.
        let mut w = window(60.0);
        b.on_recovery_exit(&mut w, millis(60));
        assert_eq!(w.cwnd, 100.0);
        b.in_recovery = true;
        b.inflight_lo = 70.0;
        let mut w = window(60.0);
        b.on_recovery_exit(&mut w, millis(61));
        assert_eq!(w.cwnd, 70.0, "inflight_lo caps the restored cwnd");
        // A timeout: one segment, and the cwnd from before once everything outstanding then is acknowledged.
        let mut b = probe_bw(Phase::Cruise);
        let w = window(100.0);
        assert_eq!(
            b.on_congestion(&w, &event(EventKind::Timeout, 100.0)),
            Response::Reduce { ssthresh: 1e9, cwnd: 1.0 }
        );
        assert_eq!(
            b.inflight_lo(),
            100.0,
            "not probing: inflight_lo starts from the cwnd before the timeout"
        );
        let mut w = window(5.0);
        b.on_timeout_recovered(&mut w, secs(1));
        assert_eq!(w.cwnd, 100.0);
    }

    #[test]
    fn with_packet_conservation_the_first_round_of_recovery_keeps_pipe_plus_delivered() {
        let mut b = probe_bw(Phase::Cruise);
        b.config.packet_conservation = true;
        let mut w = window(100.0);
        let _ = b.on_congestion(&w, &event(EventKind::FastRetransmit, 100.0));
        let recovery = |b: &Bbr3, now: Time, delivered: u64, pipe: u64, round_start: bool| {
            let mut a = with_rate(b, ack(now, delivered, pipe), BW, round_start);
            a.phase = AckPhase::Recovery;
            a
        };
        let a = recovery(&b, millis(1), 2, 60, false);
        b.on_ack(&mut w, &a);
        assert_eq!(w.cwnd, 62.0);
        let a = recovery(&b, millis(2), 1, 50, false);
        b.on_ack(&mut w, &a);
        assert_eq!(w.cwnd, 62.0, "never below pipe + delivered, no growth");
        // The loss round, whose end would cut inflight_lo (tested above), is kept open here.
        b.loss_round_delivered = u64::MAX;
        let a = recovery(&b, millis(41), 3, 50, true);
        b.on_ack(&mut w, &a);
        assert_eq!(w.cwnd, 65.0, "the next round grows by the delivered segments");
    }

    #[test]
    fn metrics_publish_the_model() {
        let mut b = probe_bw(Phase::Up);
        b.inflight_hi = 80.0;
        b.bw_lo = BW / 2.0;
        let mut log = cclab_wire::metrics::MetricLog::default();
        b.metrics(&mut Metrics::new(&mut log));
        let names: Vec<&str> = log.0.iter().map(|(n, _)| n.as_str()).collect();
        let listed: Vec<&str> = DESCRIPTOR.metrics.iter().map(|m| m.name).collect();
        assert_eq!(names, listed);
        for (name, value) in [
            ("state", 2.0),
            ("phase", 4.0),
            ("max_bw", BW * 8.0),
            ("bw_lo", BW * 4.0),
            ("inflight_hi", 80.0),
            ("inflight_lo", 0.0),
            ("min_rtt", 0.04),
            ("pacing_gain", 1.25),
            ("ecn_alpha", 1.0),
        ] {
            assert!(log.0.contains(&(name.to_string(), value)), "{name}: {:?}", log.0);
        }
    }
}
