//! From a validated [`Scenario`] and a seed to a ready-to-run [`Simulation`]:
//! topology, buffers resolved against the BDP, flow instances with their start
//! times, and their endpoints (or, for traffic sources that open connections
//! during the run, their host agents) attached to the engine.

use crate::capacity::Capacity;
use crate::error::ScenarioError;
use crate::hosts::SendBufferHost;
use crate::limits::{self, MemoryLimit};
use crate::observe::{self, SeriesInfo};
use crate::protocols::Protocol;
use crate::scenario::{FlowGroup, Scenario};
use crate::sources::agent::{EndpointPair, TransferOpener};
use crate::sources::arrivals::{ArrivalPlan, ArrivalSource};
use crate::sources::web::{WebPlan, WebSource};
use crate::sources::AppSpec;
use crate::topology::{AccessLinks, FlowEnds, Graph, LinkParams, LinkRole};
use crate::trace;
use crate::units::BufferSpec;
use cclab_core::network::NodeKind;
use cclab_core::queue::{self, Discipline, QueueLink};
use cclab_core::{
    Agent, BucketId, BufferLimit, Engine, LinkSpec, MeasurementWindow, Network, Open, RngStream, Variation,
};
use cclab_transport::buffer::share::ShareSchedule;
use cclab_transport::cc::EcnUse;
use cclab_transport::registry;
use cclab_transport::tcp::{App, TcpReceiver, TcpSender};
use cclab_transport::udp::{CbrConfig, CbrSource, UdpSink};
use cclab_transport::udt::{receiver::UdtReceiver, sender::UdtSender};
use cclab_wire::{Endpoint, FlowId, NodeId, Params, Time};
use std::rc::Rc;

pub use crate::instance::FlowInstance;

pub struct Simulation {
    pub scenario: Scenario,
    pub seed: u64,
    pub engine: Engine,
    pub flows: Vec<FlowInstance>,
    /// Role of each link: "bottleneck", "bottleneck.reverse", "access" or "link".
    pub link_roles: Vec<&'static str>,
    /// Every time series the run records; a row's `series` indexes this table.
    pub series: Vec<SeriesInfo>,
    /// What the scenario allows but a researcher should hear about (an L4S
    /// flow on a path that never marks it); the result repeats them.
    pub warnings: Vec<String>,
}

/// What every instance of a flow group with hosts of its own shares.
struct OwnEnds {
    /// Where the group is configured (`flows[G]`), for error messages.
    key: String,
    setting: Rc<QueueSetting>,
    /// The nodes its hosts join.
    sender: NodeId,
    receiver: NodeId,
}

struct PlannedFlow {
    group: usize,
    index: u32,
    start: Time,
    sender_node: NodeId,
    receiver_node: NodeId,
}

/// Links are created with unlimited buffers; these are applied once the BDP is known.
struct PendingBuffer {
    link: u32,
    /// Shared by every link one configuration entry makes: a flow group's
    /// access links are thousands of links of one setting, and a copy of its
    /// strings for each was most of the allocations of building them.
    setting: Rc<QueueSetting>,
}

/// A link's buffer and queue as configured, and where, for error messages.
struct QueueSetting {
    buffer: BufferSpec,
    queue: String,
    queue_params: Params,
    /// Where the buffer was configured (`....buffer`).
    key: String,
    /// The key beside it that sets the rate its BDP is computed from (`rate`,
    /// or `buffer_rate` on a link whose rate varies).
    rate_name: &'static str,
}

impl QueueSetting {
    fn new(params: &LinkParams, key: String) -> Rc<Self> {
        Rc::new(Self {
            buffer: params.buffer,
            queue: params.queue.clone(),
            queue_params: params.queue_params.clone(),
            key,
            rate_name: if params.buffer_rate.is_some() { "buffer_rate" } else { "rate" },
        })
    }

    fn rate_key(&self) -> String {
        format!("{}{}", self.key.strip_suffix("buffer").unwrap_or(&self.key), self.rate_name)
    }
}

