//! Transfers arriving as a Poisson process (`app = { kind = "arrivals" }`):
//! how many start, their sizes, their completion times, and the connections
//! the engine opens and reclaims for them.

use crate::common;

use cclab_core::{Engine, MeasurementWindow};
use cclab_sim::build::tcp_endpoints;
use cclab_sim::sources::agent::TransferOpener;
use cclab_sim::sources::arrivals::{ArrivalPlan, ArrivalSource};
use cclab_sim::sources::AppSpec;
use cclab_sim::RunResult;
use cclab_transport::tcp::App;
use common::{finish, simulation, summary};
use serde_json::Value;

/// One arrivals source on an otherwise idle 100 Mbit/s path, for `duration` seconds.
fn web(rate: &str, size: &str, duration: u32) -> String {
    format!(
        r#"
[run]
duration = "{duration}s"
[topology]
kind = "dumbbell"
access = {{ rate = "1Gbps" }}
[topology.bottleneck]
rate = "100Mbps"
delay = "10ms"
buffer = "1bdp"
[[flows]]
name = "web"
recovery = "sack"
rtt = "40ms"
app = {{ kind = "arrivals", rate = "{rate}", size = "{size}" }}
"#
    )
}

fn run(text: &str, seed: u64) -> RunResult {
    finish(&mut simulation(text, seed))
}

fn sizes(r: &RunResult) -> Vec<f64> {
    r.transfers.iter().map(|t| t.size_bytes as f64).collect()
}

/// 50 arrivals per second for 100 s: the number of transfers started is
/// Poisson with mean 5000 and standard deviation 70.7; each seed's count must
/// lie within 4 standard deviations (a false alarm once in 16 000 seeds).
/// Constant sizes are exact.
#[test]
fn transfers_start_as_a_poisson_process_with_constant_sizes_exact() {
    let (rate, seconds) = (50.0, 100.0);
    let mean = rate * seconds;
    for seed in 1..=5 {
        let r = run(&web("50/s", "10KB", 100), seed);
        let n = r.transfers.len() as f64;
        eprintln!(
            "seed {seed}: {n} transfers started in 100 s at 50/s ({:+.2} sd)",
            (n - mean) / mean.sqrt()
        );
        assert!((n - mean).abs() <= 4.0 * mean.sqrt(), "seed {seed}: {n} arrivals");
        assert_eq!(r.connections.opened as f64, n, "one connection per transfer");
        assert!(r.transfers.iter().all(|t| t.size_bytes == 10_000));
        assert!(r.transfers.iter().all(|t| t.start_s > 0.0 && t.start_s < seconds));
        assert!(r.transfers.flow_id.windows(2).all(|w| w[0] != w[1]));
    }
}

/// Sample statistics of about 5000 drawn sizes, each within 4 standard errors
/// of its expected value:
/// - exponential, mean 10 KB: the sample mean (standard error mean/sqrt(n), 1.4 %);
/// - Pareto, shape 3, mean 10 KB: the sample mean (finite variance: standard
///   deviation = scale sqrt(3/4) = 0.577 mean, standard error 0.8 %);
/// - Pareto, shape 1.2, mean 10 KB: infinite variance, so the sample mean does
///   not settle; the median, scale 2^(1/shape) with scale = mean (shape - 1) /
///   shape = 1667 B, has standard error median / (shape sqrt(n)) (1.2 %), and
///   no size lies below the scale.
#[test]
fn size_distributions_have_their_mean_or_median() {
    let exp = sizes(&run(&web("50/s", "exponential(mean=10KB)", 100), 1));
    let n = exp.len() as f64;
    let mean = exp.iter().sum::<f64>() / n;
    eprintln!("exponential(mean=10KB): {n} sizes, sample mean {mean:.0} B");
    assert!((mean / 10_000.0 - 1.0).abs() <= 4.0 / n.sqrt(), "exponential sample mean {mean}");

    let pareto3 = sizes(&run(&web("50/s", "pareto(mean=10KB, shape=3)", 100), 2));
    let n = pareto3.len() as f64;
    let mean = pareto3.iter().sum::<f64>() / n;
    eprintln!("pareto(mean=10KB, shape=3): {n} sizes, sample mean {mean:.0} B");
    let sd = (2.0 / 3.0) * 0.75f64.sqrt();
    assert!((mean / 10_000.0 - 1.0).abs() <= 4.0 * sd / n.sqrt(), "Pareto 3 sample mean {mean}");

    let mut heavy = sizes(&run(&web("50/s", "pareto(mean=10KB, shape=1.2)", 100), 3));
    heavy.sort_by(f64::total_cmp);
    let n = heavy.len() as f64;
    let median = heavy[heavy.len() / 2];
    let scale = 10_000.0 * 0.2 / 1.2;
    let expected = scale * 2f64.powf(1.0 / 1.2);
    eprintln!(
        "pareto(mean=10KB, shape=1.2): {n} sizes, median {median:.0} B (expected {expected:.0}), smallest {}, largest {}",
        heavy[0],
        heavy[heavy.len() - 1]
    );
    assert!((median / expected - 1.0).abs() <= 4.0 / (1.2 * n.sqrt()), "Pareto 1.2 median {median}");
    assert!(heavy[0] >= scale.round(), "nothing below the scale");
}

