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
//! docs/scenario.md ("Memory") for the measurements. What the estimate leaves
//! out is what depends on the traffic rather than the scenario: packets queued
//! in buffers and the SACK scoreboards of large windows.

use crate::error::ScenarioError;
use crate::observe;
use crate::scenario::{Scenario, Start, Topology};
use cclab_core::queue::fq_codel::FLOW_BACKLOG;
use cclab_core::stats::{DEPARTED_PER_FLOW, LINK_METRICS};
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
/// bucket, its row of the flows table and of the JSON report.
pub const BYTES_PER_FLOW: u64 = 9_000;
/// One link direction: queue, statistics, name, and its row of the links table.
pub const BYTES_PER_LINK: u64 = 1_500;
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

/// Nodes and link directions the scenario's network will have.
fn network_size(scenario: &Scenario) -> (u64, u64) {
    let flows = flow_instances(scenario);
    match &scenario.topology {
        // Two routers and the bottleneck; per instance two hosts and two duplex access links.
        Topology::Dumbbell(_) => (times(2, flows).saturating_add(2), times(4, flows).saturating_add(2)),
        Topology::Graph(g) => (g.nodes.len() as u64, 2 * g.links.len() as u64),
    }
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
    let mut parts = Vec::new();
    let flows = flow_instances(scenario);
    let (nodes, links) = network_size(scenario);
    match &scenario.topology {
        Topology::Dumbbell(_) => {
            // Per instance: its endpoints, two hosts, four access links, and the two
            // routers' routing entries towards its hosts.
            let per_flow = BYTES_PER_FLOW + 2 * BYTES_PER_NODE + 4 * BYTES_PER_LINK + 2 * 2 * BYTES_PER_ROUTE;
            parts.push(Part {
                key: "flows".into(),
                what: format!("{} flow instances", fmt_count(flows)),
                bytes: times(flows, per_flow),
            });
            parts.push(Part {
                key: "topology".into(),
                what: "the dumbbell's routers and bottleneck".into(),
                bytes: 2 * BYTES_PER_NODE + 2 * BYTES_PER_LINK,
            });
        }
        Topology::Graph(g) => {
            parts.push(Part {
                key: "flows".into(),
                what: format!("{} flow instances", fmt_count(flows)),
                bytes: times(flows, BYTES_PER_FLOW),
            });
            // A node with more than one outgoing link keeps a routing row of one entry per node.
            let mut out_degree = std::collections::HashMap::<&str, u32>::new();
            for l in &g.links {
                *out_degree.entry(l.from.as_str()).or_default() += 1;
                *out_degree.entry(l.to.as_str()).or_default() += 1;
            }
            let rows = out_degree.values().filter(|&&d| d > 1).count() as u64;
            let routes = times(times(rows, nodes), BYTES_PER_ROUTE);
            parts.push(Part {
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
            });
        }
    }
    for (i, f) in scenario.flows.iter().enumerate() {
        // Every instance sends its initial window at once, into buffers that may be unlimited.
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
    }
    if let Some(every) = scenario.run.sample {
        let samples = scenario.run.duration / every.max(1) + 1;
        // Every flow instance with a long-lived connection is sampled, and every
        // link direction: each sample is one long row per metric, plus one row of
        // the wide view per TCP flow and per link.
        let link_metrics = observe::default_link_metrics().count() as u64;
        let mut sampled = links;
        let mut per_sample = times(links, BYTES_PER_SAMPLE + link_metrics * BYTES_PER_METRIC_ROW);
        for f in scenario.flows.iter().filter(|f| observe::observable(f)) {
            let wide = if f.tcp.is_some() { BYTES_PER_SAMPLE } else { 0 };
            let long = observe::default_flow_metrics(f).len() as u64 * BYTES_PER_METRIC_ROW;
            sampled = sampled.saturating_add(f.count as u64);
            per_sample = per_sample.saturating_add(times(f.count as u64, wide + long));
        }
        parts.push(Part {
            key: "run.sample".into(),
            what: format!("{} samples of {} flows and links", fmt_count(samples), fmt_count(sampled)),
            bytes: times(samples, per_sample),
        });
    }
    for (i, o) in scenario.observe.iter().enumerate() {
        let samples = scenario.run.duration / o.every.max(1) + 1;
        let per_flow = [DEPARTED_PER_FLOW, FLOW_BACKLOG.name];
        let once_per_flow =
            per_flow.iter().filter(|&&name| o.metrics.iter().any(|m| m == name)).count() as u64;
        // A link's own metrics and its discipline's, at most all of both.
        let link_metrics = LINK_METRICS
            .iter()
            .chain(cclab_core::queue::QUEUE_DISCIPLINES.iter().flat_map(|d| d.metrics))
            .filter(|d| !per_flow.contains(&d.name) && o.metrics.iter().any(|m| m == d.name))
            .count() as u64
            + once_per_flow * long_lived_flows(scenario);
        let mut series = times(o.links.len() as u64, link_metrics);
        for f in scenario.flows.iter().filter(|f| o.flows.contains(&f.name)) {
            let metrics =
                observe::flow_metrics(f).iter().filter(|m| o.metrics.contains(&m.name)).count() as u64;
            series = series.saturating_add(times(f.count as u64, metrics));
        }
        parts.push(Part {
            key: format!("observe[{i}]"),
            what: format!("{} samples of {} series", fmt_count(samples), fmt_count(series)),
            bytes: times(times(samples, series), BYTES_PER_METRIC_ROW),
        });
    }
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

/// The packet events a `[[trace]]` entry is expected to record: its flows send
/// at most the bottleneck's rate (dumbbell) or the fastest link's (graph) in
/// full segments, each data packet and its ACK leave two events per link of
/// their path and a delivery; a traced link carries at most its rate in the
/// scenario's smallest segments, plus as many ACKs, two events each.
fn trace_rows(scenario: &Scenario, t: &crate::trace::TraceSpec) -> f64 {
    let seconds = cclab_wire::time::to_secs_f64(t.to.saturating_sub(t.from));
    let (flow_rate, hops) = match &scenario.topology {
        Topology::Dumbbell(d) => (d.bottleneck.rate_bps, 3.0),
        Topology::Graph(g) => {
            let fastest = g.links.iter().map(|l| l.params.rate_bps).max().unwrap_or(0);
            (fastest, (g.nodes.len().saturating_sub(1)).clamp(1, 16) as f64)
        }
    };
    let mut rows = 0.0;
    for f in scenario.flows.iter().filter(|f| t.flows.contains(&f.name)) {
        let packets = flow_rate as f64 / (8.0 * f.wire_segment_bytes().max(40) as f64) * seconds;
        rows += f.count as f64 * packets * 2.0 * (2.0 * hops + 1.0);
    }
    let smallest =
        scenario.flows.iter().map(|f| f.wire_segment_bytes()).filter(|&b| b > 0).min().unwrap_or(40).max(40);
    for name in &t.links {
        let rate = match &scenario.topology {
            Topology::Dumbbell(d) if name == "left->right" || name == "right->left" => d.bottleneck.rate_bps,
            Topology::Dumbbell(d) => d.access_rate_bps,
            Topology::Graph(g) => g
                .links
                .iter()
                .find(|l| {
                    name == &format!("{}->{}", l.from, l.to) || name == &format!("{}->{}", l.to, l.from)
                })
                .map_or(0, |l| l.params.rate_bps),
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
