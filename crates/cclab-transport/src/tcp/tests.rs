//! Rule-level tests of the TCP sender with each loss recovery, driven by
//! hand-made ACKs, and small end-to-end checks through a lossy in-memory path.

use super::recovery::sack::Sack;
use super::test_support::*;
use super::*;
use crate::registry::{self, defaults};
use cclab_wire::time::{millis, secs};
use cclab_wire::{Endpoint, Outbox, ParamValue, Params, Time};

/// A loss recovery with one parameter changed from its default.
fn recovery_with(name: &str, param: &str, value: ParamValue) -> Box<dyn recovery::LossRecovery> {
    let d = registry::loss_recovery(name).unwrap();
    let mut params: Params = d.info().defaults().unwrap();
    params.insert(param, value);
    (d.build.build)(&params).unwrap()
}

// ---------------------------------------------------------------- Tahoe

#[test]
fn tahoe_third_dupack_sets_cwnd_to_one_and_goes_back_to_snd_una() {
    let cfg = config(10, false);
    let mut s = sender("tahoe", &cfg);
    assert_eq!(start(&mut s), (0..10).collect::<Vec<_>>());
    assert_eq!(ack(&mut s, 100, 1, &[]), vec![10, 11]); // slow start: cwnd 11
    assert!(ack(&mut s, 101, 1, &[]).is_empty());
    assert!(ack(&mut s, 102, 1, &[]).is_empty());
    // Third duplicate: FlightSize = 11 -> ssthresh 5.5, cwnd 1, retransmit segment 1.
    assert_eq!(ack(&mut s, 103, 1, &[]), vec![1]);
    assert_eq!((cwnd(&s), ssthresh(&s)), (1.0, 5.5));
    assert_eq!(s.recoveries(), 1);
    // Further duplicates change nothing.
    assert!(ack(&mut s, 104, 1, &[]).is_empty());
    // ACK of the retransmission: slow start resends 2 and 3 (go-back-N).
    assert_eq!(ack(&mut s, 200, 2, &[]), vec![2, 3]);
    assert_eq!(cwnd(&s), 2.0);
}

#[test]
fn tahoe_ignores_dupacks_for_data_sent_before_the_last_retransmit() {
    let cfg = config(10, false);
    let mut s = sender("tahoe", &cfg);
    start(&mut s);
    for t in 0..3 {
        ack(&mut s, 100 + t, 0, &[]);
    }
    assert_eq!(s.recoveries(), 1);
    // snd_max was 10 at the fast retransmit; duplicates below that are ignored.
    ack(&mut s, 200, 1, &[]); // ack of the retransmission
    for t in 0..3 {
        ack(&mut s, 300 + t, 1, &[]);
    }
    assert_eq!(s.recoveries(), 1);
}

// ---------------------------------------------------------------- Reno

#[test]
fn reno_fast_recovery_inflates_then_deflates_on_the_first_new_ack() {
    let cfg = config(10, false);
    let mut s = sender("reno", &cfg);
    start(&mut s);
    assert_eq!(ack(&mut s, 100, 1, &[]), vec![10, 11]);
    ack(&mut s, 101, 1, &[]);
    ack(&mut s, 102, 1, &[]);
    // Third duplicate: ssthresh = 11/2, retransmit, cwnd = ssthresh + 3.
    assert_eq!(ack(&mut s, 103, 1, &[]), vec![1]);
    assert_eq!((ssthresh(&s), cwnd(&s)), (5.5, 8.5));
    assert!(s.recovery().in_recovery());
    // Each further duplicate inflates by one; new data once cwnd exceeds the flight (11).
    for t in 0..3 {
        assert!(ack(&mut s, 104 + t, 1, &[]).is_empty());
    }
    assert_eq!(cwnd(&s), 11.5);
    assert_eq!(ack(&mut s, 107, 1, &[]), vec![12]);
    // A partial ACK still ends Reno's recovery with cwnd = ssthresh.
    ack(&mut s, 200, 5, &[]);
    assert!(!s.recovery().in_recovery());
    assert_eq!(cwnd(&s), 5.5);
}

#[test]
fn reno_needs_a_second_fast_retransmit_for_a_second_loss_in_the_window() {
    let cfg = config(10, false);
    let mut s = sender("reno", &cfg);
    start(&mut s);
    ack(&mut s, 99, 1, &[]); // segment 0 arrives; 1 and 4 are lost
    for t in 0..3 {
        ack(&mut s, 100 + t, 1, &[]);
    }
    assert_eq!(s.recoveries(), 1);
    ack(&mut s, 200, 4, &[]); // partial ACK ends Reno's recovery
    assert!(!s.recovery().in_recovery());
    for t in 0..3 {
        ack(&mut s, 300 + t, 4, &[]);
    }
    assert_eq!(s.recoveries(), 2);
    // The second reduction halves the already halved window.
    assert!(ssthresh(&s) < 5.5, "{}", ssthresh(&s));
}

// ---------------------------------------------------------------- NewReno

