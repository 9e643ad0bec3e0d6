//! Named metrics and `[[observe]]`: selection, errors, the resolved scenario,
//! the long table and its wide views, and the proof that a new algorithm's
//! own metric reaches the time series without a change anywhere else.

use crate::common;

use cclab_core::{Engine, Observation, Open, Source, Watch};
use cclab_sim::observe::{Observe, SeriesInfo};
use cclab_sim::results::TimeSeries;
use cclab_sim::{parse, resolved, run_toml, RunResult};
use cclab_transport::cc::reno::Reno;
use cclab_transport::cc::{AckSample, CongestionControl, CongestionEvent, Response, Window};
use cclab_transport::registry::defaults;
use cclab_transport::tcp::{App, TcpReceiver, TcpSender};
use cclab_wire::time::millis;
use cclab_wire::{MetricDesc, Metrics};
use common::{finish, simulation};

const BASE: &str = r#"
[run]
duration = "2s"
[topology]
kind = "dumbbell"
access = { rate = "1Gbps" }
[topology.bottleneck]
rate = "10Mbps"
delay = "10ms"
buffer = "20pkts"
[[flows]]
name = "bulk"
rtt = "40ms"
recovery = "sack"
[[flows]]
name = "cbr"
protocol = "udp"
app = { kind = "cbr", rate = "1Mbps", size = "1000B" }
rtt = "40ms"
"#;

fn with(extra: &str) -> String {
    format!("{BASE}{extra}")
}

fn timeseries(text: &str) -> TimeSeries {
    run_toml(text, "t", None).unwrap_or_else(|e| panic!("{e}")).timeseries.expect("time series recorded")
}

/// The values of one series, by component, instance (flows) and metric.
fn values(ts: &TimeSeries, component: &str, metric: &str) -> Vec<f64> {
    common::series(ts, component, metric).into_iter().map(|(_, v)| v).collect()
}

#[test]
fn an_observe_section_records_only_what_it_selects_at_its_interval() {
    let ts = timeseries(&with(
        "[[observe]]\nflows = [\"bulk\"]\nmetrics = [\"cwnd\", \"recovery.*\"]\nevery = \"10ms\"\n\
         [[observe]]\nlinks = [\"left->right\"]\nmetrics = [\"queue_*\", \"drops\"]\nevery = \"100ms\"\n",
    ));
    let names: Vec<(&str, &str, &str)> =
        ts.series.iter().map(|s| (s.selection.as_str(), s.component.as_str(), s.metric.as_str())).collect();
    assert_eq!(
        names,
        [
            ("observe[0]", "bulk", "cwnd"),
            ("observe[0]", "bulk", "recovery.in_recovery"),
            ("observe[0]", "bulk", "recovery.pipe"),
            ("observe[1]", "left->right", "queue_packets"),
            ("observe[1]", "left->right", "queue_bytes"),
            ("observe[1]", "left->right", "drops"),
        ]
    );
    assert_eq!(values(&ts, "bulk", "cwnd").len(), 200, "every 10 ms over 2 s");
    assert_eq!(values(&ts, "left->right", "drops").len(), 20);
    assert!(values(&ts, "left->right", "drops").windows(2).all(|w| w[0] <= w[1]), "a counter never falls");
    assert!(values(&ts, "bulk", "recovery.in_recovery").iter().all(|&v| v == 0.0 || v == 1.0));
    // Without run.sample there is no wide view.
    assert!(ts.flows.time_s.is_empty() && ts.links.time_s.is_empty());
}

#[test]
fn run_sample_records_the_default_metrics_and_its_wide_view_matches_the_long_rows() {
    let ts = timeseries(&BASE.replace("duration = \"2s\"", "duration = \"2s\"\nsample = \"100ms\""));
    let bulk: Vec<&str> =
        ts.series.iter().filter(|s| s.component == "bulk").map(|s| s.metric.as_str()).collect();
    assert_eq!(
        bulk,
        ["cwnd", "ssthresh", "srtt", "rtt", "seq_sent", "seq_acked", "in_flight", "bytes_delivered"]
    );
    let cbr: Vec<&str> =
        ts.series.iter().filter(|s| s.component == "cbr").map(|s| s.metric.as_str()).collect();
    assert_eq!(cbr, ["packets_sent", "bytes_sent", "bytes_delivered"]);
    assert!(ts.series.iter().all(|s| s.selection == "run.sample"));
    // The wide view has TCP flows only (as before named metrics) and agrees with the long rows.
    assert_eq!(ts.flows.cwnd, values(&ts, "bulk", "cwnd"));
    let seq: Vec<f64> = ts.flows.seq_acked.iter().map(|&v| v as f64).collect();
    assert_eq!(seq, values(&ts, "bulk", "seq_acked"));
    let q: Vec<f64> =
        ts.links.queue_pkts.iter().step_by(ts.links.queue_pkts.len() / 20).map(|&v| v as f64).collect();
    assert_eq!(q, values(&ts, "left->right", "queue_packets"));
}

