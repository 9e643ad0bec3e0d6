//! Helpers shared by the scenario tests. Each test file is its own crate and
//! uses only some of them, hence the `dead_code` allowance.
#![allow(dead_code)]

use cclab_sim::scenario::Topology;
use cclab_sim::{build, parse, run_toml, RunResult, Simulation};
use serde_json::Value;

/// True if the logged deliveries tile `[0, total)` in order, each byte once.
pub fn tiles(log: &[(u64, u64)], total: u64) -> bool {
    let mut next = 0;
    for &(a, b) in log {
        if a != next || b <= a {
            return false;
        }
        next = b;
    }
    next == total
}

/// The JSON summary of a run, without the wall-clock time (which differs between runs).
pub fn summary(text: &str, seed: u64) -> Value {
    let mut v = serde_json::to_value(run_toml(text, "t", Some(seed)).unwrap()).unwrap();
    v.as_object_mut().unwrap().remove("wall_s");
    v
}

/// A simulation built from scenario text, ready to instrument and run.
pub fn simulation(text: &str, seed: u64) -> Simulation {
    let scenario = parse(text, "t").unwrap_or_else(|e| panic!("{e}\n{text}"));
    build(&scenario, seed).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs an instrumented simulation to its end and collects its results.
pub fn finish(sim: &mut Simulation) -> RunResult {
    sim.engine.run();
    sim.check_agents().unwrap();
    sim.check_conservation().unwrap();
    RunResult::collect(sim, 0.0)
}

/// The access link rate of a dumbbell scenario.
pub fn access_rate_bps(sim: &Simulation) -> u64 {
    match &sim.scenario.topology {
        Topology::Dumbbell(d) => d.access_rate_bps,
        Topology::Graph(_) => panic!("not a dumbbell"),
    }
}

/// Nanoseconds as milliseconds, for messages.
pub fn ms(t: u64) -> f64 {
    t as f64 / 1e6
}
