//! Flow Queue CoDel (FQ-CoDel), RFC 8290 (Hoeiland-Joergensen, McKenney,
//! Taht, Gettys and Dumazet, January 2018) §4, with the details of Linux's
//! `net/sched/sch_fq_codel.c` (`fq_codel_enqueue`, `fq_codel_drop`,
//! `fq_codel_dequeue`):
//!
//! - each packet goes to one of `flows` queues by a hash of its flow
//!   ([`Queued::flow`]) keyed by a perturbation drawn once from the link's
//!   random stream (RFC §4.1): the same seed hashes the same way, another
//!   seed differently, and flows that share a queue share it for the run;
//! - a queue that is on neither list when a packet joins it goes to the tail
//!   of `new_flows` with `quantum` bytes of credit (§4.1);
//! - a dequeue serves the head of `new_flows`, or if that is empty the head
//!   of `old_flows` (§4.2). A queue whose credit is used up (Linux: at or
//!   below zero) gets another quantum and moves to the tail of `old_flows`,
//!   and the choice starts again: deficit round robin in bytes;
//! - the chosen queue's own CoDel ([`super::codel::CodelState`], the same
//!   control law as the `codel` discipline, with shared `target`,
//!   `interval`, `ecn` and `mtu`) gives the packet to send, dropping or
//!   marking at that queue's head. If it gives none the queue is empty: on
//!   `new_flows` it moves to the tail of `old_flows` (so that a flow cannot
//!   stay new, and ahead of the old ones, by emptying its queue each round),
//!   on `old_flows` it leaves the lists (§4.2);
//! - after an arrival that takes the discipline over the link's buffer
//!   (Linux's `limit`, in packets or here also bytes) or over
//!   `memory_limit`, packets are dropped from the head of the queue with the
//!   largest byte backlog (ties: the lowest index, as Linux's scan), up to
//!   `drop_batch_size` of them and until half that backlog is gone; that
//!   queue's CoDel count rises by the number dropped (Linux
//!   `fq_codel_drop`). These are `BufferFull` drops.
//!
//! Choices (see the tests for each):
//!
//! - the empty queue on `new_flows` always moves to `old_flows`, as the RFC
//!   says; Linux removes it instead when `old_flows` is empty, which differs
//!   only in whether a packet arriving before the queue reaches the head of
//!   `old_flows` finds it new again;
//! - CoDel's one-MTU check reads the whole discipline's backlog, as Linux
//!   passes `sch->qstats.backlog` to `codel_dequeue`: a queue holding one
//!   packet can be dropped from while others hold more;
//! - the offered packet, when the overflow drop takes it (it is the tail of
//!   its queue, so only when that queue is emptied), is answered `Drop`
//!   rather than reported in `dropped` after an `Enqueue` as Linux's
//!   accounting would: one drop, reported once, never seen as queued;
//! - `memory_limit` counts the packets' wire bytes; Linux counts each
//!   buffer's `truesize`, which includes its allocation overhead;
//! - the overflow drop repeats until the limits hold again. Linux drops one
//!   batch per arrival, which always suffices for its packet limit, but a
//!   batch may free fewer bytes than a large arrival adds, and the buffer
//!   is a hard limit here;
//! - `ecn` defaults to false, as for `codel`; Linux's fq_codel turns it on.

use super::codel::{CodelParams, CodelQueue, CodelState, PacketFifo, ECN, INTERVAL, MTU, TARGET};
use super::{
    Admission, BufferLimit, DequeueDiscipline, Dequeued, Discipline, Dropped, QueueDescriptor, QueueLink,
    QueueOccupancy, Queued,
};
use crate::trace::DropCause;
use cclab_wire::{
    Descriptor, MetricDesc, Metrics, ParamDefault, ParamError, ParamType, Parameter, Params, Role, Time,
};
use std::cmp::Reverse;
use std::collections::VecDeque;

