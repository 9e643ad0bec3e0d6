//! PIE, Proportional Integral controller Enhanced (Pan, Natarajan, Baker and
//! White, RFC 8033, February 2017): arrivals are dropped (or ECN-marked) with
//! a probability that a PI controller steers, every `tupdate`, so that the
//! queueing delay stays near `target`. The rules, by RFC 8033 section, with
//! the pseudocode of its Appendix A (basic PIE) and Appendix B (PIE with the
//! optional enhancements) where the text leaves a detail open:
//!
//! - §4.1, random dropping, at each arrival that fits the buffer: it is
//!   accepted while the burst allowance lasts (§4.4); it is accepted when the
//!   delay of the last update, `qdelay_old`, is below `target / 2` while
//!   `drop_prob < 0.2`, or when at most `2 mean_packet_size` bytes wait
//!   (before it); otherwise a uniform draw below `drop_prob` chooses it.
//! - §4.2, every `tupdate`: `p = alpha (qdelay - target) + beta (qdelay -
//!   qdelay_old)` (delays in seconds, alpha and beta in 1/s), divided by
//!   2048, 512, 128, 32, 8 or 2 while `drop_prob` is below 1e-6, 1e-5, 1e-4,
//!   1e-3, 1e-2 or 0.1 (the auto-tuning table); `drop_prob += p`; if `qdelay`
//!   and `qdelay_old` are both 0, `drop_prob *= 0.98`; `drop_prob` is bounded
//!   to [0, 1]; `qdelay_old = qdelay`. `alpha` and `beta` are used as
//!   given whatever `tupdate` is: §4.2 tunes them for 15 ms and asks that a
//!   halved `tupdate` come with alpha halved and beta raised by alpha / 4;
//!   that is left to the scenario, as in ns-3 and Linux.
//! - §4.3, the delay `qdelay` is by default the sojourn time of the packet
//!   last dequeued, and 0 once a dequeue empties the queue (Linux
//!   `pie_process_dequeue` with `dq_rate_estimator` off, and ns-3's
//!   `PieQueueDisc::DoDequeue`: without that reset the idle decay of §4.2
//!   could never start). With `dq_rate_estimator` it is §5.2's estimate.
//! - §4.4, the burst allowance starts at `max_burst`, loses `tupdate` at
//!   every update down to 0, and is set back to `max_burst` by an arrival
//!   (one the buffer refuses included) that finds `drop_prob` 0 and both
//!   `qdelay` and `qdelay_old` below `target / 2` (Appendix A's `enque`).
//!   The probability keeps being updated during the allowance; only the
//!   random drop is skipped.
//! - §5.1, with `ecn`, a chosen ECN-capable packet is marked (CE) while
//!   `drop_prob` is at most 10 %, and dropped above; other chosen packets are
//!   dropped. "At most" is Linux's `prob <= MAX_PROB / 10`: Appendix B's
//!   pseudocode marks only while `drop_prob_ < MAX_ECNTH`, as ns-3 and
//!   FreeBSD do; the two differ only at exactly 10 %.
//! - §5.2, with `dq_rate_estimator`: a measurement starts at a departure that
//!   leaves at least `dq_threshold` bytes queued, counts the bytes that
//!   depart after it, and ends at the departure that brings the count to
//!   `dq_threshold`: its duration is averaged into `avg_dq_time` (the first
//!   sample as is, then with weight `dq_threshold / 2^16`), and each update
//!   takes `qdelay = queued bytes x avg_dq_time / dq_threshold` (0 before
//!   the first sample).
//! - §5.4, with `derandomize`: `accu_prob` (reset when `drop_prob` is 0,
//!   when the draw chooses, after each chosen arrival, marked or dropped, as
//!   Appendix B's `enque` reads (its `accu_prob_ = 0` follows the unbraced
//!   mark-or-drop; Linux and ns-3 reset at drops only, so a certain choice
//!   that ends in a mark leaves their sum above 8.5 and every later
//!   ECN-capable arrival marked), and at a tail drop) accumulates `drop_prob`
//!   at each arrival past the early accepts; no draw below 0.85, a certain
//!   choice from 8.5 on, the draw between. The burst allowance counts as an
//!   early accept (as in Linux `pie_drop_early`): Appendix B's `enque` calls
//!   `drop_early()` before it tests the allowance, so its sum also grows
//!   during the allowance.
//! - §5.5, with `cap_drop_adjustment` (ns-3's default), a step `p` is capped
//!   at 0.02 while `drop_prob >= 0.1`.
//! - The buffer is the hard limit: an arrival that does not fit is dropped
//!   (tail drop, before any of the above, as in Appendix B and ns-3).
//!
//! Not modelled: §5.3's switch between active and inactive (ns-3's default
//! `ActiveThreshold` leaves it off), byte mode (Linux `bytemode`, off by
//! default; ns-3 scales `drop_prob` by size over `MeanPktSize` when its
//! limit is in bytes), and Linux's own additions (a +2 % step above 250 ms
//! of delay, no decay while packets wait, the cap always on).
//!
//! ## No timer
//!
//! The engine calls a discipline only at arrivals and dequeues. The updates
//! fall at `k tupdate`, k = 1, 2, ... from the start of the run; each
//! `enqueue` and `dequeue` first runs, in order, every update due at or
//! before its `now` (an update at the instant of an arrival or dequeue goes
//! before it). That is exact: an update reads `drop_prob`, `qdelay_old`, the
//! burst allowance and `qdelay`, which change only at updates and at calls
//! (the sojourn at a dequeue; the queued bytes and `avg_dq_time` at
//! arrivals and dequeues), so every update due since the last call sees what
//! it would have seen at its own time. Updates draw nothing. Once
//! `drop_prob`, `qdelay` and `qdelay_old` are all 0 an update changes only
//! the burst allowance, so a long idle period is skipped in one step. A
//! metric sampled between calls shows the state of the last call. The
//! catch-up is `periodic.rs`'s, shared with DualPI2.
//!
//! ## Against Linux and ns-3
//!
//! The defaults are ns-3.44's `PieQueueDisc` attributes (`pie-queue-disc.cc`,
//! nsnam/ns-3-dev): `QueueDelayReference` 15 ms, `Tupdate` 15 ms, `A`
//! 0.125, `B` 1.25, `MaxBurstAllowance` 150 ms, `MeanPktSize` 1000 B,
//! `DequeueThreshold` 16384 B, `UseDequeueRateEstimator` false (so the
//! timestamp delay, also Linux's default), `UseEcn` false,
//! `MarkEcnThreshold` 0.1, `UseDerandomization` false,
//! `UseCapDropAdjustment` true, which are RFC 8033's recommendations where
//! it makes one (QDELAY_REF, T_UPDATE, alpha, beta, MAX_BURST, DQ_THRESHOLD,
//! the 10 % marking threshold). Where ns-3 departs from the RFC, this
//! follows the RFC:
//!
//! - ns-3 keeps `drop_prob` at 0 while the burst allowance lasts, arms the
//!   allowance at its first early-drop check (not at start) and re-arms it
//!   only after 1.5 s (`BURST_RESET_TIMEOUT`) of low delay; its first update
//!   is at time 0 (`Supdate`);
//! - ns-3's early accept on length counts packets (at most 2) when its limit
//!   is in packets; here it is bytes against `2 mean_packet_size`, always;
//! - ns-3 drops when its draw is at most `drop_prob` (here: below, as the
//!   RFC), and resets `accu_prob` only at drops (here also after a mark and
//!   when the draw chooses, as Appendix B);
//! - ns-3's rate estimator averages the rate `bytes / time` with weight 0.5
//!   (Linux: 1/8) over measurements that restart while more than the
//!   threshold waits; here it is §5.2's dequeue time with weight
//!   `dq_threshold / 2^16`.

