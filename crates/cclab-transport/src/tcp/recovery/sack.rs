//! Conservative SACK-based loss recovery, RFC 6675 (with RFC 2018 SACK blocks).
//!
//! Kept in segments: `high_rxt` is the exclusive end of HighRxt (HighRxt + 1),
//! `recovery_point` that of RecoveryPoint (HighData + 1 when recovery began),
//! `rescue_end` that of RescueRxt.
//!
//! - Duplicate ACK (§2): an ACK that SACKs previously un-SACKed data; a
//!   cumulative ACK resets DupAcks first (§5).
//! - IsLost(S) (§4): DupThresh SACKed segments above S, or more than
//!   (DupThresh - 1) * SMSS SACKed bytes above S. With whole segments both reduce
//!   to "S lies below the DupThresh-th highest SACKed segment".
//! - SetPipe (§4): every un-SACKed segment in [HighACK, HighData] counts once if
//!   not lost and once more if at or below HighRxt.
//! - Entering recovery (§5 steps 1, 2, 4) when DupAcks >= DupThresh or
//!   IsLost(HighACK + 1), and only once HighACK has reached the previous
//!   RecoveryPoint: RecoveryPoint = HighData, ssthresh from congestion control
//!   (FlightSize without limited-transmit segments), cwnd = ssthresh, retransmit
//!   HighACK + 1, HighRxt = RescueRxt = that segment. (HighRxt is raised when that
//!   retransmission leaves, and SetPipe runs just before it: the pipe it leaves
//!   behind is the one the RFC computes after step 4.3.)
//! - Every ACK in recovery: (A) a cumulative ACK beyond RecoveryPoint ends it
//!   (and is then handled as outside recovery: it may count as a duplicate ACK);
//!   (B) update the scoreboard and SetPipe; (C) while cwnd - pipe >= 1 send
//!   NextSeg: (1) the first lost un-SACKed segment above HighRxt, (2) new data,
//!   (3) any un-SACKed segment above HighRxt below the highest SACK, (4) once per
//!   recovery, when HighACK > RescueRxt, a rescue retransmission of the highest
//!   un-SACKed segment.
//! - Limited transmit (step 3, optional): below DupThresh, new data may be sent
//!   while cwnd - pipe >= 1, unless go-back-N after a timeout is still resending.
//! - Timeout (§5.1): RecoveryPoint = HighData and recovery ends (on every timeout,
//!   also outside recovery, as RFC 6582 does with `recover`); SACK bits are
//!   cleared (RFC 2018 §5) and go-back-N resends what is not SACKed again.

use super::{
    next_in_window, set_ssthresh_on_loss, AckInfo, LossRecovery, Recover, Transmission, TxKind, Verdict,
};
use crate::cc::CongestionControl;
use crate::tcp::sender::SenderCore;

#[derive(Debug)]
pub struct Sack {
    in_recovery: bool,
    recovery_point: Recover,
    high_rxt: u64,
    rescue_end: Option<u64>,
    pipe: u64,
    /// NextSeg rule (3).
    pub use_rule3: bool,
    /// Clear SACK information on a retransmission timeout.
    pub clear_on_timeout: bool,
}

impl Default for Sack {
    fn default() -> Self {
        Self {
            in_recovery: false,
            recovery_point: Recover::default(),
            high_rxt: 0,
            rescue_end: None,
            pipe: 0,
            use_rule3: true,
            clear_on_timeout: true,
        }
    }
}

impl Sack {
    pub fn pipe(&self) -> u64 {
        self.pipe
    }

    pub fn high_rxt(&self) -> u64 {
        self.high_rxt
    }

    /// Un-SACKed segments below this bound are lost (IsLost).
    pub fn lost_bound(core: &SenderCore) -> u64 {
        core.scoreboard.kth_highest_sacked(core.dupthresh as u64).unwrap_or(core.snd_una)
    }

    pub fn is_lost(core: &SenderCore, seg: u64) -> bool {
        seg < Self::lost_bound(core) && !core.scoreboard.is_sacked(seg)
    }

    fn set_pipe(&mut self, core: &SenderCore) {
        let (una, max) = (core.snd_una, core.snd_max);
        let not_lost_from = Self::lost_bound(core).clamp(una, max);
        let in_network = (max - not_lost_from) - core.scoreboard.sacked_in(not_lost_from, max);
        let retransmitted_to = self.high_rxt.clamp(una, max);
        let retransmitted = (retransmitted_to - una) - core.scoreboard.sacked_in(una, retransmitted_to);
        self.pipe = in_network + retransmitted;
    }

    fn window_open(&self, core: &SenderCore) -> bool {
        core.cc.cwnd - self.pipe as f64 >= 1.0
    }

