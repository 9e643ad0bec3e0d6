//! SACK loss recovery as ns-2's `Agent/TCP/Sack1` implements it (Fall and
//! Floyd 1996), the SACK TCP of the paper the recovery study reproduces.
//!
//! Read in ns-2.35 (`tcp/tcp-sack1.cc`, `tcp/scoreboard.cc`,
//! `tcp/scoreboard-rq.cc`, `tcp/tcp.cc`, `tcl/lib/ns-default.tcl`; GitHub
//! `hbatmit/ns2.35` at commit f95482f005e2fc5c4a0b16db636a4933711a1952), with
//! the defaults of `ns-default.tcl` (`numdupacks_` 3, `numdupacksFrac_` -1,
//! `partial_ack_` false, `singledup_` 1, `LimTransmitFix_` false, `oldCode_`
//! false, `bugFix_` true, `maxburst_` 0). In segments: ns-2's `highest_ack_`
//! is `snd_una - 1` and `maxseq_` is `snd_max - 1`; `recover` here is kept as
//! the exclusive end, `snd_max`.
//!
//! - Duplicate ACK (`Sack1TcpAgent::recv`, outside recovery): an ACK that
//!   acknowledges nothing new and whose SACK blocks change the scoreboard
//!   (`CheckUpdate`); an ACK repeating known SACK information is not counted.
//!   After a timeout no duplicate ACK counts until an ACK of new data arrives
//!   (`timeout_`).
//! - Fast retransmit (`dupack_action`) exactly on the `numdupacks_`-th such ACK
//!   (`++dupacks_ == numdupacks(cwnd_)`, not `>=`), and only if `highest_ack_ >
//!   recover_`: the cumulative ACK covers more than the data outstanding at the
//!   last timeout. Then `recover_ = maxseq_`; `pipe_ = maxseq_ - highest_ack_ -
//!   numdupacks_` (the flight less the three segments the duplicates say have
//!   left); the first unacknowledged segment is retransmitted and marked so
//!   that hole retransmission starts above it; the timer is restarted
//!   (`reset_rtx_timer`); cwnd and ssthresh are halved by `slowdown`, which is
//!   congestion control's part here: recovery keeps the window it is given.
//!   That retransmission goes out through `output`, not `send_much`, so it is
//!   not added to `pipe_`, and nothing else is sent on that ACK (`send_much` is
//!   not called while `dupacks_ > 0`).
//! - Every ACK in recovery decrements `pipe_` by one, whatever it carries.
//! - The ACK with `seqno >= recover_` (everything outstanding at the fast
//!   retransmit acknowledged) ends recovery: `recover_ = 0` (so a later loss
//!   may be fast-retransmitted at once), the scoreboard is cleared, and the
//!   window is left where it is.
//! - A partial ACK (new data acknowledged, short of `recover_`) decrements
//!   `pipe_` once more ("so that we never do worse than slow-start") and
//!   restarts the retransmission timer.
//! - Sending in recovery (`send_much`): while `pipe_ < int(cwnd_)`, send
//!   `GetNextRetran()`, the lowest un-SACKed segment below the highest SACKed
//!   one not yet retransmitted in this recovery (no DupThresh test: every hole
//!   counts as lost), else new data; both within the receiver's window; each
//!   transmission adds one to `pipe_`.
//! - Outside recovery the sender follows the sequence window, plus one new
//!   segment on each of the first two duplicate ACKs (`send_one`, limited
//!   transmit). An ACK of new data clears the scoreboard (and its own SACK
//!   blocks are not read), so SACK information lives only within one run of
//!   duplicate ACKs or one recovery.
//! - Timeout (`Sack1TcpAgent::timeout`): `dupacks_ = 0`, recovery ends,
//!   `recover_ = maxseq_`, the scoreboard is cleared; go-back-N from
//!   `snd_una` resends everything, SACKed or not.
//!
//! Where it differs from RFC 6675 [`super::sack`]:
//!
//! - pipe is a counter kept by increments and decrements, never recomputed
//!   from the scoreboard, and may go below zero; RFC 6675 recomputes it from
//!   the scoreboard on every ACK (SetPipe).
//! - No IsLost: fast retransmit needs three duplicate ACKs (never fewer,
//!   however many segments are SACKed), and in recovery every hole below the
//!   highest SACK is retransmitted before any new data (RFC 6675's rule 3
//!   ahead of rule 2, with rule 1 folded into it).
//! - A lost retransmission is repaired only by the timer; no rescue
//!   retransmission; a partial ACK counts as two segments leaving the network.
//! - `recover` is cleared when recovery ends rather than kept as
//!   RecoveryPoint, and SACK information is dropped at every cumulative ACK
//!   outside recovery as well as on a timeout.
//!
//! Not modelled: `partial_ack_` true (two segments sent on each partial ACK),
//! `numdupacksFrac_` (off by default), ECN's own entry path (the sender answers
//! marks), `bugfix_ss_`'s fast retransmit after a timeout when only the first
//! segment was acknowledged, the back-off reset (`t_backoff_ = 1`) on a partial
//! ACK (the sender restarts the timer with its current RTO), and ns-2's
//! `pipe_` decrement for ACKs older than `snd_una` (the sender drops them
//! before recovery sees them).

