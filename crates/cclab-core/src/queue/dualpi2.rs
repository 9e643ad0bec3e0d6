//! DualPI2, the DualQ Coupled AQM with a PI2 base controller (RFC 9332, De
//! Schepper, Briscoe and White, January 2023; text read in Debian's
//! doc-rfc 20230121-1, rfc9332.txt): two queues, L (L4S) and C (Classic),
//! in one buffer, whose congestion signals are coupled so that a Scalable
//! (DCTCP-like) flow and a Reno-friendly one get about the same rate, while
//! the L queue keeps a sub-millisecond delay. The rules, with the section or
//! the figure and line of Appendix A (Pass #2 where it differs) they come from:
//!
//! - Classification (§2.3, Figure 3 line 6): an ECT(1) packet joins L,
//!   Not-ECT and ECT(0) join C. The model keeps the sender's codepoint when
//!   a queue sets CE (`Packet::ce` is apart), so an L4S packet marked
//!   upstream is still ECT(1) here and joins L, as the RFC's "ECT(1) or CE"
//!   sends it; a classic packet marked upstream stays in C (the RFC, which
//!   cannot tell, sends every CE packet to L).
//! - The buffer (Figure 3 lines 2-3, Note b): one buffer for both queues,
//!   the link's; an arrival that does not fit is dropped.
//! - The base AQM, every `tupdate` (Figure 8): `curq = max(cq.time(),
//!   lq.time())`, the sojourn of each queue's head at the update's time (0
//!   for an empty queue; the max is Pass #2's overload rule, which lets an
//!   overloaded L queue drive the controller when C is empty); `p' += alpha
//!   (curq - target) + beta (curq - prevq)` in seconds and Hz; p' bounded to
//!   [0, 1] (A.1, "p' can overflow the range [0,1]"); `prevq = curq`. Then
//!   §2.4's couplings: `p_C = p'^2` (equation 2), `p_CL = k p'` (equation 3).
//!   alpha and beta are used as given whatever `tupdate` is (A.1 derives
//!   `alpha = 0.1 Tupdate / RTT_max^2`, `beta = 0.3 / RTT_max`; a scenario
//!   that changes `tupdate` scales them itself).
//! - The native L4S AQM (Figure 5): a ramp on the L packet's sojourn, `p'_L`
//!   = 0 up to `min_th`, `(qdelay - min_th) / range` above, 1 from `min_th +
//!   range`; `range = 0` makes it a step at `min_th` (Note c). `p'_L` is 0
//!   when the L queue held at most `th_len` packets, counting the one leaving
//!   (our reading of Figure 7 lines 5a-5d, see "Against the RFC").
//! - At dequeue (Figure 7), an L packet: while `p_CL < p_Lmax = 1`, marked
//!   with likelihood `p_L = max(p'_L, p_CL)` (equation 4); in overload
//!   (`p_CL >= 1`) dropped with likelihood `p_C` and otherwise marked with
//!   likelihood `p_CL`. A C packet is chosen with likelihood `p_C`; a chosen
//!   Not-ECT packet is dropped, and so is a chosen ECT(0) one once `p_C >=
//!   p_Cmax = min(1/k^2, 1)` (overload: "drop on saturation", §4.2.3, A.2);
//!   a chosen ECT(0) packet is marked below that. A drop continues the loop
//!   with the next packet the scheduler chooses.
//! - Likelihoods (Figure 4 lines 23-30): `recur`, a per-queue count that
//!   adds the likelihood and fires (and loses 1) when it exceeds 1, the
//!   RFC's de-randomized marking; with `derandomize = false`, a uniform draw
//!   below the likelihood instead (Linux's `dualpi2_roll`).
//! - The scheduler (§4.2.2, A.2): `ts_fifo`, the time-shifted FIFO of
//!   Figure 10 lines 28-33: L when `lq.time() + tshift >= cq.time()` (the
//!   heads' sojourns now), C otherwise; or `wrr`, Linux's weighted round
//!   robin (`dequeue_packet`, `c_protection`): a credit starting at `MTU
//!   (wc - wl)` picks L while it is at most 0, grows by `wc x bytes` when L
//!   sends while C waits, falls by `wl x bytes` when C sends while L waits
//!   (wc = `classic_protection` %, wl = 100 - wc; a packet the AQM drops
//!   changes nothing), and is reset once both queues are empty. An empty
//!   queue is never chosen.
//!
//! ## No timer
//!
//! The update is caught up at the next arrival or dequeue (`periodic.rs`, as
//! PIE's): updates fall at `k tupdate` from the start, each reads p', prevq
//! and the enqueue times of the two heads, which change only at updates and
//! at calls, and its own time, so running it late gives what it would have
//! given on time. With both queues empty and p' and prevq 0 an update
//! changes nothing and the rest of an idle period is skipped. A metric
//! sampled between calls shows the state of the last call.
//!
//! ## Against the RFC
//!
//! - The buffer test is on the arrival's own size (`droptail::fits`, as
//!   every discipline here), not Figure 3's `lq.byt() + cq.byt() + MTU >
//!   limit`, which keeps an MTU free.
//! - `recur` takes a likelihood above 1 as 1. In overload Figure 7 calls it
//!   for an L packet twice on one count: the drop test with `p_C`, then the
//!   mark test with `p_CL = k p'`, up to k. Unclamped, the mark test's
//!   excess is carried into the next drop test, which then fires more often:
//!   L packets are dropped with likelihood 1 - (1 - p_C) / p_CL instead of
//!   A.2's p_C (0.64 instead of 0.49 at p' = 0.7). Clamped, they are dropped
//!   with p_C, as A.2's prose says ("proportional to p'^2").
//! - Figure 7 tests `lq.len() > Th_len` after the dequeue (the packets left
//!   behind), so read literally the last two packets of a burst escape the
//!   ramp; here the leaving packet counts, so only the last one does, as the
//!   prose says ("zeroed if the queue is only 1 packet") and Linux's note
//!   ("exempt the last packet of a burst").
//! - The default scheduler is the TS-FIFO (`tshift` 50 ms, A.2's value for
//!   the public Internet), the one whose pseudocode the RFC gives; A.2
//!   recommends a WRR, available as `scheduler = "wrr"` after Linux.
//! - §2.5.1.1's packets of the "wrong" codepoint in a queue do not occur:
//!   classification is by codepoint alone.
//!
//! ## Against ns-3
//!
//! ns-3 has no DualPI2 in its releases; the port read for comparison
//! (`DualPi2QueueDisc`, NITK and Tom Henderson's update to draft -10, in
//! AlexandruTabacaru/ns-3-dev-git-rp at commit
//! 01649ee7ac9226dc68596e50f3c107eea4270365) predates the RFC: its update
//! reads the C head alone, its defaults are Tupdate 15 ms, alpha 0.15,
//! beta 3, a 475 us step and a 2-MTU floor on C drops, and it has no
//! overload rule (p_CL is capped at 1). Nothing here follows it.
//!
//! ## Against Linux
//!
//! Linux `net/sched/sch_dualpi2.c` as merged (read at gregkh/linux commit
//! 2519003dd5fb6f89f10f031e3a97ecb7c9d1b816) defaults differently, and
//! here the RFC's defaults hold:
//!
//! - Linux's native AQM is a 1 ms step on every L packet (marked when its
//!   sojourn is above `step_thresh`; `min_qlen_step` 0); here the 800 us +
//!   400 us ramp with `th_len` 1 (`range = "0us", th_len = 0, min_th =
//!   "1ms"` with `derandomize = false` is Linux's step but for a sojourn of
//!   exactly 1 ms; with `recur` the first packet over the step, at a count of
//!   0, goes unmarked).
//! - Its alpha and beta are 41/256 and 819/256 Hz, here 0.16 and 3.2.
//! - It draws at random, here `recur` (`derandomize = false` draws).
//! - Its scheduler is the WRR with `classic_protection` 10 %.
//! - Its overload test is `k p' > 1` (strict) for both queues, the RFC's
//!   (here) `p_CL >= 1` for L and `p_C >= p_Cmax` for C.
//! - Its timer re-arms `tupdate` after it ran; here the updates keep to a
//!   fixed grid.
//!
//! Not modelled: Linux's skipping of the drops and marks from p_C and p_CL
//! while less than 2 MTU are queued (the step still applies; A.1 lists it as
//! a Linux addition), `drop_overload =
//! false` (cap the probability instead of dropping), `drop_early` (the AQM
//! at enqueue), the memory limit in truesize, GSO splitting, tc filters and
//! `any_ect` classification.

