//! The scenario schema: TOML in, a validated [`Scenario`] out.
//!
//! Every key is read through [`Section`], so unknown keys, wrong types and bad
//! units are reported with their key path. Algorithms (protocol, congestion
//! control, loss recovery, pacing, queue discipline, traffic source) are looked
//! up in their descriptors, and their parameters are checked against the
//! descriptor's types and ranges with its defaults filled in, so the resolved
//! scenario (defaults included) records everything a run used. A named
//! topology shape is compiled here into the graph that everything after
//! parsing reads ([`crate::topology`]). Checks that need the built network
//! (BDP buffers, graph reachability) happen when it is built.

use crate::capacity;
use crate::error::{suggestion, ScenarioError};
use crate::protocols::{self, Protocol};
use crate::reader::Section;
use crate::sources::{self, AppSpec};
pub use crate::topology::{
    Direction, Dumbbell, FlowEnds, Graph, GraphLink, HostSpec, LinkParams, LinkRole, Topology,
    DEFAULT_SHARE_EVERY,
};
use crate::units::{self, as_secs, fmt_time, BufferSpec};
use cclab_core::loss::LossModel;
use cclab_core::queue;
use cclab_transport::buffer::Sharing;
use cclab_transport::cc::{CwndGrowth, EcnUse, SsthreshBasis};
use cclab_transport::registry::{self, CcDescriptor, PacingDescriptor};
use cclab_transport::tcp::{App, EcnFeedback, TcpConfig};
use cclab_transport::udt::UdtConfig;
use cclab_wire::time::millis;
use cclab_wire::{Ect, Info, ParamError, ParamType, ParamValue, Params, Role, Time};
use serde::{Serialize, Serializer};
use std::path::Path;
use toml::Value;

fn as_opt_secs<S: Serializer>(t: &Option<Time>, s: S) -> Result<S::Ok, S::Error> {
    match t {
        Some(t) => s.serialize_some(&cclab_wire::time::to_secs_f64(*t)),
        None => s.serialize_none(),
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Scenario {
    pub name: String,
    pub run: RunConfig,
    /// The topology as the file describes it (a named shape or a graph), for
    /// the resolved scenario and its JSON form only: what is built is `graph`.
    pub topology: Topology,
    /// The topology compiled to a graph, with link roles: what the builder,
    /// the estimates and the observers read.
    #[serde(skip)]
    pub graph: Graph,
    pub flows: Vec<FlowGroup>,
    /// `[[observe]]` sections, resolved: every name explicit.
    pub observe: Vec<Observe>,
    /// Packet traces (`[[trace]]`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub traces: Vec<TraceSpec>,
}

/// One `[[observe]]` section, resolved: every name explicit (globs expanded),
/// so the resolved scenario reads back to the same selection.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Observe {
    /// Flow groups whose every instance is sampled.
    pub flows: Vec<String>,
    /// Link directions (`"left->right"`).
    pub links: Vec<String>,
    /// Metric names: each selected flow or link records those it has.
    pub metrics: Vec<String>,
    #[serde(serialize_with = "as_secs")]
    pub every: Time,
    /// Record a value only when it differs from the series' last recorded one.
    pub on_change: bool,
}

/// One `[[trace]]` entry as configured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TraceSpec {
    /// Flow group names.
    pub flows: Vec<String>,
    /// Link names ("left->right").
    pub links: Vec<String>,
    #[serde(serialize_with = "as_secs")]
    pub from: Time,
    #[serde(serialize_with = "as_secs")]
    pub to: Time,
    /// Write pcap files for it.
    pub pcap: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunConfig {
    #[serde(serialize_with = "as_secs")]
    pub duration: Time,
    #[serde(serialize_with = "as_secs")]
    pub warmup: Time,
    pub seed: u64,
    /// Time-series sampling interval; `None` disables time series.
    #[serde(serialize_with = "as_opt_secs")]
    pub sample: Option<Time>,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Start {
    #[serde(serialize_with = "as_secs")]
    At(Time),
    /// Uniform in `[from, to]`, drawn per flow instance.
    Uniform(#[serde(serialize_with = "as_secs")] Time, #[serde(serialize_with = "as_secs")] Time),
}

/// A base RTT: one value, or uniform in a range drawn per instance (the same
/// two forms as a start time).
pub type Rtt = Start;

/// A single RTT as seconds (as before ranges existed), a range as `{"uniform": [from, to]}`.
fn as_opt_rtt<S: Serializer>(rtt: &Option<Rtt>, s: S) -> Result<S::Ok, S::Error> {
    match rtt {
        None => s.serialize_none(),
        Some(Start::At(t)) => s.serialize_some(&cclab_wire::time::to_secs_f64(*t)),
        Some(range) => s.serialize_some(range),
    }
}

impl Start {
    /// Draws an instance's value: a range from `stream`, uniformly, endpoints included.
    pub fn draw(&self, stream: impl FnOnce() -> cclab_core::RngStream) -> Time {
        match *self {
            Start::At(t) => t,
            Start::Uniform(lo, hi) => stream().uniform_inclusive(lo, hi),
        }
    }

    /// The earliest time an instance can start.
    pub fn earliest(&self) -> Time {
        match *self {
            Start::At(t) | Start::Uniform(t, _) => t,
        }
    }

    /// The latest time an instance can start.
    pub fn latest(&self) -> Time {
        match *self {
            Start::At(t) | Start::Uniform(_, t) => t,
        }
    }
}

/// TCP parameters of a flow group; see [`TcpConfig`] for their meaning.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TcpOptions {
    pub mss: u32,
    pub header: u32,
    pub initial_window: u32,
    pub initial_ssthresh: Option<f64>,
    pub max_window: Option<u64>,
    pub delayed_ack: bool,
    #[serde(serialize_with = "as_secs")]
    pub delack_timeout: Time,
    #[serde(serialize_with = "as_secs")]
    pub min_rto: Time,
    #[serde(serialize_with = "as_secs")]
    pub initial_rto: Time,
    #[serde(serialize_with = "as_secs")]
    pub max_rto: Time,
    #[serde(serialize_with = "as_secs")]
    pub clock_granularity: Time,
    pub dupthresh: u32,
    pub limited_transmit: bool,
    pub timestamps: bool,
    /// Written as before AccECN existed (false or true for off and classic),
    /// so that the keys of earlier scenarios are unchanged.
    #[serde(serialize_with = "as_ecn")]
    pub ecn: EcnFeedback,
    #[serde(serialize_with = "as_basis_name")]
    pub ssthresh_basis: SsthreshBasis,
    /// Absent from the run key at its default, so the keys of scenarios
    /// written before it existed are unchanged.
    #[serde(serialize_with = "as_growth_name", skip_serializing_if = "is_default_growth")]
    pub cwnd_growth: CwndGrowth,
    #[serde(serialize_with = "as_secs")]
    pub send_overhead: Time,
}

fn as_basis_name<S: Serializer>(b: &SsthreshBasis, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(b.name())
}

fn as_ecn<S: Serializer>(e: &EcnFeedback, s: S) -> Result<S::Ok, S::Error> {
    match e {
        EcnFeedback::Off => s.serialize_bool(false),
        EcnFeedback::Classic => s.serialize_bool(true),
        EcnFeedback::Accurate => s.serialize_str(e.name()),
    }
}

fn as_growth_name<S: Serializer>(g: &CwndGrowth, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(g.name())
}

fn is_default_growth(g: &CwndGrowth) -> bool {
    *g == CwndGrowth::default()
}

/// The algorithms of a TCP flow group, each with its resolved parameters.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TcpAlgorithms {
    pub cc: String,
    pub cc_params: Params,
    pub recovery: String,
    pub recovery_params: Params,
    pub pacing: String,
    pub pacing_params: Params,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub send_buffer: Option<SendBufferSpec>,
}

/// A TCP flow's send buffer (`send_buffer = { policy = "...", ... }`): a
/// policy and its resolved parameters.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SendBufferSpec {
    pub policy: String,
    pub params: Params,
    /// The flow's sending host caps send-buffer memory: its connections start
    /// with no buffer until the host counts them in.
    #[serde(skip)]
    pub capped: bool,
}

