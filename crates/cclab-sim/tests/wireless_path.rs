//! Bandwidth-estimating TCP on the wireless seed's path (seed paper 001): a
//! 5 Mbit/s, 35 ms bottleneck whose forward direction loses packets at
//! random, as the seed's router R0 does. Decoupled TCP (its Fig. 6 claim) and
//! TCP-Jersey with the congestion-warning (CW) router, which marks every
//! ECN-capable packet while its average queue exceeds 10 packets.

use crate::common;

use common::summary;
use serde_json::Value;

/// The seed's path, 60 s measured from 10 s, one flow with `keys`.
fn run(keys: &str, loss: f64, seed: u64) -> Value {
    let text = format!(
        r#"
[run]
duration = "60s"
warmup = "10s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "5Mbps"
delay = "35ms"
buffer = "1bdp"
queue = "cw"
queue_params = {{ threshold = 10 }}
loss = {loss}
[[flows]]
name = "f"
rtt = "80ms"
{keys}
"#
    );
    summary(&text, seed)
}

fn keys(cc: &str, recovery: &str, ecn: bool) -> String {
    format!("cc = \"{cc}\"\nrecovery = \"{recovery}\"\necn = {ecn}")
}

fn goodput(v: &Value) -> f64 {
    v["flows"][0]["goodput_bps"].as_f64().expect("goodput")
}

/// Mean goodput over seeds 1..=3.
fn mean_goodput(cc: &str, recovery: &str, ecn: bool, loss: f64) -> f64 {
    (1..=3).map(|seed| goodput(&run(&keys(cc, recovery, ecn), loss, seed))).sum::<f64>() / 3.0
}

/// The seed's Fig. 6 claim: with loss recovery decoupled from congestion
/// control, throughput holds up at loss rates where Reno and SACK collapse and
/// Westwood degrades. Measured (seed 1, 60 s), Mbit/s: at 5 % Reno/SACK 0.25,
/// Westwood/SACK 2.33, Decoupled TCP 2.65; at 10 % 0.10, 0.54, 1.38. (Before
/// SACK blocks re-reported after a timeout stopped counting as new
/// deliveries, Westwood's estimate sank after every timeout and it read 1.25
/// at 5 %.) The test asks, over three seeds, for 1.1x Westwood and 4x Reno at
/// 5 % and 1.5x Westwood at 10 %; and shows that the decoupled recovery
/// alone, under Reno's halving, is no cure.
#[test]
fn at_heavy_random_loss_decoupled_tcp_keeps_the_most_throughput() {
    let reno = mean_goodput("reno", "sack", false, 0.05);
    let westwood = mean_goodput("westwood", "sack", false, 0.05);
    let decoupled = mean_goodput("decoupled", "decoupled", false, 0.05);
    let recovery_only = mean_goodput("reno", "decoupled", false, 0.05);
    let westwood_10 = mean_goodput("westwood", "sack", false, 0.10);
    let decoupled_10 = mean_goodput("decoupled", "decoupled", false, 0.10);
    eprintln!(
        "5 % loss, mean goodput (Mbit/s): reno/sack {:.2}, westwood/sack {:.2}, decoupled {:.2}, reno/decoupled {:.2}; \
         10 %: westwood/sack {:.2}, decoupled {:.2}",
        reno / 1e6,
        westwood / 1e6,
        decoupled / 1e6,
        recovery_only / 1e6,
        westwood_10 / 1e6,
        decoupled_10 / 1e6
    );
    assert!(decoupled > 1.1 * westwood, "decoupled {decoupled:.0} vs westwood {westwood:.0}");
    assert!(decoupled > 4.0 * reno, "decoupled {decoupled:.0} vs reno {reno:.0}");
    assert!(
        decoupled_10 > 1.5 * westwood_10,
        "10 %: decoupled {decoupled_10:.0} vs westwood {westwood_10:.0}"
    );
    assert!(recovery_only < 0.5 * decoupled, "the window rule matters: {recovery_only:.0}");
}

/// Without loss Decoupled TCP fills the link like any TCP (within 2 % of Reno).
#[test]
fn without_loss_decoupled_tcp_fills_the_link() {
    let reno = goodput(&run(&keys("reno", "sack", false), 0.0, 1));
    let decoupled = goodput(&run(&keys("decoupled", "decoupled", false), 0.0, 1));
    assert!(decoupled > 0.98 * reno && decoupled > 0.95 * 5e6 * 960.0 / 1000.0, "{decoupled} vs {reno}");
}

/// Without random loss the CW marks alone steer Jersey: the link is full,
/// nothing is lost, and the queue sits near the marking threshold. Measured
/// (seed 1): 4.81 Mbit/s of 4.81 possible, no recovery, mean queue 10.9
/// packets, 21 874 marks.
#[test]
fn cw_marks_alone_keep_the_link_full_and_the_queue_near_the_threshold() {
    let v = run(&keys("jersey", "sack", true), 0.0, 1);
    let (flow, link) = (&v["flows"][0], &v["links"][0]);
    assert!(goodput(&v) > 0.98 * 5e6 * 1000.0 / 1040.0, "{}", goodput(&v));
    assert_eq!(flow["recoveries"], 0);
    let queue = link["queue_mean_pkts"].as_f64().expect("queue");
    assert!((5.0..16.0).contains(&queue), "mean queue {queue}");
    assert!(link["marks"].as_u64().expect("marks") > 1000);
}

/// Losses without a CW mark are taken as wireless and only retransmitted.
/// Measured at 1 % (seed 1): Jersey with CW 4.67 Mbit/s, Westwood 4.41,
/// Jersey without ECN (every loss is congestion) 4.22, Reno 1.33; at 5 %:
/// 2.84, 2.33, 1.09, 0.26. The test asks, over three seeds at 1 %, for
/// Jersey with CW above Westwood and 3x Reno, and above itself without ECN.
#[test]
fn telling_wireless_losses_from_congestion_keeps_jersey_fast() {
    let jersey = mean_goodput("jersey", "sack", true, 0.01);
    let blind = mean_goodput("jersey", "sack", false, 0.01);
    let westwood = mean_goodput("westwood", "sack", false, 0.01);
    let reno = mean_goodput("reno", "sack", true, 0.01);
    eprintln!(
        "1 % loss, mean goodput (Mbit/s): jersey+CW {:.2}, jersey without ECN {:.2}, westwood {:.2}, reno {:.2}",
        jersey / 1e6,
        blind / 1e6,
        westwood / 1e6,
        reno / 1e6
    );
    assert!(jersey > westwood, "jersey {jersey:.0} vs westwood {westwood:.0}");
    assert!(jersey > 3.0 * reno, "jersey {jersey:.0} vs reno {reno:.0}");
    assert!(jersey > 1.1 * blind, "jersey {jersey:.0} vs without marks {blind:.0}");
}
