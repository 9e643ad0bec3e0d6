//! The L4S experiment: one Prague and one CUBIC flow through DualPI2 share
//! the link while the Prague flow keeps its queueing delay near a
//! millisecond (RFC 9332 §1, De Schepper et al., "PI2: A Linearized AQM for
//! both Classic and Scalable TCP", CoNEXT 2016); and, for contrast, DCTCP
//! against CUBIC in one step-marking queue, the reason DualPI2 exists.

use crate::common;

use cclab_sim::results::LinkResult;
use cclab_sim::{run_toml, RunResult};

/// One flow of each `cc` over a `rate` bottleneck with `queue`, both flows
/// of base RTT `rtt`, a 40 s run measured after 10 s; a DualPI2
/// bottleneck's queues sampled every millisecond.
fn pair(rate: &str, rtt: &str, queue: &str, l4s_cc: &str, classic_cc: &str) -> String {
    let observe = if queue.contains("dualpi2") {
        "[[observe]]\nlinks = [\"left->right\"]\nmetrics = [\"dualpi2.l_sojourn_ms\", \"dualpi2.c_sojourn_ms\"]\nevery = \"1ms\"\n"
    } else {
        ""
    };
    format!(
        r#"
[run]
duration = "40s"
warmup = "10s"
[topology]
kind = "dumbbell"
access = {{ rate = "10Gbps" }}
[topology.bottleneck]
rate = "{rate}"
delay = "1ms"
buffer = "2bdp"
{queue}
[[flows]]
name = "l4s"
cc = "{l4s_cc}"
recovery = "sack"
rtt = "{rtt}"
[[flows]]
name = "classic"
cc = "{classic_cc}"
recovery = "sack"
rtt = "{rtt}"
start = "1s"
{observe}"#
    )
}

fn goodput(r: &RunResult, group: &str) -> f64 {
    r.flows.iter().filter(|f| f.name == group && f.direction == "forward").map(|f| f.goodput_bps).sum()
}

fn bottleneck(r: &RunResult) -> &LinkResult {
    r.links.iter().find(|l| l.name == "left->right").expect("bottleneck link")
}

/// The `q` quantile of the values of a sampled link metric after `from` s.
fn quantile(r: &RunResult, metric: &str, from: f64, q: f64) -> f64 {
    let ts = r.timeseries.as_ref().expect("time series recorded");
    let mut values: Vec<f64> = common::series(ts, "left->right", metric)
        .into_iter()
        .filter(|&(t, _)| t >= from)
        .map(|(_, v)| v)
        .collect();
    values.sort_by(f64::total_cmp);
    values[((values.len() - 1) as f64 * q).round() as usize]
}

/// Issue 49's claim, from the L4S papers: through DualPI2 a Prague and a
/// CUBIC flow of the same RTT share the link within a rate ratio of [0.5, 2]
/// (the coupling k = 2 is chosen so that p_C = (p_CL / k)^2 balances the
/// two responses), and Prague's 99th-percentile queueing delay, the L
/// queue's sojourn sampled every millisecond, stays below 2 ms while CUBIC
/// keeps the C queue near the 15 ms target. At 40 and 100 Mbit/s, 20 ms.
#[test]
fn prague_and_cubic_share_dualpi2_with_prague_below_two_milliseconds() {
    for rate in ["40Mbps", "100Mbps"] {
        let r = run_toml(&pair(rate, "20ms", "queue = \"dualpi2\"", "prague", "cubic"), "t", Some(1))
            .expect("runs");
        let (l4s, classic) = (goodput(&r, "l4s"), goodput(&r, "classic"));
        let ratio = l4s / classic;
        let l_p99 = quantile(&r, "dualpi2.l_sojourn_ms", 10.0, 0.99);
        let c_median = quantile(&r, "dualpi2.c_sojourn_ms", 10.0, 0.5);
        let b = bottleneck(&r);
        eprintln!(
            "{rate}: prague {:.1} Mbit/s, cubic {:.1} Mbit/s (ratio {ratio:.2}), L sojourn p99 {l_p99:.3} ms, \
             C sojourn median {c_median:.1} ms, utilisation {:.3}, {} marks, {} drops",
            l4s / 1e6,
            classic / 1e6,
            b.utilization,
            b.marks,
            b.drops
        );
        assert!((0.5..=2.0).contains(&ratio), "{rate}: prague/cubic {ratio}");
        assert!(l_p99 < 2.0, "{rate}: L queue p99 {l_p99} ms");
        assert!(b.utilization > 0.9, "{rate}: utilisation {}", b.utilization);
        assert!((7.5..=22.5).contains(&c_median), "{rate}: C queue median {c_median} ms (target 15)");
    }
}

/// Why DualPI2 exists: in one step-marking queue DCTCP's response to the
/// marks (cut by alpha/2) and CUBIC's to the drops of its Not-ECT packets at
/// the same threshold are not balanced, and CUBIC starves (RFC 9332 §1.1:
/// a Scalable flow "would starve" a Classic one in a shared queue). Bound:
/// DCTCP gets more than four times CUBIC's rate.
#[test]
fn dctcp_starves_cubic_in_one_step_marking_queue() {
    let step = "queue = \"step\"\nqueue_params = { threshold = 20 }";
    let r = run_toml(&pair("100Mbps", "20ms", step, "dctcp", "cubic"), "t", Some(1)).expect("runs");
    let (dctcp, cubic) = (goodput(&r, "l4s"), goodput(&r, "classic"));
    eprintln!("one step queue: dctcp {:.1} Mbit/s, cubic {:.1} Mbit/s", dctcp / 1e6, cubic / 1e6);
    assert!(dctcp > 4.0 * cubic, "dctcp {dctcp}, cubic {cubic}");
}