use super::{
    fast_recovery_next_segment, AckInfo, DupAcks, LossRecovery, Outcome, Recover, RecoveryBuilder,
    RecoveryDescriptor, Transmission, TxKind,
};
use crate::tcp::sender::SenderState;
use cclab_wire::{Descriptor, MetricDesc, Metrics, ParamError, Params, Role};

/// In recovery, and ns-2's `pipe_`.
const SACK1_METRICS: &[MetricDesc] = &[
    super::METRICS[0],
    MetricDesc {
        name: "pipe",
        unit: "segments",
        meaning: "ns-2 pipe_: flight less three at entry, -1 per ACK (-2 per partial ACK), +1 per send",
    },
];

pub const DESCRIPTOR: RecoveryDescriptor = Descriptor {
    name: "sack1",
    role: Role::LossRecovery,
    summary: "ns-2 Sack1: a pipe counter, every hole below the highest SACK retransmitted before new data",
    source: "Fall & Floyd 1996, Simulation-based comparisons of Tahoe, Reno and SACK TCP, CCR 26(3); \
             ns-2.35 tcp/tcp-sack1.cc, tcp/scoreboard.cc",
    parameters: &[],
    metrics: SACK1_METRICS,
    build: RecoveryBuilder { build, uses_sack: true },
};

fn build(_: &Params) -> Result<Box<dyn LossRecovery>, ParamError> {
    Ok(Box::new(Sack1::default()))
}

#[derive(Debug, Default)]
pub struct Sack1 {
    in_recovery: bool,
    /// `None` before any loss and after a recovery ends (ns-2 zeroes `recover_`).
    recover: Recover,
    /// Signed because ns-2 lets `pipe_` fall below zero, which opens the window further.
    pipe: i64,
    dupacks: DupAcks,
    /// Hole retransmission resumes here (the scoreboard's retransmitted marks).
    next_retran: u64,
    /// ns-2's `timeout_`: duplicate ACKs are ignored until new data is acknowledged.
    after_timeout: bool,
    /// The fast retransmission, which ns-2 sends outside `send_much` and so does not count in pipe.
    uncounted: Option<u64>,
    /// Set on the ACK that triggers fast retransmit: ns-2 sends nothing else on it.
    hold: bool,
}

impl Sack1 {
    /// Out of line: asked twice on nearly every ACK outside recovery, the
    /// window rule alone then needs no registers saved for the recovery rules.
    #[inline(never)]
    fn next_segment_in_recovery(&mut self, s: &SenderState) -> Option<Transmission> {
        if self.hold || self.pipe >= s.window.whole_segments() as i64 {
            return None;
        }
        let rwnd_end = s.snd_una + s.rwnd;
        if let Some(seg) = self.next_hole(s) {
            // ns-2 stops sending rather than skip to new data when the hole lies beyond rwnd.
            return (seg < rwnd_end).then_some(Transmission::retransmit(seg));
        }
        s.new_data_allowed().then_some(Transmission::new_data(s.snd_max))
    }

    pub fn pipe(&self) -> i64 {
        self.pipe
    }

    /// `GetNextRetran`: the scoreboard only spans up to the highest SACKed
    /// segment, so a hole is any un-SACKed segment below it.
    fn next_hole(&self, s: &SenderState) -> Option<u64> {
        let top = s.scoreboard.kth_highest_sacked(1)?;
        s.scoreboard.first_unsacked_in(self.next_retran.max(s.snd_una), top)
    }
}