    fn next_seg(&self, core: &SenderCore) -> Option<Transmission> {
        let from = self.high_rxt.max(core.snd_una);
        let highest_sacked = core.scoreboard.kth_highest_sacked(1);
        if let Some(top) = highest_sacked {
            let lost_below = Self::lost_bound(core).min(top);
            if let Some(seg) = core.scoreboard.first_unsacked_in(from, lost_below) {
                return Some(Transmission::retransmit(seg));
            }
        }
        if core.has_unsent_data() && core.snd_max < core.snd_una + core.rwnd {
            return Some(Transmission::new_data(core.snd_max));
        }
        if let (true, Some(top)) = (self.use_rule3, highest_sacked) {
            if let Some(seg) = core.scoreboard.first_unsacked_in(from, top) {
                return Some(Transmission::retransmit(seg));
            }
        }
        // HighACK > RescueRxt: the last acknowledged byte lies beyond RescueRxt's segment.
        if self.rescue_end.is_none_or(|end| core.snd_una > end) {
            if let Some(seg) = core.scoreboard.last_unsacked_in(core.snd_una, core.snd_max) {
                return Some(Transmission { seg, kind: TxKind::Rescue, limited_transmit: false });
            }
        }
        None
    }
}

impl LossRecovery for Sack {
    fn name(&self) -> &'static str {
        "sack"
    }

    fn on_ack(&mut self, core: &mut SenderCore, cc: &mut dyn CongestionControl, ack: &AckInfo) -> Verdict {
        let mut verdict = Verdict::open(ack);
        if self.in_recovery {
            if !self.recovery_point.reached_by(ack.ack_seg) {
                self.set_pipe(core);
                return Verdict::recovery(ack.newly_acked > 0);
            }
            self.in_recovery = false;
            core.dupacks = 0;
            cc.on_recovery_exit(&mut core.cc, ack.now);
            verdict = Verdict::recovery(true);
        }
        if ack.newly_acked > 0 {
            core.dupacks = 0;
        }
        if ack.newly_sacked == 0 {
            return verdict;
        }
        core.dupacks += 1;
        let loss_detected = core.dupacks >= core.dupthresh || Self::is_lost(core, core.snd_una);
        if self.recovery_point.reached_by(ack.ack_seg) && loss_detected {
            self.in_recovery = true;
            self.recovery_point.set(core.snd_max);
            set_ssthresh_on_loss(core, cc, ack.now);
            core.cc.cwnd = core.cc.ssthresh;
            self.high_rxt = core.snd_una;
            self.rescue_end = Some(core.snd_una + 1);
            self.set_pipe(core);
            core.force_retransmit = Some(core.snd_una);
            return Verdict { restart_timer: ack.newly_acked > 0, ..Verdict::entered() };
        }
        if core.limited_transmit {
            self.high_rxt = core.snd_una;
            self.set_pipe(core);
        }
        verdict
    }

    fn on_timeout(&mut self, core: &mut SenderCore) {
        self.in_recovery = false;
        self.recovery_point.set(core.snd_max);
        self.high_rxt = core.snd_una;
        self.pipe = 0;
        if self.clear_on_timeout {
            core.scoreboard.clear_sacks();
        }
    }

    fn next_segment(&mut self, core: &SenderCore) -> Option<Transmission> {
        if self.in_recovery {
            return if self.window_open(core) { self.next_seg(core) } else { None };
        }
        let limited_transmit = core.limited_transmit
            && core.dupacks > 0
            && core.dupacks < core.dupthresh
            && core.snd_nxt == core.snd_max;
        if limited_transmit {
            let allowed =
                self.window_open(core) && core.has_unsent_data() && core.snd_max < core.snd_una + core.rwnd;
            return allowed.then_some(Transmission::new_data(core.snd_max).via_limited_transmit());
        }
        next_in_window(core, 0, true)
    }

    fn on_transmit(&mut self, _core: &SenderCore, tx: Transmission) {
        self.pipe += 1;
        match tx.kind {
            TxKind::Retransmit => self.high_rxt = self.high_rxt.max(tx.seg + 1),
            TxKind::Rescue => self.rescue_end = self.recovery_point.get(),
            TxKind::New => {}
        }
    }

    fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    fn in_loss_episode(&self, core: &SenderCore) -> bool {
        !self.recovery_point.reached_by(core.snd_una)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::CcState;
    use crate::tcp::rtt::RttEstimator;
    use crate::tcp::scoreboard::Scoreboard;
    use cclab_core::time::secs;

    /// `sent` segments outstanding from 0, the given ranges SACKed.
    fn core(sent: u64, total: Option<u64>, sacked: &[(u64, u64)], cwnd: f64) -> SenderCore {
        let mut core = SenderCore {
            mss: 1000,
            total_segments: total,
            last_segment_len: 1000,
            snd_una: 0,
            snd_nxt: sent,
            snd_max: sent,
            cc: CcState { cwnd, ssthresh: cwnd },
            rwnd: 1 << 40,
            dupacks: 3,
            dupthresh: 3,
            limited_transmit: false,
            scoreboard: Scoreboard::default(),
            rtt: RttEstimator::new(secs(1), secs(1), secs(60), 0),
            force_retransmit: None,
            limited_transmit_sent: 0,
        };
        for s in 0..sent {
            core.scoreboard.on_transmit(s, 0, false);
        }
        for &(a, b) in sacked {
            core.scoreboard.mark_sacked(a, b);
        }
        core
    }

    /// In recovery with the given HighRxt end, RescueRxt segment and RecoveryPoint end.
    fn in_recovery(high_rxt: u64, rescue_rxt: u64, recovery_point: u64) -> Sack {
        let mut point = Recover::default();
        point.set(recovery_point);
        Sack {
            in_recovery: true,
            recovery_point: point,
            high_rxt,
            rescue_end: Some(rescue_rxt + 1),
            ..Sack::default()
        }
    }

    #[test]
    fn is_lost_counts_sacked_segments_above() {
        let c = core(10, None, &[(2, 4)], 10.0);
        assert!(!Sack::is_lost(&c, 1), "two SACKed above");
        let c = core(10, None, &[(2, 4), (5, 6)], 10.0);
        assert!(Sack::is_lost(&c, 0) && Sack::is_lost(&c, 1));
        assert!(!Sack::is_lost(&c, 4), "only one SACKed above 4");
        assert!(!Sack::is_lost(&c, 2), "SACKed segments are never lost");
    }

    #[test]
    fn set_pipe_counts_unsacked_not_lost_once_and_retransmitted_again() {
        // 10 outstanding, 2, 3, 5 SACKed, 0 retransmitted (HighRxt = 0).
        let c = core(10, None, &[(2, 4), (5, 6)], 10.0);
        let mut s = in_recovery(1, 0, 10);
        s.set_pipe(&c);
        // Not lost: 4, 6, 7, 8, 9 (5). Retransmitted: 0 (1). Lost, not resent: 1 (0).
        assert_eq!(s.pipe(), 6);
    }

    #[test]
    fn next_seg_order_lost_then_new_then_rule_three_then_rescue() {
        let c = core(10, Some(12), &[(2, 4), (5, 6)], 20.0);
        let mut s = in_recovery(1, 0, 10);
        s.set_pipe(&c);
        // Rule 1: the smallest lost un-SACKed segment above HighRxt.
        let tx = s.next_segment(&c).unwrap();
        assert_eq!(tx, Transmission::retransmit(1));
        s.on_transmit(&c, tx);
        assert_eq!(s.high_rxt(), 2);
        // Rule 2: new data (10 and 11 remain of 12).
        assert_eq!(s.next_segment(&c), Some(Transmission::new_data(10)));
        // With no new data left, rule 3: un-SACKed 4 below the highest SACK (5), not lost.
        let c = core(12, Some(12), &[(2, 4), (5, 6)], 20.0);
        let mut s = in_recovery(2, 0, 12);
        s.set_pipe(&c);
        let tx = s.next_segment(&c).unwrap();
        assert_eq!(tx, Transmission::retransmit(4));
        s.on_transmit(&c, tx);
        // Nothing between HighRxt (5) and the highest SACK; rescue needs HighACK > RescueRxt.
        assert_eq!(s.next_segment(&c), None, "HighACK (0) is not above RescueRxt (0)");
    }

    #[test]
    fn rescue_needs_high_ack_beyond_rescue_rxt() {
        // RescueRxt is the last byte of segment 0. An ACK of segment 0 alone makes
        // HighACK equal to it, not greater: no rescue yet.
        let mut c = core(8, Some(8), &[(2, 6)], 20.0);
        c.snd_una = 1;
        c.scoreboard.ack_to(1);
        let mut s = in_recovery(1, 0, 8);
        s.set_pipe(&c);
        assert_eq!(s.next_segment(&c), Some(Transmission::retransmit(1)), "rule 3 first");
        s.on_transmit(&c, Transmission::retransmit(1));
        assert_eq!(s.next_segment(&c), None, "HighACK == RescueRxt");
    }

    #[test]
    fn rescue_retransmits_the_highest_unsacked_segment_and_not_high_rxt() {
        // HighACK has passed RescueRxt: segments 0 and 1 were acked.
        let mut c = core(8, Some(8), &[(2, 6)], 20.0);
        c.snd_una = 2;
        c.scoreboard.ack_to(2);
        let mut s = in_recovery(2, 0, 8);
        s.set_pipe(&c);
        // SACKed 2-5; 6 and 7 are above every SACK, so rules 1-3 find nothing.
        // Rule 4: the highest un-SACKed segment, 7.
        let tx = s.next_segment(&c).unwrap();
        assert_eq!(tx, Transmission { seg: 7, kind: TxKind::Rescue, limited_transmit: false });
        s.on_transmit(&c, tx);
        assert_eq!(s.high_rxt(), 2, "a rescue does not move HighRxt");
        assert_eq!(s.rescue_end, Some(8), "RescueRxt = RecoveryPoint");
        assert_eq!(s.next_segment(&c), None, "one rescue per recovery");
    }

    #[test]
    fn window_closed_when_pipe_reaches_cwnd() {
        let c = core(10, None, &[(2, 4), (5, 6)], 6.0);
        let mut s = in_recovery(1, 0, 10);
        s.set_pipe(&c);
        assert_eq!(s.pipe(), 6);
        assert_eq!(s.next_segment(&c), None);
    }
}
