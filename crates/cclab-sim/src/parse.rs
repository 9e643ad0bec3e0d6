//! From scenario text to a validated [`Scenario`]: the sections in the order
//! their checks need (`[run]`, the topology, compiled to its graph, the flow
//! groups, then the `[[observe]]` and `[[trace]]` sections that name flows
//! and links).

use crate::error::ScenarioError;
use crate::observe;
use crate::reader::Section;
use crate::scenario::{self, Scenario};
use crate::trace;
use std::path::Path;

/// Parses and validates a scenario. `default_name` is used when the file sets no `name`.
pub fn parse(text: &str, default_name: &str) -> Result<Scenario, ScenarioError> {
    parse_in(text, default_name, None)
}

/// [`parse`] for a scenario file in directory `base`: relative paths in it
/// (trace files) are relative to `base` rather than the working directory.
pub fn parse_in(text: &str, default_name: &str, base: Option<&Path>) -> Result<Scenario, ScenarioError> {
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        ScenarioError::at("", format!("invalid TOML: {}", e.to_string().trim()))
    })?;
    let mut root = Section::new("", &table);
    let name = root.string("name")?.unwrap_or(default_name).to_string();
    let run = match root.table("run")? {
        Some(s) => scenario::parse_run(s)?,
        None => return Err(ScenarioError::at("run", "is required (at least `duration`)")),
    };
    let topology = match root.table("topology")? {
        Some(s) => scenario::parse_topology(s, base)?,
        None => return Err(ScenarioError::at("topology", "is required")),
    };
    let graph = topology.compile();
    let mut flows = Vec::new();
    for (i, section) in root.tables("flows")?.into_iter().enumerate() {
        flows.push(scenario::parse_flow(section, i, &topology, &graph, &run)?);
    }
    scenario::check_capped_hosts(&graph, &mut flows)?;
    let observe_sections = root.tables("observe")?;
    let mut traces = Vec::new();
    for section in root.tables("trace")? {
        traces.push(trace::parse_trace(section, &flows, &run)?);
    }
    root.finish()?;
    if flows.is_empty() {
        return Err(ScenarioError::at("flows", "at least one [[flows]] entry is required"));
    }
    let mut names = std::collections::HashSet::with_capacity(flows.len());
    for (i, f) in flows.iter().enumerate() {
        if !names.insert(f.name.as_str()) {
            return Err(ScenarioError::at(
                format!("flows[{i}].name"),
                format!("\"{}\" is used twice", f.name),
            ));
        }
    }
    // Link names are only worked out if a section names links.
    let mut links = None;
    let mut observe = Vec::with_capacity(observe_sections.len());
    for section in observe_sections {
        observe.push(observe::parse_observe(section, &flows, &mut links, &graph)?);
    }
    Ok(Scenario { name, run, topology, graph, flows, observe, traces })
}