/// On the web example (Pareto sizes beside a bulk flow on 100 Mbit/s), every
/// transfer that completed took at least its serialisation at the bottleneck
/// (payload plus 40 header bytes per segment) plus one base RTT, and delivered
/// exactly its size; unfinished ones delivered at most their size (the last
/// ACK may still be on its way when the run ends).
#[test]
fn completion_takes_at_least_serialisation_plus_one_rtt() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/arrivals.toml"))
        .expect("examples/arrivals.toml");
    let mut sim = simulation(&text, 1);
    let r = finish(&mut sim);
    let (rate, rtt) = (r.links[0].rate_bps as f64, r.flows[0].rtt_base_s);
    let mut completed = 0;
    let mut tightest = f64::MAX;
    for t in r.transfers.iter() {
        let Some(completion) = t.completion_s else {
            assert!(t.delivered_bytes <= t.size_bytes, "flow {}", t.flow_id);
            continue;
        };
        completed += 1;
        assert_eq!(t.delivered_bytes, t.size_bytes, "flow {}", t.flow_id);
        let wire = t.size_bytes + 40 * t.size_bytes.div_ceil(1000);
        let bound = wire as f64 * 8.0 / rate + rtt;
        assert!(completion >= bound, "flow {}: {completion} s < {bound} s", t.flow_id);
        tightest = tightest.min(completion / bound);
    }
    eprintln!(
        "arrivals example: {} transfers, {completed} completed; the fastest took {tightest:.3} times its bound",
        r.transfers.len()
    );
    assert!(completed as f64 >= 0.95 * r.transfers.len() as f64);
}

/// 50 transfers of 10 KB per second on 100 Mbit/s (4 % load): each lasts a few
/// round trips, so about 50/s x 0.1 s = 5 are alive at a time (Little's law).
/// Every completed transfer's connection is reclaimed, and the most alive at
/// once stays under 40 (a Poisson count of mean 5 exceeds 40 with probability
/// below 1e-20), against 5000 opened.
#[test]
fn connections_are_reclaimed_when_transfers_complete() {
    let r = run(&web("50/s", "10KB", 100), 1);
    let completed = r.transfers.iter().filter(|t| t.completion_s.is_some()).count() as u64;
    let c = r.connections;
    eprintln!(
        "reclaiming: opened {}, closed {}, completed {completed}, peak {}, orphaned packets {}",
        c.opened, c.closed, c.peak, c.orphaned_packets
    );
    assert_eq!(c.closed, completed);
    assert!(c.opened - c.closed <= 40, "only the last few are still open");
    assert!(c.peak <= 40, "peak {}", c.peak);
    assert!(c.peak * 100 < c.opened);
}

#[test]
fn the_transfers_table_is_a_function_of_the_seed() {
    let text = web("50/s", "exponential(mean=20KB)", 10);
    let transfers = |seed| summary(&text, seed)["transfers"].clone();
    let a = transfers(7);
    assert!(a["flow_id"].as_array().is_some_and(|t| t.len() > 400));
    assert_eq!(a, transfers(7), "same seed, same transfers");
    let b = transfers(8);
    assert_ne!(a, b, "another seed, other transfers");
    let starts = |v: &Value| v["start_s"][0].clone();
    assert_ne!(starts(&a), starts(&b));
    // Arrival times and sizes come from separate streams: other sizes, same
    // arrivals. (The table lists transfers in the order they completed.)
    let constant = summary(&web("50/s", "20KB", 10), 7)["transfers"].clone();
    let start_times = |v: &Value| {
        let mut t: Vec<f64> =
            v["start_s"].as_array().into_iter().flatten().filter_map(Value::as_f64).collect();
        t.sort_by(f64::total_cmp);
        t
    };
    assert!(start_times(&a) == start_times(&constant), "the size distribution moved the arrivals");
}

/// A traffic source whose factory cannot build a connection stops and the run
/// reports it as an error naming the source's `flows[i].app`. The builder's
/// factory is checked before the run and never fails afterwards, so the test
/// rebuilds the engine of a built scenario with a factory that fails after
/// three connections.
#[test]
fn a_source_that_cannot_open_connections_is_reported_at_its_app_key() {
    let text = web("50/s", "10KB", 2);
    let mut sim = simulation(&text, 1);
    let window = sim.engine.window();
    assert_eq!(window, MeasurementWindow { start: 0, end: 2_000_000_000 });
    let net = std::mem::take(&mut sim.engine.net);
    let (from, to) = (net.node_id("web[0].snd").unwrap(), net.node_id("web[0].rcv").unwrap());
    let mut engine = Engine::new(net, window);
    let bucket = engine.add_bucket();
    let group = sim.scenario.flows[0].clone();
    let AppSpec::Arrivals { rate, size } = group.app else { panic!("an arrivals source") };
    let plan = ArrivalPlan { rate, sizes: size, start: 0, stream: "flow:web:0".into(), seed: 1 };
    let mut built = 0;
    let factory = Box::new(move |start| {
        built += 1;
        if built > 3 {
            return Err("no endpoints left".to_string());
        }
        tcp_endpoints(&group, start, App::Stream, 0)
    });
    engine.add_agent(Box::new(ArrivalSource::new(plan, TransferOpener::new(from, to, bucket, factory))));
    engine.reserve_flows(1);
    sim.engine = engine;
    sim.engine.run();
    let e = sim.check_agents().unwrap_err();
    eprintln!("{e}");
    assert_eq!(e.path, "flows[0].app");
    assert!(e.message.contains("the traffic source stopped: no endpoints left"), "{e}");
    assert_eq!(sim.engine.totals().connections_opened, 3, "the source stopped at its first failure");
    sim.check_conservation().unwrap();
}
