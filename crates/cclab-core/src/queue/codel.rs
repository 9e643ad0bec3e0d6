//! Controlled Delay (CoDel), RFC 8289 (Nichols, Jacobson, McGregor and
//! Iyengar, January 2018), §§4-5 and the reference pseudocode of its §5
//! (`dodequeue`, `dequeue`, `control_law`), with ECN marking as Linux's
//! `include/net/codel_impl.h` (`codel_dequeue`, `params->ecn`) does it:
//!
//! - every dequeue looks at the sojourn time of the packet at the head. While
//!   it is below `target`, or the bytes left behind it are at most one `mtu`
//!   (the RFC's MAXPACKET check: a queue of one packet is no standing queue,
//!   and dropping from it would idle the link), nothing is dropped and the
//!   clock `first_above_time` is cleared;
//! - the first dequeue that sees it at or above `target` starts that clock
//!   at `now + interval`; a dequeue at or after it finds it OK to drop: the
//!   sojourn stayed above target for a whole interval;
//! - then CoDel enters the dropping state: it drops the head, serves the next
//!   packet, and schedules the next drop at `now + interval / sqrt(count)`;
//!   each later drop comes at `drop_next`, increments `count` and schedules
//!   the next one from the previous `drop_next` (the control law), in a loop
//!   so that a late dequeue catches up on every drop that was due;
//! - it leaves the dropping state at the first dequeue that is not OK to drop
//!   (sojourn below target, at most an MTU left, or an empty queue);
//! - re-entry: if it enters again within 16 intervals of the last scheduled
//!   drop, and the previous episode raised `count` by more than 1 above where
//!   it started (`lastcount`), it resumes at that rise instead of 1 (the
//!   RFC's "Linux version" of the rule);
//! - with `ecn` an ECN-capable packet that would be dropped is marked CE and
//!   delivered instead (Linux: one mark per dequeue, the next drop scheduled
//!   as for a drop); packets that are not ECN-capable are still dropped;
//! - the buffer is the hard limit: an arrival that does not fit is dropped at
//!   the tail (the RFC's `enqueue` on a full queue).
//!
//! Where the RFC and Linux differ, this follows the RFC: the control law uses
//! an exact square root (Linux keeps a Newton-iterated reciprocal square
//! root), truncated to the nanosecond as the pseudocode's conversion to
//! `time_t` does, and a drop becomes OK at `now >= first_above_time` (Linux
//! waits until strictly after).
//!
//! [`CodelState`] is the per-queue state machine; it pops through
//! [`CodelQueue`], so FQ-CoDel runs the same control law on each of its
//! queues.

use super::{
    droptail, Admission, BufferLimit, DequeueDiscipline, Dequeued, Discipline, Dropped, QueueDescriptor,
    QueueLink, QueueOccupancy, Queued,
};
use crate::trace::DropCause;
use cclab_wire::{
    Descriptor, MetricDesc, Metrics, ParamDefault, ParamError, ParamType, Parameter, Params, Role, Time,
};
use std::collections::VecDeque;

pub const TARGET: Parameter = Parameter {
    name: "target",
    ty: ParamType::Duration,
    unit: "",
    min: 1e-6,
    max: 10.0,
    default: ParamDefault::Value("5ms"),
    meaning: "acceptable standing sojourn time; must be below interval (RFC 8289 TARGET)",
};

pub const INTERVAL: Parameter = Parameter {
    name: "interval",
    ty: ParamType::Duration,
    unit: "",
    min: 1e-6,
    max: 100.0,
    default: ParamDefault::Value("100ms"),
    meaning: "how long the sojourn time must stay above target before a drop, and the first drop spacing (RFC 8289 INTERVAL)",
};

pub const ECN: Parameter = Parameter {
    name: "ecn",
    ty: ParamType::Bool,
    unit: "",
    min: 0.0,
    max: 0.0,
    default: ParamDefault::Value("false"),
    meaning: "mark ECN-capable packets CE instead of dropping them (Linux codel ecn)",
};

