//! Link departures by traffic kind (issue 8, item 2): the counters a study
//! needs to compute the available bandwidth a flow could have used.

use crate::common;

use cclab_sim::results::TimeSeries;
use cclab_sim::run_toml;

const SCENARIO: &str = r#"
[run]
duration = "12s"
warmup = "2s"
[topology]
kind = "dumbbell"
access = { rate = "1Gbps" }
[topology.bottleneck]
rate = "5Mbps"
delay = "10ms"
buffer = "1bdp"
[[flows]]
name = "bulk"
rtt = "40ms"
recovery = "sack"
[[flows]]
name = "cross"
protocol = "udp"
rtt = "40ms"
app = { kind = "cbr", rate = "2Mbps", size = "1000B" }
[[observe]]
links = ["left->right"]
metrics = ["departed_bytes*"]
every = "500ms"
"#;

/// `(time_s, value)` of one series of the bottleneck.
fn series(ts: &TimeSeries, metric: &str) -> Vec<(f64, f64)> {
    let points = common::series(ts, "left->right", metric);
    assert!(!points.is_empty(), "no series {metric}");
    points
}

/// Mean rate in bit/s of a cumulative byte counter between `from` and `to` seconds.
fn rate(points: &[(f64, f64)], from: f64, to: f64) -> f64 {
    let at = |t: f64| {
        points
            .iter()
            .find(|p| (p.0 - t).abs() < 1e-9)
            .map(|p| p.1)
            .unwrap_or_else(|| panic!("no sample at {t} s"))
    };
    (at(to) - at(from)) * 8.0 / (to - from)
}

#[test]
fn departures_by_kind_sum_to_the_total_and_measure_the_cross_traffic() {
    let result = run_toml(SCENARIO, "t", None).unwrap_or_else(|e| panic!("{e}"));
    let ts = result.timeseries.expect("time series recorded");
    let total = series(&ts, "departed_bytes");
    let kinds: Vec<Vec<(f64, f64)>> = ["tcp_data", "tcp_ack", "udp", "udt"]
        .iter()
        .map(|k| series(&ts, &format!("departed_bytes.{k}")))
        .collect();
    for (i, &(t, v)) in total.iter().enumerate() {
        let sum: f64 = kinds.iter().map(|k| k[i].1).sum();
        assert_eq!(sum, v, "at {t} s");
    }
    // The UDP source's rate counts its whole datagram on the wire, as the link does.
    let udp = rate(&kinds[2], 2.0, 11.5);
    assert!((udp - 2e6).abs() < 0.01 * 2e6, "udp {udp}");
    // No link carries more than its rate; on the forward path TCP sends data only.
    let all = rate(&total, 2.0, 11.5);
    assert!(all <= 5e6 * 1.001, "total {all}");
    assert_eq!(rate(&kinds[1], 2.0, 11.5), 0.0);
    assert_eq!(rate(&kinds[3], 2.0, 11.5), 0.0);
}
