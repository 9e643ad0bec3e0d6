//! What a run records as time series: `run.sample` (the default metrics of
//! every flow and link) and `[[observe]]` sections (chosen flow groups, links
//! and metrics, at their own interval).
//!
//! The metrics a component can publish are known before the run from the
//! descriptors: a flow's protocol lists the sender's own metrics, its
//! congestion control, loss recovery and pacing list theirs (recorded under
//! `cc.`, `recovery.` and `pacing.`), and the engine adds what it measures
//! itself ([`cclab_core::stats::FLOW_METRICS`], [`cclab_core::stats::LINK_METRICS`]).
//! So a selection is checked, and its memory estimated, before anything runs.

use crate::error::{suggestion, ScenarioError};
use crate::instance::FlowInstance;
use crate::protocols;
use crate::reader::Section;
pub use crate::scenario::Observe;
use crate::scenario::{FlowGroup, Scenario};
use crate::topology::{direction_names, FlowEnds, Graph};
use cclab_core::queue::fq_codel::FLOW_BACKLOG;
use cclab_core::stats::{DEPARTED_PER_FLOW, FLOW_METRICS, LINK_DEFAULT_METRICS, LINK_METRICS};

/// The link metrics recorded once per long-lived flow, not by the link's own sample.
const PER_FLOW: [&str; 2] = [DEPARTED_PER_FLOW, FLOW_BACKLOG.name];
use cclab_transport::registry;
use cclab_wire::metrics::glob;
use cclab_wire::{MetricDesc, Time};
use serde::Serialize;
use toml::Value;

/// A metric a flow of this group publishes, with its full name (`cc.estimate`).
#[derive(Clone, Debug, PartialEq)]
pub struct FlowMetric {
    pub name: String,
    pub desc: MetricDesc,
}

/// Whether a group has long-lived connections whose state can be sampled;
/// a traffic source's connections come and go and are reported per transfer.
pub fn observable(group: &FlowGroup) -> bool {
    !group.app.opens_connections()
}

/// Everything a flow of `group` publishes, in publishing order.
pub fn flow_metrics(group: &FlowGroup) -> Vec<FlowMetric> {
    let plain = |d: &MetricDesc| FlowMetric { name: d.name.to_string(), desc: *d };
    let mut all: Vec<FlowMetric> =
        protocols::find(&group.protocol).map(|p| p.metrics.iter().map(plain).collect()).unwrap_or_default();
    if let Some(a) = &group.algorithms {
        let send_buffer = a.send_buffer.as_ref().and_then(|s| registry::send_buffer_policy(&s.policy));
        let parts: [(&str, Option<&'static [MetricDesc]>); 4] = [
            ("cc.", registry::congestion_control(&a.cc).map(|d| d.metrics)),
            ("recovery.", registry::loss_recovery(&a.recovery).map(|d| d.metrics)),
            ("pacing.", registry::pacing(&a.pacing).map(|d| d.metrics)),
            ("send_buffer.", send_buffer.map(|d| d.metrics)),
        ];
        if a.send_buffer.is_some() {
            all.extend(cclab_transport::tcp::sender::SEND_BUFFER_METRICS.iter().map(plain));
        }
        for (prefix, list) in parts {
            for d in list.unwrap_or_default() {
                all.push(FlowMetric { name: format!("{prefix}{}", d.name), desc: *d });
            }
        }
    }
    if let Some(u) = &group.udt {
        for d in registry::udt_congestion_control(&u.cc).map(|d| d.metrics).unwrap_or_default() {
            all.push(FlowMetric { name: format!("cc.{}", d.name), desc: *d });
        }
    }
    all.extend(FLOW_METRICS.iter().map(plain));
    all
}

/// What `run.sample` records of a flow: its protocol's own metrics and the
/// engine's, not its algorithms' (those are opt-in through `[[observe]]`).
pub fn default_flow_metrics(group: &FlowGroup) -> Vec<FlowMetric> {
    flow_metrics(group).into_iter().filter(|m| !m.name.contains('.')).collect()
}

/// What `run.sample` records of a link.
pub fn default_link_metrics() -> impl Iterator<Item = &'static MetricDesc> {
    LINK_METRICS.iter().filter(|d| LINK_DEFAULT_METRICS.contains(&d.name))
}