impl LossRecovery for Sack1 {
    fn name(&self) -> &'static str {
        "sack1"
    }

    fn metrics(&self, out: &mut Metrics<'_>) {
        out.put("in_recovery", f64::from(u8::from(self.in_recovery)));
        out.put("pipe", self.pipe as f64);
    }

    fn on_ack(&mut self, s: &SenderState, ack: &AckInfo) -> Outcome {
        self.hold = false;
        self.uncounted = self.uncounted.filter(|&seg| seg >= s.snd_una);
        if self.in_recovery {
            self.pipe -= 1;
            if self.recover.reached_by(ack.ack_seg) {
                self.in_recovery = false;
                self.recover = Recover::default();
                self.dupacks = DupAcks::default();
                return Outcome {
                    exited: true,
                    restart_timer: true,
                    forget_sacks: true,
                    ..Outcome::default()
                };
            }
            if ack.newly_acked > 0 {
                self.pipe -= 1;
                return Outcome { restart_timer: true, ..Outcome::default() };
            }
            return Outcome::default();
        }
        if ack.newly_acked > 0 {
            self.dupacks = DupAcks::default();
            self.after_timeout = false;
            // Clearing an empty scoreboard would still walk its records.
            return Outcome { forget_sacks: s.scoreboard.sacked_count() > 0, ..Outcome::open(ack) };
        }
        if self.after_timeout || ack.newly_sacked == 0 {
            return Outcome::default();
        }
        self.dupacks.0 += 1;
        if self.dupacks.0 == s.dupthresh && self.recover.covered_by(ack.ack_seg) {
            return Outcome::loss(false);
        }
        Outcome::default()
    }

    fn enter(&mut self, s: &SenderState, window: f64) -> Outcome {
        self.in_recovery = true;
        self.recover.set(s.snd_max);
        self.pipe = s.flight_size() as i64 - i64::from(s.dupthresh);
        self.next_retran = s.snd_una + 1;
        self.uncounted = Some(s.snd_una);
        self.hold = true;
        Outcome { cwnd: Some(window), retransmit: Some(s.snd_una), restart_timer: true, ..Outcome::default() }
    }

    fn on_rto(&mut self, s: &SenderState) -> Outcome {
        self.in_recovery = false;
        self.dupacks = DupAcks::default();
        self.after_timeout = true;
        self.recover.set(s.snd_max);
        self.next_retran = s.snd_una;
        self.uncounted = None;
        self.hold = false;
        Outcome { forget_sacks: true, ..Outcome::default() }
    }

    fn next_segment(&mut self, s: &SenderState) -> Option<Transmission> {
        if !self.in_recovery {
            return fast_recovery_next_segment(s, false, self.dupacks);
        }
        self.next_segment_in_recovery(s)
    }

    fn on_transmit(&mut self, _s: &SenderState, tx: Transmission) {
        if self.uncounted == Some(tx.seg) {
            self.uncounted = None;
            return;
        }
        self.pipe += 1;
        if self.in_recovery && tx.kind == TxKind::Retransmit {
            self.next_retran = self.next_retran.max(tx.seg + 1);
        }
    }

    fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    fn in_loss_episode(&self, s: &SenderState) -> bool {
        !self.recover.reached_by(s.snd_una)
    }
}

#[cfg(test)]
mod tests {
    use crate::tcp::test_support::*;
    use crate::tcp::{TcpConfig, TcpSender};
    use cclab_wire::time::{millis, secs};
    use cclab_wire::{Endpoint, MetricLog, Metrics, Outbox};

    /// Ten segments in the first window, SACK on, and no limited transmit, so
    /// that every send the tests see comes from recovery's rules.
    fn cfg(initial_window: u32) -> TcpConfig {
        TcpConfig { limited_transmit: false, ..config(initial_window, true) }
    }

    fn pipe(s: &TcpSender) -> f64 {
        let mut log = MetricLog::default();
        s.metrics(&mut Metrics::new(&mut log));
        log.get("recovery.pipe").unwrap_or(f64::NAN)
    }

    /// Segments 0..10 outstanding, 0 lost, three duplicate ACKs SACKing 1, 1-2, 1-3:
    /// in recovery with cwnd 5 and pipe 7.
    fn in_recovery() -> TcpSender {
        let mut s = sender("sack1", &cfg(10));
        start(&mut s);
        ack(&mut s, 100, 0, &[(1, 2)]);
        ack(&mut s, 101, 0, &[(1, 3)]);
        ack(&mut s, 102, 0, &[(1, 4)]);
        s
    }

