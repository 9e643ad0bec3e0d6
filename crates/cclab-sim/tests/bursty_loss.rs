//! Two-state (Gilbert-Elliott) loss on a chosen link direction, as a scenario
//! declares it: the loss it produces, and why it matters to TCP.

use crate::common;

use common::summary;

const GILBERT: &str =
    r#"{ model = "gilbert_elliott", good_to_bad = 0.005, bad_to_good = 0.2, loss_bad = 0.8 }"#;
/// The model's long-run loss: 0.005 / 0.205 x 0.8.
const GILBERT_MEAN: f64 = 0.005 / 0.205 * 0.8;

fn dumbbell(loss: &str, flow: &str, duration: &str) -> String {
    format!(
        r#"
[run]
duration = "{duration}"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "10Mbps"
delay = "20ms"
buffer = "1bdp"
loss = {loss}
[[flows]]
name = "f"
rtt = "100ms"
{flow}
"#
    )
}

/// (losses, arrivals) on the lossy direction, and the flow's goodput in bit/s.
fn outcome(text: &str, seed: u64) -> (f64, f64, f64) {
    let v = summary(text, seed);
    let link = &v["links"][0];
    assert_eq!(link["name"], "left->right");
    let number = |x: &serde_json::Value| x.as_f64().expect("a number");
    (number(&link["losses"]), number(&link["arrivals"]), number(&v["flows"][0]["goodput_bps"]))
}

#[test]
fn a_constant_rate_stream_loses_the_models_long_run_share_and_only_in_one_direction() {
    // 5 Mbit/s of 1000-byte packets for 60 s: 37 500 packets, about 185 bad
    // periods of 5 packets. Over five seeds the pooled loss fraction is within
    // 10 % of 1.95 % (its standard error, with the bursts, is about 3.5 %).
    let udp = r#"protocol = "udp"
app = { kind = "cbr", rate = "5Mbps", size = "1000B" }"#;
    let (mut lost, mut sent) = (0.0, 0.0);
    for seed in 1..=5 {
        let (l, a, _) = outcome(&dumbbell(GILBERT, udp, "60s"), seed);
        lost += l;
        sent += a;
        let reverse = &summary(&dumbbell(GILBERT, udp, "1s"), seed)["links"][1];
        assert_eq!(reverse["losses"], 0, "the reverse direction has no loss model");
    }
    let fraction = lost / sent;
    eprintln!("loss fraction {fraction:.5} (model {GILBERT_MEAN:.5})");
    assert!((fraction / GILBERT_MEAN - 1.0).abs() < 0.10, "loss fraction {fraction} vs {GILBERT_MEAN}");
}

#[test]
fn at_the_same_mean_loss_bursty_loss_costs_tcp_less_than_independent_loss() {
    // Losses that come in bursts fall into fewer windows, so a SACK flow halves
    // its window fewer times. Measured over six seeds of 60 s: 0.65 Mbit/s on
    // average with Bernoulli 1.95 %, 1.17 Mbit/s with Gilbert-Elliott of the
    // same mean (1.8x); the test asks for 1.2x.
    let sack = r#"recovery = "sack""#;
    let mean_goodput = |loss: &str| -> f64 {
        (1..=6).map(|seed| outcome(&dumbbell(loss, sack, "60s"), seed).2).sum::<f64>() / 6.0
    };
    let bernoulli = mean_goodput(&format!("{GILBERT_MEAN}"));
    let bursty = mean_goodput(GILBERT);
    eprintln!("mean goodput: bursty {bursty:.0} bit/s, independent {bernoulli:.0} bit/s");
    assert!(bursty > 1.2 * bernoulli, "bursty {bursty:.0} bit/s vs independent {bernoulli:.0} bit/s");
}
