//! BI-TCP (`cc = "bic"`) and CUBIC (`cc = "cubic"`) on a DropTail dumbbell:
//! one flow, 100 Mbit/s, 100 ms, a buffer of one BDP. The flow settles into
//! a cycle of losses whose period each algorithm's growth rule predicts from
//! W_max (the window at the loss), and the link stays busy because the
//! window after a reduction (0.7 or 0.875 of W_max = BDP + buffer) is more
//! than one BDP.

use cclab_sim::run_toml;
use common::{lossy_transfers, series};

use crate::common;

/// Wire bytes per packet (MSS 1000 + 40 bytes of headers).
const PACKET: f64 = 1040.0;
const RATE: f64 = 100e6;
const RTT: f64 = 0.1;

fn scenario(cc: &str, params: &str, flow: &str, duration: u32) -> String {
    format!(
        r#"
[run]
duration = "{duration}s"
warmup = "20s"
[topology]
kind = "dumbbell"
access = {{ rate = "1Gbps" }}
[topology.bottleneck]
rate = "100Mbps"
delay = "10ms"
buffer = "1bdp"
[[flows]]
name = "f"
rtt = "100ms"
recovery = "sack"
cc = "{cc}"
cc_params = {{ {params} }}
{flow}
[[observe]]
flows = ["f"]
metrics = ["recovery.in_recovery", "cc.w_max"]
every = "1ms"
on_change = true
"#
    )
}

struct Cycle {
    /// When each loss recovery began, from 20 s on (after slow start's overshoot).
    losses: Vec<f64>,
    /// W_max after each of those losses.
    w_max: Vec<f64>,
    utilization: f64,
    timeouts: u64,
    buffer_pkts: f64,
}

fn cycle(cc: &str, params: &str, flow: &str, duration: u32) -> Cycle {
    let r = run_toml(&scenario(cc, params, flow, duration), "t", Some(1)).unwrap_or_else(|e| panic!("{e}"));
    let ts = r.timeseries.as_ref().expect("observed");
    let recovery = series(ts, "f", "recovery.in_recovery");
    let w_max = series(ts, "f", "cc.w_max");
    let losses: Vec<f64> =
        recovery.iter().filter(|(t, v)| *v == 1.0 && *t >= 20.0).map(|(t, _)| *t).collect();
    let after = |t: f64| w_max.iter().take_while(|(s, _)| *s <= t + 1e-9).last().map_or(0.0, |(_, v)| *v);
    Cycle {
        w_max: losses.iter().map(|&t| after(t)).collect(),
        losses,
        utilization: r.links[0].utilization,
        timeouts: r.flows[0].count("timeouts").unwrap_or(0),
        buffer_pkts: r.links[0].buffer_pkts.map_or(0.0, |b| b as f64),
    }
}

fn periods(losses: &[f64]) -> Vec<f64> {
    losses.windows(2).map(|w| w[1] - w[0]).collect()
}

/// RFC 9438 §4.2: after a loss at W_max the window is beta W_max and returns
/// to W_max K = cbrt(W_max (1 - beta) / C) seconds after congestion
/// avoidance resumes, whatever the RTT; a flow alone on the path loses again
/// when its window passes what the path holds, BDP + buffer = 2404 packets.
/// W_max, the window when the loss is detected, is that plus the little the
/// plateau grew in the last round trip, so W_max (within 1 %) and K follow
/// from the path. On the plateau the cubic is flat, so the loss comes
/// cbrt((W_max - 2404) / C) before K, less the round trip by which the
/// target leads (W_cubic(t + srtt), at most 0.2 s with a full buffer), and
/// it is detected a round trip later, after the recovery's round trip
/// (0.14 s at 0.7 W_max) that precedes the epoch: each period lies in
/// [K - cbrt((W_max - 2404) / C) - 0.2 s, K + 0.4 s], and on average within
/// 10 % of K. Fast convergence is off, as §4.7 says for a single flow.
#[test]
fn cubic_losses_are_about_k_apart_and_the_link_stays_busy() {
    let c = cycle("cubic", "fast_convergence = false", "", 75);
    let bdp = RATE * RTT / 8.0 / PACKET;
    let capacity = bdp + c.buffer_pkts;
    let p = periods(&c.losses);
    let k: Vec<f64> = c.w_max.iter().map(|w| (w * 0.3 / 0.4).cbrt()).collect();
    eprintln!(
        "cubic: BDP {bdp:.0} + buffer {:.0} = {capacity:.0} pkts; losses at {:?}; W_max {:?}; K {:?}; periods {:?}; \
         utilization {:.4}; timeouts {}",
        c.buffer_pkts, c.losses, c.w_max, k, p, c.utilization, c.timeouts
    );
    assert!(p.len() >= 3, "{:?}", c.losses);
    for (i, period) in p.iter().enumerate() {
        assert!((c.w_max[i] - capacity).abs() < 0.01 * capacity, "W_max {} vs {capacity:.0}", c.w_max[i]);
        let early = ((c.w_max[i] - capacity).max(0.0) / 0.4).cbrt() + 0.2;
        assert!(*period >= k[i] - early && *period <= k[i] + 0.4, "period {period:.3} s vs K {:.3} s", k[i]);
    }
    let mean = p.iter().sum::<f64>() / p.len() as f64;
    let mean_k = k.iter().take(p.len()).sum::<f64>() / p.len() as f64;
    assert!((mean / mean_k - 1.0).abs() < 0.1, "mean period {mean:.3} s vs K {mean_k:.3} s");
    assert_eq!(c.timeouts, 0);
    assert!(c.utilization > 0.99, "{}", c.utilization);
}

