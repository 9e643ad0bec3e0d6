//! BBRv3 (`cc = "bbr3"`) on a DropTail dumbbell with 1000-byte segments in
//! 1040-byte packets. The issue asks that one flow keep a 100 Mbit/s, 40 ms
//! path busy with little loss; that BBRv3 leave a CUBIC flow at least a third
//! of a shallow-buffered link where BBR v1 takes nearly all; and for the
//! shares in a deep buffer.
//!
//! The two-flow runs break DropTail's phase effects with `send_overhead =
//! "100us"` on both flows (docs/scenario.md): without it, the ACK-clocked
//! CUBIC flow's packets reach the bottleneck right after a departure frees a
//! slot, and nearly every drop falls on the paced BBR flow. At 100 Mbit/s
//! and 0.15 BDP, BBRv3 then retransmitted 188 segments and CUBIC 8 (seed 1,
//! 5 to 40 s), and CUBIC's share from 20 to 50 s was 0.52, 0.37, 0.36 (seeds
//! 1 to 3) instead of 0.20 to 0.24.

use cclab_sim::{run_toml, RunResult};

use crate::common;

fn run(text: &str, seed: u64) -> RunResult {
    run_toml(text, "t", Some(seed)).unwrap_or_else(|e| panic!("{e}"))
}

/// One bulk flow of `cc` on `rate`, `rtt` and a buffer of `buffer`.
fn one_flow(cc: &str, rate: &str, buffer: &str, duration: u32, warmup: u32) -> String {
    format!(
        r#"
[run]
duration = "{duration}s"
warmup = "{warmup}s"
[topology]
kind = "dumbbell"
access = {{ rate = "1Gbps" }}
[topology.bottleneck]
rate = "{rate}"
delay = "10ms"
buffer = "{buffer}"
[[flows]]
name = "f"
rtt = "40ms"
recovery = "sack"
cc = "{cc}"
[[observe]]
flows = ["f"]
metrics = ["cc.state"]
every = "10ms"
on_change = true
"#
    )
}

/// A CUBIC flow and a flow of `cc` (with `params`) starting together.
fn against_cubic(
    cc: &str,
    params: &str,
    rate: &str,
    rtt: &str,
    buffer: &str,
    duration: u32,
    warmup: u32,
) -> String {
    format!(
        r#"
[run]
duration = "{duration}s"
warmup = "{warmup}s"
[topology]
kind = "dumbbell"
access = {{ rate = "1Gbps" }}
[topology.bottleneck]
rate = "{rate}"
delay = "5ms"
buffer = "{buffer}"
[[flows]]
name = "cubic"
rtt = "{rtt}"
recovery = "sack"
cc = "cubic"
send_overhead = "100us"
[[flows]]
name = "bbr"
rtt = "{rtt}"
recovery = "sack"
cc = "{cc}"
cc_params = {{ {params} }}
send_overhead = "100us"
"#
    )
}

/// The CUBIC flow's share of the two flows' goodput over the statistics window, per seed 1 to 3.
fn cubic_shares(text: &str) -> Vec<f64> {
    (1..=3)
        .map(|seed| {
            let r = run(text, seed);
            let goodput = |name: &str| r.flows.iter().find(|f| f.name == name).map_or(0.0, |f| f.goodput_bps);
            goodput("cubic") / (goodput("cubic") + goodput("bbr"))
        })
        .collect()
}

