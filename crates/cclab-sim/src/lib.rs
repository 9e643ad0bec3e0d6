//! cclab-sim: scenarios in, results out.
//!
//! A TOML scenario is parsed and validated into a [`Scenario`]
//! ([`parse()`]; a named topology shape compiled to a graph), built into a [`Simulation`] for one seed
//! ([`build::build`]), run, and summarised as a [`RunResult`].

pub mod build;
pub mod capacity;
pub mod error;
pub mod hosts;
pub mod instance;
pub mod limits;
pub mod observe;
pub mod parse;
pub mod pcap;
pub mod protocols;
mod reader;
pub mod registry;
pub mod resolved;
pub mod results;
pub mod scenario;
pub mod sources;
pub mod table;
pub mod theory;
pub mod topology;
pub mod trace;
pub mod units;

pub use build::{build, build_within, FlowInstance, Simulation};
pub use cclab_core::{CancelToken, Cancelled, HugePageAlloc};
pub use error::{RunError, ScenarioError};
pub use limits::{MemoryEstimate, MemoryLimit};
pub use parse::{parse, parse_in};
pub use results::RunResult;
pub use scenario::Scenario;

use std::time::Instant;

/// Runs a scenario with `seed` (or the scenario's own `run.seed`), within the
/// memory limit of `CCLAB_MEMORY_LIMIT` (default 4 GB).
pub fn run(scenario: &Scenario, seed: Option<u64>) -> Result<RunResult, ScenarioError> {
    let wall = Instant::now();
    let mut sim = build(scenario, seed.unwrap_or(scenario.run.seed))?;
    sim.engine.run();
    sim.check_agents()?;
    sim.engine.release_packets();
    Ok(RunResult::collect(&sim, wall.elapsed().as_secs_f64()))
}

/// Parses, validates and runs scenario text.
pub fn run_toml(text: &str, default_name: &str, seed: Option<u64>) -> Result<RunResult, ScenarioError> {
    run(&parse(text, default_name)?, seed)
}

/// Runs a scenario like [`run`], refusing it if its memory estimate is above
/// `limit`, or its run-time estimate above [`limits::RUN_TIME_LIMIT_S`] unless
/// `allow_long`, until it finishes or `cancel` is cancelled; a cancelled run
/// stops within milliseconds and returns no result.
pub fn run_cancellable(
    scenario: &Scenario,
    seed: Option<u64>,
    limit: MemoryLimit,
    allow_long: bool,
    cancel: &CancelToken,
) -> Result<RunResult, RunError> {
    let wall = Instant::now();
    // Memory first, as `validate` reports it; both before anything is built.
    limits::check(scenario, limit)?;
    limits::check_run_time(scenario, allow_long)?;
    let mut sim = build_within(scenario, seed.unwrap_or(scenario.run.seed), limit)?;
    sim.engine.run_cancellable(cancel)?;
    sim.check_agents()?;
    sim.engine.release_packets();
    Ok(RunResult::collect(&sim, wall.elapsed().as_secs_f64()))
}

/// Parses, validates and runs scenario text like [`run_cancellable`].
pub fn run_toml_cancellable(
    text: &str,
    default_name: &str,
    seed: Option<u64>,
    limit: MemoryLimit,
    allow_long: bool,
    cancel: &CancelToken,
) -> Result<RunResult, RunError> {
    run_cancellable(&parse(text, default_name)?, seed, limit, allow_long, cancel)
}

/// Parses and builds a scenario without running it, so every error a run
/// would report up front is reported here (the memory limit included).
pub fn validate_toml(text: &str, default_name: &str) -> Result<Scenario, ScenarioError> {
    validate_toml_within(text, default_name, MemoryLimit::from_env()?)
}

/// [`validate_toml`] with an explicit memory limit.
pub fn validate_toml_within(
    text: &str,
    default_name: &str,
    limit: MemoryLimit,
) -> Result<Scenario, ScenarioError> {
    validate_toml_for_run(text, default_name, limit, true)
}

/// [`validate_toml_within`], also refusing a scenario whose run would take
/// above [`limits::RUN_TIME_LIMIT_S`] of CPU unless `allow_long`, as a run
/// does: memory first, then run time, both before anything is built.
pub fn validate_toml_for_run(
    text: &str,
    default_name: &str,
    limit: MemoryLimit,
    allow_long: bool,
) -> Result<Scenario, ScenarioError> {
    let scenario = parse(text, default_name)?;
    limits::check(&scenario, limit)?;
    limits::check_run_time(&scenario, allow_long)?;
    build_within(&scenario, scenario.run.seed, limit)?;
    Ok(scenario)
}

/// Parses scenario text and estimates the memory a run of it needs.
pub fn estimate_toml(text: &str, default_name: &str) -> Result<MemoryEstimate, ScenarioError> {
    Ok(limits::estimate(&parse(text, default_name)?))
}

/// Parses scenario text and estimates the CPU a run of it needs; refuses it
/// above [`limits::RUN_TIME_LIMIT_S`] unless `allow_long`.
pub fn run_time_toml(
    text: &str,
    default_name: &str,
    allow_long: bool,
) -> Result<limits::RunTimeEstimate, ScenarioError> {
    limits::check_run_time(&parse(text, default_name)?, allow_long)
}

/// Validates scenario text as [`validate_toml_for_run`] does and writes the resolved
/// scenario back as a scenario file that [`run_toml`] accepts (`cclab validate --toml`).
pub fn resolved_toml(
    text: &str,
    default_name: &str,
    limit: MemoryLimit,
    allow_long: bool,
) -> Result<String, ScenarioError> {
    Ok(resolved::to_toml(&validate_toml_for_run(text, default_name, limit, allow_long)?))
}