pub const MTU: Parameter = Parameter {
    name: "mtu",
    ty: ParamType::Size,
    unit: "",
    min: 1.0,
    max: 65536.0,
    default: ParamDefault::Value("1500B"),
    meaning: "nothing is dropped while at most this many bytes remain behind the head (RFC 8289 MAXPACKET)",
};

pub const DESCRIPTOR: QueueDescriptor = Descriptor {
    name: "codel",
    role: Role::QueueDiscipline,
    summary: "Controlled Delay: drops (or ECN-marks) at the head once the sojourn time stayed above target for an interval, ever faster while it stays",
    source: "RFC 8289 (Nichols, Jacobson, McGregor, Iyengar 2018) §§4-5 and its pseudocode; ECN marking as Linux include/net/codel_impl.h",
    parameters: &[TARGET, INTERVAL, ECN, MTU],
    metrics: &[DROPPING, COUNT, DROPS],
    build,
};

pub const DROPPING: MetricDesc =
    MetricDesc { name: "codel.dropping", unit: "bool", meaning: "1 while CoDel is in its dropping state" };
pub const COUNT: MetricDesc = MetricDesc {
    name: "codel.count",
    unit: "packets",
    meaning:
        "CoDel's count: drops (or marks) since it entered the dropping state, as the control law uses it",
};
pub const DROPS: MetricDesc = MetricDesc {
    name: "codel.drops",
    unit: "packets",
    meaning: "packets dropped so far, by the control law or at the tail (marks not counted)",
};

/// The parameters CoDel and FQ-CoDel share.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodelParams {
    pub target: Time,
    pub interval: Time,
    pub ecn: bool,
    /// Bytes behind the head at or below which nothing is dropped.
    pub mtu: u64,
}

impl CodelParams {
    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        let duration = |name: &str| {
            p.duration(name)?
                .ok_or(ParamError { name: name.into(), problem: "missing (not resolved by the validator)" })
        };
        let params = Self {
            target: duration("target")?,
            interval: duration("interval")?,
            ecn: p.bool("ecn")?,
            mtu: p.size("mtu")?,
        };
        if params.target >= params.interval {
            // Target is the acceptable part of the queue delay seen over an
            // interval (RFC 8289 §4.4 puts it at 5-10 % of interval); one as
            // long as the interval leaves the rule nothing to tell apart.
            return Err(ParamError { name: "target".into(), problem: "must be below interval" });
        }
        Ok(params)
    }

    /// The RFC's control law: the time of the next drop, `interval /
    /// sqrt(count)` after `t`, truncated to the nanosecond.
    pub fn control_law(&self, t: Time, count: u32) -> Time {
        let spacing = self.interval as f64 / f64::from(count.max(1)).sqrt();
        t.saturating_add(spacing as Time)
    }
}

/// What a CoDel state machine pops from: its queue's head, and the bytes
/// the one-MTU check compares (RFC `bytes()`: what is held after the pop).
pub trait CodelQueue {
    fn pop_head(&mut self) -> Option<Queued>;
    fn backlog_bytes(&self) -> u64;
}

/// One queue's CoDel variables (RFC 8289 §5's `codel_queue_t`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CodelState {
    /// When the sojourn time will have stayed at or above target for an
    /// interval; `None` while it is below (the RFC's 0).
    first_above_time: Option<Time>,
    /// When the next drop is due, in the dropping state.
    drop_next: Time,
    /// Drops since entering the dropping state (plus the re-entry carry).
    count: u32,
    /// `count` when the dropping state was last entered.
    lastcount: u32,
    dropping: bool,
}

impl CodelState {
    pub fn dropping(&self) -> bool {
        self.dropping
    }

    pub fn count(&self) -> u32 {
        self.count
    }

    /// Raises `count` after drops made outside the control law (FQ-CoDel's
    /// drops from the fattest queue, Linux's "increase its signal strength").
    pub fn add_to_count(&mut self, drops: u32) {
        self.count = self.count.saturating_add(drops);
    }