use super::periodic::{self, Clock, Periodic};
use super::{
    droptail, Admission, BufferLimit, DequeueDiscipline, Dequeued, Discipline, Dropped, QueueDescriptor,
    QueueLink, QueueOccupancy, Queued,
};
use crate::rng::RngStream;
use crate::trace::DropCause;
use cclab_wire::time::{to_secs_f64, Time};
use cclab_wire::{
    Descriptor, Ect, MetricDesc, Metrics, ParamDefault, ParamError, ParamType, Parameter, Params, Role,
};
use std::collections::VecDeque;

pub const DESCRIPTOR: QueueDescriptor = Descriptor {
    name: "dualpi2",
    role: Role::QueueDiscipline,
    summary: "DualQ Coupled AQM (L4S): ECT(1) packets in a low-latency queue marked by a shallow ramp or the coupled k p', the rest in a classic queue dropped or marked with p'^2, p' from a PI controller on the queueing delay",
    source: "RFC 9332 (De Schepper, Briscoe, White, 2023) §2.1-2.5, §4.2.2-4.2.3, Appendix A.1-A.2 (Figures 2-8) and Figure 10's TS-FIFO scheduler; WRR scheduler as Linux net/sched/sch_dualpi2.c",
    parameters: &[
        Parameter {
            name: "target",
            ty: ParamType::Duration,
            unit: "",
            min: 0.0,
            max: 10.0,
            default: ParamDefault::Value("15ms"),
            meaning: "the queueing delay the PI2 controller steers to, above 0 (RFC 9332 Figure 2 target)",
        },
        Parameter {
            name: "tupdate",
            ty: ParamType::Duration,
            unit: "",
            min: 1e-6,
            max: 10.0,
            default: ParamDefault::Value("16ms"),
            meaning: "the period of the base probability's update, at least 1 us (RFC 9332 Tupdate, 16 ms as in Linux)",
        },
        Parameter {
            name: "alpha",
            ty: ParamType::Number,
            unit: "Hz",
            min: 0.0,
            max: 100.0,
            default: ParamDefault::Value("0.16"),
            meaning: "integral gain: weight of the delay's distance from target per update (RFC 9332: 0.1 Tupdate / RTT_max^2, 0.16 for 16 ms and 100 ms)",
        },
        Parameter {
            name: "beta",
            ty: ParamType::Number,
            unit: "Hz",
            min: 0.0,
            max: 100.0,
            default: ParamDefault::Value("3.2"),
            meaning: "proportional gain: weight of the delay's change since the last update (RFC 9332: 0.3 / RTT_max, given as 3.2)",
        },
        Parameter {
            name: "k",
            ty: ParamType::Number,
            unit: "",
            min: 0.0,
            max: 100.0,
            default: ParamDefault::Value("2"),
            meaning: "coupling factor, above 0: the L queue is marked with at least k p' (RFC 9332 §2.1; RFC 9331 recommends 2)",
        },
        Parameter {
            name: "min_th",
            ty: ParamType::Duration,
            unit: "",
            min: 0.0,
            max: 10.0,
            default: ParamDefault::Value("800us"),
            meaning: "L queue sojourn where the native L4S AQM's marking ramp starts (RFC 9332 Figure 2 minTh)",
        },
        Parameter {
            name: "range",
            ty: ParamType::Duration,
            unit: "",
            min: 0.0,
            max: 10.0,
            default: ParamDefault::Value("400us"),
            meaning: "width of the ramp, over which the L marking probability rises from 0 to 1; 0 makes a step at min_th (RFC 9332 range, Note c)",
        },
        Parameter {
            name: "th_len",
            ty: ParamType::Integer,
            unit: "packets",
            min: 0.0,
            max: 1e9,
            default: ParamDefault::Value("1"),
            meaning: "the native L4S AQM marks nothing while the L queue holds at most this many packets, the leaving one counted (RFC 9332 Th_len)",
        },
        Parameter {
            name: "scheduler",
            ty: ParamType::Choice(&["ts_fifo", "wrr"]),
            unit: "",
            min: 0.0,
            max: 0.0,
            default: ParamDefault::Value("ts_fifo"),
            meaning: "how the two queues share the link: the time-shifted FIFO (L unless C's head has waited tshift longer than L's; RFC 9332 Figure 10) or Linux's weighted round robin (classic_protection)",
        },
        Parameter {
            name: "tshift",
            ty: ParamType::Duration,
            unit: "",
            min: 0.0,
            max: 100.0,
            default: ParamDefault::Value("50ms"),
            meaning: "with ts_fifo, how much longer C's head may wait than L's before C is served (RFC 9332 A.2: 50 ms for the public Internet)",
        },
        Parameter {
            name: "classic_protection",
            ty: ParamType::Integer,
            unit: "%",
            min: 0.0,
            max: 100.0,
            default: ParamDefault::Value("10"),
            meaning: "with wrr, the C queue's weight in percent, L's being the rest (Linux classic_protection)",
        },
        Parameter {
            name: "derandomize",
            ty: ParamType::Bool,
            unit: "",
            min: 0.0,
            max: 0.0,
            default: ParamDefault::Value("true"),
            meaning: "act on a likelihood with the RFC's recur() count (true) or a random draw (false, as Linux)",
        },
    ],
    metrics: &[BASE_PROB, P_C, P_CL, C_SOJOURN_MS, L_SOJOURN_MS, C_PACKETS, L_PACKETS, DROPS],
    build,
};

pub const BASE_PROB: MetricDesc = MetricDesc {
    name: "dualpi2.base_prob",
    unit: "",
    meaning: "DualPI2's base probability p' (as of the last arrival or dequeue)",
};
pub const P_C: MetricDesc =
    MetricDesc { name: "dualpi2.p_c", unit: "", meaning: "the C queue's drop or mark probability p'^2" };
pub const P_CL: MetricDesc = MetricDesc {
    name: "dualpi2.p_cl",
    unit: "",
    meaning: "the coupled L4S marking probability k p' (1 or more: overload)",
};
pub const C_SOJOURN_MS: MetricDesc = MetricDesc {
    name: "dualpi2.c_sojourn_ms",
    unit: "ms",
    meaning: "sojourn of the packet last taken from the C queue (sent or dropped)",
};
pub const L_SOJOURN_MS: MetricDesc = MetricDesc {
    name: "dualpi2.l_sojourn_ms",
    unit: "ms",
    meaning: "sojourn of the packet last taken from the L queue (sent or dropped)",
};
pub const C_PACKETS: MetricDesc =
    MetricDesc { name: "dualpi2.c_packets", unit: "packets", meaning: "packets in the C queue" };
pub const L_PACKETS: MetricDesc =
    MetricDesc { name: "dualpi2.l_packets", unit: "packets", meaning: "packets in the L queue" };
pub const DROPS: MetricDesc = MetricDesc {
    name: "dualpi2.drops",
    unit: "packets",
    meaning: "packets the AQM dropped so far, both queues (not counting buffer overflow)",
};

