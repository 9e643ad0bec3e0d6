//! Pacing (`pacing = "rtt"` or `"linux"` on a TCP flow): departures follow the
//! pacer's gap, an unpaced flow sends bursts, and pacing keeps every loss
//! recovery delivering each byte exactly once.

use crate::common;

use cclab_sim::Simulation;
use cclab_transport::tcp::sender::TransmitRecord;
use cclab_wire::time::{secs, serialization_time};
use common::{access_rate_bps, finish, lossy_transfers, ms, simulation};

/// One SACK flow on a 100 Mbit/s, 40 ms path whose access links are as fast as
/// the bottleneck (so the network does not spread a burst before it reaches
/// the bottleneck). The buffer is unlimited, so nothing is lost. With
/// ssthresh 50 the flow leaves slow start within 0.3 s and grows by a segment
/// per RTT to about 290 segments by 10 s, below the BDP of 481: the queue
/// stays empty and every RTT sample is the same, so srtt is constant.
fn steady(pacing: &str, ssthresh: u32) -> String {
    format!(
        r#"
[run]
duration = "10s"
[topology]
kind = "dumbbell"
access = {{ rate = "100Mbps" }}
[topology.bottleneck]
rate = "100Mbps"
delay = "10ms"
buffer = "unlimited"
[[flows]]
rtt = "40ms"
recovery = "sack"
initial_ssthresh = {ssthresh}
pacing = "{pacing}"
"#
    )
}

/// Runs the scenario and returns every transmission of its one flow.
fn transmissions(sim: &mut Simulation) -> Vec<TransmitRecord> {
    let flow = sim.flows[0].clone();
    sim.sender_mut(&flow).unwrap().record_transmissions();
    let r = finish(sim);
    assert_eq!(r.flows[0].count("retransmits"), Some(0), "a loss-free run");
    assert_eq!(r.links[0].drops + r.links[0].losses, 0);
    sim.sender(&flow).unwrap().transmissions().unwrap().to_vec()
}

/// Successive departures after slow start (from 2 s), as (previous, next).
fn steady_gaps(log: &[TransmitRecord]) -> Vec<(TransmitRecord, u64)> {
    log.windows(2).filter(|w| w[0].at >= secs(2)).map(|w| (w[0], w[1].at - w[0].at)).collect()
}

/// `pacing = "rtt"` lets one packet out every srtt / cwnd, computed at the
/// previous departure. The pacer never sends early (1 ns of rounding). A
/// departure can be late only when the window, not the pacer, holds it: it
/// then leaves on the ACK that opens the window. With srtt equal to the RTT,
/// floor(cwnd) departures paced at srtt / cwnd span less than one RTT by
/// frac(cwnd) gaps, so that ACK is less than one gap late: every gap lies in
/// [g, 2g). Most departures are not held at all: at least 85 % are exact.
#[test]
fn rtt_pacing_spaces_departures_srtt_over_cwnd_apart() {
    let mut sim = simulation(&steady("rtt", 50), 1);
    let access = serialization_time(1040, access_rate_bps(&sim));
    let log = transmissions(&mut sim);
    let gaps = steady_gaps(&log);
    let mut exact = 0;
    let mut latest = 0;
    let mut within_access = 0;
    for (prev, gap) in &gaps {
        let g = (prev.srtt as f64 / prev.cwnd).round() as u64;
        assert!(*gap + 1 >= g, "early: {gap} ns after seg {} (srtt/cwnd = {g} ns)", prev.seg);
        assert!(*gap < 2 * g, "held more than one gap: {gap} ns after seg {} (g = {g} ns)", prev.seg);
        exact += (gap.abs_diff(g) <= 1) as usize;
        within_access += (gap.abs_diff(g) <= access) as usize;
        latest = latest.max(gap.saturating_sub(g));
    }
    let n = gaps.len();
    let last = log.last().unwrap();
    eprintln!(
        "rtt pacing: {n} gaps from 2 s, {exact} ({:.1} %) exactly srtt/cwnd, {within_access} within one access \
         transmission ({access} ns) of it, latest {latest} ns; cwnd {:.1}, srtt {:.3} ms at the end",
        100.0 * exact as f64 / n as f64,
        last.cwnd,
        ms(last.srtt)
    );
    assert!(n > 30_000);
    assert!(exact as f64 >= 0.85 * n as f64);
}

