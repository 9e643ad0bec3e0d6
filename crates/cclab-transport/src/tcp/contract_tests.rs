//! Contract tests: each extension point of congestion control and loss
//! recovery exercised by a small user of its own, driving the real
//! [`TcpSender`]. The users are test doubles that follow one published rule
//! each (TCP-Jersey's, Westwood's, BBR's declaration, Decoupled TCP's timers),
//! not implementations of those algorithms. Expected numbers are worked out
//! from the rule in the comments, so that a change in the sender shows.

use super::recovery::{next_in_window, AckInfo, LossRecovery, Outcome, Transmission};
use super::sender::SenderState;
use super::test_support::*;
use super::*;
use crate::cc::reno::Reno;
use crate::cc::{AckSample, CongestionControl, CongestionEvent, EventKind, MarkStatus, Response, Window};
use crate::registry::defaults;
use cclab_wire::time::{millis, secs, to_secs_f64};
use cclab_wire::{Endpoint, Outbox, Time, NEVER};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

fn sender_with(cc: Box<dyn CongestionControl>, recovery: &str, cfg: &TcpConfig) -> TcpSender {
    TcpSender::new(cfg, cc, defaults::loss_recovery(recovery).unwrap(), None)
}

fn ecn(initial_window: u32, sack: bool) -> TcpConfig {
    TcpConfig { ecn: super::EcnFeedback::Classic, ..config(initial_window, sack) }
}

// ---------------------------------------------------------------- 1. mark status (TCP-Jersey's rule)

/// TCP-Jersey's loss rule: only a loss the path marked (a congestion warning,
/// ECN-Echo) is congestion; an unmarked loss is repaired without reducing.
/// Otherwise Reno. Records the kind and mark status of every event it is asked about.
#[derive(Default)]
struct MarkedLossesOnly {
    events: EventLog,
}

/// The kind and mark status of each congestion event, shared with the test.
type EventLog = Rc<RefCell<Vec<(EventKind, MarkStatus)>>>;

impl CongestionControl for MarkedLossesOnly {
    fn name(&self) -> &'static str {
        "marked-losses-only"
    }

    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        Reno.on_ack(w, ack);
    }

    fn on_congestion(&mut self, w: &Window, event: &CongestionEvent) -> Response {
        self.events.borrow_mut().push((event.kind, event.mark));
        if event.kind == EventKind::FastRetransmit && event.mark == MarkStatus::Unmarked {
            return Response::NoReduction;
        }
        Reno.on_congestion(w, event)
    }
}

/// A sender whose congestion control is [`MarkedLossesOnly`], and its event log.
fn marked_losses_only(recovery: &str, cfg: &TcpConfig) -> (TcpSender, EventLog) {
    let cc = MarkedLossesOnly::default();
    let events = cc.events.clone();
    (sender_with(Box::new(cc), recovery, cfg), events)
}

/// Segments 0..9 go out and segment 1 is lost. The ACK of 0 opens cwnd to 11
/// (slow start) and sends 10 and 11; segments 2, 3 and 4 bring three duplicate
/// ACKs, the third echoing a mark if `marked`. Returns what the third one sent.
fn lose_segment_one(s: &mut TcpSender, marked: bool) -> Vec<u64> {
    start(s);
    assert_eq!(ack(s, 100, 1, &[]), vec![10, 11]);
    ack(s, 101, 1, &[]);
    ack(s, 102, 1, &[]);
    let third = ack_packet(1, 0, &[]);
    feed(s, 103, &if marked { echoing_mark(third) } else { third })
}

/// Segments 5..11 bring seven more duplicate ACKs, then the retransmission of 1
/// brings the full ACK 12 (recover = 12, snd_max when recovery began).
fn finish_newreno_recovery(s: &mut TcpSender) {
    for t in 0..7 {
        ack(s, 104 + t, 1, &[]);
    }
    ack(s, 200, 12, &[]);
    assert!(!s.recovery().in_recovery());
}

#[test]
fn an_unmarked_loss_is_retransmitted_without_reducing_the_window() {
    let (mut s, events) = marked_losses_only("newreno", &ecn(10, false));
    let sent = lose_segment_one(&mut s, false);
    assert_eq!(*events.borrow(), vec![(EventKind::FastRetransmit, MarkStatus::Unmarked)]);
    // NoReduction: ssthresh keeps its initial 1e9, and NewReno starts from the
    // unreduced cwnd 11: 11 + DupThresh 3 = 14, which also lets 12..14 out
    // (snd_una 1 + 14 = 15).
    assert_eq!(sent, vec![1, 12, 13, 14]);
    assert_eq!((ssthresh(&s), cwnd(&s)), (1e9, 14.0));
    // Seven more duplicates inflate cwnd to 21 and send 15..21 (snd_max 22).
    // Full ACK 12: cwnd = min(window after the response 11, FlightSize 10 + 1) = 11,
    // where it was before the loss, not deflated to a halved ssthresh; it
    // lets segment 22 out (12 + 11 = 23).
    finish_newreno_recovery(&mut s);
    assert_eq!(s.state().snd_max, 23);
    assert_eq!((ssthresh(&s), cwnd(&s)), (1e9, 11.0));
}

