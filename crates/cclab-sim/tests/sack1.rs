//! ns-2 Sack1 loss recovery in whole simulations: every byte delivered once
//! when the bottleneck's DropTail queue overflows, and a burst of drops in one
//! window repaired in about an RTT, as RFC 6675 `sack` does, where NewReno
//! needs about one RTT per lost segment.

use crate::common;

use cclab_sim::Simulation;
use cclab_wire::time::to_secs_f64;
use cclab_wire::Endpoint;
use common::{simulation, tiles};
use std::collections::HashSet;

/// Many flows through a three-packet buffer: drops from overflow alone, often
/// several per window, and retransmissions dropped too.
fn overflowing(recovery: &str, size: u64) -> String {
    format!(
        r#"
[run]
duration = "120s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "5Mbps"
delay = "5ms"
buffer = "3pkts"
[[flows]]
count = 12
recovery = "{recovery}"
rtt = "30ms"
start = "0s..1s"
min_rto = "200ms"
app = {{ kind = "transfer", size = "{size}B" }}
"#
    )
}

#[test]
fn sack1_delivers_every_byte_once_in_order_when_droptail_overflows() {
    let size = 200_000u64 + 333;
    for seed in 1..=4u64 {
        let mut sim = simulation(&overflowing("sack1", size), seed);
        sim.record_deliveries();
        sim.engine.run();
        sim.check_conservation().unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let drops: u64 = sim.engine.net.links.iter().map(|l| l.stats.drops).sum();
        assert!(drops > 100, "seed {seed}: expected overflow drops, got {drops}");
        for f in &sim.flows {
            assert!(tiles(sim.deliveries(f).unwrap(), size), "seed {seed} flow {}", f.flow_id);
            assert!(sim.sender(f).unwrap().is_finished(), "seed {seed} flow {}", f.flow_id);
        }
    }
}

/// One flow whose slow start overflows a small buffer: nine segments of one
/// window are dropped (checked below), and nothing else is.
fn slow_start_overshoot(recovery: &str, buffer: u32) -> String {
    format!(
        r#"
[run]
duration = "30s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "10Mbps"
delay = "10ms"
buffer = "{buffer}pkts"
[[flows]]
recovery = "{recovery}"
rtt = "60ms"
min_rto = "1s"
app = {{ kind = "transfer", size = "1000000B" }}
"#
    )
}

struct Episode {
    drops: u64,
    timeouts: u64,
    recoveries: u64,
    /// From the first retransmission to the last, in units of the srtt at the first.
    span_rtts: f64,
}

fn episode(recovery: &str, buffer: u32) -> Episode {
    let mut sim: Simulation = simulation(&slow_start_overshoot(recovery, buffer), 1);
    let flow = sim.flows[0].clone();
    sim.sender_mut(&flow).expect("a TCP flow").record_transmissions();
    sim.engine.run();
    let drops = sim.engine.net.links.iter().map(|l| l.stats.drops).sum();
    let sender = sim.sender(&flow).expect("a TCP flow");
    assert!(sender.finished_at().is_some(), "{recovery}: transfer unfinished");
    let mut sent = HashSet::new();
    let retransmissions: Vec<_> =
        sender.transmissions().unwrap_or(&[]).iter().filter(|r| !sent.insert(r.seg)).collect();
    let (first, last) = (retransmissions[0], retransmissions[retransmissions.len() - 1]);
    Episode {
        drops,
        timeouts: sender.timeouts(),
        recoveries: sender.recoveries(),
        span_rtts: to_secs_f64(last.at - first.at) / to_secs_f64(first.srtt),
    }
}

/// Tolerances: NewReno repairs one hole per RTT, so its retransmissions span
/// (drops - 1) RTTs within 1.5 RTT (the RTT shrinks as the queue drains); both
/// SACK recoveries repair the nine holes within 2.5 RTTs. Sack1 needs about one
/// RTT more than `sack` here: its pipe starts at the flight less three, not at
/// the flight less every SACKed and lost segment, so it waits longer to send.
#[test]
fn sack1_repairs_a_burst_of_drops_in_about_an_rtt_where_newreno_takes_one_rtt_per_drop() {
    for buffer in [5, 6] {
        let newreno = episode("newreno", buffer);
        let sack = episode("sack", buffer);
        let sack1 = episode("sack1", buffer);
        for (name, e) in [("newreno", &newreno), ("sack", &sack), ("sack1", &sack1)] {
            eprintln!(
                "buffer {buffer} {name}: {} drops, {} recoveries, {} timeouts, retransmissions over {:.2} RTTs",
                e.drops, e.recoveries, e.timeouts, e.span_rtts
            );
            assert_eq!((e.drops, e.recoveries, e.timeouts), (9, 1, 0), "{name}, buffer {buffer}");
        }
        assert!((newreno.span_rtts - 8.0).abs() <= 1.5, "newreno: {:.2} RTTs", newreno.span_rtts);
        assert!(sack.span_rtts <= 2.5, "sack: {:.2} RTTs", sack.span_rtts);
        assert!(sack1.span_rtts <= 2.5, "sack1: {:.2} RTTs", sack1.span_rtts);
    }
}