impl PlannedFlow {
    /// Instance `index` of flow group `g`; a start range is drawn from the
    /// instance's own stream, so adding flows never shifts another's start.
    fn new(
        seed: u64,
        g: usize,
        group: &FlowGroup,
        index: u32,
        sender_node: NodeId,
        receiver_node: NodeId,
    ) -> Self {
        let start =
            group.start.draw(|| RngStream::new(seed, &format!("flow:{}:{}:start", group.name, index)));
        Self { group: g, index, start, sender_node, receiver_node }
    }
}

/// Builds link `link`'s queue discipline; `key` is where its buffer was
/// configured (`....buffer`), beside which its `queue_params` are.
fn discipline(name: &str, params: &Params, link: QueueLink, key: &str) -> Result<Discipline, ScenarioError> {
    let d = queue::find(name)
        .ok_or_else(|| ScenarioError::at(key, format!("unknown queue discipline \"{name}\"")))?;
    let buffer = link.buffer;
    (d.build)(params, link).map_err(|e| {
        let params_key = format!("{}queue_params.{}", key.strip_suffix("buffer").unwrap_or(key), e.name);
        if e.problem == queue::ABOVE_BUFFER {
            let size = match buffer {
                BufferLimit::Packets(n) => format!("{n} packets"),
                BufferLimit::Bytes(b) => format!("{b} bytes"),
                BufferLimit::Unlimited => "unlimited".into(),
            };
            ScenarioError::at(params_key, format!("{} of {size}", e.problem))
        } else {
            ScenarioError::at(params_key, e.problem)
        }
    })
}

/// The network as it is wired, before routes are computed and buffers sized.
struct Wiring {
    net: Network,
    seed: u64,
    /// Every link's buffer, to be sized once the flows' RTTs are known.
    pending: Vec<PendingBuffer>,
    /// Every link direction's role, in link id order.
    roles: Vec<&'static str>,
}

impl Wiring {
    /// Room for the whole network up front: at 20 000 flows the links alone
    /// are 40 MB, and growing them by doubling copied each one and left up to
    /// twice the memory in use.
    fn new(seed: u64, scenario: &Scenario) -> Self {
        let (nodes, links) = limits::network_size(scenario);
        let (nodes, links) = (nodes as usize, links as usize);
        let mut net = Network::default();
        net.reserve(nodes, links);
        // A pending buffer and a role per link direction.
        Self { net, seed, pending: Vec::with_capacity(links), roles: Vec::with_capacity(links) }
    }

    fn node(&mut self, name: &str, kind: NodeKind, key: &str) -> Result<NodeId, ScenarioError> {
        self.net.add_node(name, kind).map_err(|e| ScenarioError::at(key, e.to_string()))
    }

    /// The graph's nodes (routers) and links, in the order the scenario lists them.
    fn add_graph(&mut self, graph: &Graph) -> Result<(), ScenarioError> {
        for n in &graph.nodes {
            self.node(n, NodeKind::Router, "topology.nodes")?;
        }
        for l in &graph.links {
            let (a, b) = (self.net.node_id(&l.from), self.net.node_id(&l.to));
            let (Some(a), Some(b)) = (a, b) else {
                return Err(ScenarioError::at(&l.key, "unknown node"));
            };
            let setting = QueueSetting::new(&l.params, format!("{}.buffer", l.key));
            self.add_duplex(a, b, &l.params, l.params.delay, &setting, l.role);
        }
        Ok(())
    }