    /// The RFC's `dodequeue`: pops the head and says whether it is OK to
    /// drop it (its sojourn stayed at or above target for an interval).
    #[inline]
    fn pop_and_judge(
        &mut self,
        now: Time,
        params: &CodelParams,
        queue: &mut impl CodelQueue,
    ) -> (Option<Queued>, bool) {
        let Some(head) = queue.pop_head() else {
            // An empty queue cannot be above target.
            self.first_above_time = None;
            return (None, false);
        };
        if head.sojourn(now) < params.target || queue.backlog_bytes() <= params.mtu {
            self.first_above_time = None;
            return (Some(head), false);
        }
        match self.first_above_time {
            None => {
                self.first_above_time = Some(now.saturating_add(params.interval));
                (Some(head), false)
            }
            Some(above_since_an_interval) => (Some(head), now >= above_since_an_interval),
        }
    }

    /// The RFC's `dequeue`: the packet to send at `now`, if any; the packets
    /// dropped at the head on the way go to `dropped` as early drops.
    #[inline]
    pub fn dequeue(
        &mut self,
        now: Time,
        params: &CodelParams,
        queue: &mut impl CodelQueue,
        dropped: &mut Vec<Dropped>,
    ) -> Option<Dequeued> {
        let (mut head, ok_to_drop) = self.pop_and_judge(now, params, queue);
        let mut marked = false;
        if self.dropping {
            if !ok_to_drop {
                self.dropping = false;
            }
            while self.dropping && now >= self.drop_next {
                let Some(packet) = head else { break };
                self.count = self.count.saturating_add(1);
                if params.ecn && packet.packet.ect.capable() {
                    // Linux marks one packet per dequeue and schedules the
                    // next signal as for a drop.
                    self.drop_next = params.control_law(self.drop_next, self.count);
                    marked = true;
                    break;
                }
                dropped.push(Dropped { packet, cause: DropCause::EarlyDrop });
                let (next, ok_to_drop) = self.pop_and_judge(now, params, queue);
                head = next;
                if ok_to_drop {
                    self.drop_next = params.control_law(self.drop_next, self.count);
                } else {
                    self.dropping = false;
                }
            }
        } else if ok_to_drop {
            if let Some(packet) = head {
                if params.ecn && packet.packet.ect.capable() {
                    marked = true;
                } else {
                    dropped.push(Dropped { packet, cause: DropCause::EarlyDrop });
                    head = self.pop_and_judge(now, params, queue).0;
                }
            }
            self.dropping = true;
            // If the queue went above target again soon after the last
            // episode, the drop rate that controlled it then is a better
            // start than 1. drop_next is at most an interval after the
            // last drop, so now - drop_next approximates the time since.
            let delta = self.count.wrapping_sub(self.lastcount);
            let recent = (now as i128 - self.drop_next as i128) < 16 * params.interval as i128;
            self.count = if delta > 1 && recent { delta } else { 1 };
            self.drop_next = params.control_law(now, self.count);
            self.lastcount = self.count;
        }
        head.map(|packet| Dequeued { packet, marked })
    }
}

/// A FIFO of packets with its byte count: CoDel's queue, and each of
/// FQ-CoDel's.
#[derive(Clone, Debug, Default)]
pub struct PacketFifo {
    packets: VecDeque<Queued>,
    bytes: u64,
}

impl PacketFifo {
    pub fn push(&mut self, packet: Queued) {
        self.bytes += u64::from(packet.packet.wire_bytes);
        self.packets.push_back(packet);
    }

    pub fn pop(&mut self) -> Option<Queued> {
        let packet = self.packets.pop_front()?;
        self.bytes -= u64::from(packet.packet.wire_bytes);
        Some(packet)
    }

    pub fn occupancy(&self) -> QueueOccupancy {
        QueueOccupancy { packets: self.packets.len() as u64, bytes: self.bytes }
    }

    pub fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }
}

impl CodelQueue for PacketFifo {
    #[inline]
    fn pop_head(&mut self) -> Option<Queued> {
        self.pop()
    }

    #[inline]
    fn backlog_bytes(&self) -> u64 {
        self.bytes
    }
}