#[test]
fn unknown_names_are_one_line_errors_naming_the_key_and_the_valid_names() {
    let err = |extra: &str| parse(&with(extra), "t").unwrap_err();
    let e = err("[[observe]]\nflows = [\"bulkk\"]\nevery = \"1ms\"\n");
    assert_eq!(e.path, "observe[0].flows");
    assert!(e.message.contains("unknown flow group \"bulkk\"; did you mean \"bulk\"?"), "{e}");
    assert!(e.message.contains("(one of bulk, cbr)"), "{e}");
    let e = err("[[observe]]\nlinks = [\"left->rigth\"]\nevery = \"1ms\"\n");
    assert_eq!(e.path, "observe[0].links");
    assert!(e.message.contains("did you mean \"left->right\"?"), "{e}");
    let e = err("[[observe]]\nflows = [\"bulk\"]\nmetrics = [\"cc.estimate\"]\nevery = \"1ms\"\n");
    assert_eq!(e.path, "observe[0].metrics");
    assert!(e.message.contains("unknown metric \"cc.estimate\""), "{e}");
    assert!(e.message.contains("cwnd, ssthresh"), "{e}");
    let e = err("[[observe]]\nflows = [\"bulk\"]\n");
    assert_eq!((e.path.as_str(), e.message.as_str()), ("observe[0].every", "is required"));
    let e = err("[[observe]]\nevery = \"1ms\"\n");
    assert_eq!(e.path, "observe[0].flows");
    let e = err("[[observe]]\nflows = [\"bulk\"]\nevery = \"1ms\"\nmetric = [\"cwnd\"]\n");
    assert_eq!(e.path, "observe[0].metric");
    assert!(!e.to_string().contains('\n'), "one line: {e}");
}

#[test]
fn the_resolved_scenario_lists_every_recorded_name_and_reads_back_the_same() {
    let text = with("[[observe]]\nflows = [\"*\"]\nmetrics = [\"*_sent\"]\nevery = \"50ms\"\n");
    let scenario = parse(&text, "t").unwrap();
    assert_eq!(
        scenario.observe,
        [Observe {
            flows: vec!["bulk".into(), "cbr".into()],
            links: vec![],
            metrics: vec!["seq_sent".into(), "packets_sent".into(), "bytes_sent".into()],
            every: millis(50),
            on_change: false,
        }]
    );
    let written = resolved::to_toml(&scenario);
    assert_eq!(parse(&written, "t").unwrap(), scenario, "{written}");
    let json = serde_json::to_value(&scenario).unwrap();
    assert_eq!(json["observe"][0]["every"], 0.05);
}

#[test]
fn the_memory_estimate_counts_each_observe_section() {
    let text = with("[[observe]]\nflows = [\"bulk\"]\nmetrics = [\"cwnd\", \"rtt\"]\nevery = \"1us\"\n");
    let e = cclab_sim::limits::check(&parse(&text, "t").unwrap(), cclab_sim::MemoryLimit::Bytes(100_000_000))
        .unwrap_err();
    assert_eq!(e.path, "observe[0]", "{e}");
    assert!(e.message.starts_with("2,000,001 samples of 2 series need about"), "{e}");
}

// ------------------------------------------------------------- the proof

/// A congestion control that exists only in this test: Reno's window, plus an
/// "estimate" it publishes as `cc.estimate` (here the ACKs it has seen).
#[derive(Default)]
struct EstimatingReno {
    acks: u64,
}

const ESTIMATING_METRICS: &[MetricDesc] = &[MetricDesc {
    name: "estimate",
    unit: "acks",
    meaning: "ACKs seen so far (a stand-in for an estimate)",
}];

impl CongestionControl for EstimatingReno {
    fn name(&self) -> &'static str {
        "estimating-reno"
    }

    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        self.acks += 1;
        Reno.on_ack(w, ack);
    }

    fn on_congestion(&mut self, w: &Window, event: &CongestionEvent) -> Response {
        Reno.on_congestion(w, event)
    }

    fn metrics(&self, out: &mut Metrics<'_>) {
        out.put("estimate", self.acks as f64);
    }
}