#[test]
fn a_marked_loss_is_congestion_and_halves_as_reno() {
    let (mut s, events) = marked_losses_only("newreno", &ecn(10, false));
    let sent = lose_segment_one(&mut s, true);
    assert_eq!(*events.borrow(), vec![(EventKind::FastRetransmit, MarkStatus::Marked)]);
    // FlightSize 11 (snd_max 12 - snd_una 1): ssthresh 5.5, cwnd 5.5 + 3 = 8.5.
    assert_eq!(sent, vec![1]);
    assert_eq!((ssthresh(&s), cwnd(&s)), (5.5, 8.5));
    // Seven more duplicates: cwnd 15.5, new data 12..15 (snd_max 16).
    // Full ACK 12: cwnd = min(5.5, FlightSize 4 + 1) = 5.
    finish_newreno_recovery(&mut s);
    assert_eq!((ssthresh(&s), cwnd(&s)), (5.5, 5.0));
}

#[test]
fn without_ecn_a_loss_has_unknown_mark_status_and_is_congestion() {
    let (mut s, events) = marked_losses_only("newreno", &config(10, false));
    let sent = lose_segment_one(&mut s, false);
    // The path reports no marks, so an unmarked ACK says nothing: Reno's halving.
    assert_eq!(*events.borrow(), vec![(EventKind::FastRetransmit, MarkStatus::Unknown)]);
    assert_eq!(sent, vec![1]);
    assert_eq!((ssthresh(&s), cwnd(&s)), (5.5, 8.5));
}

#[test]
fn sack_recovery_repairs_an_unmarked_loss_with_the_window_unreduced() {
    let (mut s, events) = marked_losses_only("sack", &ecn(10, true));
    start(&mut s);
    assert_eq!(ack(&mut s, 100, 1, &[]), vec![10, 11]); // cwnd 11
    ack(&mut s, 101, 1, &[(2, 3)]);
    ack(&mut s, 102, 1, &[(2, 4)]);
    let sent = ack(&mut s, 103, 1, &[(2, 5)]);
    assert_eq!(*events.borrow(), vec![(EventKind::FastRetransmit, MarkStatus::Unmarked)]);
    // cwnd stays 11. pipe = 2..11 not SACKed (7) + the retransmission of 1 = 8,
    // so three new segments fit: 12, 13, 14.
    assert_eq!(sent, vec![1, 12, 13, 14]);
    assert_eq!((ssthresh(&s), cwnd(&s)), (1e9, 11.0));
    // The hole is filled: RecoveryPoint 12 reached, cwnd still 11.
    ack(&mut s, 200, 15, &[]);
    assert!(!s.recovery().in_recovery());
    assert_eq!(cwnd(&s), 11.0);
}

// ---------------------------------------------------------------- 2. window from a bandwidth estimate (Westwood's rule)

/// Westwood's response with a fixed bandwidth estimate instead of a measured
/// one: after a loss ssthresh = BWE x RTTmin / MSS (at least 2) and cwnd =
/// min(cwnd, ssthresh); after a timeout the same ssthresh and cwnd = 1. Reno growth.
struct FixedBandwidthEstimate {
    bytes_per_sec: f64,
}

impl CongestionControl for FixedBandwidthEstimate {
    fn name(&self) -> &'static str {
        "fixed-bandwidth-estimate"
    }

    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        Reno.on_ack(w, ack);
    }

    fn on_congestion(&mut self, w: &Window, event: &CongestionEvent) -> Response {
        let ssthresh = (self.bytes_per_sec * to_secs_f64(event.min_rtt) / event.mss as f64).max(2.0);
        let cwnd = if event.kind == EventKind::Timeout { 1.0 } else { w.cwnd.min(ssthresh) };
        Response::Reduce { ssthresh, cwnd }
    }
}

/// 1.2 MB/s x RTTmin 5 ms / 1000 B = 6 segments (Reno would say 11 / 2 = 5.5).
const ESTIMATE: f64 = 1.2e6;
const BANDWIDTH_WINDOW: f64 = 6.0;

/// Segments 0..9 go out at t = 0; the ACK of 0 at 5 ms echoes the timestamp of
/// t = 0, so RTTmin = 5 ms (later ACKs echo 0 too and only sample longer RTTs).
/// cwnd opens to 11 and 10, 11 go out.
fn start_with_rtt_min_5ms(cfg: &TcpConfig) -> TcpSender {
    start_with_rtt_min_5ms_using(if cfg.sack { "sack" } else { "newreno" }, cfg)
}

