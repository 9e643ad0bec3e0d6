//! The event loop, the connections it drives and the host agents that open them.
//!
//! Events are `(time, seq, target)` in a binary heap. `seq` names who made
//! the event and how many it had made before ([`Seq`]), not when the engine
//! happened to make it: ties in time resolve by maker, then in each maker's
//! own order. A run is a pure function of its inputs, and it stays the same
//! run when the engine does a maker's work early (packets handed to an
//! endpoint ahead of their arrival event, see [`Engine::cut_into_endpoint`];
//! an endpoint's timers fired ahead of the engine's time while nothing can
//! reach it first, see [`Engine::run_ahead`]). Targets are links (the packet at the head of a
//! link's delay line arrives at the far end), endpoints and agents (their timer
//! fires) and the engine's own bookkeeping (window start, time-series samples).
//!
//! Timers are lazy: an endpoint or agent has at most one entry in the heap.
//! When its wanted wake-up moves later (an RTO restarted by every ACK) nothing
//! is pushed; the early entry fires, finds nothing due, and re-arms at the new time.
//!
//! A connection is a pair of endpoints (the side that sends the application's
//! data and the side that receives it) on two nodes, with a [`FlowId`] that is
//! never reused. Connections are opened before the run or, by host agents
//! ([`Agent`]), during it; a connection an agent opened is reclaimed as soon as
//! both endpoints say they are closed, and it leaves a [`TransferRecord`].
//! Packets still travelling to a reclaimed endpoint are dropped on arrival as
//! orphans. Counters are reported per *bucket* (one row of the flows table): a
//! flow instance has its own, and a traffic source pools all its connections in
//! one, so the report stays the size of the scenario, not of the traffic.

use crate::cancel::{CancelToken, Cancelled, CANCEL_CHECK_EVENTS};
use crate::events::{EventQueue, Seq};
use crate::network::Network;
use crate::pool::{PacketId, PacketPool, PacketRef};
use crate::queue::{Admission, Dropped, Queued};
use crate::stats::{
    Learned, MeasurementWindow, MetricRow, Observation, RowWriter, Source, TimeSeries, DEPARTED_BY_KIND,
    QUEUE_BYTES, QUEUE_PACKETS,
};
use crate::trace::{DropCause, TraceEvent, Tracer};
use crate::transmitter::Departure;
use cclab_wire::{
    metrics, Control, ControlRefused, Counters, Endpoint, EndpointId, FlowId, LinkId, MetricSink, Metrics,
    NodeId, Outbox, SendState, Time, NEVER,
};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Flow ids are unique integers: a multiplicative hash spreads them well, costs
/// one multiplication, and has no random state, so iteration order is the same
/// in every run.
#[derive(Default)]
struct FlowIdHasher(u64);

impl Hasher for FlowIdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.0 = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

type FlowMap<V> = HashMap<FlowId, V, BuildHasherDefault<FlowIdHasher>>;

/// A row of the flows table whose counters the engine keeps.
pub type BucketId = u32;
/// Index of a host agent.
pub type AgentId = u32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    WindowStart,
    /// Take the samples of this observation.
    Sample(u32),
    Link(LinkId),
    /// The transmitter of a link that dequeues can send (see [`Engine::transmit`]).
    Transmit(LinkId),
    Endpoint(EndpointId),
    Agent(AgentId),
}

type Event = crate::events::Event<Target>;

struct Slot {
    /// `None` once the connection was reclaimed (the slot waits for reuse).
    endpoint: Option<Box<dyn Endpoint>>,
    node: NodeId,
    peer_node: NodeId,
    peer: EndpointId,
    flow: FlowId,
    /// Time of this endpoint's entry in the heap, or NEVER.
    armed: Time,
    /// The wake-up the endpoint last asked for, and since when (see [`WakeUp`]).
    wake_up: WakeUp,
    /// When the endpoint last did something (it may be ahead of the engine's
    /// time after taking a packet early); its timer never fires before that.
    acted_at: Time,
    /// Its connection was opened by an agent and is reclaimed when done.
    reclaimable: bool,
    /// It is acting ahead of the engine's time ([`Engine::run_ahead`]): its
    /// timer is armed once it stops.
    ahead: bool,
    /// Events this slot's endpoints made, kept across reuse (see [`Seq`]).
    made: u64,
}

/// What a new connection is: its two endpoints, where they live, and where its
/// counters are reported.
pub struct Open {
    /// The endpoint whose application sends data, at node `from`.
    pub sender: Box<dyn Endpoint>,
    /// Its peer, at node `to`.
    pub receiver: Box<dyn Endpoint>,
    pub from: NodeId,
    pub to: NodeId,
    pub bucket: BucketId,
    /// Bytes the application will transfer, if finite: the connection then leaves a [`TransferRecord`].
    pub size: Option<u64>,
    /// When its transfer starts (the opening time for connections opened by an agent).
    pub start: Time,
}

/// What became of one finite transfer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TransferRecord {
    pub bucket: BucketId,
    pub flow: FlowId,
    pub start: Time,
    /// When the sender's application saw its last byte acknowledged; `None` if the run ended first.
    pub finished: Option<Time>,
    pub size: u64,
    /// Bytes the receiving application got.
    pub delivered: u64,
    /// Packets the sender put on the wire (retransmissions included).
    pub packets_sent: u64,
}

struct Connection {
    sender: EndpointId,
    receiver: EndpointId,
    bucket: BucketId,
    size: Option<u64>,
    start: Time,
    /// Opened by this agent, which is told when it closes; such connections are reclaimed.
    owner: Option<AgentId>,
}

/// Counters of one report row: sender side and receiver side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SideCounters {
    pub sender: Counters,
    pub receiver: Counters,
}

impl SideCounters {
    fn merge(&mut self, other: &SideCounters) {
        self.sender.merge(&other.sender);
        self.receiver.merge(&other.receiver);
    }

    fn since(&self, start: &SideCounters) -> SideCounters {
        SideCounters {
            sender: self.sender.since(&start.sender),
            receiver: self.receiver.since(&start.receiver),
        }
    }
}

/// A counter pair is about 720 bytes, so a bucket keeps one only where it
/// differs from zero: at 20 000 long-lived flows no connection is reclaimed,
/// and with no warm-up nothing is counted before the window.
#[derive(Default)]
struct Bucket {
    /// Totals of the bucket's connections that were reclaimed.
    closed: Option<Box<SideCounters>>,
    /// Everything counted up to the start of the measurement window, if anything was.
    at_window_start: Option<Box<SideCounters>>,
}

/// A live connection as an agent sees it.
#[derive(Clone, Copy, Debug)]
pub struct ConnectionInfo {
    pub flow: FlowId,
    pub from: NodeId,
    pub to: NodeId,
    pub bucket: BucketId,
    pub sender: Counters,
    /// What the sender tells its host for send-buffer allocation, if it has a send buffer.
    pub send: Option<SendState>,
}

/// Read-only access to the live connections, for agents.
pub struct Connections<'a> {
    slots: &'a [Slot],
    live: &'a FlowMap<Connection>,
}

impl Connections<'_> {
    /// Every live connection whose sender is at `node`, in flow order.
    pub fn at(&self, node: NodeId) -> Vec<ConnectionInfo> {
        let mut found: Vec<ConnectionInfo> = self
            .live
            .iter()
            .filter_map(|(&flow, c)| {
                let slot = &self.slots[c.sender as usize];
                let endpoint = slot.endpoint.as_ref()?;
                (slot.node == node).then(|| ConnectionInfo {
                    flow,
                    from: slot.node,
                    to: slot.peer_node,
                    bucket: c.bucket,
                    sender: endpoint.counters(),
                    send: endpoint.send_state(),
                })
            })
            .collect();
        found.sort_by_key(|c| c.flow);
        found
    }
}

/// What an agent asks the engine to do; applied after the agent returns.
pub struct Actions {
    next_flow: FlowId,
    opens: Vec<(FlowId, Open)>,
    controls: Vec<(FlowId, Control)>,
}

impl Actions {
    /// Opens a connection; returns the flow id it will have.
    pub fn open(&mut self, open: Open) -> FlowId {
        let flow = self.next_flow;
        self.next_flow += 1;
        self.opens.push((flow, open));
        flow
    }

    /// Passes a control input to the sending endpoint of a live connection.
    pub fn control(&mut self, flow: FlowId, control: Control) {
        self.controls.push((flow, control));
    }
}

/// A program running on a host for the whole run: a traffic generator, a
/// buffer allocator. It wakes on its own timer and acts through [`Actions`].
pub trait Agent {
    fn next_wakeup(&self) -> Time;
    fn on_timer(&mut self, now: Time, connections: &Connections, actions: &mut Actions);
    /// A connection this agent opened has closed and was reclaimed.
    fn on_closed(&mut self, _now: Time, _record: &TransferRecord, _actions: &mut Actions) {}
    /// Control inputs the connections refused (a bug in the agent or the protocol).
    fn on_refused(&mut self, _flow: FlowId, _refused: ControlRefused) {}
    /// Why the agent stopped working, if it did; the run reports it as an error.
    fn failure(&self) -> Option<String> {
        None
    }
    /// The (from, to) nodes of every connection the agent may open, or
    /// `None` if it cannot say. Packets cut through a link only when every
    /// route that can use it is known (see [`Engine::forward`]), so one agent
    /// that cannot say makes every packet go hop by hop.
    fn connection_nodes(&self) -> Option<Vec<(NodeId, NodeId)>>;
    /// The nodes whose connections, other than those it opened, the agent
    /// reads or controls during the run, or `None` if it cannot say. An
    /// endpoint is handed packets ahead of their arrival only where no agent
    /// looks (see [`Engine::endpoint_cuts`]), so an agent that cannot say
    /// makes every endpoint wait for its packets' arrival events.
    fn watched_nodes(&self) -> Option<Vec<NodeId>> {
        None
    }
}