/// What configures a UDT flow group: its congestion control and the socket
/// options a UDT 4 handshake would agree.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UdtOptions {
    pub cc: String,
    pub cc_params: Params,
    /// Bytes of a full packet on the wire (UDT_MSS).
    pub mss: u32,
    /// Receive buffer, packets (UDT_RCVBUF).
    pub receive_buffer: u32,
    /// Send buffer, packets (UDT_SNDBUF): what is not yet acknowledged by a full ACK.
    pub send_buffer: u32,
    /// Flow-control limit, packets (UDT_FC): the flow window is the smaller of it and the buffer.
    pub max_flow_window: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FlowGroup {
    pub name: String,
    pub count: u32,
    pub direction: Direction,
    pub protocol: String,
    /// Congestion control, loss recovery and pacing (TCP only).
    #[serde(flatten)]
    pub algorithms: Option<TcpAlgorithms>,
    /// Base RTT of each instance's path (dumbbell): one value or a range drawn per instance.
    #[serde(serialize_with = "as_opt_rtt")]
    pub rtt: Option<Rtt>,
    /// End nodes (graph).
    pub from: Option<String>,
    pub to: Option<String>,
    /// Where its instances join the compiled graph (from `direction` or `from` and `to`).
    #[serde(skip)]
    pub ends: FlowEnds,
    pub start: Start,
    /// When the application stops (UDP sources).
    #[serde(serialize_with = "as_opt_secs")]
    pub stop: Option<Time>,
    pub app: AppSpec,
    pub tcp: Option<TcpOptions>,
    pub udt: Option<UdtOptions>,
}

impl FlowGroup {
    pub fn protocol(&self) -> Protocol {
        protocols::find(&self.protocol).map_or(Protocol::Tcp, |d| d.build)
    }

    /// The congestion control's name, whichever protocol's it is.
    pub fn cc(&self) -> Option<&str> {
        self.algorithms.as_ref().map(|a| a.cc.as_str()).or(self.udt.as_ref().map(|u| u.cc.as_str()))
    }

    /// The UDT configuration of one connection starting at `start` with this application.
    pub fn udt_config(&self, start: Time, app: App) -> Option<UdtConfig> {
        let u = self.udt.as_ref()?;
        Some(UdtConfig {
            mss: u.mss,
            flow_window: u.receive_buffer.min(u.max_flow_window),
            receive_buffer: u.receive_buffer,
            send_buffer: u.send_buffer,
            start,
            app,
            ..UdtConfig::default()
        })
    }

    /// The TCP configuration of one connection starting at `start` with this
    /// application; `overhead_seed` seeds its send-overhead draws.
    pub fn tcp_config(&self, start: Time, app: App, overhead_seed: u64) -> Option<TcpConfig> {
        let t = self.tcp.as_ref()?;
        // The recovery's descriptor says whether it reads SACK blocks; the receiver sends them only then.
        let sack = self
            .algorithms
            .as_ref()
            .and_then(|a| registry::loss_recovery(&a.recovery))
            .is_some_and(|d| d.build.uses_sack);
        // An L4S congestion control identifies its packets with ECT(1).
        let l4s = self
            .algorithms
            .as_ref()
            .and_then(|a| registry::congestion_control(&a.cc))
            .is_some_and(|d| d.build.ecn == EcnUse::L4s);
        Some(TcpConfig {
            mss: t.mss,
            header_bytes: t.header,
            initial_window: t.initial_window,
            initial_ssthresh: t.initial_ssthresh.unwrap_or(TcpConfig::default().initial_ssthresh),
            max_window: t.max_window,
            min_rto: t.min_rto,
            initial_rto: t.initial_rto,
            max_rto: t.max_rto,
            clock_granularity: t.clock_granularity,
            dupthresh: t.dupthresh,
            limited_transmit: t.limited_transmit,
            timestamps: t.timestamps,
            sack,
            delayed_ack: t.delayed_ack,
            delack_timeout: t.delack_timeout,
            ecn: t.ecn,
            ect: if l4s { Ect::Ect1 } else { Ect::Ect0 },
            ssthresh_basis: t.ssthresh_basis,
            cwnd_growth: t.cwnd_growth,
            send_overhead: t.send_overhead,
            send_overhead_seed: overhead_seed,
            app,
            start,
        })
    }

    /// Bytes of a full data packet on the wire.
    pub fn wire_segment_bytes(&self) -> u64 {
        match (&self.tcp, &self.udt, self.app) {
            (Some(t), _, _) => t.mss as u64 + t.header as u64,
            (None, Some(u), _) => u.mss as u64,
            (None, None, AppSpec::Cbr { size, .. }) => size,
            (None, None, _) => 0,
        }
    }
}

pub(crate) fn parse_run(mut s: Section) -> Result<RunConfig, ScenarioError> {
    let duration = s.positive_duration("duration")?.ok_or_else(|| s.error("duration", "is required"))?;
    if duration > units::MAX_RUN_DURATION {
        return Err(s.error(
            "duration",
            format!(
                "{} is above 8760h (365 days), the longest run a scenario may ask for",
                fmt_time(duration)
            ),
        ));
    }
    let warmup = s.duration("warmup")?.unwrap_or(0);
    if warmup >= duration {
        return Err(s.error(
            "warmup",
            format!("must be shorter than run.duration ({} >= {})", fmt_time(warmup), fmt_time(duration)),
        ));
    }
    let seed = s.integer("seed", 0, i64::MAX)?.unwrap_or(1) as u64;
    let sample = s.positive_duration("sample")?;
    s.finish()?;
    Ok(RunConfig { duration, warmup, seed, sample })
}

