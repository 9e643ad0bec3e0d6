//! Bad input: each mistake gets one message that names the key path.

use cclab_sim::{validate_toml, ScenarioError};

const BASE: &str = r#"
[run]
duration = "20s"
warmup = "5s"

[topology]
kind = "dumbbell"
access = { rate = "1Gbps" }

[topology.bottleneck]
rate = "100Mbps"
delay = "10ms"
buffer = "1bdp"

[[flows]]
name = "bulk"
recovery = "sack"
cc = "reno"
rtt = "40ms"
"#;

const GRAPH: &str = r#"
[run]
duration = "10s"

[topology]
kind = "graph"
nodes = ["a", "r", "b", "island"]

[[topology.links]]
from = "a"
to = "r"
rate = "10Mbps"
delay = "5ms"
buffer = "50pkts"

[[topology.links]]
from = "r"
to = "b"
rate = "10Mbps"
delay = "5ms"
buffer = "50pkts"

"#;

fn graph_with_flow(flow: &str) -> String {
    format!("{GRAPH}\n[[flows]]\n{flow}\n")
}

fn error_of(text: &str) -> ScenarioError {
    match validate_toml(text, "t") {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(e) => e,
    }
}

fn expect(text: &str, path: &str, fragment: &str) {
    let e = error_of(text);
    assert_eq!(e.path, path, "message: {e}");
    assert!(e.to_string().contains(fragment), "\"{e}\" lacks \"{fragment}\"");
}

#[test]
fn the_base_scenarios_are_valid() {
    validate_toml(BASE, "t").unwrap();
    validate_toml(&graph_with_flow("from = \"a\"\nto = \"b\""), "t").unwrap();
}

#[test]
fn unknown_keys_are_named_with_a_suggestion() {
    expect(
        &BASE.replace("recovery = \"sack\"", "reocvery = \"sack\""),
        "flows[0].reocvery",
        "unknown key; did you mean \"recovery\"?",
    );
    expect(&BASE.replace("warmup", "warmpu"), "run.warmpu", "did you mean \"warmup\"?");
    expect(&format!("colour = 1\n{BASE}"), "colour", "unknown key");
    expect(
        &BASE.replace("delay = \"10ms\"", "delay = \"10ms\"\nqueue_limit = 3"),
        "topology.bottleneck.queue_limit",
        "unknown key",
    );
}

#[test]
fn bad_units_and_types() {
    expect(
        &BASE.replace("\"100Mbps\"", "\"100MBps\""),
        "topology.bottleneck.rate",
        "unknown rate unit \"MBps\"",
    );
    expect(&BASE.replace("\"10ms\"", "\"10\""), "topology.bottleneck.delay", "no unit");
    expect(&BASE.replace("duration = \"20s\"", "duration = 20"), "run.duration", "no unit");
    expect(&BASE.replace("\"40ms\"", "\"forty\""), "flows[0].rtt", "does not start with a number");
    expect(&BASE.replace("\"1bdp\"", "\"1parsec\""), "topology.bottleneck.buffer", "unknown buffer unit");
    expect(
        &BASE.replace("name = \"bulk\"", "name = 7"),
        "flows[0].name",
        "expected a string, found an integer",
    );
}

#[test]
fn zero_or_negative_rates_and_durations() {
    expect(&BASE.replace("\"100Mbps\"", "\"0Mbps\""), "topology.bottleneck.rate", "positive");
    expect(&BASE.replace("\"100Mbps\"", "\"-5Mbps\""), "topology.bottleneck.rate", "positive");
    expect(&BASE.replace("duration = \"20s\"", "duration = \"0s\""), "run.duration", "greater than zero");
    expect(&BASE.replace("\"10ms\"", "\"-10ms\""), "topology.bottleneck.delay", "negative");
    expect(&BASE.replace("\"1Gbps\"", "\"0bps\""), "topology.access.rate", "positive");
}

#[test]
fn warmup_must_be_shorter_than_the_run() {
    expect(&BASE.replace("warmup = \"5s\"", "warmup = \"30s\""), "run.warmup", "shorter than run.duration");
    expect(&BASE.replace("warmup = \"5s\"", "warmup = \"20s\""), "run.warmup", "shorter than run.duration");
}

#[test]
fn a_buffer_under_one_packet() {
    expect(&BASE.replace("\"1bdp\"", "\"0pkts\""), "topology.bottleneck.buffer", "under one packet");
    expect(&BASE.replace("\"1bdp\"", "\"500B\""), "topology.bottleneck.buffer", "under one packet");
    expect(&BASE.replace("\"1bdp\"", "\"0.001bdp\""), "topology.bottleneck.buffer", "under one packet");
}

