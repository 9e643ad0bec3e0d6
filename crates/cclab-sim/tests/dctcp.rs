//! DCTCP over a step-marking bottleneck in whole simulations: the queue held
//! near the marking threshold K at full utilisation (RFC 8257 §3.1, the
//! DCTCP paper's §3.3 analysis), AccECN and classic feedback, and the
//! scenario rules for ECN.

use crate::common;

use cclab_sim::results::LinkResult;
use cclab_sim::{run_toml, RunResult};

/// `count` DCTCP flows over a 1 Gbit/s bottleneck with a 250 us base RTT
/// (the DCTCP paper's setting: 1 Gbit/s, K = 20), a 400-packet buffer and
/// step marking at `k`.
fn step_dumbbell(count: u32, k: u32, flow_keys: &str) -> String {
    format!(
        r#"
[run]
duration = "3s"
warmup = "1s"
[topology]
kind = "dumbbell"
access = {{ rate = "10Gbps" }}
[topology.bottleneck]
rate = "1Gbps"
delay = "25us"
buffer = "400pkts"
queue = "step"
queue_params = {{ threshold = {k} }}
[[flows]]
name = "dctcp"
count = {count}
cc = "dctcp"
recovery = "sack"
rtt = "250us"
start = "0s..10ms"
{flow_keys}
"#
    )
}

fn bottleneck(r: &RunResult) -> &LinkResult {
    r.links.iter().find(|l| l.name == "left->right").expect("bottleneck link")
}

/// The DCTCP paper (§3.3) puts the queue's sawtooth between Q_max = K + N
/// and Q_max - A, with A = (1/2) sqrt(2 N (C x RTT + K)) packets: for N = 2,
/// K = 20 and a BDP of 30 packets (1 Gbit/s x 250 us / 1040 bytes), about
/// 15 to 22 packets. The mean queue must lie in [K - A - 5, K + N + 5]
/// (the model neglects the ACKs' and the window's granularity), the link
/// stay above 95 % utilised (the sawtooth never empties the queue), and no
/// packet be lost (marks, not drops, control the window).
#[test]
fn dctcp_holds_the_queue_near_k_at_full_utilisation() {
    let k: f64 = 20.0;
    let r = run_toml(&step_dumbbell(2, 20, ""), "t", Some(1)).expect("runs");
    let b = bottleneck(&r);
    let amplitude = 0.5 * (2.0 * 2.0 * (30.0 + k)).sqrt();
    eprintln!(
        "dctcp: queue mean {:.1} max {} packets (model {:.1}..{:.1}), utilisation {:.4}, {} marks, {} drops",
        b.queue_mean_pkts,
        b.queue_max_pkts,
        k + 2.0 - amplitude,
        k + 2.0,
        b.utilization,
        b.marks,
        b.drops
    );
    assert!(
        (k - amplitude - 5.0..=k + 2.0 + 5.0).contains(&b.queue_mean_pkts),
        "mean queue {} packets",
        b.queue_mean_pkts
    );
    assert!(b.utilization > 0.95, "utilisation {}", b.utilization);
    assert!(b.marks > 0);
    assert_eq!(b.drops, 0);
    for f in r.flows.iter().filter(|f| f.direction == "forward") {
        assert_eq!(f.count("retransmits"), Some(0), "flow {}", f.flow_id);
    }
}

/// The queue follows K: at K = 60 the mean queue is higher than at K = 20 by
/// about the difference (within the same sawtooth bounds).
#[test]
fn the_standing_queue_follows_the_threshold() {
    let low = run_toml(&step_dumbbell(2, 20, ""), "t", Some(1)).expect("runs");
    let high = run_toml(&step_dumbbell(2, 60, ""), "t", Some(1)).expect("runs");
    let (l, h) = (bottleneck(&low).queue_mean_pkts, bottleneck(&high).queue_mean_pkts);
    eprintln!("mean queue at K = 20: {l:.1}, at K = 60: {h:.1}");
    assert!((h - l - 40.0).abs() < 10.0, "K 20 -> 60 moved the mean queue by {}", h - l);
}

/// With the same marks, classic feedback echoes whole ACKs and AccECN the
/// marked bytes; both keep the queue near K. Reno with classic ECN halves
/// its window at each mark, so its queue empties and the link is less used:
/// the reason DCTCP scales its cut by alpha.
#[test]
fn classic_feedback_works_and_reno_with_ecn_underuses_the_link() {
    let classic = run_toml(&step_dumbbell(2, 20, "ecn = true"), "t", Some(1)).expect("runs");
    let c = bottleneck(&classic);
    let reno = step_dumbbell(2, 20, "ecn = true").replace("cc = \"dctcp\"", "cc = \"reno\"");
    let reno = run_toml(&reno, "t", Some(1)).expect("runs");
    let r = bottleneck(&reno);
    eprintln!(
        "classic feedback: queue {:.1}, utilisation {:.4}; reno+ecn: queue {:.1}, utilisation {:.4}",
        c.queue_mean_pkts, c.utilization, r.queue_mean_pkts, r.utilization
    );
    assert!((5.0..=30.0).contains(&c.queue_mean_pkts), "classic feedback queue {}", c.queue_mean_pkts);
    assert!(c.utilization > 0.95);
    assert!(r.utilization < c.utilization, "reno {} dctcp {}", r.utilization, c.utilization);
}

/// The alpha the flows publish settles near the fraction of packets marked
/// at the bottleneck (marks / arrivals), which is what alpha estimates.
#[test]
fn alpha_tracks_the_marked_fraction() {
    let text = step_dumbbell(1, 20, "")
        + r#"
[[observe]]
flows = ["dctcp"]
metrics = ["cc.alpha"]
every = "10ms"
"#;
    let r = run_toml(&text, "t", Some(1)).expect("runs");
    let b = bottleneck(&r);
    let fraction = b.marks as f64 / b.arrivals as f64;
    let ts = r.timeseries.as_ref().expect("time series recorded");
    let alphas: Vec<f64> = common::series(ts, "dctcp", "cc.alpha")
        .into_iter()
        .filter(|&(t, _)| t >= 1.0)
        .map(|(_, a)| a)
        .collect();
    let mean_alpha = alphas.iter().sum::<f64>() / alphas.len() as f64;
    eprintln!("mean alpha {mean_alpha:.4}, marked fraction at the bottleneck {fraction:.4}");
    assert!(mean_alpha > 0.0 && (mean_alpha / fraction - 1.0).abs() < 0.5, "alpha {mean_alpha}");
}

#[test]
fn dctcp_without_ecn_is_refused_at_the_ecn_key() {
    let err = run_toml(&step_dumbbell(1, 20, "ecn = false"), "t", Some(1)).expect_err("refused");
    let message = err.to_string();
    assert!(message.contains("flows[0].ecn") && message.contains("needs ECN"), "{message}");
    let err = run_toml(&step_dumbbell(1, 20, "ecn = \"acecn\""), "t", Some(1)).expect_err("refused");
    assert!(err.to_string().contains("accecn"), "{err}");
}

#[test]
fn the_step_threshold_is_required_and_at_most_the_buffer() {
    let missing = step_dumbbell(1, 20, "").replace("queue_params = { threshold = 20 }\n", "");
    let err = run_toml(&missing, "t", Some(1)).expect_err("refused");
    assert!(err.to_string().contains("threshold"), "{err}");
    let err = run_toml(&step_dumbbell(1, 401, ""), "t", Some(1)).expect_err("refused");
    assert!(err.to_string().contains("threshold"), "{err}");
}
