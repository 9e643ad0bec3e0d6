//! Delivery-rate samples (draft-cheng-iccrg-delivery-rate-estimation, taken on
//! every ACK by `tcp/rate.rs`) measured against the bottleneck they should see.

use crate::common;

use cclab_sim::Simulation;
use cclab_transport::tcp::rate::RateSample;
use cclab_transport::tcp::sender::TransmitRecord;
use cclab_wire::time::{secs, to_secs_f64};
use cclab_wire::Time;
use common::{finish, simulation};

/// One flow on a `rate` bottleneck with a 40 ms RTT and an unlimited buffer.
fn path(rate: &str, flow: &str, loss: f64) -> String {
    format!(
        r#"
[run]
duration = "10s"
[topology]
kind = "dumbbell"
access = {{ rate = "1Gbps" }}
[topology.bottleneck]
rate = "{rate}"
delay = "10ms"
buffer = "unlimited"
loss = {loss}
[[flows]]
rtt = "40ms"
{flow}
"#
    )
}

/// The bottleneck's rate in payload bytes per second: the estimator counts the
/// payload bytes delivered (MSS 1000), while the link also carries the
/// 40-byte header of every segment.
fn payload_rate(rate_bps: f64) -> f64 {
    rate_bps / 8.0 * 1000.0 / 1040.0
}

struct Recorded {
    samples: Vec<(Time, RateSample)>,
    transmissions: Vec<TransmitRecord>,
}

fn record(sim: &mut Simulation) -> Recorded {
    let flow = sim.flows[0].clone();
    let sender = sim.sender_mut(&flow).unwrap();
    sender.record_rate_samples();
    sender.record_transmissions();
    finish(sim);
    let sender = sim.sender(&flow).unwrap();
    Recorded {
        samples: sender.rate_samples().unwrap().to_vec(),
        transmissions: sender.transmissions().unwrap().to_vec(),
    }
}

/// A bulk flow alone on a clean path, its window capped at twice the BDP so
/// the bottleneck stays saturated with a standing queue and no loss: once the
/// queue has formed (from 2 s), ACKs return one bottleneck transmission apart
/// and every sample measures the bottleneck's payload rate. The tolerance is
/// the brief's 2 %; the estimator takes the longer of the send and ACK
/// intervals (draft §3.3), and with evenly spaced ACKs both give the link rate.
#[test]
fn samples_converge_to_the_bottleneck_payload_rate() {
    for (rate, rate_bps, max_window) in [("10Mbps", 10e6, 100), ("100Mbps", 100e6, 1000)] {
        let flow = format!("recovery = \"sack\"\nmax_window = {max_window}");
        let mut sim = simulation(&path(rate, &flow, 0.0), 1);
        let rec = record(&mut sim);
        let expected = payload_rate(rate_bps);
        let ratio = |s: &RateSample| s.bytes_per_second() / expected;
        let steady: Vec<&(Time, RateSample)> = rec.samples.iter().filter(|(t, _)| *t >= secs(2)).collect();
        let (lo, hi) =
            steady.iter().fold((f64::MAX, 0f64), |(lo, hi), (_, s)| (lo.min(ratio(s)), hi.max(ratio(s))));
        // When the samples first came within 2 % and stayed there.
        let settled =
            rec.samples.iter().rposition(|(_, s)| (ratio(s) - 1.0).abs() > 0.02).map_or(0, |i| i + 1);
        eprintln!(
            "{rate}: {} samples, {} from 2 s in [{lo:.5}, {hi:.5}] of {expected:.0} B/s; within 2 % from {:.3} s on",
            rec.samples.len(),
            steady.len(),
            rec.samples.get(settled).map_or(f64::NAN, |(t, _)| to_secs_f64(*t))
        );
        assert!(steady.len() > 9000);
        assert!(lo >= 0.98 && hi <= 1.02);
        assert!(steady.iter().all(|(_, s)| !s.app_limited), "a bulk sender always has data");
    }
}

/// A finite transfer's last round: the draft marks a sample application-limited
/// when the segment it measures was sent while the application had nothing
/// more to send and the window had room (the packet's `is_app_limited`, set
/// from the connection's state at send time). Every segment of a loss-free
/// transfer leaves while unsent data remains, so none of its samples is
/// marked, and its last samples still measure the bottleneck (within 2 %).
/// Only segments sent after the last new one, retransmissions of a lossy
/// transfer, can carry the mark: the lossy runs below show marked samples,
/// each after such a retransmission, and none before the last new segment left.
#[test]
fn only_segments_sent_after_the_application_ran_out_give_app_limited_samples() {
    let mut sim = simulation(
        &path("10Mbps", "recovery = \"sack\"\napp = { kind = \"transfer\", size = \"300KB\" }", 0.0),
        1,
    );
    let rec = record(&mut sim);
    let (t, last) = *rec.samples.last().unwrap();
    let ratio = last.bytes_per_second() / payload_rate(10e6);
    eprintln!(
        "loss-free 300 KB transfer: {} samples, none app-limited; the last at {:.3} s measures {ratio:.4} of the bottleneck",
        rec.samples.len(),
        to_secs_f64(t)
    );
    assert_eq!(rec.samples.len(), 300, "one sample per ACK, one ACK per segment");
    assert!(rec.samples.iter().all(|(_, s)| !s.app_limited));
    assert!((ratio - 1.0).abs() <= 0.02);

    let mut marked = 0;
    for recovery in ["sack", "sack1", "newreno"] {
        for seed in 1..=10 {
            let flow =
                format!("recovery = \"{recovery}\"\napp = {{ kind = \"transfer\", size = \"100KB\" }}");
            let mut sim = simulation(&path("10Mbps", &flow, 0.05), seed);
            let rec = record(&mut sim);
            let last_new = rec.transmissions.iter().map(|x| x.seg).max().unwrap();
            let ran_out = rec.transmissions.iter().find(|x| x.seg == last_new).unwrap().at;
            for (at, _) in rec.samples.iter().filter(|(_, s)| s.app_limited) {
                assert!(*at > ran_out, "{recovery} seed {seed}: marked before the application ran out");
                // Anything sent after the last new segment is a retransmission.
                let cause = rec.transmissions.iter().any(|x| x.at > ran_out && x.at < *at);
                assert!(
                    cause,
                    "{recovery} seed {seed}: a marked sample at {at} without a retransmission before it"
                );
                marked += 1;
            }
        }
    }
    eprintln!("lossy 100 KB transfers (sack and newreno, 10 seeds each): {marked} app-limited samples");
    assert!(marked >= 5);
}