#[test]
fn rtt_shorter_than_twice_the_bottleneck_delay() {
    expect(&BASE.replace("\"40ms\"", "\"15ms\""), "flows[0].rtt", "shorter than twice the bottleneck delay");
}

#[test]
fn unknown_algorithms_suggest_the_closest() {
    expect(
        &BASE.replace("recovery = \"sack\"", "recovery = \"sackk\""),
        "flows[0].recovery",
        "unknown loss recovery algorithm \"sackk\"; did you mean \"sack\"?",
    );
    expect(&BASE.replace("cc = \"reno\"", "cc = \"rneo\""), "flows[0].cc", "did you mean \"reno\"?");
    expect(
        &BASE.replace("kind = \"dumbbell\"", "kind = \"dumbell\""),
        "topology.kind",
        "did you mean \"dumbbell\"?",
    );
    expect(
        &BASE.replace("cc = \"reno\"", "cc = \"reno\"\nprotocol = \"tpc\""),
        "flows[0].protocol",
        "did you mean \"tcp\"?",
    );
}

#[test]
fn graph_flows_need_a_route_both_ways() {
    expect(
        &graph_with_flow("from = \"a\"\nto = \"island\""),
        "flows[0].to",
        "no route from \"a\" to \"island\"",
    );
    expect(&graph_with_flow("from = \"a\"\nto = \"c\""), "flows[0].to", "unknown node \"c\"");
    expect(
        &graph_with_flow("from = \"a\"\nto = \"b\"\nrtt = \"40ms\""),
        "flows[0].rtt",
        "only applies to a dumbbell",
    );
    expect(
        &graph_with_flow("from = \"a\"\nto = \"b\"").replace("to = \"b\"\nrate", "to = \"b2\"\nrate"),
        "topology.links[1].to",
        "unknown node \"b2\"; did you mean \"b\"?",
    );
}

#[test]
fn structural_problems() {
    expect(
        "[run]\nduration = \"1s\"\n[topology]\nkind = \"dumbbell\"\n",
        "topology.bottleneck",
        "is required",
    );
    expect(&BASE.replace("[[flows]]", "[[flowz]]"), "flowz", "unknown key; did you mean \"flows\"?");
    expect("this is not toml", "", "invalid TOML");
    expect(
        &BASE.replace("rtt = \"40ms\"", "rtt = \"40ms\"\nstart = \"2s..1s\""),
        "flows[0].start",
        "ends before it starts",
    );
    expect(&BASE.replace("rtt = \"40ms\"", "rtt = \"40ms\"\nloss = 0.1"), "flows[0].loss", "unknown key");
    expect(
        &BASE.replace("buffer = \"1bdp\"", "buffer = \"1bdp\"\nloss = 1.5"),
        "topology.bottleneck.loss",
        "out of range",
    );
    expect(&BASE.replace("rtt = \"40ms\"", "rtt = \"40ms\"\ncount = 0"), "flows[0].count", "out of range");
    expect(&format!("{BASE}\n[[flows]]\nname = \"bulk\"\nrtt = \"40ms\"\n"), "flows[1].name", "used twice");
    expect(
        &BASE.replace("rtt = \"40ms\"", "rtt = \"40ms\"\napp = { kind = \"transfer\" }"),
        "flows[0].app.size",
        "is required",
    );
    expect(
        &BASE.replace("rtt = \"40ms\"", "rtt = \"40ms\"\ndelack_timeout = \"500ms\""),
        "flows[0].delack_timeout",
        "RFC 1122",
    );
}

#[test]
fn algorithm_parameters_are_checked_against_the_algorithm() {
    let with = |params: &str| BASE.replace("rtt = \"40ms\"", &format!("rtt = \"40ms\"\n{params}"));
    validate_toml(&with("recovery_params = { rule3 = false, clear_on_timeout = false }"), "t").unwrap();
    expect(
        &with("recovery_params = { rule_3 = false }"),
        "flows[0].recovery_params.rule_3",
        "sack has no parameter \"rule_3\"; did you mean \"rule3\"?",
    );
    expect(
        &with("recovery_params = { rule3 = 1 }"),
        "flows[0].recovery_params.rule3",
        "expected true or false",
    );
    expect(
        &with("cc_params = { beta = 0.5 }"),
        "flows[0].cc_params.beta",
        "reno has no parameter \"beta\" (it has: none)",
    );
    let newreno = with("recovery_params = { full_ack = \"ssthresh\" }")
        .replace("recovery = \"sack\"", "recovery = \"newreno\"");
    validate_toml(&newreno, "t").unwrap();
    expect(
        &newreno.replace("\"ssthresh\"", "\"sshtresh\""),
        "flows[0].recovery_params.full_ack",
        "\"sshtresh\" is not one of flight, ssthresh; did you mean \"ssthresh\"?",
    );
}
