//! HighSpeed TCP (`cc = "highspeed"`) and Scalable TCP (`cc = "scalable"`)
//! against their theory, each with its tolerance and the reason for it.

use cclab_sim::{build, parse, RunResult};

/// One run of a one-flow scenario: (goodput in packets/s, mean RTT in s,
/// recoveries, timeouts) over the statistics window.
fn one_flow(text: &str, seed: u64) -> (f64, f64, u64, u64) {
    let scenario = parse(text, "t").unwrap_or_else(|e| panic!("{e}\n{text}"));
    let mut sim = build(&scenario, seed).unwrap_or_else(|e| panic!("{e}"));
    sim.engine.run();
    let r = RunResult::collect(&sim, 0.0);
    let f = &r.flows[0];
    let pkts = f.goodput_bps / 8000.0; // 1000-byte segments
    let rtt = f.seconds("rtt_mean_s").expect("rtt_mean_s");
    (pkts, rtt, f.count("recoveries").unwrap_or(0), f.count("timeouts").unwrap_or(0))
}

/// One Scalable TCP flow on a DropTail dumbbell with a buffer of one BDP.
fn scalable_dumbbell(rate_mbps: u32, ssthresh: u32) -> String {
    format!(
        r#"
[run]
duration = "40s"
warmup = "10s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "{rate_mbps}Mbps"
delay = "10ms"
buffer = "1bdp"
[[flows]]
cc = "scalable"
recovery = "sack"
rtt = "40ms"
initial_ssthresh = {ssthresh}
"#
    )
}

/// Scalable TCP is MIMD: a congestion epoch lasts ln(1/(1-b))/ln(1+a) =
/// ln(8/7)/ln(1.01) = 13.4 RTTs of growth with one ACK per segment, whatever
/// the rate (Kelly 2003 §2). On a DropTail link the window also keeps growing
/// for about one RTT between the overflow and its detection and is held for
/// the RTT of recovery, so the measured epoch (statistics window / recoveries,
/// in mean RTTs) lies in [13.4, 13.4 x 1.25] (measured: 15.4 at both rates,
/// 13.4 + 2); and doubling the rate changes it by less than 10 %
/// (statistical error: about 26 epochs per run).
#[test]
fn scalable_epoch_length_in_rtts_does_not_depend_on_the_rate() {
    let theory = (8.0f64 / 7.0).ln() / 1.01f64.ln();
    let mut epochs = Vec::new();
    for (rate, ssthresh) in [(200, 1000), (400, 2000)] {
        let (pkts, rtt, recoveries, timeouts) = one_flow(&scalable_dumbbell(rate, ssthresh), 1);
        assert!(recoveries > 10, "{rate} Mbit/s: {recoveries} recoveries");
        assert_eq!(timeouts, 0, "{rate} Mbit/s");
        let epoch = 30.0 / recoveries as f64 / rtt;
        let utilisation = pkts * 1040.0 * 8.0 / (rate as f64 * 1e6);
        eprintln!(
            "scalable {rate} Mbit/s: {recoveries} recoveries, mean RTT {:.1} ms, epoch {epoch:.2} RTTs \
             (theory {theory:.2}), utilisation {utilisation:.3}",
            rtt * 1e3
        );
        assert!(epoch >= theory && epoch <= 1.25 * theory, "{rate} Mbit/s: epoch {epoch:.2} RTTs");
        epochs.push(epoch);
    }
    assert!((epochs[1] / epochs[0] - 1.0).abs() < 0.1, "{epochs:?}");
}

fn highspeed_random_loss(p: f64, duration_s: u32, response: &str) -> String {
    format!(
        r#"
[run]
duration = "{duration_s}s"
warmup = "40s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "1Gbps"
delay = "40ms"
buffer = "unlimited"
loss = {p}
[[flows]]
cc = "highspeed"
cc_params = {{ response = "{response}" }}
recovery = "sack"
rtt = "100ms"
"#
    )
}

/// RFC 3649 §5 eq. (1): HighSpeed TCP's average window under loss rate p is
/// 0.12/p^0.835 (Table 3: 263 segments at p = 1e-4, 1795 at 1e-5). One flow on
/// a 1 Gbit/s, 100 ms path with Bernoulli loss and an unlimited buffer (no
/// queueing, so the window is goodput x RTT; the slow-start overshoot is over
/// within the 40 s warm-up) lands within 20 % of it: eq. (1) is the
/// deterministic sawtooth's, random loss raises the average (Reno's Mathis
/// constant is 1.31 under Bernoulli loss against 1.22 for the sawtooth, +7 %),
/// the unit test of the same rules (cc::highspeed) finds it within 8 %, and the
/// remainder covers the simulator's recovery RTTs and statistical error (about
/// 100 and 40 loss events per run). Exception: the table's upper-row lookup
/// gives a(w) = 4 around w = 263 where §5's formula gives 3.4 (+18 %), so at
/// p = 1e-4 the table runs above the formula and is held to [1, 1.35] x eq. (1)
/// (measured: table 320, formula 284; at 1e-5, where the rows are dense, the
/// table gives 2015, +12 %).
#[test]
fn highspeed_average_window_follows_the_response_function() {
    let mut at_1e4 = Vec::new();
    for (p, duration, response, (lo, hi)) in [
        (1e-4, 400, "formula", (0.8, 1.2)),
        (1e-4, 400, "table", (1.0, 1.35)),
        (1e-5, 240, "table", (0.8, 1.2)),
    ] {
        let (pkts, rtt, recoveries, timeouts) = one_flow(&highspeed_random_loss(p, duration, response), 1);
        let window = pkts * rtt;
        let theory = 0.12 / f64::powf(p, 0.835);
        eprintln!(
            "highspeed {response} p {p}: average window {window:.0} (eq. 1: {theory:.0}), {recoveries} recoveries, \
             {timeouts} timeouts, mean RTT {:.1} ms",
            rtt * 1e3
        );
        assert!(recoveries > 30, "{response} p {p}: {recoveries} recoveries");
        let ratio = window / theory;
        assert!(ratio >= lo && ratio <= hi, "{response} p {p}: window {window:.0}, eq. (1) {theory:.0}");
        if p == 1e-4 {
            at_1e4.push(window);
        }
    }
    assert!(at_1e4[1] > at_1e4[0], "the upper-row table is the more aggressive: {at_1e4:?}");
}
