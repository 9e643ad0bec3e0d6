//! `cclab validate --toml`: the resolved scenario written as a scenario file
//! reads back to the same scenario, so it runs exactly as the original does.

use cclab_sim::resolved::to_toml;
use cclab_sim::{parse, parse_in, run_toml, Scenario};
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every scenario file the project ships: golden scenarios, examples, studies.
fn shipped() -> Vec<PathBuf> {
    let root = workspace();
    let mut files = Vec::new();
    for dir in ["crates/cclab-sim/tests/golden", "examples", "python/cclab/studies"] {
        for entry in std::fs::read_dir(root.join(dir)).expect("directory of scenarios") {
            let path = entry.expect("directory entry").path();
            if path.extension().is_some_and(|e| e == "toml") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// Scenarios that use what the shipped files do not: every traffic source and
/// size distribution, reverse flows, graph flows, algorithm parameters,
/// fractional and byte buffers, optional TCP limits, sampling.
const VARIED: &[&str] = &[
    r#"
[run]
duration = "3s"
warmup = "500ms"
sample = "250ms"
seed = 7
[topology]
kind = "dumbbell"
access = { rate = "1Gbps", buffer = "750KB" }
[topology.bottleneck]
rate = "12.5Mbps"
delay = "7.25ms"
buffer = "25%bdp"
loss = 0.0123
reverse_loss = { model = "gilbert_elliott", good_to_bad = 0.002, bad_to_good = 0.25, loss_bad = 0.5 }
[[flows]]
name = "fwd"
count = 2
recovery = "newreno"
recovery_params = { full_ack = "ssthresh" }
rtt = "40ms"
start = "0s..1.5s"
initial_ssthresh = 20.5
max_window = 64
delayed_ack = true
delack_timeout = "100ms"
ecn = true
limited_transmit = true
min_rto = "200ms"
[[flows]]
name = "back"
direction = "reverse"
recovery = "sack"
recovery_params = { rule3 = false }
pacing = "linux"
pacing_params = { ss_ratio = 150 }
rtt = "55ms"
app = { kind = "transfer", size = "1.5MB" }
[[flows]]
name = "web"
rtt = "30ms"
app = { kind = "arrivals", rate = "12.5/s", size = "pareto(mean=33.3KB, shape=1.3)" }
[[flows]]
name = "web2"
rtt = "30ms"
app = { kind = "arrivals", rate = "3/min", size = "exponential(mean=2.5KiB)" }
[[flows]]
name = "voice"
protocol = "udp"
rtt = "25ms"
start = "0.1s"
stop = "2.5s"
app = { kind = "cbr", rate = "64kbps", size = "200B", on = "350ms", off = "650ms" }
"#,
    r#"
name = "chain"
[run]
duration = "2s"
[topology]
kind = "graph"
nodes = ["a", "r", "b"]
[[topology.links]]
from = "a"
to = "r"
rate = "10Mbps"
delay = "1ms"
buffer = "20pkts"
[[topology.links]]
from = "r"
to = "b"
rate = "3Mbps"
delay = "12ms"
buffer = "1.5bdp"
loss = 0.01
[[flows]]
from = "a"
to = "b"
pacing = "rtt"
[[flows]]
from = "b"
to = "a"
protocol = "udp"
app = { kind = "cbr", rate = "1Mbps" }
"#,
    r#"
name = "web"
[run]
duration = "3s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "20Mbps"
delay = "5ms"
[[flows]]
name = "web"
rtt = "20ms..200ms"
app = { kind = "web", load = 0.35 }
[[flows]]
name = "web-back"
direction = "reverse"
rtt = "30ms..90.5ms"
app = { kind = "web", sessions = "3.25/s", pages = "exponential(mean=4.5)", objects = "pareto2(mean=2.5, shape=1.7)", page_gap = "pareto(mean=1.5s, shape=2)", object_gap = "5ms", size = "pareto(mean=12.5KB, shape=1.3)", request_delay = "15ms" }
[[flows]]
name = "web-graph-like"
rtt = "40ms"
app = { kind = "web", load = 0.1, load_of = "7.5Mbps", pages = 3.5, object_gap = "exponential(mean=2.5ms)", size = "exponential(mean=3333.5B)" }
[[flows]]
name = "small"
count = 5
rtt = "20ms..200ms"
max_window = 64
start = "0s..1s"
"#,
    r#"
name = "varying"
[run]
duration = "2s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = [["0s", "20Mbps"], ["500ms", "5Mbps"], ["1.25s", "0bps"], ["1.5s", "7.5Mbps"]]
reverse_rate = { cycle = [["100ms", "10Mbps"], ["50ms", "0bps"]] }
delay = [["0s", "10ms"], ["1s", "25.5ms"]]
buffer_rate = "20Mbps"
[[flows]]
rtt = "60ms"
[[flows]]
name = "back"
direction = "reverse"
rtt = "60ms"
"#,
    r#"
name = "traces"
[run]
duration = "2s"
[topology]
kind = "graph"
nodes = ["a", "r", "b"]
[[topology.links]]
from = "a"
to = "r"
rate = "100Mbps"
delay = "1ms"
buffer = "100pkts"
[[topology.links]]
from = "r"
to = "b"
trace = "../../examples/traces/variable.trace"
reverse_trace = "../../examples/traces/constant-12mbps.trace"
delay = { cycle = [["1s", "20ms"], ["1s", "30ms"]] }
buffer = "0.5bdp"
buffer_rate = "8Mbps"
[[flows]]
from = "a"
to = "b"
[[flows]]
from = "b"
to = "a"
[[flows]]
name = "trace-one-way"
from = "a"
to = "b"
"#,
];

fn round_trip(scenario: &Scenario, origin: &str) -> String {
    let written = to_toml(scenario);
    let again = parse(&written, "other-name").unwrap_or_else(|e| panic!("{origin}: {e}\n{written}"));
    assert_eq!(&again, scenario, "{origin}: the resolved file reads back differently\n{written}");
    // Writing is a fixed point: the resolved file of a resolved file is itself.
    assert_eq!(to_toml(&again), written, "{origin}");
    written
}

#[test]
fn every_shipped_scenario_reads_back_to_itself() {
    let files = shipped();
    assert!(files.len() >= 15, "found only {files:?}");
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let stem = path.file_stem().unwrap().to_str().unwrap();
        let scenario =
            parse_in(&text, stem, path.parent()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        round_trip(&scenario, &path.display().to_string());
    }
}

#[test]
fn every_source_option_and_topology_reads_back_to_itself() {
    for (i, text) in VARIED.iter().enumerate() {
        let scenario = parse(text, "varied").unwrap_or_else(|e| panic!("VARIED[{i}]: {e}"));
        let written = round_trip(&scenario, &format!("VARIED[{i}]"));
        // Defaults the user left out are written out.
        assert!(written.contains("initial_rto = \"1s\""), "{written}");
        assert!(written.contains("queue = \"droptail\""), "{written}");
    }
}

#[test]
fn the_resolved_file_runs_exactly_as_the_original() {
    for text in VARIED {
        let written = to_toml(&parse(text, "varied").unwrap());
        let mut a = serde_json::to_value(run_toml(text, "varied", None).unwrap()).unwrap();
        let mut b = serde_json::to_value(run_toml(&written, "ignored", None).unwrap()).unwrap();
        for v in [&mut a, &mut b] {
            v.as_object_mut().unwrap().remove("wall_s");
        }
        assert_eq!(a, b);
    }
}