    /// Every flow instance's ends: the nodes its group names, or hosts of its
    /// own joined to them by access links whose delays make up its RTT.
    fn add_flow_ends(&mut self, scenario: &Scenario) -> Result<Vec<PlannedFlow>, ScenarioError> {
        let mut planned = Vec::with_capacity(limits::flow_instances(scenario) as usize);
        for (g, group) in scenario.flows.iter().enumerate() {
            let lookup = |net: &Network, key: &str, name: &str| {
                net.node_id(name)
                    .ok_or_else(|| ScenarioError::at(format!("flows[{g}].{key}"), "unknown node"))
            };
            let ends = &group.ends;
            let (sender, receiver) =
                (lookup(&self.net, "from", &ends.sender)?, lookup(&self.net, "to", &ends.receiver)?);
            if !ends.own_hosts {
                planned.extend(
                    (0..group.count).map(|k| PlannedFlow::new(self.seed, g, group, k, sender, receiver)),
                );
                continue;
            }
            let access = scenario.graph.access.as_ref().ok_or_else(|| {
                ScenarioError::at(
                    format!("flows[{g}]"),
                    "the topology has no access links for hosts of its own",
                )
            })?;
            let ends = OwnEnds {
                key: format!("flows[{g}]"),
                setting: QueueSetting::new(&access.params, format!("{}.buffer", access.key)),
                sender,
                receiver,
            };
            for k in 0..group.count {
                let (snd, rcv) = self.add_own_hosts(group, k, access, &ends)?;
                planned.push(PlannedFlow::new(self.seed, g, group, k, snd, rcv));
            }
        }
        Ok(planned)
    }

    /// Instance `k` of group `g`'s two hosts and their access links to
    /// `sender` and `receiver`; its RTT is drawn from the instance's own
    /// stream, like a start range.
    fn add_own_hosts(
        &mut self,
        group: &FlowGroup,
        k: u32,
        access: &AccessLinks,
        ends: &OwnEnds,
    ) -> Result<(NodeId, NodeId), ScenarioError> {
        let seed = self.seed;
        let rtt = group.rtt.map_or(2 * access.core_delay, |r| {
            r.draw(|| RngStream::new(seed, &format!("flow:{}:{k}:rtt", group.name)))
        });
        let (near, far) = access.delays(rtt);
        let (snd_name, rcv_name) = FlowEnds::host_names(&group.name, k);
        let snd = self.node(&snd_name, NodeKind::Host, &ends.key)?;
        let rcv = self.node(&rcv_name, NodeKind::Host, &ends.key)?;
        let params = &access.params;
        self.add_duplex(snd, ends.sender, params, near, &ends.setting, LinkRole::Access);
        self.add_duplex(ends.receiver, rcv, params, far, &ends.setting, LinkRole::Access);
        Ok((snd, rcv))
    }

    /// Both directions of a link, `a -> b` first, with unlimited buffers
    /// until [`resolve_buffers`] sizes them.
    /// `delay` is the link's own: an access link's comes from its flow's RTT.
    fn add_duplex(
        &mut self,
        a: NodeId,
        b: NodeId,
        params: &LinkParams,
        delay: Time,
        setting: &Rc<QueueSetting>,
        role: LinkRole,
    ) {
        let directions =
            [(a, b, params.loss, &params.capacity), (b, a, params.reverse_loss, params.reverse())];
        for (from, to, loss, capacity) in directions {
            let name =
                format!("{}->{}", self.net.nodes[from as usize].name, self.net.nodes[to as usize].name);
            let (rate_bps, rate, trace) = match capacity {
                Capacity::Rate(r) => (*r, None, None),
                Capacity::Schedule(s) => (params.rate_bps, Some(s.clone()), None),
                Capacity::Trace(t) => (params.rate_bps, None, Some(t.trace.clone())),
            };
            let variation = Variation { rate, trace, delay: params.delay_schedule.clone() }.boxed();
            let spec =
                LinkSpec { name, from, to, rate_bps, delay, buffer: BufferLimit::Unlimited, loss, variation };
            let unlimited = Discipline::Fifo(Box::new(queue::DropTail::new(BufferLimit::Unlimited)));
            let link = self.net.add_link(spec, unlimited, self.seed);
            self.pending.push(PendingBuffer { link, setting: setting.clone() });
        }
        self.roles.extend(role.directions());
    }
}

/// Builds `scenario` for `seed` within the memory limit of `CCLAB_MEMORY_LIMIT`
/// (default 4 GB); see [`build_within`].
pub fn build(scenario: &Scenario, seed: u64) -> Result<Simulation, ScenarioError> {
    build_within(scenario, seed, MemoryLimit::from_env()?)
}