pub const DESCRIPTOR: QueueDescriptor = Descriptor {
    name: "fq_codel",
    role: Role::QueueDiscipline,
    summary: "Flow Queue CoDel: hashes flows into queues served by deficit round robin, new flows first, each queue under its own CoDel",
    source: "RFC 8290 (Hoeiland-Joergensen et al. 2018) §4; Linux net/sched/sch_fq_codel.c; CoDel as RFC 8289",
    parameters: &[
        Parameter {
            name: "flows",
            ty: ParamType::Integer,
            unit: "queues",
            min: 1.0,
            max: 65536.0,
            default: ParamDefault::Value("1024"),
            meaning: "number of queues flows are hashed into (Linux flows, at most 65536)",
        },
        Parameter {
            name: "quantum",
            ty: ParamType::Size,
            unit: "",
            min: 256.0,
            max: 1048576.0,
            default: ParamDefault::Value("1514B"),
            meaning: "bytes of credit a queue gets per round of deficit round robin (Linux quantum)",
        },
        TARGET,
        INTERVAL,
        Parameter {
            meaning: "mark ECN-capable packets CE instead of dropping them; off by default as codel's (Linux fq_codel turns it on)",
            ..ECN
        },
        MTU,
        Parameter {
            name: "memory_limit",
            ty: ParamType::Size,
            unit: "",
            min: 1.0,
            max: 2147483648.0,
            default: ParamDefault::Value("32MiB"),
            meaning: "bytes held above which the fattest queue is cut, besides the link's buffer (Linux memory_limit, counted here in wire bytes)",
        },
        Parameter {
            name: "drop_batch_size",
            ty: ParamType::Integer,
            unit: "packets",
            min: 1.0,
            max: 65536.0,
            default: ParamDefault::Value("64"),
            meaning: "most packets one overflow drops from the fattest queue (Linux drop_batch_size)",
        },
    ],
    metrics: &[NEW_FLOWS, OLD_FLOWS, DROPS, MAX_BACKLOG_BYTES, FLOW_BACKLOG],
    build,
};

pub const NEW_FLOWS: MetricDesc =
    MetricDesc { name: "fq_codel.new_flows", unit: "queues", meaning: "length of FQ-CoDel's new-flows list" };
pub const OLD_FLOWS: MetricDesc =
    MetricDesc { name: "fq_codel.old_flows", unit: "queues", meaning: "length of FQ-CoDel's old-flows list" };
pub const DROPS: MetricDesc = MetricDesc {
    name: "fq_codel.drops",
    unit: "packets",
    meaning: "packets dropped so far, by the queues' CoDel or to respect the limits (marks not counted)",
};
pub const MAX_BACKLOG_BYTES: MetricDesc = MetricDesc {
    name: "fq_codel.max_backlog_bytes",
    unit: "bytes",
    meaning: "byte backlog of the fattest queue now (the one an overflow would cut)",
};

/// Recorded once per long-lived flow (its series carry the flow's id), from
/// [`DequeueDiscipline::flow_backlog`] of the flow's data packets' key.
pub const FLOW_BACKLOG: MetricDesc = MetricDesc {
    name: "fq_codel.flow_backlog_bytes",
    unit: "bytes",
    meaning: "bytes in the queue each long-lived flow's data packets hash to (other flows may share it): one series per flow, named by its flow_id",
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    pub codel: CodelParams,
    pub flows: usize,
    pub quantum: u64,
    pub memory_limit: u64,
    pub drop_batch_size: u32,
}

impl Config {
    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        let whole = |name: &str, max: f64| {
            let x = p.number(name)?;
            if x.fract() != 0.0 || !(1.0..=max).contains(&x) {
                return Err(ParamError { name: name.into(), problem: "must be a whole number in range" });
            }
            Ok(x)
        };
        let config = Self {
            codel: CodelParams::from_params(p)?,
            flows: whole("flows", 65536.0)? as usize,
            quantum: p.size("quantum")?,
            memory_limit: p.size("memory_limit")?,
            drop_batch_size: whole("drop_batch_size", 65536.0)? as u32,
        };
        if config.quantum == 0 {
            // No credit would ever make a queue eligible.
            return Err(ParamError { name: "quantum".into(), problem: "must be above zero" });
        }
        Ok(config)
    }
}

fn build(p: &Params, link: QueueLink) -> Result<Discipline, ParamError> {
    let config = Config::from_params(p)?;
    Ok(Discipline::Dequeue(Box::new(FqCodel::new(config, link))))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    New,
    Old,
}

#[derive(Clone, Debug, Default)]
struct FlowQueue {
    packets: PacketFifo,
    codel: CodelState,
    /// Bytes it may still send this round (Linux `deficit`).
    deficit: i64,
    /// The list it is on, if any.
    list: Option<List>,
}

/// One queue as its CoDel sees it: popping updates the discipline's totals,
/// and the one-MTU check reads the whole backlog (Linux's `sch->qstats.backlog`).
struct SharedBacklog<'a> {
    packets: &'a mut PacketFifo,
    held: &'a mut QueueOccupancy,
}

impl CodelQueue for SharedBacklog<'_> {
    #[inline]
    fn pop_head(&mut self) -> Option<Queued> {
        let packet = self.packets.pop()?;
        self.held.packets -= 1;
        self.held.bytes -= u64::from(packet.packet.wire_bytes);
        Some(packet)
    }

    #[inline]
    fn backlog_bytes(&self) -> u64 {
        self.held.bytes
    }
}

pub struct FqCodel {
    config: Config,
    buffer: BufferLimit,
    /// The hash key, drawn once from the link's stream.
    perturbation: u64,
    queues: Vec<FlowQueue>,
    new_flows: VecDeque<usize>,
    old_flows: VecDeque<usize>,
    held: QueueOccupancy,
    drops: u64,
}

