//! DualPI2 (RFC 9332) in whole simulations with Classic traffic only: the
//! PI2 base AQM keeps the queueing delay near its 15 ms target at full
//! utilisation, ECT(0) flows are marked where Not-ECT ones are dropped, and
//! packets are conserved and delivered once. The L queue with L4S traffic
//! (Prague) is tested in tests/l4s.rs and the discipline's unit tests.

use crate::common;

use cclab_sim::results::LinkResult;
use cclab_sim::{build, parse, run_toml, RunResult};
use common::tiles;

/// `count` long-lived `cc` flows (SACK recovery) over a 100 Mbit/s, 40 ms
/// dumbbell with a two-BDP buffer (about 670 packets, in which DropTail
/// keeps 55-70 ms) and the given queue.
fn bulk(queue: &str, count: u32, cc: &str, flow_keys: &str) -> String {
    format!(
        r#"
[run]
duration = "20s"
warmup = "5s"
[topology]
kind = "dumbbell"
access = {{ rate = "1Gbps" }}
[topology.bottleneck]
rate = "100Mbps"
delay = "10ms"
buffer = "2bdp"
queue = "{queue}"
[[flows]]
count = {count}
cc = "{cc}"
recovery = "sack"
rtt = "40ms"
start = "0s..1s"
{flow_keys}
"#
    )
}

fn bottleneck(r: &RunResult) -> &LinkResult {
    r.links.iter().find(|l| l.name == "left->right").expect("bottleneck link")
}

fn ms(s: f64) -> f64 {
    s * 1000.0
}

/// RFC 9332 A.1: the PI2 controller moves p' every Tupdate until the
/// Classic queue's delay sits at `target` (15 ms): the integral term stops
/// only there. With Classic traffic alone the L queue is empty and DualPI2
/// is PI2 on one queue. The mean queueing delay must lie within [7.5, 22.5]
/// ms, half the target either side (the flows' sawtooth spreads the delay
/// around the target; the same band as PIE's test), under three quarters of
/// DropTail's, with the link above 90 % utilised. Two CUBIC flows and four
/// Reno flows. The discipline's published C-queue sojourn (`dualpi2.c_sojourn_ms`,
/// sampled every 100 ms after the warm-up) averages within the same band, and
/// p' is above 0 while the flows run.
#[test]
fn dualpi2_holds_the_classic_queue_near_its_target() {
    for (cc, count) in [("cubic", 2), ("reno", 4)] {
        let text = bulk("dualpi2", count, cc, "");
        let observed = text.clone()
            + "[[observe]]\nlinks = [\"left->right\"]\nmetrics = [\"dualpi2.c_sojourn_ms\", \"dualpi2.base_prob\"]\nevery = \"100ms\"\n";
        let dualpi2 = run_toml(&observed, "t", Some(1)).expect("runs");
        let ts = dualpi2.timeseries.as_ref().expect("observed");
        let samples = |metric: &str| -> Vec<f64> {
            let id = ts.series.iter().position(|s| s.metric == metric).expect("a series");
            let m = &ts.metrics;
            (0..m.series.len())
                .filter(|&i| m.series[i] as usize == id && m.time_s[i] >= 5.0)
                .map(|i| m.value[i])
                .collect()
        };
        let sojourn = samples("dualpi2.c_sojourn_ms");
        let mean_sojourn = sojourn.iter().sum::<f64>() / sojourn.len() as f64;
        let base_prob = samples("dualpi2.base_prob");
        let droptail = run_toml(&text.replace("queue = \"dualpi2\"", "queue = \"droptail\""), "t", Some(1))
            .expect("runs");
        let (q, d) = (bottleneck(&dualpi2), bottleneck(&droptail));
        eprintln!(
            "dualpi2, {count} {cc}: mean queueing delay {:.2} ms (droptail {:.2} ms), utilisation {:.3}, {} early drops, {} drops; C sojourn sampled {mean_sojourn:.2} ms, p' up to {:.4}",
            ms(q.queue_delay_mean_s),
            ms(d.queue_delay_mean_s),
            q.utilization,
            q.early_drops,
            q.drops,
            base_prob.iter().fold(0.0f64, |a, &b| a.max(b))
        );
        assert!((7.5..=22.5).contains(&mean_sojourn), "{cc}: sampled C sojourn {mean_sojourn} ms");
        assert!(
            base_prob.iter().all(|&p| p < 0.5) && base_prob.iter().any(|&p| p > 0.0),
            "{cc}: p' {base_prob:?}"
        );
        assert_eq!(q.queue, "dualpi2");
        assert!((7.5..=22.5).contains(&ms(q.queue_delay_mean_s)), "{cc}: {} ms", ms(q.queue_delay_mean_s));
        assert!(
            q.queue_delay_mean_s < 0.75 * d.queue_delay_mean_s,
            "{cc}: droptail {} s",
            d.queue_delay_mean_s
        );
        assert!(q.utilization > 0.9, "{cc}: utilisation {}", q.utilization);
        assert!(q.early_drops > 0, "{cc}: the AQM never dropped");
        assert_eq!(q.marks, 0, "{cc}: nothing to mark without ECN");
    }
}