/// `queue = NAME` and `queue_params = { ... }` of a link.
fn parse_queue(s: &mut Section) -> Result<(String, Params), ScenarioError> {
    let name = s.string("queue")?.unwrap_or("droptail");
    let Some(d) = queue::find(name) else {
        let names = queue::QUEUE_DISCIPLINES.iter().map(|d| d.name);
        return Err(s.error("queue", unknown(Role::QueueDiscipline, name, names)));
    };
    let info = d.info();
    let params = match s.table("queue_params")? {
        Some(t) => resolve_params(&info, &t, &[])?,
        None => resolve_params(&info, &Section::empty(s.key_path("queue_params")), &[])?,
    };
    Ok((name.to_string(), params))
}

/// `loss = P` (Bernoulli) or `loss = { model = "gilbert_elliott", good_to_bad = .., bad_to_good = .., loss_good = 0, loss_bad = 1 }`.
fn parse_loss(s: &mut Section, key: &'static str) -> Result<LossModel, ScenarioError> {
    if !matches!(s.get(key), Some(toml::Value::Table(_))) {
        return Ok(LossModel::Bernoulli { p: s.number(key, 0.0, 1.0)?.unwrap_or(0.0) });
    }
    let Some(mut t) = s.table(key)? else { return Ok(LossModel::NONE) };
    let model = match t.required_string("model")? {
        "gilbert_elliott" => {
            // A chain that can leave a state only with probability in (0, 1]:
            // at 0 a state would never be left (or never entered, the same as
            // plain loss with `loss_good`); `loss_bad` may be 1 (Gilbert's model).
            let mut transition = |k: &'static str| -> Result<f64, ScenarioError> {
                let p = t.number_closed(k, 0.0, 1.0)?.ok_or_else(|| t.error(k, "is required"))?;
                if p == 0.0 {
                    return Err(t.error(k, format!("{p} is out of range (0, 1]")));
                }
                Ok(p)
            };
            let good_to_bad = transition("good_to_bad")?;
            let bad_to_good = transition("bad_to_good")?;
            let loss_good = t.number("loss_good", 0.0, 1.0)?.unwrap_or(0.0);
            let loss_bad = t.number_closed("loss_bad", 0.0, 1.0)?.unwrap_or(1.0);
            LossModel::GilbertElliott { good_to_bad, bad_to_good, loss_good, loss_bad }
        }
        other => {
            let message = format!("unknown loss model \"{other}\": a table takes model = \"gilbert_elliott\" (a number is Bernoulli loss)");
            return Err(t.error("model", message));
        }
    };
    t.finish()?;
    Ok(model)
}

fn parse_link_params(
    s: &mut Section,
    default_buffer: Option<BufferSpec>,
    base: Option<&Path>,
) -> Result<LinkParams, ScenarioError> {
    let rate = capacity::rate(s, "rate")?;
    let trace = capacity::trace(s, "trace", base)?;
    let reverse_rate = capacity::rate(s, "reverse_rate")?;
    let reverse_trace = capacity::trace(s, "reverse_trace", base)?;
    if trace.is_some() && reverse_trace.is_some() && rate.is_some() {
        return Err(s.error("rate", "both directions replay traces, so the link has no rate: remove rate"));
    }
    if reverse_rate.is_some() && reverse_trace.is_some() {
        return Err(
            s.error("reverse_rate", "the reverse direction replays reverse_trace: give one or the other")
        );
    }
    let capacity = match (trace, &rate) {
        (Some(trace), _) => trace,
        (None, Some(rate)) => rate.clone(),
        (None, None) => return Err(s.error("rate", "is required")),
    };
    let reverse_capacity = match (reverse_trace, reverse_rate, rate) {
        (Some(c), _, _) | (None, Some(c), _) | (None, None, Some(c)) => c,
        (None, None, None) => {
            return Err(s.error("rate", "is required (for the reverse direction, which has no reverse_trace)"))
        }
    };
    let (delay, delay_schedule) =
        capacity::delay(s, "delay")?.ok_or_else(|| s.error("delay", "is required"))?;
    let buffer = match (s.buffer("buffer")?, default_buffer) {
        (Some(b), _) | (None, Some(b)) => b,
        (None, None) => return Err(s.error("buffer", "is required")),
    };
    check_buffer_nonzero(s, buffer)?;
    let buffer_rate = s.rate("buffer_rate")?;
    let varies = !capacity.is_constant() || !reverse_capacity.is_constant();
    let reverse_capacity = (reverse_capacity != capacity).then_some(reverse_capacity);
    if buffer_rate.is_some() && !varies {
        return Err(s.error(
            "buffer_rate",
            "only a link whose rate varies (a rate schedule or a trace) takes buffer_rate: a constant link's BDP uses its rate",
        ));
    }
    if varies && buffer_rate.is_none() && matches!(buffer, BufferSpec::Bdp(_)) {
        let which = if default_buffer.is_some() && !s.has("buffer") { " (the default, 1bdp)" } else { "" };
        return Err(s.error(
            "buffer",
            format!(
                "a buffer sized in BDPs{which} on a link whose rate varies needs buffer_rate, the rate the BDP is computed from; or give the buffer in packets or bytes"
            ),
        ));
    }
    let (queue, queue_params) = parse_queue(s)?;
    Ok(LinkParams {
        rate_bps: buffer_rate.unwrap_or_else(|| capacity.nominal_bps()),
        delay,
        buffer,
        queue,
        queue_params,
        loss: parse_loss(s, "loss")?,
        reverse_loss: parse_loss(s, "reverse_loss")?,
        capacity,
        reverse_capacity,
        delay_schedule,
        buffer_rate,
    })
}

fn check_buffer_nonzero(s: &Section, buffer: BufferSpec) -> Result<(), ScenarioError> {
    let empty = match buffer {
        BufferSpec::Packets(n) => n == 0,
        BufferSpec::Bytes(b) => b == 0,
        BufferSpec::Bdp(x) => x <= 0.0,
        BufferSpec::Unlimited => false,
    };
    if empty {
        return Err(s.error("buffer", "is under one packet"));
    }
    Ok(())
}

pub(crate) fn parse_topology(mut s: Section, base: Option<&Path>) -> Result<Topology, ScenarioError> {
    let kind = s.required_string("kind")?;
    let topology = match kind {
        "dumbbell" => {
            let mut bottleneck =
                s.table("bottleneck")?.ok_or_else(|| s.error("bottleneck", "is required"))?;
            let params = parse_link_params(&mut bottleneck, Some(BufferSpec::Bdp(1.0)), base)?;
            bottleneck.finish()?;
            let (access_rate_bps, access_buffer) = match s.table("access")? {
                Some(mut a) => {
                    let rate = a.rate("rate")?.unwrap_or(params.rate_bps.saturating_mul(10));
                    let buffer = a.buffer("buffer")?.unwrap_or(BufferSpec::Unlimited);
                    check_buffer_nonzero(&a, buffer)?;
                    a.finish()?;
                    (rate, buffer)
                }
                None => (params.rate_bps.saturating_mul(10), BufferSpec::Unlimited),
            };
            Topology::Dumbbell(Dumbbell { access_rate_bps, access_buffer, bottleneck: params })
        }
        "graph" => Topology::Graph(parse_graph(&mut s, base)?),
        other => {
            return Err(s.error(
                "kind",
                format!(
                    "unknown topology kind \"{other}\"{} (one of dumbbell, graph)",
                    suggestion(other, ["dumbbell", "graph"])
                ),
            ))
        }
    };
    s.finish()?;
    Ok(topology)
}