/// The same flow without pacing sends each window as a burst: the ACKs of the
/// previous window come back one access-link transmission apart (83.2 us; the
/// bottleneck is as fast), each lets one packet out (two at once when cwnd
/// grows past a whole segment), and then the flow waits for the next round.
/// Every gap is therefore 0, exactly one access transmission, or an idle gap
/// longer than RTT/4, about one per RTT (40 ms over 8 s: 200). The paced flow
/// has neither bursts nor idle gaps.
#[test]
fn without_pacing_a_window_leaves_as_a_burst() {
    let mut unpaced = simulation(&steady("none", 50), 1);
    let access = serialization_time(1040, access_rate_bps(&unpaced));
    let count = |gaps: &[(TransmitRecord, u64)]| {
        let burst = gaps.iter().filter(|(_, g)| *g == access || *g == 0).count();
        let idle = gaps.iter().filter(|(_, g)| *g > secs(1) / 100).count();
        (gaps.len(), burst, idle)
    };
    let (n, burst, idle) = count(&steady_gaps(&transmissions(&mut unpaced)));
    let (pn, pburst, pidle) = count(&steady_gaps(&transmissions(&mut simulation(&steady("rtt", 50), 1))));
    eprintln!(
        "no pacing: {burst} of {n} gaps ({:.1} %) are 0 or one access transmission ({access} ns), {idle} idle \
         gaps over RTT/4; rtt pacing: {pburst} of {pn} and {pidle}",
        100.0 * burst as f64 / n as f64
    );
    assert_eq!(burst + idle, n, "nothing between a burst and an idle gap");
    assert!((190..=210).contains(&idle), "one idle gap per round trip: {idle}");
    assert_eq!((pburst, pidle), (0, 0));
}

/// `pacing = "linux"`: a packet of L bytes is followed by L / rate with rate =
/// ratio x cwnd x MSS / srtt (cwnd >= the flight in a loss-free run), ratio 2
/// while cwnd < ssthresh / 2 and 1.2 after. With ssthresh 400 the flow goes
/// through three phases: slow start below 200 at ratio 2 and from 200 to 400
/// at ratio 1.2, where the window grows faster than the pacing rate and the
/// pacer sets every gap; then congestion avoidance, where the window grows by
/// one segment per RTT (past the BDP of 481 a queue forms), the pacer allows
/// 20 % more, and the ACK clock sets most gaps. The pacer never sends early in any phase, and a gap that matches
/// one ratio's formula never matches the other's.
#[test]
fn linux_pacing_uses_ratio_2_in_slow_start_and_1_2_after() {
    let ssthresh = 400.0;
    let mut sim = simulation(&steady("linux", ssthresh as u32), 1);
    let log = transmissions(&mut sim);
    let gap_at = |prev: &TransmitRecord, ratio: f64| {
        let rate = ratio * prev.cwnd * 1000.0 / (prev.srtt as f64 * 1e-9);
        (prev.wire_bytes as f64 / rate * 1e9).round() as u64
    };
    // [gaps, exact] in: slow start at ratio 2, slow start at 1.2, congestion avoidance at 1.2.
    let mut phases = [[0usize; 2]; 3];
    for w in log.windows(2).filter(|w| w[0].srtt > 0) {
        let (prev, gap) = (&w[0], w[1].at - w[0].at);
        let (phase, ratio, other) = if prev.cwnd < ssthresh / 2.0 {
            (0, 2.0, 1.2)
        } else if prev.cwnd < ssthresh {
            (1, 1.2, 2.0)
        } else {
            (2, 1.2, 2.0)
        };
        let g = gap_at(prev, ratio);
        assert!(
            gap + 1 >= g,
            "early: {gap} ns after seg {} at cwnd {:.1} (pacing gap {g} ns)",
            prev.seg,
            prev.cwnd
        );
        let exact = gap.abs_diff(g) <= 1;
        assert!(exact || gap.abs_diff(gap_at(prev, other)) > 1, "seg {} matches the other ratio", prev.seg);
        phases[phase][0] += 1;
        phases[phase][1] += exact as usize;
    }
    let share = |[n, exact]: [usize; 2]| exact as f64 / n.max(1) as f64;
    eprintln!(
        "linux pacing [gaps, exactly at the pacing rate]: slow start at 2x {:?} ({:.1} %), slow start at 1.2x {:?} \
         ({:.1} %), congestion avoidance {:?} ({:.1} %)",
        phases[0],
        100.0 * share(phases[0]),
        phases[1],
        100.0 * share(phases[1]),
        phases[2],
        100.0 * share(phases[2])
    );
    assert!(phases[0][0] >= 200 && share(phases[0]) >= 0.9);
    assert!(phases[1][0] >= 100 && share(phases[1]) >= 0.9);
    assert!(phases[2][0] >= 10_000 && phases[2][1] > 0);
}

/// Pacing combines with every loss recovery: paced transfers under random
/// loss in both directions deliver every byte exactly once and in order,
/// finish, and conserve packets (the invariants test, with pacing).
#[test]
fn paced_transfers_deliver_every_byte_once_with_each_loss_recovery() {
    let size = 300_000u64 + 777;
    for pacing in ["rtt", "linux"] {
        for recovery in ["tahoe", "reno", "newreno", "sack", "sack1", "decoupled"] {
            let keys = format!("recovery = \"{recovery}\"\npacing = \"{pacing}\"\nmin_rto = \"200ms\"");
            let case = format!("{pacing} {recovery}");
            let retransmits: u64 = (1..=4u64).map(|seed| lossy_transfers(&keys, size, seed, &case)).sum();
            eprintln!(
                "{pacing} pacing with {recovery}: 12 transfers complete, {retransmits} retransmissions"
            );
            assert!(retransmits > 0, "recovery was exercised");
        }
    }
}
