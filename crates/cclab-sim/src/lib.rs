//! cclab-sim: scenarios in, results out.
//!
//! A TOML scenario is parsed and validated into a [`Scenario`]
//! ([`scenario::parse`]), built into a [`Simulation`] for one seed
//! ([`build::build`]), run, and summarised as a [`RunResult`].

pub mod build;
pub mod error;
pub mod protocols;
mod reader;
pub mod registry;
pub mod results;
pub mod scenario;
pub mod sources;
pub mod theory;
pub mod units;

pub use build::{build, FlowInstance, Simulation};
pub use cclab_core::{CancelToken, Cancelled};
pub use error::{RunError, ScenarioError};
pub use results::RunResult;
pub use scenario::{parse, Scenario};

use std::time::Instant;

/// Runs a scenario with `seed` (or the scenario's own `run.seed`).
pub fn run(scenario: &Scenario, seed: Option<u64>) -> Result<RunResult, ScenarioError> {
    let wall = Instant::now();
    let mut sim = build(scenario, seed.unwrap_or(scenario.run.seed))?;
    sim.engine.run();
    sim.check_agents()?;
    Ok(RunResult::collect(&sim, wall.elapsed().as_secs_f64()))
}

/// Parses, validates and runs scenario text.
pub fn run_toml(text: &str, default_name: &str, seed: Option<u64>) -> Result<RunResult, ScenarioError> {
    run(&parse(text, default_name)?, seed)
}

/// Runs a scenario like [`run`] until it finishes or `cancel` is cancelled;
/// a cancelled run stops within milliseconds and returns no result.
pub fn run_cancellable(
    scenario: &Scenario,
    seed: Option<u64>,
    cancel: &CancelToken,
) -> Result<RunResult, RunError> {
    let wall = Instant::now();
    let mut sim = build(scenario, seed.unwrap_or(scenario.run.seed))?;
    sim.engine.run_cancellable(cancel)?;
    sim.check_agents()?;
    Ok(RunResult::collect(&sim, wall.elapsed().as_secs_f64()))
}

/// Parses, validates and runs scenario text until it finishes or `cancel` is cancelled.
pub fn run_toml_cancellable(
    text: &str,
    default_name: &str,
    seed: Option<u64>,
    cancel: &CancelToken,
) -> Result<RunResult, RunError> {
    run_cancellable(&parse(text, default_name)?, seed, cancel)
}

/// Parses and builds a scenario without running it, so every error a run
/// would report up front is reported here.
pub fn validate_toml(text: &str, default_name: &str) -> Result<Scenario, ScenarioError> {
    let scenario = parse(text, default_name)?;
    build(&scenario, scenario.run.seed)?;
    Ok(scenario)
}