/// The L marking probability at which the L queue is in overload (RFC 9332 Figure 2 p_Lmax).
const P_LMAX: f64 = 1.0;
/// The MTU of Linux's WRR credit (`psched_mtu`), in bytes.
const WRR_MTU: i64 = 1500;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheduler {
    /// The time-shifted FIFO (RFC 9332 Figure 10).
    TsFifo,
    /// Linux's weighted round robin.
    Wrr,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    pub target: Time,
    pub tupdate: Time,
    pub alpha: f64,
    pub beta: f64,
    pub k: f64,
    pub min_th: Time,
    pub range: Time,
    pub th_len: u64,
    pub scheduler: Scheduler,
    pub tshift: Time,
    /// The C queue's WRR weight, percent.
    pub classic_protection: u32,
    pub derandomize: bool,
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
            k: p.number("k")?,
            min_th: duration(p, "min_th")?,
            range: duration(p, "range")?,
            th_len: p.number("th_len")? as u64,
            scheduler: match p.choice("scheduler")? {
                "wrr" => Scheduler::Wrr,
                _ => Scheduler::TsFifo,
            },
            tshift: duration(p, "tshift")?,
            classic_protection: p.number("classic_protection")? as u32,
            derandomize: p.bool("derandomize")?,
        };
        let problem = |name: &str, problem| Err(ParamError { name: name.into(), problem });
        if config.target == 0 {
            return problem("target", "must be above 0: the controller steers the delay to it");
        }
        if config.tupdate == 0 {
            return problem("tupdate", "must be above 0: the probability is updated every tupdate");
        }
        if config.alpha.is_nan() || config.alpha < 0.0 {
            return problem("alpha", "must be at least 0: a negative gain pushes the delay away from target");
        }
        if config.beta.is_nan() || config.beta < 0.0 {
            return problem("beta", "must be at least 0: a negative gain amplifies the delay's changes");
        }
        if config.alpha == 0.0 && config.beta == 0.0 {
            return problem("alpha", "alpha and beta must not both be 0: the probability would never move");
        }
        if config.k.is_nan() || config.k <= 0.0 {
            return problem("k", "must be above 0: the L queue's coupled probability is k p'");
        }
        if config.classic_protection > 100 {
            return problem("classic_protection", "must be a percentage, at most 100");
        }
        Ok(config)
    }

    /// The C probability at and above which ECN-capable C packets are
    /// dropped too (RFC 9332 Figure 2 line 11).
    pub fn p_cmax(&self) -> f64 {
        (1.0 / (self.k * self.k)).min(1.0)
    }

    /// One PI2 update of `s` with the queueing delay `curq`, in seconds
    /// (RFC 9332 Figure 8 lines 3 and 6, p' bounded to [0, 1]).
    pub fn update(&self, s: &mut Controller, curq: f64) {
        let target = to_secs_f64(self.target);
        let p = s.p + self.alpha * (curq - target) + self.beta * (curq - s.prevq);
        s.p = p.clamp(0.0, 1.0);
        s.prevq = curq;
    }

    /// The native L4S AQM's probability at an L sojourn of `qdelay` (RFC
    /// 9332 Figure 5): a ramp from `min_th` over `range`, a step when
    /// `range` is 0.
    pub fn laqm(&self, qdelay: Time) -> f64 {
        let max_th = self.min_th.saturating_add(self.range);
        if qdelay >= max_th {
            1.0
        } else if qdelay > self.min_th {
            (qdelay - self.min_th) as f64 / self.range as f64
        } else {
            0.0
        }
    }
}

/// The base controller's state.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Controller {
    /// The base probability p'.
    pub p: f64,
    /// The queueing delay of the last update, seconds.
    pub prevq: f64,
}

impl Controller {
    /// `p_C = p'^2` (RFC 9332 equation 2).
    pub fn p_c(&self) -> f64 {
        self.p * self.p
    }

    /// `p_CL = k p'` (RFC 9332 equation 3), not bounded: 1 or more is overload.
    pub fn p_cl(&self, k: f64) -> f64 {
        k * self.p
    }
}

/// RFC 9332's `recur(q, likelihood)` (Figure 4 lines 23-30) on `count`: true
/// with that likelihood, without randomness. A likelihood above 1 counts as 1.
pub fn recur(count: &mut f64, likelihood: f64) -> bool {
    *count += likelihood.clamp(0.0, 1.0);
    if *count > 1.0 {
        *count -= 1.0;
        true
    } else {
        false
    }
}