struct AgentSlot {
    agent: Box<dyn Agent>,
    armed: Time,
    wake_up: WakeUp,
    /// What the agent declared it connects ([`Agent::connection_nodes`]), asked once.
    declared: Option<Vec<(NodeId, NodeId)>>,
}

/// Totals of one run, for reports, benchmarks and conservation checks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunTotals {
    pub events: u64,
    pub packet_hops: u64,
    pub packets_sent: u64,
    pub packets_received: u64,
    pub unroutable: u64,
    /// Packets that arrived for a connection already reclaimed.
    pub orphaned: u64,
    pub connections_opened: u64,
    pub connections_closed: u64,
    /// Most connections alive at once.
    pub connections_peak: u64,
}

pub struct Engine {
    now: Time,
    /// The time of the event being handled: every packet admitted from now
    /// on is admitted at this time or later, while `now` may run ahead of it
    /// for an endpoint acting early.
    clock: Time,
    /// Events the engine's own bookkeeping made (see [`Seq`]).
    made: u64,
    /// Per link, events made at its far end: packets moved on to a link
    /// this one does not feed alone (see [`Seq`]).
    made_by_link: Vec<u64>,
    heap: EventQueue<Target>,
    pub net: Network,
    pool: PacketPool,
    slots: Vec<Slot>,
    free_slots: Vec<EndpointId>,
    live: FlowMap<Connection>,
    next_flow: FlowId,
    buckets: Vec<Bucket>,
    agents: Vec<AgentSlot>,
    transfers: Vec<TransferRecord>,
    outbox: Outbox,
    window: MeasurementWindow,
    observations: Vec<Observation>,
    totals: RunTotals,
    pub series: TimeSeries,
    /// Packet traces, if any are configured: tested only where a packet
    /// changes hands (enqueue, departure, loss, delivery).
    tracer: Option<Box<Tracer>>,
    /// Per link, the one link that feeds it (see [`Engine::exclusive_feeders`]), or `NO_FEEDER`.
    feeder: Vec<LinkId>,
    /// The same where a packet cuts through from the feeder (see
    /// [`Engine::forward`]): all `NO_FEEDER` when a tracer or a departure
    /// counter records hops, and `NO_FEEDER` where an observation samples
    /// the link or its feeder.
    cut_feeder: Vec<LinkId>,
    /// Per link, whether it is some link's `cut_feeder`: a packet admitted to
    /// any other link waits for its arrival event without a route lookup.
    cuts_into: Vec<bool>,
    /// Per link, the endpoint packets cut through into from it (see
    /// [`Engine::endpoint_cuts`]), or `NO_ENDPOINT`.
    ends_in: Vec<EndpointId>,
    /// Per endpoint, the link that `ends_in` it, or `NO_FEEDER`: the endpoint
    /// may act ahead of the engine's time ([`Engine::run_ahead`]).
    fed_by: Vec<LinkId>,
    /// The measurement window's start was snapshotted.
    window_started: bool,
    /// Connections agents opened between nodes they had not declared
    /// ([`Agent::connection_nodes`]); the run reports them as failures.
    undeclared: Vec<(AgentId, NodeId, NodeId)>,
    /// Reused by links that dequeue: packets their disciplines dropped.
    dropped: Vec<Dropped>,
}

/// Where a packet handed to [`Engine::forward`] comes from.
#[derive(Clone, Copy)]
enum Origin {
    /// The arrival of link `.0`'s head, whose event had sequence number `.1`.
    Link(LinkId, Seq),
    /// Endpoint `.0` sent it.
    Endpoint(EndpointId),
}

/// The `id` of an event's [`Seq`]: its maker in the top 24 bits, the maker's
/// count of events made so far in the low 40. The makers are the engine's
/// bookkeeping, each link's far end (a packet moved on from it), each agent
/// and each endpoint slot. Events of the same time go in the order they were
/// made in simulated time, as in ns-2 and ns-3; those made at the same time
/// go in the order of their scrambled ids. Each maker does its work in
/// the same order however the engine interleaves makers, so the order does
/// not depend on that interleaving. A timer entry counts as made when its
/// owner asked for that wake-up ([`WakeUp`]) and takes its maker's last
/// number instead of a count: an endpoint re-arms on stale entries (see the
/// lazy timers above) at times, and a number of times, that depend on the
/// interleaving; entries with equal time, `Seq` and target are the same entry.
/// 2^24 makers are far beyond any network that fits in memory, and 2^40 events
/// of one maker take days of CPU time.
struct Maker;

impl Maker {
    const COUNT_BITS: u32 = 40;
    const TIMER: u64 = (1 << Self::COUNT_BITS) - 1;
    const ENGINE: u64 = 0;

    fn link(l: LinkId) -> u64 {
        1 + l as u64
    }

    fn agent(links: usize, a: AgentId) -> u64 {
        1 + links as u64 + a as u64
    }

    fn endpoint(links: usize, agents: usize, e: EndpointId) -> u64 {
        1 + links as u64 + agents as u64 + e as u64
    }

    /// The next event of `maker`, which has made `count` events so far, made at `now`.
    #[inline(always)]
    fn made(maker: u64, count: &mut u64, now: Time) -> Seq {
        // No `% TIMER`: a 64-bit division by a constant, 1.3 % of the Table 2
        // run's instructions, for a bound no run reaches (see above).
        debug_assert!(*count < Self::TIMER, "maker {maker} made 2^40 events");
        let id = Self::scrambled((maker << Self::COUNT_BITS) | *count);
        *count += 1;
        Seq { made_at: Self::after_own(now), id }
    }

    /// The next service event of link `l`'s transmitter, its `count`-th,
    /// made at `now`: the link's maker, counting from 2^39 so that these
    /// never share an id with the packets the link moves on.
    #[inline]
    fn service(l: LinkId, count: &mut u64, now: Time) -> Seq {
        let mut n = (1 << (Self::COUNT_BITS - 1)) | *count;
        let seq = Self::made(Self::link(l), &mut n, now);
        *count += 1;
        seq
    }

    fn timer(maker: u64, made_at: Time) -> Seq {
        Seq {
            made_at: Self::after_own(made_at),
            id: Self::scrambled(maker << Self::COUNT_BITS | Self::TIMER),
        }
    }

    /// The engine's own events (`made_at` 0, see [`Engine::push_own`]) go
    /// before every other event of their time, even one made at time zero.
    #[inline(always)]
    fn after_own(made_at: Time) -> Time {
        made_at.saturating_add(1)
    }

    /// A bijection of the 64-bit integers (MurmurHash3's finaliser): ids stay
    /// unique, and events made in the same nanosecond by different makers go
    /// in an order that favours no maker. By maker number, the lower-numbered
    /// of two synchronised flows would win every tie for the last place in a
    /// queue.
    #[inline(always)]
    fn scrambled(mut x: u64) -> u64 {
        x ^= x >> 33;
        x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
        x ^= x >> 33;
        x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        x ^ x >> 33
    }
}

/// The wake-up an endpoint or agent last asked for and when it first asked
/// for it: the time its timer counts as made. Both change only when the owner
/// does something, so they do not depend on when the engine looks, while the
/// heap entry that fires may have been pushed when a stale entry fired. The
/// engine notes an endpoint's wake-up after everything it does, so `wanted`
/// is its `next_wakeup()` without a call through its trait object.
#[derive(Clone, Copy, Default)]
struct WakeUp {
    wanted: Time,
    since: Time,
}

impl WakeUp {
    /// Notes that `wanted` is asked for at `now`; when it was first asked for.
    #[inline(always)]
    fn asked(&mut self, wanted: Time, now: Time) -> Time {
        if wanted != self.wanted {
            *self = WakeUp { wanted, since: now };
        }
        self.since
    }
}

const NO_FEEDER: LinkId = LinkId::MAX;
const NO_ENDPOINT: EndpointId = EndpointId::MAX;

impl Engine {
    /// `net` must already have its routes computed.
    pub fn new(net: Network, window: MeasurementWindow) -> Self {
        Self {
            now: 0,
            clock: 0,
            made: 0,
            made_by_link: Vec::new(),
            heap: EventQueue::new(),
            net,
            pool: PacketPool::default(),
            slots: Vec::new(),
            free_slots: Vec::new(),
            live: FlowMap::default(),
            next_flow: 0,
            buckets: Vec::new(),
            agents: Vec::new(),
            transfers: Vec::new(),
            outbox: Outbox::default(),
            window,
            observations: Vec::new(),
            totals: RunTotals::default(),
            series: TimeSeries::default(),
            tracer: None,
            feeder: Vec::new(),
            cut_feeder: Vec::new(),
            cuts_into: Vec::new(),
            ends_in: Vec::new(),
            fed_by: Vec::new(),
            window_started: false,
            undeclared: Vec::new(),
            dropped: Vec::new(),
        }
    }

