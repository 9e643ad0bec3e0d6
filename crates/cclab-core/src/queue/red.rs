//! Random Early Detection (Floyd and Jacobson, "Random Early Detection
//! Gateways for Congestion Avoidance", IEEE/ACM ToN 1(4), 1993), with the
//! rules of ns-2.35's `Queue/RED` (`queue/red.cc` @f95482f0 and the defaults
//! in `tcl/lib/ns-default.tcl` @0400ea50, hbatmit/ns2.35):
//!
//! - the average queue of [`super::avg_queue`], updated at every arrival;
//! - below `min_thresh` nothing is dropped, and the first arrival that finds
//!   the average at or above it only restarts the count (`old_`);
//! - between the thresholds `pb = max_p (avg - min_thresh) / (max_thresh -
//!   min_thresh)`; with `gentle` (ns-2.35's default), between `max_thresh` and
//!   `2 max_thresh` it rises linearly from `max_p` to 1; beyond (beyond
//!   `max_thresh` without gentle) every arrival is dropped;
//! - the count of arrivals since the last drop spaces drops out: the paper's
//!   `pa = pb / (1 - count pb)`, or with `wait` (ns-2.35's default) no drop
//!   before `count pb` reaches 1 and `pa = pb / (2 - count pb)` up to 2;
//! - random decisions only while at least two packets wait (`qlen > 1`);
//! - with `ecn` (ns-2 `setbit_`), an ECN-capable packet chosen by the random
//!   test is marked (CE) instead of dropped; other packets are dropped.
//!   ns-2.35's default `use_mark_p_ true` marks only while pb <= `mark_p_`
//!   (0.1), so with the default max_p of 0.1 an ECT packet is marked up to
//!   avg = max_thresh and dropped above. The same switch also removes the
//!   forced drop of every arrival above `max_thresh` (`2 max_thresh` gentle):
//!   there pb is 1 and the random test drops, except that the first arrival
//!   after the average crossed `min_thresh` only restarts the count. With
//!   `use_mark_p = false` a chosen ECT packet is always marked and the forced
//!   drop applies (`drop_early` and `enque` in red.cc);
//! - the buffer is the hard limit (tail drop, as DropTail).
//!
//! Thresholds are in packets: byte mode, ns-2.35's default (`bytes_ true`,
//! `queue_in_bytes_ true`), is not modelled. ns-2.35 configures the thresholds and `q_weight_`
//! automatically by default (`thresh_ 0`, `q_weight_ -1`); the defaults here
//! are the fixed values it used before (thresh 5, maxthresh 15, q_weight
//! 0.002, as in the ns-default.tcl comments and red.cc's header).

use super::avg_queue::{AverageQueue, MEAN_PACKET_SIZE, W_Q};
use super::{
    check_threshold, droptail, Admission, BufferLimit, Discipline, QueueDescriptor, QueueDiscipline,
    QueueLink, QueueOccupancy,
};
use crate::pool::PacketRef;
use crate::rng::RngStream;
use cclab_wire::{
    Descriptor, MetricDesc, Metrics, ParamDefault, ParamError, ParamType, Parameter, Params, Role, Time,
};

