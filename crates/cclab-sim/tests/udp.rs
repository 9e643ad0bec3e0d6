//! UDP constant-bit-rate sources (`protocol = "udp"`, `app = { kind = "cbr" }`):
//! every packet accounted for, the share an unresponsive flow takes from TCP,
//! and on/off periods.

use crate::common;

use cclab_sim::run_toml;
use common::{finish, simulation};

/// 30 Mbit/s of CBR into a 10 Mbit/s bottleneck with 1 % random loss: every
/// packet sent is received or counted lost by the sink, and every loss the sink
/// counts is a drop or a loss at the bottleneck.
///
/// A sink counts a loss when a later sequence number arrives, so it cannot see
/// packets lost after the last one it receives. The source therefore ends with
/// a short burst: on/off periods of 1 s, stopped 10 ms into the third
/// on-period, so the last 38 packets meet a buffer that drained during the off
/// period (50 packets) and the last packet arrives. This seed does not lose it
/// at random; if it did, the equality below would fail by the trailing losses.
#[test]
fn every_udp_packet_is_received_or_counted_lost() {
    let text = r#"
[run]
duration = "6s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "10Mbps"
delay = "10ms"
buffer = "1bdp"
loss = 0.01
[[flows]]
name = "cbr"
protocol = "udp"
rtt = "40ms"
stop = "4.01s"
app = { kind = "cbr", rate = "30Mbps", size = "1000B", on = "1s", off = "1s" }
"#;
    let mut sim = simulation(text, 1);
    let r = finish(&mut sim);
    let flow = &r.flows[0];
    let lost = flow.count("packets_lost").unwrap();
    let bottleneck = &r.links[0];
    assert_eq!(bottleneck.role, "bottleneck");
    eprintln!(
        "UDP conservation: sent {} = received {} + lost {}; bottleneck drops {} + losses {}",
        flow.packets_sent, flow.packets_received, lost, bottleneck.drops, bottleneck.losses
    );
    // 3750 packets in each full on-period (1 s at 30 Mbit/s of 1000-byte
    // packets) and 38 in the 10 ms of the last (packets at 0, 266.7 us, ... 9.87 ms).
    assert_eq!(flow.packets_sent, 3750 + 3750 + 38);
    assert_eq!(flow.packets_sent, flow.packets_received + lost);
    assert!(bottleneck.drops > 1000 && bottleneck.losses > 10, "both kinds of loss occur");
    assert_eq!(lost, bottleneck.drops + bottleneck.losses);
    let everywhere: u64 = r.links.iter().map(|l| l.drops + l.losses).sum();
    assert_eq!(everywhere, lost, "nothing is lost outside the bottleneck");
    assert_eq!(sim.engine.packets_in_flight(), 0, "everything drained before the end");
}