    /// Records packets as `tracer`'s filters select (before the run).
    pub fn set_tracer(&mut self, tracer: Tracer) {
        self.tracer = Some(Box::new(tracer));
    }

    /// The tracer and what it recorded so far.
    pub fn tracer(&self) -> Option<&Tracer> {
        self.tracer.as_deref()
    }

    /// The node of the sending endpoint of live connection `flow`.
    pub fn flow_sender_node(&self, flow: FlowId) -> Option<NodeId> {
        let c = self.live.get(&flow)?;
        self.slots.get(c.sender as usize).map(|s| s.node)
    }

    /// Room for `n` more connections opened before the run (their endpoints
    /// and buckets), so that 20 000 of them do not grow the tables by doubling.
    pub fn reserve_connections(&mut self, n: usize) {
        self.slots.reserve_exact(2 * n);
        self.buckets.reserve_exact(n);
        self.live.reserve(n);
    }

    /// A new report row.
    pub fn add_bucket(&mut self) -> BucketId {
        self.buckets.push(Bucket::default());
        (self.buckets.len() - 1) as BucketId
    }

    pub fn add_agent(&mut self, agent: Box<dyn Agent>) -> AgentId {
        let declared = agent.connection_nodes();
        self.agents.push(AgentSlot { agent, armed: NEVER, wake_up: WakeUp::default(), declared });
        (self.agents.len() - 1) as AgentId
    }

    /// Opens a connection with flow id `flow` before the run; it is never reclaimed.
    pub fn connect(&mut self, flow: FlowId, open: Open) -> (FlowId, EndpointId, EndpointId) {
        self.next_flow = self.next_flow.max(flow + 1);
        self.attach(flow, open, None)
    }

    /// Flow ids below `n` belong to connections opened before the run;
    /// agents' connections get ids from `n` on.
    pub fn reserve_flows(&mut self, n: FlowId) {
        self.next_flow = self.next_flow.max(n);
    }

    /// What went wrong in each agent that gave up, by agent.
    pub fn agent_failures(&self) -> Vec<(AgentId, String)> {
        let undeclared = self.undeclared.iter().map(|&(id, from, to)| {
            let name = |n: NodeId| &self.net.nodes[n as usize].name;
            (id, format!("opened a connection from {} to {} that it had not declared", name(from), name(to)))
        });
        self.agents
            .iter()
            .enumerate()
            .filter_map(|(i, a)| a.agent.failure().map(|f| (i as AgentId, f)))
            .chain(undeclared)
            .collect()
    }

    fn take_slot(&mut self, slot: Slot) -> EndpointId {
        match self.free_slots.pop() {
            Some(id) => {
                let made = self.slots[id as usize].made;
                self.slots[id as usize] = Slot { made, ..slot };
                id
            }
            None => {
                self.slots.push(slot);
                (self.slots.len() - 1) as EndpointId
            }
        }
    }

    fn attach(
        &mut self,
        flow: FlowId,
        open: Open,
        owner: Option<AgentId>,
    ) -> (FlowId, EndpointId, EndpointId) {
        let Open { sender, receiver, from, to, bucket, size, start } = open;
        let reclaimable = owner.is_some();
        let slot = |endpoint, node, peer_node, peer| Slot {
            endpoint: Some(endpoint),
            node,
            peer_node,
            peer,
            flow,
            armed: NEVER,
            wake_up: WakeUp::default(),
            acted_at: 0,
            reclaimable,
            ahead: false,
            made: 0,
        };
        let s = self.take_slot(slot(sender, from, to, 0));
        let r = self.take_slot(slot(receiver, to, from, s));
        self.slots[s as usize].peer = r;
        self.live.insert(flow, Connection { sender: s, receiver: r, bucket, size, start, owner });
        self.totals.connections_opened += 1;
        self.totals.connections_peak = self.totals.connections_peak.max(self.live.len() as u64);
        (flow, s, r)
    }

    pub fn now(&self) -> Time {
        self.now
    }

    pub fn window(&self) -> MeasurementWindow {
        self.window
    }

    /// The endpoint in slot `id`, unless its connection was reclaimed.
    pub fn endpoint(&self, id: EndpointId) -> Option<&dyn Endpoint> {
        self.slots.get(id as usize)?.endpoint.as_deref()
    }

    pub fn endpoint_mut(&mut self, id: EndpointId) -> Option<&mut (dyn Endpoint + 'static)> {
        self.slots.get_mut(id as usize)?.endpoint.as_deref_mut()
    }

    /// Everything a bucket's connections counted so far, reclaimed ones included.
    pub fn bucket_totals(&self, bucket: BucketId) -> SideCounters {
        self.all_bucket_totals().get(bucket as usize).copied().unwrap_or_default()
    }

    /// Every bucket's totals, in one pass over the live connections.
    fn all_bucket_totals(&self) -> Vec<SideCounters> {
        let mut totals: Vec<SideCounters> =
            self.buckets.iter().map(|b| b.closed.as_deref().copied().unwrap_or_default()).collect();
        for c in self.live.values() {
            if let Some(total) = totals.get_mut(c.bucket as usize) {
                total.merge(&self.side_counters(c));
            }
        }
        totals
    }

    /// What a bucket's connections counted inside the measurement window (up to now).
    pub fn bucket_window(&self, bucket: BucketId) -> SideCounters {
        self.bucket_windows().get(bucket as usize).copied().unwrap_or_default()
    }

    /// Every bucket's window counters, in one pass.
    pub fn bucket_windows(&self) -> Vec<SideCounters> {
        let mut totals = self.all_bucket_totals();
        for (total, b) in totals.iter_mut().zip(&self.buckets) {
            if let Some(start) = &b.at_window_start {
                *total = total.since(start);
            }
        }
        totals
    }

    fn side_counters(&self, c: &Connection) -> SideCounters {
        let counters = |id: EndpointId| {
            self.slots[id as usize].endpoint.as_ref().map(|e| e.counters()).unwrap_or_default()
        };
        SideCounters { sender: counters(c.sender), receiver: counters(c.receiver) }
    }

    /// Finite transfers: those of reclaimed connections, then those still open, by flow.
    pub fn transfers(&self) -> Vec<TransferRecord> {
        let mut all = self.transfers.clone();
        let mut open: Vec<TransferRecord> =
            self.live.iter().filter_map(|(&flow, c)| self.record(flow, c)).collect();
        open.sort_by_key(|r| r.flow);
        all.extend(open);
        all
    }

    fn record(&self, flow: FlowId, c: &Connection) -> Option<TransferRecord> {
        let size = c.size?;
        let sides = self.side_counters(c);
        let finished = self.slots[c.sender as usize].endpoint.as_ref().and_then(|e| e.finished_at());
        Some(TransferRecord {
            bucket: c.bucket,
            flow,
            start: c.start,
            finished,
            size,
            delivered: sides.receiver.bytes_delivered,
            packets_sent: sides.sender.packets_sent,
        })
    }

    pub fn totals(&self) -> RunTotals {
        self.totals
    }

    /// Packets inside links (waiting, in transmission or propagating).
    pub fn packets_in_flight(&self) -> u64 {
        self.net.links.iter().map(|l| l.in_flight()).sum()
    }

    /// Frees what only the run needed: the packets still inside links (the
    /// pool and the links' delay lines) and the events not yet handled. A
    /// finished run's results are collected while the engine is still there,
    /// and without these the peak memory of collecting them is lower (at
    /// 20 000 flows, 8 MB of pool and a few hundred bytes of rings a flow).
    /// Conservation can no longer be checked afterwards: the packets are gone.
    pub fn release_packets(&mut self) {
        self.heap = EventQueue::new();
        self.pool = PacketPool::default();
        for link in &mut self.net.links {
            link.release_packets();
        }
    }

    /// Packets the pool holds: between events, exactly those inside links
    /// (a slot not freed when its packet was dropped, lost or delivered leaks).
    pub fn packets_stored(&self) -> u64 {
        self.pool.live() as u64
    }

    /// Schedules the engine's own bookkeeping. It counts as made at time
    /// zero, so it goes before everything else of its time: the window's
    /// snapshot and a sample at `t` see the state before anything at `t` happens.
    fn push_own(&mut self, time: Time, target: Target) {
        let id = (Maker::ENGINE << Maker::COUNT_BITS) | (self.made % Maker::TIMER);
        self.made += 1;
        let seq = Seq { made_at: 0, id };
        self.heap.push(Event { time, seq, target });
    }

    /// Runs until the end of the measurement window.
    pub fn run(&mut self) -> RunTotals {
        match self.run_until_done_or(None) {
            Ok(totals) => totals,
            Err(cancelled) => unreachable!("a run without a token was {cancelled}"),
        }
    }

    /// Runs until the end of the measurement window, or until `cancel` is
    /// cancelled: then it stops within [`CANCEL_CHECK_EVENTS`] events and says
    /// where it got to; the engine holds an unfinished run, not a result.
    pub fn run_cancellable(&mut self, cancel: &CancelToken) -> Result<RunTotals, Cancelled> {
        self.run_until_done_or(Some(cancel))
    }