fn parse_graph(s: &mut Section, base: Option<&Path>) -> Result<Graph, ScenarioError> {
    let nodes = match s.get("nodes") {
        Some(toml::Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| match v {
                toml::Value::String(n) if !n.is_empty() => Ok(n.clone()),
                _ => Err(ScenarioError::at(format!("{}[{i}]", s.key_path("nodes")), "expected a node name")),
            })
            .collect::<Result<Vec<_>, _>>()?,
        Some(_) => return Err(s.error("nodes", "expected an array of node names")),
        None => return Err(s.error("nodes", "is required")),
    };
    let mut seen = std::collections::HashSet::with_capacity(nodes.len());
    for (i, n) in nodes.iter().enumerate() {
        if !seen.insert(n.as_str()) {
            return Err(ScenarioError::at(
                format!("{}[{i}]", s.key_path("nodes")),
                format!("\"{n}\" is listed twice"),
            ));
        }
    }
    let mut links = Vec::new();
    for (i, mut l) in s.tables("links")?.into_iter().enumerate() {
        let endpoint = |l: &mut Section, key: &'static str| -> Result<String, ScenarioError> {
            let name = l.required_string(key)?;
            if !seen.contains(name) {
                let hint = suggestion(name, nodes.iter().map(String::as_str));
                return Err(l.error(key, format!("unknown node \"{name}\"{hint}")));
            }
            Ok(name.to_string())
        };
        let from = endpoint(&mut l, "from")?;
        let to = endpoint(&mut l, "to")?;
        if from == to {
            return Err(l.error("to", "a link must join two different nodes"));
        }
        let params = parse_link_params(&mut l, None, base)?;
        l.finish()?;
        let key = format!("{}[{i}]", s.key_path("links"));
        links.push(GraphLink { from, to, params, role: LinkRole::Link, key });
    }
    let mut hosts: Vec<HostSpec> = Vec::new();
    for mut h in s.tables("hosts")? {
        let node = h.required_string("node")?;
        if !seen.contains(node) {
            let hint = suggestion(node, nodes.iter().map(String::as_str));
            return Err(h.error("node", format!("unknown node \"{node}\"{hint}")));
        }
        if hosts.iter().any(|o| o.node == node) {
            return Err(h.error("node", format!("\"{node}\" is declared twice")));
        }
        let memory = h.size("memory")?.ok_or_else(|| h.error("memory", "is required"))?;
        if memory == 0 {
            return Err(h.error("memory", "must be greater than zero"));
        }
        let share_every = h.positive_duration("share_every")?.unwrap_or(DEFAULT_SHARE_EVERY);
        h.finish()?;
        hosts.push(HostSpec { node: node.to_string(), memory, share_every });
    }
    if links.is_empty() {
        return Err(s.error("links", "at least one [[topology.links]] entry is required"));
    }
    Ok(Graph { nodes, links, hosts, access: None })
}

/// `start = "1s"` or `start = "0s..1s"`: one duration, or exactly two joined by
/// exactly two dots ("0s...1s" is refused, not read as 0 to 0.1 s).
fn parse_start(s: &mut Section) -> Result<Start, ScenarioError> {
    let Some(text) = s.string("start")? else {
        return Ok(Start::At(0));
    };
    parse_range(s, "start", text, "a start time like \"1s\" or a range like \"0s..1s\"")
}

/// `rtt = "40ms"` or `rtt = "20ms..200ms"` (dumbbell), read like `start`; a
/// value that is not a range keeps the messages of a plain positive duration.
fn parse_rtt(s: &mut Section) -> Result<Option<Rtt>, ScenarioError> {
    let rtt = match s.get("rtt") {
        Some(toml::Value::String(text)) if text.contains("..") => {
            let text = text.clone();
            let rtt = parse_range(s, "rtt", &text, "an rtt like \"40ms\" or a range like \"20ms..200ms\"")?;
            if rtt.earliest() == 0 {
                return Err(s.error("rtt", "must be greater than zero"));
            }
            rtt
        }
        _ => match s.positive_duration("rtt")? {
            Some(rtt) => Rtt::At(rtt),
            None => return Ok(None),
        },
    };
    if rtt.latest() > units::MAX_RTT {
        return Err(s.error(
            "rtt",
            format!(
                "{} is above {}, the longest round trip a flow may have (twice the longest one-way delay of a link)",
                fmt_time(rtt.latest()),
                fmt_time(units::MAX_RTT)
            ),
        ));
    }
    Ok(Some(rtt))
}

/// One duration, or two joined by exactly two dots, drawn uniformly per instance.
fn parse_range(s: &Section, key: &str, text: &str, hint: &str) -> Result<Start, ScenarioError> {
    let bad = |m: String| s.error(key, format!("{m}; write {hint}"));
    let parts: Vec<&str> = text.split("..").collect();
    match parts.as_slice() {
        [one] => Ok(Start::At(cclab_wire::units::duration(one).map_err(bad)?)),
        [a, b] if !a.trim_end().ends_with('.') && !b.trim_start().starts_with('.') => {
            let lo = cclab_wire::units::duration(a).map_err(|m| bad(format!("from {m}")))?;
            let hi = cclab_wire::units::duration(b).map_err(|m| bad(format!("to {m}")))?;
            if hi < lo {
                return Err(s.error(key, format!("range \"{text}\" ends before it starts")));
            }
            Ok(Start::Uniform(lo, hi))
        }
        _ => Err(bad(format!("\"{text}\" is not a range of two durations joined by \"..\""))),
    }
}

/// "unknown congestion control "x"; did you mean "y"? (one of a, b, c)".
fn unknown<'a>(role: Role, name: &str, names: impl Iterator<Item = &'a str> + Clone) -> String {
    let list: Vec<&str> = names.clone().collect();
    let what = match role {
        Role::CongestionControl | Role::LossRecovery => format!("{} algorithm", role.title()),
        _ => role.title().to_string(),
    };
    format!("unknown {what} \"{name}\"{} (one of {})", suggestion(name, names), list.join(", "))
}