/// One SACK flow and 40 Mbit/s of CBR share a 100 Mbit/s bottleneck
/// (examples/udp-cross.toml, measured over 10-30 s). UDP does not back off, so
/// it gets what it sends except its share of the drops; TCP gets the rest.
///
/// Tolerances: UDP loses packets only when TCP's window overflows the buffer,
/// once per sawtooth (seconds apart at this window), so it must receive at
/// least 98 % of its 40 Mbit/s. TCP's data on the wire (retransmissions
/// included) must lie in [0.55, 0.61] of the link: at most the 0.60 UDP leaves
/// plus the UDP drops it takes over, at least that minus the idle time after a
/// halving. "1bdp" is sized on the whole link (490 packets), 1.7 times the BDP
/// of TCP's 60 Mbit/s share, so the queue never empties after a halving and
/// utilisation must reach 0.97.
#[test]
fn a_udp_flow_at_forty_percent_leaves_tcp_the_rest() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/udp-cross.toml"))
        .expect("examples/udp-cross.toml");
    let r = run_toml(&text, "udp-cross", None).unwrap();
    let window_s = r.sim_time_s - r.warmup_s;
    let (tcp, udp) = (&r.flows[0], &r.flows[1]);
    assert_eq!((tcp.protocol.as_str(), udp.protocol.as_str()), ("tcp", "udp"));
    let capacity = r.links[0].rate_bps as f64;
    let udp_received_bps = udp.packets_received as f64 * 1000.0 * 8.0 / window_s;
    let udp_loss = udp.count("packets_lost").unwrap() as f64 / udp.packets_sent as f64;
    let tcp_share = tcp.throughput_bps / capacity;
    let util = r.links[0].utilization;
    eprintln!(
        "udp-cross: UDP sent {:.2} Mbit/s, received {:.2} Mbit/s (loss {:.3} %); TCP wire {:.2} Mbit/s = {tcp_share:.4} \
         of capacity, goodput {:.2} Mbit/s, {} retransmits; bottleneck utilisation {util:.4}",
        udp.throughput_bps / 1e6,
        udp_received_bps / 1e6,
        udp_loss * 100.0,
        tcp.throughput_bps / 1e6,
        tcp.goodput_bps / 1e6,
        tcp.count("retransmits").unwrap()
    );
    assert!((udp.throughput_bps - 40e6).abs() < 40e6 * 1e-3, "the source sends its rate");
    // Received counts arrivals in the window, so the packets on their way at
    // its start may push it a fraction above what was sent in it.
    assert!(
        (0.98 * 40e6..=1.001 * 40e6).contains(&udp_received_bps),
        "UDP received {udp_received_bps} bit/s"
    );
    assert!((0.55..=0.61).contains(&tcp_share), "TCP share {tcp_share}");
    assert!(util >= 0.97, "utilisation {util}");
}

/// On for 1 s, off for 1 s at 5 Mbit/s on an uncongested 10 Mbit/s path: the
/// sink receives half the on-rate, and every packet's one-way delay is the
/// propagation delay plus three serialisations (no queue ever forms).
///
/// The window [1.5 s, 21.5 s) holds ten whole on-periods (2-3 s, ..., 20-21 s),
/// each exactly 625 packets (1 s / 1.6 ms), so the received rate is exact. The
/// tolerance of one packet per on-period (4 kbit/s) covers an on-period that is
/// not a whole number of packet intervals.
#[test]
fn on_off_periods_halve_the_rate_and_add_no_delay() {
    let text = r#"
[run]
duration = "21.5s"
warmup = "1.5s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "10Mbps"
delay = "10ms"
buffer = "1bdp"
[[flows]]
name = "onoff"
protocol = "udp"
rtt = "40ms"
app = { kind = "cbr", rate = "5Mbps", size = "1000B", on = "1s", off = "1s" }
"#;
    let r = run_toml(text, "t", None).unwrap();
    let flow = &r.flows[0];
    let received_bps = flow.packets_received as f64 * 1000.0 * 8.0 / 20.0;
    // One-way: 20 ms of propagation, 1000 B at 100 Mbit/s on two access links
    // (80 us each) and at 10 Mbit/s on the bottleneck (800 us).
    let base = 0.020;
    let expected_delay = base + 2.0 * 80e-6 + 800e-6;
    let delay = flow.seconds("delay_mean_s").unwrap();
    eprintln!(
        "on/off CBR: {} packets received in 20 s = {:.4} Mbit/s (half the on-rate: 2.5); mean one-way delay {:.4} ms",
        flow.packets_received,
        received_bps / 1e6,
        delay * 1e3
    );
    assert!((received_bps - 2.5e6).abs() <= 10.0 * 8000.0 / 20.0, "received {received_bps} bit/s");
    assert_eq!(flow.count("packets_lost"), Some(0));
    assert!(delay >= base);
    assert!(
        (delay - expected_delay).abs() < 1e-9,
        "mean one-way delay {delay} s, expected {expected_delay} s"
    );
}