/// RFC 9332 Figure 7 lines 11-16: a Classic packet chosen with probability
/// p_C is dropped if Not-ECT and marked if ECT(0) (below overload, p_C <
/// 1/4). Eight Reno flows with ECN (their data ECT(0)) against the same
/// without: marks, under a quarter of the drops, and the delay still near
/// the target ([7.5, 22.5] ms).
#[test]
fn classic_ecn_flows_are_marked_instead_of_dropped() {
    let plain = run_toml(&bulk("dualpi2", 8, "reno", ""), "t", Some(3)).expect("runs");
    let marked = run_toml(&bulk("dualpi2", 8, "reno", "ecn = true"), "t", Some(3)).expect("runs");
    let (p, m) = (bottleneck(&plain), bottleneck(&marked));
    eprintln!(
        "dualpi2, 8 reno: {} drops without ECN; {} marks and {} drops with it; delay {:.2} / {:.2} ms",
        p.drops,
        m.marks,
        m.drops,
        ms(p.queue_delay_mean_s),
        ms(m.queue_delay_mean_s)
    );
    assert!(p.drops > 0 && p.marks == 0);
    assert!(m.marks > 0, "no marks");
    assert!(m.drops * 4 < p.drops.max(1), "{} drops with ECN against {}", m.drops, p.drops);
    assert!((7.5..=22.5).contains(&ms(m.queue_delay_mean_s)), "with ECN: {} ms", ms(m.queue_delay_mean_s));
}

/// Every byte of three transfers arrives once and in order, and packets are
/// conserved (the pool holds exactly the packets inside links), through
/// DualPI2 with each scheduler, with draws, with and without ECN and random
/// loss, on a small buffer that overflows and a target short enough for
/// the AQM to act.
#[test]
fn dualpi2_conserves_packets_and_delivers_exactly_once() {
    let size = 400_000u64 + 333;
    for (params, ecn) in [
        ("target = \"5ms\"", false),
        ("target = \"5ms\", scheduler = \"wrr\"", true),
        ("derandomize = false, tupdate = \"4ms\", alpha = 0.04", true),
    ] {
        for (loss, reverse_loss) in [("0.0", "0.0"), ("0.02", "0.01")] {
            for seed in 1..=2u64 {
                let case = format!("dualpi2 {{ {params} }} ecn {ecn} loss {loss} seed {seed}");
                let text = format!(
                    r#"
[run]
duration = "300s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "10Mbps"
delay = "10ms"
buffer = "30pkts"
queue = "dualpi2"
queue_params = {{ {params} }}
loss = {loss}
reverse_loss = {reverse_loss}
[[flows]]
count = 3
rtt = "60ms"
start = "0s..2s"
recovery = "sack"
ecn = {ecn}
delayed_ack = {delayed}
app = {{ kind = "transfer", size = "{size}B" }}
[[flows]]
name = "back"
direction = "reverse"
count = 2
rtt = "80ms"
recovery = "newreno"
"#,
                    delayed = seed % 2 == 0
                );
                let mut sim = build(&parse(&text, "t").expect("parses"), seed).expect("builds");
                sim.record_deliveries();
                sim.engine.run();
                sim.check_conservation().unwrap_or_else(|e| panic!("{case}: {e}"));
                let link = &sim.engine.net.links[0];
                assert!(
                    link.stats.drops + link.stats.marks > 0 || loss != "0.0",
                    "{case}: the queue never acted"
                );
                for f in sim.flows.iter().filter(|f| f.group == 0) {
                    assert!(tiles(sim.deliveries(f).expect("recorded"), size), "{case} flow {}", f.flow_id);
                    assert!(sim.sender(f).expect("sender").is_finished(), "{case}");
                }
            }
        }
    }
}