/// Builds `scenario` for `seed`, after checking its memory estimate against
/// `limit` ([`limits::check`]): a scenario too big is refused before anything
/// is allocated per flow instance.
pub fn build_within(scenario: &Scenario, seed: u64, limit: MemoryLimit) -> Result<Simulation, ScenarioError> {
    limits::check(scenario, limit)?;
    let mut wiring = Wiring::new(seed, scenario);
    wiring.add_graph(&scenario.graph)?;
    let planned = wiring.add_flow_ends(scenario)?;
    let Wiring { mut net, pending, roles, .. } = wiring;
    net.compute_routes();
    let rtts = base_rtts(&net, &planned)?;
    resolve_buffers(&mut net, &pending, scenario, &planned, &rtts, seed)?;
    let warnings = l4s_without_marking(&net, scenario, &planned);

    let window = MeasurementWindow { start: scenario.run.warmup, end: scenario.run.duration };
    let mut engine = Engine::new(net, window);
    engine.reserve_connections(planned.len());
    let mut flows = Vec::with_capacity(planned.len());
    for (row, (p, &base_rtt)) in planned.iter().zip(&rtts).enumerate() {
        flows.push(connect(&mut engine, scenario, p, row as FlowId, base_rtt, seed)?);
    }
    engine.reserve_flows(flows.len() as FlowId);
    add_capped_hosts(&mut engine, scenario, &planned)?;
    let series = add_observers(&mut engine, scenario, &flows);
    if let Some(tracer) = trace::tracer(scenario, &flows, &engine)? {
        engine.set_tracer(tracer);
    }
    Ok(Simulation { scenario: scenario.clone(), seed, engine, flows, link_roles: roles, series, warnings })
}

/// The queue disciplines that mark L4S traffic (ECT(1)) at a shallow,
/// immediate threshold, as RFC 9331 §5.2 asks of an L4S AQM.
const L4S_MARKING: [&str; 2] = ["step", "dualpi2"];

/// A warning for each flow group with an L4S congestion control (Prague)
/// none of whose paths crosses a link that marks L4S traffic: it still runs
/// (it falls back on losses, as over any path without L4S support), but a
/// researcher who meant to study L4S should know.
fn l4s_without_marking(net: &Network, scenario: &Scenario, planned: &[PlannedFlow]) -> Vec<String> {
    let mut warnings = Vec::new();
    let mut path = Vec::new();
    for (g, group) in scenario.flows.iter().enumerate() {
        let Some(cc) = group.algorithms.as_ref().and_then(|a| registry::congestion_control(&a.cc)) else {
            continue;
        };
        if cc.build.ecn != EcnUse::L4s {
            continue;
        }
        let marked = planned.iter().filter(|p| p.group == g).any(|p| {
            net.path_into(p.sender_node, p.receiver_node, &mut path)
                && path.iter().any(|&l| L4S_MARKING.contains(&net.links[l as usize].discipline_name()))
        });
        if !marked {
            warnings.push(format!(
                "flows[{g}] (\"{}\", cc = \"{}\"): no link on its path marks L4S traffic (queue = {}): it will see losses, not marks",
                group.name,
                cc.name,
                L4S_MARKING.map(|q| format!("\"{q}\"")).join(" or ")
            ));
        }
    }
    warnings
}

/// Each planned flow's propagation-only round trip: there over its route, and
/// back over the route its ACKs take.
fn base_rtts(net: &Network, planned: &[PlannedFlow]) -> Result<Vec<Time>, ScenarioError> {
    let name = |n: NodeId| net.nodes[n as usize].name.clone();
    let mut rtts = Vec::with_capacity(planned.len());
    for p in planned {
        let there = net.path_delay(p.sender_node, p.receiver_node).ok_or_else(|| {
            ScenarioError::at(
                format!("flows[{}].to", p.group),
                format!("no route from \"{}\" to \"{}\"", name(p.sender_node), name(p.receiver_node)),
            )
        })?;
        let back = net.path_delay(p.receiver_node, p.sender_node).ok_or_else(|| {
            ScenarioError::at(
                format!("flows[{}].from", p.group),
                format!(
                    "no route back from \"{}\" to \"{}\" for ACKs",
                    name(p.receiver_node),
                    name(p.sender_node)
                ),
            )
        })?;
        rtts.push(there + back);
    }
    Ok(rtts)
}