    fn run_until_done_or(&mut self, cancel: Option<&CancelToken>) -> Result<RunTotals, Cancelled> {
        self.made_by_link = vec![0; self.net.links.len()];
        self.push_own(self.window.start, Target::WindowStart);
        for o in 0..self.observations.len() as u32 {
            self.push_own(0, Target::Sample(o));
        }
        for id in 0..self.slots.len() as EndpointId {
            self.rearm(id);
        }
        for id in 0..self.agents.len() as AgentId {
            self.rearm_agent(id);
        }
        // Whether anything records packets as they move (a tracer, or a link
        // that counts its departures) is decided once: the loop that records
        // nothing is compiled without the recording code, as it was before
        // observation existed.
        let recording = self.tracer.is_some() || self.net.links.iter().any(|l| l.departures().is_some());
        self.feeder = self.exclusive_feeders();
        self.cut_feeder = self.cut_through_feeders(recording);
        self.cuts_into = vec![false; self.cut_feeder.len()];
        for &feeder in self.cut_feeder.iter().filter(|&&f| f != NO_FEEDER) {
            self.cuts_into[feeder as usize] = true;
        }
        self.ends_in = self.endpoint_cuts(recording);
        self.fed_by = vec![NO_FEEDER; self.slots.len()];
        for (l, &e) in self.ends_in.iter().enumerate().filter(|&(_, &e)| e != NO_ENDPOINT) {
            self.fed_by[e as usize] = l as LinkId;
        }
        if recording {
            self.event_loop::<true>(cancel)?;
        } else {
            self.event_loop::<false>(cancel)?;
        }
        let end = self.window.end;
        self.now = end;
        for link in self.net.links.iter_mut().filter(|l| l.dequeues()) {
            link.close_window(&self.window);
        }
        if let Some(token) = cancel {
            token.report(end, end);
        }
        if !self.window_started {
            self.snapshot_window_start();
        }
        Ok(self.totals)
    }

    /// Fires events until the end of the measurement window or cancellation;
    /// `RECORDING` compiles in the per-hop packet recording.
    fn event_loop<const RECORDING: bool>(&mut self, cancel: Option<&CancelToken>) -> Result<(), Cancelled> {
        let end = self.window.end;
        while let Some(&event) = self.heap.peek() {
            let time = event.time;
            if time >= end {
                break;
            }
            // One load and one store per batch: the hot loop stays as fast as without a token.
            if self.totals.events.is_multiple_of(CANCEL_CHECK_EVENTS) {
                if let Some(token) = cancel {
                    if token.is_cancelled() {
                        return Err(self.cancelled());
                    }
                    token.report(time, end);
                }
            }
            let target = event.target;
            self.now = time;
            self.clock = time;
            match target {
                // Leave the event at the top of the heap for the handler to replace.
                Target::Link(l) => self.link_arrival::<RECORDING>(l, event.seq),
                Target::Transmit(l) => self.transmit_event::<RECORDING>(l, time),
                Target::Endpoint(e) => {
                    self.heap.pop();
                    self.endpoint_timer::<RECORDING>(e, time, event.seq)
                }
                Target::Agent(a) => {
                    self.heap.pop();
                    self.agent_timer::<RECORDING>(a, time)
                }
                Target::WindowStart => {
                    self.heap.pop();
                    self.snapshot_window_start()
                }
                Target::Sample(o) => {
                    self.heap.pop();
                    self.sample(o)
                }
            }
            self.totals.events += 1;
        }
        Ok(())
    }

    /// Kept out of the event loop: the loop's code stays that of a run without a token.
    #[cold]
    #[inline(never)]
    fn cancelled(&self) -> Cancelled {
        Cancelled { at: self.now, end: self.window.end, events: self.totals.events }
    }

    fn snapshot_window_start(&mut self) {
        let totals = self.all_bucket_totals();
        for (bucket, totals) in self.buckets.iter_mut().zip(totals) {
            let counted = !(totals.sender.is_zero() && totals.receiver.is_zero());
            bucket.at_window_start = counted.then(|| Box::new(totals));
        }
        self.window_started = true;
    }

    fn link_arrival<const RECORDING: bool>(&mut self, l: LinkId, seq_of_head: Seq) {
        let link = &mut self.net.links[l as usize];
        // A head with another key: the packet this event was for was handed
        // to its endpoint ahead of time (`cut_into_endpoint`).
        let current = link.head_key() == Some((self.now, seq_of_head));
        let Some((packet, survived, next)) =
            current.then(|| link.pop_arrival(self.now, &self.window)).flatten()
        else {
            self.heap.pop();
            return;
        };
        let at = link.spec.to;
        // The next packet to arrive here is delivered then if this is its last
        // hop, or if it cuts through into its endpoint from here: its contents
        // are needed then, and are far out of the cache now.
        if let Some(head) = link.head() {
            self.pool.prefetch(head.id);
        }
        if RECORDING {
            self.record_departure(l, packet.id, survived);
        }
        // This link's event is still at the top: replacing it in place is one
        // sift-down instead of a pop and a push.
        match next {
            Some((time, seq)) => self.heap.replace_top(Event { time, seq, target: Target::Link(l) }),
            None => self.heap.pop(),
        }
        self.totals.packet_hops += 1;
        if survived {
            self.forward::<RECORDING>(packet, at, Origin::Link(l, seq_of_head));
        } else {
            self.pool.release(packet.id);
        }
    }

    /// Counts and traces packet `id`'s departure from link `l` (its arrival
    /// event fired), and its loss on the link if it did not survive. Kept out
    /// of line: the event loop's code stays that of a run that records nothing.
    #[inline(never)]
    fn record_departure(&mut self, l: LinkId, id: PacketId, survived: bool) {
        let link = &mut self.net.links[l as usize];
        let packet = self.pool.get(id);
        link.count_departure(packet);
        if let Some(tracer) = self.tracer.as_mut() {
            let from = link.spec.from;
            let route = self.pool.route(id);
            // Its last bit left the transmitter one propagation delay ago
            // (the delay now, on a link whose delay changes).
            let departed = self.now.saturating_sub(link.delay_at(self.now));
            tracer.record(departed, TraceEvent::Depart, Some(l), from, packet, route);
            if !survived {
                let lost = TraceEvent::Drop(DropCause::RandomLoss);
                tracer.record(self.now, lost, Some(l), from, packet, route);
            }
        }
    }

    /// Traces `event` of packet `id` at node `at` (and link `l`), if a tracer is set. Out of line, as above.
    #[inline(never)]
    fn record_event(&mut self, event: TraceEvent, l: Option<LinkId>, at: NodeId, id: PacketId) {
        if let Some(tracer) = self.tracer.as_mut() {
            tracer.record(self.now, event, l, at, self.pool.get(id), self.pool.route(id));
        }
    }

    /// Whether endpoint `e` has nothing due up to `time` (an entry of its in
    /// the heap may be earlier, left from a wake-up since moved later), and is
    /// not acting ahead.
    #[inline(always)]
    fn wakes_after(&self, e: EndpointId, time: Time) -> bool {
        let slot = &self.slots[e as usize];
        // While acting ahead its timer is not armed: its run-ahead takes the packet in turn.
        !slot.ahead && (slot.armed > time || slot.wake_up.wanted > time)
    }

    /// Hands `p`, just admitted to link `l`, to endpoint `e` at `arrival`,
    /// the time it gets to the far end, if `e` has nothing due before then.
    /// The packets still on the link (held back while `e` had something due)
    /// go first, each at its own arrival time, as many as `e` can take; false
    /// if `p` must wait on the link behind them. An event in the heap for a
    /// packet taken early then finds a different head, or none, and is
    /// dropped ([`Engine::link_arrival`]).
    #[inline(always)]
    fn cut_into_endpoint<const RECORDING: bool>(
        &mut self,
        l: LinkId,
        e: EndpointId,
        arrival: Time,
        p: PacketRef,
    ) -> bool {
        if self.net.links[l as usize].in_flight() > 0 || !self.wakes_after(e, arrival) {
            return self.cut_into_endpoint_behind_held::<RECORDING>(l, e, arrival, p);
        }
        self.take_into_endpoint::<RECORDING>(l, arrival, p.id, p.dst);
        true
    }

    /// [`Engine::cut_into_endpoint`] when packets wait on the link or `e`
    /// has something due first: `e` acts ahead up to `p`'s arrival
    /// ([`Engine::run_ahead`]), then takes `p` if nothing is left before it.
    #[inline(never)]
    fn cut_into_endpoint_behind_held<const RECORDING: bool>(
        &mut self,
        l: LinkId,
        e: EndpointId,
        arrival: Time,
        p: PacketRef,
    ) -> bool {
        if !RECORDING && !self.slots[e as usize].ahead {
            self.run_ahead(e, l);
        }
        self.net.links[l as usize].in_flight() == 0 && self.wakes_after(e, arrival) && {
            self.take_into_endpoint::<RECORDING>(l, arrival, p.id, p.dst);
            true
        }
    }

