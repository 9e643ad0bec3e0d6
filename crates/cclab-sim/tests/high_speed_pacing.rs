//! High-speed TCP with and without pacing at the seed paper's scale (seed 000,
//! issue 9): both keep a 2.5 Gbit/s DropTail bottleneck busy, and pacing
//! smooths the traffic that reaches the bottleneck when ACK compression makes
//! an unpaced sender bursty.

use crate::common;

use cclab_sim::results::TimeSeries;
use cclab_sim::run_toml;
use common::series;

/// Two HighSpeed TCP flows (the seed's Low_Window 31, 1000-byte packets, Sack1)
/// at 40 ms on `rate` with a one-BDP DropTail buffer, starting within the
/// first second, `pacing` on both; `extra` adds flow groups. The bottleneck's
/// arrivals and drops are sampled every 100 us.
fn two_highspeed(rate: &str, duration: &str, warmup: &str, pacing: &str, extra: &str) -> String {
    format!(
        r#"
[run]
duration = "{duration}"
warmup = "{warmup}"
seed = 1
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "{rate}"
delay = "10ms"
buffer = "1bdp"
[[flows]]
name = "hs"
count = 2
rtt = "40ms"
start = "0s..1s"
recovery = "sack1"
cc = "highspeed"
cc_params = {{ low_window = 31 }}
pacing = "{pacing}"
mss = 960
{extra}
[[observe]]
links = ["left->right"]
metrics = ["arrivals", "drops"]
every = "100us"
"#
    )
}

/// What a run says about the forward bottleneck over the measurement window.
struct Bottleneck {
    utilization: f64,
    /// Variance over mean of the packets arriving in each 100 us: about 0 for
    /// evenly spaced arrivals, 1 for Poisson ones, large for bursts.
    arrival_dispersion: f64,
    /// Drops per 100 us interval that has any: 1 when drops come singly.
    drops_per_drop_interval: f64,
}

/// Increments of a cumulative counter over successive samples from `from` seconds.
fn increments(points: &[(f64, f64)], from: f64) -> Vec<f64> {
    let kept: Vec<f64> = points.iter().filter(|p| p.0 >= from).map(|p| p.1).collect();
    kept.windows(2).map(|w| w[1] - w[0]).collect()
}

fn bottleneck(text: &str, warmup_s: f64) -> Bottleneck {
    let result = run_toml(text, "t", None).unwrap_or_else(|e| panic!("{e}"));
    let link = result.links.iter().find(|l| l.name == "left->right").expect("the bottleneck");
    let ts: TimeSeries = result.timeseries.expect("time series recorded");
    let arrivals = increments(&series(&ts, "left->right", "arrivals"), warmup_s);
    let drops = increments(&series(&ts, "left->right", "drops"), warmup_s);
    let n = arrivals.len() as f64;
    let mean = arrivals.iter().sum::<f64>() / n;
    let variance = arrivals.iter().map(|a| (a - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let intervals_with_drops = drops.iter().filter(|&&d| d > 0.0).count();
    Bottleneck {
        utilization: link.utilization,
        arrival_dispersion: variance / mean,
        drops_per_drop_interval: drops.iter().sum::<f64>() / intervals_with_drops.max(1) as f64,
    }
}

/// The seed's Table 2 reports 99.9 % link efficiency at 2.5 Gbit/s for paced and
/// unpaced HSTCP alike. Here two HSTCP flows share the bottleneck with four
/// long-lived TCP flows in the reverse direction (whose data queues the ACKs),
/// measured from 5 s (slow start's overshoot and its recovery are over by then)
/// to 15 s. The buffer holds one BDP, so each halving-or-less of HSTCP's window
/// (b(w) <= 0.5) leaves the queue enough to keep the link busy: measured 1.0000
/// paced and unpaced (seed 1; arrival dispersion 0.26 and 0.22, drops per drop
/// interval 1.7 and 1.1); required above 0.95, as the issue asks.
#[test]
fn paced_and_unpaced_highspeed_keep_a_2g5_bottleneck_busy() {
    let reverse = "[[flows]]\nname = \"back\"\ncount = 4\ndirection = \"reverse\"\nrtt = \"60ms\"\n\
                   start = \"0s..1s\"\nrecovery = \"sack1\"\nmss = 960\n";
    for pacing in ["none", "rtt"] {
        let b = bottleneck(&two_highspeed("2.5Gbps", "15s", "5s", pacing, reverse), 5.0);
        eprintln!(
            "pacing {pacing}: utilization {:.4}, arrival dispersion {:.2}, drops per drop interval {:.2}",
            b.utilization, b.arrival_dispersion, b.drops_per_drop_interval
        );
        assert!(b.utilization > 0.95, "pacing {pacing}: utilization {:.4}", b.utilization);
    }
}

/// With high-speed flows in both directions, the forward flows' ACKs queue
/// behind the reverse flows' data and leave the reverse bottleneck in
/// bunches (ACK compression). An unpaced sender answers each bunch with a
/// burst at the access rate (5 Gbit/s, ten times the bottleneck), so the
/// bottleneck sees bursts and its drops come in clusters; a paced sender
/// spaces its packets srtt/cwnd apart whatever the ACKs do. Measured at
/// 500 Mbit/s over 10-30 s (seed 1): arrival dispersion 16.5 unpaced against
/// 0.10 paced, drops per 100 us interval with drops 14.0 against 1.2, and
/// utilization 0.74 against 0.95 (unpaced bursts overflow the queue while the
/// link idles between them). Required: pacing cuts the dispersion
/// tenfold and the drop clusters fivefold.
#[test]
fn pacing_smooths_the_bottleneck_under_ack_compression() {
    let reverse = "[[flows]]\nname = \"back\"\ncount = 2\ndirection = \"reverse\"\nrtt = \"40ms\"\n\
                   start = \"0s..1s\"\nrecovery = \"sack1\"\ncc = \"highspeed\"\nmss = 960\n";
    let measure = |pacing: &str| bottleneck(&two_highspeed("500Mbps", "30s", "10s", pacing, reverse), 10.0);
    let (unpaced, paced) = (measure("none"), measure("rtt"));
    for (name, b) in [("unpaced", &unpaced), ("paced", &paced)] {
        eprintln!(
            "{name}: utilization {:.4}, arrival dispersion {:.2}, drops per drop interval {:.2}",
            b.utilization, b.arrival_dispersion, b.drops_per_drop_interval
        );
    }
    assert!(
        paced.arrival_dispersion * 10.0 < unpaced.arrival_dispersion,
        "dispersion: paced {:.2}, unpaced {:.2}",
        paced.arrival_dispersion,
        unpaced.arrival_dispersion
    );
    assert!(
        paced.drops_per_drop_interval * 5.0 < unpaced.drops_per_drop_interval,
        "drop clusters: paced {:.2}, unpaced {:.2}",
        paced.drops_per_drop_interval,
        unpaced.drops_per_drop_interval
    );
}