/// The queue discipline of the link direction `name` (every direction of a
/// link has its discipline; a name no graph link has is an access link's).
pub fn link_queue<'a>(graph: &'a Graph, name: &str) -> &'a str {
    match (graph.link_direction(name), &graph.access) {
        (Some((l, _)), _) => &l.params.queue,
        (None, Some(access)) => &access.params.queue,
        (None, None) => cclab_core::queue::droptail::DESCRIPTOR.name,
    }
}

/// What a link with discipline `queue` publishes: every link's metrics, then its discipline's own.
pub fn link_metrics(queue: &str) -> Vec<&'static MetricDesc> {
    let own = cclab_core::queue::find(queue).map_or(&[][..], |d| d.metrics);
    let mut all: Vec<&'static MetricDesc> = LINK_METRICS.iter().collect();
    all.extend(own.iter().filter(|d| !LINK_METRICS.iter().any(|l| l.name == d.name)));
    all
}

/// The names of every link direction, in the order the builder creates them:
/// the graph's links, then the access links of every flow instance with hosts of its own.
pub fn link_names(graph: &Graph, flows: &[FlowGroup]) -> Vec<String> {
    let mut names: Vec<String> = graph.links.iter().flat_map(|l| direction_names(&l.from, &l.to)).collect();
    for group in flows.iter().filter(|g| g.ends.own_hosts) {
        for k in 0..group.count {
            let (snd, rcv) = FlowEnds::host_names(&group.name, k);
            names.extend(direction_names(&snd, &group.ends.sender));
            names.extend(direction_names(&group.ends.receiver, &rcv));
        }
    }
    names
}

/// Names a message lists in full: a flow's and a link's metrics together are
/// fewer; a dumbbell's links (four access links per flow instance) may be many more.
const SHOWN: usize = 24;

/// A list of names for a message, cut short after [`SHOWN`].
fn listing<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let all: Vec<&str> = names.collect();
    let mut text = all.iter().take(SHOWN).copied().collect::<Vec<_>>().join(", ");
    if all.len() > SHOWN {
        text.push_str(&format!(", ... ({} in all)", all.len()));
    }
    text
}

fn strings<'a>(s: &mut Section<'a>, key: &'static str) -> Result<Option<Vec<&'a str>>, ScenarioError> {
    match s.get(key) {
        None => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_str().ok_or_else(|| s.error(key, "expected an array of strings")))
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(Value::String(one)) => Ok(Some(vec![one.as_str()])),
        Some(_) => Err(s.error(key, "expected an array of strings")),
    }
}

/// Names among `all` that the patterns select, in `all`'s order; a pattern
/// that selects nothing is an error naming the key and the valid names.
fn select(
    base: &str,
    key: &str,
    what: &str,
    patterns: &[&str],
    all: &[&str],
) -> Result<Vec<String>, ScenarioError> {
    for p in patterns {
        if !all.iter().any(|n| glob(p, n)) {
            let hint = if p.contains('*') { String::new() } else { suggestion(p, all.iter().copied()) };
            return Err(ScenarioError::at(
                format!("{base}.{key}"),
                format!("unknown {what} \"{p}\"{hint} (one of {})", listing(all.iter().copied())),
            ));
        }
    }
    let mut chosen: Vec<String> = Vec::new();
    for n in all {
        if patterns.iter().any(|p| glob(p, n)) && !chosen.iter().any(|c| c == n) {
            chosen.push((*n).to_string());
        }
    }
    Ok(chosen)
}