    /// Lets endpoint `e`, whose packets all come over link `l` (`ends_in`),
    /// act ahead of the engine's time, in the order of its own times: the
    /// packets waiting on `l` are handed to it, and its timer fires, while
    /// nothing can reach it first. No packet not yet on `l` arrives before
    /// [`Link::no_new_arrival_before`] the engine's clock, and those on `l`
    /// arrive in order; what `e` sends enters a link of its own. So it
    /// does what it would have done at those times, only with fewer events;
    /// a paced sender, with a timer due between most of its ACKs, acts on
    /// both without an event each. Within the run and, until the
    /// measurement window's start is recorded, before it, as for packets
    /// cut through into endpoints ([`Engine::forward`]).
    #[inline(never)]
    fn run_ahead(&mut self, e: EndpointId, l: LinkId) {
        // Entered between events or for a packet coming off a link, never
        // while another endpoint acts ahead: what that one sends leaves as an
        // endpoint's packet, which never cuts into an endpoint.
        debug_assert!(self.now == self.clock && !self.slots.iter().any(|s| s.ahead));
        self.slots[e as usize].ahead = true;
        let engine_now = self.now;
        let mut took_held = false;
        loop {
            let link = &self.net.links[l as usize];
            let unseen = link.no_new_arrival_before(self.clock);
            let head = link.head_key().map(|(arrival, _)| arrival);
            let slot = &self.slots[e as usize];
            if slot.endpoint.is_none() {
                break;
            }
            let due = slot.wake_up.wanted.max(slot.acted_at).max(self.clock);
            // A tie goes to the heap, which orders the two by their makers.
            let next = match head {
                Some(arrival) if arrival < due => arrival,
                _ if due < unseen && head.is_none_or(|arrival| due < arrival) => due,
                _ => break,
            };
            if next >= self.window.end || (!self.window_started && next >= self.window.start) {
                break;
            }
            if head == Some(next) {
                let Some((_, held)) = self.net.links[l as usize].take_head() else { break };
                let at = self.net.links[l as usize].spec.to;
                self.take_into_endpoint::<false>(l, next, held.id, at);
                took_held = true;
            } else {
                self.now = next;
                if let Some(endpoint) = self.slots[e as usize].endpoint.as_mut() {
                    endpoint.on_timer(next, &mut self.outbox);
                }
                self.flush::<false>(e);
                self.now = engine_now;
            }
        }
        self.slots[e as usize].ahead = false;
        self.arm::<false>(e);
        if took_held {
            if let Some((time, seq)) = self.net.links[l as usize].head_key() {
                self.heap.push(Event { time, seq, target: Target::Link(l) });
            }
        }
    }

    /// Packet `id`, admitted to link `l`, reaches the far end at `arrival`
    /// ahead of its time: it is counted, drawn for loss and delivered then.
    #[inline(always)]
    fn take_into_endpoint<const RECORDING: bool>(
        &mut self,
        l: LinkId,
        arrival: Time,
        id: PacketId,
        at: NodeId,
    ) {
        self.totals.packet_hops += 1;
        if self.net.links[l as usize].pass_through(arrival, &self.window) {
            // The endpoint and what it sends live at the packet's arrival time.
            let engine_now = self.now;
            self.now = arrival;
            self.deliver::<RECORDING>(id, at);
            self.now = engine_now;
        } else {
            self.pool.release(id);
        }
    }

    /// Hands packet `id`, arrived at node `at`, to its endpoint and routes
    /// what the endpoint sends in answer; a packet whose connection was
    /// reclaimed is dropped as an orphan.
    #[inline(always)]
    fn deliver<const RECORDING: bool>(&mut self, id: PacketId, at: NodeId) {
        let packet = self.pool.get(id);
        let to = packet.to_endpoint;
        let slot = &mut self.slots[to as usize];
        match slot.endpoint.as_mut() {
            Some(endpoint) if slot.flow == packet.flow => {
                self.totals.packets_received += 1;
                endpoint.on_packet(self.now, packet, &mut self.outbox);
                if RECORDING {
                    self.record_event(TraceEvent::Deliver, None, at, id);
                }
                self.pool.release(id);
                self.flush::<RECORDING>(to);
            }
            _ => {
                self.totals.orphaned += 1;
                if RECORDING {
                    self.record_event(TraceEvent::Drop(DropCause::Orphan), None, at, id);
                }
                self.pool.release(id);
            }
        }
    }

    /// Moves a packet that is at node `at` one step on: into its endpoint if it
    /// has arrived, otherwise onto the next link of its route. Inlined into
    /// its two callers, the event loop and `flush`: as a call it cost 6 % more
    /// instructions per event (cachegrind, Table 2 scenario at 2.5 Gbit/s).
    #[inline(always)]
    fn forward<const RECORDING: bool>(&mut self, p: PacketRef, at: NodeId, from: Origin) {
        self.forward_at::<RECORDING>(p, at, from, self.now);
    }

    /// [`Engine::forward`] of a packet that reaches node `at` at `now`: the
    /// engine's time, or later for one leaving a link that dequeues and cut
    /// through from it (see [`Engine::place_departure`]).
    #[inline(always)]
    fn forward_at<const RECORDING: bool>(&mut self, p: PacketRef, at: NodeId, from: Origin, now: Time) {
        let id = p.id;
        if at == p.dst {
            self.deliver::<RECORDING>(id, at);
            return;
        }
        let Some(mut l) = self.net.next_link(at, p.dst) else {
            self.totals.unroutable += 1;
            self.pool.release(id);
            return;
        };
        // A packet entering a link that only `from` feeds keeps the sequence
        // number it had on `from`: its events then have the same keys whether
        // or not it cuts through, so traced and untraced runs are the same run.
        let seq = match from {
            Origin::Link(feeder, seq) if self.feeder[l as usize] == feeder => seq,
            Origin::Link(feeder, _) => {
                Maker::made(Maker::link(feeder), &mut self.made_by_link[feeder as usize], now)
            }
            Origin::Endpoint(id) => {
                let maker = Maker::endpoint(self.net.links.len(), self.agents.len(), id);
                Maker::made(maker, &mut self.slots[id as usize].made, now)
            }
        };
        let mut now = now;
        loop {
            if self.net.links[l as usize].dequeues() {
                self.enqueue_dequeuing::<RECORDING>(l, p, seq, at);
                return;
            }
            let admitted = self.net.links[l as usize].admit(now, &p, &self.window);
            if RECORDING {
                let event = match admitted {
                    Err(cause) => TraceEvent::Drop(cause),
                    Ok(_) => TraceEvent::Enqueue,
                };
                self.record_event(event, Some(l), at, id);
            }
            let (arrival, marked) = match admitted {
                Err(_) => {
                    self.pool.release(id);
                    return;
                }
                Ok(admitted) => admitted,
            };
            if marked {
                self.pool.mark_ce(id);
            }
            // Cut through: the next link is fed by this one alone, in FIFO
            // order, so the packet can be offered to it now, at the time it
            // will get there, without an event in between. Not past the end of
            // the run, where the hop-by-hop run would never offer it.
            if !RECORDING && self.cuts_into[l as usize] && arrival < self.window.end {
                let to = self.net.links[l as usize].spec.to;
                if let Some(next) = self.net.next_link(to, p.dst) {
                    if self.cut_feeder[next as usize] == l {
                        self.totals.packet_hops += 1;
                        if !self.net.links[l as usize].pass_through(arrival, &self.window) {
                            self.pool.release(id);
                            return;
                        }
                        now = arrival;
                        l = next;
                        continue;
                    }
                }
            }
            // Cut through into the endpoint: the link delivers to one endpoint
            // that nothing else reads or feeds (see `Engine::endpoint_cuts`)
            // and that has nothing due before the packet gets there, so it
            // can take the packet now, at the time it arrives.
            if !RECORDING && matches!(from, Origin::Link(..)) {
                let e = self.ends_in[l as usize];
                if e != NO_ENDPOINT
                    && arrival < self.window.end
                    && (self.window_started || arrival < self.window.start)
                    && self.cut_into_endpoint::<RECORDING>(l, e, arrival, p)
                {
                    return;
                }
            }
            if let Some((time, head_seq)) = self.net.links[l as usize].push_admitted(arrival, seq, p) {
                self.heap.push(Event { time, seq: head_seq, target: Target::Link(l) });
            }
            return;
        }
    }

