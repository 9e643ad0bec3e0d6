//! CoDel, FQ-CoDel and PIE in whole simulations: each keeps the queueing
//! delay its source says it keeps, FQ-CoDel isolates a sparse flow, ECN
//! marks replace drops, and packets are conserved and delivered exactly once.

use crate::common;

use cclab_sim::results::LinkResult;
use cclab_sim::{build, parse, run_toml, RunResult};
use common::tiles;

/// `count` long-lived SACK/Reno flows over a 100 Mbit/s, 40 ms dumbbell
/// with a one-BDP buffer (about 480 packets) and the given queue.
fn bulk(queue: &str, count: u32, flow_keys: &str) -> String {
    format!(
        r#"
[run]
duration = "20s"
warmup = "5s"
[topology]
kind = "dumbbell"
access = {{ rate = "1Gbps" }}
[topology.bottleneck]
rate = "100Mbps"
delay = "10ms"
buffer = "1bdp"
queue = "{queue}"
[[flows]]
count = {count}
recovery = "sack"
rtt = "40ms"
start = "0s..1s"
{flow_keys}
"#
    )
}

fn bottleneck(r: &RunResult) -> &LinkResult {
    r.links.iter().find(|l| l.name == "left->right").expect("bottleneck link")
}

fn ms(s: f64) -> f64 {
    s * 1000.0
}

/// RFC 8289 §3: CoDel keeps the standing queue's sojourn time near its 5 ms
/// target. Two bulk flows, one-BDP buffer, 20 s: DropTail's mean queueing
/// delay is about 19 ms (the buffer is a BDP); CoDel's must be under 10 ms
/// and under half of DropTail's, with the link still above 90 % utilised.
#[test]
fn codel_keeps_the_sojourn_time_near_its_target() {
    let droptail = run_toml(&bulk("droptail", 2, ""), "t", Some(1)).expect("runs");
    let codel = run_toml(&bulk("codel", 2, ""), "t", Some(1)).expect("runs");
    let (d, c) = (bottleneck(&droptail), bottleneck(&codel));
    eprintln!(
        "codel: mean queueing delay {:.2} ms (droptail {:.2} ms), utilisation {:.3} ({:.3}), {} drops",
        ms(c.queue_delay_mean_s),
        ms(d.queue_delay_mean_s),
        c.utilization,
        d.utilization,
        c.drops
    );
    assert!(ms(c.queue_delay_mean_s) < 10.0, "codel {} ms", ms(c.queue_delay_mean_s));
    assert!(c.queue_delay_mean_s < 0.5 * d.queue_delay_mean_s, "droptail {} s", d.queue_delay_mean_s);
    assert!(c.utilization > 0.9, "utilisation {}", c.utilization);
    assert_eq!(c.queue, "codel");
    assert!(c.early_drops > 0, "codel never dropped");
}

/// RFC 8033 §4: PIE steers the queueing delay to its 15 ms reference. Two
/// bulk flows with a two-BDP buffer (DropTail would keep about 40 ms): PIE's
/// mean queueing delay lies within [7.5, 22.5] ms, half its reference either side.
#[test]
fn pie_steers_the_queueing_delay_to_its_reference() {
    let text = bulk("pie", 2, "").replace("buffer = \"1bdp\"", "buffer = \"2bdp\"");
    let pie = run_toml(&text, "t", Some(1)).expect("runs");
    let droptail =
        run_toml(&text.replace("queue = \"pie\"", "queue = \"droptail\""), "t", Some(1)).expect("runs");
    let (p, d) = (bottleneck(&pie), bottleneck(&droptail));
    eprintln!(
        "pie: mean queueing delay {:.2} ms (droptail {:.2} ms), utilisation {:.3}, {} early drops",
        ms(p.queue_delay_mean_s),
        ms(d.queue_delay_mean_s),
        p.utilization,
        p.early_drops
    );
    assert!((7.5..=22.5).contains(&ms(p.queue_delay_mean_s)), "pie {} ms", ms(p.queue_delay_mean_s));
    assert!(p.utilization > 0.9, "utilisation {}", p.utilization);
}