/// What a flow instance runs: one connection between its hosts, or a
/// traffic source that opens connections during the run.
enum Traffic {
    Connection { sender: Box<dyn Endpoint>, receiver: Box<dyn Endpoint>, size: Option<u64> },
    Source(Box<dyn Agent>),
}

/// Planned flow `p`, row `flow_id` of the flows table, attached to the engine.
fn connect(
    engine: &mut Engine,
    scenario: &Scenario,
    p: &PlannedFlow,
    flow_id: FlowId,
    base_rtt: Time,
    seed: u64,
) -> Result<FlowInstance, ScenarioError> {
    let group = &scenario.flows[p.group];
    let bucket = engine.add_bucket();
    let traffic = traffic(group, p, bucket, base_rtt, seed)
        .map_err(|m| ScenarioError::at(format!("flows[{}]", p.group), m))?;
    let (sender, receiver) = match traffic {
        Traffic::Connection { sender, receiver, size } => {
            let open = Open {
                sender,
                receiver,
                from: p.sender_node,
                to: p.receiver_node,
                bucket,
                size,
                start: p.start,
            };
            let (_, s, r) = engine.connect(flow_id, open);
            (Some(s), Some(r))
        }
        Traffic::Source(agent) => {
            engine.add_agent(agent);
            (None, None)
        }
    };
    Ok(FlowInstance {
        group: p.group,
        index: p.index,
        flow_id,
        bucket,
        sender,
        receiver,
        start: p.start,
        base_rtt,
    })
}

/// The endpoints or the traffic source of planned flow `p` of `group`.
fn traffic(
    group: &FlowGroup,
    p: &PlannedFlow,
    bucket: BucketId,
    base_rtt: Time,
    seed: u64,
) -> Result<Traffic, String> {
    // Each connection's send overhead draws from its own seed, so adding a
    // flow never shifts another's draws.
    let mut overhead_seeds = RngStream::new(seed, &format!("flow:{}:{}:overhead", group.name, p.index));
    let stream = || format!("flow:{}:{}", group.name, p.index);
    let connection = |(sender, receiver): EndpointPair, size| Traffic::Connection { sender, receiver, size };
    Ok(match (group.protocol(), group.app) {
        (Protocol::Tcp, AppSpec::Bulk) => {
            connection(tcp_endpoints(group, p.start, App::Bulk, overhead_seeds.next_u64())?, None)
        }
        (Protocol::Tcp, AppSpec::Transfer { size }) => {
            let app = App::Transfer { bytes: size };
            connection(tcp_endpoints(group, p.start, app, overhead_seeds.next_u64())?, Some(size))
        }
        (Protocol::Tcp, AppSpec::Arrivals { rate, size }) => {
            let opener = transfer_opener(group, p, bucket, overhead_seeds)?;
            let plan = ArrivalPlan { rate, sizes: size, start: p.start, stream: stream(), seed };
            Traffic::Source(Box::new(ArrivalSource::new(plan, opener)))
        }
        (Protocol::Tcp, AppSpec::Web(spec)) => {
            let opener = transfer_opener(group, p, bucket, overhead_seeds)?;
            let plan = WebPlan { spec, start: p.start, base_rtt, stream: stream(), seed };
            Traffic::Source(Box::new(WebSource::new(plan, opener)))
        }
        (Protocol::Udt, AppSpec::Bulk | AppSpec::Transfer { .. }) => {
            let (app, size) = match group.app {
                AppSpec::Transfer { size } => (App::Transfer { bytes: size }, Some(size)),
                _ => (App::Bulk, None),
            };
            connection(udt_endpoints(group, p.start, app)?, size)
        }
        (Protocol::Udp, AppSpec::Cbr { rate, size, on, off }) => {
            let cfg = CbrConfig {
                rate_bps: rate,
                packet_bytes: size as u32,
                start: p.start,
                stop: group.stop,
                on_off: on.zip(off),
            };
            connection((Box::new(CbrSource::new(cfg)), Box::new(UdpSink::new())), None)
        }
        (protocol, app) => return Err(format!("no way to run {app:?} over {protocol:?}")),
    })
}