use super::periodic::{self, Clock, Periodic};
use super::{
    droptail, Admission, BufferLimit, DequeueDiscipline, Dequeued, Discipline, Dropped, QueueDescriptor,
    QueueLink, QueueOccupancy, Queued,
};
use crate::rng::RngStream;
use cclab_wire::time::{to_secs_f64, Time};
use cclab_wire::{
    Descriptor, MetricDesc, Metrics, ParamDefault, ParamError, ParamType, Parameter, Params, Role,
};
use std::collections::VecDeque;

pub const DESCRIPTOR: QueueDescriptor = Descriptor {
    name: "pie",
    role: Role::QueueDiscipline,
    summary: "Proportional Integral controller Enhanced: drops (or ECN-marks) arrivals with a probability a PI controller updates from the queueing delay",
    source: "RFC 8033 (Pan et al., 2017) §4, §5.1, §5.2, §5.4, §5.5 and Appendices A-B; defaults of ns-3.44 PieQueueDisc (pie-queue-disc.cc); timestamp delay as Linux net/sched/sch_pie.c",
    parameters: &[
        Parameter {
            name: "target",
            ty: ParamType::Duration,
            unit: "",
            min: 0.0,
            max: 10.0,
            default: ParamDefault::Value("15ms"),
            meaning: "the delay the controller steers to, above 0 (RFC 8033 QDELAY_REF, ns-3 QueueDelayReference)",
        },
        Parameter {
            name: "tupdate",
            ty: ParamType::Duration,
            unit: "",
            min: 1e-6,
            max: 10.0,
            default: ParamDefault::Value("15ms"),
            meaning: "the period of the drop probability's update, at least 1 us (RFC 8033 T_UPDATE, ns-3 Tupdate)",
        },
        Parameter {
            name: "alpha",
            ty: ParamType::Number,
            unit: "1/s",
            min: 0.0,
            max: 100.0,
            default: ParamDefault::Value("0.125"),
            meaning: "weight of the delay's distance from target in each update, before auto-tuning (RFC 8033 alpha, ns-3 A)",
        },
        Parameter {
            name: "beta",
            ty: ParamType::Number,
            unit: "1/s",
            min: 0.0,
            max: 100.0,
            default: ParamDefault::Value("1.25"),
            meaning: "weight of the delay's change since the last update, before auto-tuning (RFC 8033 beta, ns-3 B)",
        },
        Parameter {
            name: "max_burst",
            ty: ParamType::Duration,
            unit: "",
            min: 0.0,
            max: 100.0,
            default: ParamDefault::Value("150ms"),
            meaning: "burst allowance: no random drop until this long of updates after the start or after congestion went away (RFC 8033 MAX_BURST, ns-3 MaxBurstAllowance)",
        },
        Parameter {
            name: "ecn",
            ty: ParamType::Bool,
            unit: "",
            min: 0.0,
            max: 0.0,
            default: ParamDefault::Value("false"),
            meaning: "mark a chosen ECN-capable packet (CE) instead of dropping it while the probability is at most 10 % (RFC 8033 §5.1, ns-3 UseEcn)",
        },
        Parameter {
            name: "mean_packet_size",
            ty: ParamType::Size,
            unit: "B",
            min: 1.0,
            max: 1e6,
            default: ParamDefault::Value("1000B"),
            meaning: "no random drop while at most twice this many bytes wait (RFC 8033 MEAN_PKTSIZE, ns-3 MeanPktSize)",
        },
        Parameter {
            name: "dq_rate_estimator",
            ty: ParamType::Bool,
            unit: "",
            min: 0.0,
            max: 0.0,
            default: ParamDefault::Value("false"),
            meaning: "estimate the delay from the dequeue rate (RFC 8033 §5.2) instead of the last dequeued packet's sojourn time (ns-3 UseDequeueRateEstimator)",
        },
        Parameter {
            name: "dq_threshold",
            ty: ParamType::Size,
            unit: "B",
            min: 1.0,
            max: 65536.0,
            default: ParamDefault::Value("16384B"),
            meaning: "with dq_rate_estimator, the bytes a dequeue-rate measurement spans, at most 64 KiB (RFC 8033 DQ_THRESHOLD, ns-3 DequeueThreshold)",
        },
        Parameter {
            name: "derandomize",
            ty: ParamType::Bool,
            unit: "",
            min: 0.0,
            max: 0.0,
            default: ParamDefault::Value("false"),
            meaning: "accumulate the probability over arrivals: no drop below 0.85, a certain one from 8.5 (RFC 8033 §5.4, ns-3 UseDerandomization)",
        },
        Parameter {
            name: "cap_drop_adjustment",
            ty: ParamType::Bool,
            unit: "",
            min: 0.0,
            max: 0.0,
            default: ParamDefault::Value("true"),
            meaning: "raise the probability by at most 0.02 per update once it is 0.1 or more (RFC 8033 §5.5, ns-3 UseCapDropAdjustment)",
        },
    ],
    metrics: &[DROP_PROB, QDELAY_MS, BURST_ALLOWANCE_MS, DROPS],
    build,
};

pub const DROP_PROB: MetricDesc = MetricDesc {
    name: "pie.drop_prob",
    unit: "",
    meaning: "PIE's drop probability (as of the last arrival or dequeue)",
};
pub const QDELAY_MS: MetricDesc = MetricDesc {
    name: "pie.qdelay_ms",
    unit: "ms",
    meaning: "PIE's current queueing-delay estimate: the last dequeued packet's sojourn, or the dequeue-rate estimate of the last update",
};
pub const BURST_ALLOWANCE_MS: MetricDesc =
    MetricDesc { name: "pie.burst_allowance_ms", unit: "ms", meaning: "PIE's burst allowance left" };
pub const DROPS: MetricDesc = MetricDesc {
    name: "pie.drops",
    unit: "packets",
    meaning: "arrivals PIE's random test dropped so far (not counting buffer overflow)",
};

/// Above this probability a chosen ECN-capable packet is dropped, not marked (RFC 8033 §5.1).
pub const MARK_ECN_THRESHOLD: f64 = 0.1;
/// `drop_prob` below which a low `qdelay_old` skips the random drop (RFC 8033 §4.1).
const WORK_CONSERVING_PROB: f64 = 0.2;
/// The auto-tuning table (RFC 8033 §4.2): while `drop_prob` is below the
/// first number, the step is divided by the second; 1 from 0.1 up.
const AUTO_TUNE: [(f64, f64); 6] =
    [(0.000001, 2048.0), (0.00001, 512.0), (0.0001, 128.0), (0.001, 32.0), (0.01, 8.0), (0.1, 2.0)];