/// Checks the parameters given in `table` (except the keys in `skip`) against
/// the descriptor, converts them, and fills in every default.
fn resolve_params(info: &Info, table: &Section, skip: &[&str]) -> Result<Params, ScenarioError> {
    let mut params = Params::new();
    for (name, value) in table.entries().filter(|(k, _)| !skip.contains(&k.as_str())) {
        let Some(param) = info.parameter(name) else {
            let known = info.parameters.iter().map(|p| p.name);
            let list: Vec<&str> = known.clone().collect();
            let has = if list.is_empty() { "none".to_string() } else { list.join(", ") };
            return Err(table.error(
                name,
                format!(
                    "{} has no parameter \"{name}\"{} (it has: {has})",
                    info.name,
                    suggestion(name, known)
                ),
            ));
        };
        let checked = match (param.ty, value) {
            (ParamType::Bool, toml::Value::Boolean(b)) => Ok(ParamValue::Bool(*b)),
            (ParamType::Number | ParamType::Integer, toml::Value::Integer(i)) => {
                Ok(ParamValue::Number(*i as f64))
            }
            (ParamType::Number | ParamType::Integer, toml::Value::Float(x)) => Ok(ParamValue::Number(*x)),
            // A count needs no unit: `pages = 10` as well as `pages = "exponential(mean=10)"`.
            (ParamType::CountDistribution, toml::Value::Integer(i)) => param.parse_text(&i.to_string()),
            (ParamType::CountDistribution, toml::Value::Float(x)) => param.parse_text(&x.to_string()),
            (ParamType::Choice(words), toml::Value::String(w)) => {
                param.parse_text(w).map_err(|m| format!("{m}{}", suggestion(w, words.iter().copied())))
            }
            (ParamType::Bool | ParamType::Number | ParamType::Integer | ParamType::Choice(_), _) => {
                Err(format!("expected {}", param.ty.describe()))
            }
            (_, toml::Value::String(text)) => param.parse_text(text),
            (_, toml::Value::Integer(_) | toml::Value::Float(_)) => {
                Err(format!("{value} has no unit; write {}", param.ty.describe()))
            }
            (_, _) => Err(format!("expected {}", param.ty.describe())),
        };
        let checked = checked.and_then(|v| param.check_range(&v).map(|()| v));
        params.insert(name.clone(), checked.map_err(|m| table.error(name, m))?);
    }
    for p in info.parameters {
        if params.get(p.name).is_some() {
            continue;
        }
        match p.default_value() {
            Some(Ok(v)) => params.insert(p.name, v),
            Some(Err(m)) => return Err(table.error(p.name, format!("default of {}: {m}", info.name))),
            None if p.default == cclab_wire::ParamDefault::Required => {
                return Err(table.error(p.name, format!("is required for {} ({})", info.name, p.meaning)))
            }
            None => {}
        }
    }
    Ok(params)
}

/// The algorithm named at `key` (or the default), and its parameters from `params_key`.
fn algorithm<B>(
    s: &mut Section,
    key: &'static str,
    params_key: &'static str,
    list: &'static [cclab_wire::Descriptor<B>],
    role: Role,
    default: &str,
) -> Result<(&'static cclab_wire::Descriptor<B>, Params), ScenarioError> {
    let name = s.string(key)?.unwrap_or(default);
    let Some(d) = list.iter().find(|d| d.name == name) else {
        return Err(s.error(key, unknown(role, name, list.iter().map(|d| d.name))));
    };
    let params = match s.table(params_key)? {
        Some(t) => resolve_params(&d.info(), &t, &[])?,
        None => resolve_params(&d.info(), &Section::empty(s.key_path(params_key)), &[])?,
    };
    Ok((d, params))
}

/// `app = "bulk"` or `app = { kind = "...", parameters... }`. A `load` given
/// without `load_of` is a fraction of `bottleneck_bps` (a dumbbell's), if any.
fn parse_app(s: &mut Section, protocol: &str, bottleneck_bps: Option<u64>) -> Result<AppSpec, ScenarioError> {
    let names = || sources::SOURCES.iter().filter(|d| d.build.runs_over(protocol)).map(|d| d.name);
    let example = if protocol == "udp" {
        "{ kind = \"cbr\", rate = \"10Mbps\" }"
    } else {
        "{ kind = \"transfer\", size = \"10MB\" }"
    };
    let other_protocol = |d: &sources::SourceDescriptor, kind: &str| {
        let list = names().collect::<Vec<_>>().join(", ");
        let over = d.build.protocols.join(" or ");
        format!("{kind} runs over protocol {over}, not {protocol} (use one of {list})")
    };
    let (descriptor, params, at) = match s.get("app") {
        None if sources::bulk::DESCRIPTOR.build.runs_over(protocol) => return Ok(AppSpec::Bulk),
        None => {
            return Err(s.error("app", format!("is required for protocol {protocol}; write app = {example}")))
        }
        Some(toml::Value::String(k)) => {
            let Some(d) = sources::find(k) else {
                return Err(s.error("app", unknown(Role::TrafficSource, k, names())));
            };
            if !d.build.runs_over(protocol) {
                return Err(s.error("app", other_protocol(d, k)));
            }
            let app = Section::empty(s.key_path("app"));
            let params = resolve_params(&d.info(), &app, &[]).map_err(|e| {
                ScenarioError::at(
                    e.path.clone(),
                    format!("{}; write app = {{ kind = \"{k}\", ... }}", e.message),
                )
            })?;
            (d, params, app)
        }
        Some(toml::Value::Table(_)) => {
            let mut app = s.table("app")?.ok_or_else(|| s.error("app", "expected a table"))?;
            let kind = app.required_string("kind")?;
            let Some(d) = sources::find(kind) else {
                return Err(app.error("kind", unknown(Role::TrafficSource, kind, names())));
            };
            if !d.build.runs_over(protocol) {
                return Err(app.error("kind", other_protocol(d, kind)));
            }
            let params = resolve_params(&d.info(), &app, &["kind"])?;
            (d, params, app)
        }
        Some(_) => return Err(s.error("app", format!("expected \"bulk\" or a table like {example}"))),
    };
    let mut params = params;
    if let Some(bps) = bottleneck_bps {
        let takes_load = descriptor.parameters.iter().any(|p| p.name == "load_of");
        if takes_load && params.get("load").is_some() && params.get("load_of").is_none() {
            params.insert("load_of", ParamValue::Rate(bps));
        }
    }
    (descriptor.build.build)(&params).map_err(|e| at.error(&e.name, e.problem))
}

/// `ecn = true | false | "classic" | "accecn"`: how the flow reports
/// congestion marks; absent, what its congestion control needs.
fn parse_ecn(s: &mut Section, cc: &CcDescriptor) -> Result<EcnFeedback, ScenarioError> {
    let ecn = match s.get("ecn") {
        None => None,
        Some(Value::Boolean(on)) => Some(if *on { EcnFeedback::Classic } else { EcnFeedback::Off }),
        Some(Value::String(_)) => {
            named_choice(s, "ecn", "ECN feedback", &EcnFeedback::NAMES, EcnFeedback::from_name)?
        }
        Some(_) => return Err(s.error("ecn", "expected true, false, \"classic\" or \"accecn\"")),
    };
    match (cc.build.ecn, ecn) {
        (EcnUse::Optional, ecn) => Ok(ecn.unwrap_or(EcnFeedback::Off)),
        (EcnUse::Required | EcnUse::L4s, Some(EcnFeedback::Off)) => Err(s.error(
            "ecn",
            format!(
                "cc = \"{}\" responds to the fraction of marked packets, so it needs ECN: write ecn = \"accecn\" (or true for RFC 3168 feedback)",
                cc.name
            ),
        )),
        (EcnUse::L4s, Some(EcnFeedback::Classic)) => Err(s.error(
            "ecn",
            format!(
                "cc = \"{}\" is an L4S congestion control and needs AccECN (RFC 9331 §4.2: it counts every mark): write ecn = \"accecn\"",
                cc.name
            ),
        )),
        (EcnUse::Required | EcnUse::L4s, ecn) => Ok(ecn.unwrap_or(EcnFeedback::Accurate)),
    }
}

