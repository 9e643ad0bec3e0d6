//! Same scenario and seed: identical results. Different seeds: different
//! results whenever anything is random.

use crate::common;

use common::summary;

const RANDOM: &str = r#"
[run]
duration = "15s"
warmup = "2s"
sample = "100ms"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "20Mbps"
delay = "5ms"
buffer = "0.5bdp"
loss = 0.002
reverse_loss = 0.001
[[flows]]
count = 3
recovery = "sack"
rtt = "40ms"
start = "0s..1s"
delayed_ack = true
[[flows]]
name = "back"
direction = "reverse"
recovery = "newreno"
rtt = "100ms"
app = { kind = "transfer", size = "2MB" }
"#;

#[test]
fn same_seed_gives_identical_results() {
    let a = summary(RANDOM, 5);
    let b = summary(RANDOM, 5);
    assert_eq!(a, b);
    assert!(a["timeseries"]["flows"]["cwnd"].as_array().unwrap().len() > 100);
}

#[test]
fn different_seeds_give_different_results_when_something_is_random() {
    let a = summary(RANDOM, 5);
    let b = summary(RANDOM, 6);
    assert_ne!(a["flows"], b["flows"]);
    assert_ne!(a["events"], b["events"]);
}

#[test]
fn random_start_times_alone_make_seeds_differ() {
    let text =
        RANDOM.replace("loss = 0.002", "loss = 0.0").replace("reverse_loss = 0.001", "reverse_loss = 0.0");
    let a = summary(&text, 1);
    let b = summary(&text, 2);
    assert_ne!(a["flows"][0]["start_s"], b["flows"][0]["start_s"]);
}

#[test]
fn a_fully_deterministic_scenario_ignores_the_seed() {
    let text = RANDOM
        .replace("loss = 0.002", "loss = 0.0")
        .replace("reverse_loss = 0.001", "reverse_loss = 0.0")
        .replace("start = \"0s..1s\"", "start = \"0.5s\"");
    let mut a = summary(&text, 1);
    let mut b = summary(&text, 2);
    a.as_object_mut().unwrap().remove("seed");
    b.as_object_mut().unwrap().remove("seed");
    assert_eq!(a, b);
}

#[test]
fn adding_a_flow_does_not_change_another_components_random_stream() {
    // Start times come from per-flow streams: flow "f"[0] keeps its start time
    // when another group is added.
    let one = summary(RANDOM, 3);
    let more = RANDOM.to_string()
        + r#"
[[flows]]
name = "extra"
rtt = "40ms"
start = "0s..1s"
"#;
    let two = summary(&more, 3);
    assert_eq!(one["flows"][0]["start_s"], two["flows"][0]["start_s"]);
}

#[test]
fn releasing_the_packets_left_in_flight_before_collecting_changes_no_result() {
    // A run frees the packets still inside links before it collects its
    // results (`Engine::release_packets`); collecting with them still there
    // gives the same summary. RANDOM ends with packets in flight on every path.
    let mut sim = common::simulation(RANDOM, 5);
    sim.engine.run();
    assert!(sim.engine.packets_in_flight() > 0);
    let mut kept = serde_json::to_value(cclab_sim::RunResult::collect(&sim, 0.0)).unwrap();
    kept.as_object_mut().unwrap().remove("wall_s");
    assert_eq!(kept, summary(RANDOM, 5));
    sim.engine.release_packets();
    assert_eq!((sim.engine.packets_in_flight(), sim.engine.packets_stored()), (0, 0));
}