/// 100 Mbit/s, 40 ms, a buffer of one BDP (481 packets), measured from 5 s
/// to 20 s: the link 93.4 % busy (pacing at 0.99 x max_bw of payload on
/// 1040-byte packets is 0.95 of the link, and PROBE_RTT's half-BDP cwnd takes
/// 200 ms in every 5 s), no drop at all (the draft's objective: at most 2 %
/// per round while probing, far less on average), and PROBE_RTT at 5.05,
/// 10.26 and 15.5 s (the queue drains to the propagation delay but never
/// below it, so no RTT sample renews the 5-s minimum and PROBE_RTT comes
/// every 5 s, plus its 200 ms and a round).
#[test]
fn one_flow_keeps_a_100_mbits_link_busy_with_little_loss_and_probes_rtt_every_5_s() {
    let r = run(&one_flow("bbr3", "100Mbps", "1bdp", 20, 5), 1);
    let link = &r.links[0];
    let loss = link.drops as f64 / link.arrivals as f64;
    eprintln!(
        "link {:.4} busy, goodput {:.2} Mbit/s, loss {loss:.5}, mean queue {:.1} packets",
        link.utilization,
        r.flows[0].goodput_bps / 1e6,
        link.queue_mean_pkts
    );
    // Measured: 0.934 busy (pacing from payload: 1000 of 1040 bytes), no drop.
    assert!(link.utilization > 0.92, "{}", link.utilization);
    assert!(loss < 0.001, "{loss}");
    let state = common::series(r.timeseries.as_ref().expect("observed"), "f", "cc.state");
    let entries: Vec<f64> =
        state.windows(2).filter(|w| w[1].1 == 3.0 && w[0].1 != 3.0).map(|w| w[1].0).collect();
    eprintln!("PROBE_RTT at {entries:?} s");
    assert_eq!(entries.len(), 3, "{entries:?}");
    assert!((5.0..5.3).contains(&entries[0]), "{entries:?}");
    assert!(entries.windows(2).all(|p| (5.0..5.5).contains(&(p[1] - p[0]))), "{entries:?}");
}

/// The draft's Reno-coexistence design point (§5.3.3.8: 25 Mbit/s at 30 ms,
/// a BDP of about 62 full-sized packets; here 90 packets of 1040 bytes), a
/// buffer of 0.15 BDP (14 packets), measured from 10 s to 40 s. BBRv3 leaves
/// CUBIC at least a third, as the issue requires (measured 0.46, 0.42, 0.48):
/// it probes for bandwidth every 2-3 s or 63 rounds, about the time CUBIC
/// needs to regrow after a loss at this BDP, and in between it yields to
/// loss. BBR v1, which ignores loss and keeps 2 BDPs in flight, takes nearly
/// all (CUBIC 0.041, 0.057, 0.052).
#[test]
fn at_the_drafts_coexistence_scale_bbr3_leaves_cubic_a_third_of_a_shallow_buffer_where_v1_takes_nearly_all() {
    let shares = |cc| cubic_shares(&against_cubic(cc, "", "25Mbps", "30ms", "0.15bdp", 40, 10));
    let (v3, v1) = (shares("bbr3"), shares("bbr"));
    eprintln!("CUBIC's share against BBRv3 {v3:.3?}, against BBR v1 {v1:.3?}");
    assert!(v3.iter().all(|&s| s >= 1.0 / 3.0), "{v3:?}");
    assert!(v1.iter().all(|&s| s < 1.0 / 3.0), "{v1:?}");
}