impl FqCodel {
    pub fn new(config: Config, mut link: QueueLink) -> Self {
        Self {
            perturbation: link.rng.next_u64(),
            queues: vec![FlowQueue::default(); config.flows],
            config,
            buffer: link.buffer,
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            held: QueueOccupancy::default(),
            drops: 0,
        }
    }

    /// The queue `flow` hashes to: a keyed mix of the flow, scaled to the
    /// number of queues by its high bits (as Linux's `reciprocal_scale`).
    fn queue_of(&self, flow: u64) -> usize {
        let hash = mix(flow ^ self.perturbation);
        ((u128::from(hash) * self.queues.len() as u128) >> 64) as usize
    }

    #[inline]
    fn over_limit(&self) -> bool {
        let over_buffer = match self.buffer {
            BufferLimit::Packets(n) => self.held.packets > n,
            BufferLimit::Bytes(b) => self.held.bytes > b,
            BufferLimit::Unlimited => false,
        };
        over_buffer || self.held.bytes > self.config.memory_limit
    }

    /// The non-empty queue with the most bytes, the lowest index among equals.
    fn fattest(&self) -> Option<usize> {
        let held = self.queues.iter().enumerate().filter(|(_, q)| !q.packets.is_empty());
        held.max_by_key(|&(i, q)| (q.packets.occupancy().bytes, Reverse(i))).map(|(i, _)| i)
    }

    /// Linux's `fq_codel_drop`: drops from the head of the fattest queue
    /// until half its bytes are gone or `drop_batch_size` packets are, and
    /// raises its CoDel count by as many. Returns whether it dropped the
    /// packet just offered to queue `offered` (its tail), which is then not
    /// reported in `dropped`. `None` if nothing is held.
    fn drop_from_fattest(&mut self, offered: usize, dropped: &mut Vec<Dropped>) -> Option<bool> {
        let fattest = self.fattest()?;
        let queue = &mut self.queues[fattest];
        let threshold = queue.packets.occupancy().bytes / 2;
        let (mut count, mut bytes, mut took_offered) = (0u32, 0u64, false);
        while let Some(packet) = queue.packets.pop() {
            count += 1;
            bytes += u64::from(packet.packet.wire_bytes);
            if fattest == offered && queue.packets.is_empty() {
                took_offered = true;
            } else {
                dropped.push(Dropped { packet, cause: DropCause::BufferFull });
            }
            if count >= self.config.drop_batch_size || bytes >= threshold {
                break;
            }
        }
        queue.codel.add_to_count(count);
        self.held.packets -= u64::from(count);
        self.held.bytes -= bytes;
        self.drops += u64::from(count);
        Some(took_offered)
    }

    fn pop_list_head(&mut self, list: List) {
        match list {
            List::New => self.new_flows.pop_front(),
            List::Old => self.old_flows.pop_front(),
        };
    }
}