pub const DESCRIPTOR: QueueDescriptor = Descriptor {
    name: "red",
    role: Role::QueueDiscipline,
    summary: "Random Early Detection: drops (or ECN-marks) arrivals with a probability that grows with the average queue",
    source: "Floyd & Jacobson, IEEE/ACM ToN 1(4) 1993; ns-2.35 queue/red.cc and tcl/lib/ns-default.tcl",
    parameters: &[
        Parameter {
            name: "min_thresh",
            ty: ParamType::Number,
            unit: "packets",
            min: 0.0,
            max: 1e9,
            default: ParamDefault::Value("5"),
            meaning: "average queue below which nothing is dropped (ns-2 thresh_)",
        },
        Parameter {
            name: "max_thresh",
            ty: ParamType::Number,
            unit: "packets",
            min: 0.0,
            max: 1e9,
            default: ParamDefault::Value("15"),
            meaning: "average queue at which the probability reaches max_p (ns-2 maxthresh_); at most the buffer",
        },
        Parameter {
            name: "max_p",
            ty: ParamType::Number,
            unit: "",
            min: 0.0,
            max: 1.0,
            default: ParamDefault::Value("0.1"),
            meaning: "drop probability at max_thresh, in (0, 1] (ns-2 1/linterm_)",
        },
        W_Q,
        Parameter {
            name: "gentle",
            ty: ParamType::Bool,
            unit: "",
            min: 0.0,
            max: 0.0,
            default: ParamDefault::Value("true"),
            meaning: "between max_thresh and twice it, the probability rises from max_p to 1 instead of jumping to 1",
        },
        Parameter {
            name: "wait",
            ty: ParamType::Bool,
            unit: "",
            min: 0.0,
            max: 0.0,
            default: ParamDefault::Value("true"),
            meaning: "ns-2 wait_: no drop before count pb reaches 1, then pb / (2 - count pb); false: the paper's pb / (1 - count pb)",
        },
        Parameter {
            name: "ecn",
            ty: ParamType::Bool,
            unit: "",
            min: 0.0,
            max: 0.0,
            default: ParamDefault::Value("false"),
            meaning: "mark ECN-capable packets (CE) instead of dropping them when the random test chooses them (ns-2 setbit_)",
        },
        Parameter {
            name: "use_mark_p",
            ty: ParamType::Bool,
            unit: "",
            min: 0.0,
            max: 0.0,
            default: ParamDefault::Value("true"),
            meaning: "ns-2 use_mark_p_: mark only while pb <= mark_p (drop otherwise) and leave drops above max_thresh to the random test; false: always mark a chosen ECT packet and force a drop above max_thresh (2 max_thresh gentle)",
        },
        Parameter {
            name: "mark_p",
            ty: ParamType::Number,
            unit: "",
            min: 0.0,
            max: 1.0,
            default: ParamDefault::Value("0.1"),
            meaning: "with use_mark_p, the largest pb at which a chosen ECT packet is marked rather than dropped (ns-2 mark_p_)",
        },
        MEAN_PACKET_SIZE,
    ],
    metrics: &[AVG_QUEUE],
    build,
};

/// The average queue, published as a link metric by RED and the CW marker.
pub const AVG_QUEUE: MetricDesc =
    MetricDesc { name: "avg_queue", unit: "packets", meaning: "the discipline's average queue (red, cw)" };

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    pub min_thresh: f64,
    pub max_thresh: f64,
    pub max_p: f64,
    pub w_q: f64,
    pub gentle: bool,
    pub wait: bool,
    pub ecn: bool,
    pub use_mark_p: bool,
    pub mark_p: f64,
    pub mean_packet_bytes: u64,
}