/// The issue's case: 100 Mbit/s, 40 ms (a BDP of 481 packets), a buffer of
/// 0.15 BDP (72 packets), measured from 20 s to 50 s. The bound is not met:
/// CUBIC keeps 0.204, 0.221, 0.237 against BBRv3. The cause is the draft's
/// probing time scale (§5.3.3.8), which bounds the wait between bandwidth
/// probes to 2-3 s and to 63 rounds whatever the BDP, and deliberately so:
/// "flows with large BDPs will intentionally probe more rapidly/frequently
/// than Reno/CUBIC would". Each probe overflows the 72-packet buffer and
/// costs CUBIC 30 % of its window, which at this BDP it needs about 7 s to
/// regrow (K = cbrt(W_max x 0.3 / 0.4) with W_max near 480); between probes
/// BBRv3 paces at max_bw, measured in its own probe while CUBIC backed off,
/// and cuts bw_lo only on losses of its own, and then never below the last
/// round's delivery rate. With probes spaced beyond the run
/// (`probe_wait_base = "30s"`, `probe_max_rounds = 1000`; PROBE_RTT then
/// restarts the wait every 5 s), CUBIC's share rises to 0.346, 0.347, 0.325,
/// about a third, in every seed: the probes are what hold it below. (Pinned
/// so that a change is noticed.)
///
/// BBR v1 does not show "nearly all" here: its STARTUP at 2.885 x overflows
/// the buffer by thousands of packets, and SACK recovery (which sends a
/// segment at most once per recovery) repairs that at the few segments per
/// round its collapsed BtlBw allows, for 18 s to more than 40 s in the runs
/// looked at (here, seed 1: CUBIC 0.877 from 20 to 50 s). Once out of it, v1
/// holds CUBIC's cwnd at 10 to 30 segments, a few % of the link (seed 1
/// without `send_overhead`, 25 to 60 s).
#[test]
fn at_100_mbits_40_ms_bbr3_probes_too_often_for_cubic_to_keep_a_third() {
    let shares = |cc, params| cubic_shares(&against_cubic(cc, params, "100Mbps", "40ms", "0.15bdp", 50, 20));
    let v3 = shares("bbr3", "");
    let rare_probes = shares("bbr3", r#"probe_wait_base = "30s", probe_max_rounds = 1000"#);
    let v1 = run(&against_cubic("bbr", "", "100Mbps", "40ms", "0.15bdp", 50, 20), 1);
    let v1_cubic = v1.flows[0].goodput_bps / (v1.flows[0].goodput_bps + v1.flows[1].goodput_bps);
    eprintln!("CUBIC's share against BBRv3 {v3:.3?}; with probes 30 s apart {rare_probes:.3?}; against v1 (seed 1) {v1_cubic:.3}");
    assert!(v3.iter().all(|&s| s < 1.0 / 3.0), "{v3:?}");
    assert!(rare_probes.iter().zip(&v3).all(|(rare, usual)| rare > usual), "{rare_probes:?} {v3:?}");
}

/// A buffer of 8 BDPs (3846 packets) at 100 Mbit/s and 40 ms, measured from
/// 10 s to 30 s. BBR's cwnd is 2 x its own BDP at the propagation delay, so
/// whenever the queue holds more than one propagation delay it is cwnd-bound
/// below its rate estimate, and CUBIC, which fills the buffer, takes more
/// than half: against BBR v1 0.755, 0.764, 0.735; against BBRv3 0.939, 0.936,
/// 0.759 (PROBE_RTT's half-BDP window every 5 s yields more).
#[test]
fn in_a_deep_buffer_cubic_takes_more_than_half_from_either_version() {
    let shares = |cc| cubic_shares(&against_cubic(cc, "", "100Mbps", "40ms", "8bdp", 30, 10));
    let (v3, v1) = (shares("bbr3"), shares("bbr"));
    eprintln!("CUBIC's share against BBRv3 {v3:.3?}, against BBR v1 {v1:.3?}");
    assert!(v3.iter().chain(&v1).all(|&s| s > 0.5), "{v3:?} {v1:?}");
}

/// With every loss recovery and with and without delayed ACKs: transfers
/// under random loss in both directions deliver every byte once and in
/// order, finish, and conserve packets (the invariants test, with BBRv3
/// owning cwnd through recovery and reading the sender's loss marks).
#[test]
fn transfers_with_bbr3_deliver_every_byte_once() {
    let size = 300_000u64 + 777;
    for recovery in ["tahoe", "reno", "newreno", "sack"] {
        let keys = format!("recovery = \"{recovery}\"\ncc = \"bbr3\"");
        let case = format!("bbr3 {recovery}");
        let retransmits: u64 = (1..=2u64).map(|seed| common::lossy_transfers(&keys, size, seed, &case)).sum();
        assert!(retransmits > 0, "{case}: recovery was exercised");
    }
}