    /// Offers packet `p`, at node `at`, to link `l`, which dequeues: its
    /// discipline takes or refuses it, and an idle transmitter starts on it
    /// at once. Only ever at the engine's time: no packet cuts through into
    /// such a link, and no endpoint that sends into one acts ahead.
    #[inline(never)]
    fn enqueue_dequeuing<const RECORDING: bool>(&mut self, l: LinkId, p: PacketRef, seq: Seq, at: NodeId) {
        let now = self.now;
        debug_assert_eq!(now, self.clock, "a packet offered ahead of time to a link that dequeues");
        // Departures at an instant go before arrivals, as on the fast path.
        if self.net.links[l as usize].service_event(now) {
            self.transmit::<RECORDING>(l);
        }
        let flow = ((self.pool.get(p.id).flow as u64) << 32) | p.dst as u64;
        let packet = Queued { packet: p, enqueued_at: now, flow, seq };
        let admission = self.net.links[l as usize].offer(now, packet, &self.window, &mut self.dropped);
        if RECORDING {
            let event = match admission {
                Admission::Enqueue | Admission::EnqueueMarked => TraceEvent::Enqueue,
                Admission::Drop => TraceEvent::Drop(DropCause::BufferFull),
                Admission::EarlyDrop => TraceEvent::Drop(DropCause::EarlyDrop),
            };
            self.record_event(event, Some(l), at, p.id);
        }
        match admission {
            Admission::Enqueue => {}
            Admission::EnqueueMarked => self.pool.mark_ce(p.id),
            Admission::Drop | Admission::EarlyDrop => self.pool.release(p.id),
        }
        self.release_dropped::<RECORDING>(l);
        let link = &mut self.net.links[l as usize];
        let next = link.next_service(now);
        if next == now && link.service_armed() == NEVER {
            self.transmit::<RECORDING>(l);
        } else {
            self.arm_service(l, next);
        }
        self.net.links[l as usize].note_queue_after_arrival(now, &self.window);
    }

    /// Frees the packets link `l`'s discipline dropped (and traces them).
    #[inline(always)]
    fn release_dropped<const RECORDING: bool>(&mut self, l: LinkId) {
        if !self.dropped.is_empty() {
            self.release_dropped_now::<RECORDING>(l);
        }
    }

    #[inline(never)]
    fn release_dropped_now<const RECORDING: bool>(&mut self, l: LinkId) {
        let at = self.net.links[l as usize].spec.from;
        let mut dropped = std::mem::take(&mut self.dropped);
        for d in dropped.drain(..) {
            if RECORDING {
                self.record_event(TraceEvent::Drop(d.cause), Some(l), at, d.packet.packet.id);
            }
            self.pool.release(d.packet.packet.id);
        }
        self.dropped = dropped;
    }

    /// The service event of link `l`'s transmitter at `time` fired; it is
    /// still at the top of the heap. A rate sends one packet per service, and
    /// its next service is known before the packet is placed (which may push
    /// events): the entry is then replaced in place, one sift-down instead of
    /// a pop and a push, as for a link's arrivals.
    #[inline(never)]
    fn transmit_event<const RECORDING: bool>(&mut self, l: LinkId, time: Time) {
        if !self.net.links[l as usize].service_event(time) {
            self.heap.pop();
            return;
        }
        let now = self.now;
        let departure = self.net.links[l as usize].serve(now, &self.window, &mut self.dropped);
        self.release_dropped::<RECORDING>(l);
        match departure {
            Some((d, false)) => {
                let next = self.net.links[l as usize].next_service(now);
                match self.net.links[l as usize].arm_service_at(next) {
                    Some(made) => {
                        let seq = Maker::service(l, made, now);
                        self.heap.replace_top(Event { time: next, seq, target: Target::Transmit(l) });
                    }
                    None => self.heap.pop(),
                }
                self.place_departure::<RECORDING>(l, d);
            }
            Some((d, true)) => {
                self.heap.pop();
                self.place_departure::<RECORDING>(l, d);
                self.transmit::<RECORDING>(l);
            }
            None => {
                self.heap.pop();
                let next = self.net.links[l as usize].next_service(now);
                self.arm_service(l, next);
            }
        }
    }

    /// Lets link `l`'s transmitter send what it can now, places what leaves
    /// ([`Engine::place_departure`]) and arms its next service.
    #[inline(never)]
    fn transmit<const RECORDING: bool>(&mut self, l: LinkId) {
        let now = self.now;
        loop {
            let departure = self.net.links[l as usize].serve(now, &self.window, &mut self.dropped);
            self.release_dropped::<RECORDING>(l);
            let Some((d, more)) = departure else { break };
            self.place_departure::<RECORDING>(l, d);
            if !more {
                break;
            }
        }
        let next = self.net.links[l as usize].next_service(now);
        self.arm_service(l, next);
    }

    /// A packet leaving link `l`'s transmitter: into the next link if `l`
    /// alone feeds it (cut through at the time the packet gets there, as at
    /// admission on the fast path), otherwise into `l`'s delay line.
    fn place_departure<const RECORDING: bool>(&mut self, l: LinkId, d: Departure) {
        let (p, seq) = (d.packet.packet, d.packet.seq);
        if d.marked {
            self.pool.mark_ce(p.id);
        }
        if !RECORDING && self.cuts_into[l as usize] && d.arrival < self.window.end {
            let to = self.net.links[l as usize].spec.to;
            if let Some(next) = self.net.next_link(to, p.dst) {
                if self.cut_feeder[next as usize] == l {
                    self.totals.packet_hops += 1;
                    if self.net.links[l as usize].pass_through(d.arrival, &self.window) {
                        self.forward_at::<RECORDING>(p, to, Origin::Link(l, seq), d.arrival);
                    } else {
                        self.pool.release(p.id);
                    }
                    return;
                }
            }
        }
        if let Some((time, head_seq)) = self.net.links[l as usize].push_admitted(d.arrival, seq, p) {
            self.heap.push(Event { time, seq: head_seq, target: Target::Link(l) });
        }
    }

    /// Arms the service event of link `l`'s transmitter at `time` (when it
    /// can next send), unless no packet waits or an earlier one is armed.
    fn arm_service(&mut self, l: LinkId, time: Time) {
        let now = self.now;
        if let Some(made) = self.net.links[l as usize].arm_service_at(time) {
            let seq = Maker::service(l, made, now);
            self.heap.push(Event { time, seq, target: Target::Transmit(l) });
        }
    }

    /// For each link, the link that alone feeds it, if one does and loses
    /// nothing: every packet that can enter it, on the route of a connection
    /// opened before the run or of one an agent may open, in either
    /// direction, arrives over that link. (A lossy feeder is left out: its
    /// loss draws, taken at the far end, would be taken out of order by
    /// packets cutting through.) All `NO_FEEDER` if an agent cannot say which
    /// nodes it connects, or if a pair has no route: its packets still cross
    /// links (a node with one link sends everything down it) before they are
    /// found unroutable, and those links are not known here.
    fn exclusive_feeders(&self) -> Vec<LinkId> {
        let n = self.net.links.len();
        let mut pairs: Vec<(NodeId, NodeId)> = self.slots.iter().map(|s| (s.node, s.peer_node)).collect();
        for slot in &self.agents {
            let Some(nodes) = &slot.declared else { return vec![NO_FEEDER; n] };
            pairs.extend(nodes.iter().flat_map(|&(a, b)| [(a, b), (b, a)]));
        }
        pairs.sort_unstable();
        pairs.dedup();
        let mut feeder = vec![NO_FEEDER; n];
        let mut shared = vec![false; n];
        let mut path = Vec::new();
        for &(src, dst) in &pairs {
            if !self.net.path_into(src, dst, &mut path) {
                return vec![NO_FEEDER; n];
            }
            let mut previous = None;
            for &l in &path {
                let (f, sh) = (&mut feeder[l as usize], &mut shared[l as usize]);
                match previous {
                    Some(prev) if !*sh && (*f == NO_FEEDER || *f == prev) => *f = prev,
                    _ => {
                        *sh = true;
                        *f = NO_FEEDER;
                    }
                }
                previous = Some(l);
            }
        }
        for f in feeder.iter_mut() {
            if *f != NO_FEEDER && self.net.links[*f as usize].is_lossy() {
                *f = NO_FEEDER;
            }
        }
        feeder
    }