fn build(p: &Params, link: QueueLink) -> Result<Discipline, ParamError> {
    let config = Config::from_params(p)?;
    Ok(Discipline::Dequeue(Box::new(DualPi2::new(config, link))))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Which {
    L,
    C,
}

pub struct DualPi2 {
    config: Config,
    buffer: BufferLimit,
    l: VecDeque<Queued>,
    c: VecDeque<Queued>,
    /// Bytes held in both queues.
    bytes: u64,
    state: Controller,
    clock: Clock,
    /// `recur`'s counts (`lq.count`, `cq.count`).
    l_count: f64,
    c_count: f64,
    /// The WRR credit: L is served while it is at most 0.
    credit: i64,
    l_sojourn: Time,
    c_sojourn: Time,
    drops: u64,
    rng: RngStream,
    /// p' after each update, skipped ones included.
    #[cfg(test)]
    updates: Vec<f64>,
    /// Updates skipped at rest.
    #[cfg(test)]
    skipped: u64,
}

impl DualPi2 {
    pub fn new(config: Config, link: QueueLink) -> Self {
        let mut q = Self {
            config,
            buffer: link.buffer,
            l: VecDeque::new(),
            c: VecDeque::new(),
            bytes: 0,
            state: Controller::default(),
            clock: Clock::new(config.tupdate),
            l_count: 0.0,
            c_count: 0.0,
            credit: 0,
            l_sojourn: 0,
            c_sojourn: 0,
            drops: 0,
            rng: link.rng,
            #[cfg(test)]
            updates: Vec::new(),
            #[cfg(test)]
            skipped: 0,
        };
        q.reset_credit();
        q
    }

    pub fn controller(&self) -> Controller {
        self.state
    }

    /// Linux `dualpi2_reset_c_protection`: `MTU (wc - wl)`, in favour of L
    /// unless C weighs more.
    fn reset_credit(&mut self) {
        let wc = self.config.classic_protection as i64;
        self.credit = WRR_MTU * (wc - (100 - wc));
    }

    /// `recur` or a draw, as configured.
    fn likely(&mut self, which: Which, likelihood: f64) -> bool {
        if self.config.derandomize {
            let count = match which {
                Which::L => &mut self.l_count,
                Which::C => &mut self.c_count,
            };
            recur(count, likelihood)
        } else {
            likelihood >= 1.0 || (likelihood > 0.0 && self.rng.bernoulli(likelihood))
        }
    }

    /// The queue the scheduler serves at `now`, if either holds a packet.
    fn schedule(&self, now: Time) -> Option<Which> {
        match (self.l.front(), self.c.front()) {
            (None, None) => None,
            (Some(_), None) => Some(Which::L),
            (None, Some(_)) => Some(Which::C),
            (Some(l), Some(c)) => {
                let l_first = match self.config.scheduler {
                    Scheduler::TsFifo => l.sojourn(now).saturating_add(self.config.tshift) >= c.sojourn(now),
                    Scheduler::Wrr => self.credit <= 0,
                };
                Some(if l_first { Which::L } else { Which::C })
            }
        }
    }

    /// Whether the L packet `sojourn` old, taken from a queue of `held`
    /// packets (itself counted), is marked; `None` if it is dropped (RFC
    /// 9332 Figure 7 lines 4b-8j).
    fn l_aqm(&mut self, sojourn: Time, held: usize) -> Option<bool> {
        let p_cl = self.state.p_cl(self.config.k);
        if p_cl < P_LMAX {
            let native = if held as u64 > self.config.th_len { self.config.laqm(sojourn) } else { 0.0 };
            Some(self.likely(Which::L, native.max(p_cl)))
        } else if self.likely(Which::L, self.state.p_c()) {
            None
        } else {
            Some(self.likely(Which::L, p_cl))
        }
    }

    /// Whether the C packet of codepoint `ect` is marked; `None` if it is
    /// dropped (RFC 9332 Figure 7 lines 10-17).
    fn c_aqm(&mut self, ect: Ect) -> Option<bool> {
        let p_c = self.state.p_c();
        if !self.likely(Which::C, p_c) {
            Some(false)
        } else if !ect.capable() || p_c >= self.config.p_cmax() {
            None
        } else {
            Some(true)
        }
    }
}

impl Periodic for DualPi2 {
    fn clock(&mut self) -> &mut Clock {
        &mut self.clock
    }

    /// RFC 9332 Figure 8: the larger of the two heads' sojourns at `at`.
    fn update_at(&mut self, at: Time) {
        let head = |q: &VecDeque<Queued>| q.front().map_or(0, |p| p.sojourn(at));
        let curq = head(&self.c).max(head(&self.l));
        self.config.update(&mut self.state, to_secs_f64(curq));
        #[cfg(test)]
        self.updates.push(self.state.p);
    }

    /// With both queues empty and p' and prevq 0, an update adds `-alpha
    /// target <= 0` and the bound brings p' back to 0.
    fn at_rest(&self) -> bool {
        self.l.is_empty() && self.c.is_empty() && self.state.p == 0.0 && self.state.prevq == 0.0
    }

    fn rest(&mut self, _due: u64, _: Time) {
        #[cfg(test)]
        {
            self.updates.extend(std::iter::repeat_n(0.0, _due as usize));
            self.skipped += _due;
        }
    }
}

impl DequeueDiscipline for DualPi2 {
    fn name(&self) -> &'static str {
        "dualpi2"
    }

    fn enqueue(&mut self, now: Time, packet: Queued, _: &mut Vec<Dropped>) -> Admission {
        periodic::catch_up(self, now);
        if !droptail::fits(self.buffer, self.occupancy(), packet.packet.wire_bytes) {
            return Admission::Drop;
        }
        self.bytes += packet.packet.wire_bytes as u64;
        if packet.packet.ect == Ect::Ect1 {
            self.l.push_back(packet);
        } else {
            self.c.push_back(packet);
        }
        Admission::Enqueue
    }

    fn dequeue(&mut self, now: Time, dropped: &mut Vec<Dropped>) -> Option<Dequeued> {
        periodic::catch_up(self, now);
        let mut sent = None;
        while let Some(which) = self.schedule(now) {
            let (queue, other) = match which {
                Which::L => (&mut self.l, &self.c),
                Which::C => (&mut self.c, &self.l),
            };
            let held = queue.len();
            let contended = !other.is_empty();
            let Some(packet) = queue.pop_front() else { break };
            let bytes = packet.packet.wire_bytes;
            self.bytes -= bytes as u64;
            let sojourn = packet.sojourn(now);
            let verdict = match which {
                Which::L => {
                    self.l_sojourn = sojourn;
                    self.l_aqm(sojourn, held)
                }
                Which::C => {
                    self.c_sojourn = sojourn;
                    self.c_aqm(packet.packet.ect)
                }
            };
            let Some(marked) = verdict else {
                self.drops += 1;
                dropped.push(Dropped { packet, cause: DropCause::EarlyDrop });
                continue;
            };
            if contended {
                let wc = self.config.classic_protection as i64;
                self.credit += match which {
                    Which::L => wc * bytes as i64,
                    Which::C => -(100 - wc) * bytes as i64,
                };
            }
            sent = Some(Dequeued { packet, marked });
            break;
        }
        if self.l.is_empty() && self.c.is_empty() {
            self.reset_credit();
        }
        sent
    }

    fn occupancy(&self) -> QueueOccupancy {
        QueueOccupancy { packets: (self.l.len() + self.c.len()) as u64, bytes: self.bytes }
    }

    fn metrics(&self, m: &mut Metrics) {
        m.put(BASE_PROB.name, self.state.p);
        m.put(P_C.name, self.state.p_c());
        m.put(P_CL.name, self.state.p_cl(self.config.k));
        m.put(C_SOJOURN_MS.name, self.c_sojourn as f64 / 1e6);
        m.put(L_SOJOURN_MS.name, self.l_sojourn as f64 / 1e6);
        m.put(C_PACKETS.name, self.c.len() as f64);
        m.put(L_PACKETS.name, self.l.len() as f64);
        m.put(DROPS.name, self.drops as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::Seq;
    use crate::pool::PacketRef;
    use cclab_wire::time::{micros, millis, secs, serialization_time};
    use cclab_wire::MetricLog;

    /// RFC 9332 Figure 2's defaults, with the text's Tupdate, alpha and beta.
    fn config() -> Config {
        Config {
            target: millis(15),
            tupdate: millis(16),
            alpha: 0.16,
            beta: 3.2,
            k: 2.0,
            min_th: micros(800),
            range: micros(400),
            th_len: 1,
            scheduler: Scheduler::TsFifo,
            tshift: millis(50),
            classic_protection: 10,
            derandomize: true,
        }
    }

    /// A configuration whose first update is 1000 s away: the probability stays as a test sets it.
    fn frozen(config: Config) -> Config {
        Config { tupdate: secs(1000), ..config }
    }

    fn dualpi2_seeded(config: Config, buffer: BufferLimit, seed: u64) -> DualPi2 {
        DualPi2::new(
            config,
            QueueLink { buffer, rate_bps: 100_000_000, rng: RngStream::new(seed, "dualpi2-test") },
        )
    }

    fn dualpi2(config: Config, buffer: BufferLimit) -> DualPi2 {
        dualpi2_seeded(config, buffer, 7)
    }

    fn queued(id: u32, bytes: u32, ect: Ect, at: Time) -> Queued {
        Queued {
            packet: PacketRef { id, dst: 0, wire_bytes: bytes, ect },
            enqueued_at: at,
            flow: 0,
            seq: Seq::default(),
        }
    }

    fn assert_close(got: f64, expected: f64) {
        assert!((got - expected).abs() <= 1e-12 * expected.abs().max(1e-3), "got {got}, expected {expected}");
    }

    fn ids(q: &VecDeque<Queued>) -> Vec<u32> {
        q.iter().map(|p| p.packet.id).collect()
    }

    /// Every packet `q` gives at `now` until it is empty: (id, marked), and the ids it dropped.
    fn drain(q: &mut DualPi2, now: Time) -> (Vec<(u32, bool)>, Vec<u32>) {
        let mut dropped = Vec::new();
        let sent = std::iter::from_fn(|| q.dequeue(now, &mut dropped))
            .map(|d| (d.packet.packet.id, d.marked))
            .collect();
        assert!(q.l.is_empty() && q.c.is_empty());
        assert!(dropped.iter().all(|d| d.cause == DropCause::EarlyDrop));
        (sent, dropped.iter().map(|d| d.packet.packet.id).collect())
    }

    /// `n` packets of `ect` enqueued at `at`, ids from `first`.
    fn offer(q: &mut DualPi2, first: u32, n: u32, ect: impl Fn(u32) -> Ect, at: Time) {
        for id in first..first + n {
            assert_eq!(q.enqueue(at, queued(id, 1500, ect(id), at), &mut Vec::new()), Admission::Enqueue);
        }
    }

    #[test]
    fn ect1_joins_the_l_queue_and_ect0_and_not_ect_the_c_queue() {
        let mut q = dualpi2(config(), BufferLimit::Unlimited);
        for (id, ect) in [(1, Ect::Ect1), (2, Ect::Ect0), (3, Ect::NotEct), (4, Ect::Ect1), (5, Ect::Ect0)] {
            assert_eq!(q.enqueue(0, queued(id, 1000, ect, 0), &mut Vec::new()), Admission::Enqueue);
        }
        assert_eq!(ids(&q.l), [1, 4]);
        assert_eq!(ids(&q.c), [2, 3, 5]);
        assert_eq!(q.occupancy(), QueueOccupancy { packets: 5, bytes: 5000 });
    }

    #[test]
    fn the_pi_update_adds_alpha_times_the_distance_and_beta_times_the_change() {
        let c = config();
        let after = |p: f64, prevq_ms: f64, curq_ms: f64| {
            let mut s = Controller { p, prevq: prevq_ms / 1e3 };
            c.update(&mut s, curq_ms / 1e3);
            assert_eq!(s.prevq, curq_ms / 1e3, "prevq = curq");
            s.p
        };
        // 0.16 x 0.010 + 3.2 x 0.005.
        assert_close(after(0.1, 20.0, 25.0), 0.1176);
        // Below target and falling: -0.16 x 0.010 - 3.2 x 0.005.
        assert_close(after(0.1, 10.0, 5.0), 0.0824);
        // Only the distance: 0.16 x 0.005.
        assert_close(after(0.1, 20.0, 20.0), 0.1008);
        // At target and steady: unchanged.
        assert_eq!(after(0.1, 15.0, 15.0), 0.1);
        // p' is bounded to [0, 1].
        assert_eq!(after(0.99, 0.0, 100.0), 1.0);
        assert_eq!(after(0.001, 100.0, 0.0), 0.0);
    }

    #[test]
    fn p_c_is_the_square_of_p_prime_and_p_cl_is_k_times_p_prime() {
        let s = Controller { p: 0.3, prevq: 0.0 };
        assert_close(s.p_c(), 0.09);
        assert_close(s.p_cl(2.0), 0.6);
        assert_close(s.p_cl(1.5), 0.45);
        // The coupling of equation (1): p_C = (p_CL / k)^2.
        assert_close(s.p_c(), (s.p_cl(2.0) / 2.0).powi(2));
        // p_Cmax = min(1/k^2, 1).
        let p_cmax = |k| Config { k, ..config() }.p_cmax();
        assert_eq!((p_cmax(2.0), p_cmax(4.0), p_cmax(1.0), p_cmax(0.5)), (0.25, 0.0625, 1.0, 1.0));
    }

    /// RFC 9332 Figure 8 line 2a: the update reads the larger of the two
    /// heads' sojourns at its own time, 0 for an empty queue; the updates due
    /// are run at the next call, before it acts.
    #[test]
    fn each_update_takes_the_older_head_at_its_own_time_and_is_caught_up_at_the_next_call() {
        let mut q = dualpi2(config(), BufferLimit::Unlimited);
        let mut dropped = Vec::new();
        q.enqueue(0, queued(1, 1500, Ect::Ect1, 0), &mut dropped);
        q.enqueue(millis(10), queued(2, 1500, Ect::Ect0, millis(10)), &mut dropped);
        assert!(q.updates.is_empty(), "the first update is due at 16 ms");
        // At 16 ms: L's head has waited 16 ms, C's 6 ms. 0.16 x 0.001 + 3.2 x 0.016.
        let first = q.dequeue(millis(17), &mut dropped).expect("a packet");
        assert_eq!(q.updates.len(), 1);
        assert_close(q.updates[0], 0.05136);
        assert_eq!(first.packet.packet.id, 1, "L first: its head has not waited tshift less than C's");
        // At 32 ms, C's head alone: 22 ms. + 0.16 x 0.007 + 3.2 x 0.006.
        q.dequeue(millis(33), &mut dropped).expect("a packet");
        assert_close(q.updates[1], 0.07168);
        // Empty from 33 ms. At 48: -0.16 x 0.015 - 3.2 x 0.022, bounded to 0;
        // then at rest: 64, 80 and 96 are skipped by the arrival at 100 ms.
        q.enqueue(millis(100), queued(3, 1500, Ect::Ect0, millis(100)), &mut dropped);
        assert_eq!(q.updates[2..], [0.0; 4]);
        assert_eq!(q.skipped, 3);
        assert_eq!(q.clock.next, millis(112));
        assert!(dropped.is_empty());
    }

    #[test]
    fn the_native_l4s_aqm_is_a_ramp_from_min_th_over_range_or_a_step() {
        let c = config();
        for (us, p) in
            [(0, 0.0), (800, 0.0), (900, 0.25), (1000, 0.5), (1100, 0.75), (1200, 1.0), (5000, 1.0)]
        {
            assert_close(c.laqm(micros(us)), p);
        }
        assert_close(c.laqm(micros(1200) - 1), 1.0 - 1.0 / 400_000.0);
        // range 0: a step at min_th, with no division by 0 (Note c).
        let step = Config { min_th: millis(1), range: 0, ..c };
        assert_eq!((step.laqm(millis(1) - 1), step.laqm(millis(1)), step.laqm(secs(1))), (0.0, 1.0, 1.0));
    }

    /// `recur` fires when the count exceeds 1 (strictly): with likelihood 1/4,
    /// at the 5th call and every 4th after.
    #[test]
    fn recur_acts_on_a_likelihood_without_randomness() {
        let mut count = 0.0;
        let fired: Vec<usize> = (1..=20).filter(|_| recur(&mut count, 0.25)).collect();
        assert_eq!(fired, [5, 9, 13, 17]);
        let mut count = 0.0;
        assert_eq!((0..3).map(|_| recur(&mut count, 1.0)).collect::<Vec<_>>(), [false, true, true]);
        // A likelihood above 1 counts as 1: no backlog of marks builds up.
        let mut count = 0.0;
        (0..1000).for_each(|_| {
            recur(&mut count, 2.0);
        });
        assert_eq!(count, 1.0);
        let after: Vec<usize> = (1..=8).filter(|_| recur(&mut count, 0.25)).collect();
        assert_eq!(after, [1, 5]);
        assert!(!recur(&mut 0.0, -1.0));
    }

    /// Figure 7 lines 5a-5d with Th_len = 1: the native AQM marks nothing
    /// while the L queue holds one packet. Three L packets that waited 2 ms
    /// (ramp: 1): the first adds 1 to the count (not above 1), the second
    /// brings it to 2 and is marked, the third, alone, adds nothing.
    #[test]
    fn the_native_aqm_spares_a_queue_of_th_len_packets() {
        let mut q = dualpi2(frozen(config()), BufferLimit::Unlimited);
        offer(&mut q, 1, 3, |_| Ect::Ect1, 0);
        let (sent, dropped) = drain(&mut q, millis(2));
        assert_eq!(sent, [(1, false), (2, true), (3, false)]);
        assert!(dropped.is_empty());
        // th_len 0: the lone packet is marked too.
        let mut q = dualpi2(frozen(Config { th_len: 0, ..config() }), BufferLimit::Unlimited);
        offer(&mut q, 1, 3, |_| Ect::Ect1, 0);
        assert_eq!(drain(&mut q, millis(2)).0, [(1, false), (2, true), (3, true)]);
        // Below min_th nothing is marked while p' is 0.
        let mut q = dualpi2(frozen(config()), BufferLimit::Unlimited);
        offer(&mut q, 1, 50, |_| Ect::Ect1, 0);
        assert!(drain(&mut q, micros(800)).0.iter().all(|&(_, marked)| !marked));
    }

    /// p_L = max(p'_L, p_CL) (equation 4): the coupled probability marks L
    /// packets the ramp would not.
    #[test]
    fn l_packets_are_marked_with_the_larger_of_the_ramp_and_the_coupled_probability() {
        let marks = |p: f64, sojourn: Time| {
            let mut q = dualpi2(frozen(config()), BufferLimit::Unlimited);
            q.state.p = p;
            offer(&mut q, 0, 400, |_| Ect::Ect1, 0);
            let (sent, dropped) = drain(&mut q, sojourn);
            assert!(dropped.is_empty());
            sent.iter().filter(|s| s.1).count()
        };
        // (Likelihoods exact in binary, so that the counts are exact.)
        // p_CL = 0.25 alone, the ramp 0.5 alone, the larger of 0.25 and 0.5, 0.75 over 0.5.
        assert_eq!(marks(0.125, micros(800)), 99);
        assert_eq!(marks(0.0, micros(1000)), 199);
        assert_eq!(marks(0.125, micros(1000)), 199);
        assert_eq!(marks(0.375, micros(1000)), 299);
    }

    #[test]
    fn the_time_shifted_fifo_serves_l_unless_c_has_waited_tshift_longer() {
        let first = |config: Config, l_at: Time, c_at: Time, now: Time| {
            let mut q = dualpi2(frozen(config), BufferLimit::Unlimited);
            q.enqueue(l_at, queued(1, 1500, Ect::Ect1, l_at), &mut Vec::new());
            q.enqueue(c_at, queued(2, 1500, Ect::Ect0, c_at), &mut Vec::new());
            q.dequeue(now, &mut Vec::new()).map(|d| d.packet.packet.id)
        };
        let c = config();
        assert_eq!(
            first(c, millis(10), 0, millis(11)),
            Some(1),
            "strict priority while C waited < tshift more"
        );
        // lq.time() + tshift >= cq.time(): L at equality, C one nanosecond past it.
        assert_eq!(first(c, millis(50), 0, millis(70)), Some(1));
        assert_eq!(first(c, millis(50) + 1, 0, millis(70)), Some(2));
        // tshift 0: the older head, L at a tie.
        let fifo = Config { tshift: 0, ..c };
        assert_eq!(first(fifo, millis(2), millis(1), millis(3)), Some(2));
        assert_eq!(first(fifo, millis(1), millis(1), millis(3)), Some(1));
        // An empty queue is never chosen, however long the other's head waited.
        let mut q = dualpi2(frozen(c), BufferLimit::Unlimited);
        q.enqueue(0, queued(2, 1500, Ect::Ect0, 0), &mut Vec::new());
        assert_eq!(q.dequeue(secs(10), &mut Vec::new()).map(|d| d.packet.packet.id), Some(2));
        assert_eq!(q.dequeue(secs(10), &mut Vec::new()), None);
    }

    /// Linux's WRR with classic_protection 10: the credit starts at 1500 x
    /// (10 - 90); an L packet adds 10 x 1500 and a C packet takes 90 x 1500
    /// while both queues hold packets: 9 L packets, then 1 C, and so on.
    #[test]
    fn the_wrr_gives_c_its_weight_while_both_queues_wait_and_resets_when_idle() {
        let wrr = frozen(Config { scheduler: Scheduler::Wrr, ..config() });
        let order = |config: Config| {
            let mut q = dualpi2(config, BufferLimit::Unlimited);
            offer(&mut q, 0, 100, |_| Ect::Ect1, 0);
            offer(&mut q, 1000, 100, |_| Ect::Ect0, 0);
            let sent: Vec<u32> =
                (0..100).filter_map(|_| q.dequeue(0, &mut Vec::new())).map(|d| d.packet.packet.id).collect();
            (q, sent)
        };
        let (mut q, sent) = order(wrr);
        let c_at: Vec<usize> = (0..100).filter(|&i| sent[i] >= 1000).collect();
        assert_eq!(c_at, (1..=10).map(|n| 10 * n - 1).collect::<Vec<_>>());
        // Packets of each queue leave in order.
        assert!(sent.iter().filter(|&&id| id < 1000).copied().eq(0..90));
        drain(&mut q, 0);
        assert_eq!(q.credit, -120_000, "reset once both queues are empty");

        // No weight for C: strict priority; all of it: C first.
        let (_, sent) = order(Config { classic_protection: 0, ..wrr });
        assert!(sent.iter().all(|&id| id < 1000));
        let (_, sent) = order(Config { classic_protection: 100, ..wrr });
        assert!(sent.iter().all(|&id| id >= 1000));

        // Only L waiting: the credit does not move.
        let mut q = dualpi2(wrr, BufferLimit::Unlimited);
        offer(&mut q, 0, 20, |_| Ect::Ect1, 0);
        for _ in 0..10 {
            q.dequeue(0, &mut Vec::new());
            assert_eq!(q.credit, -120_000);
        }
    }

    /// RFC 9332 A.2, "drop on saturation": once p_CL = k p' reaches 1, L
    /// packets are dropped with likelihood p_C = p'^2 and the rest marked
    /// (Figure 7 lines 8c-8i); just below, none is dropped.
    #[test]
    fn l_packets_are_dropped_with_p_c_once_p_cl_reaches_one() {
        let run = |p: f64| {
            let mut q = dualpi2(frozen(config()), BufferLimit::Unlimited);
            q.state.p = p;
            offer(&mut q, 0, 400, |_| Ect::Ect1, 0);
            drain(&mut q, millis(1))
        };
        // p' = 0.5: p_CL = 1, p_C = 0.25. recur drops the 5th packet and
        // every 4th after: 99 of 400; it marks all the rest.
        let (sent, dropped) = run(0.5);
        assert_eq!(dropped.len(), 99);
        assert_eq!(sent.len(), 301);
        assert!(sent.iter().all(|s| s.1), "every L packet not dropped is marked");
        // p' = 0.49: p_CL = 0.98 < 1, no drop, marks with 0.98 (the ramp gives 0.5).
        let (sent, dropped) = run(0.49);
        assert!(dropped.is_empty());
        assert_eq!(sent.iter().filter(|s| s.1).count(), 391);
        // p' = 0.7: p_CL = 1.4 clamped to 1 in the mark test, so the drop test
        // keeps its likelihood p_C = 0.49: about 196 of 400 (unclamped, the
        // mark test's excess would carry over: 1 - 0.51 / 1.4, about 254).
        let (_, dropped) = run(0.7);
        assert!((186..=206).contains(&dropped.len()), "{} L drops at p' = 0.7", dropped.len());
    }

    /// Figure 7 lines 11-17: a chosen C packet is dropped if it is Not-ECT
    /// and marked if it is ECT(0), until p_C reaches p_Cmax = 1/k^2, from
    /// where ECT(0) packets are dropped too.
    #[test]
    fn c_packets_are_marked_or_dropped_by_codepoint_and_dropped_in_overload() {
        let run = |config: Config, p: f64| {
            let mut q = dualpi2(frozen(config), BufferLimit::Unlimited);
            q.state.p = p;
            offer(&mut q, 0, 1000, |id| if id % 3 == 0 { Ect::Ect0 } else { Ect::NotEct }, 0);
            let (sent, dropped) = drain(&mut q, millis(1));
            let marked: Vec<u32> = sent.iter().filter(|s| s.1).map(|s| s.0).collect();
            (marked, dropped)
        };
        // p' = 0.25, p_C = 1/16: the 17th packet and every 16th after, 62
        // of 1000 chosen (a third of them ECT(0)), by codepoint.
        let (marked, dropped) = run(config(), 0.25);
        assert_eq!((marked.len(), dropped.len()), (20, 42));
        assert!(marked.iter().all(|id| id % 3 == 0), "only ECT(0) is marked");
        assert!(dropped.iter().all(|id| id % 3 != 0), "only Not-ECT is dropped");
        // p' = 0.5, p_C = 0.25 = p_Cmax: every chosen packet is dropped.
        let (marked, dropped) = run(config(), 0.5);
        assert!(marked.is_empty());
        assert_eq!(dropped.len(), 249);
        // Just below p_Cmax ECT(0) is still marked.
        let (marked, _) = run(config(), 0.499);
        assert!(!marked.is_empty());
        // k = 1: p_Cmax = 1, so p_C = 0.36 still marks ECT(0).
        let (marked, dropped) = run(Config { k: 1.0, ..config() }, 0.6);
        assert!(marked.iter().all(|id| id % 3 == 0) && marked.len() > 100 && dropped.len() > 200);
    }

    /// With `derandomize = false`, a draw per packet (Linux `dualpi2_roll`):
    /// the frequencies are the likelihoods, and the link's seed decides.
    #[test]
    fn without_derandomization_a_draw_decides_with_the_same_likelihoods() {
        let run = |seed: u64| {
            let mut q = dualpi2_seeded(
                frozen(Config { derandomize: false, ..config() }),
                BufferLimit::Unlimited,
                seed,
            );
            q.state.p = 0.3;
            offer(&mut q, 0, 10_000, |id| if id % 2 == 0 { Ect::Ect1 } else { Ect::NotEct }, 0);
            drain(&mut q, micros(100))
        };
        let (sent, dropped) = run(1);
        let l_marks = sent.iter().filter(|s| s.1).count();
        // p_CL = 0.6 of 5000 L packets; p_C = 0.09 of 5000 C packets (bands of 2.9 and 3 sigma: 104 and 61).
        assert!((2900..=3100).contains(&l_marks), "{l_marks} L marks");
        assert!((390..=510).contains(&dropped.len()), "{} C drops", dropped.len());
        assert!(dropped.iter().all(|id| id % 2 == 1));
        assert_eq!(run(1), (sent.clone(), dropped.clone()));
        assert_ne!(run(2).1, dropped);
    }

    #[test]
    fn both_queues_share_the_links_buffer() {
        let mut q = dualpi2(config(), BufferLimit::Packets(3));
        let mut dropped = Vec::new();
        offer(&mut q, 0, 3, |_| Ect::Ect0, 0);
        assert_eq!(q.enqueue(0, queued(9, 1500, Ect::Ect1, 0), &mut dropped), Admission::Drop);
        q.dequeue(1, &mut dropped);
        assert_eq!(q.enqueue(1, queued(9, 1500, Ect::Ect1, 1), &mut dropped), Admission::Enqueue);
        let mut q = dualpi2(config(), BufferLimit::Bytes(3000));
        offer(&mut q, 0, 1, |_| Ect::Ect1, 0);
        assert_eq!(q.enqueue(0, queued(9, 1501, Ect::Ect0, 0), &mut dropped), Admission::Drop);
        assert_eq!(q.enqueue(0, queued(9, 1500, Ect::Ect0, 0), &mut dropped), Admission::Enqueue);
        assert!(dropped.is_empty());
    }

    /// A link of `rate_bps` serving `q`, fed by `arrivals` (time, codepoint;
    /// 1500-byte packets, in time order) until `end`: each packet sent, with
    /// its codepoint, when it left and its sojourn. A departure at an
    /// arrival's instant goes first, as in the engine.
    fn serve(q: &mut DualPi2, arrivals: &[(Time, Ect)], rate_bps: u64, end: Time) -> Vec<(Ect, Time, Time)> {
        let mut sent = Vec::new();
        let mut dropped = Vec::new();
        let mut busy_until = None;
        let mut next = arrivals.iter().peekable();
        let mut start = |q: &mut DualPi2, now: Time, sent: &mut Vec<(Ect, Time, Time)>| {
            let d = q.dequeue(now, &mut dropped)?;
            sent.push((d.packet.packet.ect, now, d.packet.sojourn(now)));
            Some(now + serialization_time(d.packet.packet.wire_bytes, rate_bps))
        };
        let mut id = 0;
        loop {
            let arrival = next.peek().map(|a| a.0).filter(|&t| t <= end);
            match (busy_until, arrival) {
                (Some(done), a) if a.is_none_or(|a| done <= a) => busy_until = start(q, done, &mut sent),
                (_, Some(at)) => {
                    let ect = next.next().map_or(Ect::NotEct, |a| a.1);
                    id += 1;
                    q.enqueue(at, queued(id, 1500, ect, at), &mut Vec::new());
                    if busy_until.is_none() {
                        busy_until = start(q, at, &mut sent);
                    }
                }
                (None, None) => break,
                (Some(_), None) => unreachable!("matched above"),
            }
            if busy_until.is_some_and(|b| b > end) {
                break;
            }
        }
        sent
    }

    /// The point of the DualQ (RFC 9332 §2.2, §4.1): an L4S packet does not
    /// wait behind the Classic queue. A 100 Mbit/s link; unresponsive
    /// Not-ECT traffic at 105 % of it and L4S packets at 9 %: PI2 drops the
    /// classic excess (p_C near 0.14, below overload) and holds the Classic
    /// queue near its target (mean sojourn within [7.5, 22.5] ms, half the
    /// target either side) while no L4S packet waits as long as a
    /// millisecond (at most one packet's transmission, 120 us, or two with
    /// the WRR's turn for C), with either scheduler. (Unresponsive ECT(0)
    /// traffic would only be marked, and p' would rise to overload, A.2.)
    #[test]
    fn l4s_packets_wait_under_a_millisecond_beside_a_classic_queue_at_target() {
        let mut arrivals: Vec<(Time, Ect)> = (0..87_720u64).map(|i| (i * 114_000, Ect::NotEct)).collect();
        arrivals.extend((0..7_690u64).map(|i| (i * 1_300_000 + 1_000, Ect::Ect1)));
        arrivals.sort_by_key(|a| a.0);
        for scheduler in [Scheduler::TsFifo, Scheduler::Wrr] {
            let mut q = dualpi2(Config { scheduler, ..config() }, BufferLimit::Packets(5000));
            let sent = serve(&mut q, &arrivals, 100_000_000, secs(10));
            let settled = |ect: Ect| sent.iter().filter(move |s| s.0 == ect && s.1 >= secs(2)).map(|s| s.2);
            let c: Vec<Time> = settled(Ect::NotEct).collect();
            let l_max = settled(Ect::Ect1).max().unwrap_or(Time::MAX);
            let c_mean = c.iter().sum::<Time>() as f64 / c.len() as f64 / 1e6;
            eprintln!(
                "{scheduler:?}: C mean sojourn {c_mean:.2} ms, L max {:.3} ms, p' {:.3}",
                l_max as f64 / 1e6,
                q.state.p
            );
            assert!((7.5..=22.5).contains(&c_mean), "{scheduler:?}: C mean sojourn {c_mean} ms");
            assert!(l_max < millis(1), "{scheduler:?}: an L packet waited {l_max} ns");
            // At most one 1500-byte transmission at 100 Mbit/s (120 us), two with the WRR.
            let turns = if scheduler == Scheduler::Wrr { 2 } else { 1 };
            assert!(l_max <= turns * 120_000, "{scheduler:?}: an L packet waited {l_max} ns");
            assert!(settled(Ect::Ect1).count() > 6000, "{scheduler:?}: L packets were lost");
            assert!(q.state.p_cl(2.0) < 1.0, "{scheduler:?}: not an overload test");
        }
    }

    #[derive(Clone, Copy, Debug)]
    enum Step {
        Arrive { bytes: u32, ect: Ect },
        Depart,
    }

    /// Arrivals and dequeues in phases of 500: overload (which drives p' to
    /// overload), drain, balance, and idle periods of 0.1 s to 10 s after a
    /// drain (p' falls by alpha target, 0.15 a second, when idle). Some gaps
    /// are 0 and some end on an update's time.
    fn pattern(seed: u64, n: usize) -> Vec<(Time, Step)> {
        let mut r = RngStream::new(seed, "dualpi2-pattern");
        let tick = config().tupdate;
        let (mut t, mut held, mut arrive) = (0, 0u64, 0.6);
        let mut out = Vec::with_capacity(n + 1000);
        while out.len() < n {
            if out.len() % 500 == 0 {
                arrive = match r.uniform_inclusive(0, 5) {
                    0 => {
                        for _ in 0..held {
                            t += micros(200);
                            out.push((t, Step::Depart));
                        }
                        held = 0;
                        t += r.uniform_inclusive(millis(100), secs(10));
                        0.6
                    }
                    1 => 0.75,
                    2 => 0.55,
                    3 => 0.3,
                    _ => 0.5,
                };
            }
            t = match r.uniform_inclusive(0, 9) {
                0 => t,
                1 => (t / tick + 1) * tick,
                _ => t + r.uniform_inclusive(0, micros(400)),
            };
            if r.bernoulli(arrive) {
                held += 1;
                let ect = [Ect::NotEct, Ect::Ect0, Ect::Ect1][r.uniform_inclusive(0, 2) as usize];
                out.push((t, Step::Arrive { bytes: r.uniform_inclusive(40, 1500) as u32, ect }));
            } else {
                held = held.saturating_sub(1);
                out.push((t, Step::Depart));
            }
        }
        out
    }

    #[derive(Debug, Default, PartialEq)]
    struct Run {
        admissions: Vec<Admission>,
        sent: Vec<(u32, bool)>,
        dropped: Vec<u32>,
        /// p', prevq and the occupancy after each call.
        states: Vec<(Controller, QueueOccupancy)>,
        updates: Vec<f64>,
    }

    /// Plays `steps` into a 25-packet buffer, then drains it; with `ticked`,
    /// every update runs at its own time before the calls, and no call may
    /// find one due.
    fn play(config: Config, steps: &[(Time, Step)], ticked: bool) -> (Run, u64) {
        let mut q = dualpi2(config, BufferLimit::Packets(25));
        let tick_to = |q: &mut DualPi2, t: Time| {
            while q.clock.next <= t {
                let at = q.clock.next;
                q.update_at(at);
                q.clock.next += q.config.tupdate;
            }
        };
        let mut run = Run::default();
        let mut dropped = Vec::new();
        for (id, &(t, step)) in (1..).zip(steps) {
            if ticked {
                tick_to(&mut q, t);
            }
            let updates = q.updates.len();
            match step {
                Step::Arrive { bytes, ect } => {
                    run.admissions.push(q.enqueue(t, queued(id, bytes, ect, t), &mut dropped))
                }
                Step::Depart => {
                    run.sent.extend(q.dequeue(t, &mut dropped).map(|d| (d.packet.packet.id, d.marked)))
                }
            }
            if ticked {
                assert_eq!(q.updates.len(), updates, "a call at {t} found an update due");
            }
            run.states.push((q.state, q.occupancy()));
        }
        let end = steps.last().map_or(0, |s| s.0) + secs(1);
        if ticked {
            tick_to(&mut q, end);
        }
        let (rest, rest_dropped) = drain(&mut q, end);
        run.sent.extend(rest);
        run.dropped = dropped.iter().map(|d| d.packet.packet.id).chain(rest_dropped).collect();
        run.updates = std::mem::take(&mut q.updates);
        (run, q.skipped)
    }

    fn count(admissions: &[Admission], which: Admission) -> usize {
        admissions.iter().filter(|&&a| a == which).count()
    }

    /// The lazy catch-up gives the same p' after every update and the same
    /// decisions as updates run at their own times, with each scheduler and
    /// with draws; and every packet admitted leaves once, sent or dropped,
    /// and no refused one does.
    #[test]
    fn updates_caught_up_at_calls_equal_updates_run_at_their_times_and_packets_are_conserved() {
        let steps = pattern(2024, 100_000);
        let variants = [
            config(),
            Config { scheduler: Scheduler::Wrr, ..config() },
            Config { derandomize: false, tshift: millis(5), ..config() },
        ];
        for config in variants {
            let (lazy, skipped) = play(config, &steps, false);
            let (ticked, none_skipped) = play(config, &steps, true);
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
            assert_eq!(lazy, ticked, "{config:?}");
            assert!(skipped > 1000 && none_skipped == 0, "{config:?}: {skipped} skipped");

            // Conservation: ids are the steps' positions, from 1.
            let admitted: Vec<u32> = (1..)
                .zip(&steps)
                .filter(|(_, s)| matches!(s.1, Step::Arrive { .. }))
                .map(|(id, _)| id)
                .zip(&lazy.admissions)
                .filter(|(_, &a)| a == Admission::Enqueue)
                .map(|(id, _)| id)
                .collect();
            let mut out: Vec<u32> =
                lazy.sent.iter().map(|s| s.0).chain(lazy.dropped.iter().copied()).collect();
            out.sort_unstable();
            assert_eq!(out, admitted, "{config:?}: every admitted packet leaves exactly once");

            // The pattern exercises what it should: overload, AQM drops and
            // marks, buffer overflow.
            eprintln!(
                "{:?}: {} skipped, {} AQM drops, {} marks, {} overflows",
                config.scheduler,
                skipped,
                lazy.dropped.len(),
                lazy.sent.iter().filter(|s| s.1).count(),
                count(&lazy.admissions, Admission::Drop)
            );
            let max = lazy.updates.iter().fold(0.0f64, |a, &b| a.max(b));
            assert!(max >= 0.5, "{config:?}: p' at most {max}");
            assert!(lazy.dropped.len() > 100, "{config:?}: {} AQM drops", lazy.dropped.len());
            assert!(lazy.sent.iter().filter(|s| s.1).count() > 100, "{config:?}: marks");
            assert!(count(&lazy.admissions, Admission::Drop) > 100, "{config:?}: overflow");
        }
    }

    #[test]
    fn the_metrics_are_published_under_their_names() {
        let mut q = dualpi2(frozen(config()), BufferLimit::Unlimited);
        q.state.p = 0.25;
        offer(&mut q, 0, 2, |_| Ect::Ect1, 0);
        offer(&mut q, 10, 3, |_| Ect::NotEct, 0);
        q.c_sojourn = micros(12_500);
        q.l_sojourn = micros(300);
        q.drops = 4;
        let mut log = MetricLog::default();
        q.metrics(&mut Metrics::new(&mut log));
        let names: Vec<&str> = log.0.iter().map(|(n, _)| n.as_str()).collect();
        let listed: Vec<&str> = DESCRIPTOR.metrics.iter().map(|m| m.name).collect();
        assert_eq!(names, listed);
        let get = |name| log.get(name).unwrap_or(f64::NAN);
        assert_eq!(get("dualpi2.base_prob"), 0.25);
        assert_eq!(get("dualpi2.p_c"), 0.0625);
        assert_eq!(get("dualpi2.p_cl"), 0.5);
        assert_eq!(get("dualpi2.c_sojourn_ms"), 12.5);
        assert_eq!(get("dualpi2.l_sojourn_ms"), 0.3);
        assert_eq!((get("dualpi2.c_packets"), get("dualpi2.l_packets")), (3.0, 2.0));
        assert_eq!(get("dualpi2.drops"), 4.0);
    }

    fn params(pairs: &[(&str, &str)]) -> Params {
        let mut p = Params::new();
        for d in DESCRIPTOR.parameters {
            let given = pairs.iter().find(|(k, _)| *k == d.name).map(|&(_, v)| v);
            let text = given.unwrap_or(match d.default {
                ParamDefault::Value(v) => v,
                _ => unreachable!("every DualPI2 parameter has a default"),
            });
            let value = d.parse_text(text).unwrap_or_else(|e| panic!("{}: {e}", d.name));
            p.insert(d.name, value);
        }
        p
    }

    #[test]
    fn the_defaults_are_rfc_9332s() {
        let c = Config::from_params(&params(&[])).expect("the defaults build");
        assert_eq!(c, config());
        assert_eq!(c.p_cmax(), 0.25);
        let wrr = Config::from_params(&params(&[("scheduler", "wrr"), ("classic_protection", "25")]));
        assert_eq!(wrr.map(|c| (c.scheduler, c.classic_protection)).ok(), Some((Scheduler::Wrr, 25)));
        let link =
            QueueLink { buffer: BufferLimit::Packets(25), rate_bps: 1_000_000, rng: RngStream::new(1, "t") };
        assert_eq!(build(&params(&[]), link).map(|d| d.name()).ok(), Some("dualpi2"));
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
        assert_eq!(name(&[("k", "0")]).as_deref(), Some("k"));
        assert_eq!(name(&[("range", "0us")]), None, "a step");
        assert_eq!(name(&[("tshift", "0ms"), ("th_len", "0")]), None);
    }
}