/// BI-TCP (paper §III) as a per-RTT recursion: after a loss at window
/// `w_loss` the window is (1 - beta) w_loss; each round trip adds half the
/// distance to W_max, at most Smax and at least Smin, and past W_max the
/// distance gone (doubling), at most Smax. A round trip lasts cwnd / link
/// rate, as the buffer is never empty (the window stays above one BDP).
/// Returns the time from one loss's detection to the next: the recovery's
/// round trip, the rounds until the window passes `capacity`, and the round
/// trip that detects that loss.
fn bic_period(w_max: f64, w_loss: f64, capacity: f64) -> f64 {
    let (smax, smin, beta) = (32.0, 0.01, 0.125);
    let rtt = |w: f64| (w * PACKET * 8.0 / RATE).max(RTT);
    let mut w = (1.0 - beta) * w_loss;
    let mut t = rtt(w);
    while w <= capacity {
        t += rtt(w);
        let inc = if w < w_max { (w_max - w) / 2.0 } else { w - w_max };
        w += inc.clamp(smin, smax);
    }
    t + rtt(w)
}

/// BI-TCP with the seed's parameters (Smax 32, Smin 0.01, beta 0.125) on the
/// same path, from an initial ssthresh of 2000 (a slow start overshooting to
/// twice the path's capacity makes a flow with beta 0.125 and the FlightSize
/// basis time out again and again: see the report of this change).
///
/// Without fast convergence every loss comes when the window passes what
/// the path holds, a little below W_max: the binary search halves the
/// distance each round, so the overshoot of W_max over that capacity halves
/// each cycle, W_max falls by half the overshoot, and the search needs one
/// more round each cycle (0.2 s with a full buffer, within 5 ms). The
/// capacity this gives, W_max - 2 x (drop of W_max), is BDP + buffer = 2404
/// plus the couple of packets in transmission (within [2404, 2408]), and
/// each period matches [`bic_period`] for it within 3 %.
///
/// With fast convergence (the paper's default) the flow alternates between a
/// loss above the previous W_max (W_max = cwnd) and one below it (W_max =
/// cwnd (2 - beta) / 2, so the next cycle binary-searches below the
/// capacity and then probes past it); each period matches [`bic_period`]
/// within 10 %. Linux's rules (`constants = "linux"`) cycle as well. The
/// link stays busy throughout.
#[test]
fn bic_losses_are_one_binary_search_apart_and_the_link_stays_busy() {
    let run = |params: &str| cycle("bic", params, "initial_ssthresh = 2000", 40);
    let off = run("fast_convergence = false");
    let p = periods(&off.losses);
    let capacity = off.w_max[0] - 2.0 * (off.w_max[0] - off.w_max[1]);
    let predicted: Vec<f64> = off.w_max.iter().map(|&w| bic_period(w, w, capacity)).collect();
    eprintln!(
        "bic, no fast convergence: losses at {:?}; W_max {:?}; capacity {capacity:.3}; periods {p:?}; \
         predicted {predicted:?}; utilization {:.4}",
        off.losses, off.w_max, off.utilization
    );
    assert!(p.len() >= 4, "{:?}", off.losses);
    assert!((2404.0..2408.0).contains(&capacity), "{capacity}");
    let full_rtt = capacity * PACKET * 8.0 / RATE;
    for i in 0..p.len() - 1 {
        let (d0, d1) = (off.w_max[i] - off.w_max[i + 1], off.w_max[i + 1] - off.w_max[i + 2]);
        assert!((d0 / d1 - 2.0).abs() < 0.2, "W_max drops {d0} then {d1}");
        assert!((p[i + 1] - p[i] - full_rtt).abs() < 0.005, "periods {p:?}");
    }
    for (period, predicted) in p.iter().zip(&predicted) {
        assert!((period / predicted - 1.0).abs() < 0.03, "period {period:.3} s vs {predicted:.3} s");
    }
    assert!(off.utilization > 0.99 && off.timeouts == 0);

    let on = run("");
    let p = periods(&on.losses);
    // The loss window: W_max itself, or W_max / (1 - beta/2) where fast
    // convergence lowered it (W_max below the previous one).
    let predicted: Vec<f64> = (1..p.len())
        .map(|i| {
            let (prev, w) = (on.w_max[i - 1], on.w_max[i]);
            bic_period(w, if w < prev { w / (1.0 - 0.125 / 2.0) } else { w }, capacity)
        })
        .collect();
    eprintln!(
        "bic: losses at {:?}; W_max {:?}; periods {p:?}; predicted (from the second) {predicted:?}; \
         utilization {:.4}",
        on.losses, on.w_max, on.utilization
    );
    assert!(p.len() >= 4, "{:?}", on.losses);
    assert!(on.w_max.windows(2).any(|w| w[1] < w[0]), "fast convergence lowered W_max");
    for (period, predicted) in p[1..].iter().zip(&predicted) {
        assert!((period / predicted - 1.0).abs() < 0.1, "period {period:.3} s vs {predicted:.3} s");
    }
    assert!(on.utilization > 0.99 && on.timeouts == 0);

    let linux = run("constants = \"linux\"");
    eprintln!(
        "bic, linux rules: losses at {:?}; W_max {:?}; periods {:?}; utilization {:.4}",
        linux.losses,
        linux.w_max,
        periods(&linux.losses),
        linux.utilization
    );
    assert!(linux.losses.len() >= 3 && linux.utilization > 0.99 && linux.timeouts == 0);
}

