//! Validation against theory, each with its tolerance and the reason for it.

use cclab_sim::theory::{jain_index, mathis_pkts_per_s, padhye_pkts_per_s};
use cclab_sim::{build, parse, run_toml};

/// Mathis constant for Bernoulli (random) loss with one ACK per packet.
const MATHIS_RANDOM_C: f64 = 1.31;

fn random_loss_flow(recovery: &str, p: f64, duration_s: u32) -> String {
    format!(
        r#"
[run]
duration = "{duration_s}s"
warmup = "20s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "10Mbps"
delay = "40ms"
buffer = "unlimited"
loss = {p}
[[flows]]
recovery = "{recovery}"
rtt = "100ms"
"#
    )
}

/// A single NewReno or SACK (RFC 6675 or ns-2 Sack1) flow on an uncongested 10 Mbit/s, 100 ms path with
/// Bernoulli loss lands between 0.8x PFTK (which assumes correlated losses and
/// charges timeouts, so it undershoots) and 1.2x Mathis with C = 1.31 (no
/// timeouts, so it overshoots). The 20 % margins cover the models' own
/// approximations; statistical error is kept small by 3000 s runs averaged over
/// three seeds (hundreds to thousands of loss events each).
#[test]
fn random_loss_throughput_lies_between_padhye_and_mathis() {
    let mut report = Vec::new();
    for recovery in ["newreno", "sack", "sack1"] {
        for p in [0.001, 0.01] {
            let text = random_loss_flow(recovery, p, 3000);
            let scn = parse(&text, "v").unwrap();
            let mut goodput = 0.0;
            let mut rtt = 0.0;
            let mut rto = 0.0;
            let seeds = [1u64, 2, 3];
            for &seed in &seeds {
                let mut sim = build(&scn, seed).unwrap();
                sim.engine.run();
                let flow = &sim.flows[0];
                let r = cclab_sim::RunResult::collect(&sim, 0.0);
                goodput += r.flows[0].goodput_bps / 8000.0; // packets of 1000 B per second
                rtt += r.flows[0].seconds("rtt_mean_s").unwrap();
                let sender = sim.sender(flow).unwrap();
                rto += cclab_wire::time::to_secs_f64(sender.state().rtt.base_rto());
            }
            let n = seeds.len() as f64;
            let (goodput, rtt, rto) = (goodput / n, rtt / n, rto / n);
            let padhye = padhye_pkts_per_s(p, rtt, rto, 1.0, f64::INFINITY);
            let mathis = mathis_pkts_per_s(p, rtt, MATHIS_RANDOM_C);
            let (lo, hi) = (0.8 * padhye, 1.2 * mathis);
            let position = (goodput - padhye) / (mathis - padhye);
            report.push(format!(
                "{recovery:>8} p={p:<6} goodput {goodput:7.1} pkt/s  PFTK {padhye:7.1}  Mathis {mathis:7.1}  \
                 band [{lo:7.1}, {hi:7.1}]  at {:.0}% of the way from PFTK to Mathis (RTT {:.1} ms, T0 {:.2} s)",
                position * 100.0,
                rtt * 1e3,
                rto
            ));
            assert!(goodput >= lo && goodput <= hi, "{}", report.last().unwrap());
        }
    }
    eprintln!("\nrandom-loss validation:\n{}", report.join("\n"));
}

/// Reno halves its window to exactly the BDP when the buffer holds one BDP, so
/// the queue never drains and the link stays busy. Measured after a 100 s
/// warm-up: the first slow start overshoots by up to a window and NewReno then
/// repairs one hole per RTT, a transient that can keep cwnd below the BDP for
/// tens of seconds at 100 Mbit/s. Tahoe restarts from one segment after every
/// loss and spends its slow start below the BDP, so it gets a looser bound.
#[test]
fn a_single_loss_free_flow_fills_a_bdp_buffered_bottleneck() {
    for (recovery, bound) in
        [("reno", 0.95), ("newreno", 0.95), ("sack", 0.95), ("sack1", 0.95), ("tahoe", 0.90)]
    {
        for rate in ["10Mbps", "100Mbps"] {
            let text = format!(
                r#"
[run]
duration = "300s"
warmup = "100s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "{rate}"
delay = "10ms"
buffer = "1bdp"
[[flows]]
recovery = "{recovery}"
rtt = "40ms"
"#
            );
            let r = run_toml(&text, "v", None).unwrap();
            let util = r.links[0].utilization;
            eprintln!("single {recovery} flow at {rate}, 1 BDP buffer: bottleneck utilisation {util:.4}");
            assert!(util >= bound, "{recovery} at {rate}: utilisation {util} < {bound}");
            assert_eq!(r.flows[0].count("timeouts"), Some(0), "{recovery} at {rate}");
        }
    }
}

#[test]
fn eight_reno_flows_with_equal_rtts_share_fairly() {
    let text = r#"
[run]
duration = "110s"
warmup = "10s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "20Mbps"
delay = "10ms"
buffer = "1bdp"
[[flows]]
count = 8
cc = "reno"
recovery = "newreno"
rtt = "50ms"
start = "0s..2s"
"#;
    for seed in [1, 2, 3] {
        let r = run_toml(text, "v", Some(seed)).unwrap();
        let goodputs: Vec<f64> = r.flows.iter().map(|f| f.goodput_bps).collect();
        let j = jain_index(&goodputs);
        eprintln!("8 Reno flows, seed {seed}: Jain's index {j:.4} over 100 s");
        assert!(j >= 0.95, "seed {seed}: Jain {j}, goodputs {goodputs:?}");
    }
}