#[test]
fn newreno_partial_ack_retransmits_deflates_and_stays_in_recovery() {
    let cfg = config(10, false);
    let mut s = sender("newreno", &cfg);
    start(&mut s); // segments 0..9; 1 and 4 lost
    assert_eq!(ack(&mut s, 99, 1, &[]), vec![10, 11]);
    ack(&mut s, 100, 1, &[]);
    ack(&mut s, 101, 1, &[]);
    // Third duplicate: recover = 12, FlightSize 11 -> ssthresh 5.5, cwnd 8.5.
    assert_eq!(ack(&mut s, 102, 1, &[]), vec![1]);
    assert_eq!((ssthresh(&s), cwnd(&s)), (5.5, 8.5));
    for t in 0..4 {
        ack(&mut s, 103 + t, 1, &[]);
    }
    assert_eq!(cwnd(&s), 12.5, "one segment per further duplicate");
    assert_eq!(s.state().snd_max, 13, "inflation let segment 12 out");
    let rto_before = s.rto_deadline();
    // Partial ACK up to 4: retransmit 4 first, cwnd = 12.5 - 3 + 1, stay in recovery.
    let sent = ack(&mut s, 200, 4, &[]);
    assert_eq!(sent, vec![4, 13]);
    assert_eq!(cwnd(&s), 10.5);
    assert!(s.recovery().in_recovery());
    assert!(s.rto_deadline() > rto_before, "first partial ACK restarts the timer");
    // Impatient: a second partial ACK does not restart the timer.
    let rto_first_partial = s.rto_deadline();
    ack(&mut s, 250, 5, &[]);
    assert_eq!(s.rto_deadline(), rto_first_partial);
    // Full ACK: cwnd = min(ssthresh, max(FlightSize, 1) + 1) with FlightSize 0.
    let snd_max = s.state().snd_max;
    ack(&mut s, 300, snd_max, &[]);
    assert!(!s.recovery().in_recovery());
    assert_eq!(cwnd(&s), 2.0);
    assert_eq!(s.recoveries(), 1);
}

#[test]
fn newreno_does_not_fast_retransmit_for_data_sent_before_a_timeout() {
    let cfg = config(10, false);
    let mut s = sender("newreno", &cfg);
    start(&mut s);
    let mut out = Outbox::default();
    s.on_timer(secs(2), &mut out); // RTO: recover = snd_max = 10
    assert_eq!(s.timeouts(), 1);
    assert_eq!(segs(&out.packets), vec![0]);
    ack(&mut s, secs(2) + 100, 3, &[]);
    for t in 0..3 {
        ack(&mut s, secs(2) + 200 + t, 3, &[]);
    }
    // ACK 3 does not cover recover (10): no fast retransmit (RFC 6582 step 2).
    assert_eq!(s.recoveries(), 0);
}

// ---------------------------------------------------------------- SACK

#[test]
fn sack_is_lost_needs_dupthresh_sacked_segments_above() {
    let cfg = config(10, true);
    let mut s = sender("sack", &cfg);
    start(&mut s);
    ack(&mut s, 100, 0, &[(1, 3)]);
    assert!(!Sack::is_lost(s.state(), 0), "two SACKed segments above");
    assert_eq!(s.recoveries(), 0);
    // A third SACKed segment above 0 makes it lost: recovery starts on the
    // second duplicate ACK already (RFC 6675 §5 step 2).
    let sent = ack(&mut s, 101, 0, &[(1, 4)]);
    assert_eq!(s.recoveries(), 1);
    assert_eq!(sent.first(), Some(&0));
}

#[test]
fn sack_entry_sets_cwnd_to_half_the_flight_and_computes_pipe() {
    let cfg = config(10, true);
    let mut s = sender("sack", &cfg);
    start(&mut s); // 0..9 outstanding; 0 and 2 lost
    ack(&mut s, 100, 0, &[(1, 2)]);
    ack(&mut s, 101, 0, &[(3, 4), (1, 2)]);
    let sent = ack(&mut s, 102, 0, &[(3, 5), (1, 2)]);
    // FlightSize 10: ssthresh = cwnd = 5. Retransmit 0 (forced), then NextSeg:
    // lost bound = 3rd highest SACKed = 3, so 2 is lost too.
    assert_eq!((ssthresh(&s), cwnd(&s)), (5.0, 5.0));
    assert_eq!(sent, vec![0]);
    // pipe: un-SACKed 0,2 lost (count 0), 0 retransmitted (1), 5..9 in network (5) = 6 > cwnd.
    // Two more SACKs shrink pipe: segment 2 goes next (rule 1 before new data).
    let sent = ack(&mut s, 103, 0, &[(3, 7), (1, 2)]);
    assert_eq!(sent, vec![2]);
    let sent = ack(&mut s, 104, 0, &[(3, 8), (1, 2)]);
    assert_eq!(sent, vec![10], "rule 2: new data once no lost segment remains");
}

#[test]
fn sack_recovery_ends_when_recovery_point_is_acked() {
    let cfg = config(10, true);
    let mut s = sender("sack", &cfg);
    start(&mut s);
    ack(&mut s, 100, 0, &[(1, 2)]);
    ack(&mut s, 101, 0, &[(1, 3)]);
    ack(&mut s, 102, 0, &[(1, 4)]);
    assert!(s.recovery().in_recovery());
    ack(&mut s, 200, 9, &[]);
    assert!(s.recovery().in_recovery(), "9 < RecoveryPoint 10");
    ack(&mut s, 201, 10, &[]);
    assert!(!s.recovery().in_recovery());
    assert_eq!(cwnd(&s), 5.0);
}