/// The time series `scenario` asks for, watched by the engine; returns the
/// table of every series, which a sample's `series` indexes.
fn add_observers(engine: &mut Engine, scenario: &Scenario, flows: &[FlowInstance]) -> Vec<SeriesInfo> {
    let (observations, series) = {
        let link_names: Vec<&str> = engine.net.links.iter().map(|l| l.spec.name.as_str()).collect();
        observe::plan(scenario, flows, &link_names)
    };
    for o in observations {
        engine.observe(o);
    }
    series
}

/// One agent per host that caps its connections' send-buffer memory; it
/// recomputes their limits periodically and at each planned start.
fn add_capped_hosts(
    engine: &mut Engine,
    scenario: &Scenario,
    planned: &[PlannedFlow],
) -> Result<(), ScenarioError> {
    for (h, host) in scenario.graph.hosts.iter().enumerate() {
        let key = || format!("topology.hosts[{h}]");
        let node = engine.net.node_id(&host.node).ok_or_else(|| ScenarioError::at(key(), "unknown node"))?;
        let here: Vec<&PlannedFlow> = planned.iter().filter(|p| p.sender_node == node).collect();
        let Some(spec) =
            here.first().and_then(|p| scenario.flows[p.group].algorithms.as_ref()?.send_buffer.as_ref())
        else {
            continue; // nothing sends from this host
        };
        let sharing = crate::scenario::send_buffer_sharing(spec).map_err(|m| ScenarioError::at(key(), m))?;
        let schedule = ShareSchedule::new(host.share_every, here.iter().map(|p| p.start).collect());
        engine.add_agent(Box::new(SendBufferHost::new(node, host.memory, sharing, schedule)));
    }
    Ok(())
}

/// What a source that opens a connection per transfer opens them with: TCP
/// connections of `group` between the instance's hosts, each with a send
/// overhead seed of its own from `overhead_seeds`. Fails here, before the run,
/// if the algorithms cannot be built.
fn transfer_opener(
    group: &FlowGroup,
    p: &PlannedFlow,
    bucket: BucketId,
    mut overhead_seeds: RngStream,
) -> Result<TransferOpener, String> {
    tcp_endpoints(group, p.start, App::Stream, 0)?;
    let template = group.clone();
    let factory =
        Box::new(move |start| tcp_endpoints(&template, start, App::Stream, overhead_seeds.next_u64()));
    Ok(TransferOpener::new(p.sender_node, p.receiver_node, bucket, factory))
}