/// The decay per update once the delay has been 0 twice (RFC 8033 §4.2).
const DECAY: f64 = 0.98;
/// Cap drop adjustment (RFC 8033 §5.5): from this probability up, a step is at most `CAP_STEP`.
const CAP_ABOVE: f64 = 0.1;
const CAP_STEP: f64 = 0.02;
/// Derandomization (RFC 8033 §5.4): no drop below, a certain drop from.
const ACCU_LOW: f64 = 0.85;
const ACCU_HIGH: f64 = 8.5;
/// The dequeue-time average's weight is `dq_threshold` over this (RFC 8033 §5.2).
const DQ_WEIGHT_BASE: f64 = 65536.0;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    pub target: Time,
    pub tupdate: Time,
    pub alpha: f64,
    pub beta: f64,
    pub max_burst: Time,
    pub ecn: bool,
    pub mean_packet_bytes: u64,
    pub dq_rate_estimator: bool,
    pub dq_threshold: u64,
    pub derandomize: bool,
    pub cap_drop_adjustment: bool,
}

/// A duration parameter, which has a default and so is always there.
fn duration(p: &Params, name: &str) -> Result<Time, ParamError> {
    p.duration(name)?
        .ok_or(ParamError { name: name.into(), problem: "missing (not resolved by the validator)" })
}

impl Config {
    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        let config = Self {
            target: duration(p, "target")?,
            tupdate: duration(p, "tupdate")?,
            alpha: p.number("alpha")?,
            beta: p.number("beta")?,
            max_burst: duration(p, "max_burst")?,
            ecn: p.bool("ecn")?,
            mean_packet_bytes: p.size("mean_packet_size")?,
            dq_rate_estimator: p.bool("dq_rate_estimator")?,
            dq_threshold: p.size("dq_threshold")?,
            derandomize: p.bool("derandomize")?,
            cap_drop_adjustment: p.bool("cap_drop_adjustment")?,
        };
        let problem = |name: &str, problem| Err(ParamError { name: name.into(), problem });
        if config.target == 0 {
            return problem("target", "must be above 0: the controller steers the delay to it");
        }
        if config.tupdate == 0 {
            return problem("tupdate", "must be above 0: the probability is updated every tupdate");
        }
        if config.alpha.is_nan() || config.alpha < 0.0 {
            return problem(
                "alpha",
                "must be at least 0: a negative weight pushes the delay away from target",
            );
        }
        if config.beta.is_nan() || config.beta < 0.0 {
            return problem("beta", "must be at least 0: a negative weight amplifies the delay's changes");
        }
        if config.alpha == 0.0 && config.beta == 0.0 {
            return problem("alpha", "alpha and beta must not both be 0: the probability would never move");
        }
        if config.mean_packet_bytes == 0 {
            return problem("mean_packet_size", "must be at least 1 byte");
        }
        if config.dq_threshold == 0 || config.dq_threshold as f64 > DQ_WEIGHT_BASE {
            return problem(
                "dq_threshold",
                "must be in [1 B, 64 KiB]: the average's weight is dq_threshold / 64 KiB",
            );
        }
        Ok(config)
    }

    fn half_target(&self) -> f64 {
        to_secs_f64(self.target) / 2.0
    }

    /// One periodic update of `s` from its `qdelay` (RFC 8033 §4.2, §4.4's
    /// decrement of the burst allowance, §5.5's cap).
    pub fn update(&self, s: &mut Controller) {
        let mut p =
            self.alpha * (s.qdelay - to_secs_f64(self.target)) + self.beta * (s.qdelay - s.qdelay_old);
        p /= auto_tune_divisor(s.drop_prob);
        if self.cap_drop_adjustment && s.drop_prob >= CAP_ABOVE && p > CAP_STEP {
            p = CAP_STEP;
        }
        let mut prob = s.drop_prob + p;
        if s.qdelay == 0.0 && s.qdelay_old == 0.0 {
            prob *= DECAY;
        }
        s.drop_prob = prob.clamp(0.0, 1.0);
        s.qdelay_old = s.qdelay;
        s.burst_allowance = s.burst_allowance.saturating_sub(self.tupdate);
    }
}

/// What the step is divided by at this `drop_prob` (RFC 8033 §4.2's table).
pub fn auto_tune_divisor(drop_prob: f64) -> f64 {
    AUTO_TUNE.iter().find(|&&(below, _)| drop_prob < below).map_or(1.0, |&(_, divisor)| divisor)
}

/// The controller's state (RFC 8033's `PIE->...` variables).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Controller {
    pub drop_prob: f64,
    /// `current_qdelay`, in seconds.
    pub qdelay: f64,
    /// The delay at the last update, in seconds.
    pub qdelay_old: f64,
    pub burst_allowance: Time,
}

/// RFC 8033 §5.2's dequeue-rate estimate, kept in the time `threshold`
/// bytes take to depart.
#[derive(Clone, Copy, Debug, PartialEq)]
struct RateEstimator {
    threshold: u64,
    in_measurement: bool,
    measurement_start: Time,
    /// Bytes departed since the measurement started.
    count: u64,
    /// Seconds to dequeue `threshold` bytes, averaged; 0 before the first sample.
    avg_dq_time: f64,
}

impl RateEstimator {
    fn new(threshold: u64) -> Self {
        Self { threshold, in_measurement: false, measurement_start: 0, count: 0, avg_dq_time: 0.0 }
    }

    /// A packet of `bytes` departed at `now`, leaving `left` bytes queued.
    fn on_departure(&mut self, now: Time, bytes: u64, left: u64) {
        if self.in_measurement {
            self.count += bytes;
            if self.count >= self.threshold {
                let dq_time = to_secs_f64(now.saturating_sub(self.measurement_start));
                self.avg_dq_time = if self.avg_dq_time == 0.0 {
                    dq_time
                } else {
                    let weight = self.threshold as f64 / DQ_WEIGHT_BASE;
                    dq_time * weight + self.avg_dq_time * (1.0 - weight)
                };
                self.in_measurement = false;
            }
        }
        if !self.in_measurement && left >= self.threshold {
            self.in_measurement = true;
            self.measurement_start = now;
            self.count = 0;
        }
    }

    /// The delay of `bytes` queued, by Little's law (0 before the first sample).
    fn qdelay(&self, bytes: u64) -> f64 {
        bytes as f64 * self.avg_dq_time / self.threshold as f64
    }
}

fn build(p: &Params, link: QueueLink) -> Result<Discipline, ParamError> {
    let config = Config::from_params(p)?;
    Ok(Discipline::Dequeue(Box::new(Pie::new(config, link))))
}

pub struct Pie {
    config: Config,
    buffer: BufferLimit,
    packets: VecDeque<Queued>,
    bytes: u64,
    state: Controller,
    rate: RateEstimator,
    /// When the next periodic update is due.
    clock: Clock,
    /// Derandomization's accumulated probability (RFC 8033 `accu_prob_`).
    accu_prob: f64,
    /// Arrivals the random test dropped.
    drops: u64,
    rng: RngStream,
    /// `drop_prob` after each update, skipped ones included.
    #[cfg(test)]
    updates: Vec<f64>,
    /// Updates skipped at rest.
    #[cfg(test)]
    skipped: u64,
}