#[test]
fn sack_rescue_retransmission_sends_the_highest_unsacked_segment_once() {
    // A finite transfer of 10 segments: no new data to send in recovery.
    let cfg = TcpConfig { app: App::Transfer { bytes: 10 * MSS }, ..config(10, true) };
    let mut s = sender("sack", &cfg);
    start(&mut s);
    // Segments 0 and 9 lost; 1..8 SACKed progressively.
    ack(&mut s, 100, 0, &[(1, 2)]);
    ack(&mut s, 101, 0, &[(1, 3)]);
    let sent = ack(&mut s, 102, 0, &[(1, 4)]);
    assert_eq!(sent, vec![0]);
    for (i, top) in (5..=9).enumerate() {
        ack(&mut s, 103 + i as Time, 0, &[(1, top)]);
    }
    // Retransmission of 0 acknowledged: HighACK passes RescueRxt (0). Segment 9 is
    // not IsLost (nothing SACKed above it) and rules 1-3 find nothing, so rule 4
    // rescues it.
    let sent = ack(&mut s, 200, 9, &[]);
    assert_eq!(sent, vec![9]);
    // Only once per recovery.
    assert!(ack(&mut s, 201, 9, &[]).is_empty());
}

#[test]
fn sack_rule_three_retransmits_an_unsacked_segment_below_the_highest_sack() {
    let cfg = TcpConfig { app: App::Transfer { bytes: 10 * MSS }, ..config(10, true) };
    let mut s = sender("sack", &cfg);
    start(&mut s);
    // 0 lost; 5 missing but fewer than 3 SACKed above it, so not IsLost.
    ack(&mut s, 100, 0, &[(1, 2)]);
    ack(&mut s, 101, 0, &[(1, 3)]);
    ack(&mut s, 102, 0, &[(1, 4)]);
    ack(&mut s, 103, 0, &[(1, 5)]);
    // SACKed 1-4, 6, 7: lost bound = 3rd highest SACKed = 4, so 5 is not lost.
    // pipe = 5, 8, 9 in the network + retransmitted 0 = 4 < cwnd 5: rules 1 and 2
    // find nothing, rule 3 sends 5.
    let sent = ack(&mut s, 104, 0, &[(6, 8), (1, 5)]);
    assert_eq!(sent, vec![5]);
}

// ---------------------------------------------------------------- RTO and RTT

#[test]
fn timeout_sets_cwnd_one_halves_flight_backs_off_and_retransmits() {
    let cfg = config(10, false);
    let mut s = sender("newreno", &cfg);
    start(&mut s);
    assert_eq!(s.rto_deadline(), secs(1), "initial RTO");
    let mut out = Outbox::default();
    s.on_timer(secs(1), &mut out);
    assert_eq!(segs(&out.packets), vec![0]);
    assert_eq!((cwnd(&s), ssthresh(&s)), (1.0, 5.0));
    assert_eq!(s.rto_deadline(), secs(1) + secs(2), "backed-off RTO");
    let mut out = Outbox::default();
    s.on_timer(secs(3), &mut out);
    assert_eq!(s.rto_deadline(), secs(3) + secs(4));
    assert_eq!(s.timeouts(), 2);
    assert_eq!(s.retransmits(), 2);
}

#[test]
fn karn_no_rtt_sample_from_retransmitted_segments_without_timestamps() {
    let cfg = TcpConfig { timestamps: false, ..config(2, false) };
    let mut s = sender("reno", &cfg);
    start(&mut s);
    let mut out = Outbox::default();
    s.on_timer(secs(1), &mut out); // retransmit segment 0
                                   // Go-back-N resends 1 and sends 2 (cwnd 2).
    assert_eq!(ack(&mut s, secs(1) + millis(50), 1, &[]), vec![1, 2]);
    assert_eq!(s.rtt_samples(), 0, "segment 0 was retransmitted");
    let sent = ack(&mut s, secs(1) + millis(100), 3, &[]);
    assert_eq!(s.rtt_samples(), 0, "segment 1 was retransmitted");
    assert_eq!(sent, vec![3, 4]);
    ack(&mut s, secs(1) + millis(160), 4, &[]);
    assert_eq!(s.rtt_samples(), 1, "segment 3 was sent once");
    assert_eq!(s.state().rtt.latest(), millis(60));
}

#[test]
fn timestamps_give_samples_even_after_retransmission() {
    let cfg = config(2, false);
    let mut s = sender("reno", &cfg);
    start(&mut s);
    let mut out = Outbox::default();
    s.on_packet(millis(110), &ack_packet(1, millis(10), &[]), &mut out);
    assert_eq!(s.state().rtt.latest(), millis(100));
}

#[test]
fn timer_stops_when_everything_is_acknowledged() {
    let cfg = TcpConfig { app: App::Transfer { bytes: 2500 }, ..config(4, false) };
    let mut s = sender("reno", &cfg);
    assert_eq!(start(&mut s), vec![0, 1, 2]);
    ack(&mut s, 100, 3, &[]);
    assert_eq!(s.rto_deadline(), cclab_wire::NEVER);
    assert!(s.is_finished());
    assert_eq!(s.finished_at(), Some(100));
    assert_eq!(s.payload_bytes_sent(), 2500);
}

#[test]
fn limited_transmit_sends_one_new_segment_on_each_of_the_first_two_dupacks() {
    let cfg = TcpConfig { limited_transmit: true, ..config(4, false) };
    let mut s = sender("newreno", &cfg);
    start(&mut s);
    assert_eq!(ack(&mut s, 100, 0, &[]), vec![4]);
    assert_eq!(ack(&mut s, 101, 0, &[]), vec![5]);
    assert_eq!(ack(&mut s, 102, 0, &[]), vec![0]);
}

