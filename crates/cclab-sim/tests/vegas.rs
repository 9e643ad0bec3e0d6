//! TCP Vegas (`cc = "vegas"`) on a dumbbell whose buffer is larger than the
//! BDP: a lone flow keeps a small standing queue (Diff between alpha and
//! beta) without a drop and fills the link; two flows of equal RTT share it.

use cclab_sim::run_toml;
use common::lossy_transfers;

use crate::common;

/// Bottleneck 10 Mbit/s, 60 ms RTT, buffer 2 BDP; `count` Vegas flows `f`
/// with `params` as their `cc_params`, starting `start` apart; BaseRTT
/// observed every 10 ms.
fn dumbbell(count: u32, params: &str, start: &str) -> String {
    format!(
        r#"
[run]
duration = "60s"
warmup = "20s"
[topology]
kind = "dumbbell"
access = {{ rate = "1Gbps" }}
[topology.bottleneck]
rate = "10Mbps"
delay = "10ms"
buffer = "2bdp"
[[flows]]
name = "f"
count = {count}
rtt = "60ms"
start = "{start}"
cc = "vegas"
cc_params = {{ {params} }}
[[observe]]
flows = ["f"]
metrics = ["cc.base_rtt"]
every = "10ms"
"#
    )
}

/// alpha, beta and the variant's `cc_params`.
const VARIANTS: [(f64, f64, &str); 2] = [(1.0, 3.0, ""), (2.0, 4.0, "variant = \"linux\"")];

/// One flow alone, over 20-60 s: the link is busy, nothing is dropped, and
/// the bottleneck queue (time average and maximum, packets) is what Vegas
/// aims at, Diff = segments queued within [alpha, beta]. Tolerance: half a
/// packet below alpha and above beta for the paper (the time average counts
/// the packet being transmitted only partly); Linux's truncated diff holds
/// up to beta + 1 (diff = floor(cwnd x queueing delay / BaseRTT)), so its
/// upper bound is beta + 1.5. Measured: paper mean 1.83, max 2 (Diff 1.88);
/// linux mean 3.83, max 4 (diff 4); utilization 1.0000 with both, no drop.
#[test]
fn a_lone_flow_keeps_a_standing_queue_between_alpha_and_beta_and_fills_the_link() {
    for (alpha, beta, params) in VARIANTS {
        let r = run_toml(&dumbbell(1, params, "0s"), "t", Some(1)).unwrap();
        let l = &r.links[0];
        let top = if params.is_empty() { beta + 0.5 } else { beta + 1.5 };
        eprintln!(
            "{params:?}: utilization {:.4}, drops {}, queue mean {:.2} max {}",
            l.utilization, l.drops, l.queue_mean_pkts, l.queue_max_pkts
        );
        assert!(l.utilization >= 0.95, "{params:?}: {}", l.utilization);
        assert_eq!(l.drops, 0, "{params:?}");
        assert!(
            l.queue_mean_pkts >= alpha - 0.5 && l.queue_mean_pkts <= top,
            "{params:?}: {}",
            l.queue_mean_pkts
        );
        assert!(l.queue_max_pkts as f64 <= top, "{params:?}: {}", l.queue_max_pkts);
    }
}

/// Two flows of equal RTT starting within 100 ms of each other (so both
/// measure the propagation RTT as BaseRTT): the link stays busy without a
/// drop, and the split is within what Vegas's equilibrium allows. A flow
/// holds when its own Diff, rate x queueing delay, lies in [alpha, beta];
/// both see the same queueing delay, so their rates can differ by up to
/// beta / alpha (3 for the paper, 2 for linux, 2.5 with Linux's truncation,
/// whose hold band is [alpha, beta + 1)). Asserted: the larger share over
/// the smaller at most that, at seeds 1-3. Measured, Mbit/s: paper 5.50 /
/// 4.12, 4.87 / 4.75, 4.75 / 4.87; linux 5.22 / 4.39, 5.22 / 4.40, 6.57 /
/// 3.05 (2.16). A flow that starts while the queue is long takes that
/// queue for propagation delay (BaseRTT too large) and gets more: with
/// starts spread over 5 s, linux at seed 1 split 9.18 / 0.44, the known
/// Vegas BaseRTT error, which this test avoids rather than asserts.
#[test]
fn two_flows_of_equal_rtt_share_within_the_alpha_beta_band() {
    for (alpha, beta, params) in VARIANTS {
        let bound = if params.is_empty() { beta / alpha } else { (beta + 1.0) / alpha };
        for seed in 1..=3u64 {
            let r = run_toml(&dumbbell(2, params, "0s..100ms"), "t", Some(seed)).unwrap();
            let l = &r.links[0];
            let (a, b) = (r.flows[0].goodput_bps / 1e6, r.flows[1].goodput_bps / 1e6);
            let ts = r.timeseries.as_ref().unwrap();
            let bases = [last(ts, 0, "cc.base_rtt"), last(ts, 1, "cc.base_rtt")];
            eprintln!(
                "{params:?} seed {seed}: {a:.3} / {b:.3} Mbit/s, utilization {:.4}, drops {}, queue mean {:.2}, BaseRTT {bases:?}",
                l.utilization, l.drops, l.queue_mean_pkts
            );
            assert!(bases.iter().all(|&x| (x - 0.0609).abs() < 0.001), "{params:?} seed {seed}: {bases:?}");
            assert!(l.utilization >= 0.95, "{params:?} seed {seed}");
            assert_eq!(l.drops, 0, "{params:?} seed {seed}");
            assert!(a.max(b) / a.min(b) <= bound, "{params:?} seed {seed}: {a} / {b}");
        }
    }
}

/// Both variants with the recoveries Vegas is used with: transfers under
/// random loss in both directions deliver every byte once and in order,
/// finish, and conserve packets.
#[test]
fn transfers_with_vegas_deliver_every_byte_once() {
    let size = 300_000u64 + 777;
    for params in ["", "variant = \"linux\""] {
        for recovery in ["reno", "newreno", "sack"] {
            let keys = format!("recovery = \"{recovery}\"\ncc = \"vegas\"\ncc_params = {{ {params} }}");
            let case = format!("vegas {params} {recovery}");
            let retransmits: u64 = (1..=2u64).map(|seed| lossy_transfers(&keys, size, seed, &case)).sum();
            assert!(retransmits > 0, "{case}: recovery was exercised");
        }
    }
}

/// The last value of `metric` of flow `instance` of group `f`.
fn last(ts: &cclab_sim::results::TimeSeries, instance: u32, metric: &str) -> f64 {
    let id = ts
        .series
        .iter()
        .position(|s| s.component == "f" && s.instance == Some(instance) && s.metric == metric);
    let id = id.unwrap() as u32;
    let m = &ts.metrics;
    (0..m.series.len()).rev().find(|&i| m.series[i] == id).map(|i| m.value[i]).unwrap()
}
