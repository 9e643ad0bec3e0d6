//! Resource limits: the memory a run needs, estimated from the validated
//! scenario before anything is built, and refused above a limit, so that a
//! scenario too big for the machine gets one line naming what makes it big
//! instead of a process that swaps, or aborts when an allocation fails.
//!
//! The estimate counts what grows with the scenario: flow instances (their
//! endpoints, report rows and, on a dumbbell, their two hosts and four access
//! links), links, routing tables, large initial windows (sent at once), the
//! completion-time records of traffic sources, and time-series samples (`run.sample`
//! and each `[[observe]]` section). The per-item constants below were measured
//! as the peak resident memory of `cclab run --json` (Rust engine, results,
//! JSON and the Python tables together) on 1 000 to 100 000 flow instances; see
//! docs/scenario.md ("Memory") for the measurements. It also counts the packets
//! the links can hold at once, from their rates, delays and buffers (a link
//! holds its rate x the RTT in flight, data one way and ACKs the other, plus
//! its buffer), which a fast long path makes the largest part of all: at
//! 100 Tbit/s and 40 ms, a billion packets. What the estimate leaves out is
//! what depends on the traffic alone: packets waiting in unlimited buffers.

use crate::error::ScenarioError;
use crate::observe;
use crate::scenario::{FlowGroup, Observe, Scenario, Start};
use crate::sources::AppSpec;
use crate::topology::{direction_names, Graph, GraphLink, LinkParams, LinkRole};
use crate::units::fmt_time;
use crate::units::BufferSpec;
use cclab_core::queue::fq_codel::FLOW_BACKLOG;
use cclab_core::stats::{DEPARTED_PER_FLOW, LINK_METRICS};
use cclab_wire::time::to_secs_f64;
use cclab_wire::Time;
use serde::Serialize;

/// The limit when neither `--memory-limit`, `memory_limit=` nor
/// `CCLAB_MEMORY_LIMIT` sets one: 4 GB, or half the machine's physical memory
/// if that is less. Capped rather than a fraction alone, so that a scenario is
/// accepted or refused alike on every machine with 8 GB or more (a sweep
/// spread over a cluster behaves as it did on the laptop that planned it),
/// while a small machine is still protected from swapping.
pub const DEFAULT_MEMORY_LIMIT: u64 = 4_000_000_000;
/// The environment variable that sets the limit: a size (`"16GB"`) or `"unlimited"`.
pub const MEMORY_LIMIT_ENV: &str = "CCLAB_MEMORY_LIMIT";

/// One flow instance: its two endpoints (or its traffic source's agent), its
/// bucket, its row of the flows table and of the JSON report. Measured
/// 2026-11-29 (peak resident memory of `cclab run --json` and `--out`, 1 000
/// and 100 000 SACK flows on a three-node graph, 2 s): 4.2 KB.
pub const BYTES_PER_FLOW: u64 = 5_000;
/// One link direction: queue, statistics, name, and its row of the links
/// table. Measured with the above on a dumbbell, whose flows have four each:
/// 0.76 KB.
pub const BYTES_PER_LINK: u64 = 1_000;
/// One node: its name, index entry and routing slots.
pub const BYTES_PER_NODE: u64 = 250;
/// One routing-table entry (a 32-bit link id per destination, per node with a choice of links).
pub const BYTES_PER_ROUTE: u64 = 4;
/// One finite transfer's record across the engine, the result and Python.
pub const BYTES_PER_TRANSFER: u64 = 700;
/// One row of the wide time-series views (a flow's or a link's sample) across
/// the engine, the JSON and Python (measured with the fixed sampler the named
/// metrics replaced).
pub const BYTES_PER_SAMPLE: u64 = 400;
/// One long-format row (one value of one series): 24 bytes in the engine, three
/// numbers in the JSON, the Python lists read from it and the polars table.
/// Estimated from those sizes, not yet measured like the constants above.
pub const BYTES_PER_METRIC_ROW: u64 = 150;
/// One segment of an initial window in flight: the packet in the pool, its
/// place in a link's delay line and queue, and its scoreboard record.
pub const BYTES_PER_SEGMENT: u64 = 250;
/// A packet in flight or queued on a link: the same record as an
/// initial-window segment (the packet in the pool, its place in the link's
/// delay line or queue, its sender's scoreboard record), ACKs included.
pub const BYTES_PER_PACKET_HELD: u64 = BYTES_PER_SEGMENT;
/// The smallest packet a link's capacity is counted in when no flow says:
/// an IP and TCP header.
const SMALLEST_PACKET_BYTES: u64 = 40;

/// Initial-window segments that [`BYTES_PER_FLOW`] already counts (RFC 3390's
/// window for the default 1000-byte segments, with which it was measured).
pub const SEGMENTS_IN_BYTES_PER_FLOW: u64 = 4;

/// One traced packet event: its record in the engine (a copy of the packet),
/// its row in the trace table, the JSON summary and the Python table. Measured:
/// `cclab run --out` of bench-p1 with its `sack` flow traced for 5 s, 751 506
/// rows, peaked at 1.94 GB against 68 MB untraced (2.5 KB a row, 2026-11-22).
pub const BYTES_PER_TRACE_ROW: u64 = 2_500;