/// RFC 8290 §1 and §4.1: a sparse flow's packets go on the new-flows list and
/// are sent ahead of the backlogged flows. A 1 Mbit/s CBR flow beside four
/// bulk TCP flows: its queueing delay (mean one-way delay less the path's
/// propagation and serialisation) is under 5 ms with FQ-CoDel; with
/// DropTail it waits behind the whole queue.
#[test]
fn fq_codel_gives_a_sparse_flow_almost_no_queueing_delay() {
    let text = |queue: &str| {
        bulk(queue, 4, "")
            + r#"
[[flows]]
name = "voice"
protocol = "udp"
app = { kind = "cbr", rate = "1Mbps", size = "200B" }
rtt = "40ms"
"#
    };
    // The backlog of each flow's queue: the sparse flow's stays near empty.
    let observed = text("fq_codel")
        + "[[observe]]\nlinks = [\"left->right\"]\nmetrics = [\"fq_codel.flow_backlog_bytes\"]\nevery = \"100ms\"\n";
    let r = run_toml(&observed, "t", Some(2)).expect("runs");
    let ts = r.timeseries.as_ref().expect("observed");
    let mean_backlog = |flow_id: u32| {
        let id = ts.series.iter().position(|s| s.flow_id == Some(flow_id)).expect("a series per flow");
        let m = &ts.metrics;
        let values: Vec<f64> = (0..m.series.len())
            .filter(|&i| m.series[i] as usize == id && m.time_s[i] >= 5.0)
            .map(|i| m.value[i])
            .collect();
        values.iter().sum::<f64>() / values.len() as f64
    };
    let bulk_backlog = (0..4).map(mean_backlog).fold(f64::MAX, f64::min);
    let voice_backlog = mean_backlog(4);
    eprintln!("fq_codel: mean backlog of the sparse flow's queue {voice_backlog:.0} B, the bulk flows' at least {bulk_backlog:.0} B");
    assert!(voice_backlog < 400.0, "the sparse flow's queue held {voice_backlog} bytes on average");
    assert!(bulk_backlog > 4.0 * voice_backlog.max(1.0), "bulk {bulk_backlog}");
    let queueing = |queue: &str| {
        let r = run_toml(&text(queue), "t", Some(2)).expect("runs");
        let voice = r.flows.iter().find(|f| f.name == "voice").expect("cbr flow");
        let one_way = voice.seconds("delay_mean_s").expect("sink delay");
        // 20 ms of propagation; 200 B over 1 Gbit/s twice and 100 Mbit/s once.
        let base = 0.020 + 2.0 * 200.0 * 8.0 / 1e9 + 200.0 * 8.0 / 100e6;
        (one_way - base, bottleneck(&r).utilization)
    };
    let (fq, fq_utilisation) = queueing("fq_codel");
    let (tail, _) = queueing("droptail");
    eprintln!("fq_codel: sparse flow waits {:.3} ms (droptail {:.2} ms)", ms(fq), ms(tail));
    assert!(ms(fq) < 5.0, "fq_codel {} ms", ms(fq));
    assert!(fq < tail / 4.0, "droptail {} ms", ms(tail));
    assert!(fq_utilisation > 0.9, "utilisation {fq_utilisation}");
}

/// With `ecn = true` on the queue and ECN-capable flows, CoDel and PIE mark
/// where they would drop: marks, and far fewer drops than without ECN.
#[test]
fn ecn_marks_replace_drops() {
    for queue in ["codel", "fq_codel", "pie"] {
        let plain = run_toml(&bulk(queue, 8, ""), "t", Some(3)).expect("runs");
        let text = bulk(queue, 8, "ecn = true").replace(
            &format!("queue = \"{queue}\""),
            &format!("queue = \"{queue}\"\nqueue_params = {{ ecn = true }}"),
        );
        let marked = run_toml(&text, "t", Some(3)).expect("runs");
        let (p, m) = (bottleneck(&plain), bottleneck(&marked));
        eprintln!("{queue}: {} drops without ECN; {} marks and {} drops with it", p.drops, m.marks, m.drops);
        assert!(m.marks > 0, "{queue}: no marks");
        assert!(m.drops * 4 < p.drops.max(1), "{queue}: {} drops with ECN against {}", m.drops, p.drops);
    }
}

/// Every byte of three transfers arrives once and in order, and packets are
/// conserved at every queue (the pool holds exactly the packets inside
/// links), through each discipline that dequeues, with and without ECN and
/// random loss, on a small buffer that overflows.
#[test]
fn disciplines_that_dequeue_conserve_packets_and_deliver_exactly_once() {
    let size = 400_000u64 + 333;
    for (queue, params, ecn) in [
        ("codel", "target = \"2ms\", interval = \"20ms\"", false),
        ("codel", "target = \"2ms\", interval = \"20ms\", ecn = true", true),
        ("fq_codel", "target = \"2ms\", interval = \"20ms\", flows = 4", false),
        ("fq_codel", "ecn = true, quantum = \"300B\"", true),
        ("pie", "target = \"5ms\"", false),
        ("pie", "ecn = true, dq_rate_estimator = true", true),
    ] {
        for (loss, reverse_loss) in [("0.0", "0.0"), ("0.02", "0.01")] {
            for seed in 1..=3u64 {
                let case = format!("{queue} {{ {params} }} loss {loss} seed {seed}");
                let text = format!(
                    r#"
[run]
duration = "300s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "10Mbps"
delay = "10ms"
buffer = "30pkts"
queue = "{queue}"
queue_params = {{ {params} }}
loss = {loss}
reverse_loss = {reverse_loss}
[[flows]]
count = 3
rtt = "60ms"
start = "0s..2s"
recovery = "sack"
ecn = {ecn}
delayed_ack = {delayed}
app = {{ kind = "transfer", size = "{size}B" }}
[[flows]]
name = "back"
direction = "reverse"
count = 2
rtt = "80ms"
recovery = "newreno"
"#,
                    delayed = seed % 2 == 0
                );
                let mut sim = build(&parse(&text, "t").expect("parses"), seed).expect("builds");
                sim.record_deliveries();
                sim.engine.run();
                sim.check_conservation().unwrap_or_else(|e| panic!("{case}: {e}"));
                let link = &sim.engine.net.links[0];
                // With random loss the flows may never fill the queue; without, they must.
                assert!(
                    link.stats.drops + link.stats.marks > 0 || loss != "0.0",
                    "{case}: the queue never acted"
                );
                for f in sim.flows.iter().filter(|f| f.group == 0) {
                    assert!(tiles(sim.deliveries(f).expect("recorded"), size), "{case} flow {}", f.flow_id);
                    assert!(sim.sender(f).expect("sender").is_finished(), "{case}");
                }
            }
        }
    }
}