/// Both algorithms, in each variant, with every loss recovery and with and
/// without delayed ACKs: transfers under random loss in both directions
/// deliver every byte once and in order, finish, and conserve packets (the
/// invariants test, with these congestion controls).
#[test]
fn transfers_with_bic_and_cubic_deliver_every_byte_once() {
    let size = 300_000u64 + 777;
    for (cc, params) in
        [("bic", ""), ("bic", "constants = \"linux\""), ("cubic", ""), ("cubic", "reno_friendly = false")]
    {
        for recovery in ["tahoe", "reno", "newreno", "sack"] {
            let keys = format!("recovery = \"{recovery}\"\ncc = \"{cc}\"\ncc_params = {{ {params} }}");
            let case = format!("{cc} {params} {recovery}");
            let retransmits: u64 = (1..=2u64).map(|seed| lossy_transfers(&keys, size, seed, &case)).sum();
            assert!(retransmits > 0, "{case}: recovery was exercised");
        }
    }
}

/// From slow start (no initial ssthresh) the flow overshoots to about twice
/// what the path holds (W_max 4811), and BI-TCP keeps 0.875 of the basis. With
/// the FlightSize basis taken literally, ssthresh after the timeout that
/// follows is 0.875 of a flight that still spans the whole overshoot, far
/// above cwnd: slow start overshoots again and the flow cycles through
/// timeouts (measured before the basis was capped at cwnd: 9 in 45 s, the
/// link 39 % busy). With the cap (`CongestionEvent::basis_within_cwnd`) each
/// basis settles into the binary-search cycle, as does CUBIC.
#[test]
fn bic_settles_after_a_slow_start_overshoot_with_every_basis() {
    for basis in ["flight", "pipe", "cwnd"] {
        let option = format!("ssthresh_basis = \"{basis}\"");
        for cc in ["bic", "cubic"] {
            let r = cycle(cc, "", &option, 45);
            eprintln!(
                "{cc} from slow start, {basis} basis: {} timeouts, utilization {:.3}",
                r.timeouts, r.utilization
            );
            assert!(
                r.timeouts <= 1 && r.utilization > 0.97,
                "{cc} {basis}: {} timeouts, {:.3}",
                r.timeouts,
                r.utilization
            );
        }
    }
}