/// Connections a run can number: flow ids are 32-bit, and half of them are
/// kept in reserve for the randomness of Poisson arrivals.
pub const MAX_CONNECTIONS: u64 = 1 << 31;
/// Nodes and links a run can number (32-bit ids).
pub const MAX_IDS: u64 = u32::MAX as u64;

/// How much memory a run may need before it is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryLimit {
    Bytes(u64),
    Unlimited,
}

impl Default for MemoryLimit {
    fn default() -> Self {
        MemoryLimit::Bytes(default_limit(physical_memory()))
    }
}

/// The default limit on a machine with `physical` bytes of memory (if known).
pub fn default_limit(physical: Option<u64>) -> u64 {
    physical.map_or(DEFAULT_MEMORY_LIMIT, |bytes| DEFAULT_MEMORY_LIMIT.min(bytes / 2))
}

/// The machine's physical memory (`MemTotal` of `/proc/meminfo`), where it can be read.
fn physical_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    mem_total(&meminfo)
}

/// `MemTotal` in bytes from the text of `/proc/meminfo` (`MemTotal:   24576000 kB`).
fn mem_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let mut fields = line.split_whitespace().skip(1);
    let value: u64 = fields.next()?.parse().ok()?;
    match fields.next() {
        Some("kB") => value.checked_mul(1024),
        _ => None,
    }
}

impl MemoryLimit {
    /// A size such as `"16GB"` or `"512MiB"`, or `"unlimited"`.
    pub fn parse(text: &str) -> Result<Self, String> {
        match text.trim() {
            "unlimited" => Ok(MemoryLimit::Unlimited),
            t => match cclab_wire::units::size(t) {
                Ok(0) => Err(format!("\"{t}\" must be above zero (write \"unlimited\" for no limit)")),
                Ok(bytes) => Ok(MemoryLimit::Bytes(bytes)),
                Err(m) => Err(format!("{m}; write a size like \"16GB\" or \"unlimited\"")),
            },
        }
    }

    /// `CCLAB_MEMORY_LIMIT` if set (and not empty), else the default.
    pub fn from_env() -> Result<Self, ScenarioError> {
        match std::env::var(MEMORY_LIMIT_ENV) {
            Ok(v) if !v.trim().is_empty() => {
                Self::parse(&v).map_err(|m| ScenarioError::at(MEMORY_LIMIT_ENV, m))
            }
            Ok(_) | Err(std::env::VarError::NotPresent) => Ok(Self::default()),
            Err(std::env::VarError::NotUnicode(_)) => {
                Err(ScenarioError::at(MEMORY_LIMIT_ENV, "is not UTF-8 text"))
            }
        }
    }

    /// An explicit limit (an argument named `memory_limit`), or else [`MemoryLimit::from_env`].
    pub fn resolve(explicit: Option<&str>) -> Result<Self, ScenarioError> {
        match explicit {
            Some(text) => Self::parse(text).map_err(|m| ScenarioError::at("memory_limit", m)),
            None => Self::from_env(),
        }
    }
}

/// One part of a scenario that needs memory: the key that drives it, what it is, and how much.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Part {
    pub key: String,
    pub what: String,
    pub bytes: u64,
}

/// What a run of a scenario needs, by part.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MemoryEstimate {
    pub bytes: u64,
    pub parts: Vec<Part>,
}

impl MemoryEstimate {
    /// The part that needs the most.
    pub fn largest(&self) -> Option<&Part> {
        self.parts.iter().max_by_key(|p| p.bytes)
    }
}

/// "1,000,000".
pub fn fmt_count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// "4 GB", "15.6 GB", "12 MB", "900 B" (powers of 1000, as the size unit `GB`).
pub fn fmt_bytes(bytes: u64) -> String {
    let (scale, unit) = match bytes {
        b if b >= 1_000_000_000_000 => (1e12, "TB"),
        b if b >= 1_000_000_000 => (1e9, "GB"),
        b if b >= 1_000_000 => (1e6, "MB"),
        b if b >= 1_000 => (1e3, "KB"),
        _ => return format!("{bytes} B"),
    };
    let x = bytes as f64 / scale;
    let text = if x >= 100.0 { format!("{x:.0}") } else { format!("{x:.1}") };
    format!("{} {unit}", text.strip_suffix(".0").unwrap_or(&text))
}

/// Saturating `a * b` for byte counts that cannot be represented anyway.
fn times(a: u64, b: u64) -> u64 {
    a.saturating_mul(b)
}

/// Flow instances of the scenario, in all its groups.
pub fn flow_instances(scenario: &Scenario) -> u64 {
    scenario.flows.iter().map(|f| f.count as u64).sum()
}

/// Flow instances on hosts of their own, each with two hosts and two duplex access links.
fn own_host_instances(scenario: &Scenario) -> u64 {
    scenario.flows.iter().filter(|f| f.ends.own_hosts).map(|f| f.count as u64).sum()
}

/// Nodes and link directions the scenario's network will have: the graph's,
/// and per instance on hosts of its own two hosts and two duplex access links.
pub fn network_size(scenario: &Scenario) -> (u64, u64) {
    let g = &scenario.graph;
    let hosted = own_host_instances(scenario);
    let nodes = (g.nodes.len() as u64).saturating_add(times(2, hosted));
    let links = (2 * g.links.len() as u64).saturating_add(times(4, hosted));
    (nodes, links)
}