fn parse_tcp_options(s: &mut Section, cc: &CcDescriptor) -> Result<TcpOptions, ScenarioError> {
    let mss = s.integer("mss", 1, 65_535)?.unwrap_or(1000) as u32;
    let defaults = TcpConfig::default();
    Ok(TcpOptions {
        mss,
        header: s.integer("header", 0, 1000)?.unwrap_or(40) as u32,
        initial_window: s
            .integer("initial_window", 1, 1_000_000)?
            .map_or_else(|| TcpConfig::rfc3390_initial_window(mss), |w| w as u32),
        initial_ssthresh: s.number("initial_ssthresh", 2.0, 1e12)?,
        max_window: s.integer("max_window", 1, 1 << 40)?.map(|w| w as u64),
        delayed_ack: s.bool("delayed_ack")?.unwrap_or(false),
        delack_timeout: s.positive_duration("delack_timeout")?.unwrap_or(defaults.delack_timeout),
        min_rto: s.duration("min_rto")?.unwrap_or(defaults.min_rto),
        initial_rto: s.positive_duration("initial_rto")?.unwrap_or(defaults.initial_rto),
        max_rto: s.positive_duration("max_rto")?.unwrap_or(defaults.max_rto),
        clock_granularity: s.duration("clock_granularity")?.unwrap_or(millis(1)),
        dupthresh: s.integer("dupthresh", 1, 1000)?.unwrap_or(3) as u32,
        limited_transmit: s.bool("limited_transmit")?.unwrap_or(false),
        timestamps: s.bool("timestamps")?.unwrap_or(true),
        ecn: parse_ecn(s, cc)?,
        ssthresh_basis: named_choice(
            s,
            "ssthresh_basis",
            "basis",
            &SsthreshBasis::NAMES,
            SsthreshBasis::from_name,
        )?
        .unwrap_or_default(),
        cwnd_growth: named_choice(s, "cwnd_growth", "rule", &CwndGrowth::NAMES, CwndGrowth::from_name)?
            .unwrap_or_default(),
        send_overhead: s.duration("send_overhead")?.unwrap_or(0),
    })
}

/// An optional key whose value is one of a fixed set of names; an unknown
/// name is refused with the closest one and the whole set.
fn named_choice<T>(
    s: &mut Section,
    key: &'static str,
    what: &str,
    names: &[&str],
    from_name: fn(&str) -> Option<T>,
) -> Result<Option<T>, ScenarioError> {
    let Some(name) = s.string(key)? else { return Ok(None) };
    from_name(name).map(Some).ok_or_else(|| {
        s.error(
            key,
            format!(
                "unknown {what} \"{name}\"{} (one of {})",
                suggestion(name, names.iter().copied()),
                names.join(", ")
            ),
        )
    })
}

/// The coarsest clock granularity accepted: 4.4BSD's slow timer, the coarsest a
/// TCP has used, ticked every 500 ms.
pub const MAX_CLOCK_GRANULARITY: Time = 1_000_000_000;
/// The smallest RTO floor, max(min_rto, clock_granularity): microseconds are the
/// finest clock a TCP stack keeps (Linux's TCP clock).
pub const MIN_RTO_FLOOR: Time = 1_000;
/// The smallest initial_rto and max_rto.
pub const MIN_RTO_SETTING: Time = 1_000_000;

/// The retransmission timer must stay meaningful: RTO = max(min_rto, SRTT +
/// max(G, 4 RTTVAR)) clamped to max_rto (RFC 6298 §2), so it must not be able
/// to collapse to SRTT (or below a millisecond) and max_rto must cap nothing
/// the other settings ask for.
fn check_timers(s: &Section, t: &TcpOptions) -> Result<(), ScenarioError> {
    let (min, g, initial, max) = (t.min_rto, t.clock_granularity, t.initial_rto, t.max_rto);
    if g > MAX_CLOCK_GRANULARITY {
        return Err(s.error(
            "clock_granularity",
            format!(
                "{} is above 1s: no TCP clock ticks more slowly (4.4BSD's 500ms slow timer was the coarsest)",
                fmt_time(g)
            ),
        ));
    }
    if min.max(g) < MIN_RTO_FLOOR {
        return Err(s.error(
            "min_rto",
            format!(
                "is {}, and with clock_granularity {} the RTO falls to SRTT on a steady path (RTO = max(min_rto, \
                 SRTT + max(G, 4 RTTVAR)) and RTTVAR decays), so any queueing fires a spurious timeout; give \
                 min_rto or clock_granularity at least 1us (ns-2's min_rto = 0 came with a 100ms clock)",
                fmt_time(min),
                fmt_time(g)
            ),
        ));
    }
    for (key, value, what) in [
        (
            "initial_rto",
            initial,
            "the first timeout would fire before any path's first ACK (RFC 6298 §2.1 uses 1s)",
        ),
        ("max_rto", max, "every backed-off timeout would be cut to it (RFC 6298 §2.5 asks for at least 60s)"),
    ] {
        if value < MIN_RTO_SETTING {
            return Err(s.error(key, format!("{} is under 1ms: {what}", fmt_time(value))));
        }
    }
    for (other, value) in [("initial_rto", initial), ("min_rto", min)] {
        if max < value {
            return Err(s.error(
                "max_rto",
                format!(
                    "{} is below {other} ({}): the cap would override it",
                    fmt_time(max),
                    fmt_time(value)
                ),
            ));
        }
    }
    Ok(())
}

/// Keys that configure TCP, refused on a flow of another protocol.
const TCP_KEYS: &[&str] = &[
    "cc",
    "cc_params",
    "recovery",
    "recovery_params",
    "pacing",
    "pacing_params",
    "mss",
    "header",
    "initial_window",
    "initial_ssthresh",
    "max_window",
    "delayed_ack",
    "delack_timeout",
    "min_rto",
    "initial_rto",
    "max_rto",
    "clock_granularity",
    "dupthresh",
    "limited_transmit",
    "timestamps",
    "ecn",
    "ssthresh_basis",
    "cwnd_growth",
    "send_overhead",
    "send_buffer",
];

/// A congestion control that computes its own sending rate overrides the
/// flow's pacing, so with it pacing must be "none" (a pure function so the
/// rule can be tested before such an algorithm is registered).
pub fn check_pacing(cc: &CcDescriptor, pacing: &PacingDescriptor) -> Result<(), String> {
    if cc.build.paces_itself && pacing.name != "none" {
        return Err(format!(
            "{} paces at its own rate, so pacing must be \"none\" (not \"{}\")",
            cc.name, pacing.name
        ));
    }
    Ok(())
}

