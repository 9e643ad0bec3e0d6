//! Westwood (`cc = "westwood"`) and Westwood+ (`cc = "westwood_plus"`) on a
//! dumbbell: the published estimate (`cc.bwe`) against the bottleneck rate,
//! goodput under random loss against Reno, and exactly-once delivery.

use cclab_sim::run_toml;
use common::{lossy_transfers, series, summary};

use crate::common;

/// Bottleneck 10 Mbit/s, 60 ms RTT, a buffer of one BDP; `loss` on the
/// bottleneck; one bulk flow `f`.
fn dumbbell(cc: &str, recovery: &str, loss: f64, duration: u32) -> String {
    format!(
        r#"
[run]
duration = "{duration}s"
warmup = "10s"
[topology]
kind = "dumbbell"
access = {{ rate = "1Gbps" }}
[topology.bottleneck]
rate = "10Mbps"
delay = "10ms"
buffer = "1bdp"
loss = {loss}
[[flows]]
name = "f"
rtt = "60ms"
cc = "{cc}"
recovery = "{recovery}"
"#
    )
}

/// The same, with `cc.bwe` observed every 100 ms.
fn observed(cc: &str, loss: f64, duration: u32) -> String {
    dumbbell(cc, "newreno", loss, duration)
        + r#"
[[observe]]
flows = ["f"]
metrics = ["cc.bwe"]
every = "100ms"
"#
}

/// Each alone on a clean path: after 10 s the estimate is within 10 % of
/// the bottleneck rate at every sample (the payload rate is 1000/1040 =
/// 0.9615 of it, since the estimate counts payload bytes). Measured, as
/// fractions of 10 Mbit/s: Westwood+ 0.959 to 0.962, Westwood 0.961 to
/// 0.962 (ACKs leave the bottleneck evenly spaced at its rate, so the
/// per-ACK samples are right too); the link is 100 % busy with either.
#[test]
fn both_estimates_are_the_bottleneck_rate_on_a_clean_path() {
    for cc in ["westwood_plus", "westwood"] {
        let (lo, hi) = estimate_range(cc);
        assert!(lo > 0.9 && hi < 1.1, "{cc}: {lo} {hi}");
    }
}