/// The transfers an `arrivals` or `web` group is expected to open: its mean
/// transfers per second x the time from its earliest start to the end of the
/// run, per instance.
fn expected_transfers(scenario: &Scenario, group: usize) -> f64 {
    let f = &scenario.flows[group];
    let rate = f.app.transfers_per_second();
    let earliest = match f.start {
        Start::At(t) | Start::Uniform(t, _) => t,
    };
    let seconds = cclab_wire::time::to_secs_f64(scenario.run.duration.saturating_sub(earliest));
    rate * seconds * f.count as f64
}

/// The memory a run of `scenario` needs, by part; see the module documentation.
/// Computed from the scenario's groups alone: nothing per flow instance is allocated.
pub fn estimate(scenario: &Scenario) -> MemoryEstimate {
    let mut parts = vec![flow_instances_part(scenario), graph_part(&scenario.graph)];
    parts.extend(packets_held(scenario));
    for i in 0..scenario.flows.len() {
        parts.extend(group_parts(scenario, i));
    }
    parts.extend(sample_part(scenario));
    parts.extend(scenario.observe.iter().enumerate().map(|(i, o)| observe_part(scenario, i, o)));
    for (i, t) in scenario.traces.iter().enumerate() {
        let rows = trace_rows(scenario, t);
        parts.push(Part {
            key: format!("trace[{i}]"),
            what: format!(
                "a trace of about {} packet events",
                fmt_count(rows.round().min(u64::MAX as f64) as u64)
            ),
            bytes: (rows * BYTES_PER_TRACE_ROW as f64).round().min(u64::MAX as f64) as u64,
        });
    }
    let bytes = parts.iter().fold(0u64, |sum, p| sum.saturating_add(p.bytes));
    MemoryEstimate { bytes, parts }
}

/// What flow group `i` holds beyond its instances: initial windows larger
/// than [`BYTES_PER_FLOW`] counts, sent at once into buffers that may be
/// unlimited, and the records of the transfers a traffic source opens.
fn group_parts(scenario: &Scenario, i: usize) -> Vec<Part> {
    let f = &scenario.flows[i];
    let mut parts = Vec::new();
    let iw = f.tcp.as_ref().map_or(0, |t| t.initial_window as u64);
    if iw > SEGMENTS_IN_BYTES_PER_FLOW {
        let segments = times(iw - SEGMENTS_IN_BYTES_PER_FLOW, f.count as u64);
        parts.push(Part {
            key: format!("flows[{i}].initial_window"),
            what: format!(
                "initial windows of {} segments in {} flow instances",
                fmt_count(iw),
                fmt_count(f.count as u64)
            ),
            bytes: times(segments, BYTES_PER_SEGMENT),
        });
    }
    if f.app.opens_connections() {
        let n = expected_transfers(scenario, i);
        parts.push(Part {
            key: format!("flows[{i}].app"),
            what: format!("about {} transfers", fmt_count(n.round().min(u64::MAX as f64) as u64)),
            bytes: (n * BYTES_PER_TRANSFER as f64).round().min(u64::MAX as f64) as u64,
        });
    }
    parts
}

/// `run.sample`'s time series: every flow instance with a long-lived
/// connection is sampled, and every link direction; each sample is one long
/// row per metric, plus one row of the wide view per TCP flow and per link.
fn sample_part(scenario: &Scenario) -> Option<Part> {
    let every = scenario.run.sample?;
    let samples = scenario.run.duration / every.max(1) + 1;
    let (_, links) = network_size(scenario);
    let link_metrics = observe::default_link_metrics().count() as u64;
    let mut sampled = links;
    let mut per_sample = times(links, BYTES_PER_SAMPLE + link_metrics * BYTES_PER_METRIC_ROW);
    for f in scenario.flows.iter().filter(|f| observe::observable(f)) {
        let wide = if f.tcp.is_some() { BYTES_PER_SAMPLE } else { 0 };
        let long = observe::default_flow_metrics(f).len() as u64 * BYTES_PER_METRIC_ROW;
        sampled = sampled.saturating_add(f.count as u64);
        per_sample = per_sample.saturating_add(times(f.count as u64, wide + long));
    }
    Some(Part {
        key: "run.sample".into(),
        what: format!("{} samples of {} flows and links", fmt_count(samples), fmt_count(sampled)),
        bytes: times(samples, per_sample),
    })
}

/// The time series of `[[observe]]` section `i`.
fn observe_part(scenario: &Scenario, i: usize, o: &Observe) -> Part {
    let samples = scenario.run.duration / o.every.max(1) + 1;
    let per_flow = [DEPARTED_PER_FLOW, FLOW_BACKLOG.name];
    let once_per_flow = per_flow.iter().filter(|&&name| o.metrics.iter().any(|m| m == name)).count() as u64;
    // A link's own metrics and its discipline's, at most all of both.
    let link_metrics = LINK_METRICS
        .iter()
        .chain(cclab_core::queue::QUEUE_DISCIPLINES.iter().flat_map(|d| d.metrics))
        .filter(|d| !per_flow.contains(&d.name) && o.metrics.iter().any(|m| m == d.name))
        .count() as u64
        + once_per_flow * long_lived_flows(scenario);
    let mut series = times(o.links.len() as u64, link_metrics);
    for f in scenario.flows.iter().filter(|f| o.flows.contains(&f.name)) {
        let metrics = observe::flow_metrics(f).iter().filter(|m| o.metrics.contains(&m.name)).count() as u64;
        series = series.saturating_add(times(f.count as u64, metrics));
    }
    Part {
        key: format!("observe[{i}]"),
        what: format!("{} samples of {} series", fmt_count(samples), fmt_count(series)),
        bytes: times(times(samples, series), BYTES_PER_METRIC_ROW),
    }
}