#[test]
fn receiver_window_caps_the_sender() {
    let cfg = TcpConfig { max_window: Some(3), ..config(10, false) };
    let mut s = sender("reno", &cfg);
    assert_eq!(start(&mut s), vec![0, 1, 2]);
}

#[test]
fn rfc3390_initial_window() {
    assert_eq!(TcpConfig::rfc3390_initial_window(1000), 4);
    assert_eq!(TcpConfig::rfc3390_initial_window(1460), 3);
    assert_eq!(TcpConfig::rfc3390_initial_window(2200), 2);
}

// ---------------------------------------------------------------- end to end

/// With a 1 s minimum RTO (RFC 6298) so that a three-RTT recovery cannot race the timer.
fn patient_transfer(bytes: u64, sack: bool) -> TcpConfig {
    TcpConfig { min_rto: secs(1), ..transfer(bytes, sack) }
}

#[test]
fn three_losses_in_one_window_cost_newreno_and_sack_no_timeout_but_reno_one() {
    let lost = [30u64, 33, 36];
    let drop = move |seg: u64, n: u32| n == 1 && lost.contains(&seg);
    let mut results = Vec::new();
    for recovery in ["reno", "newreno", "sack", "sack1"] {
        let sack = recovery.starts_with("sack");
        let mut path = Path::new(recovery, &patient_transfer(200 * MSS, sack), Box::new(drop));
        path.run(secs(30));
        assert!(path.delivered_exactly_once_in_order(200 * MSS), "{recovery}");
        let c = &path.sender;
        results.push((recovery, c.timeouts(), c.recoveries(), c.retransmits()));
    }
    assert_eq!(results[1].1, 0, "newreno: {results:?}");
    assert_eq!(results[1].2, 1, "newreno recovers all three in one episode: {results:?}");
    assert_eq!(results[2].1, 0, "sack: {results:?}");
    assert_eq!(results[2].3, 3, "sack retransmits exactly the three lost segments: {results:?}");
    assert!(results[0].1 >= 1 || results[0].2 >= 2, "reno: {results:?}");
    assert_eq!(results[3].1, 0, "sack1: {results:?}");
    assert_eq!(
        (results[3].2, results[3].3),
        (1, 3),
        "sack1: one episode, the three lost segments: {results:?}"
    );
}

#[test]
fn every_variant_delivers_a_transfer_exactly_once_under_heavy_loss() {
    for d in registry::LOSS_RECOVERIES {
        let (recovery, sack) = (d.name, d.build.uses_sack);
        for seed in 1..6u64 {
            let drop = random_loss(seed, 10);
            let mut path = Path::new(recovery, &transfer(300 * MSS + 123, sack), drop);
            path.run(secs(600));
            assert!(
                path.delivered_exactly_once_in_order(300 * MSS + 123),
                "{recovery} seed {seed}: delivered {}",
                path.receiver.counters().bytes_delivered
            );
            assert!(path.sender.is_finished(), "{recovery} seed {seed}");
        }
    }
}

// ---------------------------------------------------------------- pacing

/// Reno growth with a fixed pacing rate: the sender must space segments by
/// wire size / rate whatever cwnd allows.
struct PacedReno(f64);

impl crate::cc::CongestionControl for PacedReno {
    fn name(&self) -> &'static str {
        "paced-reno"
    }
    fn on_ack(&mut self, w: &mut crate::cc::Window, ack: &crate::cc::AckSample) {
        crate::cc::reno::Reno.on_ack(w, ack);
    }
    fn on_congestion(
        &mut self,
        w: &crate::cc::Window,
        e: &crate::cc::CongestionEvent,
    ) -> crate::cc::Response {
        crate::cc::reno::Reno.on_congestion(w, e)
    }
    fn pacing_rate(&self, _w: &crate::cc::Window, _srtt: Time) -> Option<f64> {
        Some(self.0)
    }
}

#[test]
fn a_pacing_rate_spaces_transmissions_by_wire_size_over_rate() {
    use crate::cc::CongestionControl;
    let cfg = config(10, false);
    // 1040-byte segments at 1.04 MB/s: one per millisecond.
    let mut s = TcpSender::new(
        &cfg,
        Box::new(PacedReno(1_040_000.0)),
        defaults::loss_recovery("reno").unwrap(),
        None,
    );
    assert_eq!(PacedReno(1.0).name(), "paced-reno");
    assert_eq!(start(&mut s), vec![0]);
    assert_eq!(s.next_wakeup(), millis(1));
    let mut sent = Vec::new();
    for ms in 1..=5 {
        let mut out = Outbox::default();
        s.on_timer(millis(ms), &mut out);
        sent.extend(segs(&out.packets));
        assert_eq!(s.next_wakeup(), millis(ms + 1), "next slot");
    }
    assert_eq!(sent, vec![1, 2, 3, 4, 5]);
}

// ---------------------------------------------------------------- regressions from the RFC review