/// Reads one `[[observe]]` section against the scenario's flow groups and links.
pub fn parse_observe(
    mut s: Section,
    flows: &[FlowGroup],
    links: &mut Option<Vec<String>>,
    graph: &Graph,
) -> Result<Observe, ScenarioError> {
    let flow_patterns = strings(&mut s, "flows")?.unwrap_or_default();
    let link_patterns = strings(&mut s, "links")?.unwrap_or_default();
    if flow_patterns.is_empty() && link_patterns.is_empty() {
        return Err(s.error("flows", "set flows and/or links: what to observe"));
    }
    let metric_patterns = strings(&mut s, "metrics")?.unwrap_or_else(|| vec!["*"]);
    if metric_patterns.is_empty() {
        return Err(s.error("metrics", "must name at least one metric (\"*\" for all)"));
    }
    let every = s.positive_duration("every")?.ok_or_else(|| s.error("every", "is required"))?;
    let on_change = s.bool("on_change")?.unwrap_or(false);
    let base = s.path().to_string();
    s.finish()?;

    let observable_names: Vec<&str> =
        flows.iter().filter(|g| observable(g)).map(|g| g.name.as_str()).collect();
    for p in &flow_patterns {
        if let Some(g) = flows.iter().find(|g| g.name == *p && !observable(g)) {
            return Err(ScenarioError::at(
                format!("{base}.flows"),
                format!(
                    "\"{}\" is a traffic source: its connections come and go, see the transfers table",
                    g.name
                ),
            ));
        }
    }
    let chosen_flows = select(&base, "flows", "flow group", &flow_patterns, &observable_names)?;
    let chosen_links = if link_patterns.is_empty() {
        Vec::new()
    } else {
        let all = links.get_or_insert_with(|| link_names(graph, flows));
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        select(&base, "links", "link", &link_patterns, &all)?
    };

    // The metrics the chosen flows and links have, without repeats.
    let mut available: Vec<String> = Vec::new();
    let mut add = |name: &str| {
        if !available.iter().any(|a| a == name) {
            available.push(name.to_string());
        }
    };
    for g in flows.iter().filter(|g| chosen_flows.contains(&g.name)) {
        flow_metrics(g).iter().for_each(|m| add(&m.name));
    }
    for link in &chosen_links {
        link_metrics(link_queue(graph, link)).iter().for_each(|d| add(d.name));
    }
    let available: Vec<&str> = available.iter().map(String::as_str).collect();
    let metrics = select(&base, "metrics", "metric", &metric_patterns, &available)?;
    Ok(Observe { flows: chosen_flows, links: chosen_links, metrics, every, on_change })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_listings_are_cut_short() {
        let names: Vec<String> = (0..30).map(|i| format!("l{i}")).collect();
        let text = listing(names.iter().map(String::as_str));
        assert!(text.ends_with("l23, ... (30 in all)"), "{text}");
        assert_eq!(listing(["a", "b"].into_iter()), "a, b");
    }
}

/// One recorded series, as the result lists it: the run's metadata says what
/// was recorded before a row is read.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SeriesInfo {
    /// What asked for it: `run.sample` or `observe[i]`.
    pub selection: String,
    /// `flow` or `link`.
    pub kind: &'static str,
    /// The flow group's name, or the link's (`left->right`).
    pub component: String,
    /// The flow instance within its group (null for a link).
    pub instance: Option<u32>,
    pub flow_id: Option<u32>,
    pub metric: String,
    pub unit: &'static str,
    pub every_s: f64,
}