/// The flow instances: each one's endpoints, and on hosts of its own its two
/// hosts, four access link directions, and the two routing entries towards
/// its hosts in each of the two nodes it joins.
fn flow_instances_part(scenario: &Scenario) -> Part {
    let flows = flow_instances(scenario);
    let own_hosts = 2 * BYTES_PER_NODE + 4 * BYTES_PER_LINK + 2 * 2 * BYTES_PER_ROUTE;
    Part {
        key: "flows".into(),
        what: format!("{} flow instances", fmt_count(flows)),
        bytes: times(flows, BYTES_PER_FLOW).saturating_add(times(own_host_instances(scenario), own_hosts)),
    }
}

/// The graph's nodes and links, and the routing tables of its nodes that
/// have a choice of links: a row of one entry per node.
fn graph_part(g: &Graph) -> Part {
    let (nodes, links) = (g.nodes.len() as u64, 2 * g.links.len() as u64);
    let mut out_degree = std::collections::HashMap::<&str, u32>::new();
    for l in &g.links {
        *out_degree.entry(l.from.as_str()).or_default() += 1;
        *out_degree.entry(l.to.as_str()).or_default() += 1;
    }
    let rows = out_degree.values().filter(|&&d| d > 1).count() as u64;
    let routes = times(times(rows, nodes), BYTES_PER_ROUTE);
    Part {
        key: "topology".into(),
        what: format!(
            "{} nodes, {} link directions and routing tables of {} x {} entries",
            fmt_count(nodes),
            fmt_count(links),
            fmt_count(rows),
            fmt_count(nodes)
        ),
        bytes: times(nodes, BYTES_PER_NODE)
            .saturating_add(times(links, BYTES_PER_LINK))
            .saturating_add(routes),
    }
}

/// The bytes of the smallest full data packet/// The bytes of the smallest full data packet of `flows` (at least an IP and
/// TCP header): a link's capacity holds the most packets of that size.
fn smallest_packet<'a>(flows: impl Iterator<Item = &'a FlowGroup>) -> f64 {
    flows
        .map(FlowGroup::wire_segment_bytes)
        .filter(|&b| b > 0)
        .min()
        .unwrap_or(SMALLEST_PACKET_BYTES)
        .max(SMALLEST_PACKET_BYTES) as f64
}

/// Packets a buffer holds when full, in packets of `packet` bytes; a BDP
/// buffer from `rate_bps` x `rtt` (an upper bound of the flows' mean RTT that
/// the run sizes it from); an unlimited one holds what the traffic puts in
/// it, which the scenario does not say: nothing is counted for it.
fn buffer_packets(buffer: BufferSpec, rate_bps: u64, rtt: Time, packet: f64) -> f64 {
    match buffer {
        BufferSpec::Packets(n) => n as f64,
        BufferSpec::Bytes(b) => b as f64 / packet,
        BufferSpec::Bdp(multiple) => multiple * rate_bps as f64 / 8.0 * to_secs_f64(rtt) / packet,
        BufferSpec::Unlimited => 0.0,
    }
}

/// The longest one-way delay of a link, whichever its delay schedule.
fn longest_delay(link: &LinkParams) -> Time {
    link.delay_schedule.as_ref().map_or(link.delay, |s| s.range().1)
}