    /// For each link, the endpoint a packet may be handed to as it enters
    /// the link, at the time it will reach the far end: the only endpoint
    /// ever at that node, of a connection opened before the run, whose
    /// packets leave over a link nothing else feeds, and that nothing reads
    /// while the run goes on (no observation of it or of those two links, no
    /// agent at its node). Its inputs then all
    /// come in order over links that are FIFO, and what it sends enters a
    /// link of its own, so taking a packet early (when nothing of its own is
    /// due before the packet's arrival) changes nothing but the number of events.
    fn endpoint_cuts(&self, recording: bool) -> Vec<EndpointId> {
        let n = self.net.links.len();
        let mut ends_in = vec![NO_ENDPOINT; n];
        if recording {
            return ends_in;
        }
        let mut watched_endpoint = vec![false; self.slots.len()];
        let mut watched_link = vec![false; n];
        for watch in self.observations.iter().flat_map(|o| &o.watches) {
            match watch.source {
                Source::Endpoint(e) => {
                    // A sender's sample reads its peer's bytes delivered too.
                    let peer = self.slots.get(e as usize).map(|s| s.peer);
                    for id in [Some(e), peer].into_iter().flatten() {
                        if let Some(seen) = watched_endpoint.get_mut(id as usize) {
                            *seen = true;
                        }
                    }
                }
                Source::Link(l) => {
                    if let Some(seen) = watched_link.get_mut(l as usize) {
                        *seen = true;
                    }
                }
            }
        }
        // Endpoints per node; a node where an agent may open connections, or
        // whose connections it reads, counts as having several.
        let mut at_node = vec![0u32; self.net.nodes.len()];
        let mut pairs: Vec<(NodeId, NodeId)> = Vec::new();
        for slot in self.slots.iter().filter(|s| s.endpoint.is_some()) {
            at_node[slot.node as usize] += 1;
            pairs.push((slot.node, slot.peer_node));
        }
        for slot in &self.agents {
            let (Some(declared), Some(watched)) = (&slot.declared, slot.agent.watched_nodes()) else {
                return ends_in;
            };
            for &(a, b) in declared {
                pairs.extend([(a, b), (b, a)]);
                at_node[a as usize] += 2;
                at_node[b as usize] += 2;
            }
            for node in watched {
                at_node[node as usize] += 2;
            }
        }
        // Links entered other than as the first hop of the only endpoint at
        // a node, and nodes packets pass through.
        let mut fed_by_others = vec![false; n];
        let mut passed = vec![false; self.net.nodes.len()];
        let (mut path, mut back) = (Vec::new(), Vec::new());
        for &(src, dst) in &pairs {
            if !self.net.path_into(src, dst, &mut path) {
                return ends_in;
            }
            for (i, &l) in path.iter().enumerate() {
                if i > 0 || at_node[src as usize] != 1 {
                    fed_by_others[l as usize] = true;
                }
                if i > 0 {
                    passed[self.net.links[l as usize].spec.from as usize] = true;
                }
            }
        }
        for (id, slot) in self.slots.iter().enumerate() {
            let node = slot.node as usize;
            if slot.endpoint.is_none() || slot.reclaimable || at_node[node] != 1 || passed[node] {
                continue;
            }
            if !self.net.path_into(slot.node, slot.peer_node, &mut path)
                || !self.net.path_into(slot.peer_node, slot.node, &mut back)
            {
                continue;
            }
            let (Some(&first), Some(&last)) = (path.first(), back.last()) else { continue };
            // A sample would see the endpoint, or a packet it sent, ahead of time.
            let watched = watched_endpoint[id] || watched_link[first as usize] || watched_link[last as usize];
            // A link that dequeues takes packets only at the engine's time,
            // and its departures are not known at admission.
            let dequeues =
                self.net.links[first as usize].dequeues() || self.net.links[last as usize].dequeues();
            if !fed_by_others[first as usize] && !watched && !dequeues {
                ends_in[last as usize] = id as EndpointId;
            }
        }
        ends_in
    }

    /// The feeders packets cut through from: none while anything records
    /// hops, none into a link an observation samples (its queue and counters
    /// would include packets that have not arrived yet) and none out of one
    /// (its `delivered` would count packets at admission, and its packets in
    /// flight would miss those that cut through).
    fn cut_through_feeders(&self, recording: bool) -> Vec<LinkId> {
        if recording {
            return vec![NO_FEEDER; self.feeder.len()];
        }
        let mut watched = vec![false; self.feeder.len()];
        for watch in self.observations.iter().flat_map(|o| &o.watches) {
            if let Source::Link(l) = watch.source {
                if let Some(w) = watched.get_mut(l as usize) {
                    *w = true;
                }
            }
        }
        // Never into a link that dequeues: its transmitter serves in the
        // engine's time order, so a packet must reach it at that time.
        (0..self.feeder.len())
            .map(|b| match self.feeder[b] {
                a if a != NO_FEEDER
                    && !watched[a as usize]
                    && !watched[b]
                    && !self.net.links[b].dequeues() =>
                {
                    a
                }
                _ => NO_FEEDER,
            })
            .collect()
    }

    fn endpoint_timer<const RECORDING: bool>(&mut self, id: EndpointId, time: Time, seq: Seq) {
        let slot = &mut self.slots[id as usize];
        if slot.armed != time {
            return; // superseded by an earlier entry that already fired
        }
        slot.armed = NEVER;
        // An entry from an earlier request for the same time, or one older
        // than what the endpoint already did (it took a packet ahead of
        // time), is stale: the one re-armed below has the key the run would
        // have had without taking packets early.
        let current = seq.made_at == Maker::after_own(slot.wake_up.since) && time >= slot.acted_at;
        let due = slot.wake_up.wanted <= time;
        let Some(endpoint) = slot.endpoint.as_mut() else { return };
        if current && due {
            endpoint.on_timer(time, &mut self.outbox);
            self.flush::<RECORDING>(id);
        } else {
            // Nothing done: the wake-up noted after its last act stands.
            self.arm_in_loop::<RECORDING>(id);
        }
    }

    /// Stamps and routes what endpoint `id` just sent, re-arms its timer, and
    /// reclaims its connection if both ends are done.
    fn flush<const RECORDING: bool>(&mut self, id: EndpointId) {
        let mut packets = std::mem::take(&mut self.outbox.packets);
        let slot = &mut self.slots[id as usize];
        slot.acted_at = self.now;
        let (node, peer_node, peer, flow) = (slot.node, slot.peer_node, slot.peer, slot.flow);
        // Stamped in place and copied once, into the pool.
        for packet in packets.iter_mut() {
            packet.to_endpoint = peer;
            packet.flow = flow;
            self.totals.packets_sent += 1;
            let p = self.pool.insert(packet, peer_node);
            if RECORDING {
                self.pool.set_route(p.id, node, peer_node);
            }
            self.forward::<RECORDING>(p, node, Origin::Endpoint(id));
        }
        packets.clear();
        self.outbox.packets = packets;
        self.rearm_after::<RECORDING>(id);
        if self.slots[id as usize].reclaimable {
            self.close_if_done::<RECORDING>(flow);
        }
    }

    /// Notes the wake-up endpoint `id` wants (before the run, or after it did
    /// something) and arms its timer.
    #[inline]
    fn rearm(&mut self, id: EndpointId) {
        self.note_wake_up(id);
        self.arm::<false>(id);
    }

    /// [`Engine::rearm`] in the event loop, after endpoint `id` acted.
    #[inline(always)]
    fn rearm_after<const RECORDING: bool>(&mut self, id: EndpointId) {
        self.note_wake_up(id);
        self.arm_in_loop::<RECORDING>(id);
    }

    /// [`Engine::arm`] in the event loop: with run-ahead unless it records.
    #[inline(always)]
    fn arm_in_loop<const RECORDING: bool>(&mut self, id: EndpointId) {
        if RECORDING {
            self.arm::<false>(id);
        } else {
            self.arm::<true>(id);
        }
    }

    /// Asks endpoint `id` when it next wants waking: the one call to its
    /// `next_wakeup` after each thing it does (see [`WakeUp`]).
    #[inline(always)]
    fn note_wake_up(&mut self, id: EndpointId) {
        let slot = &mut self.slots[id as usize];
        if let Some(endpoint) = slot.endpoint.as_ref() {
            slot.wake_up.asked(endpoint.next_wakeup(), self.now);
        }
    }

    /// Puts endpoint `id`'s timer for the wake-up last noted into the heap,
    /// unless an entry of its is there already no later or it is acting
    /// ahead. With `AHEAD`, an endpoint that may act ahead
    /// ([`Engine::run_ahead`]) and whose timer is due before anything new can
    /// reach it goes on instead, and its timer is armed when it stops: a
    /// paced sender's next departure is then not an event. Only where no
    /// entry is pushed otherwise, so the endpoints that need no run-ahead
    /// pay nothing for it.
    #[inline(always)]
    fn arm<const AHEAD: bool>(&mut self, id: EndpointId) {
        let slot = &self.slots[id as usize];
        let WakeUp { wanted, since: made_at } = slot.wake_up;
        // Time never runs backwards, whatever an endpoint asks for, nor
        // before what the endpoint already did.
        let wake = wanted.max(self.now).max(slot.acted_at);
        if slot.ahead || wake >= slot.armed || slot.endpoint.is_none() {
            return;
        }
        if AHEAD {
            if let Some(&l) = self.fed_by.get(id as usize).filter(|&&l| l != NO_FEEDER) {
                if wake < self.net.links[l as usize].no_new_arrival_before(self.clock) {
                    self.run_ahead(id, l);
                    return;
                }
            }
        }
        let slot = &mut self.slots[id as usize];
        slot.armed = wake;
        let seq = Maker::timer(Maker::endpoint(self.net.links.len(), self.agents.len(), id), made_at);
        self.heap.push(Event { time: wake, seq, target: Target::Endpoint(id) });
    }

    /// Reclaims an agent's connection once both endpoints are closed.
    fn close_if_done<const RECORDING: bool>(&mut self, flow: FlowId) {
        let Some(c) = self.live.get(&flow) else { return };
        let Some(owner) = c.owner else { return };
        let closed = |id: EndpointId| self.slots[id as usize].endpoint.as_ref().is_none_or(|e| e.is_closed());
        if !(closed(c.sender) && closed(c.receiver)) {
            return;
        }
        let record = self.record(flow, c);
        let sides = self.side_counters(c);
        let (bucket, sender, receiver) = (c.bucket, c.sender, c.receiver);
        self.live.remove(&flow);
        self.buckets[bucket as usize].closed.get_or_insert_default().merge(&sides);
        for id in [sender, receiver] {
            let slot = &mut self.slots[id as usize];
            slot.endpoint = None;
            slot.armed = NEVER;
            self.free_slots.push(id);
        }
        self.totals.connections_closed += 1;
        if let Some(record) = record {
            self.transfers.push(record);
            self.with_agent::<RECORDING>(owner, |agent, now, actions, _| {
                agent.on_closed(now, &record, actions)
            });
        }
    }