fn start_with_rtt_min_5ms_using(recovery: &str, cfg: &TcpConfig) -> TcpSender {
    let cc = FixedBandwidthEstimate { bytes_per_sec: ESTIMATE };
    let mut s = sender_with(Box::new(cc), recovery, cfg);
    start(&mut s);
    assert_eq!(feed(&mut s, millis(5), &ack_packet(1, 0, &[])), vec![10, 11]);
    assert_eq!(s.state().rtt.min_rtt(), millis(5));
    s
}

#[test]
fn newreno_inflates_and_deflates_around_the_window_from_the_estimate() {
    let mut s = start_with_rtt_min_5ms(&config(10, false));
    ack(&mut s, millis(6), 1, &[]);
    ack(&mut s, millis(7), 1, &[]);
    assert_eq!(ack(&mut s, millis(8), 1, &[]), vec![1]);
    // ssthresh 6, cwnd = min(11, 6) = 6, plus DupThresh while inflating: 9.
    assert_eq!((ssthresh(&s), cwnd(&s)), (BANDWIDTH_WINDOW, BANDWIDTH_WINDOW + 3.0));
    // Seven more duplicates: cwnd 16, new data 12..16 (snd_una 1 + 16 = 17).
    let mut sent = Vec::new();
    for t in 0..7 {
        sent.extend(ack(&mut s, millis(9 + t), 1, &[]));
    }
    assert_eq!(sent, vec![12, 13, 14, 15, 16]);
    // Full ACK 12: cwnd = min(6, FlightSize 5 + 1) = 6, the window from the estimate.
    ack(&mut s, millis(200), 12, &[]);
    assert!(!s.recovery().in_recovery());
    assert_eq!((ssthresh(&s), cwnd(&s)), (BANDWIDTH_WINDOW, BANDWIDTH_WINDOW));
}

#[test]
fn sack_recovery_starts_from_the_window_from_the_estimate() {
    let mut s = start_with_rtt_min_5ms(&config(10, true));
    ack(&mut s, millis(6), 1, &[(2, 3)]);
    ack(&mut s, millis(7), 1, &[(2, 4)]);
    let sent = ack(&mut s, millis(8), 1, &[(2, 5)]);
    // cwnd = min(11, 6) = 6 with no inflation; pipe = 7 not SACKed + 1 retransmitted = 8 > 6.
    assert_eq!(sent, vec![1]);
    assert_eq!((ssthresh(&s), cwnd(&s)), (BANDWIDTH_WINDOW, BANDWIDTH_WINDOW));
}

/// ns-2 Sack1 takes the window congestion control returns as it is: no
/// inflation, and pipe (flight 11 - 3 = 8) above it holds everything but the
/// retransmission.
#[test]
fn sack1_recovery_starts_from_the_window_from_the_estimate() {
    let mut s = start_with_rtt_min_5ms_using("sack1", &config(10, true));
    ack(&mut s, millis(6), 1, &[(2, 3)]);
    ack(&mut s, millis(7), 1, &[(2, 4)]);
    assert_eq!(ack(&mut s, millis(8), 1, &[(2, 5)]), vec![1]);
    assert_eq!((ssthresh(&s), cwnd(&s)), (BANDWIDTH_WINDOW, BANDWIDTH_WINDOW));
}

#[test]
fn a_timeout_takes_ssthresh_from_the_estimate_and_one_segment() {
    let mut s = start_with_rtt_min_5ms(&config(10, false));
    let mut out = Outbox::default();
    s.on_timer(s.rto_deadline(), &mut out);
    assert_eq!(s.timeouts(), 1);
    assert_eq!(segs(&out.packets), vec![1]);
    // ssthresh 6 from the estimate (Reno: FlightSize 11 / 2 = 5.5), loss window 1.
    assert_eq!((ssthresh(&s), cwnd(&s)), (BANDWIDTH_WINDOW, 1.0));
}

// ---------------------------------------------------------------- 3. congestion control owns cwnd in recovery (BBR's declaration)

/// Declares, as BBR does, that it sets cwnd itself in recovery, and sets it to a
/// constant on every ACK in every phase. Its response to a loss asks for a
/// window of 4, which loss recovery would build on (NewReno: 4 + 3 = 7).
struct ConstantWindowOwner;

const OWNED_CWND: f64 = 12.0;

impl CongestionControl for ConstantWindowOwner {
    fn name(&self) -> &'static str {
        "constant-window-owner"
    }

    fn on_ack(&mut self, w: &mut Window, _ack: &AckSample) {
        w.cwnd = OWNED_CWND;
    }

    fn on_congestion(&mut self, _w: &Window, _event: &CongestionEvent) -> Response {
        Response::Reduce { ssthresh: 4.0, cwnd: 4.0 }
    }

    fn owns_cwnd_in_recovery(&self) -> bool {
        true
    }
}