#[test]
fn duplicates_acknowledging_exactly_recover_do_not_start_fast_retransmit() {
    for recovery in ["tahoe", "newreno"] {
        let cfg = config(10, false);
        let mut s = sender(recovery, &cfg);
        start(&mut s);
        let mut out = Outbox::default();
        s.on_timer(secs(1), &mut out); // RTO: recover = snd_max = 10
        ack(&mut s, secs(1) + 100, 10, &[]); // everything up to recover arrives
        assert!(s.state().snd_max > 10, "{recovery}: new data went out");
        for t in 0..3 {
            ack(&mut s, secs(1) + 200 + t, 10, &[]);
        }
        // RFC 6582 §3.2: ack_number - 1 > recover is needed; ACK 10 only reaches it.
        assert_eq!(s.recoveries(), 0, "{recovery}");
        ack(&mut s, secs(1) + 300, 11, &[]);
        for t in 0..3 {
            ack(&mut s, secs(1) + 400 + t, 11, &[]);
        }
        assert_eq!(s.recoveries(), 1, "{recovery}: ACK 11 covers more than recover");
    }
}

#[test]
fn the_first_segment_can_be_fast_retransmitted() {
    let cfg = config(10, false);
    let mut s = sender("newreno", &cfg);
    start(&mut s);
    for t in 0..3 {
        ack(&mut s, 100 + t, 0, &[]);
    }
    assert_eq!(s.recoveries(), 1, "no recover yet: nothing to protect");
}

#[test]
fn limited_transmit_segments_are_left_out_of_flightsize() {
    for recovery in ["reno", "newreno"] {
        let cfg = TcpConfig { limited_transmit: true, ..config(4, false) };
        let mut s = sender(recovery, &cfg);
        start(&mut s);
        assert_eq!(ack(&mut s, 100, 0, &[]), vec![4]);
        assert_eq!(ack(&mut s, 101, 0, &[]), vec![5]);
        ack(&mut s, 102, 0, &[]);
        // FlightSize 6 includes the 2 limited-transmit segments: ssthresh = max(4/2, 2).
        assert_eq!(ssthresh(&s), 2.0, "{recovery}");
    }
    let cfg = TcpConfig { limited_transmit: true, ..config(8, true) };
    let mut s = sender("sack", &cfg);
    start(&mut s);
    assert_eq!(ack(&mut s, 100, 0, &[(1, 2)]), vec![8]);
    assert_eq!(ack(&mut s, 101, 0, &[(1, 3)]), vec![9]);
    ack(&mut s, 102, 0, &[(1, 4)]);
    assert_eq!(ssthresh(&s), 4.0, "SACK: FlightSize 8, not 10");
}

#[test]
fn sack_with_limited_transmit_keeps_go_back_n_after_a_timeout() {
    let cfg = TcpConfig { limited_transmit: true, ..config(10, true) };
    let mut s = sender("sack", &cfg);
    start(&mut s);
    let mut out = Outbox::default();
    s.on_timer(secs(1), &mut out); // RTO: retransmit 0; SACK bits cleared
                                   // The receiver held 1 and 3..9: the first ACK after the timeout acknowledges 0-1
                                   // and SACKs 3..10 again. The hole at 2 goes out before any new data.
    let sent = ack(&mut s, secs(1) + 100, 2, &[(3, 10)]);
    assert_eq!(sent.first(), Some(&2), "sent {sent:?}");
}

#[test]
fn a_timeout_during_recovery_lowers_ssthresh_again_but_never_raises_it() {
    let cfg = config(20, false);
    let mut s = sender("newreno", &cfg);
    start(&mut s); // 0..19
    for t in 0..3 {
        ack(&mut s, 100 + t, 0, &[]);
    }
    assert_eq!(ssthresh(&s), 10.0);
    ack(&mut s, 200, 13, &[]); // partial ACK: FlightSize now 7
    let mut out = Outbox::default();
    s.on_timer(secs(5), &mut out);
    assert_eq!(s.timeouts(), 1);
    // RFC 5681 §3.1/§4.3: no more than max(FlightSize/2, 2) = 3.5.
    assert!(ssthresh(&s) <= 3.5, "{}", ssthresh(&s));
    // A second timeout of the same segment holds ssthresh constant.
    let before = ssthresh(&s);
    let mut out = Outbox::default();
    s.on_timer(secs(30), &mut out);
    assert_eq!(s.timeouts(), 2);
    assert_eq!(ssthresh(&s), before);
}

#[test]
fn stale_acks_are_not_duplicates() {
    let cfg = config(10, false);
    let mut s = sender("reno", &cfg);
    start(&mut s);
    ack(&mut s, 100, 5, &[]);
    for t in 0..3 {
        ack(&mut s, 200 + t, 3, &[]);
    }
    assert_eq!(s.recoveries(), 0);
    // The stale ACKs counted nothing: two duplicates of ACK 5 are not enough, three are.
    ack(&mut s, 300, 5, &[]);
    ack(&mut s, 301, 5, &[]);
    assert_eq!(s.recoveries(), 0);
    ack(&mut s, 302, 5, &[]);
    assert_eq!(s.recoveries(), 1);
}

#[test]
fn newreno_full_ack_option_two_sets_cwnd_to_ssthresh() {
    let cfg = config(10, false);
    let mut s = TcpSender::new(
        &cfg,
        defaults::congestion_control("reno").unwrap(),
        recovery_with("newreno", "full_ack", ParamValue::Text("ssthresh".into())),
        None,
    );
    start(&mut s);
    ack(&mut s, 99, 1, &[]);
    for t in 0..3 {
        ack(&mut s, 100 + t, 1, &[]);
    }
    let snd_max = s.state().snd_max;
    ack(&mut s, 300, snd_max, &[]);
    assert_eq!(cwnd(&s), 5.5, "RFC 6582 option (2): cwnd = ssthresh");
}