/// SplitMix64's finaliser: a bijection of 64-bit words whose every output
/// bit depends on every input bit.
#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl DequeueDiscipline for FqCodel {
    fn name(&self) -> &'static str {
        "fq_codel"
    }

    fn enqueue(&mut self, _: Time, packet: Queued, dropped: &mut Vec<Dropped>) -> Admission {
        let index = self.queue_of(packet.flow);
        let queue = &mut self.queues[index];
        queue.packets.push(packet);
        if queue.list.is_none() {
            queue.list = Some(List::New);
            queue.deficit = self.config.quantum as i64;
            self.new_flows.push_back(index);
        }
        self.held.packets += 1;
        self.held.bytes += u64::from(packet.packet.wire_bytes);
        let mut took_offered = false;
        while self.over_limit() {
            match self.drop_from_fattest(index, dropped) {
                Some(took) => took_offered |= took,
                None => break,
            }
        }
        if took_offered {
            Admission::Drop
        } else {
            Admission::Enqueue
        }
    }

    fn dequeue(&mut self, now: Time, dropped: &mut Vec<Dropped>) -> Option<Dequeued> {
        loop {
            let (list, index) = match (self.new_flows.front(), self.old_flows.front()) {
                (Some(&i), _) => (List::New, i),
                (None, Some(&i)) => (List::Old, i),
                (None, None) => return None,
            };
            let queue = &mut self.queues[index];
            if queue.deficit <= 0 {
                queue.deficit += self.config.quantum as i64;
                queue.list = Some(List::Old);
                self.pop_list_head(list);
                self.old_flows.push_back(index);
                continue;
            }
            let before = dropped.len();
            let mut head = SharedBacklog { packets: &mut queue.packets, held: &mut self.held };
            let sent = queue.codel.dequeue(now, &self.config.codel, &mut head, dropped);
            self.drops += (dropped.len() - before) as u64;
            match sent {
                Some(d) => {
                    queue.deficit -= i64::from(d.packet.packet.wire_bytes);
                    return Some(d);
                }
                None if list == List::New => {
                    queue.list = Some(List::Old);
                    self.pop_list_head(list);
                    self.old_flows.push_back(index);
                }
                None => {
                    queue.list = None;
                    self.pop_list_head(list);
                }
            }
        }
    }

    fn occupancy(&self) -> QueueOccupancy {
        self.held
    }

    fn flow_backlog(&self, flow: u64) -> Option<QueueOccupancy> {
        Some(self.queues[self.queue_of(flow)].packets.occupancy())
    }

    fn metrics(&self, m: &mut Metrics) {
        m.put(NEW_FLOWS.name, self.new_flows.len() as f64);
        m.put(OLD_FLOWS.name, self.old_flows.len() as f64);
        m.put(DROPS.name, self.drops as f64);
        let fattest = self.fattest().map_or(0, |i| self.queues[i].packets.occupancy().bytes);
        m.put(MAX_BACKLOG_BYTES.name, fattest as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::super::codel::tests::{link, params, queued};
    use super::*;
    use crate::rng::RngStream;
    use crate::schedule::Schedule;
    use crate::transmitter::{Service, Transmitter};
    use cclab_wire::time::millis;
    use cclab_wire::MetricLog;
    use std::collections::BTreeMap;

    fn fq(pairs: &[(&str, &str)], buffer: BufferLimit, seed: u64) -> FqCodel {
        let config = Config::from_params(&params(&DESCRIPTOR, pairs)).expect("valid parameters");
        FqCodel::new(config, link(buffer, seed))
    }

    /// Two flows that hash to different queues (flow 1, and the first flow
    /// after it that does not share its queue).
    fn two_flows(q: &FqCodel) -> (u64, u64) {
        let other = (2..).find(|&f| q.queue_of(f) != q.queue_of(1)).expect("1024 queues");
        (1, other)
    }

    fn offer(q: &mut FqCodel, id: u32, flow: u64, bytes: u32, at: Time) -> (Admission, Vec<u32>) {
        let mut dropped = Vec::new();
        let a = q.enqueue(at, queued(id, flow, bytes, at, false), &mut dropped);
        assert!(dropped.iter().all(|d| d.cause == DropCause::BufferFull));
        (a, dropped.iter().map(|d| d.packet.packet.id).collect())
    }

    fn next_id(q: &mut FqCodel, now: Time) -> Option<u32> {
        let mut dropped = Vec::new();
        let d = q.dequeue(now, &mut dropped);
        assert!(dropped.is_empty(), "CoDel dropped at {now}");
        d.map(|d| d.packet.packet.id)
    }

    fn lists(q: &FqCodel) -> (Vec<usize>, Vec<usize>) {
        (q.new_flows.iter().copied().collect(), q.old_flows.iter().copied().collect())
    }

    #[test]
    fn the_defaults_are_linuxs_and_target_must_be_below_interval() {
        let config = Config::from_params(&params(&DESCRIPTOR, &[])).expect("defaults build");
        let codel = CodelParams { target: millis(5), interval: millis(100), ecn: false, mtu: 1500 };
        assert_eq!(
            config,
            Config { codel, flows: 1024, quantum: 1514, memory_limit: 32 << 20, drop_batch_size: 64 }
        );
        let built = |pairs: &[(&str, &str)]| {
            (DESCRIPTOR.build)(&params(&DESCRIPTOR, pairs), link(BufferLimit::Unlimited, 1))
        };
        assert!(matches!(built(&[]), Ok(Discipline::Dequeue(d)) if d.name() == "fq_codel"));
        let refused = built(&[("target", "100ms"), ("interval", "100ms")]).err().map(|e| e.name);
        assert_eq!(refused.as_deref(), Some("target"));
    }

    /// RFC 8290 §4.2: a flow that sends little is on new_flows when its
    /// packet arrives and goes before a backlogged flow, which is on old_flows.
    #[test]
    fn a_sparse_flows_packet_goes_before_a_backlogged_flows() {
        let mut q = fq(&[], BufferLimit::Unlimited, 1);
        let (bulk, sparse) = two_flows(&q);
        for id in 0..10 {
            offer(&mut q, id, bulk, 1000, 0);
        }
        // Two 1000-byte packets use the 1514-byte credit; the third dequeue
        // moves the bulk queue to old_flows with a new quantum and serves it.
        assert_eq!([next_id(&mut q, 0), next_id(&mut q, 0), next_id(&mut q, 0)], [Some(0), Some(1), Some(2)]);
        assert_eq!(lists(&q), (vec![], vec![q.queue_of(bulk)]));
        offer(&mut q, 100, sparse, 100, 0);
        assert_eq!(next_id(&mut q, 0), Some(100));
        assert_eq!(next_id(&mut q, 0), Some(3));
    }

    /// Deficit round robin: a queue sends while its credit is above zero,
    /// then gets one quantum more and goes to the tail of old_flows. With
    /// 1000-byte packets and a 1514-byte quantum: two packets a turn at
    /// first (1514 -> 514 -> -486), then 1028 -> 28 -> -972, two again.
    #[test]
    fn a_queue_whose_credit_is_spent_moves_to_the_tail_of_old_flows_with_a_quantum_more() {
        let mut q = fq(&[], BufferLimit::Unlimited, 1);
        let (a, b) = two_flows(&q);
        let (qa, qb) = (q.queue_of(a), q.queue_of(b));
        for i in 0..4 {
            offer(&mut q, i, a, 1000, 0);
            offer(&mut q, 10 + i, b, 1000, 0);
        }
        assert_eq!(lists(&q), (vec![qa, qb], vec![]));
        assert_eq!(q.queues[qa].deficit, 1514);
        let order: Vec<Option<u32>> = (0..3).map(|_| next_id(&mut q, 0)).collect();
        assert_eq!(order, [Some(0), Some(1), Some(10)]);
        assert_eq!(lists(&q), (vec![qb], vec![qa]));
        assert_eq!((q.queues[qa].deficit, q.queues[qb].deficit), (1028, 514));
        // b: 11 (-486), then 1028 and old_flows; a: 2 (28), 3 (-972), then
        // 542 and the tail of old_flows; b: 12 (28), 13 (-972).
        let order: Vec<Option<u32>> = (0..5).map(|_| next_id(&mut q, 0)).collect();
        assert_eq!(order, [Some(11), Some(2), Some(3), Some(12), Some(13)]);
        assert_eq!(lists(&q), (vec![], vec![qb, qa]));
        assert_eq!((q.queues[qa].deficit, q.queues[qb].deficit), (542, -972));
    }

    /// RFC 8290 §4.2: an empty queue met on new_flows moves to the tail of
    /// old_flows (here while old_flows is empty, where Linux would drop it
    /// from the lists), so a packet arriving meanwhile does not make it new
    /// again; an empty queue met on old_flows leaves the lists.
    #[test]
    fn empty_queues_move_from_new_to_old_flows_and_then_leave() {
        let mut q = fq(&[], BufferLimit::Unlimited, 1);
        let (a, b) = two_flows(&q);
        let (qa, qb) = (q.queue_of(a), q.queue_of(b));
        offer(&mut q, 1, a, 1000, 0);
        offer(&mut q, 2, b, 1000, 0);
        assert_eq!(lists(&q), (vec![qa, qb], vec![]));
        assert_eq!(next_id(&mut q, 0), Some(1));
        assert_eq!(lists(&q), (vec![qa, qb], vec![]), "credit left: a stays at the head");
        assert_eq!(next_id(&mut q, 0), Some(2));
        assert_eq!(lists(&q), (vec![qb], vec![qa]), "empty a moved to old_flows");
        offer(&mut q, 3, a, 1000, 0);
        assert_eq!(lists(&q), (vec![qb], vec![qa]), "a is not new again");
        assert_eq!(q.queues[qa].deficit, 514);
        assert_eq!(next_id(&mut q, 0), Some(3));
        assert_eq!(lists(&q), (vec![], vec![qa, qb]));
        assert_eq!(next_id(&mut q, 0), None);
        assert_eq!(lists(&q), (vec![], vec![]));
        assert!(q.queues.iter().all(|queue| queue.list.is_none()));
        // Back on no list, a queue is new again, with a fresh quantum.
        offer(&mut q, 4, b, 1000, 0);
        assert_eq!((lists(&q), q.queues[qb].deficit), ((vec![qb], vec![]), 1514));
    }

    /// Deficit round robin shares bytes, not packets: a flow of 1500-byte
    /// packets and one of 500-byte packets, both backlogged, have sent the
    /// same bytes within one quantum at the start of every round.
    #[test]
    fn round_robin_shares_bytes_between_large_and_small_packets_within_a_quantum() {
        let mut q = fq(&[], BufferLimit::Unlimited, 1);
        let (large, small) = two_flows(&q);
        for i in 0..400 {
            offer(&mut q, i, large, 1500, 0);
        }
        for i in 0..1200 {
            offer(&mut q, 1000 + i, small, 500, 0);
        }
        let (mut sent, mut rounds, mut previous_large) = ([0i64; 2], 0, false);
        for _ in 0..1000 {
            let id = next_id(&mut q, 0).expect("both backlogged");
            let is_large = id < 1000;
            if is_large && !previous_large {
                rounds += 1;
                assert!((sent[0] - sent[1]).abs() <= 1514, "round {rounds}: {sent:?}");
            }
            assert!((sent[0] - sent[1]).abs() <= 1514 + 1500, "{sent:?}");
            sent[usize::from(!is_large)] += if is_large { 1500 } else { 500 };
            previous_large = is_large;
        }
        assert!(rounds > 100, "{rounds} rounds");
        assert!(q.queues[q.queue_of(large)].packets.occupancy().packets > 0);
        assert!(q.queues[q.queue_of(small)].packets.occupancy().packets > 0);
    }

    /// Linux `fq_codel_drop`: over the limit, the fattest queue loses
    /// packets from its head until half its bytes are gone, and its CoDel
    /// count rises by as many; the arrival that caused it stays queued.
    #[test]
    fn an_overflow_cuts_half_of_the_fattest_queue_from_its_head() {
        let mut q = fq(&[], BufferLimit::Packets(10), 1);
        let (fat, thin) = two_flows(&q);
        for id in 0..8 {
            offer(&mut q, id, fat, 1000, 0);
        }
        offer(&mut q, 100, thin, 1000, 0);
        offer(&mut q, 101, thin, 1000, 0);
        assert_eq!(q.occupancy().packets, 10);
        // 11 > 10: 8000 bytes in the fat queue, cut until 4000 are gone.
        assert_eq!(offer(&mut q, 102, thin, 1000, 0), (Admission::Enqueue, vec![0, 1, 2, 3]));
        assert_eq!(q.occupancy(), QueueOccupancy { packets: 7, bytes: 7000 });
        assert_eq!(q.flow_backlog(fat), Some(QueueOccupancy { packets: 4, bytes: 4000 }));
        assert_eq!(q.flow_backlog(thin), Some(QueueOccupancy { packets: 3, bytes: 3000 }));
        assert_eq!(q.queues[q.queue_of(fat)].codel.count(), 4);
        assert_eq!(q.drops, 4);
    }

    #[test]
    fn memory_limit_and_byte_buffers_cut_the_fattest_queue_too() {
        let mut q = fq(&[("memory_limit", "3000B")], BufferLimit::Unlimited, 1);
        let (fat, thin) = two_flows(&q);
        for id in 0..3 {
            offer(&mut q, id, fat, 1000, 0);
        }
        // 4000 > 3000: the fat queue's 3000 bytes lose 1500 or more: two packets.
        assert_eq!(offer(&mut q, 10, thin, 1000, 0), (Admission::Enqueue, vec![0, 1]));

        let mut q = fq(&[], BufferLimit::Bytes(5000), 1);
        for id in 0..5 {
            offer(&mut q, id, fat, 1000, 0);
        }
        assert_eq!(offer(&mut q, 10, thin, 1500, 0), (Admission::Enqueue, vec![0, 1, 2]));
        assert_eq!(q.occupancy(), QueueOccupancy { packets: 3, bytes: 3500 });
    }

    #[test]
    fn one_overflow_drops_at_most_drop_batch_size_packets() {
        let mut q = fq(&[], BufferLimit::Packets(200), 1);
        let (fat, thin) = two_flows(&q);
        for id in 0..200 {
            offer(&mut q, id, fat, 100, 0);
        }
        // Half of 20 000 bytes would be 100 packets; the batch stops at 64.
        let (admission, dropped) = offer(&mut q, 1000, thin, 100, 0);
        assert_eq!((admission, dropped), (Admission::Enqueue, (0..64).collect()));
        let mut small = fq(&[("drop_batch_size", "3")], BufferLimit::Packets(200), 1);
        for id in 0..200 {
            offer(&mut small, id, fat, 100, 0);
        }
        assert_eq!(offer(&mut small, 1000, thin, 100, 0).1, [0, 1, 2]);
    }

    /// When the fattest queue is the arrival's own and the cut empties it,
    /// the arrival itself is dropped: answered `Drop`, not listed again.
    #[test]
    fn an_arrival_cut_by_its_own_overflow_is_answered_drop() {
        let mut q = fq(&[], BufferLimit::Packets(1), 1);
        let (small, large) = two_flows(&q);
        offer(&mut q, 1, small, 100, 0);
        assert_eq!(offer(&mut q, 2, large, 1500, 0), (Admission::Drop, vec![]));
        assert_eq!(q.occupancy(), QueueOccupancy { packets: 1, bytes: 100 });
        assert_eq!(q.drops, 1);
        assert_eq!(next_id(&mut q, 0), Some(1));
        assert_eq!(next_id(&mut q, 0), None);
    }

    /// Each queue has its own CoDel with the shared parameters, and the
    /// one-MTU check reads the discipline's whole backlog (Linux): queue a
    /// holds only two packets, yet once its head waited above target for an
    /// interval it is dropped, because b holds more.
    #[test]
    fn each_queue_runs_codel_and_the_mtu_check_reads_the_whole_backlog() {
        let mut q = fq(&[], BufferLimit::Unlimited, 1);
        let (a, b) = two_flows(&q);
        for id in 0..3 {
            offer(&mut q, id, a, 1000, 0);
        }
        for id in 10..20 {
            offer(&mut q, id, b, 1000, 0);
        }
        let mut dropped = Vec::new();
        let sent = q.dequeue(millis(10), &mut dropped).map(|d| d.packet.packet.id);
        assert_eq!(sent, Some(0));
        let qa = q.queue_of(a);
        assert_eq!(q.queues[qa].codel.count(), 0);
        let sent = q.dequeue(millis(110), &mut dropped).map(|d| d.packet.packet.id);
        assert_eq!(sent, Some(2));
        assert_eq!(
            dropped.iter().map(|d| (d.packet.packet.id, d.cause)).collect::<Vec<_>>(),
            [(1, DropCause::EarlyDrop)]
        );
        assert!(q.queues[qa].codel.dropping());
        assert!(!q.queues[q.queue_of(b)].codel.dropping());
        assert_eq!(q.drops, 1);
    }

    #[test]
    fn with_ecn_a_queues_codel_marks_ect_packets_instead() {
        let mut q = fq(&[("ecn", "true")], BufferLimit::Unlimited, 1);
        let mut dropped = Vec::new();
        for id in 0..10 {
            q.enqueue(0, queued(id, 7, 1000, 0, true), &mut dropped);
        }
        let marks: Vec<(u32, bool)> = [millis(10), millis(110)]
            .iter()
            .filter_map(|&t| q.dequeue(t, &mut dropped))
            .map(|d| (d.packet.packet.id, d.marked))
            .collect();
        assert_eq!(marks, [(0, false), (1, true)]);
        assert!(dropped.is_empty());
    }

    /// The hash is keyed by the link's random stream: the same seed maps
    /// every flow to the same queue, another seed maps them differently,
    /// and flows spread over the queues.
    #[test]
    fn flows_hash_the_same_for_a_seed_and_differently_across_seeds() {
        let (a, b, c) = (
            fq(&[], BufferLimit::Unlimited, 7),
            fq(&[], BufferLimit::Unlimited, 7),
            fq(&[], BufferLimit::Unlimited, 8),
        );
        let flows: Vec<u64> = (0..200u64).map(|f| (f << 32) | 3).collect();
        let map = |q: &FqCodel| flows.iter().map(|&f| q.queue_of(f)).collect::<Vec<_>>();
        assert_eq!(map(&a), map(&b));
        let differing = map(&a).iter().zip(map(&c)).filter(|(x, y)| **x != *y).count();
        assert!(differing > 150, "{differing} of 200 flows moved");
        let mut used = map(&a);
        used.sort_unstable();
        used.dedup();
        assert!(used.len() > 170, "200 flows in {} queues", used.len());
        assert!(map(&a).iter().all(|&i| i < 1024));
    }

    /// `flow_backlog` is the occupancy of the queue a flow hashes to, shared
    /// with every flow that hashes there.
    #[test]
    fn flow_backlog_is_the_backlog_of_the_flows_queue() {
        let mut q = fq(&[("flows", "4")], BufferLimit::Unlimited, 3);
        let partner = (2..).find(|&f| q.queue_of(f) == q.queue_of(1)).expect("4 queues");
        let stranger = (2..).find(|&f| q.queue_of(f) != q.queue_of(1)).expect("4 queues");
        offer(&mut q, 1, 1, 1000, 0);
        offer(&mut q, 2, partner, 500, 0);
        let shared = Some(QueueOccupancy { packets: 2, bytes: 1500 });
        assert_eq!((q.flow_backlog(1), q.flow_backlog(partner)), (shared, shared));
        assert_eq!(q.flow_backlog(stranger), Some(QueueOccupancy::default()));
    }

    /// Conservation: under random arrivals of many flows into a small
    /// buffer, slow service (so CoDel drops too) and a final drain, every
    /// packet offered is refused, dropped or sent exactly once, and the
    /// totals always match the queues.
    #[test]
    fn every_packet_offered_is_sent_or_dropped_exactly_once() {
        let mut rng = RngStream::new(11, "fq-codel-conservation");
        for (buffer, memory) in [(BufferLimit::Packets(40), "32MiB"), (BufferLimit::Unlimited, "20000B")] {
            let mut q = fq(&[("flows", "16"), ("drop_batch_size", "4"), ("memory_limit", memory)], buffer, 5);
            let mut fate: BTreeMap<u32, &str> = BTreeMap::new();
            let note = |id: u32, what: &'static str, fate: &mut BTreeMap<u32, &str>| {
                let before = fate.insert(id, what);
                assert!(before.is_none(), "packet {id} {what} after {before:?}");
            };
            let (mut now, mut dropped, mut offered) = (0, Vec::new(), 0u32);
            for _ in 0..20_000 {
                now += rng.uniform_inclusive(0, 2_000_000);
                if rng.bernoulli(0.6) {
                    let flow = (rng.uniform_inclusive(0, 30) << 32) | 1;
                    let bytes = rng.uniform_inclusive(40, 1500) as u32;
                    let p = queued(offered, flow, bytes, now, rng.bernoulli(0.5));
                    if q.enqueue(now, p, &mut dropped) == Admission::Drop {
                        note(offered, "refused", &mut fate);
                    }
                    offered += 1;
                } else if let Some(d) = q.dequeue(now, &mut dropped) {
                    note(d.packet.packet.id, "sent", &mut fate);
                }
                for d in dropped.drain(..) {
                    note(d.packet.packet.id, "dropped", &mut fate);
                }
                let total = q.queues.iter().fold(QueueOccupancy::default(), |t, queue| {
                    let o = queue.packets.occupancy();
                    QueueOccupancy { packets: t.packets + o.packets, bytes: t.bytes + o.bytes }
                });
                assert_eq!(q.occupancy(), total);
                assert_eq!(offered as u64 - fate.len() as u64, total.packets);
            }
            while let Some(d) = q.dequeue(now, &mut dropped) {
                note(d.packet.packet.id, "sent", &mut fate);
            }
            for d in dropped.drain(..) {
                note(d.packet.packet.id, "dropped", &mut fate);
            }
            assert_eq!(fate.len() as u32, offered);
            assert_eq!(q.occupancy(), QueueOccupancy::default());
            assert_eq!(lists(&q), (vec![], vec![]));
            let count = |what| fate.values().filter(|&&w| w == what).count() as u64;
            let (sent, dropped) = (count("sent"), count("dropped"));
            assert!(dropped > 100 && sent > 1000, "{sent} sent, {dropped} dropped");
            assert_eq!(q.drops, count("dropped") + count("refused"));
        }
    }

    /// On a link: at 8 Mbit/s (1000 bytes a millisecond) with 50 packets of
    /// one flow queued at 0, a packet of another flow offered at 10 ms waits
    /// only for the packet in transmission, not for the backlog.
    #[test]
    fn through_a_transmitter_a_sparse_packet_waits_for_one_transmission_not_the_backlog() {
        let q = fq(&[], BufferLimit::Packets(100), 1);
        let (bulk, sparse) = two_flows(&q);
        let service = Service::Rate(Schedule::constant(8_000_000));
        let mut t = Transmitter::new(Box::new(q), service, Schedule::constant(0));
        let (mut dropped, mut out) = (Vec::new(), Vec::new());
        for id in 0..50 {
            t.offer(0, queued(id, bulk, 1000, 0, false), &mut dropped);
        }
        let mut now = 0;
        while !t.is_empty() {
            let next = t.next_service(now);
            if now <= millis(10) && next > millis(10) {
                t.offer(millis(10), queued(100, sparse, 1000, millis(10), false), &mut dropped);
            }
            now = next;
            out.extend(t.serve(now, &mut dropped));
        }
        assert!(dropped.is_empty());
        let order: Vec<u32> = out.iter().map(|d| d.packet.packet.id).collect();
        let expected: Vec<u32> = (0..11).chain([100]).chain(11..50).collect();
        assert_eq!(order, expected);
        assert_eq!((out[11].start, out[11].finish), (millis(11), millis(12)));
    }

    #[test]
    fn metrics_publish_the_lists_drops_and_the_fattest_backlog() {
        let mut q = fq(&[], BufferLimit::Packets(5), 1);
        let (a, b) = two_flows(&q);
        for id in 0..4 {
            offer(&mut q, id, a, 1000, 0);
        }
        offer(&mut q, 10, b, 500, 0);
        offer(&mut q, 11, b, 500, 0); // 6 > 5: a loses two packets
        for _ in 0..3 {
            next_id(&mut q, 0); // a, a, then a moves to old_flows and b is served
        }
        let mut log = MetricLog::default();
        q.metrics(&mut Metrics::new(&mut log));
        let got: Vec<(&str, f64)> = log.0.iter().map(|(n, v)| (n.as_str(), *v)).collect();
        assert_eq!(
            got,
            [
                ("fq_codel.new_flows", 1.0),
                ("fq_codel.old_flows", 1.0),
                ("fq_codel.drops", 2.0),
                ("fq_codel.max_backlog_bytes", 500.0),
            ]
        );
        // The descriptor lists what the discipline publishes, and the per-flow
        // backlog, which the engine records from `flow_backlog`.
        let names: Vec<&str> =
            DESCRIPTOR.metrics.iter().map(|m| m.name).filter(|&n| n != FLOW_BACKLOG.name).collect();
        assert_eq!(names, got.iter().map(|(n, _)| *n).collect::<Vec<_>>());
    }
}