#[test]
fn newreno_inflation_and_deflation_do_not_touch_a_window_congestion_control_owns() {
    let mut s = sender_with(Box::new(ConstantWindowOwner), "newreno", &config(10, false));
    start(&mut s); // segments 1 and 4 will be lost
    assert_eq!(ack(&mut s, 100, 1, &[]), vec![10, 11, 12]); // cwnd 12: up to 1 + 12
    ack(&mut s, 101, 1, &[]);
    ack(&mut s, 102, 1, &[]);
    // Third duplicate: ssthresh 4 is set and 1 retransmitted; NewReno's 4 + 3 = 7 is not applied.
    assert_eq!(ack(&mut s, 103, 1, &[]), vec![1]);
    assert_eq!((ssthresh(&s), cwnd(&s)), (4.0, OWNED_CWND));
    // Inflation to 13 would send segment 13; it is not applied.
    assert!(ack(&mut s, 104, 1, &[]).is_empty());
    assert_eq!(cwnd(&s), OWNED_CWND);
    // Partial ACK 4: 4 is retransmitted; deflation to 12 - 3 + 1 = 10 would allow
    // only 13 (4 + 10 = 14); with cwnd 12 the window reaches 4 + 12 = 16.
    assert_eq!(ack(&mut s, 200, 4, &[]), vec![4, 13, 14, 15]);
    assert!(s.recovery().in_recovery());
    assert_eq!(cwnd(&s), OWNED_CWND);
    // Full ACK 16 (recover 13): NewReno's min(4, FlightSize 0 + 1) = 2 is not applied.
    assert_eq!(ack(&mut s, 300, 16, &[]), (16..28).collect::<Vec<_>>());
    assert!(!s.recovery().in_recovery());
    assert_eq!(cwnd(&s), OWNED_CWND);
    assert_eq!(s.retransmits(), 2);
}

#[test]
fn sack_entry_window_does_not_touch_a_window_congestion_control_owns() {
    let mut s = sender_with(Box::new(ConstantWindowOwner), "sack", &config(10, true));
    start(&mut s);
    assert_eq!(ack(&mut s, 100, 1, &[]), vec![10, 11, 12]);
    ack(&mut s, 101, 1, &[(2, 3)]);
    ack(&mut s, 102, 1, &[(2, 4)]);
    // Entry: RFC 6675 would set cwnd = 4 and send only the retransmission. With
    // cwnd 12: pipe = 2..12 not SACKed (8) + the retransmission of 1 = 9, so
    // 13, 14, 15 follow.
    assert_eq!(ack(&mut s, 103, 1, &[(2, 5)]), vec![1, 13, 14, 15]);
    assert_eq!((ssthresh(&s), cwnd(&s)), (4.0, OWNED_CWND));
    assert!(s.recovery().in_recovery());
}

#[test]
fn sack1_entry_window_does_not_touch_a_window_congestion_control_owns() {
    let mut s = sender_with(Box::new(ConstantWindowOwner), "sack1", &config(10, true));
    start(&mut s);
    assert_eq!(ack(&mut s, 100, 1, &[]), vec![10, 11, 12]);
    ack(&mut s, 101, 1, &[(2, 3)]);
    ack(&mut s, 102, 1, &[(2, 4)]);
    // Entry sends only the retransmission (ns-2 calls no send_much on that ACK).
    assert_eq!(ack(&mut s, 103, 1, &[(2, 5)]), vec![1]);
    assert_eq!((ssthresh(&s), cwnd(&s)), (4.0, OWNED_CWND));
    // Next ACK: pipe = flight 12 - 3 - 1 = 8 against the owned cwnd 12: four new segments.
    assert_eq!(ack(&mut s, 104, 1, &[(2, 6)]), vec![13, 14, 15, 16]);
    assert_eq!(cwnd(&s), OWNED_CWND);
}

// ---------------------------------------------------------------- 4. ECN (RFC 3168 §6.1.2), Reno and NewReno