#[test]
fn sack_without_rule_three_waits_for_loss_evidence() {
    let cfg = TcpConfig { app: App::Transfer { bytes: 10 * MSS }, ..config(10, true) };
    let mut s = TcpSender::new(
        &cfg,
        defaults::congestion_control("reno").unwrap(),
        recovery_with("sack", "rule3", ParamValue::Bool(false)),
        None,
    );
    start(&mut s);
    ack(&mut s, 100, 0, &[(1, 2)]);
    ack(&mut s, 101, 0, &[(1, 3)]);
    ack(&mut s, 102, 0, &[(1, 4)]);
    ack(&mut s, 103, 0, &[(1, 5)]);
    // Same state as sack_rule_three_...: with rule (3) off, segment 5 is not resent.
    assert!(ack(&mut s, 104, 0, &[(6, 8), (1, 5)]).is_empty());
}

// ---------------------------------------------------------------- application writes

#[test]
fn a_stream_sends_whole_segments_as_written_and_the_rest_with_fin_on_close() {
    use cclab_wire::{Control, ControlRefused};
    let cfg = TcpConfig { app: App::Stream, ..config(10, false) };
    let mut s = sender("newreno", &cfg);
    assert!(start(&mut s).is_empty(), "nothing written yet");
    let mut out = Outbox::default();
    // 2500 bytes: two whole segments go, the half segment waits for more or the close.
    s.on_control(0, Control::AppWrite { bytes: 2500 }, &mut out).unwrap();
    assert_eq!(segs(&out.packets), vec![0, 1]);
    assert!(out.packets.iter().all(|p| p.tcp().is_some_and(|h| !h.fin)));
    let mut out = Outbox::default();
    s.on_control(1, Control::AppClose, &mut out).unwrap();
    let last: Vec<_> = out.packets.iter().filter_map(|p| p.tcp()).map(|h| (h.seq, h.len, h.fin)).collect();
    assert_eq!(last, vec![(2000, 500, true)]);
    assert!(!s.is_finished(), "not yet acknowledged");
    let refused = s.on_control(2, Control::AppWrite { bytes: 1 }, &mut Outbox::default());
    assert_eq!(refused, Err(ControlRefused(Control::AppWrite { bytes: 1 })), "written after the close");
    ack(&mut s, 100, 3, &[]);
    assert!(s.is_finished() && s.is_closed());
    assert_eq!(s.finished_at(), Some(100));
    // A bulk sender has no application to write for it.
    let mut bulk = sender("newreno", &config(10, false));
    assert!(bulk.on_control(0, Control::AppClose, &mut Outbox::default()).is_err());
}

#[test]
fn the_receiver_closes_once_everything_up_to_fin_is_acknowledged() {
    let cfg = TcpConfig { app: App::Transfer { bytes: 1500 }, delayed_ack: true, ..config(10, false) };
    let mut s = sender("newreno", &cfg);
    let mut r = TcpReceiver::new(&cfg);
    let mut out = Outbox::default();
    s.on_timer(0, &mut out);
    let data = std::mem::take(&mut out.packets);
    assert_eq!(data.len(), 2);
    r.on_packet(10, &data[0], &mut out);
    assert!(!r.is_closed(), "FIN not seen");
    r.on_packet(11, &data[1], &mut out);
    // The second segment completes a pair: ACKed at once, and it carried FIN.
    assert_eq!(out.packets.len(), 1);
    assert!(r.is_closed());
}

// ---------------------------------------------------------------- ssthresh basis

/// The window a fast retransmit halves, for each `ssthresh_basis`: an
/// application-limited transfer of 8 segments under a cwnd of 10 loses
/// segment 0, and three ACKs SACK segments 1-3. FlightSize is 8 (RFC 5681);
/// the pipe leaves out the 3 SACKed segments and the one IsLost deems lost,
/// 4 (ns-3); cwnd is 10, or the receiver's advertised window of 9 when that
/// is smaller (Linux; ns-2's windowd()).
#[test]
fn ssthresh_halves_flight_size_pipe_or_cwnd_as_the_flow_chooses() {
    use crate::cc::SsthreshBasis;
    for (basis, advertised, expected) in [
        (SsthreshBasis::FlightSize, None, 4.0),
        (SsthreshBasis::Pipe, None, 2.0),
        (SsthreshBasis::Cwnd, None, 5.0),
        (SsthreshBasis::Cwnd, Some(9), 4.5),
    ] {
        let cfg =
            TcpConfig { app: App::Transfer { bytes: 8 * MSS }, ssthresh_basis: basis, ..config(10, true) };
        let mut s = sender("sack", &cfg);
        assert_eq!(start(&mut s), (0..8).collect::<Vec<_>>());
        let mut sent = Vec::new();
        for (i, top) in [2, 3, 4].into_iter().enumerate() {
            let mut a = ack_packet(0, 0, &[(1, top)]);
            if let (Some(w), cclab_wire::Header::Tcp(h)) = (advertised, &mut a.header) {
                h.window = (w * MSS) as u32;
            }
            sent = feed(&mut s, 100 + i as Time, &a);
        }
        assert_eq!(sent, vec![0], "{basis:?}: fast retransmit");
        assert_eq!(ssthresh(&s), expected, "{basis:?} {advertised:?}");
    }
}