/// The packets the links can hold at once, one part per link direction that
/// can hold many: in flight, its fastest rate (a trace's busiest millisecond)
/// x the round trip (data one way and the ACKs clocking it the other, counted
/// in the smallest data packets), and a full buffer. A bottleneck link, each
/// direction that flows send over, with the longest RTT of those flows (their
/// access links carry those flows' windows, which the bottleneck's pipe and
/// buffer bound); any other link every direction, with twice its own delay.
/// TCP flows whose windows are all bounded (`max_window`) hold no more than
/// those windows.
fn packets_held(scenario: &Scenario) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut add = |key: String, where_: String, capacity: f64, windows: f64, packet: f64| {
        let packets = capacity.min(windows);
        parts.push(Part {
            key,
            what: format!(
                "up to {} packets of {packet:.0} bytes in flight and queued on {where_}",
                fmt_count(packets.round().min(u64::MAX as f64) as u64)
            ),
            bytes: (packets * BYTES_PER_PACKET_HELD as f64).round().min(u64::MAX as f64) as u64,
        });
    };
    let packet = smallest_packet(scenario.flows.iter());
    let all_windows = windows(scenario.flows.iter());
    for l in &scenario.graph.links {
        let p = &l.params;
        if l.role == LinkRole::Bottleneck {
            for (direction, (capacity, name)) in
                [&p.capacity, p.reverse()].into_iter().zip(direction_names(&l.from, &l.to)).enumerate()
            {
                let flows = || scenario.flows.iter().filter(move |f| sends_over(f, l, direction));
                if flows().next().is_none() {
                    continue;
                }
                let packet = smallest_packet(flows());
                let rtt = flows()
                    .map(|f| f.rtt.map_or(0, |r| r.latest()))
                    .max()
                    .unwrap_or(0)
                    .max(2 * longest_delay(p));
                let rate = capacity.peak_bps();
                let pipe = rate as f64 / 8.0 * to_secs_f64(rtt) / packet;
                let buffer = buffer_packets(p.buffer, p.rate_bps, rtt, packet);
                let rate_key =
                    if direction == 1 && p.reverse_capacity.is_some() { "reverse_rate" } else { "rate" };
                let where_ = format!(
                    "the bottleneck {name} ({} x the {} RTT, and its {} buffer)",
                    crate::resolved::rate(rate),
                    fmt_time(rtt),
                    crate::resolved::buffer(p.buffer)
                );
                add(format!("{}.{rate_key}", l.key), where_, pipe + buffer, windows(flows()), packet);
            }
            continue;
        }
        let rtt = 2 * longest_delay(p);
        let mut capacity = 0.0;
        for c in [&p.capacity, p.reverse()] {
            capacity += c.peak_bps() as f64 / 8.0 * to_secs_f64(rtt) / 2.0 / packet;
            capacity += buffer_packets(p.buffer, p.rate_bps, rtt, packet);
        }
        let where_ = format!(
            "the link {}<->{} ({} x twice its {} delay, and its {} buffer, each way)",
            l.from,
            l.to,
            crate::resolved::rate(p.capacity.peak_bps().max(p.reverse().peak_bps())),
            fmt_time(longest_delay(p)),
            crate::resolved::buffer(p.buffer)
        );
        add(format!("{}.rate", l.key), where_, capacity, all_windows, packet);
    }
    // Parts of a few packets say nothing a refusal needs.
    parts.retain(|p| p.bytes >= 1_000_000);
    parts
}

/// Whether group `f`'s data crosses link `l` in `direction` (0 from `l.from`
/// to `l.to`, 1 back) as its only link between the nodes it joins.
fn sends_over(f: &FlowGroup, l: &GraphLink, direction: usize) -> bool {
    let (from, to) = if direction == 0 { (&l.from, &l.to) } else { (&l.to, &l.from) };
    &f.ends.sender == from && &f.ends.receiver == to
}

/// Packets `flows` can have in flight at once if every one is a TCP flow with
/// a bounded window (`max_window` segments, and as many ACKs); else unbounded.
fn windows<'a>(flows: impl Iterator<Item = &'a FlowGroup>) -> f64 {
    flows
        .map(|f| match f.tcp.as_ref().and_then(|t| t.max_window) {
            Some(w) => 2.0 * w as f64 * f.count as f64,
            _ => f64::INFINITY,
        })
        .sum()
}

/// The packet events a `[[trace]]` entry is expected to record: its flows send
/// at most the fastest graph link's rate in full segments, each data packet
/// and its ACK leave two events per link of their path (the graph's nodes
/// less one, at least one and at most 16, and two access links for a flow on
/// hosts of its own) and a delivery; a traced link carries at most its rate
/// in the scenario's smallest segments, plus as many ACKs, two events each.
fn trace_rows(scenario: &Scenario, t: &crate::trace::TraceSpec) -> f64 {
    let g = &scenario.graph;
    let seconds = cclab_wire::time::to_secs_f64(t.to.saturating_sub(t.from));
    let flow_rate = g.links.iter().map(|l| l.params.rate_bps).max().unwrap_or(0);
    let graph_hops = (g.nodes.len().saturating_sub(1)).clamp(1, 16) as f64;
    let mut rows = 0.0;
    for f in scenario.flows.iter().filter(|f| t.flows.contains(&f.name)) {
        let hops = graph_hops + if f.ends.own_hosts { 2.0 } else { 0.0 };
        let packets = flow_rate as f64 / (8.0 * f.wire_segment_bytes().max(40) as f64) * seconds;
        rows += f.count as f64 * packets * 2.0 * (2.0 * hops + 1.0);
    }
    let smallest =
        scenario.flows.iter().map(|f| f.wire_segment_bytes()).filter(|&b| b > 0).min().unwrap_or(40).max(40);
    for name in &t.links {
        // A name no graph link has is an access link's.
        let rate = match (g.link_direction(name), &g.access) {
            (Some((l, _)), _) => l.params.rate_bps,
            (None, Some(access)) => access.params.rate_bps,
            (None, None) => 0,
        };
        rows += rate as f64 / (8.0 * smallest as f64) * seconds * 2.0 * 2.0;
    }
    rows
}