#[test]
fn ecn_echo_reduces_once_per_window_of_data() {
    let mut s = sender("newreno", &ecn(20, false));
    assert_eq!(start(&mut s), (0..20).collect::<Vec<_>>());
    // First mark: FlightSize 20 - 1 = 19, ssthresh = cwnd = 9.5; the window of
    // data is segments 1..19 (snd_max 20). cwnd 9.5 allows up to 1 + 9 = 10: nothing new.
    assert!(feed(&mut s, 100, &echoing_mark(ack_packet(1, 0, &[]))).is_empty());
    assert_eq!((ssthresh(&s), cwnd(&s)), (9.5, 9.5));
    // A second mark from the same window: no second reduction (10 / 2 = 5), and
    // no increase for an ECN-Echo ACK (not 9.5 + 1/9.5).
    assert!(feed(&mut s, 101, &echoing_mark(ack_packet(10, 0, &[]))).is_empty());
    assert_eq!((ssthresh(&s), cwnd(&s)), (9.5, 9.5));
    // The ACK of the whole window still echoes a mark set on one of its
    // segments: no reduction. cwnd 9.5 sends 20..28.
    assert_eq!(feed(&mut s, 102, &echoing_mark(ack_packet(20, 0, &[]))), (20..29).collect::<Vec<_>>());
    assert_eq!((ssthresh(&s), cwnd(&s)), (9.5, 9.5));
    // snd_una 21 has passed the window: a new reduction, FlightSize 29 - 21 = 8 -> 4.
    feed(&mut s, 103, &echoing_mark(ack_packet(21, 0, &[])));
    assert_eq!((ssthresh(&s), cwnd(&s)), (4.0, 4.0));
}

/// An ACK of `ack_seg` segments carrying AccECN's CE byte count `ce_bytes`.
fn accecn_ack(ack_seg: u64, ce_bytes: u32) -> cclab_wire::Packet {
    let mut a = ack_packet(ack_seg, 0, &[]);
    if let cclab_wire::Header::Tcp(h) = &mut a.header {
        h.ce_bytes = ce_bytes;
    }
    a
}

/// With AccECN a mark is a rise of the receiver's CE byte count: the ECE
/// flag means nothing, a repeated count is no new mark, and a count below
/// the last one (an ACK overtaken by a later one) is ignored. The reaction
/// is still once per window of data.
#[test]
fn accecn_marks_are_rises_of_the_ce_byte_count() {
    let cfg = TcpConfig { ecn: super::EcnFeedback::Accurate, ..config(20, false) };
    let mut s = sender("newreno", &cfg);
    let mut out = Outbox::default();
    s.on_timer(0, &mut out);
    assert!(out.packets.iter().all(|p| p.ect == cclab_wire::Ect::Ect0), "data is ECT(0)");
    feed(&mut s, 100, &echoing_mark(accecn_ack(1, 0)));
    assert_eq!((ssthresh(&s), cwnd(&s)), (1e9, 21.0), "ECE is not AccECN's signal");
    feed(&mut s, 101, &accecn_ack(2, 1000));
    // The first ACK let segments 20 and 21 out: FlightSize 22 - 2 = 20, halved.
    assert_eq!((ssthresh(&s), cwnd(&s)), (10.0, 10.0));
    // The window of data ends at snd_max 22: later rises within it do not cut again.
    feed(&mut s, 102, &accecn_ack(21, 2000));
    assert_eq!(ssthresh(&s), 10.0);
    let before = cwnd(&s);
    feed(&mut s, 103, &accecn_ack(22, 2000));
    assert!(cwnd(&s) > before, "an unchanged count is no mark: the window grows");
    feed(&mut s, 104, &accecn_ack(23, 1000));
    assert_eq!(ssthresh(&s), 10.0, "a count below the last is an old ACK's");
    feed(&mut s, 105, &accecn_ack(24, 3000));
    assert!(ssthresh(&s) < 10.0, "a rise past the window cuts again");
}

#[test]
fn an_l4s_sender_marks_its_data_ect1_and_without_ecn_data_is_not_ect() {
    let cfg = TcpConfig { ecn: super::EcnFeedback::Accurate, ect: cclab_wire::Ect::Ect1, ..config(4, false) };
    let mut out = Outbox::default();
    sender("newreno", &cfg).on_timer(0, &mut out);
    assert!(out.packets.iter().all(|p| p.ect == cclab_wire::Ect::Ect1));
    let cfg = TcpConfig { ect: cclab_wire::Ect::Ect1, ..config(4, false) };
    let mut out = Outbox::default();
    sender("newreno", &cfg).on_timer(0, &mut out);
    assert!(out.packets.iter().all(|p| p.ect == cclab_wire::Ect::NotEct));
}

#[test]
fn ecn_echo_for_data_sent_before_a_timeout_keeps_the_loss_window() {
    let mut s = sender("newreno", &ecn(10, false));
    start(&mut s);
    let mut out = Outbox::default();
    s.on_timer(secs(1), &mut out);
    // Timeout: FlightSize 10 -> ssthresh 5, loss window 1, segment 0 resent.
    assert_eq!(segs(&out.packets), vec![0]);
    assert_eq!((ssthresh(&s), cwnd(&s)), (5.0, 1.0));
    // A mark echoed for segments 1 and 2, sent before the timeout: already
    // answered by it. A second reduction would set cwnd = (10 - 3) / 2 = 3.5,
    // three times the loss window.
    assert_eq!(feed(&mut s, secs(1) + 100, &echoing_mark(ack_packet(3, 0, &[]))), vec![3]);
    assert_eq!((ssthresh(&s), cwnd(&s)), (5.0, 1.0));
}