impl Config {
    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        let config = Self {
            min_thresh: p.number("min_thresh")?,
            max_thresh: p.number("max_thresh")?,
            max_p: p.number("max_p")?,
            w_q: p.number("w_q")?,
            gentle: p.bool("gentle")?,
            wait: p.bool("wait")?,
            ecn: p.bool("ecn")?,
            use_mark_p: p.bool("use_mark_p")?,
            mark_p: p.number("mark_p")?,
            mean_packet_bytes: p.size("mean_packet_size")?,
        };
        let problem = |name: &str, problem| Err(ParamError { name: name.into(), problem });
        if config.min_thresh >= config.max_thresh {
            return problem("min_thresh", "must be below max_thresh");
        }
        if config.max_p <= 0.0 {
            return problem("max_p", "must be in (0, 1]: 0 never drops");
        }
        check_weight(config.w_q)?;
        Ok(config)
    }

    /// The paper's pb for an average queue (ns-2 `calculate_p_new`).
    pub fn drop_probability(&self, avg: f64) -> f64 {
        let p = if avg < self.max_thresh {
            self.max_p * (avg - self.min_thresh) / (self.max_thresh - self.min_thresh)
        } else if self.gentle {
            self.max_p + (1.0 - self.max_p) * (avg - self.max_thresh) / self.max_thresh
        } else {
            1.0
        };
        p.min(1.0)
    }

    /// The probability for this arrival, `count` arrivals after the last drop
    /// (ns-2 `modify_p`, packet mode).
    pub fn spaced_probability(&self, pb: f64, count: u64) -> f64 {
        let x = count as f64 * pb;
        let p = if self.wait {
            if x < 1.0 {
                0.0
            } else if x < 2.0 {
                pb / (2.0 - x)
            } else {
                1.0
            }
        } else if x < 1.0 {
            pb / (1.0 - x)
        } else {
            1.0
        };
        p.min(1.0)
    }

    /// Whether an average this high drops every arrival without the random
    /// test (never with `use_mark_p`, as in ns-2.35's `enque`).
    fn forced(&self, avg: f64) -> bool {
        !self.use_mark_p && avg >= if self.gentle { 2.0 * self.max_thresh } else { self.max_thresh }
    }

    /// Whether a packet the random test chose at probability `pb` is marked
    /// rather than dropped (ns-2.35's `drop_early`).
    fn marks(&self, pb: f64, ect: bool) -> bool {
        self.ecn && ect && (!self.use_mark_p || pb <= self.mark_p)
    }
}

/// `w_q` must lie in the open interval (0, 1): 0 never moves the average, 1 is no average.
pub(crate) fn check_weight(w_q: f64) -> Result<(), ParamError> {
    if w_q <= 0.0 || w_q >= 1.0 {
        return Err(ParamError {
            name: "w_q".into(),
            problem: "must be in (0, 1): 0 never moves the average, 1 does not average",
        });
    }
    Ok(())
}

fn build(p: &Params, link: QueueLink) -> Result<Discipline, ParamError> {
    let config = Config::from_params(p)?;
    check_threshold("max_thresh", config.max_thresh, link.buffer, config.mean_packet_bytes)?;
    Ok(Discipline::Fifo(Box::new(Red::new(config, link))))
}

pub struct Red {
    config: Config,
    buffer: BufferLimit,
    average: AverageQueue,
    /// Arrivals since the last drop or mark (ns-2 `count`).
    count: u64,
    /// Whether the previous arrival found the average at or above min_thresh
    /// (ns-2 `old`): the first that does only restarts the count.
    above_min: bool,
    rng: RngStream,
}

impl Red {
    pub fn new(config: Config, link: QueueLink) -> Self {
        Self {
            average: AverageQueue::new(config.w_q, link.rate_bps, config.mean_packet_bytes),
            config,
            buffer: link.buffer,
            count: 0,
            above_min: false,
            rng: link.rng,
        }
    }

    /// The AQM decision on an arrival, before the buffer's hard limit.
    fn early(&mut self, avg: f64, waiting_packets: u64, ect: bool) -> Admission {
        let c = &self.config;
        if avg < c.min_thresh || waiting_packets <= 1 {
            self.above_min = false;
            return Admission::Enqueue;
        }
        if c.forced(avg) {
            return Admission::EarlyDrop;
        }
        if !self.above_min {
            self.above_min = true;
            self.count = 1;
            return Admission::Enqueue;
        }
        let pb = c.drop_probability(avg);
        if !self.rng.bernoulli(c.spaced_probability(pb, self.count)) {
            return Admission::Enqueue;
        }
        if c.marks(pb, ect) {
            Admission::EnqueueMarked
        } else {
            Admission::EarlyDrop
        }
    }
}

