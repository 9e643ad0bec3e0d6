//! Simulation invariants over many seeds: every byte delivered exactly once and
//! in order, packets conserved at every queue, finite transfers complete.

use crate::common;

use cclab_sim::{build, parse};
use common::tiles;

fn scenario(
    duration: &str,
    recovery: &str,
    loss: &str,
    reverse_loss: &str,
    app: &str,
    delayed_ack: bool,
    count: u32,
) -> String {
    format!(
        r#"
[run]
duration = "{duration}"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "10Mbps"
delay = "10ms"
buffer = "20pkts"
loss = {loss}
reverse_loss = {reverse_loss}
[[flows]]
name = "f"
count = {count}
recovery = "{recovery}"
rtt = "60ms"
start = "0s..2s"
app = {app}
delayed_ack = {delayed_ack}
min_rto = "200ms"
limited_transmit = {lt}
"#,
        lt = delayed_ack
    )
}

#[test]
fn transfers_are_delivered_exactly_once_in_order_under_random_loss() {
    // At 10 % loss each way a transfer can sit out backed-off timeouts of tens
    // of seconds (sack1 at seed 4 was still waiting at 120 s). A finished
    // transfer schedules nothing more, so the longer limit costs the other runs nothing.
    let size = 300_000u64 + 777; // a partial last segment
    let app = format!("{{ kind = \"transfer\", size = \"{size}B\" }}");
    let mut runs = 0;
    // Bursty loss: 0.01 / (0.01 + 0.3) = 3.2 % each way, in bursts of 3.3 packets on average.
    let bursty = r#"{ model = "gilbert_elliott", good_to_bad = 0.01, bad_to_good = 0.3 }"#;
    let cases = [("0.0", "0.0"), ("0.01", "0.0"), ("0.05", "0.05"), ("0.1", "0.1"), (bursty, bursty)];
    // Decoupled TCP is meant for heavy wireless loss: up to 20 % each way.
    let heavy = [("0.2", "0.0"), ("0.2", "0.2")];
    let recoveries = ["tahoe", "reno", "newreno", "sack", "sack1", "decoupled"];
    for recovery in recoveries {
        let extra: &[(&str, &str)] = if recovery == "decoupled" { &heavy } else { &[] };
        for &(loss, reverse_loss) in cases.iter().chain(extra) {
            for seed in 1..=6u64 {
                let delayed = seed % 2 == 0;
                let scn =
                    parse(&scenario("600s", recovery, loss, reverse_loss, &app, delayed, 3), "t").unwrap();
                let mut sim = build(&scn, seed).unwrap();
                sim.record_deliveries();
                sim.engine.run();
                sim.check_conservation().unwrap_or_else(|e| panic!("{recovery} p={loss} seed {seed}: {e}"));
                for f in &sim.flows {
                    let log = sim.deliveries(f).unwrap();
                    assert!(
                        tiles(log, size),
                        "{recovery} p={loss}/{reverse_loss} seed {seed} flow {}",
                        f.flow_id
                    );
                    assert!(sim.sender(f).unwrap().is_finished(), "{recovery} p={loss} seed {seed}");
                }
                runs += 1;
            }
        }
    }
    assert_eq!(runs, 6 * (recoveries.len() * cases.len() + heavy.len()));
}

#[test]
fn bulk_flows_deliver_a_gapless_prefix_and_conserve_packets() {
    for recovery in ["tahoe", "reno", "newreno", "sack", "sack1", "decoupled"] {
        for seed in 1..=4u64 {
            let scn = parse(&scenario("120s", recovery, "0.03", "0.03", "\"bulk\"", seed % 2 == 1, 4), "t")
                .unwrap();
            let mut sim = build(&scn, seed).unwrap();
            sim.record_deliveries();
            sim.engine.run();
            sim.check_conservation().unwrap_or_else(|e| panic!("{recovery} seed {seed}: {e}"));
            for f in &sim.flows {
                let log = sim.deliveries(f).unwrap();
                let total = log.last().map_or(0, |&(_, b)| b);
                assert!(total > 0, "{recovery} seed {seed}: nothing delivered");
                assert!(tiles(log, total), "{recovery} seed {seed}");
            }
        }
    }
}

#[test]
fn conservation_holds_mid_run_with_congestion_drops() {
    // Tiny buffer and many flows: lots of drops at the bottleneck, and the run
    // ends with packets in every link.
    let text = r#"
[run]
duration = "7.3s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "5Mbps"
delay = "5ms"
buffer = "3pkts"
[[flows]]
count = 12
rtt = "30ms"
start = "0s..1s"
recovery = "sack"
[[flows]]
name = "back"
direction = "reverse"
count = 3
rtt = "80ms"
recovery = "tahoe"
"#;
    let scn = parse(text, "t").unwrap();
    let mut sim = build(&scn, 9).unwrap();
    sim.engine.run();
    let drops: u64 = sim.engine.net.links.iter().map(|l| l.stats.drops).sum();
    assert!(drops > 100, "expected congestion drops, got {drops}");
    assert!(sim.engine.packets_in_flight() > 0);
    sim.check_conservation().unwrap();
}

/// RED (dropping, and marking for ECN flows) and the CW marker keep the
/// invariants DropTail keeps: packets conserved at every queue, transfers
/// delivered exactly once in order, under random loss too.
#[test]
fn red_and_cw_queues_conserve_packets_and_deliver_exactly_once() {
    let size = 300_000u64 + 777;
    let app = format!("{{ kind = \"transfer\", size = \"{size}B\" }}");
    let queues = [
        ("red", "min_thresh = 3, max_thresh = 10, w_q = 0.02", false),
        ("red", "min_thresh = 3, max_thresh = 10, w_q = 0.02, ecn = true", true),
        ("red", "min_thresh = 3, max_thresh = 6, w_q = 0.02, gentle = false, wait = false, ecn = true", true),
        ("cw", "threshold = 4, w_q = 0.02", true),
    ];
    for (queue, params, ecn) in queues {
        for (loss, reverse_loss) in [("0.0", "0.0"), ("0.02", "0.01")] {
            for seed in 1..=3u64 {
                let case = format!("{queue} {{ {params} }} p={loss} seed {seed}");
                let text = scenario("600s", "sack", loss, reverse_loss, &app, seed % 2 == 0, 6)
                    .replace(
                        "buffer = \"20pkts\"",
                        &format!("buffer = \"20pkts\"\nqueue = \"{queue}\"\nqueue_params = {{ {params} }}"),
                    )
                    .replace("min_rto = \"200ms\"", &format!("min_rto = \"200ms\"\necn = {ecn}"));
                let mut sim = build(&parse(&text, "t").unwrap(), seed).unwrap();
                sim.record_deliveries();
                sim.engine.run();
                sim.check_conservation().unwrap_or_else(|e| panic!("{case}: {e}"));
                let (mut drops, mut early, mut marks) = (0, 0, 0);
                for l in &sim.engine.net.links {
                    (drops, early, marks) =
                        (drops + l.stats.drops, early + l.stats.early_drops, marks + l.stats.marks);
                }
                assert!(early <= drops, "{case}");
                match (queue, ecn) {
                    ("red", false) => assert!(early > 0 && marks == 0, "{case}: early {early} marks {marks}"),
                    _ => assert!(marks > 0, "{case}: no marks"),
                }
                for f in &sim.flows {
                    assert!(tiles(sim.deliveries(f).unwrap(), size), "{case} flow {}", f.flow_id);
                    assert!(sim.sender(f).unwrap().is_finished(), "{case}");
                }
            }
        }
    }
}