#[test]
fn a_loss_in_a_window_already_reduced_for_a_mark_is_only_retransmitted() {
    let mut s = sender("newreno", &ecn(20, false));
    start(&mut s);
    // Mark: FlightSize 19 -> ssthresh = cwnd = 9.5; window of data up to snd_max 20.
    feed(&mut s, 100, &echoing_mark(ack_packet(1, 0, &[])));
    // An unmarked ACK grows cwnd in congestion avoidance by 1/9.5.
    assert!(ack(&mut s, 101, 5, &[]).is_empty());
    let grown = 9.5 + 1.0 / 9.5;
    assert_eq!(cwnd(&s), grown);
    ack(&mut s, 102, 5, &[]);
    ack(&mut s, 103, 5, &[]);
    // The loss of 5 is in the window already reduced for: retransmit, recover
    // from the current window (cwnd + 3), keep ssthresh 9.5 (not 15 / 2 = 7.5).
    assert_eq!(ack(&mut s, 104, 5, &[]), vec![5]);
    assert_eq!((ssthresh(&s), cwnd(&s)), (9.5, grown + 3.0));
    assert_eq!(s.recoveries(), 1);
}

#[test]
fn a_mark_echoed_by_the_ack_that_ends_recovery_belongs_to_the_recovered_window() {
    let mut s = sender("newreno", &ecn(10, false));
    lose_segment_one(&mut s, false);
    assert_eq!((ssthresh(&s), cwnd(&s)), (5.5, 8.5)); // FlightSize 11, recover 12
                                                      // Full ACK 12 echoing a mark from that window: NewReno's full-ACK window
                                                      // min(5.5, FlightSize 0 + 1) = 2 and no second reduction (which would set ssthresh 2).
    feed(&mut s, 200, &echoing_mark(ack_packet(12, 0, &[])));
    assert!(!s.recovery().in_recovery());
    assert_eq!((ssthresh(&s), cwnd(&s)), (5.5, 2.0));
}

// ---------------------------------------------------------------- 5. recovery-owned timers (Decoupled TCP's expiry timers)

/// A test double in the spirit of Decoupled TCP (seed paper 001): every
/// outstanding segment has its own expiry timer and loss recovery runs on
/// those alone, independent of cwnd and of duplicate ACKs. Not a faithful
/// Decoupled TCP: a fixed timeout, no loss detection otherwise, no cwnd rules.
struct ExpiryTimers {
    timeout: Time,
    /// Expiry of every segment sent and neither acknowledged nor SACKed.
    expiry: BTreeMap<u64, Time>,
    /// Segments whose timer expired, to be resent (before any new data).
    due: BTreeSet<u64>,
}

impl ExpiryTimers {
    fn new(timeout: Time) -> Self {
        Self { timeout, expiry: BTreeMap::new(), due: BTreeSet::new() }
    }
}

impl LossRecovery for ExpiryTimers {
    fn name(&self) -> &'static str {
        "expiry-timers"
    }

    fn on_ack(&mut self, s: &SenderState, _ack: &AckInfo) -> Outcome {
        let outstanding = |seg: &u64| *seg >= s.snd_una && !s.scoreboard.is_sacked(*seg);
        self.expiry.retain(|seg, _| outstanding(seg));
        self.due.retain(outstanding);
        Outcome::default() // never a loss: losses are found by the timers only
    }

    fn enter(&mut self, _s: &SenderState, _window: f64) -> Outcome {
        unreachable!("this recovery never reports a loss")
    }

    fn on_rto(&mut self, _s: &SenderState) -> Outcome {
        unreachable!("this recovery replaces the RFC 6298 timer")
    }

    fn next_segment(&mut self, s: &SenderState) -> Option<Transmission> {
        // Several expired segments go out one after another; each leaves `due` in
        // on_transmit, so one held back (by pacing) is offered again.
        match self.due.first() {
            Some(&seg) => Some(Transmission::retransmit(seg)),
            None => next_in_window(s, 0, false),
        }
    }

    fn on_transmit(&mut self, s: &SenderState, tx: Transmission) {
        self.due.remove(&tx.seg);
        let sent_at = s.scoreboard.get(tx.seg).map_or(0, |r| r.sent_at);
        self.expiry.insert(tx.seg, sent_at + self.timeout);
    }

    fn in_recovery(&self) -> bool {
        false
    }

    fn in_loss_episode(&self, _s: &SenderState) -> bool {
        false
    }

    fn has_timers(&self) -> bool {
        true
    }

    fn next_timer(&self) -> Time {
        self.expiry.values().copied().min().unwrap_or(NEVER)
    }

    fn on_timer(&mut self, now: Time, _s: &SenderState) -> Outcome {
        let expired: Vec<u64> =
            self.expiry.iter().filter(|&(_, &at)| at <= now).map(|(&seg, _)| seg).collect();
        for seg in expired {
            self.expiry.remove(&seg);
            self.due.insert(seg);
        }
        Outcome::default()
    }

    fn replaces_rto(&self) -> bool {
        true
    }
}