// ---------------------------------------------------------------- send overhead

/// ns-2's `overhead_` (TcpAgent::send_much): when the window lets data out,
/// the sender waits a uniform random time below `send_overhead`, then sends
/// everything the window allows back to back; ACKs arriving meanwhile add
/// to that burst and draw nothing. A fast retransmission leaves at once.
#[test]
fn send_overhead_delays_each_burst_by_a_random_time_below_its_maximum() {
    let overhead = millis(10);
    let delays = |seed: u64| -> Vec<Time> {
        let cfg = TcpConfig { send_overhead: overhead, send_overhead_seed: seed, ..config(4, true) };
        let mut s = sender("sack", &cfg);
        assert!(start(&mut s).is_empty(), "the first burst waits for its overhead");
        let first = s.next_wakeup();
        assert!(first < overhead);
        let mut out = Outbox::default();
        s.on_timer(first, &mut out);
        assert_eq!(segs(&out.packets), vec![0, 1, 2, 3], "then the whole window leaves");
        // Two ACKs 1 ms apart: the second joins the burst the first started.
        assert!(ack(&mut s, millis(100), 1, &[]).is_empty());
        let release = s.next_wakeup();
        assert!((millis(100)..millis(110)).contains(&release));
        assert!(ack(&mut s, millis(100) + 1, 2, &[]).is_empty());
        assert_eq!(s.next_wakeup(), release);
        let mut out = Outbox::default();
        s.on_timer(release, &mut out);
        assert_eq!(segs(&out.packets), vec![4, 5, 6, 7], "cwnd 6 after two slow-start ACKs");
        vec![first, release - millis(100)]
    };
    assert_eq!(delays(1), delays(1), "the same seed gives the same delays");
    assert_ne!(delays(1), delays(2), "another seed, other delays");

    // Segment 0 lost: the third duplicate ACK retransmits it at once.
    let cfg = TcpConfig { send_overhead: overhead, send_overhead_seed: 3, ..config(4, true) };
    let mut s = sender("sack", &cfg);
    start(&mut s);
    let mut out = Outbox::default();
    s.on_timer(s.next_wakeup(), &mut out);
    ack(&mut s, millis(100), 0, &[(1, 2)]);
    ack(&mut s, millis(101), 0, &[(1, 3)]);
    assert_eq!(ack(&mut s, millis(102), 0, &[(1, 4)]), vec![0]);
}

// ---------------------------------------------------------------- what an ACK delivered

/// BBR's cwnd after a timeout starts from one segment and grows by what each
/// ACK delivers (Linux `bbr_set_cwnd`): the SACK blocks that the first ACK after the
/// timeout repeats deliver nothing new, so they do not restore the window; the
/// ACK of the last segment outstanding at the timeout does (Linux
/// `bbr_set_cwnd_to_recover_or_restore` on leaving the Loss state).
#[test]
fn after_a_timeout_bbr_regrows_cwnd_by_new_deliveries_only() {
    let cfg = config(30, true);
    let bbr = defaults::congestion_control("bbr").unwrap();
    let mut s = TcpSender::new(&cfg, bbr, defaults::loss_recovery("sack").unwrap(), None);
    start(&mut s); // 0..29 outstanding, sent unpaced before the first ACK
    ack(&mut s, millis(40), 1, &[(3, 29)]); // 1, 2 and 29 lost
    let before = cwnd(&s);
    assert_eq!(before, 57.0, "30 + 27 delivered, before the pipe was found full");
    let mut out = Outbox::default();
    s.on_timer(secs(3), &mut out); // RTO: cwnd 1, SACK bits cleared, 1 resent
    assert_eq!(cwnd(&s), 1.0);
    ack(&mut s, secs(3) + millis(40), 2, &[(3, 29)]);
    assert_eq!(cwnd(&s), crate::cc::bbr::MIN_CWND, "one segment delivered: 1 + 1, at least 4 (not 1 + 27)");
    ack(&mut s, secs(3) + millis(80), 29, &[]); // segment 2 delivered; 29 (sent at 0) still out
    assert_eq!(cwnd(&s), 5.0);
    // The last segment outstanding at the timeout: Linux leaves the Loss state
    // and restores the cwnd from before, which then grows by the one delivered.
    ack(&mut s, secs(3) + millis(120), 30, &[]);
    assert_eq!(cwnd(&s), before + 1.0);
}

/// BBR's first round of recovery conserves packets, cwnd = max(cwnd, pipe +
/// delivered) (Linux `bbr_set_cwnd_to_recover_or_restore`), and after it
/// cwnd grows by what is delivered. The ACK of a retransmission that covers a
/// SACKed block delivers the retransmitted segment only: counted with the
/// block, as `acked + sacked` did, cwnd jumped by the block's size.
#[test]
fn bbr_in_recovery_counts_a_cumulative_ack_over_sacked_segments_once() {
    let cfg = config(30, true);
    let bbr = defaults::congestion_control("bbr").unwrap();
    let mut s = TcpSender::new(&cfg, bbr, defaults::loss_recovery("sack").unwrap(), None);
    start(&mut s); // 0..29 outstanding; 0 lost
    ack(&mut s, millis(40), 0, &[(1, 4)]); // IsLost(0): recovery, 0 resent
    assert!(s.recovery().in_recovery());
    ack(&mut s, millis(41), 0, &[(1, 20)]); // 16 more SACKed
    let before = cwnd(&s);
    ack(&mut s, millis(80), 20, &[]); // the resent 0 arrives: 1 new, 1..19 were SACKed
    assert_eq!(cwnd(&s) - before, 1.0, "cwnd {before} -> {}", cwnd(&s));
}