/// Refuses a scenario whose ids would overflow (whatever the memory limit) or
/// whose estimate is above `limit`; returns the estimate otherwise.
pub fn check(scenario: &Scenario, limit: MemoryLimit) -> Result<MemoryEstimate, ScenarioError> {
    let (nodes, links) = network_size(scenario);
    if nodes >= MAX_IDS || links >= MAX_IDS {
        return Err(ScenarioError::at(
            "flows",
            format!(
                "{} nodes and {} link directions are more than the {} a run can number",
                fmt_count(nodes),
                fmt_count(links),
                fmt_count(MAX_IDS - 1)
            ),
        ));
    }
    let mut connections = flow_instances(scenario) as f64;
    for (i, _) in scenario.flows.iter().enumerate() {
        connections += expected_transfers(scenario, i);
        if connections >= MAX_CONNECTIONS as f64 {
            return Err(ScenarioError::at(
                format!("flows[{i}].app"),
                format!(
                    "the flows up to this one open about {} connections, more than the {} a run can number",
                    fmt_count(connections.min(u64::MAX as f64) as u64),
                    fmt_count(MAX_CONNECTIONS)
                ),
            ));
        }
    }
    let estimate = estimate(scenario);
    let MemoryLimit::Bytes(max) = limit else { return Ok(estimate) };
    if estimate.bytes <= max {
        return Ok(estimate);
    }
    let Some(part) = estimate.largest() else { return Ok(estimate) };
    let (total, limit_text) = (fmt_bytes(estimate.bytes), fmt_bytes(max));
    let need = if part.bytes > max {
        let all =
            if fmt_bytes(part.bytes) == total { String::new() } else { format!(" (about {total} in all)") };
        format!("need about {}, above the {limit_text} memory limit{all}", fmt_bytes(part.bytes))
    } else {
        format!(
            "need about {}, and the whole run about {total}, above the {limit_text} memory limit",
            fmt_bytes(part.bytes)
        )
    };
    Err(ScenarioError::at(
        &part.key,
        format!(
            "{} {need}; raise the limit with --memory-limit, memory_limit= or {MEMORY_LIMIT_ENV} if the machine has the memory",
            part.what
        ),
    ))
}

// ---- Run time ----
//
// The work of a run is mostly packet hops (a packet's arrival at a link: two
// thirds of a dumbbell's are access-link hops), so the run time is estimated
// from the packets the flows can send: at most what their path's fastest
// rate carries in their smallest packets over the time they are active, less
// if the application offers less (a transfer's size, a source's transfers, a
// CBR rate), each making its hops and its ACK's. Many flows cost more than
// their packets: every flow's timers fire, and each event touches a flow's
// state that is no longer in the cache. The constants are CPU time on the
// 2-CPU machine of benchmarks/results/ (2026-11-29): see docs/scenario.md
// ("Run time").

/// CPU per packet hop: 55-80 ns measured (benchmarks/results/, the 200 s
/// pacing benchmark at 2.5 Gbit/s: about 48 ns; the dumbbell example 51-81 ns
/// on a loaded machine); the higher end, so that a run is refused rather
/// than let run for hours.
pub const NS_PER_PACKET_HOP: f64 = 80.0;
/// CPU per flow instance per simulated second of its activity, beyond its
/// packets: 20 000 SACK flows on the 100 Mbit/s dumbbell cost 8.5 s of CPU
/// for 80 s and 2.2 s for 5 s, 3.9 us per flow-second of which the hops are
/// 0.3 us.
pub const NS_PER_FLOW_SECOND: f64 = 4_000.0;
/// CPU per flow instance to build it and report it: the same runs, less
/// their per-second costs, 90 us a flow.
pub const NS_PER_FLOW: f64 = 90_000.0;
/// CPU per transfer a traffic source opens (a connection set up and torn
/// down, and its row of the transfers table): examples/arrivals.toml.
pub const NS_PER_TRANSFER: f64 = 30_000.0;
/// Runs estimated to need more CPU than this are refused unless allowed
/// (`--allow-long`, `allow_long=True`): an hour, long enough for anything
/// the project runs (its longest single run, the pacing benchmark's 200 s at
/// 2.5 Gbit/s, takes about 30 s) and short of a run left going overnight by
/// mistake.
pub const RUN_TIME_LIMIT_S: f64 = 3600.0;

/// The work of a run, estimated before it is built.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunTimeEstimate {
    pub packet_hops: f64,
    pub flow_instances: u64,
    pub transfers: f64,
    pub cpu_s: f64,
    pub limit_s: f64,
}

/// Data packets flow group `f` can send while active for `seconds`, over a
/// path whose fastest link carries `rate_bps`, in packets of `packet` bytes.
fn data_packets(scenario: &Scenario, group: usize, rate_bps: u64, seconds: f64, packet: f64) -> f64 {
    let f = &scenario.flows[group];
    let count = f.count as f64;
    let carried = rate_bps as f64 / 8.0 / packet * seconds;
    let offered = match f.app {
        AppSpec::Bulk => f64::INFINITY,
        AppSpec::Transfer { size } => count * size as f64 / packet,
        AppSpec::Arrivals { size, .. } => expected_transfers(scenario, group) * size.mean() / packet,
        AppSpec::Web(w) => expected_transfers(scenario, group) * w.size.mean() / packet,
        AppSpec::Cbr { rate, size, .. } => count * rate as f64 / 8.0 / size.max(1) as f64 * seconds,
    };
    offered.min(count * carried)
}

/// Seconds group `f` is active: from its earliest start to the end of the run.
fn active_seconds(scenario: &Scenario, f: &FlowGroup) -> f64 {
    to_secs_f64(scenario.run.duration.saturating_sub(f.start.earliest()))
}

/// ACKs per data packet: a TCP receiver's (one for two with delayed ACKs);
/// UDP sends none, and UDT's few (one per 10 ms) are left out.
fn acks_per_packet(f: &FlowGroup) -> f64 {
    match &f.tcp {
        Some(t) if t.delayed_ack => 0.5,
        Some(_) => 1.0,
        None => 0.0,
    }
}