fn build(p: &Params, link: QueueLink) -> Result<Discipline, ParamError> {
    let params = CodelParams::from_params(p)?;
    Ok(Discipline::Dequeue(Box::new(Codel::new(params, link.buffer))))
}

pub struct Codel {
    params: CodelParams,
    buffer: BufferLimit,
    queue: PacketFifo,
    state: CodelState,
    /// Tail drops and control-law drops so far.
    drops: u64,
}

impl Codel {
    pub fn new(params: CodelParams, buffer: BufferLimit) -> Self {
        Self { params, buffer, queue: PacketFifo::default(), state: CodelState::default(), drops: 0 }
    }
}

impl DequeueDiscipline for Codel {
    fn name(&self) -> &'static str {
        "codel"
    }

    fn enqueue(&mut self, _: Time, packet: Queued, _: &mut Vec<Dropped>) -> Admission {
        if !droptail::fits(self.buffer, self.queue.occupancy(), packet.packet.wire_bytes) {
            self.drops += 1;
            return Admission::Drop;
        }
        self.queue.push(packet);
        Admission::Enqueue
    }

    fn dequeue(&mut self, now: Time, dropped: &mut Vec<Dropped>) -> Option<Dequeued> {
        let before = dropped.len();
        let d = self.state.dequeue(now, &self.params, &mut self.queue, dropped);
        self.drops += (dropped.len() - before) as u64;
        d
    }

    fn occupancy(&self) -> QueueOccupancy {
        self.queue.occupancy()
    }

    fn metrics(&self, m: &mut Metrics) {
        m.put(DROPPING.name, if self.state.dropping { 1.0 } else { 0.0 });
        m.put(COUNT.name, f64::from(self.state.count));
        m.put(DROPS.name, self.drops as f64);
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::events::Seq;
    use crate::pool::PacketRef;
    use crate::rng::RngStream;
    use cclab_wire::time::millis;
    use cclab_wire::MetricLog;

    pub(in crate::queue) fn queued(id: u32, flow: u64, bytes: u32, at: Time, ect: bool) -> Queued {
        let packet =
            PacketRef { id, dst: 0, wire_bytes: bytes, ect: crate::queue::test_support::codepoint(ect) };
        Queued { packet, enqueued_at: at, flow, seq: Seq { made_at: at, id: id as u64 } }
    }

    const PARAMS: CodelParams =
        CodelParams { target: millis(5), interval: millis(100), ecn: false, mtu: 1500 };

    /// A queue whose head, whenever popped, has waited `sojourn` at `now`,
    /// with `backlog` bytes left behind it: it lets a test set the sojourn
    /// time each dequeue sees, which is all the RFC's rules read.
    struct Standing {
        now: Time,
        sojourn: Time,
        backlog: u64,
        ect: bool,
        popped: u32,
    }

    impl CodelQueue for Standing {
        #[inline]
        fn pop_head(&mut self) -> Option<Queued> {
            self.popped += 1;
            Some(queued(self.popped, 0, 1000, self.now - self.sojourn, self.ect))
        }

        #[inline]
        fn backlog_bytes(&self) -> u64 {
            self.backlog
        }
    }

    /// Where a [`Run`]'s times start, so that a head can have waited since
    /// before its time 0; the RFC's rules only read differences of times.
    const ORIGIN: Time = 1_000_000_000;

    struct Run {
        state: CodelState,
        params: CodelParams,
        queue: Standing,
    }

    impl Run {
        fn new(params: CodelParams) -> Self {
            let queue = Standing { now: 0, sojourn: 0, backlog: 10_000, ect: false, popped: 0 };
            Self { state: CodelState::default(), params, queue }
        }

        /// Dequeues at `now` with the head's sojourn `sojourn`: the packet
        /// sent (whether marked) and how many were dropped first.
        fn at(&mut self, now: Time, sojourn: Time) -> (bool, usize) {
            let now = ORIGIN + now;
            self.queue.now = now;
            self.queue.sojourn = sojourn;
            let mut dropped = Vec::new();
            let d =
                self.state.dequeue(now, &self.params, &mut self.queue, &mut dropped).expect("never empty");
            assert!(dropped.iter().all(|d| d.cause == DropCause::EarlyDrop));
            (d.marked, dropped.len())
        }

        fn drops_at(&mut self, now: Time, sojourn: Time) -> usize {
            self.at(now, sojourn).1
        }

        fn first_above(&self) -> Option<Time> {
            self.state.first_above_time.map(|t| t - ORIGIN)
        }

        fn drop_next(&self) -> Time {
            self.state.drop_next - ORIGIN
        }
    }

    /// RFC 8289 §5's control law, `interval / sqrt(count)`, for count 1 to
    /// 4 at the default 100 ms: 100 ms, 70.710678 ms, 57.735026 ms, 50 ms
    /// (truncated to the nanosecond).
    #[test]
    fn the_control_law_spaces_drops_by_interval_over_the_square_root_of_count() {
        let spacing: Vec<Time> = (1..=4).map(|count| PARAMS.control_law(0, count)).collect();
        assert_eq!(spacing, [100_000_000, 70_710_678, 57_735_026, 50_000_000]);
        assert_eq!(PARAMS.control_law(millis(7), 1), millis(107));
    }

    #[test]
    fn nothing_is_dropped_while_the_sojourn_time_is_below_target() {
        let mut run = Run::new(PARAMS);
        for ms in 0..10_000 {
            assert_eq!(run.drops_at(millis(ms), millis(5) - 1), 0, "at {ms} ms");
        }
        assert!(!run.state.dropping && run.first_above().is_none());
    }

    /// The first dequeue at or above target starts the clock; the first drop
    /// comes at the dequeue a full interval later, not a nanosecond before;
    /// then drops are spaced by interval / sqrt(count) from the previous
    /// scheduled drop, for count 2, 3, 4.
    #[test]
    fn the_first_drop_waits_a_full_interval_above_target_then_drops_follow_the_control_law() {
        let mut run = Run::new(PARAMS);
        let above = millis(10);
        assert_eq!(run.drops_at(millis(20), above), 0);
        assert_eq!(run.first_above(), Some(millis(120)));
        assert_eq!(run.drops_at(millis(120) - 1, above), 0);
        assert!(!run.state.dropping);
        assert_eq!(run.drops_at(millis(120), above), 1);
        assert!(run.state.dropping);
        assert_eq!((run.state.count, run.state.lastcount, run.drop_next()), (1, 1, millis(220)));
        // count 1 -> 2 after 100 ms, 2 -> 3 after 70.710678 ms, 3 -> 4 after 57.735026 ms.
        let due = [220_000_000, 290_710_678, 348_445_704, 398_445_704];
        for (i, pair) in due.windows(2).enumerate() {
            assert_eq!(run.drops_at(pair[0] - 1, above), 0, "before drop {}", i + 2);
            assert_eq!(run.drops_at(pair[0], above), 1, "drop {}", i + 2);
            assert_eq!((run.state.count, run.drop_next()), (i as u32 + 2, pair[1]));
        }
        assert_eq!(run.state.lastcount, 1);
    }

    /// A sojourn below target at any dequeue clears the clock: the interval
    /// above target must be unbroken.
    #[test]
    fn a_dip_below_target_restarts_the_interval() {
        let mut run = Run::new(PARAMS);
        assert_eq!(run.drops_at(0, millis(10)), 0);
        assert_eq!(run.drops_at(millis(90), millis(4)), 0);
        assert_eq!(run.first_above(), None);
        assert_eq!(run.drops_at(millis(100), millis(10)), 0);
        assert_eq!(run.drops_at(millis(199), millis(10)), 0);
        assert_eq!(run.drops_at(millis(200), millis(10)), 1);
    }

    /// A dequeue long after drop_next drops every packet the control law
    /// scheduled up to now (the RFC's while loop).
    #[test]
    fn a_late_dequeue_catches_up_on_every_drop_due() {
        let mut run = Run::new(PARAMS);
        run.drops_at(0, millis(10));
        assert_eq!(run.drops_at(millis(100), millis(10)), 1);
        // Due at 200 ms (count 2, next 270.71 ms) and 270.71 ms (count 3, next 328.45 ms).
        assert_eq!(run.drops_at(millis(300), millis(10)), 2);
        assert_eq!((run.state.count, run.drop_next()), (3, 328_445_704));
    }

    #[test]
    fn the_dropping_state_ends_when_the_sojourn_time_falls_below_target() {
        let mut run = Run::new(PARAMS);
        run.drops_at(0, millis(10));
        run.drops_at(millis(100), millis(10));
        assert!(run.state.dropping);
        // Below target before the next drop is due: no drop, state left.
        assert_eq!(run.drops_at(millis(150), millis(4)), 0);
        assert!(!run.state.dropping && run.first_above().is_none());
        // No drop at the old drop_next: the state was left.
        assert_eq!(run.drops_at(millis(200), millis(10)), 0);
        assert_eq!(run.state.count, 1);
    }

    /// Drives CoDel to count 4 (entered at 100 ms, drops at 200, 270.71 and
    /// 328.45 ms: drop_next 378.445704 ms), then below target at 350 ms.
    fn after_an_episode_of_four_drops() -> Run {
        let mut run = Run::new(PARAMS);
        run.drops_at(0, millis(10));
        for t in [millis(100), millis(200), 270_710_678, 328_445_704] {
            assert_eq!(run.drops_at(t, millis(10)), 1);
        }
        assert_eq!((run.state.count, run.state.lastcount, run.drop_next()), (4, 1, 378_445_704));
        run.drops_at(millis(350), millis(1));
        assert!(!run.state.dropping);
        run
    }

    /// RFC 8289 §5 (the Linux version it gives): re-entering within 16
    /// intervals of drop_next with count - lastcount > 1 resumes at that
    /// difference; later, or after an episode that raised count by at most
    /// 1, it restarts at 1.
    #[test]
    fn re_entering_soon_resumes_at_the_last_episodes_rise_in_count() {
        let mut soon = after_an_episode_of_four_drops();
        soon.drops_at(millis(400), millis(10));
        assert_eq!(soon.drops_at(millis(500), millis(10)), 1);
        // delta = 4 - 1 = 3; 500 - 378.4 ms < 1.6 s.
        assert_eq!((soon.state.count, soon.state.lastcount), (3, 3));
        assert_eq!(soon.drop_next(), millis(500) + 57_735_026);

        let mut late = after_an_episode_of_four_drops();
        // 378.445704 ms + 16 x 100 ms = 1978.445704 ms: entering then is not "soon".
        late.drops_at(1_878_445_704, millis(10));
        assert_eq!(late.drops_at(1_978_445_704, millis(10)), 1);
        assert_eq!((late.state.count, late.state.lastcount), (1, 1));
        assert_eq!(late.drop_next(), 1_978_445_704 + millis(100));

        let mut just_in_time = after_an_episode_of_four_drops();
        just_in_time.drops_at(1_878_445_703, millis(10));
        assert_eq!(just_in_time.drops_at(1_978_445_703, millis(10)), 1);
        assert_eq!(just_in_time.state.count, 3);

        // An episode of two drops: delta = 2 - 1 = 1, not above 1.
        let mut short = Run::new(PARAMS);
        short.drops_at(0, millis(10));
        short.drops_at(millis(100), millis(10));
        short.drops_at(millis(200), millis(10));
        short.drops_at(millis(250), millis(1));
        short.drops_at(millis(260), millis(10));
        assert_eq!(short.drops_at(millis(360), millis(10)), 1);
        assert_eq!((short.state.count, short.state.lastcount), (1, 1));
    }

    /// The RFC's MAXPACKET check: with at most one MTU left behind the head
    /// nothing is dropped however long the sojourn; one byte more and the
    /// usual rule applies.
    #[test]
    fn nothing_is_dropped_while_at_most_one_mtu_is_queued() {
        let mut run = Run::new(PARAMS);
        run.queue.backlog = 1500;
        for ms in 0..5000 {
            assert_eq!(run.drops_at(millis(ms), millis(500)), 0);
        }
        assert!(run.first_above().is_none());
        run.queue.backlog = 1501;
        run.drops_at(millis(5000), millis(500));
        assert_eq!(run.drops_at(millis(5100), millis(500)), 1);
    }

    /// With `ecn`, an ECN-capable head is marked and delivered where it
    /// would have been dropped, on entering the dropping state and at each
    /// drop_next (one per dequeue), on the same schedule as drops.
    #[test]
    fn with_ecn_capable_packets_are_marked_on_the_drop_schedule_and_delivered() {
        let mut run = Run::new(CodelParams { ecn: true, ..PARAMS });
        run.queue.ect = true;
        run.at(0, millis(10));
        assert_eq!(run.at(millis(100) - 1, millis(10)), (false, 0));
        assert_eq!(run.at(millis(100), millis(10)), (true, 0));
        assert_eq!((run.state.count, run.drop_next()), (1, millis(200)));
        assert_eq!(run.at(millis(150), millis(10)), (false, 0));
        assert_eq!(run.at(millis(200), millis(10)), (true, 0));
        assert_eq!((run.state.count, run.drop_next()), (2, 270_710_678));
        // A late dequeue marks once and leaves the next signal due.
        assert_eq!(run.at(millis(400), millis(10)), (true, 0));
        assert_eq!((run.state.count, run.drop_next()), (3, 328_445_704));
        // Packets that are not ECN-capable are dropped as without ecn.
        run.queue.ect = false;
        assert_eq!(run.at(millis(400), millis(10)), (false, 2));
        assert_eq!(run.state.count, 5);
    }

    #[test]
    fn an_empty_queue_leaves_the_dropping_state() {
        let mut codel = Codel::new(PARAMS, BufferLimit::Unlimited);
        let mut dropped = Vec::new();
        for id in 0..10 {
            codel.enqueue(0, queued(id, 0, 1000, 0, false), &mut dropped);
        }
        codel.dequeue(millis(10), &mut dropped);
        codel.dequeue(millis(110), &mut dropped);
        assert!(codel.state.dropping);
        assert_eq!(dropped.len(), 1);
        while codel.dequeue(millis(120), &mut dropped).is_some() {}
        assert!(!codel.state.dropping && codel.state.first_above_time.is_none());
    }

    /// The discipline end to end: a queue of 1000-byte packets that all
    /// arrived at 0. The one-MTU rule keeps the last two; every packet
    /// offered is sent or dropped exactly once.
    #[test]
    fn the_discipline_drops_at_the_head_and_keeps_the_last_mtu() {
        let mut codel = Codel::new(PARAMS, BufferLimit::Unlimited);
        let mut dropped = Vec::new();
        for id in 0..20 {
            assert_eq!(codel.enqueue(0, queued(id, 0, 1000, 0, false), &mut dropped), Admission::Enqueue);
        }
        assert_eq!(codel.occupancy(), QueueOccupancy { packets: 20, bytes: 20_000 });
        let mut sent = Vec::new();
        let mut now = millis(10);
        while let Some(d) = codel.dequeue(now, &mut dropped) {
            assert!(!d.marked);
            sent.push(d.packet.packet.id);
            now += millis(50);
        }
        let dropped_ids: Vec<u32> = dropped.iter().map(|d| d.packet.packet.id).collect();
        // 10 ms: clock starts (id 0 sent). 60 ms: id 1. 110 ms: drop id 2, send 3.
        // 160 ms: 4. 210 ms: drop 5 (count 2), send 6. 260 ms: 7. 310 ms: drop 8, send 9...
        assert_eq!(&dropped_ids[..3], [2, 5, 8]);
        let mut all: Vec<u32> = sent.iter().chain(&dropped_ids).copied().collect();
        all.sort_unstable();
        assert_eq!(all, (0..20).collect::<Vec<_>>());
        assert_eq!(sent[sent.len() - 2..], [18, 19]);
        assert_eq!(codel.drops, dropped.len() as u64);
    }

    #[test]
    fn the_buffer_is_the_hard_limit_at_the_tail() {
        let mut dropped = Vec::new();
        let mut codel = Codel::new(PARAMS, BufferLimit::Packets(2));
        assert_eq!(codel.enqueue(0, queued(1, 0, 1000, 0, false), &mut dropped), Admission::Enqueue);
        assert_eq!(codel.enqueue(0, queued(2, 0, 1000, 0, false), &mut dropped), Admission::Enqueue);
        assert_eq!(codel.enqueue(0, queued(3, 0, 1000, 0, false), &mut dropped), Admission::Drop);
        let mut bytes = Codel::new(PARAMS, BufferLimit::Bytes(2500));
        assert_eq!(bytes.enqueue(0, queued(1, 0, 1500, 0, false), &mut dropped), Admission::Enqueue);
        assert_eq!(bytes.enqueue(0, queued(2, 0, 1001, 0, false), &mut dropped), Admission::Drop);
        assert_eq!(bytes.enqueue(0, queued(3, 0, 1000, 0, false), &mut dropped), Admission::Enqueue);
        assert!(dropped.is_empty());
        assert_eq!((codel.drops, bytes.drops), (1, 1));
        assert_eq!(codel.dequeue(0, &mut dropped).map(|d| d.packet.packet.id), Some(1));
    }

    #[test]
    fn metrics_publish_the_state_count_and_drops() {
        let mut codel = Codel::new(PARAMS, BufferLimit::Packets(30));
        let mut dropped = Vec::new();
        for id in 0..31 {
            codel.enqueue(0, queued(id, 0, 1000, 0, false), &mut dropped);
        }
        codel.dequeue(millis(10), &mut dropped);
        codel.dequeue(millis(110), &mut dropped);
        let mut log = MetricLog::default();
        codel.metrics(&mut Metrics::new(&mut log));
        assert_eq!(log.get("codel.dropping"), Some(1.0));
        assert_eq!(log.get("codel.count"), Some(1.0));
        assert_eq!(log.get("codel.drops"), Some(2.0)); // one at the tail, one at the head
        let names: Vec<&str> = DESCRIPTOR.metrics.iter().map(|m| m.name).collect();
        assert_eq!(names, log.0.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>());
    }

    pub(in crate::queue) fn params(descriptor: &QueueDescriptor, pairs: &[(&str, &str)]) -> Params {
        let mut p = Params::new();
        for d in descriptor.parameters {
            let given = pairs.iter().find(|(k, _)| *k == d.name).map(|&(_, v)| v);
            let text = given.unwrap_or(match d.default {
                ParamDefault::Value(v) => v,
                _ => unreachable!("every parameter here has a default"),
            });
            let value = d.parse_text(text).unwrap_or_else(|e| panic!("{}: {e}", d.name));
            d.check_range(&value).unwrap_or_else(|e| panic!("{}: {e}", d.name));
            p.insert(d.name, value);
        }
        p
    }

    pub(in crate::queue) fn link(buffer: BufferLimit, seed: u64) -> QueueLink {
        QueueLink { buffer, rate_bps: 10_000_000, rng: RngStream::new(seed, "link:0") }
    }

    #[test]
    fn the_defaults_are_the_rfcs_and_target_must_be_below_interval() {
        let p = CodelParams::from_params(&params(&DESCRIPTOR, &[])).expect("defaults build");
        assert_eq!(p, CodelParams { target: millis(5), interval: millis(100), ecn: false, mtu: 1500 });
        let error = |pairs: &[(&str, &str)]| {
            (DESCRIPTOR.build)(&params(&DESCRIPTOR, pairs), link(BufferLimit::Unlimited, 1)).err()
        };
        assert!(error(&[("target", "99ms")]).is_none());
        for pairs in [[("target", "100ms")], [("target", "200ms")]] {
            assert_eq!(error(&pairs).map(|e| e.name).as_deref(), Some("target"));
        }
        let built = (DESCRIPTOR.build)(&params(&DESCRIPTOR, &[]), link(BufferLimit::Unlimited, 1));
        assert!(matches!(built, Ok(Discipline::Dequeue(d)) if d.name() == "codel"));
    }
}