// ---------------------------------------------------------------- cwnd growth

/// A lossless 400-segment transfer through a receiver window of 10 segments:
/// growing on every ACK (RFC 5681, ns-2, ns-3) leaves cwnd near the number of
/// ACKs, growing only while the window is in use (Linux) stops slow start at
/// twice the receiver window. With no receiver window both grow alike, since
/// every send then fills cwnd.
#[test]
fn cwnd_grows_only_while_in_use_when_the_flow_asks() {
    use crate::cc::CwndGrowth;
    let run = |growth: CwndGrowth, max_window: Option<u64>| {
        let cfg = TcpConfig {
            app: App::Transfer { bytes: 400 * MSS },
            max_window,
            cwnd_growth: growth,
            ..config(2, false)
        };
        let mut path = Path::new("newreno", &cfg, Box::new(|_, _| false));
        path.run(secs(30));
        assert!(path.delivered_exactly_once_in_order(400 * MSS));
        (cwnd(&path.sender), path.sender.finished_at())
    };
    let (always, _) = run(CwndGrowth::Always, Some(10));
    let (limited, _) = run(CwndGrowth::CwndLimited, Some(10));
    assert!(always > 350.0, "every ACK grows it: {always}");
    assert!((19.0..=21.0).contains(&limited), "slow start stops near 2 x rwnd: {limited}");
    assert_eq!(run(CwndGrowth::Always, None), run(CwndGrowth::CwndLimited, None));
}

// ---------------------------------------------------------------- losses for the rate sampler

/// Per ACK: `newly_lost`, the rate sample's `lost` and `tx_in_flight`, and `packets_in_flight`.
type LossEntries = std::rc::Rc<std::cell::RefCell<Vec<(u64, Option<(u64, u64)>, Option<u64>)>>>;

/// Reno that records what each ACK sample says of losses.
struct LossLog(LossEntries);

impl crate::cc::CongestionControl for LossLog {
    fn name(&self) -> &'static str {
        "loss-log"
    }
    fn uses_delivery_rate(&self) -> bool {
        true
    }
    fn on_ack(&mut self, w: &mut crate::cc::Window, ack: &crate::cc::AckSample) {
        self.0.borrow_mut().push((
            ack.newly_lost,
            ack.rate.map(|r| (r.lost, r.tx_in_flight)),
            ack.packets_in_flight,
        ));
        crate::cc::reno::Reno.on_ack(w, ack);
    }
    fn on_congestion(
        &mut self,
        w: &crate::cc::Window,
        e: &crate::cc::CongestionEvent,
    ) -> crate::cc::Response {
        crate::cc::reno::Reno.on_congestion(w, e)
    }
}

/// A segment is marked lost once: when RFC 6675 IsLost first deems it lost on
/// an ACK (reported to congestion control with that ACK), or, at a timeout,
/// with everything outstanding not SACKed (reported with the next ACK). The
/// rate sample's `lost` counts the marks since its segment was sent, and its
/// `tx_in_flight` the flight that segment joined; the flight counts neither
/// SACKed nor marked segments, but retransmissions in flight.
#[test]
fn losses_are_marked_once_and_reported_with_the_ack_that_revealed_them() {
    let cfg = config(10, true);
    let log = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let cc = Box::new(LossLog(log.clone()));
    let mut s = TcpSender::new(&cfg, cc, defaults::loss_recovery("sack").unwrap(), None);
    start(&mut s); // 0..9 outstanding
    ack(&mut s, millis(100), 0, &[(1, 3)]);
    ack(&mut s, millis(101), 0, &[(1, 4)]); // 3 SACKed above 0: 0 is lost
    ack(&mut s, millis(102), 0, &[(1, 4), (5, 8)]); // 5, 6, 7 above 4: 4 is lost, 0 not again
    let newly: Vec<u64> = log.borrow().iter().map(|e| e.0).collect();
    assert_eq!(newly, [0, 1, 1]);
    // The sample's segment is 5 (all left together at 0, and the sampler keeps
    // the first of equals): it joined a flight of 6, before either mark.
    assert_eq!(log.borrow()[2].1, Some((2, 6)));
    // Recovery sent new data from 10 on; at the timeout everything outstanding
    // and not SACKed is lost: 8 and up (0 and 4 were marked already).
    let snd_max = s.state().snd_max;
    assert!(snd_max > 10, "{snd_max}");
    let mut out = Outbox::default();
    s.on_timer(secs(5), &mut out);
    ack(&mut s, secs(5) + millis(100), 0, &[(9, 10)]);
    assert_eq!(log.borrow().last().map(|e| e.0), Some(snd_max - 8));
    // In flight now: nothing that was outstanding at the timeout but the
    // retransmissions not yet delivered: the timeout's of segment 0, and
    // recovery's of segment 4, which counts until it is sent again or
    // acknowledged (Linux would have marked it lost at the timeout).
    assert_eq!(log.borrow().last().map(|e| e.2), Some(Some(2)));
}