/// The CPU a run of `scenario` needs, estimated from its rates, durations and
/// flows; see the constants above.
pub fn estimate_run_time(scenario: &Scenario) -> RunTimeEstimate {
    let g = &scenario.graph;
    let mut hops = 0.0;
    let mut on_bottleneck = vec![false; scenario.flows.len()];
    for l in g.links.iter().filter(|l| l.role == LinkRole::Bottleneck) {
        for (direction, capacity) in [&l.params.capacity, l.params.reverse()].into_iter().enumerate() {
            let groups: Vec<usize> =
                (0..scenario.flows.len()).filter(|&i| sends_over(&scenario.flows[i], l, direction)).collect();
            groups.iter().for_each(|&i| on_bottleneck[i] = true);
            hops += bottleneck_hops(scenario, &groups, capacity.peak_bps());
        }
    }
    let routed: Vec<usize> = (0..scenario.flows.len()).filter(|&i| !on_bottleneck[i]).collect();
    if !routed.is_empty() {
        hops += routed_hops(scenario, &routed);
    }
    let flow_instances = flow_instances(scenario);
    let flow_seconds: f64 = scenario.flows.iter().map(|f| f.count as f64 * active_seconds(scenario, f)).sum();
    let transfers: f64 = (0..scenario.flows.len()).map(|g| expected_transfers(scenario, g)).sum();
    let cpu_ns = hops * NS_PER_PACKET_HOP
        + flow_seconds * NS_PER_FLOW_SECOND
        + flow_instances as f64 * NS_PER_FLOW
        + transfers * NS_PER_TRANSFER;
    RunTimeEstimate {
        packet_hops: hops,
        flow_instances,
        transfers,
        cpu_s: cpu_ns / 1e9,
        limit_s: RUN_TIME_LIMIT_S,
    }
}

/// Packet hops of `groups`, which share one bottleneck direction of
/// `rate_bps` as the only link between the nodes they join: all of them
/// together at most what it carries over the longest of their active times,
/// each packet over it and, on hosts of their own, two access links, each
/// data packet with its ACK.
fn bottleneck_hops(scenario: &Scenario, groups: &[usize], rate_bps: u64) -> f64 {
    if groups.is_empty() {
        return 0.0;
    }
    let flows = || groups.iter().map(|&g| &scenario.flows[g]);
    let packet = smallest_packet(flows());
    let longest = flows().map(|f| active_seconds(scenario, f)).fold(0.0, f64::max);
    let mut packets = 0.0;
    let mut acks: f64 = 0.0;
    for &g in groups {
        let f = &scenario.flows[g];
        packets += data_packets(scenario, g, rate_bps, active_seconds(scenario, f), packet);
        acks = acks.max(acks_per_packet(f));
    }
    let path = if flows().any(|f| f.ends.own_hosts) { 3.0 } else { 1.0 };
    let carried = rate_bps as f64 / 8.0 / packet * longest;
    packets.min(carried) * path * (1.0 + acks)
}

/// Packet hops of `groups`, each over its route (found as the run will find
/// it), at most its slowest link's rate; all of them together at most what
/// every link direction carries, each data packet with its ACK.
fn routed_hops(scenario: &Scenario, groups: &[usize]) -> f64 {
    let g = &scenario.graph;
    let packet = smallest_packet(scenario.flows.iter());
    let mut acks: f64 = 0.0;
    let mut routed = 0.0;
    for &i in groups {
        let f = &scenario.flows[i];
        let (path, rate) = route(g, &f.ends.sender, &f.ends.receiver).unwrap_or((0, 0));
        let packets = data_packets(scenario, i, rate, active_seconds(scenario, f), packet);
        routed += packets * path as f64 * (1.0 + acks_per_packet(f));
        acks = acks.max(acks_per_packet(f));
    }
    let seconds = to_secs_f64(scenario.run.duration);
    let carried: f64 = g
        .links
        .iter()
        .flat_map(|l| [l.params.capacity.peak_bps(), l.params.reverse().peak_bps()])
        .map(|rate| rate as f64 / 8.0 / packet * seconds)
        .sum();
    routed.min(carried * (1.0 + acks))
}

/// The links of the route from node `from` to node `to` and the slowest rate
/// on it, as the run routes (`LeastDelayTree`, each graph link both ways);
/// `None` if `to` cannot be reached (the build says so).
fn route(g: &Graph, from: &str, to: &str) -> Option<(usize, u64)> {
    use cclab_core::network::LeastDelayTree;
    let node = |name: &str| g.nodes.iter().position(|n| n == name);
    let (src, dst) = (node(from)?, node(to)?);
    // Link 2i is graph link i forwards, 2i + 1 backwards.
    let mut out: Vec<Vec<(u32, u32, Time)>> = vec![Vec::new(); g.nodes.len()];
    let mut rates = Vec::with_capacity(2 * g.links.len());
    for (i, l) in g.links.iter().enumerate() {
        let (a, b) = (node(&l.from)?, node(&l.to)?);
        let p = &l.params;
        out[a].push((2 * i as u32, b as u32, p.delay));
        out[b].push((2 * i as u32 + 1, a as u32, p.delay));
        rates.extend([p.capacity.peak_bps(), p.reverse().peak_bps()]);
    }
    let tree = LeastDelayTree::from(&out, src);
    let (_, hops) = tree.best[dst]?;
    let slowest = tree.links_back(dst).map(|l| rates[l as usize]).min().unwrap_or(u64::MAX);
    Some((hops as usize, slowest))
}

