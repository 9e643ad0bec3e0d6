//! The scenario schema: TOML in, a validated [`Scenario`] out.
//!
//! Every key is read through [`Section`], so unknown keys, wrong types and bad
//! units are reported with their key path. Defaults are applied here and the
//! resolved scenario (defaults included) can be serialised back for records.
//! Checks that need the built topology (BDP buffers, graph reachability) happen
//! in [`crate::build`].

use crate::error::{suggestion, ScenarioError};
use crate::reader::Section;
use crate::units::BufferSpec;
use cclab_core::time::millis;
use cclab_core::Time;
use cclab_transport::registry::{self, ParamKind, ParamValue, Params, Role};
use cclab_transport::tcp::{App, TcpConfig};
use serde::{Serialize, Serializer};

fn as_secs<S: Serializer>(t: &Time, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(cclab_core::time::to_secs_f64(*t))
}

fn as_opt_secs<S: Serializer>(t: &Option<Time>, s: S) -> Result<S::Ok, S::Error> {
    match t {
        Some(t) => s.serialize_some(&cclab_core::time::to_secs_f64(*t)),
        None => s.serialize_none(),
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Scenario {
    pub name: String,
    pub run: RunConfig,
    pub topology: Topology,
    pub flows: Vec<FlowGroup>,
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

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum QueueKind {
    Droptail,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkParams {
    pub rate_bps: u64,
    #[serde(serialize_with = "as_secs")]
    pub delay: Time,
    pub buffer: BufferSpec,
    pub queue: QueueKind,
    /// Bernoulli loss probability in the link's forward (`from` -> `to`) direction.
    pub loss: f64,
    pub reverse_loss: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Dumbbell {
    pub access_rate_bps: u64,
    pub access_buffer: BufferSpec,
    pub bottleneck: LinkParams,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GraphLink {
    pub from: String,
    pub to: String,
    pub params: LinkParams,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Graph {
    pub nodes: Vec<String>,
    pub links: Vec<GraphLink>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Topology {
    Dumbbell(Dumbbell),
    Graph(Graph),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    Forward,
    Reverse,
}

impl Direction {
    pub fn as_str(&self) -> &'static str {
        match self {
            Direction::Forward => "forward",
            Direction::Reverse => "reverse",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Start {
    #[serde(serialize_with = "as_secs")]
    At(Time),
    /// Uniform in `[from, to]`, drawn per flow instance.
    Uniform(#[serde(serialize_with = "as_secs")] Time, #[serde(serialize_with = "as_secs")] Time),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AppSpec {
    Bulk,
    Transfer { bytes: u64 },
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
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FlowGroup {
    pub name: String,
    pub count: u32,
    pub direction: Direction,
    pub protocol: String,
    pub cc: String,
    pub recovery: String,
    /// Parameters of the congestion control and loss recovery (absent: defaults).
    pub cc_params: Params,
    pub recovery_params: Params,
    /// Base RTT of each instance's path (dumbbell).
    #[serde(serialize_with = "as_opt_secs")]
    pub rtt: Option<Time>,
    /// End nodes (graph).
    pub from: Option<String>,
    pub to: Option<String>,
    pub start: Start,
    pub app: AppSpec,
    pub tcp: TcpOptions,
}

impl FlowGroup {
    /// The TCP configuration of one instance starting at `start`.
    pub fn tcp_config(&self, start: Time) -> TcpConfig {
        let t = &self.tcp;
        TcpConfig {
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
            sack: self.recovery == "sack",
            delayed_ack: t.delayed_ack,
            delack_timeout: t.delack_timeout,
            app: match self.app {
                AppSpec::Bulk => App::Bulk,
                AppSpec::Transfer { bytes } => App::Transfer { bytes },
            },
            start,
        }
    }

    /// Bytes of a full data segment on the wire.
    pub fn wire_segment_bytes(&self) -> u64 {
        self.tcp.mss as u64 + self.tcp.header as u64
    }
}

/// Parses and validates a scenario. `default_name` is used when the file sets no `name`.
pub fn parse(text: &str, default_name: &str) -> Result<Scenario, ScenarioError> {
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        ScenarioError::at("", format!("invalid TOML: {}", e.to_string().trim()))
    })?;
    let mut root = Section::new("", &table);
    let name = root.string("name")?.unwrap_or(default_name).to_string();
    let run = match root.table("run")? {
        Some(s) => parse_run(s)?,
        None => return Err(ScenarioError::at("run", "is required (at least `duration`)")),
    };
    let topology = match root.table("topology")? {
        Some(s) => parse_topology(s)?,
        None => return Err(ScenarioError::at("topology", "is required")),
    };
    let mut flows = Vec::new();
    for (i, section) in root.tables("flows")?.into_iter().enumerate() {
        flows.push(parse_flow(section, i, &topology)?);
    }
    root.finish()?;
    if flows.is_empty() {
        return Err(ScenarioError::at("flows", "at least one [[flows]] entry is required"));
    }
    for (i, f) in flows.iter().enumerate() {
        if flows[..i].iter().any(|g| g.name == f.name) {
            return Err(ScenarioError::at(
                format!("flows[{i}].name"),
                format!("\"{}\" is used twice", f.name),
            ));
        }
    }
    Ok(Scenario { name, run, topology, flows })
}

fn parse_run(mut s: Section) -> Result<RunConfig, ScenarioError> {
    let duration = s.positive_duration("duration")?.ok_or_else(|| s.error("duration", "is required"))?;
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

fn fmt_time(t: Time) -> String {
    format!("{}s", cclab_core::time::to_secs_f64(t))
}

fn parse_queue(s: &mut Section) -> Result<QueueKind, ScenarioError> {
    match s.string("queue")? {
        None | Some("droptail") => Ok(QueueKind::Droptail),
        Some(other) => Err(s.error(
            "queue",
            format!("unknown queue discipline \"{other}\"{}", suggestion(other, ["droptail"])),
        )),
    }
}

fn parse_loss(s: &mut Section, key: &'static str) -> Result<f64, ScenarioError> {
    Ok(s.number(key, 0.0, 1.0)?.unwrap_or(0.0))
}

fn parse_link_params(
    s: &mut Section,
    default_buffer: Option<BufferSpec>,
) -> Result<LinkParams, ScenarioError> {
    let rate_bps = s.rate("rate")?.ok_or_else(|| s.error("rate", "is required"))?;
    let delay = s.duration("delay")?.ok_or_else(|| s.error("delay", "is required"))?;
    let buffer = match (s.buffer("buffer")?, default_buffer) {
        (Some(b), _) | (None, Some(b)) => b,
        (None, None) => return Err(s.error("buffer", "is required")),
    };
    check_buffer_nonzero(s, buffer)?;
    Ok(LinkParams {
        rate_bps,
        delay,
        buffer,
        queue: parse_queue(s)?,
        loss: parse_loss(s, "loss")?,
        reverse_loss: parse_loss(s, "reverse_loss")?,
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

fn parse_topology(mut s: Section) -> Result<Topology, ScenarioError> {
    let kind = s.required_string("kind")?;
    let topology = match kind {
        "dumbbell" => {
            let mut bottleneck =
                s.table("bottleneck")?.ok_or_else(|| s.error("bottleneck", "is required"))?;
            let params = parse_link_params(&mut bottleneck, Some(BufferSpec::Bdp(1.0)))?;
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
        "graph" => Topology::Graph(parse_graph(&mut s)?),
        other => {
            return Err(s.error(
                "kind",
                format!("unknown topology \"{other}\"{}", suggestion(other, ["dumbbell", "graph"])),
            ))
        }
    };
    s.finish()?;
    Ok(topology)
}

fn parse_graph(s: &mut Section) -> Result<Graph, ScenarioError> {
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
    for (i, n) in nodes.iter().enumerate() {
        if nodes[..i].contains(n) {
            return Err(ScenarioError::at(
                format!("{}[{i}]", s.key_path("nodes")),
                format!("\"{n}\" is listed twice"),
            ));
        }
    }
    let mut links = Vec::new();
    for mut l in s.tables("links")? {
        let endpoint = |l: &mut Section, key: &'static str| -> Result<String, ScenarioError> {
            let name = l.required_string(key)?;
            if !nodes.iter().any(|n| n == name) {
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
        let params = parse_link_params(&mut l, None)?;
        l.finish()?;
        links.push(GraphLink { from, to, params });
    }
    if links.is_empty() {
        return Err(s.error("links", "at least one [[topology.links]] entry is required"));
    }
    Ok(Graph { nodes, links })
}

fn parse_start(s: &mut Section) -> Result<Start, ScenarioError> {
    let Some(text) = s.string("start")? else {
        return Ok(Start::At(0));
    };
    match text.split_once("..") {
        Some((a, b)) => {
            let lo = crate::units::duration(a).map_err(|m| s.error("start", m))?;
            let hi = crate::units::duration(b).map_err(|m| s.error("start", m))?;
            if hi < lo {
                return Err(s.error("start", format!("range \"{text}\" ends before it starts")));
            }
            Ok(Start::Uniform(lo, hi))
        }
        None => Ok(Start::At(crate::units::duration(text).map_err(|m| s.error("start", m))?)),
    }
}

fn parse_app(s: &mut Section) -> Result<AppSpec, ScenarioError> {
    match s.get("app") {
        None => Ok(AppSpec::Bulk),
        Some(toml::Value::String(k)) if k == "bulk" => Ok(AppSpec::Bulk),
        Some(toml::Value::String(k)) => Err(s.error(
            "app",
            format!(
                "unknown application \"{k}\"{}; or write {{ kind = \"transfer\", size = \"10MB\" }}",
                suggestion(k, ["bulk"])
            ),
        )),
        Some(toml::Value::Table(_)) => {
            let mut app = s.table("app")?.ok_or_else(|| s.error("app", "expected a table"))?;
            let kind = app.required_string("kind")?;
            let spec = match kind {
                "bulk" => AppSpec::Bulk,
                "transfer" => {
                    let bytes =
                        app.size("size")?.ok_or_else(|| app.error("size", "is required for a transfer"))?;
                    if bytes == 0 {
                        return Err(app.error("size", "must be at least one byte"));
                    }
                    AppSpec::Transfer { bytes }
                }
                other => {
                    return Err(app.error(
                        "kind",
                        format!("unknown application \"{other}\"{}", suggestion(other, ["bulk", "transfer"])),
                    ))
                }
            };
            app.finish()?;
            Ok(spec)
        }
        Some(_) => {
            Err(s.error("app", "expected \"bulk\" or a table like { kind = \"transfer\", size = \"10MB\" }"))
        }
    }
}

fn algorithm(s: &mut Section, key: &'static str, role: Role, default: &str) -> Result<String, ScenarioError> {
    let name = s.string(key)?.unwrap_or(default);
    if registry::names(role).any(|n| n == name) {
        return Ok(name.to_string());
    }
    let what = match role {
        Role::CongestionControl => "congestion control",
        Role::LossRecovery => "loss recovery",
    };
    Err(s.error(
        key,
        format!("unknown {what} algorithm \"{name}\"{}", suggestion(name, registry::names(role))),
    ))
}

/// `cc_params` / `recovery_params`: every key must be a parameter of the chosen
/// algorithm, with a value of its kind.
fn parse_params(
    s: &mut Section,
    key: &'static str,
    role: Role,
    algorithm: &str,
) -> Result<Params, ScenarioError> {
    let mut params = Params::new();
    let Some(table) = s.table(key)? else {
        return Ok(params);
    };
    let Some(info) = registry::find(role, algorithm) else {
        return Ok(params);
    };
    for (name, value) in table.entries() {
        let Some(param) = info.parameters.iter().find(|p| p.name == name) else {
            let known = info.parameters.iter().map(|p| p.name);
            let hint = suggestion(name, known.clone());
            let list: Vec<&str> = known.collect();
            let has = if list.is_empty() { "none".to_string() } else { list.join(", ") };
            return Err(
                table.error(name, format!("{algorithm} has no parameter \"{name}\"{hint} (it has: {has})"))
            );
        };
        let checked = match (param.kind, value) {
            (ParamKind::Bool, toml::Value::Boolean(b)) => ParamValue::Bool(*b),
            (ParamKind::Number { min, max }, toml::Value::Integer(_) | toml::Value::Float(_)) => {
                let x = value.as_float().or_else(|| value.as_integer().map(|i| i as f64)).unwrap_or(f64::NAN);
                if !(min..=max).contains(&x) {
                    return Err(table.error(name, format!("{x} is out of range [{min}, {max}]")));
                }
                ParamValue::Number(x)
            }
            (ParamKind::Choice(words), toml::Value::String(w)) if words.contains(&w.as_str()) => {
                ParamValue::Text(w.clone())
            }
            (ParamKind::Choice(words), toml::Value::String(w)) => {
                return Err(table.error(
                    name,
                    format!(
                        "\"{w}\" is not one of {}{}",
                        words.join(", "),
                        suggestion(w, words.iter().copied())
                    ),
                ))
            }
            (kind, _) => {
                let expected = match kind {
                    ParamKind::Bool => "true or false".to_string(),
                    ParamKind::Number { .. } => "a number".to_string(),
                    ParamKind::Choice(words) => format!("one of {}", words.join(", ")),
                };
                return Err(table.error(name, format!("expected {expected}")));
            }
        };
        params.insert(name.clone(), checked);
    }
    Ok(params)
}

fn parse_tcp_options(s: &mut Section) -> Result<TcpOptions, ScenarioError> {
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
    })
}

fn parse_flow(mut s: Section, index: usize, topology: &Topology) -> Result<FlowGroup, ScenarioError> {
    let name = s.string("name")?.map_or_else(|| format!("flow{index}"), str::to_string);
    if name.is_empty() {
        return Err(s.error("name", "must not be empty"));
    }
    let count = s.integer("count", 1, 100_000)?.unwrap_or(1) as u32;
    let protocol = s.string("protocol")?.unwrap_or("tcp");
    if protocol != "tcp" {
        return Err(
            s.error("protocol", format!("unknown protocol \"{protocol}\"{}", suggestion(protocol, ["tcp"])))
        );
    }
    let cc = algorithm(&mut s, "cc", Role::CongestionControl, "reno")?;
    let recovery = algorithm(&mut s, "recovery", Role::LossRecovery, "newreno")?;
    let cc_params = parse_params(&mut s, "cc_params", Role::CongestionControl, &cc)?;
    let recovery_params = parse_params(&mut s, "recovery_params", Role::LossRecovery, &recovery)?;
    let start = parse_start(&mut s)?;
    let app = parse_app(&mut s)?;
    let tcp = parse_tcp_options(&mut s)?;
    if tcp.min_rto > tcp.max_rto {
        return Err(s.error("min_rto", "is larger than max_rto"));
    }
    if tcp.delack_timeout >= cclab_core::time::millis(500) {
        return Err(s.error(
            "delack_timeout",
            "must be shorter than 500ms (RFC 1122 §4.2.3.2: an ACK MUST NOT be delayed 0.5 s or more)",
        ));
    }

    let only_for = |s: &mut Section, key: &'static str, kind: &str| -> Result<(), ScenarioError> {
        if s.has(key) {
            return Err(s.error(key, format!("only applies to a {kind} topology")));
        }
        Ok(())
    };
    let (direction, rtt, from, to) = match topology {
        Topology::Dumbbell(d) => {
            only_for(&mut s, "from", "graph")?;
            only_for(&mut s, "to", "graph")?;
            let direction = match s.string("direction")? {
                None | Some("forward") => Direction::Forward,
                Some("reverse") => Direction::Reverse,
                Some(other) => {
                    return Err(s.error(
                        "direction",
                        format!("unknown direction \"{other}\"{}", suggestion(other, ["forward", "reverse"])),
                    ))
                }
            };
            let rtt =
                s.positive_duration("rtt")?.ok_or_else(|| s.error("rtt", "is required with a dumbbell"))?;
            let floor = 2 * d.bottleneck.delay;
            if rtt < floor {
                return Err(s.error(
                    "rtt",
                    format!(
                        "{} is shorter than twice the bottleneck delay ({})",
                        fmt_time(rtt),
                        fmt_time(floor)
                    ),
                ));
            }
            (direction, Some(rtt), None, None)
        }
        Topology::Graph(g) => {
            only_for(&mut s, "direction", "dumbbell")?;
            only_for(&mut s, "rtt", "dumbbell")?;
            let node = |s: &mut Section, key: &'static str| -> Result<String, ScenarioError> {
                let n = s.required_string(key)?;
                if !g.nodes.iter().any(|m| m == n) {
                    let hint = suggestion(n, g.nodes.iter().map(String::as_str));
                    return Err(s.error(key, format!("unknown node \"{n}\"{hint}")));
                }
                Ok(n.to_string())
            };
            let from = node(&mut s, "from")?;
            let to = node(&mut s, "to")?;
            if from == to {
                return Err(s.error("to", "a flow needs two different nodes"));
            }
            (Direction::Forward, None, Some(from), Some(to))
        }
    };
    s.finish()?;
    Ok(FlowGroup {
        name,
        count,
        direction,
        protocol: protocol.to_string(),
        cc,
        recovery,
        cc_params,
        recovery_params,
        rtt,
        from,
        to,
        start,
        app,
        tcp,
    })
}