    fn agent_timer<const RECORDING: bool>(&mut self, id: AgentId, time: Time) {
        let slot = &mut self.agents[id as usize];
        if slot.armed != time {
            return;
        }
        slot.armed = NEVER;
        if slot.agent.next_wakeup() <= time {
            self.with_agent::<RECORDING>(id, |agent, now, actions, connections| {
                agent.on_timer(now, connections, actions)
            });
        } else {
            self.rearm_agent(id);
        }
    }

    /// Runs `act` on agent `id`, then carries out what it asked for.
    fn with_agent<const RECORDING: bool>(
        &mut self,
        id: AgentId,
        act: impl FnOnce(&mut dyn Agent, Time, &mut Actions, &Connections),
    ) {
        let mut actions = Actions { next_flow: self.next_flow, opens: Vec::new(), controls: Vec::new() };
        {
            let connections = Connections { slots: &self.slots, live: &self.live };
            act(self.agents[id as usize].agent.as_mut(), self.now, &mut actions, &connections);
        }
        self.next_flow = actions.next_flow;
        for (flow, open) in actions.opens {
            if !self.declared(id, open.from, open.to) {
                self.undeclared.push((id, open.from, open.to));
            }
            let (_, s, r) = self.attach(flow, open, Some(id));
            self.rearm(s);
            self.rearm(r);
        }
        for (flow, control) in actions.controls {
            let Some(sender) = self.live.get(&flow).map(|c| c.sender) else { continue };
            let refused = match self.slots[sender as usize].endpoint.as_mut() {
                Some(e) => e.on_control(self.now, control, &mut self.outbox).err(),
                None => None,
            };
            if let Some(refused) = refused {
                self.agents[id as usize].agent.on_refused(flow, refused);
            }
            self.flush::<RECORDING>(sender);
        }
        self.rearm_agent(id);
    }

    /// Whether agent `id` declared a connection between `from` and `to` (either way:
    /// the feeders are computed from the routes in both directions).
    fn declared(&self, id: AgentId, from: NodeId, to: NodeId) -> bool {
        let declared = self.agents[id as usize].declared.as_ref();
        declared.is_none_or(|nodes| nodes.contains(&(from, to)) || nodes.contains(&(to, from)))
    }

    fn rearm_agent(&mut self, id: AgentId) {
        let slot = &mut self.agents[id as usize];
        let wanted = slot.agent.next_wakeup();
        let made_at = slot.wake_up.asked(wanted, self.now);
        let wake = wanted.max(self.now);
        if wake < slot.armed {
            slot.armed = wake;
            let seq = Maker::timer(Maker::agent(self.net.links.len(), id), made_at);
            self.heap.push(Event { time: wake, seq, target: Target::Agent(id) });
        }
    }

    /// Samples of observation `o`. Each watched source publishes everything it
    /// has through a [`Metrics`] writer; [`Selected`] keeps the wanted names.
    /// Rows go into one reused vector, so a sample allocates only when it grows.
    fn sample(&mut self, o: u32) {
        let now = self.now;
        let Self { observations, slots, net, series, live, .. } = self;
        let Some(observation) = observations.get_mut(o as usize) else { return };
        let Observation { watches, on_change, last, every } = observation;
        for watch in watches.iter_mut() {
            let mut sink = Selected {
                now,
                wanted: &watch.metrics,
                learned: &mut watch.learned,
                at: 0,
                rows: RowWriter { rows: &mut series.rows, last: on_change.then_some(&mut *last) },
            };
            match watch.source {
                Source::Endpoint(id) => {
                    let Some(slot) = slots.get(id as usize) else { continue };
                    let Some(endpoint) = slot.endpoint.as_ref() else { continue };
                    // Time series follow the flow instances; an agent's many
                    // short transfers (whose slots are reused) are reported by
                    // their records.
                    if slot.reclaimable {
                        continue;
                    }
                    endpoint.metrics(&mut Metrics::new(&mut sink));
                    if let Some(series) = watch.delivered {
                        let delivered = slots[slot.peer as usize]
                            .endpoint
                            .as_ref()
                            .map_or(0, |peer| peer.counters().bytes_delivered);
                        sink.rows.push(MetricRow { time: now, series, value: delivered as f64 });
                    }
                }
                Source::Link(id) => {
                    let Some(link) = net.links.get_mut(id as usize) else { continue };
                    let occ = link.waiting_at(now);
                    for &(flow, series) in &watch.flow_backlog {
                        // The key of the flow's data packets: its flow id and receiver's node.
                        let Some(c) = live.get(&flow) else { continue };
                        let key = ((flow as u64) << 32) | slots[c.receiver as usize].node as u64;
                        if let Some(backlog) = link.flow_backlog(key) {
                            sink.rows.push(MetricRow { time: now, series, value: backlog.bytes as f64 });
                        }
                    }
                    let s = &link.stats;
                    let mut m = Metrics::new(&mut sink);
                    m.put(QUEUE_PACKETS.name, occ.packets as f64);
                    m.put(QUEUE_BYTES.name, occ.bytes as f64);
                    m.put("arrivals", s.arrivals as f64);
                    m.put("drops", s.drops as f64);
                    m.put("early_drops", s.early_drops as f64);
                    m.put("marks", s.marks as f64);
                    link.queue_metrics(now, &mut m);
                    m.put("losses", s.losses as f64);
                    m.put("delivered", s.delivered as f64);
                    let Some(departures) = link.departures() else { continue };
                    m.put("departed_bytes", departures.total() as f64);
                    for (name, bytes) in DEPARTED_BY_KIND.iter().zip(departures.by_kind) {
                        m.put(name, bytes as f64);
                    }
                    for &(flow, series) in &watch.per_flow {
                        let value = departures.by_flow.get(flow as usize).copied().unwrap_or(0) as f64;
                        sink.rows.push(MetricRow { time: now, series, value });
                    }
                }
            }
        }
        let every = *every;
        self.push_own(now + every, Target::Sample(o));
    }

    /// Adds an observation (before the run): its sources are sampled at time 0
    /// and every `every` after. Returns its index.
    pub fn observe(&mut self, observation: Observation) -> usize {
        for watch in &observation.watches {
            if let Source::Link(id) = watch.source {
                let departures = watch.metrics.iter().any(|(name, _)| name.starts_with("departed_bytes"));
                let flows = watch.per_flow.iter().map(|&(flow, _)| flow as usize + 1).max().unwrap_or(0);
                if let (true, Some(link)) = (departures || flows > 0, self.net.links.get_mut(id as usize)) {
                    link.count_departures(flows);
                }
            }
        }
        self.observations.push(observation);
        self.observations.len() - 1
    }
}

/// Keeps the published values a [`crate::stats::Watch`] wants, as rows.
struct Selected<'a> {
    now: Time,
    wanted: &'a [(String, u32)],
    learned: &'a mut Vec<Learned>,
    /// Position of the next published value in this sample.
    at: usize,
    rows: RowWriter<'a>,
}

impl MetricSink for Selected<'_> {
    fn record(&mut self, prefix: &'static str, name: &'static str, value: f64) {
        let key = (prefix.as_ptr() as usize, prefix.len(), name.as_ptr() as usize, name.len());
        let at = self.at;
        self.at += 1;
        let series = match self.learned.get(at) {
            Some(l) if l.key == key => l.series,
            _ => {
                let series = self
                    .wanted
                    .iter()
                    .find(|(full, _)| metrics::is_named(full, prefix, name))
                    .map(|&(_, id)| id);
                let learned = Learned { key, series };
                match self.learned.get_mut(at) {
                    Some(l) => *l = learned,
                    None => self.learned.push(learned),
                }
                series
            }
        };
        if let Some(series) = series {
            self.rows.push(MetricRow { time: self.now, series, value });
        }
    }
}

#[cfg(test)]
mod selected_tests {
    use super::*;

    fn publish(sink: &mut Selected<'_>, names: &[(&'static str, &'static str)]) {
        sink.at = 0;
        let mut m = Metrics::new(sink);
        for (i, &(prefix, name)) in names.iter().enumerate() {
            m.part(prefix).put(name, i as f64);
        }
    }

    #[test]
    fn a_source_that_changes_its_order_still_maps_each_name_to_its_series() {
        let wanted = vec![("cwnd".to_string(), 7), ("cc.mode".to_string(), 9)];
        let (mut learned, mut rows) = (Vec::new(), Vec::new());
        let rows_out = RowWriter { rows: &mut rows, last: None };
        let mut sink = Selected { now: 5, wanted: &wanted, learned: &mut learned, at: 0, rows: rows_out };
        publish(&mut sink, &[("", "cwnd"), ("", "rtt"), ("cc.", "mode")]);
        publish(&mut sink, &[("", "cwnd"), ("", "rtt"), ("cc.", "mode")]);
        publish(&mut sink, &[("cc.", "mode"), ("", "cwnd")]);
        let got: Vec<(u32, f64)> = rows.iter().map(|r| (r.series, r.value)).collect();
        assert_eq!(got, [(7, 0.0), (9, 2.0), (7, 0.0), (9, 2.0), (9, 0.0), (7, 1.0)]);
    }
}

#[cfg(test)]
mod tests;