    /// `recv`/`dupack_action`: fast retransmit on the `numdupacks_`-th ACK whose
    /// SACK blocks change the scoreboard (`CheckUpdate`), however many segments
    /// are SACKed; an ACK repeating known blocks is not a duplicate.
    #[test]
    fn enters_on_the_third_ack_that_sacks_new_data() {
        let mut s = sender("sack1", &cfg(10));
        start(&mut s);
        assert!(ack(&mut s, 100, 0, &[(1, 2)]).is_empty());
        assert!(ack(&mut s, 101, 0, &[(1, 2)]).is_empty(), "nothing new SACKed: not counted");
        // Three segments SACKed above 0 (RFC 6675's IsLost) but only two duplicates.
        assert!(ack(&mut s, 102, 0, &[(1, 4)]).is_empty());
        assert_eq!(s.recoveries(), 0);
        assert_eq!(ack(&mut s, 103, 0, &[(1, 5)]), vec![0]);
        assert_eq!(s.recoveries(), 1);
        // slowdown(CLOSE_SSTHRESH_HALF|CLOSE_CWND_HALF) is congestion control's: half of 10.
        assert_eq!((cwnd(&s), ssthresh(&s)), (5.0, 5.0));
    }

    /// `dupack_action`: `pipe_ = maxseq_ - highest_ack_ - numdupacks_`; the
    /// retransmission goes out through `output`, not `send_much`, so it is not
    /// counted, and `recv` calls no `send_much` on that ACK even when pipe < cwnd.
    #[test]
    fn entry_sets_pipe_to_the_flight_less_three_and_sends_only_the_retransmission() {
        let s = in_recovery();
        assert_eq!(pipe(&s), 7.0, "flight 10 - 3");
        let mut s = sender("sack1", &cfg(4));
        start(&mut s);
        ack(&mut s, 100, 0, &[(1, 2)]);
        ack(&mut s, 101, 0, &[(1, 3)]);
        assert_eq!(ack(&mut s, 102, 0, &[(1, 4)]), vec![0], "pipe 1 < cwnd 2, yet only the retransmission");
        assert_eq!((pipe(&s), cwnd(&s)), (1.0, 2.0));
        // The next ACK: pipe 0, and two new segments fill it to cwnd.
        assert_eq!(ack(&mut s, 103, 0, &[(1, 4)]), vec![4, 5]);
        assert_eq!(pipe(&s), 2.0);
    }

    /// `recv` in fast recovery: `--pipe_` for every ACK, whether or not it
    /// SACKs anything new; `send_much` sends while `pipe_ < int(cwnd_)` and
    /// adds one per segment.
    #[test]
    fn every_ack_in_recovery_takes_one_from_pipe_and_every_send_adds_one() {
        let mut s = in_recovery();
        assert!(ack(&mut s, 103, 0, &[(1, 5)]).is_empty());
        assert_eq!(pipe(&s), 6.0);
        assert!(ack(&mut s, 104, 0, &[(1, 6)]).is_empty());
        assert_eq!(pipe(&s), 5.0, "5 is not below cwnd 5");
        assert_eq!(ack(&mut s, 105, 0, &[(1, 7)]), vec![10]);
        assert_eq!(pipe(&s), 5.0, "4 after the ACK, 5 after the send");
        assert_eq!(ack(&mut s, 106, 0, &[(1, 7)]), vec![11], "a repeated SACK still counts as a departure");
        assert_eq!(pipe(&s), 5.0);
    }

    /// `ScoreBoard::GetNextRetran`: the lowest segment below the highest SACK
    /// that is neither SACKed nor retransmitted, before any new data, with no
    /// DupThresh test (segment 7 has one SACKed segment above it).
    #[test]
    fn retransmits_every_hole_below_the_highest_sack_before_new_data() {
        let mut s = in_recovery();
        ack(&mut s, 103, 0, &[(1, 5)]);
        ack(&mut s, 104, 0, &[(1, 6)]);
        assert_eq!(ack(&mut s, 105, 0, &[(1, 7)]), vec![10], "no hole above the retransmitted 0");
        assert_eq!(ack(&mut s, 106, 0, &[(8, 9), (1, 7)]), vec![7], "hole 7 before new data");
        assert_eq!(ack(&mut s, 107, 0, &[(8, 10), (1, 7)]), vec![11], "7 was retransmitted once");
    }

