//! Helpers shared by the scenario tests (the modules of tests/main.rs).
#![allow(dead_code)]

use cclab_sim::results::TimeSeries;
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
    sim.scenario
        .graph
        .access
        .as_ref()
        .expect("flows on hosts of their own, joined by access links")
        .params
        .rate_bps
}

/// Nanoseconds as milliseconds, for messages.
pub fn ms(t: u64) -> f64 {
    t as f64 / 1e6
}

/// The invariants test's lossy network for an algorithm under test: three
/// transfers of `size` bytes (a partial last segment) on 10 Mbit/s with a
/// 20-packet buffer, 2 % random loss forward and 1 % back, delayed ACKs on
/// even seeds, and `flow_keys` added to the flow group. Checks that every
/// byte is delivered once and in order, every transfer finishes and packets
/// are conserved (`case` names the run in a failure); returns the
/// retransmissions, so a caller can check that recovery was exercised.
pub fn lossy_transfers(flow_keys: &str, size: u64, seed: u64, case: &str) -> u64 {
    let text = format!(
        r#"
[run]
duration = "120s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "10Mbps"
delay = "10ms"
buffer = "20pkts"
loss = 0.02
reverse_loss = 0.01
[[flows]]
count = 3
rtt = "60ms"
start = "0s..2s"
delayed_ack = {delayed}
app = {{ kind = "transfer", size = "{size}B" }}
{flow_keys}
"#,
        delayed = seed.is_multiple_of(2)
    );
    let mut sim = simulation(&text, seed);
    sim.record_deliveries();
    let r = finish(&mut sim);
    for f in &sim.flows {
        assert!(tiles(sim.deliveries(f).unwrap(), size), "{case} seed {seed} flow {}", f.flow_id);
        assert!(sim.sender(f).unwrap().is_finished(), "{case} seed {seed}");
    }
    r.flows.iter().filter_map(|f| f.count("retransmits")).sum()
}

/// `(time_s, value)` of one observed series, by component (flow group or link
/// direction) and metric; empty if nothing recorded it.
pub fn series(ts: &TimeSeries, component: &str, metric: &str) -> Vec<(f64, f64)> {
    let Some(id) = ts.series.iter().position(|s| s.component == component && s.metric == metric) else {
        return Vec::new();
    };
    let m = &ts.metrics;
    (0..m.series.len()).filter(|&i| m.series[i] as usize == id).map(|i| (m.time_s[i], m.value[i])).collect()
}