/// The registry is a constant list, so the test puts its sender into a built
/// simulation's engine in place of the registered one, selects the metrics its
/// descriptor list names, and reads them back from the run's result.
#[test]
fn a_test_only_congestion_control_publishes_its_own_metric_into_the_time_series() {
    let text = BASE.split("[[flows]]\nname = \"cbr\"").next().unwrap_or(BASE).to_string();
    let mut sim = simulation(&text, 1);
    let window = sim.engine.window();
    let net = std::mem::take(&mut sim.engine.net);
    let (from, to) = (net.node_id("bulk[0].snd").unwrap(), net.node_id("bulk[0].rcv").unwrap());
    let mut engine = Engine::new(net, window);
    let bucket = engine.add_bucket();
    let cfg = sim.scenario.flows[0].tcp_config(0, App::Bulk, 0).unwrap();
    let sender = TcpSender::new(
        &cfg,
        Box::new(EstimatingReno::default()),
        defaults::loss_recovery("sack").unwrap(),
        None,
    );
    let open = Open {
        sender: Box::new(sender),
        receiver: Box::new(TcpReceiver::new(&cfg)),
        from,
        to,
        bucket,
        size: None,
        start: 0,
    };
    let (_, snd, rcv) = engine.connect(0, open);
    engine.reserve_flows(1);

    // The selection comes from the algorithm's own metric list, prefixed by its role.
    let every = millis(100);
    let mut names: Vec<String> = ESTIMATING_METRICS.iter().map(|d| format!("cc.{}", d.name)).collect();
    names.push("cwnd".into());
    let metrics = names.iter().enumerate().map(|(i, n)| (n.clone(), i as u32)).collect();
    engine.observe(Observation::new(every, vec![Watch::new(Source::Endpoint(snd), metrics)]));
    sim.series = names
        .iter()
        .map(|n| SeriesInfo {
            selection: "observe[0]".into(),
            kind: "flow",
            component: "bulk".into(),
            instance: Some(0),
            flow_id: Some(0),
            metric: n.clone(),
            unit: "",
            every_s: 0.1,
        })
        .collect();
    sim.scenario.observe = vec![Observe {
        flows: vec!["bulk".into()],
        links: vec![],
        metrics: names.clone(),
        every,
        on_change: false,
    }];
    sim.flows[0].sender = Some(snd);
    sim.flows[0].receiver = Some(rcv);
    sim.engine = engine;

    let result: RunResult = finish(&mut sim);
    let ts = result.timeseries.expect("time series");
    let estimate = values(&ts, "bulk", "cc.estimate");
    assert_eq!(estimate.len(), 20, "one value every 100 ms over 2 s");
    assert_eq!(estimate[0], 0.0, "no ACK before the first sample at t = 0");
    assert!(estimate.windows(2).all(|w| w[0] <= w[1]) && estimate[19] > 1000.0, "{estimate:?}");
    assert_eq!(values(&ts, "bulk", "cwnd").len(), 20);
}

/// `[[observe]]` checks link names before the network is built, so its list
/// must be the builder's, in the builder's order.
#[test]
fn link_names_known_before_the_build_are_the_built_ones() {
    let text = BASE.replace("name = \"cbr\"", "name = \"cbr\"\ncount = 2\ndirection = \"reverse\"");
    let sim = simulation(&text, 1);
    let built: Vec<&str> = sim.engine.net.links.iter().map(|l| l.spec.name.as_str()).collect();
    let known = cclab_sim::observe::link_names(&sim.scenario.graph, &sim.scenario.flows);
    assert_eq!(known, built);
}

#[test]
fn a_pacer_publishes_its_rate_under_pacing() {
    let text = with("[[observe]]\nflows = [\"bulk\"]\nmetrics = [\"pacing.*\"]\nevery = \"500ms\"\n")
        .replace("recovery = \"sack\"", "recovery = \"sack\"\npacing = \"linux\"");
    let ts = timeseries(&text);
    assert_eq!(ts.series[0].unit, "bit/s");
    let rate = values(&ts, "bulk", "pacing.rate");
    assert_eq!(rate.len(), 4);
    // No rate before the first RTT sample; after it, 120-200 % of cwnd x MSS / srtt.
    assert_eq!(rate[0], 0.0);
    assert!(rate[1..].iter().all(|&r| r > 1e6), "{rate:?}");
}