/// The two endpoints of one TCP connection of `group`, with its algorithms
/// built from their descriptors and the group's resolved parameters;
/// `overhead_seed`, the connection's draw from the run's stream, seeds the
/// sender's send-overhead draws as it is and the congestion control's (BBR's
/// first gain phase) through a stream named `cc` derived from it, so that
/// neither shifts the other's draws nor any existing connection's.
pub fn tcp_endpoints(
    group: &FlowGroup,
    start: Time,
    app: App,
    overhead_seed: u64,
) -> Result<EndpointPair, String> {
    let (Some(a), Some(cfg)) = (group.algorithms.as_ref(), group.tcp_config(start, app, overhead_seed))
    else {
        return Err("not a TCP flow".into());
    };
    let missing = |what: &str, name: &str| format!("{what} \"{name}\" is not registered");
    let cc = registry::congestion_control(&a.cc).ok_or_else(|| missing("congestion control", &a.cc))?;
    let recovery =
        registry::loss_recovery(&a.recovery).ok_or_else(|| missing("loss recovery", &a.recovery))?;
    let pacing = registry::pacing(&a.pacing).ok_or_else(|| missing("pacing", &a.pacing))?;
    let mut cc = (cc.build.build)(&a.cc_params).map_err(|e| format!("cc {e}"))?;
    cc.seed(RngStream::new(overhead_seed, "cc").next_u64());
    let mut sender = TcpSender::new(
        &cfg,
        cc,
        (recovery.build.build)(&a.recovery_params).map_err(|e| format!("recovery {e}"))?,
        (pacing.build)(&a.pacing_params).map_err(|e| format!("pacing {e}"))?,
    );
    if let Some(spec) = &a.send_buffer {
        let policy = registry::send_buffer_policy(&spec.policy)
            .ok_or_else(|| missing("send-buffer policy", &spec.policy))?;
        let policy = (policy.build)(&spec.params).map_err(|e| format!("send_buffer {e}"))?;
        sender = sender.with_send_buffer(policy, if spec.capped { 0 } else { u64::MAX });
    }
    Ok((Box::new(sender), Box::new(TcpReceiver::new(&cfg))))
}

/// The two endpoints of one UDT connection of `group`, its congestion
/// control built from its descriptor and the group's resolved parameters.
pub fn udt_endpoints(group: &FlowGroup, start: Time, app: App) -> Result<EndpointPair, String> {
    let (Some(u), Some(cfg)) = (group.udt.as_ref(), group.udt_config(start, app)) else {
        return Err("not a UDT flow".into());
    };
    let cc = registry::udt_congestion_control(&u.cc)
        .ok_or_else(|| format!("UDT congestion control \"{}\" is not registered", u.cc))?;
    let cc = (cc.build)(&u.cc_params).map_err(|e| format!("cc {e}"))?;
    Ok((Box::new(UdtSender::new(cfg, cc)), Box::new(UdtReceiver::new(cfg))))
}

/// Turns each link's buffer spec into a limit. "1bdp" is the link rate times the
/// mean base RTT of all flow instances, in packets of the mean full-segment
/// wire size.
fn resolve_buffers(
    net: &mut Network,
    pending: &[PendingBuffer],
    scenario: &Scenario,
    planned: &[PlannedFlow],
    rtts: &[Time],
    seed: u64,
) -> Result<(), ScenarioError> {
    let n = planned.len().max(1) as f64;
    let mean_rtt_s = rtts.iter().map(|&r| cclab_wire::time::to_secs_f64(r)).sum::<f64>() / n;
    let wire: Vec<u64> = planned.iter().map(|p| scenario.flows[p.group].wire_segment_bytes()).collect();
    let mean_wire = wire.iter().sum::<u64>() as f64 / n;
    let largest_wire = wire.iter().copied().max().unwrap_or(1);
    for pending in pending {
        let (link, b) = (&mut net.links[pending.link as usize], &*pending.setting);
        let limit = match b.buffer {
            BufferSpec::Packets(p) => BufferLimit::Packets(p),
            BufferSpec::Unlimited => BufferLimit::Unlimited,
            BufferSpec::Bytes(bytes) => {
                if bytes < largest_wire {
                    return Err(ScenarioError::at(
                        &b.key,
                        format!("{bytes} bytes is under one packet ({largest_wire} bytes on the wire)"),
                    ));
                }
                BufferLimit::Bytes(bytes)
            }
            BufferSpec::Bdp(multiple) => {
                let bdp_packets = link.spec.rate_bps as f64 / 8.0 * mean_rtt_s / mean_wire;
                let packets = (multiple * bdp_packets).round();
                if packets < 1.0 && bdp_packets >= 1.0 {
                    return Err(ScenarioError::at(
                        &b.key,
                        format!(
                            "{multiple}bdp is {:.2} packets of {mean_wire:.0} bytes, under one packet",
                            multiple * bdp_packets
                        ),
                    ));
                }
                if packets < 1.0 {
                    // One BDP is under a packet: the rate (or an RTT that short) is the cause.
                    let rate = crate::resolved::rate(link.spec.rate_bps);
                    return Err(ScenarioError::at(
                        b.rate_key(),
                        format!(
                            "{rate} is too slow for the buffer {} = \"{multiple}bdp\": {multiple} x {rate} x the flows' mean RTT of {} is {:.2} packets of {mean_wire:.0} bytes, under one packet; raise the rate, or give the buffer in packets (\"10pkts\")",
                            b.key,
                            crate::units::fmt_time((mean_rtt_s * 1e9).round() as Time),
                            multiple * bdp_packets
                        ),
                    ));
                }
                BufferLimit::Packets(packets as u64)
            }
        };
        let rng = RngStream::new(seed, &format!("link:{}:queue", link.spec.name));
        let queue_link = QueueLink { buffer: limit, rate_bps: link.spec.rate_bps, rng };
        link.set_queue(limit, discipline(&b.queue, &b.queue_params, queue_link, &b.key)?);
    }
    Ok(())
}