impl Pie {
    pub fn new(config: Config, link: QueueLink) -> Self {
        Self {
            buffer: link.buffer,
            packets: VecDeque::new(),
            bytes: 0,
            state: Controller {
                drop_prob: 0.0,
                qdelay: 0.0,
                qdelay_old: 0.0,
                burst_allowance: config.max_burst,
            },
            rate: RateEstimator::new(config.dq_threshold),
            clock: Clock::new(config.tupdate),
            accu_prob: 0.0,
            drops: 0,
            rng: link.rng,
            config,
            #[cfg(test)]
            updates: Vec::new(),
            #[cfg(test)]
            skipped: 0,
        }
    }

    pub fn controller(&self) -> Controller {
        self.state
    }

    /// The delay the next update will use.
    fn next_qdelay(&self) -> f64 {
        if self.config.dq_rate_estimator {
            self.rate.qdelay(self.bytes)
        } else {
            self.state.qdelay
        }
    }

    /// One periodic update, now.
    fn update(&mut self) {
        self.state.qdelay = self.next_qdelay();
        self.config.update(&mut self.state);
        #[cfg(test)]
        self.updates.push(self.state.drop_prob);
    }

    /// Runs every update due at or before `now`, in order.
    fn advance(&mut self, now: Time) {
        periodic::catch_up(self, now);
    }

    /// The random draw below `drop_prob` (none when it is 0).
    fn draw(&mut self) -> bool {
        let chosen = self.state.drop_prob > 0.0 && self.rng.bernoulli(self.state.drop_prob);
        if chosen {
            self.accu_prob = 0.0;
        }
        chosen
    }

    /// Whether the AQM chooses an arrival that fits the buffer (RFC 8033
    /// §4.1's `drop_early`, with §4.4's burst allowance and §5.4).
    fn choose(&mut self) -> bool {
        let c = self.config;
        let s = self.state;
        if s.burst_allowance > 0 {
            return false;
        }
        let quiet = s.qdelay_old < c.half_target() && s.drop_prob < WORK_CONSERVING_PROB;
        if quiet || self.bytes <= 2 * c.mean_packet_bytes {
            return false;
        }
        if !c.derandomize {
            return self.draw();
        }
        if s.drop_prob == 0.0 {
            self.accu_prob = 0.0;
        }
        self.accu_prob += s.drop_prob;
        if self.accu_prob < ACCU_LOW {
            false
        } else if self.accu_prob >= ACCU_HIGH {
            true
        } else {
            self.draw()
        }
    }
}

impl Periodic for Pie {
    fn clock(&mut self) -> &mut Clock {
        &mut self.clock
    }

    fn update_at(&mut self, _: Time) {
        self.update();
    }

    /// With `drop_prob`, the delay and the old delay all 0, an update's step
    /// is at most 0 (alpha >= 0) and the bound brings the probability back
    /// to 0: it changes only the burst allowance.
    fn at_rest(&self) -> bool {
        let s = &self.state;
        s.drop_prob == 0.0 && s.qdelay == 0.0 && s.qdelay_old == 0.0 && self.next_qdelay() == 0.0
    }

    fn rest(&mut self, _due: u64, span: Time) {
        self.state.burst_allowance = self.state.burst_allowance.saturating_sub(span);
        #[cfg(test)]
        {
            self.updates.extend(std::iter::repeat_n(0.0, _due as usize));
            self.skipped += _due;
        }
    }
}