/// The lowest and highest `cc.bwe` after 10 s of a lone flow on the clean
/// path, as fractions of the bottleneck rate.
fn estimate_range(cc: &str) -> (f64, f64) {
    let r = run_toml(&observed(cc, 0.0, 40), "t", Some(1)).unwrap();
    let bwe: Vec<f64> = series(r.timeseries.as_ref().unwrap(), "f", "cc.bwe")
        .iter()
        .filter(|(t, _)| *t >= 10.0)
        .map(|(_, v)| v / 10e6)
        .collect();
    assert!(bwe.len() > 250);
    let mean = bwe.iter().sum::<f64>() / bwe.len() as f64;
    let (lo, hi) = bwe.iter().fold((f64::MAX, 0.0f64), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    eprintln!(
        "{cc} clean: bwe / rate mean {mean:.3}, range {lo:.3}..{hi:.3}, utilization {:.3}",
        r.links[0].utilization
    );
    (lo, hi)
}

/// Under 1 % random loss on the bottleneck a loss does not halve the
/// window: it is set to what the path delivered (BWE x RTTmin), so both
/// Westwoods keep more goodput than Reno with NewReno or Reno recovery.
/// Measured over seeds 1-4 (goodput of the 30 s after 10 s of warmup,
/// Mbit/s; the better Reno of the two recoveries): Reno 1.82, 1.75, 1.41,
/// 1.56; Westwood 4.56, 4.51, 4.65, 5.81 (2.5x to 3.7x); Westwood+ 3.60,
/// 3.12, 3.25, 4.32 (1.8x to 2.8x). Asserted: at every seed each Westwood
/// has at least 1.5 times the goodput of the better Reno. Westwood beats
/// Westwood+ here because its per-ACK estimate reads the ACKs bunched
/// after each recovery as a higher rate (see estimate/westwood.rs), so its
/// window is set higher: measured at seeds 1 and 2, Westwood's `cc.bwe`
/// averages 6.56 Mbit/s against a goodput of 4.5, Westwood+'s 3.72 and
/// 3.34 against 3.60 and 3.12.
/// With `response = "linux"` (halve, then BWE x RTTmin after recovery):
/// Westwood 4.43, 4.47, 3.90, 4.40; Westwood+ 2.86, 2.92, 2.22, 2.79
/// (1.57x to 1.79x Reno); asserted at least 1.3 times.
#[test]
fn under_random_loss_both_westwoods_keep_more_goodput_than_reno() {
    let goodput = |cc: &str, recovery: &str, seed: u64| {
        let r = run_toml(&dumbbell(cc, recovery, 0.01, 40), "t", Some(seed)).unwrap();
        r.flows[0].goodput_bps / 1e6
    };
    let linux = |cc: &str, seed: u64| {
        let text = dumbbell(cc, "newreno", 0.01, 40).replace(
            "recovery = \"newreno\"",
            "recovery = \"newreno\"\ncc_params = { response = \"linux\" }",
        );
        run_toml(&text, "t", Some(seed)).unwrap().flows[0].goodput_bps / 1e6
    };
    for seed in 1..=4u64 {
        let reno = goodput("reno", "newreno", seed).max(goodput("reno", "reno", seed));
        let westwood = goodput("westwood", "newreno", seed);
        let plus = goodput("westwood_plus", "newreno", seed);
        let (westwood_linux, plus_linux) = (linux("westwood", seed), linux("westwood_plus", seed));
        eprintln!(
            "seed {seed}, response = linux: westwood {westwood_linux:.2}, westwood+ {plus_linux:.2} Mbit/s"
        );
        eprintln!(
            "seed {seed}: reno {reno:.2}, westwood {westwood:.2} ({:.2}x), westwood+ {plus:.2} ({:.2}x) Mbit/s",
            westwood / reno,
            plus / reno
        );
        assert!(westwood > 1.5 * reno && plus > 1.5 * reno, "seed {seed}");
        assert!(westwood_linux > 1.3 * reno && plus_linux > 1.3 * reno, "seed {seed}, linux");
    }
}

/// Both names, both response rules, every loss recovery (`decoupled`
/// included: the seed pairs an estimate with decoupled recovery), with and
/// without delayed ACKs: transfers under random loss in both directions
/// deliver every byte once and in order, finish, and conserve packets.
#[test]
fn transfers_with_westwood_deliver_every_byte_once() {
    let size = 300_000u64 + 777;
    for cc in ["westwood", "westwood_plus"] {
        for params in ["", "response = \"linux\""] {
            for recovery in ["tahoe", "reno", "newreno", "sack", "decoupled"] {
                let keys = format!("recovery = \"{recovery}\"\ncc = \"{cc}\"\ncc_params = {{ {params} }}");
                let case = format!("{cc} {params} {recovery}");
                let retransmits: u64 = (1..=2u64).map(|seed| lossy_transfers(&keys, size, seed, &case)).sum();
                assert!(retransmits > 0, "{case}: recovery was exercised");
            }
        }
    }
}

/// Same scenario and seed, same bits, estimates included; another seed of
/// the random loss gives another run.
#[test]
fn westwood_runs_are_deterministic() {
    for cc in ["westwood", "westwood_plus"] {
        let text = observed(cc, 0.01, 15);
        let a = summary(&text, 3);
        assert_eq!(a, summary(&text, 3), "{cc}");
        assert_ne!(a["flows"], summary(&text, 4)["flows"], "{cc}");
    }
}

/// The response as the sender applies it, under 1 % loss, sampled every
/// millisecond: with the original rule, ssthresh is set to bw_rttmin when
/// recovery begins; with Linux's, cwnd and ssthresh both when it ends (after
/// recovery's own deflation, which `on_recovery_exit` follows). Checked at
/// every recovery of the 40 s that a full ACK ended (a timeout ends one with
/// cwnd 1 and, inside a loss episode, keeps the lower ssthresh: the
/// sender's rule, as in Linux, which does not call Westwood there), within
/// 2 % (the estimate and cwnd move between the event and the sample).
/// Measured: 98 recoveries checked with the original rule, 80 with Linux's.
#[test]
fn the_sender_applies_bw_rttmin_at_the_start_or_the_end_of_recovery() {
    for (params, at_start) in [("", true), ("response = \"linux\"", false)] {
        let text = dumbbell("westwood_plus", "newreno", 0.01, 40).replace(
            "recovery = \"newreno\"",
            &format!("recovery = \"newreno\"\ncc_params = {{ {params} }}"),
        ) + r#"
[[observe]]
flows = ["f"]
metrics = ["recovery.in_recovery", "ssthresh", "cwnd", "cc.bw_rttmin"]
every = "1ms"
"#;
        let r = run_toml(&text, "t", Some(1)).unwrap();
        let ts = r.timeseries.as_ref().unwrap();
        let metric = |name: &str| series(ts, "f", name);
        let (phase, ssthresh, cwnd, target) =
            (metric("recovery.in_recovery"), metric("ssthresh"), metric("cwnd"), metric("cc.bw_rttmin"));
        let close = |a: f64, b: f64| (a / b - 1.0).abs() < 0.02;
        let mut checked = 0;
        for i in 1..phase.len() {
            let (before, now) = (phase[i - 1].1, phase[i].1);
            let t = phase[i].0;
            if at_start && before == 0.0 && now == 1.0 {
                checked += 1;
                assert!(
                    close(ssthresh[i].1, target[i].1),
                    "t {t}: ssthresh {} vs {}",
                    ssthresh[i].1,
                    target[i].1
                );
            }
            if !at_start && before == 1.0 && now == 0.0 && cwnd[i].1 > 2.0 {
                checked += 1;
                let (s, c, b) = (ssthresh[i].1, cwnd[i].1, target[i].1);
                assert!(close(s, b) && close(c, b), "linux, t {t}: ssthresh {s}, cwnd {c} vs {b}");
            }
        }
        eprintln!("{params:?}: {checked} recoveries checked");
        assert!(checked > 50, "{params}: {checked}");
    }
}