    /// `recv` on a partial ACK with `partial_ack_` false: `--pipe_` a second
    /// time ("so that we never do worse than slow-start") and `newtimer`.
    #[test]
    fn a_partial_ack_takes_two_from_pipe_and_restarts_the_timer() {
        let mut s = in_recovery();
        ack(&mut s, 103, 0, &[(1, 5)]);
        ack(&mut s, 104, 0, &[(6, 7), (1, 5)]);
        assert_eq!(pipe(&s), 5.0);
        assert_eq!(ack(&mut s, 105, 0, &[(6, 8), (1, 5)]), vec![5]);
        assert_eq!(pipe(&s), 5.0);
        // The retransmission of 0 arrives: cumulative ACK to 5, short of recover (10).
        let now = millis(300);
        assert_eq!(ack(&mut s, now, 5, &[(6, 8)]), vec![10, 11], "pipe 5 - 2 = 3, refilled to 5");
        assert!(s.recovery().in_recovery());
        assert_eq!(s.rto_deadline(), now + s.state().rtt.rto());
    }

    /// `recv`: `seqno >= recover_` ends fast recovery, clears the scoreboard
    /// (the ending ACK's own blocks unread) and sets `recover_ = 0`, so three
    /// new duplicate ACKs fast-retransmit again even at exactly the old `recover_`.
    #[test]
    fn the_ack_of_recover_ends_recovery_and_clears_recover() {
        let mut s = in_recovery();
        ack(&mut s, 103, 0, &[(1, 5)]);
        ack(&mut s, 104, 0, &[(1, 6)]);
        assert_eq!(ack(&mut s, 105, 0, &[(1, 7)]), vec![10]);
        assert_eq!(ack(&mut s, 106, 0, &[(1, 7)]), vec![11]);
        // Partial: pipe 5 - 2; no SACKed segment is left above 9, so no hole: new data.
        assert_eq!(ack(&mut s, 200, 9, &[]), vec![12, 13]);
        assert!(s.recovery().in_recovery(), "9 < recover 10");
        assert_eq!(ack(&mut s, 201, 10, &[(11, 12)]), vec![14], "the window: snd_una 10 + cwnd 5");
        assert!(!s.recovery().in_recovery());
        assert_eq!(s.state().scoreboard.sacked_count(), 0);
        assert_eq!(cwnd(&s), 5.0, "recovery leaves the window it was given");
        ack(&mut s, 202, 10, &[(11, 13)]);
        ack(&mut s, 203, 10, &[(11, 14)]);
        assert_eq!(ack(&mut s, 204, 10, &[(11, 15)]), vec![10]);
        assert_eq!(s.recoveries(), 2);
    }

    /// `Sack1TcpAgent::timeout`: the scoreboard is cleared, `timeout_` makes
    /// duplicate ACKs count for nothing until new data is acknowledged, and
    /// `recover_ = maxseq_` blocks fast retransmit until the ACK passes it;
    /// go-back-N resends a segment SACKed before the timeout.
    #[test]
    fn after_a_timeout_sacks_are_forgotten_and_fast_retransmit_waits_for_recover() {
        let mut s = sender("sack1", &cfg(10));
        start(&mut s);
        ack(&mut s, 100, 0, &[(2, 3)]);
        let mut out = Outbox::default();
        s.on_timer(secs(1), &mut out);
        assert_eq!(segs(&out.packets), vec![0]);
        assert_eq!(s.state().scoreboard.sacked_count(), 0);
        for (i, top) in (4..7).enumerate() {
            assert!(ack(&mut s, secs(1) + i as u64, 0, &[(2, top)]).is_empty());
        }
        assert_eq!(s.recoveries(), 0, "duplicates after a timeout are ignored");
        assert_eq!(ack(&mut s, secs(2), 1, &[(2, 6)]), vec![1, 2], "2 resent: its SACK was forgotten");
        for (i, top) in (7..10).enumerate() {
            ack(&mut s, secs(2) + 1 + i as u64, 1, &[(3, top)]);
        }
        assert_eq!(s.recoveries(), 0, "third duplicate, but snd_una 1 is not beyond recover (10)");
    }
}