impl DequeueDiscipline for Pie {
    fn name(&self) -> &'static str {
        "pie"
    }

    fn enqueue(&mut self, now: Time, packet: Queued, _: &mut Vec<Dropped>) -> Admission {
        self.advance(now);
        let half = self.config.half_target();
        let s = &mut self.state;
        if s.drop_prob == 0.0 && s.qdelay < half && s.qdelay_old < half {
            s.burst_allowance = self.config.max_burst;
        }
        if !droptail::fits(self.buffer, self.occupancy(), packet.packet.wire_bytes) {
            self.accu_prob = 0.0;
            return Admission::Drop;
        }
        let admission = if !self.choose() {
            Admission::Enqueue
        } else {
            // Appendix B's `enque`: the sum restarts after the chosen
            // arrival is marked or dropped (after a mark too: a certain
            // choice at 8.5 would otherwise mark every later arrival).
            self.accu_prob = 0.0;
            if self.config.ecn && packet.packet.ect.capable() && self.state.drop_prob <= MARK_ECN_THRESHOLD {
                Admission::EnqueueMarked
            } else {
                self.drops += 1;
                Admission::EarlyDrop
            }
        };
        if admission != Admission::EarlyDrop {
            self.bytes += packet.packet.wire_bytes as u64;
            self.packets.push_back(packet);
        }
        admission
    }

    fn dequeue(&mut self, now: Time, _: &mut Vec<Dropped>) -> Option<Dequeued> {
        self.advance(now);
        let packet = self.packets.pop_front()?;
        let bytes = packet.packet.wire_bytes as u64;
        self.bytes -= bytes;
        if self.config.dq_rate_estimator {
            self.rate.on_departure(now, bytes, self.bytes);
        } else if self.packets.is_empty() {
            self.state.qdelay = 0.0;
        } else {
            self.state.qdelay = to_secs_f64(packet.sojourn(now));
        }
        Some(Dequeued { packet, marked: false })
    }

    fn occupancy(&self) -> QueueOccupancy {
        QueueOccupancy { packets: self.packets.len() as u64, bytes: self.bytes }
    }

    fn metrics(&self, m: &mut Metrics) {
        m.put(DROP_PROB.name, self.state.drop_prob);
        m.put(QDELAY_MS.name, self.state.qdelay * 1e3);
        m.put(BURST_ALLOWANCE_MS.name, self.state.burst_allowance as f64 / 1e6);
        m.put(DROPS.name, self.drops as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::Seq;
    use crate::pool::PacketRef;
    use cclab_wire::time::{millis, secs};
    use cclab_wire::MetricLog;

    fn config() -> Config {
        Config {
            target: millis(15),
            tupdate: millis(15),
            alpha: 0.125,
            beta: 1.25,
            max_burst: millis(150),
            ecn: false,
            mean_packet_bytes: 1000,
            dq_rate_estimator: false,
            dq_threshold: 16384,
            derandomize: false,
            cap_drop_adjustment: true,
        }
    }

    fn pie_seeded(config: Config, buffer: BufferLimit, seed: u64) -> Pie {
        Pie::new(config, QueueLink { buffer, rate_bps: 10_000_000, rng: RngStream::new(seed, "pie-test") })
    }

    fn pie(config: Config, buffer: BufferLimit) -> Pie {
        pie_seeded(config, buffer, 7)
    }

    fn queued(bytes: u32, ect: bool, at: Time) -> Queued {
        let packet =
            PacketRef { id: 0, dst: 0, wire_bytes: bytes, ect: crate::queue::test_support::codepoint(ect) };
        Queued { packet, enqueued_at: at, flow: 0, seq: Seq::default() }
    }

    /// A controller with these delays in milliseconds and no burst allowance.
    fn state(drop_prob: f64, qdelay_ms: f64, qdelay_old_ms: f64) -> Controller {
        Controller { drop_prob, qdelay: qdelay_ms / 1e3, qdelay_old: qdelay_old_ms / 1e3, burst_allowance: 0 }
    }

    fn after_update(c: Config, mut s: Controller) -> f64 {
        c.update(&mut s);
        s.drop_prob
    }

    fn assert_close(got: f64, expected: f64) {
        assert!((got - expected).abs() <= 1e-12 * expected.abs().max(1e-3), "got {got}, expected {expected}");
    }

    #[test]
    fn the_pi_update_adds_alpha_times_the_distance_and_beta_times_the_change() {
        let c = config();
        // drop_prob 0.5: no auto-tuning; 0.125 x 0.010 + 1.25 x 0.005 = 0.0075.
        assert_close(after_update(c, state(0.5, 25.0, 20.0)), 0.5075);
        // Below target and falling: -0.00125 - 0.00625.
        assert_close(after_update(c, state(0.5, 5.0, 10.0)), 0.4925);
        // Only the distance from target: 0.125 x 0.010.
        assert_close(after_update(c, state(0.5, 25.0, 25.0)), 0.50125);
        // At target and steady: no change.
        assert_eq!(after_update(c, state(0.5, 15.0, 15.0)), 0.5);
        // The update keeps this delay as the old one.
        let mut s = state(0.5, 25.0, 20.0);
        c.update(&mut s);
        assert_eq!((s.qdelay, s.qdelay_old), (0.025, 0.025));
    }

    #[test]
    fn auto_tuning_divides_the_step_by_the_rfc_table() {
        let c = config();
        // qdelay = qdelay_old = 23 ms: a raw step of 0.125 x 0.008 = 0.001.
        let bands = [
            (0.0, 2048.0),
            (0.000_000_9, 2048.0),
            (0.000_001, 512.0),
            (0.000_009, 512.0),
            (0.000_01, 128.0),
            (0.000_09, 128.0),
            (0.000_1, 32.0),
            (0.000_9, 32.0),
            (0.001, 8.0),
            (0.009, 8.0),
            (0.01, 2.0),
            (0.09, 2.0),
            (0.1, 1.0),
            (0.5, 1.0),
        ];
        for (p, divisor) in bands {
            assert_eq!(auto_tune_divisor(p), divisor, "drop_prob {p}");
            let step = after_update(c, state(p, 23.0, 23.0)) - p;
            assert!((step - 0.001 / divisor).abs() < 1e-9 * 0.001 / divisor, "drop_prob {p}: step {step}");
        }
        // The beta term is scaled too: 1.25 x 0.001 / 2048 from 0.
        assert_close(after_update(c, state(0.0, 15.0, 14.0)), 1.25 * 0.001 / 2048.0);
    }

    #[test]
    fn from_ten_percent_up_a_step_is_capped_at_two_percent() {
        let capped = config();
        let uncapped = Config { cap_drop_adjustment: false, ..capped };
        // 0.125 x 0.185 + 1.25 x 0.1 = 0.148125.
        assert_close(after_update(capped, state(0.15, 200.0, 100.0)), 0.17);
        assert_close(after_update(uncapped, state(0.15, 200.0, 100.0)), 0.298125);
        // Below 0.1 the halved step is not capped: 0.09 + 0.0740625.
        assert_close(after_update(capped, state(0.09, 200.0, 100.0)), 0.1640625);
        // Decreases are not capped: 0.5 - 0.001875 - 0.375.
        assert_close(after_update(capped, state(0.5, 0.0, 300.0)), 0.123125);
    }

    #[test]
    fn the_probability_decays_by_two_percent_once_the_delay_was_zero_twice() {
        let c = config();
        // (0.5 - 0.125 x 0.015) x 0.98.
        assert_close(after_update(c, state(0.5, 0.0, 0.0)), 0.4881625);
        // At 0.001 the step is divided by 8 first: (0.001 - 0.001875 / 8) x 0.98.
        assert_close(after_update(c, state(0.001, 0.0, 0.0)), 0.0007503125);
        // One of the two delays above 0: no decay.
        assert_close(after_update(c, state(0.5, 0.0, 1.0)), 0.496875);
        assert_close(after_update(c, state(0.5, 1.0, 0.0)), 0.4995);
    }

    #[test]
    fn the_probability_stays_within_zero_and_one() {
        let c = config();
        assert_eq!(after_update(c, state(0.99, 300.0, 0.0)), 1.0);
        assert_eq!(after_update(Config { cap_drop_adjustment: false, ..c }, state(0.9, 900.0, 0.0)), 1.0);
        assert_eq!(after_update(c, state(0.000_000_1, 0.0, 500.0)), 0.0);
    }

    #[test]
    fn each_update_takes_tupdate_off_the_burst_allowance_down_to_zero() {
        let c = config();
        let mut s = Controller { burst_allowance: millis(150), ..state(0.0, 0.0, 0.0) };
        c.update(&mut s);
        assert_eq!(s.burst_allowance, millis(135));
        s.burst_allowance = millis(10);
        c.update(&mut s);
        assert_eq!(s.burst_allowance, 0);
        c.update(&mut s);
        assert_eq!(s.burst_allowance, 0);
    }

    /// A standing queue of 50 packets (sojourn 50 ms): the allowance starts at
    /// 150 ms, is restored by arrivals while the queue still looks empty
    /// (last at 7 ms, the last dequeue with a sojourn below 7.5 ms), then runs
    /// out at the tenth update (150 ms); random drops start only after.
    #[test]
    fn the_burst_allowance_starts_at_max_burst_and_runs_out_after_max_burst_of_updates() {
        let mut q = pie(config(), BufferLimit::Unlimited);
        let mut dropped = Vec::new();
        assert_eq!(q.controller().burst_allowance, millis(150));
        for _ in 0..50 {
            assert_eq!(q.enqueue(0, queued(1000, false, 0), &mut dropped), Admission::Enqueue);
        }
        let mut early_drops = 0;
        for ms in 1..=1000 {
            let now = millis(ms);
            assert!(q.dequeue(now, &mut dropped).is_some());
            let admission = q.enqueue(now, queued(1000, false, now), &mut dropped);
            let allowance = q.controller().burst_allowance;
            if ms <= 14 {
                assert_eq!(allowance, millis(150), "{ms} ms");
            } else if ms < 150 {
                assert_eq!(allowance, millis(150 - 15 * (ms / 15)), "{ms} ms");
            } else {
                assert_eq!(allowance, 0, "{ms} ms");
            }
            if allowance > 0 {
                assert_eq!(admission, Admission::Enqueue, "{ms} ms");
            }
            early_drops += (admission == Admission::EarlyDrop) as u32;
        }
        assert!(q.controller().drop_prob > 0.01, "{:?}", q.controller());
        assert!(early_drops > 0);
    }

    /// Puts `n` packets of 1000 bytes in `q` directly.
    fn fill(q: &mut Pie, n: u64) {
        for _ in 0..n {
            q.packets.push_back(queued(1000, false, 0));
            q.bytes += 1000;
        }
    }

    /// A queue of 3 packets and a certain drop: drop_prob 1, delays of 100 ms,
    /// no burst allowance.
    fn congested(config: Config) -> Pie {
        let mut q = pie(config, BufferLimit::Unlimited);
        q.state = state(1.0, 100.0, 100.0);
        fill(&mut q, 3);
        q
    }

    fn offer(q: &mut Pie, n: usize, ect: impl Fn(usize) -> bool) -> Vec<Admission> {
        // Before the first update (15 ms): the state stays as set.
        (0..n).map(|i| q.enqueue(1, queued(1000, ect(i), 1), &mut Vec::new())).collect()
    }

    fn count(outcomes: &[Admission], which: Admission) -> usize {
        outcomes.iter().filter(|&&a| a == which).count()
    }

    #[test]
    fn an_arrival_after_congestion_went_away_restores_the_burst_allowance() {
        let restores = |drop_prob: f64, qdelay_ms: f64, qdelay_old_ms: f64| {
            let mut q = pie(config(), BufferLimit::Unlimited);
            q.state = state(drop_prob, qdelay_ms, qdelay_old_ms);
            q.enqueue(1, queued(1000, false, 1), &mut Vec::new());
            q.controller().burst_allowance == millis(150)
        };
        assert!(restores(0.0, 7.4, 7.4));
        assert!(!restores(0.000_000_001, 7.4, 7.4));
        assert!(!restores(0.0, 7.5, 7.4));
        assert!(!restores(0.0, 7.4, 7.5));
    }

    #[test]
    fn random_drops_skip_the_burst_allowance_a_quiet_queue_and_a_short_queue() {
        // The reference case: everything chosen.
        assert_eq!(offer(&mut congested(config()), 5, |_| false), [Admission::EarlyDrop; 5]);

        // Burst allowance left: no random drop at all.
        let mut q = congested(config());
        q.state.burst_allowance = 1;
        assert_eq!(count(&offer(&mut q, 200, |_| false), Admission::Enqueue), 200);

        // qdelay_old below target / 2 and drop_prob below 0.2: none.
        let quiet = |drop_prob: f64, qdelay_old_ms: f64| {
            let mut q = congested(config());
            q.state = state(drop_prob, 100.0, qdelay_old_ms);
            count(&offer(&mut q, 500, |_| false), Admission::EarlyDrop)
        };
        assert_eq!(quiet(0.19, 7.4), 0);
        assert!(quiet(0.2, 7.4) > 50); // about 100 expected
        assert!(quiet(0.19, 7.5) > 50);

        // At most 2 mean_packet_size (2000) bytes waiting: none.
        let mut q = congested(config());
        q.packets.clear();
        q.bytes = 0;
        fill(&mut q, 2);
        assert_eq!(offer(&mut q, 1, |_| false), [Admission::Enqueue]);
        assert_eq!(offer(&mut q, 1, |_| false), [Admission::EarlyDrop]); // 3000 bytes
        let mut q = congested(config());
        q.bytes = 2001; // the byte count, not the packet count
        q.packets.truncate(2);
        assert_eq!(offer(&mut q, 1, |_| false), [Admission::EarlyDrop]);
    }

    #[test]
    fn with_ecn_chosen_ect_packets_are_marked_up_to_ten_percent_and_dropped_above() {
        let ecn = Config { ecn: true, ..config() };
        let at = |config: Config, drop_prob: f64| {
            let mut q = congested(config);
            q.state.drop_prob = drop_prob;
            offer(&mut q, 4000, |i| i % 2 == 0)
        };
        let low = at(ecn, 0.1);
        assert!(count(&low, Admission::EnqueueMarked) > 100, "about 200 expected");
        assert!(count(&low, Admission::EarlyDrop) > 100, "about 200 expected");
        for (i, a) in low.iter().enumerate() {
            let unexpected = if i % 2 == 0 { Admission::EarlyDrop } else { Admission::EnqueueMarked };
            assert_ne!(*a, unexpected, "arrival {i}");
        }
        let high = at(ecn, 0.100_000_1);
        assert!(count(&high, Admission::EarlyDrop) > 200, "about 400 expected");
        assert_eq!(count(&high, Admission::EnqueueMarked), 0);
        let without = at(config(), 0.1);
        assert!(count(&without, Admission::EarlyDrop) > 200);
        assert_eq!(count(&without, Admission::EnqueueMarked), 0);
    }

    #[test]
    fn a_full_buffer_drops_every_arrival() {
        let mut q = pie(config(), BufferLimit::Packets(3));
        let mut dropped = Vec::new();
        for _ in 0..3 {
            assert_eq!(q.enqueue(0, queued(1000, false, 0), &mut dropped), Admission::Enqueue);
        }
        // The burst allowance does not protect from the buffer.
        assert!(q.controller().burst_allowance > 0);
        for _ in 0..5 {
            assert_eq!(q.enqueue(0, queued(1000, false, 0), &mut dropped), Admission::Drop);
        }
        assert_eq!(q.occupancy(), QueueOccupancy { packets: 3, bytes: 3000 });
        assert_eq!(q.drops, 0); // pie.drops counts the random test's drops only
        assert!(dropped.is_empty());

        let mut q = pie(config(), BufferLimit::Bytes(2500));
        fill(&mut q, 2);
        q.accu_prob = 0.5;
        assert_eq!(q.enqueue(0, queued(501, false, 0), &mut dropped), Admission::Drop);
        assert_eq!(q.accu_prob, 0.0);
        assert_eq!(q.enqueue(0, queued(500, false, 0), &mut dropped), Admission::Enqueue);
    }

    /// The next draw of `q`'s stream is the next of a fresh twin after `used` draws.
    fn draws_used(q: &mut Pie, seed: u64, used: usize) -> bool {
        let mut twin = RngStream::new(seed, "pie-test");
        (0..used).for_each(|_| {
            twin.next_u64();
        });
        q.rng.next_u64() == twin.next_u64()
    }

    #[test]
    fn derandomization_accumulates_the_probability_between_draws() {
        let derandomized = Config { derandomize: true, ..config() };
        let mut q = congested(derandomized);
        q.state.drop_prob = 0.25;
        // 0.25, 0.5, 0.75: below 0.85, accepted without a draw.
        assert_eq!(offer(&mut q, 3, |_| false), [Admission::Enqueue; 3]);
        assert_eq!(q.accu_prob, 0.75);
        assert!(draws_used(&mut q, 7, 0));

        // From 8.5 on: dropped without a draw, and the sum restarts.
        let mut q = congested(derandomized);
        q.state.drop_prob = 0.125;
        q.accu_prob = 8.375;
        assert_eq!(offer(&mut q, 1, |_| false), [Admission::EarlyDrop]);
        assert_eq!(q.accu_prob, 0.0);
        assert!(draws_used(&mut q, 7, 0));

        // Between: one draw per arrival; a probability of 0 restarts the sum.
        let mut q = congested(derandomized);
        q.state.drop_prob = 0.5;
        q.accu_prob = 0.5;
        offer(&mut q, 1, |_| false);
        assert!(draws_used(&mut q, 7, 1));
        q.state.drop_prob = 0.0;
        q.accu_prob = 5.0;
        assert_eq!(offer(&mut q, 1, |_| false), [Admission::Enqueue]);
        assert_eq!(q.accu_prob, 0.0);
    }

    /// RFC 8033 Appendix B's `enque`, as written, sets `accu_prob_` back to 0
    /// after it acts on a chosen arrival, mark or drop (the statement follows
    /// the unbraced `if mark else drop`): a certain choice (the sum at 8.5 or
    /// more) that ends in an ECN mark restarts the sum as a drop does.
    /// Otherwise (Linux, ns-3: reset at drops only) the sum stays above 8.5
    /// and every later ECN-capable arrival is marked without a draw until a
    /// drop or a probability of 0.
    #[test]
    fn a_mark_restarts_the_accumulated_probability_as_a_drop_does() {
        let both = Config { derandomize: true, ecn: true, ..config() };
        let mut q = congested(both);
        q.state.drop_prob = 0.05;
        q.accu_prob = 8.46;
        // 8.51: chosen without a draw and marked; then 0.05: below 0.85.
        assert_eq!(offer(&mut q, 2, |_| true), [Admission::EnqueueMarked, Admission::Enqueue]);
        assert!((q.accu_prob - 0.05).abs() < 1e-12, "{}", q.accu_prob);
        assert!(draws_used(&mut q, 7, 0));

        // Over 400 arrivals the marks keep to about drop_prob (5 %, some 20),
        // not every arrival once the sum first reaches 8.5.
        let mut q = congested(both);
        q.state.drop_prob = 0.05;
        q.accu_prob = 8.46;
        let marks = count(&offer(&mut q, 400, |_| true), Admission::EnqueueMarked);
        assert!((5..=60).contains(&marks), "{marks} marks");
    }

    #[test]
    fn the_delay_is_the_last_dequeued_sojourn_and_zero_once_the_queue_empties() {
        let mut q = pie(config(), BufferLimit::Unlimited);
        let mut dropped = Vec::new();
        for at in [0, millis(3), millis(4)] {
            q.enqueue(at, queued(1000, false, at), &mut dropped);
        }
        q.dequeue(millis(10), &mut dropped);
        assert_eq!(q.controller().qdelay, 0.010);
        q.dequeue(millis(12), &mut dropped);
        assert_eq!(q.controller().qdelay, 0.009);
        q.dequeue(millis(13), &mut dropped);
        assert_eq!(q.controller().qdelay, 0.0);
    }

    #[test]
    fn the_rate_estimator_times_dq_threshold_bytes_and_averages_with_weight_threshold_over_64k() {
        let mut r = RateEstimator::new(16384);
        // 20 packets of 1000 bytes, one departing every millisecond from 1 ms.
        let mut left = 20_000;
        for ms in 1..=18 {
            left -= 1000;
            r.on_departure(millis(ms), 1000, left);
            if ms == 1 {
                // 19 000 bytes left: a measurement starts, the departing packet not counted.
                assert!(r.in_measurement && r.measurement_start == millis(1) && r.count == 0);
            }
            if ms == 17 {
                assert_eq!((r.count, r.avg_dq_time, r.qdelay(20_000)), (16_000, 0.0, 0.0));
            }
        }
        // 17 000 bytes departed in 17 ms: the first sample is taken as is;
        // 2000 bytes left: no new measurement.
        assert_eq!(r.avg_dq_time, 0.017);
        assert!(!r.in_measurement);
        // A second measurement of 21 ms: 0.25 x 0.021 + 0.75 x 0.017.
        r.on_departure(millis(100), 1000, 40_000);
        r.on_departure(millis(121), 16_384, 23_616);
        assert!((r.avg_dq_time - 0.018).abs() < 1e-15, "{}", r.avg_dq_time);
        // 23 616 bytes still queued: the next measurement starts at once.
        assert!(r.in_measurement && r.measurement_start == millis(121));
        // Little's law: 32 768 bytes at 0.018 s per 16 384 bytes.
        assert!((r.qdelay(32_768) - 0.036).abs() < 1e-15);
    }

    #[test]
    fn with_the_rate_estimator_each_update_takes_the_delay_of_the_bytes_queued_then() {
        let mut q = pie(Config { dq_rate_estimator: true, ..config() }, BufferLimit::Unlimited);
        q.rate.avg_dq_time = 0.016_384; // one microsecond per byte
        let mut dropped = Vec::new();
        for _ in 0..20 {
            q.enqueue(0, queued(1000, false, 0), &mut dropped);
        }
        assert_eq!(q.controller().qdelay, 0.0); // latched at updates only
        q.enqueue(millis(15), queued(1000, false, millis(15)), &mut dropped);
        let s = q.controller();
        assert!((s.qdelay - 0.020).abs() < 1e-15 && s.qdelay_old == s.qdelay, "{s:?}");
    }

    #[derive(Clone, Copy, Debug)]
    enum Step {
        Arrive { bytes: u32, ect: bool },
        Depart,
    }

    /// The updates' period in the patterns.
    const TICK: Time = millis(15);

    /// Arrivals and dequeues in phases of 500: overload, drain, balance, and
    /// idle periods of 0.1 s to 5 s after a drain. A tenth of the gaps are 0,
    /// a tenth end on an update time and some on whole milliseconds, so that
    /// events fall on update times.
    fn pattern(seed: u64, n: usize) -> Vec<(Time, Step)> {
        let mut r = RngStream::new(seed, "pie-pattern");
        let (mut t, mut held, mut arrive) = (0, 0u64, 0.6);
        let mut out = Vec::with_capacity(n + 1000);
        while out.len() < n {
            if out.len() % 500 == 0 {
                arrive = match r.uniform_inclusive(0, 5) {
                    0 => {
                        for _ in 0..held {
                            t += millis(1);
                            out.push((t, Step::Depart));
                        }
                        held = 0;
                        t += r.uniform_inclusive(millis(100), secs(5));
                        0.6
                    }
                    1 => 0.7,
                    2 => 0.55,
                    3 => 0.3,
                    _ => 0.5,
                };
            }
            t = match r.uniform_inclusive(0, 9) {
                0 => t,
                1 => (t / TICK + 1) * TICK,
                2..=4 => (t / millis(1) + r.uniform_inclusive(1, 2)) * millis(1),
                _ => t + r.uniform_inclusive(0, millis(2)),
            };
            if r.bernoulli(arrive) {
                held += 1;
                let bytes = r.uniform_inclusive(40, 1500) as u32;
                out.push((t, Step::Arrive { bytes, ect: r.bernoulli(0.5) }));
            } else {
                held = held.saturating_sub(1);
                out.push((t, Step::Depart));
            }
        }
        out
    }

    struct Run {
        admissions: Vec<Admission>,
        /// The state after each call.
        states: Vec<(Controller, f64, QueueOccupancy)>,
        updates: Vec<f64>,
        skipped: u64,
    }

    /// Plays `steps`; with `ticked`, every update is run explicitly at its
    /// time, before the calls at or after it, and the calls must find none due.
    fn play(config: Config, steps: &[(Time, Step)], seed: u64, ticked: bool) -> Run {
        let mut q = pie_seeded(config, BufferLimit::Packets(40), seed);
        let mut dropped = Vec::new();
        let tick_to = |q: &mut Pie, t: Time| {
            while q.clock.next <= t {
                q.update();
                q.clock.next += q.config.tupdate;
            }
        };
        let mut run = Run { admissions: Vec::new(), states: Vec::new(), updates: Vec::new(), skipped: 0 };
        for &(t, step) in steps {
            if ticked {
                tick_to(&mut q, t);
            }
            let updates = q.updates.len();
            match step {
                Step::Arrive { bytes, ect } => {
                    run.admissions.push(q.enqueue(t, queued(bytes, ect, t), &mut dropped))
                }
                Step::Depart => {
                    q.dequeue(t, &mut dropped);
                }
            }
            if ticked {
                assert_eq!(q.updates.len(), updates, "a call at {t} found an update due");
            }
            run.states.push((q.controller(), q.accu_prob, q.occupancy()));
        }
        let end = steps.last().map_or(0, |&(t, _)| t) + secs(10);
        if ticked {
            tick_to(&mut q, end);
        } else {
            q.advance(end);
        }
        assert!(dropped.is_empty());
        run.updates = std::mem::take(&mut q.updates);
        run.skipped = q.skipped;
        run
    }

    /// The lazy catch-up gives the same probability after every update and
    /// the same decisions as updates run at their times, with each delay
    /// estimator and the optional parts on and off.
    #[test]
    fn updates_caught_up_at_calls_equal_updates_run_at_their_times() {
        let steps = pattern(2024, 200_000);
        let variants = [
            config(),
            Config { ecn: true, derandomize: true, ..config() },
            Config { dq_rate_estimator: true, ..config() },
            Config { dq_rate_estimator: true, dq_threshold: 4096, ecn: true, derandomize: true, ..config() },
            Config { cap_drop_adjustment: false, max_burst: 0, ..config() },
        ];
        for config in variants {
            let lazy = play(config, &steps, 5, false);
            let ticked = play(config, &steps, 5, true);
            assert_eq!(lazy.updates.len(), ticked.updates.len(), "{config:?}");
            if let Some(i) = (0..lazy.updates.len()).find(|&i| lazy.updates[i] != ticked.updates[i]) {
                panic!("{config:?}: update {i}: {} lazily, {} ticked", lazy.updates[i], ticked.updates[i]);
            }
            if let Some(i) = (0..steps.len()).find(|&i| lazy.states[i] != ticked.states[i]) {
                panic!(
                    "{config:?}: after step {i}: {:?} lazily, {:?} ticked",
                    lazy.states[i], ticked.states[i]
                );
            }
            assert_eq!(lazy.admissions, ticked.admissions, "{config:?}");
            // The pattern exercises what it should.
            assert!(lazy.skipped > 1000 && ticked.skipped == 0, "{config:?}: {} skipped", lazy.skipped);
            let max = lazy.updates.iter().fold(0.0f64, |a, &b| a.max(b));
            assert!(max > 0.2, "{config:?}: drop_prob at most {max}");
            assert!(count(&lazy.admissions, Admission::EarlyDrop) > 100, "{config:?}");
            assert!(count(&lazy.admissions, Admission::Drop) > 100, "{config:?}");
            if config.ecn {
                assert!(count(&lazy.admissions, Admission::EnqueueMarked) > 30, "{config:?}");
            }
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_decisions_and_another_seed_others() {
        let steps = pattern(99, 20_000);
        let config = Config { ecn: true, ..config() };
        let decisions = |seed| play(config, &steps, seed, false).admissions;
        let first = decisions(11);
        assert!(count(&first, Admission::EarlyDrop) > 50);
        assert_eq!(first, decisions(11));
        assert_ne!(first, decisions(12));
    }

    #[test]
    fn the_metrics_are_published_under_their_names() {
        let mut q = congested(config());
        q.state.burst_allowance = millis(45);
        q.state.qdelay = 0.0125;
        q.drops = 3;
        let mut log = MetricLog::default();
        q.metrics(&mut Metrics::new(&mut log));
        let names: Vec<&str> = log.0.iter().map(|(n, _)| n.as_str()).collect();
        let listed: Vec<&str> = DESCRIPTOR.metrics.iter().map(|m| m.name).collect();
        assert_eq!(names, listed);
        assert_eq!(log.get("pie.drop_prob"), Some(1.0));
        assert_eq!(log.get("pie.qdelay_ms"), Some(12.5));
        assert_eq!(log.get("pie.burst_allowance_ms"), Some(45.0));
        assert_eq!(log.get("pie.drops"), Some(3.0));
    }

    fn params(pairs: &[(&str, &str)]) -> Params {
        let mut p = Params::new();
        for d in DESCRIPTOR.parameters {
            let given = pairs.iter().find(|(k, _)| *k == d.name).map(|&(_, v)| v);
            let text = given.unwrap_or(match d.default {
                ParamDefault::Value(v) => v,
                _ => unreachable!("every PIE parameter has a default"),
            });
            let value = d.parse_text(text).unwrap_or_else(|e| panic!("{}: {e}", d.name));
            p.insert(d.name, value);
        }
        p
    }

    #[test]
    fn the_defaults_are_rfc_8033s_and_ns3s() {
        let c = Config::from_params(&params(&[])).expect("the defaults build");
        assert_eq!(c, config());
        let link =
            QueueLink { buffer: BufferLimit::Packets(25), rate_bps: 1_000_000, rng: RngStream::new(1, "t") };
        let built = build(&params(&[]), link).map(|d| d.name());
        assert_eq!(built.ok(), Some("pie"));
    }

    #[test]
    fn impossible_settings_are_refused_by_name() {
        let name = |pairs: &[(&str, &str)]| Config::from_params(&params(pairs)).err().map(|e| e.name);
        assert_eq!(name(&[]), None);
        assert_eq!(name(&[("target", "0ms")]).as_deref(), Some("target"));
        assert_eq!(name(&[("tupdate", "0ms")]).as_deref(), Some("tupdate"));
        assert_eq!(name(&[("alpha", "-0.1")]).as_deref(), Some("alpha"));
        assert_eq!(name(&[("beta", "-1")]).as_deref(), Some("beta"));
        assert_eq!(name(&[("alpha", "0"), ("beta", "0")]).as_deref(), Some("alpha"));
        assert_eq!(name(&[("alpha", "0")]), None);
        assert_eq!(name(&[("mean_packet_size", "0B")]).as_deref(), Some("mean_packet_size"));
        assert_eq!(name(&[("dq_threshold", "0B")]).as_deref(), Some("dq_threshold"));
        assert_eq!(name(&[("dq_threshold", "65537B")]).as_deref(), Some("dq_threshold"));
        assert_eq!(name(&[("dq_threshold", "65536B")]), None);
        assert_eq!(name(&[("max_burst", "0ms")]), None); // no burst protection is allowed
    }
}