#[test]
fn per_segment_expiry_timers_recover_every_loss_without_the_rfc6298_timer() {
    const TIMEOUT: Time = millis(300); // three RTTs of the 100 ms path
    let bytes = 300 * MSS + 123;
    let cfg = transfer(bytes, true);
    let cc = defaults::congestion_control("reno").unwrap();
    let mut s = TcpSender::new(&cfg, cc, Box::new(ExpiryTimers::new(TIMEOUT)), None);
    s.record_transmissions();
    // 10 % random loss; remember which transmissions were dropped.
    let dropped = Rc::new(RefCell::new(Vec::new()));
    let (log, mut random) = (dropped.clone(), random_loss(3, 10));
    let drop = Box::new(move |seg, n| {
        let lost = random(seg, n);
        if lost {
            log.borrow_mut().push((seg, n));
        }
        lost
    });
    let mut path = Path::with_sender(s, &cfg, drop);
    path.run(secs(600));

    assert!(path.delivered_exactly_once_in_order(bytes));
    assert!(path.sender.is_finished());
    assert_eq!(path.sender.timeouts(), 0, "the RFC 6298 timer never fires");
    assert!(dropped.borrow().len() >= 20, "{} drops", dropped.borrow().len());

    // Every retransmission leaves exactly TIMEOUT after the previous transmission
    // of its segment: at its expiry, never earlier (no duplicate ACK rules) or later.
    let log = path.sender.transmissions().unwrap();
    let mut last_sent: BTreeMap<u64, Time> = BTreeMap::new();
    let mut retransmitted_at: BTreeMap<Time, u64> = BTreeMap::new();
    for tx in log {
        if let Some(previous) = last_sent.insert(tx.seg, tx.at) {
            assert_eq!(tx.at, previous + TIMEOUT, "segment {}", tx.seg);
            *retransmitted_at.entry(tx.at).or_default() += 1;
        }
    }
    // Segments sent in one burst expire together: one timer resends several
    // (seven at 0.9 s with this seed).
    assert!(retransmitted_at.values().any(|&n| n >= 5), "{retransmitted_at:?}");
    // Every dropped transmission was resent once, and SACK told the timers about
    // every segment that arrived, so nothing was resent spuriously (41 of each).
    assert_eq!(path.sender.retransmits(), dropped.borrow().len() as u64);
    // The first segment lost: resent at its send time + TIMEOUT.
    let (first_lost, _) = dropped.borrow()[0];
    let sends: Vec<Time> = log.iter().filter(|tx| tx.seg == first_lost).map(|tx| tx.at).collect();
    assert_eq!(sends[1], sends[0] + TIMEOUT, "segment {first_lost}: {sends:?}");
}

// ---------------------------------------------------------------- 6. deliveries as estimators count them

/// Reno, recording what each ACK sample says was newly acknowledged, newly
/// SACKed and delivered: `(acked, sacked, delivered)`.
#[derive(Default)]
struct DeliveryRecorder {
    samples: Rc<RefCell<Vec<(u64, u64, u64)>>>,
}

impl CongestionControl for DeliveryRecorder {
    fn name(&self) -> &'static str {
        "delivery-recorder"
    }

    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        self.samples.borrow_mut().push((ack.acked, ack.sacked, ack.delivered));
        Reno.on_ack(w, ack);
    }

    fn on_congestion(&mut self, w: &Window, event: &CongestionEvent) -> Response {
        Reno.on_congestion(w, event)
    }
}

/// A timeout clears the SACK scoreboard (RFC 2018 §8: the receiver may have
/// reneged), and the next ACKs report the same blocks again. They deliver
/// nothing new, so a sample counts them as SACKed only once: counted again,
/// the two segments looked delivered twice and a Westwood or Jersey estimate
/// jumped above the link (TCP-Jersey at 1 % loss on 5 Mbit/s read 58 Mbit/s
/// after a timeout; with this rule at most 4.94).
#[test]
fn sacks_re_reported_after_a_timeout_are_not_new_deliveries() {
    let recorder = DeliveryRecorder::default();
    let samples = recorder.samples.clone();
    let mut s = sender_with(Box::new(recorder), "sack", &config(4, true));
    start(&mut s); // 0..3 at t = 0; 0 is lost
    ack(&mut s, millis(5), 0, &[(1, 2)]);
    ack(&mut s, millis(6), 0, &[(1, 3)]);
    let mut out = Outbox::default();
    let rto = s.rto_deadline();
    s.on_timer(rto, &mut out);
    assert_eq!((s.timeouts(), segs(&out.packets)), (1, vec![0]));
    ack(&mut s, rto + millis(1), 0, &[(1, 3)]); // the same blocks again
    ack(&mut s, rto + millis(2), 0, &[(1, 4)]); // and 3, new
    assert_eq!(*samples.borrow(), vec![(0, 1, 1), (0, 1, 1), (0, 0, 0), (0, 1, 1)]);
}