/// "40 s", "12 min", "1.6 h", "11.6 days".
pub fn fmt_cpu(seconds: f64) -> String {
    let (value, unit) = match seconds {
        s if s >= 86_400.0 => (s / 86_400.0, "days"),
        s if s >= 3_600.0 => (s / 3_600.0, "h"),
        s if s >= 60.0 => (s / 60.0, "min"),
        s => (s, "s"),
    };
    let text = if value >= 100.0 || (unit == "s" && value >= 10.0) {
        format!("{value:.0}")
    } else {
        format!("{value:.1}")
    };
    format!("{} {unit}", text.strip_suffix(".0").unwrap_or(&text))
}

/// Refuses a scenario whose estimated run time is above [`RUN_TIME_LIMIT_S`]
/// unless `allow_long`; returns the estimate otherwise.
pub fn check_run_time(scenario: &Scenario, allow_long: bool) -> Result<RunTimeEstimate, ScenarioError> {
    let estimate = estimate_run_time(scenario);
    if allow_long || estimate.cpu_s <= estimate.limit_s {
        return Ok(estimate);
    }
    let flows = estimate.flow_instances;
    Err(ScenarioError::at(
        "run.duration",
        format!(
            "{} simulated with {} flow instance{} is about {} packet hops, about {} of CPU, above the {} limit on a run's time; \
             pass --allow-long (allow_long=True in Python) to run it all the same, or shorten run.duration",
            fmt_time(scenario.run.duration),
            fmt_count(flows),
            if flows == 1 { "" } else { "s" },
            fmt_count(estimate.packet_hops.round().min(u64::MAX as f64) as u64),
            fmt_cpu(estimate.cpu_s),
            fmt_cpu(estimate.limit_s),
        ),
    ))
}

/// Flow instances with one long-lived connection (those with a time series each).
fn long_lived_flows(scenario: &Scenario) -> u64 {
    scenario.flows.iter().filter(|f| observe::observable(f)).map(|f| f.count as u64).sum()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_default_limit_is_4_gb_or_half_the_machine_if_that_is_less() {
        assert_eq!(super::mem_total("MemFree: 1 kB\nMemTotal:       24576000 kB\n"), Some(24_576_000 * 1024));
        assert_eq!(super::mem_total("MemTotal: 12 MB\n"), None);
        assert_eq!(super::mem_total(""), None);
        assert_eq!(super::default_limit(Some(24_000_000_000)), 4_000_000_000);
        assert_eq!(super::default_limit(Some(6_000_000_000)), 3_000_000_000);
        assert_eq!(super::default_limit(None), 4_000_000_000);
    }

    use super::*;

    /// A web source's transfers are its sessions' objects: load 0.3 of
    /// 20 Mbit/s with ns-2's defaults (100 KB a session) is 7.5 sessions and
    /// 75 objects a second, 7 500 over 100 s.
    #[test]
    fn a_web_source_is_expected_to_open_its_sessions_objects() {
        let text = r#"
[run]
duration = "100s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "20Mbps"
delay = "5ms"
[[flows]]
name = "web"
rtt = "40ms"
app = { kind = "web", load = 0.3 }
"#;
        let scenario = crate::parse(text, "t").expect("valid");
        let part = estimate(&scenario).parts.into_iter().find(|p| p.key == "flows[0].app").expect("a part");
        assert_eq!(part.what, "about 7,500 transfers");
        assert_eq!(part.bytes, 7_500 * BYTES_PER_TRANSFER);
    }

    #[test]
    fn counts_and_sizes_read_well() {
        assert_eq!(fmt_count(0), "0");
        assert_eq!(fmt_count(999), "999");
        assert_eq!(fmt_count(1000), "1,000");
        assert_eq!(fmt_count(1_000_000), "1,000,000");
        assert_eq!(fmt_bytes(900), "900 B");
        assert_eq!(fmt_bytes(4_000_000_000), "4 GB");
        assert_eq!(fmt_bytes(15_560_000_000), "15.6 GB");
        assert_eq!(fmt_bytes(1_000_000), "1 MB");
        assert_eq!(fmt_bytes(250_000_000), "250 MB");
    }

    #[test]
    fn limits_parse_sizes_and_unlimited() {
        assert_eq!(MemoryLimit::parse("16GB"), Ok(MemoryLimit::Bytes(16_000_000_000)));
        assert_eq!(MemoryLimit::parse("512MiB"), Ok(MemoryLimit::Bytes(512 << 20)));
        assert_eq!(MemoryLimit::parse("unlimited"), Ok(MemoryLimit::Unlimited));
        assert!(MemoryLimit::parse("0GB").unwrap_err().contains("above zero"));
        assert!(MemoryLimit::parse("lots").unwrap_err().contains("write a size like \"16GB\""));
        assert!(MemoryLimit::parse("16").unwrap_err().contains("no unit"));
        assert_eq!(MemoryLimit::resolve(Some("x")).unwrap_err().path, "memory_limit");
    }
}