/// The engine's observations for a built simulation, and the table of the
/// series they record (a row's `series` indexes it). `run.sample`, if set, is
/// observation 0.
pub fn plan(
    scenario: &Scenario,
    flows: &[FlowInstance],
    link_names: &[&str],
) -> (Vec<cclab_core::Observation>, Vec<SeriesInfo>) {
    use cclab_core::{Observation, Source, Watch};
    let mut observations = Vec::new();
    let mut series: Vec<SeriesInfo> = Vec::new();
    let mut watch = |source: Source,
                     component: &str,
                     instance: Option<u32>,
                     flow_id: Option<u32>,
                     wanted: Vec<(String, &'static str)>,
                     selection: &str,
                     every: Time| {
        let metrics = wanted
            .into_iter()
            .map(|(metric, unit)| {
                series.push(SeriesInfo {
                    selection: selection.to_string(),
                    kind: if instance.is_some() { "flow" } else { "link" },
                    component: component.to_string(),
                    instance,
                    flow_id,
                    metric: metric.clone(),
                    unit,
                    every_s: cclab_wire::time::to_secs_f64(every),
                });
                (metric, (series.len() - 1) as u32)
            })
            .collect();
        Watch::new(source, metrics)
    };
    if let Some(every) = scenario.run.sample {
        let mut watches = Vec::new();
        for f in flows {
            let group = &scenario.flows[f.group];
            let Some(sender) = f.sender.filter(|_| observable(group)) else { continue };
            let wanted = default_flow_metrics(group).into_iter().map(|m| (m.name, m.desc.unit)).collect();
            let src = Source::Endpoint(sender);
            watches.push(watch(
                src,
                &group.name,
                Some(f.index),
                Some(f.flow_id),
                wanted,
                "run.sample",
                every,
            ));
        }
        for (id, name) in link_names.iter().enumerate() {
            let wanted = default_link_metrics().map(|d| (d.name.to_string(), d.unit)).collect();
            watches.push(watch(Source::Link(id as u32), name, None, None, wanted, "run.sample", every));
        }
        observations.push(Observation::new(every, watches));
    }
    for (i, o) in scenario.observe.iter().enumerate() {
        let selection = format!("observe[{i}]");
        let mut watches = Vec::new();
        for f in flows {
            let group = &scenario.flows[f.group];
            if !o.flows.contains(&group.name) {
                continue;
            }
            let Some(sender) = f.sender else { continue };
            let wanted: Vec<(String, &'static str)> = flow_metrics(group)
                .into_iter()
                .filter(|m| o.metrics.contains(&m.name))
                .map(|m| (m.name, m.desc.unit))
                .collect();
            if !wanted.is_empty() {
                let src = Source::Endpoint(sender);
                watches.push(watch(
                    src,
                    &group.name,
                    Some(f.index),
                    Some(f.flow_id),
                    wanted,
                    &selection,
                    o.every,
                ));
            }
        }
        let per_flow = o.metrics.iter().any(|m| m == DEPARTED_PER_FLOW);
        for (id, name) in link_names.iter().enumerate() {
            let metrics = link_metrics(link_queue(&scenario.graph, name));
            let backlog = metrics.iter().any(|d| d.name == FLOW_BACKLOG.name)
                && o.metrics.iter().any(|m| m == FLOW_BACKLOG.name);
            let wanted: Vec<(String, &'static str)> = metrics
                .into_iter()
                .filter(|d| !PER_FLOW.contains(&d.name) && o.metrics.iter().any(|m| m == d.name))
                .map(|d| (d.name.to_string(), d.unit))
                .collect();
            if (wanted.is_empty() && !per_flow && !backlog) || !o.links.iter().any(|l| l == name) {
                continue;
            }
            let mut link =
                watch(Source::Link(id as u32), name, None, None, wanted.clone(), &selection, o.every);
            // One series per long-lived flow, whether or not its route crosses this link.
            let long_lived =
                || flows.iter().filter(|f| f.sender.is_some() && observable(&scenario.flows[f.group]));
            let mut one = |f: &FlowInstance, metric: &str, unit: &'static str| {
                let wanted = vec![(metric.to_string(), unit)];
                let one =
                    watch(Source::Link(id as u32), name, None, Some(f.flow_id), wanted, &selection, o.every);
                one.metrics.iter().map(|&(_, series)| (f.flow_id, series)).collect::<Vec<_>>()
            };
            if per_flow {
                for f in long_lived() {
                    link.per_flow.extend(one(f, DEPARTED_PER_FLOW, "bytes"));
                }
            }
            if backlog {
                for f in long_lived() {
                    link.flow_backlog.extend(one(f, FLOW_BACKLOG.name, FLOW_BACKLOG.unit));
                }
            }
            watches.push(link);
        }
        let mut observation = Observation::new(o.every, watches);
        observation.on_change = o.on_change;
        observations.push(observation);
    }
    (observations, series)
}