impl Simulation {
    /// An error naming the flow group of the first traffic source that gave up.
    pub fn check_agents(&self) -> Result<(), ScenarioError> {
        let sources: Vec<&FlowInstance> = self.flows.iter().filter(|f| f.sender.is_none()).collect();
        match self.engine.agent_failures().first() {
            Some((agent, why)) => {
                let key = sources
                    .get(*agent as usize)
                    .map_or("flows".to_string(), |f| format!("flows[{}].app", f.group));
                Err(ScenarioError::at(key, format!("the traffic source stopped: {why}")))
            }
            None => Ok(()),
        }
    }

    /// Makes every TCP receiver log its deliveries to the application (for tests).
    pub fn record_deliveries(&mut self) {
        for f in &self.flows {
            let Some(id) = f.receiver else { continue };
            if let Some(r) =
                self.engine.endpoint_mut(id).and_then(|e| e.as_any_mut().downcast_mut::<TcpReceiver>())
            {
                r.record_deliveries();
            }
        }
    }

    /// The deliveries a receiver logged, as `[start, end)` byte ranges.
    pub fn deliveries(&self, flow: &FlowInstance) -> Option<&[(u64, u64)]> {
        self.engine.endpoint(flow.receiver?)?.as_any().downcast_ref::<TcpReceiver>()?.deliveries()
    }

    pub fn sender(&self, flow: &FlowInstance) -> Option<&TcpSender> {
        self.engine.endpoint(flow.sender?)?.as_any().downcast_ref::<TcpSender>()
    }

    pub fn sender_mut(&mut self, flow: &FlowInstance) -> Option<&mut TcpSender> {
        self.engine.endpoint_mut(flow.sender?)?.as_any_mut().downcast_mut::<TcpSender>()
    }

    /// Every packet an endpoint sent is exactly one of: received by an endpoint,
    /// dropped or lost at a link, still inside a link, unroutable, or arrived
    /// after its connection closed; and at every link, arrivals = drops +
    /// losses + deliveries + packets inside.
    pub fn check_conservation(&self) -> Result<(), String> {
        let mut dropped = 0;
        let mut lost = 0;
        for l in &self.engine.net.links {
            let s = &l.stats;
            let accounted = s.drops + s.losses + s.delivered + l.in_flight();
            if s.arrivals != accounted {
                return Err(format!(
                    "link {}: {} arrivals but {} accounted for",
                    l.spec.name, s.arrivals, accounted
                ));
            }
            dropped += s.drops;
            lost += s.losses;
        }
        let t = self.engine.totals();
        let accounted =
            t.packets_received + dropped + lost + self.engine.packets_in_flight() + t.unroutable + t.orphaned;
        if t.packets_sent != accounted {
            return Err(format!("{} packets sent but {} accounted for", t.packets_sent, accounted));
        }
        let (stored, inside) = (self.engine.packets_stored(), self.engine.packets_in_flight());
        if stored != inside {
            return Err(format!("{stored} packets stored but {inside} inside links"));
        }
        Ok(())
    }
}