/// Linux's `rs->acked_sacked` (BBR's "segments delivered"): a segment counts
/// when first SACKed or acknowledged, never again when the cumulative ACK
/// passes over it, nor when it is SACKed again after a timeout forgot the
/// SACK information. BBR counted `acked + sacked`, so a cumulative ACK over a
/// SACKed block was counted twice (the second sample below: 5 acknowledged,
/// 2 of them delivered).
#[test]
fn an_ack_sample_counts_each_segment_delivered_once() {
    let recorder = DeliveryRecorder::default();
    let samples = recorder.samples.clone();
    let mut s = sender_with(Box::new(recorder), "sack", &config(10, true));
    start(&mut s); // 0..9 outstanding
    ack(&mut s, 100, 0, &[(1, 4)]); // 1, 2, 3 SACKed
    ack(&mut s, 101, 5, &[]); // 0 and 4 new; 1..3 were SACKed already
    ack(&mut s, 102, 5, &[(6, 9)]); // 6, 7, 8 SACKed
    let mut out = Outbox::default();
    s.on_timer(secs(2), &mut out); // RTO: SACK bits cleared, 5 resent
    assert_eq!(segs(&out.packets), vec![5]);
    ack(&mut s, secs(2) + 100, 6, &[(6, 9)]); // 5 new; 6..8 SACKed again
    assert_eq!(*samples.borrow(), vec![(0, 3, 3), (5, 0, 2), (0, 3, 3), (1, 0, 1)]);
}

// ---------------------------------------------------------------- 7. delivery-rate samples on request

/// Reno, recording what each ACK sample says was delivered `(acked, sacked,
/// delivered)` and whether it carried a delivery-rate sample and a round
/// start; it says it uses those if `declares`.
struct RateReader {
    declares: bool,
    samples: Rc<RefCell<Vec<RateReading>>>,
}

/// `(acked, sacked, delivered)`, a rate sample came, a round started.
type RateReading = ((u64, u64, u64), bool, bool);

impl CongestionControl for RateReader {
    fn name(&self) -> &'static str {
        "rate-reader"
    }

    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        let delivered = (ack.acked, ack.sacked, ack.delivered);
        self.samples.borrow_mut().push((delivered, ack.rate.is_some(), ack.round_start));
        Reno.on_ack(w, ack);
    }

    fn on_congestion(&mut self, w: &Window, event: &CongestionEvent) -> Response {
        Reno.on_congestion(w, event)
    }

    fn uses_delivery_rate(&self) -> bool {
        self.declares
    }
}

/// The sender measures delivery rates and round trips for an algorithm that
/// says it reads them, and only then; the deliveries each sample counts are
/// the same either way.
#[test]
fn rate_samples_and_round_starts_come_only_to_an_algorithm_that_uses_them() {
    let mut deliveries = Vec::new();
    for declares in [false, true] {
        let samples = Rc::new(RefCell::new(Vec::new()));
        let reader = RateReader { declares, samples: samples.clone() };
        let mut s = sender_with(Box::new(reader), "sack", &config(4, true));
        start(&mut s); // 0..3 at t = 0
        ack(&mut s, millis(10), 2, &[]); // 0 and 1
        ack(&mut s, millis(11), 2, &[(3, 4)]); // 3 SACKed, 2 missing
        for k in 4..=8 {
            ack(&mut s, millis(8 + k), k, &[]);
        }
        let samples = samples.borrow();
        let rates = samples.iter().filter(|s| s.1).count();
        let rounds = samples.iter().filter(|s| s.2).count();
        if declares {
            assert!(rates >= 4 && rounds >= 2, "{rates} rate samples, {rounds} round starts");
        } else {
            assert_eq!((rates, rounds), (0, 0));
        }
        deliveries.push(samples.iter().map(|s| s.0).collect::<Vec<_>>());
    }
    assert_eq!(deliveries[0], deliveries[1]);
    // The ACK to 4 acknowledges 2 and 3, but 3 was delivered when SACKed.
    assert_eq!(deliveries[0][..3], [(2, 0, 2), (0, 1, 1), (2, 0, 1)]);
}