fn parse_tcp(s: &mut Section) -> Result<(TcpAlgorithms, TcpOptions), ScenarioError> {
    let (cc, cc_params) = algorithm(
        s,
        "cc",
        "cc_params",
        registry::CONGESTION_CONTROLS,
        Role::CongestionControl,
        registry::DEFAULT_CONGESTION_CONTROL,
    )?;
    let (recovery, recovery_params) = algorithm(
        s,
        "recovery",
        "recovery_params",
        registry::LOSS_RECOVERIES,
        Role::LossRecovery,
        registry::DEFAULT_LOSS_RECOVERY,
    )?;
    let (pacing, pacing_params) =
        algorithm(s, "pacing", "pacing_params", registry::PACINGS, Role::Pacing, registry::DEFAULT_PACING)?;
    check_pacing(cc, pacing).map_err(|m| s.error("pacing", m))?;
    // Constraints between parameters (BI-TCP's smin <= smax, HighSpeed's
    // low_window < high_window) are the builder's to check; building once
    // here reports them at their key.
    let at = |params_key: &str, e: ParamError| {
        ScenarioError::at(format!("{}.{}", s.key_path(params_key), e.name), e.problem)
    };
    (cc.build.build)(&cc_params).map_err(|e| at("cc_params", e))?;
    (recovery.build.build)(&recovery_params).map_err(|e| at("recovery_params", e))?;
    (pacing.build)(&pacing_params).map_err(|e| at("pacing_params", e))?;
    let options = parse_tcp_options(s, cc)?;
    check_timers(s, &options)?;
    if options.delack_timeout >= millis(500) {
        return Err(s.error(
            "delack_timeout",
            "must be shorter than 500ms (RFC 1122 §4.2.3.2: an ACK MUST NOT be delayed 0.5 s or more)",
        ));
    }
    let algorithms = TcpAlgorithms {
        cc: cc.name.to_string(),
        cc_params,
        recovery: recovery.name.to_string(),
        recovery_params,
        pacing: pacing.name.to_string(),
        pacing_params,
        send_buffer: parse_send_buffer(s)?,
    };
    Ok((algorithms, options))
}

/// `send_buffer = { policy = "fixed", size = "64KB" }`: the policy that sizes
/// a TCP flow's send buffer, with its parameters beside the name.
fn parse_send_buffer(s: &mut Section) -> Result<Option<SendBufferSpec>, ScenarioError> {
    const EXAMPLE: &str = "{ policy = \"fixed\", size = \"64KB\" }";
    let path = s.key_path("send_buffer");
    let table = s
        .table("send_buffer")
        .map_err(|_| ScenarioError::at(path, format!("expected a table like {EXAMPLE}")))?;
    let Some(mut table) = table else { return Ok(None) };
    let name = table.required_string("policy")?;
    let list = registry::SEND_BUFFER_POLICIES;
    let Some(d) = list.iter().find(|d| d.name == name) else {
        return Err(table.error("policy", unknown(Role::SendBuffer, name, list.iter().map(|d| d.name))));
    };
    let params = resolve_params(&d.info(), &table, &["policy"])?;
    (d.build)(&params).map_err(|e| table.error(&e.name, e.problem))?;
    Ok(Some(SendBufferSpec { policy: d.name.to_string(), params, capped: false }))
}

/// Every flow sending from a host that caps send-buffer memory has a send-buffer
/// policy, and all of them share the cap the same way; marks them capped.
pub(crate) fn check_capped_hosts(graph: &Graph, flows: &mut [FlowGroup]) -> Result<(), ScenarioError> {
    for (h, host) in graph.hosts.iter().enumerate() {
        let mut first: Option<(usize, Sharing)> = None;
        for (i, group) in flows.iter_mut().enumerate() {
            if group.from.as_deref() != Some(host.node.as_str()) {
                continue;
            }
            let why = format!(
                "flow sends from \"{}\", whose send-buffer memory is capped (topology.hosts[{h}])",
                host.node
            );
            if group.protocol != "tcp" {
                return Err(ScenarioError::at(
                    format!("flows[{i}].protocol"),
                    format!("must be tcp: the {why}"),
                ));
            }
            let spec = group.algorithms.as_mut().and_then(|a| a.send_buffer.as_mut());
            let Some(spec) = spec else {
                return Err(ScenarioError::at(
                    format!("flows[{i}].send_buffer"),
                    format!("is required: the {why}; write send_buffer = {{ policy = \"rtba\" }}"),
                ));
            };
            spec.capped = true;
            let sharing = send_buffer_sharing(spec)
                .map_err(|m| ScenarioError::at(format!("flows[{i}].send_buffer"), m))?;
            match first {
                None => first = Some((i, sharing)),
                Some((j, other)) if other != sharing => {
                    return Err(ScenarioError::at(
                        format!("flows[{i}].send_buffer.policy"),
                        format!(
                            "\"{}\" shares a host's memory {}, but flows[{j}] on the same host shares it {}: one host, one way of sharing",
                            spec.policy,
                            sharing_name(sharing),
                            sharing_name(other)
                        ),
                    ));
                }
                Some(_) => {}
            }
        }
    }
    Ok(())
}

/// How a capped host shares its memory among connections of this policy.
pub fn send_buffer_sharing(spec: &SendBufferSpec) -> Result<Sharing, String> {
    let d = registry::SEND_BUFFER_POLICIES
        .iter()
        .find(|d| d.name == spec.policy)
        .ok_or_else(|| format!("send-buffer policy \"{}\" is not registered", spec.policy))?;
    Ok((d.build)(&spec.params).map_err(|e| e.to_string())?.sharing())
}

fn sharing_name(sharing: Sharing) -> &'static str {
    match sharing {
        Sharing::MaxMin => "max-min fairly",
        Sharing::Proportional => "in proportion to expected rates",
    }
}

/// Keys of a UDT flow; the TCP keys not among them are refused on it.
const UDT_KEYS: &[&str] = &["cc", "cc_params", "mss", "receive_buffer", "send_buffer", "max_flow_window"];

fn parse_udt(s: &mut Section) -> Result<UdtOptions, ScenarioError> {
    let (cc, cc_params) = algorithm(
        s,
        "cc",
        "cc_params",
        registry::UDT_CONGESTION_CONTROLS,
        Role::CongestionControl,
        registry::DEFAULT_UDT_CONGESTION_CONTROL,
    )?;
    (cc.build)(&cc_params)
        .map_err(|e| ScenarioError::at(format!("{}.{}", s.key_path("cc_params"), e.name), e.problem))?;
    // A packet must hold the IP, UDP and UDT headers (44 bytes) and some payload.
    let mss = s.integer("mss", 76, 65_535)?.unwrap_or(1500) as u32;
    let receive_buffer = s.integer("receive_buffer", 32, 1 << 24)?.unwrap_or(8192) as u32;
    let send_buffer = s.integer("send_buffer", 32, 1 << 24)?.unwrap_or(8192) as u32;
    let max_flow_window = s.integer("max_flow_window", 32, 1 << 24)?.unwrap_or(25_600) as u32;
    Ok(UdtOptions { cc: cc.name.to_string(), cc_params, mss, receive_buffer, send_buffer, max_flow_window })
}

