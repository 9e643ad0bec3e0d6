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
pub mod resolved;
pub mod results;
pub mod scenario;
pub mod sources;
pub mod theory;
pub mod units;

pub use build::{build, FlowInstance, Simulation};
pub use error::ScenarioError;
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

/// Parses and builds a scenario without running it, so every error a run
/// would report up front is reported here.
pub fn validate_toml(text: &str, default_name: &str) -> Result<Scenario, ScenarioError> {
    let scenario = parse(text, default_name)?;
    build(&scenario, scenario.run.seed)?;
    Ok(scenario)
}

/// Validates scenario text as [`validate_toml`] does and writes the resolved
/// scenario back as a scenario file that [`run_toml`] accepts (`cclab validate --toml`).
pub fn resolved_toml(text: &str, default_name: &str) -> Result<String, ScenarioError> {
    Ok(resolved::to_toml(&validate_toml(text, default_name)?))
}