impl QueueDiscipline for Red {
    fn name(&self) -> &'static str {
        "red"
    }

    fn admit(
        &mut self,
        now: Time,
        waiting: QueueOccupancy,
        idle_since: Option<Time>,
        packet: &PacketRef,
    ) -> Admission {
        let avg = self.average.on_arrival(now, waiting.packets, idle_since);
        self.count += 1;
        let mut admission = self.early(avg, waiting.packets, packet.ect.capable());
        if !droptail::fits(self.buffer, waiting, packet.wire_bytes) {
            admission = Admission::Drop;
        }
        if admission != Admission::Enqueue {
            self.count = 0;
        }
        admission
    }

    fn metrics(&self, m: &mut Metrics) {
        m.put(AVG_QUEUE.name, self.average.value());
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{packet, waiting};
    use super::*;

    fn config() -> Config {
        Config {
            min_thresh: 5.0,
            max_thresh: 15.0,
            max_p: 0.1,
            w_q: 0.002,
            gentle: true,
            wait: false,
            ecn: false,
            use_mark_p: false,
            mark_p: 0.1,
            mean_packet_bytes: 500,
        }
    }

    fn red(config: Config, buffer: BufferLimit) -> Red {
        Red::new(config, QueueLink { buffer, rate_bps: 8_000_000, rng: RngStream::new(7, "red-test") })
    }

    #[test]
    fn pb_is_linear_between_the_thresholds_and_gentle_above() {
        let c = config();
        assert_eq!(c.drop_probability(5.0), 0.0);
        assert!((c.drop_probability(10.0) - 0.05).abs() < 1e-15);
        assert!((c.drop_probability(15.0) - 0.1).abs() < 1e-15);
        // Gentle: max_p at max_thresh, 1 at twice it, linear between.
        assert!((c.drop_probability(22.5) - 0.55).abs() < 1e-15);
        assert_eq!(c.drop_probability(30.0), 1.0);
        assert_eq!(c.drop_probability(45.0), 1.0);
        let abrupt = Config { gentle: false, ..c };
        assert_eq!(abrupt.drop_probability(15.0), 1.0);
        assert!(abrupt.forced(15.0) && !c.forced(29.9) && c.forced(30.0));
    }

    #[test]
    fn count_spaces_drops_as_the_paper_and_ns2_wait_say() {
        let paper = config();
        let pb = 0.05;
        assert_eq!(paper.spaced_probability(pb, 0), pb);
        assert!((paper.spaced_probability(pb, 10) - 0.1).abs() < 1e-15); // 0.05 / (1 - 0.5)
        assert_eq!(paper.spaced_probability(pb, 20), 1.0); // count pb = 1
        let wait = Config { wait: true, ..paper };
        assert_eq!(wait.spaced_probability(pb, 19), 0.0); // count pb < 1
        assert!((wait.spaced_probability(pb, 30) - 0.1).abs() < 1e-15); // 0.05 / (2 - 1.5)
        assert_eq!(wait.spaced_probability(pb, 40), 1.0);
    }

    /// With the average held between the thresholds, drops follow pa. The
    /// count is 1 at the first arrival after a drop (incremented before the
    /// test, as in the paper's pseudo-code and ns-2), so the product of the
    /// (1 - pa) telescopes and P(gap = n) = pb / (1 - pb) for n = 1 ..
    /// 1/pb - 1: uniform on 1..19 at pb = 0.05, mean 10 (the paper's text
    /// says 1..1/pb, an off-by-one in the count's origin).
    #[test]
    fn the_drop_rate_between_the_thresholds_matches_the_spacing() {
        let c = Config { w_q: 0.5, ..config() }; // the average follows q closely
        let mut r = red(c, BufferLimit::Unlimited);
        let (mut drops, mut arrivals) = (0u64, 0u64);
        for _ in 0..20 {
            r.admit(0, waiting(10), None, &packet(false)); // average -> 10: pb = 0.05
        }
        for _ in 0..200_000 {
            arrivals += 1;
            if r.admit(0, waiting(10), None, &packet(false)) == Admission::EarlyDrop {
                drops += 1;
            }
        }
        let mean_gap = arrivals as f64 / drops as f64;
        // About 20 000 gaps of variance (19^2 - 1) / 12 = 30: a standard error of 0.04.
        assert!((mean_gap - 10.0).abs() < 0.2, "mean gap {mean_gap}, expected 10");
    }

    #[test]
    fn the_first_arrival_above_min_thresh_only_restarts_the_count() {
        let c = Config { w_q: 0.999_999, max_p: 1.0, ..config() };
        let mut r = red(c, BufferLimit::Unlimited);
        // The average jumps to about 14 (pb about 0.9): no drop on crossing.
        assert_eq!(r.admit(0, waiting(14), None, &packet(false)), Admission::Enqueue);
        assert!(r.above_min && r.count == 1);
        // Below min_thresh again: the state resets.
        r.admit(0, waiting(2), None, &packet(false));
        assert!(!r.above_min);
    }

    #[test]
    fn nothing_is_dropped_early_with_one_packet_waiting() {
        let c = Config { w_q: 0.5, ..config() };
        let mut r = red(c, BufferLimit::Unlimited);
        for _ in 0..20 {
            r.admit(0, waiting(200), None, &packet(false)); // average far above 2 max_thresh
        }
        assert_eq!(r.admit(0, waiting(1), None, &packet(false)), Admission::Enqueue);
        assert_eq!(r.admit(0, waiting(40), None, &packet(false)), Admission::EarlyDrop);
    }

    /// Holds the average near `q` packets, then offers `n` arrivals at `q`,
    /// ECT on every other one, and returns the admissions.
    fn admissions_at(r: &mut Red, q: u64, n: usize) -> Vec<Admission> {
        for _ in 0..20 {
            r.admit(0, waiting(q), None, &packet(true));
        }
        (0..n).map(|i| r.admit(0, waiting(q), None, &packet(i % 2 == 0))).collect()
    }

    fn count(outcomes: &[Admission], which: Admission) -> usize {
        outcomes.iter().filter(|&&a| a == which).count()
    }

    #[test]
    fn ecn_marks_ect_packets_below_max_thresh_and_drops_the_others() {
        let c = Config { w_q: 0.5, ecn: true, wait: false, use_mark_p: true, ..config() };
        let mut r = red(c, BufferLimit::Unlimited);
        let outcomes = admissions_at(&mut r, 14, 2000); // average 14: pb 0.09
        let (marked, dropped) =
            (count(&outcomes, Admission::EnqueueMarked), count(&outcomes, Admission::EarlyDrop));
        assert!(marked > 50 && dropped > 50, "marked {marked}, dropped {dropped}");
        for (i, a) in outcomes.iter().enumerate() {
            let ect = i % 2 == 0;
            assert!(
                *a != if ect { Admission::EarlyDrop } else { Admission::EnqueueMarked },
                "arrival {i} (ect {ect}): {a:?}"
            );
        }
        // In the gentle region (average above max_thresh, pb > mark_p) ECT packets are dropped too.
        let gentle = admissions_at(&mut r, 25, 500);
        assert!(gentle.contains(&Admission::EarlyDrop));
        assert!(!gentle.contains(&Admission::EnqueueMarked));
    }

    /// ns-2.35 marks while pb <= mark_p: with max_p 0.2 that is up to the
    /// middle of the thresholds, not up to max_thresh.
    #[test]
    fn with_use_mark_p_ect_packets_are_marked_only_while_pb_is_at_most_mark_p() {
        let c = Config { w_q: 0.5, ecn: true, max_p: 0.2, use_mark_p: true, mark_p: 0.1, ..config() };
        // avg 8: pb = 0.2 x 3 / 10 = 0.06 <= 0.1: every chosen ECT packet is marked.
        let low = admissions_at(&mut red(c, BufferLimit::Unlimited), 8, 4000);
        assert!(count(&low, Admission::EnqueueMarked) > 50);
        assert!(low.iter().step_by(2).all(|&a| a != Admission::EarlyDrop));
        // avg 12.5: pb = 0.15 > 0.1: chosen ECT packets are dropped, none marked.
        let high = admissions_at(&mut red(c, BufferLimit::Unlimited), 12, 4000);
        assert!(count(&high, Admission::EarlyDrop) > 100);
        assert_eq!(count(&high, Admission::EnqueueMarked), 0);
    }

    #[test]
    fn without_use_mark_p_chosen_ect_packets_are_marked_in_the_gentle_region_too() {
        let c = Config { w_q: 0.5, ecn: true, use_mark_p: false, ..config() };
        // avg 25: pb = 0.1 + 0.9 x 10 / 15 = 0.7, below the forced region at 30.
        let gentle = admissions_at(&mut red(c, BufferLimit::Unlimited), 25, 2000);
        assert!(count(&gentle, Admission::EnqueueMarked) > 100);
        assert!(gentle.iter().step_by(2).all(|&a| a != Admission::EarlyDrop));
    }

    /// Above 2 max_thresh (gentle) ns-2.35 without use_mark_p drops every
    /// arrival outright; with it, pb = 1 drops through the random test, so the
    /// first arrival after crossing min_thresh only restarts the count.
    #[test]
    fn use_mark_p_turns_the_forced_drop_into_a_certain_random_one() {
        for use_mark_p in [false, true] {
            let c = Config { w_q: 0.999_999, use_mark_p, ..config() };
            let mut r = red(c, BufferLimit::Unlimited);
            let first = r.admit(0, waiting(40), None, &packet(false));
            let second = r.admit(0, waiting(40), None, &packet(false));
            let expected_first = if use_mark_p { Admission::Enqueue } else { Admission::EarlyDrop };
            assert_eq!((first, second), (expected_first, Admission::EarlyDrop), "use_mark_p {use_mark_p}");
        }
    }

    #[test]
    fn the_buffer_is_the_hard_limit() {
        let mut r = red(config(), BufferLimit::Packets(3));
        assert_eq!(r.admit(0, waiting(3), None, &packet(false)), Admission::Drop);
        assert_eq!(r.admit(0, waiting(2), None, &packet(false)), Admission::Enqueue);
    }

    fn params(pairs: &[(&str, &str)]) -> Params {
        let mut p = Params::new();
        for d in DESCRIPTOR.parameters {
            let given = pairs.iter().find(|(k, _)| *k == d.name).map(|&(_, v)| v);
            let text = given.unwrap_or(match d.default {
                ParamDefault::Value(v) => v,
                _ => unreachable!("every RED parameter has a default"),
            });
            let value = d.parse_text(text).unwrap_or_else(|e| panic!("{}: {e}", d.name));
            p.insert(d.name, value);
        }
        p
    }

    fn build_error(pairs: &[(&str, &str)], buffer: BufferLimit) -> Option<ParamError> {
        let link = QueueLink { buffer, rate_bps: 1_000_000, rng: RngStream::new(1, "t") };
        build(&params(pairs), link).err()
    }

    #[test]
    fn impossible_settings_are_refused_by_name() {
        let name = |pairs: &[(&str, &str)], buffer| build_error(pairs, buffer).map(|e| e.name);
        assert_eq!(name(&[], BufferLimit::Packets(15)), None);
        assert_eq!(name(&[("min_thresh", "15")], BufferLimit::Unlimited).as_deref(), Some("min_thresh"));
        assert_eq!(name(&[("max_p", "0")], BufferLimit::Unlimited).as_deref(), Some("max_p"));
        assert_eq!(name(&[("w_q", "0")], BufferLimit::Unlimited).as_deref(), Some("w_q"));
        assert_eq!(name(&[("w_q", "1")], BufferLimit::Unlimited).as_deref(), Some("w_q"));
        let above = build_error(&[], BufferLimit::Packets(14));
        assert_eq!(
            above.map(|e| (e.name, e.problem)),
            Some(("max_thresh".into(), super::super::ABOVE_BUFFER))
        );
        // A buffer in bytes holds bytes / mean_packet_size packets: 7500 B is 15 of 500 B.
        assert_eq!(name(&[], BufferLimit::Bytes(7500)), None);
        assert_eq!(name(&[], BufferLimit::Bytes(7499)).as_deref(), Some("max_thresh"));
    }
}