pub(crate) fn parse_flow(
    mut s: Section,
    index: usize,
    topology: &Topology,
    graph: &Graph,
    run: &RunConfig,
) -> Result<FlowGroup, ScenarioError> {
    let name = s.string("name")?.map_or_else(|| format!("flow{index}"), str::to_string);
    if name.is_empty() {
        return Err(s.error("name", "must not be empty"));
    }
    let count = s.integer("count", 1, 100_000)?.unwrap_or(1) as u32;
    let protocol = s.string("protocol")?.unwrap_or("tcp");
    if protocols::find(protocol).is_none() {
        let names = protocols::PROTOCOLS.iter().map(|d| d.name);
        return Err(s.error("protocol", unknown(Role::Protocol, protocol, names)));
    }
    let start = parse_start(&mut s)?;
    let stop = parse_stop(&mut s, &start)?;
    let bottleneck_bps = graph.link_of_role(LinkRole::Bottleneck).map(|l| l.params.rate_bps);
    let app = parse_app(&mut s, protocol, bottleneck_bps)?;
    if stop.is_some() && protocol != "udp" {
        return Err(s.error(
            "stop",
            format!(
                "only applies to protocol udp; a {} flow ends with a finite transfer (app = {{ kind = \"transfer\", size = ... }})",
                protocol.to_uppercase()
            ),
        ));
    }
    let (algorithms, tcp, udt) = parse_protocol_options(&mut s, protocol)?;
    if start.earliest() >= run.duration {
        return Err(s.error(
            "start",
            format!(
                "{} is not before the end of the run (run.duration = {})",
                fmt_time(start.earliest()),
                fmt_time(run.duration)
            ),
        ));
    }
    let Placement { direction, rtt, from, to, ends } = match topology {
        Topology::Dumbbell(d) => dumbbell_placement(&mut s, d)?,
        Topology::Graph(g) => graph_placement(&mut s, g)?,
    };
    s.finish()?;
    Ok(FlowGroup {
        name,
        count,
        direction,
        protocol: protocol.to_string(),
        algorithms,
        rtt,
        from,
        to,
        ends,
        start,
        stop,
        app,
        tcp,
        udt,
    })
}

/// `stop`, which must come after the latest start.
fn parse_stop(s: &mut Section, start: &Start) -> Result<Option<Time>, ScenarioError> {
    let stop = s.positive_duration("stop")?;
    if let Some(stop) = stop {
        if stop <= start.latest() {
            return Err(s.error(
                "stop",
                format!("{} is not after the start ({})", fmt_time(stop), fmt_time(start.latest())),
            ));
        }
    }
    Ok(stop)
}

/// A TCP flow's algorithms and options, or a UDT flow's options.
type ProtocolOptions = (Option<TcpAlgorithms>, Option<TcpOptions>, Option<UdtOptions>);

/// The algorithms and options of a TCP or UDT flow; a flow of another
/// protocol (or a UDT flow) refuses the keys it has no use for.
fn parse_protocol_options(s: &mut Section, protocol: &str) -> Result<ProtocolOptions, ScenarioError> {
    Ok(match protocol {
        "tcp" => {
            let (algorithms, options) = parse_tcp(s)?;
            (Some(algorithms), Some(options), None)
        }
        "udt" => {
            if let Some(key) = TCP_KEYS.iter().find(|k| !UDT_KEYS.contains(k) && s.has(k)) {
                return Err(s.error(key, "only applies to protocol tcp, not udt"));
            }
            (None, None, Some(parse_udt(s)?))
        }
        _ => {
            if let Some(key) = TCP_KEYS.iter().chain(UDT_KEYS).find(|k| s.has(k)) {
                return Err(s.error(key, format!("only applies to protocol tcp or udt, not {protocol}")));
            }
            (None, None, None)
        }
    })
}

/// Where a flow group is in the topology, as written (`direction` and `rtt`
/// on a dumbbell, `from` and `to` on a graph) and compiled ([`FlowEnds`]).
struct Placement {
    direction: Direction,
    rtt: Option<Rtt>,
    from: Option<String>,
    to: Option<String>,
    ends: FlowEnds,
}

/// Refuses `key`, which only a `kind` topology takes.
fn only_for(s: &mut Section, key: &'static str, kind: &str) -> Result<(), ScenarioError> {
    if s.has(key) {
        return Err(s.error(key, format!("only applies to a {kind} topology")));
    }
    Ok(())
}

/// A dumbbell flow: its direction and RTT, on hosts of its own.
fn dumbbell_placement(s: &mut Section, d: &Dumbbell) -> Result<Placement, ScenarioError> {
    only_for(s, "from", "graph")?;
    only_for(s, "to", "graph")?;
    let direction = match s.string("direction")? {
        None | Some("forward") => Direction::Forward,
        Some("reverse") => Direction::Reverse,
        Some(other) => {
            return Err(s.error(
                "direction",
                format!(
                    "unknown direction \"{other}\"{} (one of forward, reverse)",
                    suggestion(other, ["forward", "reverse"])
                ),
            ))
        }
    };
    let rtt = parse_rtt(s)?.ok_or_else(|| s.error("rtt", "is required with a dumbbell"))?;
    let floor = 2 * d.bottleneck.delay;
    if rtt.earliest() < floor {
        return Err(s.error(
            "rtt",
            format!(
                "{} is shorter than twice the bottleneck delay ({})",
                fmt_time(rtt.earliest()),
                fmt_time(floor)
            ),
        ));
    }
    let ends = Dumbbell::ends(direction);
    Ok(Placement { direction, rtt: Some(rtt), from: None, to: None, ends })
}

/// A graph flow: the two nodes it joins.
fn graph_placement(s: &mut Section, g: &Graph) -> Result<Placement, ScenarioError> {
    only_for(s, "direction", "dumbbell")?;
    only_for(s, "rtt", "dumbbell")?;
    let node = |s: &mut Section, key: &'static str| -> Result<String, ScenarioError> {
        let n = s.required_string(key)?;
        if !g.nodes.iter().any(|m| m == n) {
            let hint = suggestion(n, g.nodes.iter().map(String::as_str));
            return Err(s.error(key, format!("unknown node \"{n}\"{hint}")));
        }
        Ok(n.to_string())
    };
    let from = node(s, "from")?;
    let to = node(s, "to")?;
    if from == to {
        return Err(s.error("to", "a flow needs two different nodes"));
    }
    let ends = FlowEnds { sender: from.clone(), receiver: to.clone(), own_hosts: false };
    Ok(Placement { direction: Direction::Forward, rtt: None, from: Some(from), to: Some(to), ends })
}
