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
    next_in_window, AckInfo, LossRecovery, Outcome, Recover, RecoveryBuilder, RecoveryDescriptor,
    Transmission, TxKind,
};
use crate::tcp::sender::SenderState;
use cclab_wire::{
    Descriptor, MetricDesc, Metrics, ParamDefault, ParamError, ParamType, Parameter, Params, Role,
};

/// In recovery, and RFC 6675's pipe.
const SACK_METRICS: &[MetricDesc] = &[
    super::METRICS[0],
    MetricDesc {
        name: "pipe",
        unit: "segments",
        meaning: "RFC 6675 pipe: segments estimated in the network, as of the last ACK in recovery (or limited transmit) plus the segments sent since; outside those, only a count of transmissions",
    },
];

pub const DESCRIPTOR: RecoveryDescriptor = Descriptor {
    name: "sack",
    role: Role::LossRecovery,
    summary:
        "conservative SACK recovery: scoreboard, IsLost, pipe, NextSeg rules 1-4 with rescue retransmission",
    source: "RFC 6675 §4-5; SACK option RFC 2018",
    parameters: &[
        Parameter {
            name: "rule3",
            ty: ParamType::Bool,
            unit: "",
            min: 0.0,
            max: 0.0,
            default: ParamDefault::Value("true"),
            meaning:
                "NextSeg rule (3): retransmit un-SACKed data below the highest SACK even if not yet lost",
        },
        Parameter {
            name: "clear_on_timeout",
            ty: ParamType::Bool,
            unit: "",
            min: 0.0,
            max: 0.0,
            default: ParamDefault::Value("true"),
            meaning: "forget SACK information after a retransmission timeout (RFC 2018 §5)",
        },
    ],
    metrics: SACK_METRICS,
    build: RecoveryBuilder { build, uses_sack: true },
};

fn build(params: &Params) -> Result<Box<dyn LossRecovery>, ParamError> {
    Ok(Box::new(Sack {
        use_rule3: params.bool("rule3")?,
        clear_on_timeout: params.bool("clear_on_timeout")?,
        ..Sack::default()
    }))
}

#[derive(Debug)]
pub struct Sack {
    in_recovery: bool,
    recovery_point: Recover,
    high_rxt: u64,
    rescue_end: Option<u64>,
    pipe: u64,
    /// RFC 6675 §2 DupAcks: ACKs that SACKed new data since the last cumulative ACK.
    dupacks: u32,
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
            dupacks: 0,
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
    pub fn lost_bound(s: &SenderState) -> u64 {
        s.scoreboard.kth_highest_sacked(s.dupthresh as u64).unwrap_or(s.snd_una)
    }

    pub fn is_lost(s: &SenderState, seg: u64) -> bool {
        seg < Self::lost_bound(s) && !s.scoreboard.is_sacked(seg)
    }

    fn set_pipe(&mut self, s: &SenderState) {
        let (una, max) = (s.snd_una, s.snd_max);
        let in_network = s.pipe_without_retransmissions();
        let retransmitted_to = self.high_rxt.clamp(una, max);
        let retransmitted = (retransmitted_to - una) - s.scoreboard.sacked_in(una, retransmitted_to);
        self.pipe = in_network + retransmitted;
    }

    fn window_open(&self, s: &SenderState) -> bool {
        s.window.cwnd - self.pipe as f64 >= 1.0
    }

    fn next_seg(&self, s: &SenderState) -> Option<Transmission> {
        let from = self.high_rxt.max(s.snd_una);
        let highest_sacked = s.scoreboard.kth_highest_sacked(1);
        if let Some(top) = highest_sacked {
            let lost_below = Self::lost_bound(s).min(top);
            if let Some(seg) = s.scoreboard.first_unsacked_in(from, lost_below) {
                return Some(Transmission::retransmit(seg));
            }
        }
        if s.new_data_allowed() {
            return Some(Transmission::new_data(s.snd_max));
        }
        if let (true, Some(top)) = (self.use_rule3, highest_sacked) {
            if let Some(seg) = s.scoreboard.first_unsacked_in(from, top) {
                return Some(Transmission::retransmit(seg));
            }
        }
        // HighACK > RescueRxt: the last acknowledged byte lies beyond RescueRxt's segment.
        if self.rescue_end.is_none_or(|end| s.snd_una > end) {
            if let Some(seg) = s.scoreboard.last_unsacked_in(s.snd_una, s.snd_max) {
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

    fn metrics(&self, out: &mut Metrics<'_>) {
        out.put("in_recovery", f64::from(u8::from(self.in_recovery)));
        out.put("pipe", self.pipe as f64);
    }

    fn on_ack(&mut self, s: &SenderState, ack: &AckInfo) -> Outcome {
        let mut outcome = Outcome::open(ack);
        if self.in_recovery {
            if !self.recovery_point.reached_by(ack.ack_seg) {
                self.set_pipe(s);
                return Outcome { restart_timer: ack.newly_acked > 0, ..Outcome::default() };
            }
            self.in_recovery = false;
            self.dupacks = 0;
            outcome = Outcome { exited: true, restart_timer: true, ..Outcome::default() };
        }
        if ack.newly_acked > 0 {
            self.dupacks = 0;
        }
        if ack.newly_sacked == 0 {
            return outcome;
        }
        self.dupacks += 1;
        let loss_detected = self.dupacks >= s.dupthresh || Self::is_lost(s, s.snd_una);
        if self.recovery_point.reached_by(ack.ack_seg) && loss_detected {
            return Outcome { exited: outcome.exited, ..Outcome::loss(ack.newly_acked > 0) };
        }
        if s.limited_transmit {
            self.high_rxt = s.snd_una;
            self.set_pipe(s);
        }
        outcome
    }

    fn enter(&mut self, s: &SenderState, window: f64) -> Outcome {
        self.in_recovery = true;
        self.recovery_point.set(s.snd_max);
        self.high_rxt = s.snd_una;
        self.rescue_end = Some(s.snd_una + 1);
        self.set_pipe(s);
        Outcome { cwnd: Some(window), retransmit: Some(s.snd_una), ..Outcome::default() }
    }

    fn on_rto(&mut self, s: &SenderState) -> Outcome {
        self.in_recovery = false;
        self.dupacks = 0;
        self.recovery_point.set(s.snd_max);
        self.high_rxt = s.snd_una;
        self.pipe = 0;
        Outcome { forget_sacks: self.clear_on_timeout, ..Outcome::default() }
    }

    fn next_segment(&mut self, s: &SenderState) -> Option<Transmission> {
        if self.in_recovery {
            return if self.window_open(s) { self.next_seg(s) } else { None };
        }
        let limited_transmit =
            s.limited_transmit && self.dupacks > 0 && self.dupacks < s.dupthresh && s.snd_nxt == s.snd_max;
        if limited_transmit {
            let allowed = self.window_open(s) && s.new_data_allowed();
            return allowed.then_some(Transmission::new_data(s.snd_max).via_limited_transmit());
        }
        next_in_window(s, 0, true)
    }

    fn on_transmit(&mut self, _s: &SenderState, tx: Transmission) {
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

    fn in_loss_episode(&self, s: &SenderState) -> bool {
        !self.recovery_point.reached_by(s.snd_una)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::Window;
    use crate::tcp::rtt::RttEstimator;
    use crate::tcp::scoreboard::Scoreboard;
    use cclab_wire::time::secs;

    /// `sent` segments outstanding from 0, the given ranges SACKed.
    fn core(sent: u64, total: Option<u64>, sacked: &[(u64, u64)], cwnd: f64) -> SenderState {
        let mut core = SenderState {
            mss: 1000,
            total_segments: total,
            last_segment_len: 1000,
            app_writing: false,
            snd_una: 0,
            snd_nxt: sent,
            snd_max: sent,
            window: Window { cwnd, ssthresh: cwnd },
            rwnd: 1 << 40,
            dupthresh: 3,
            limited_transmit: false,
            scoreboard: Scoreboard::default(),
            rtt: RttEstimator::new(secs(1), secs(1), secs(60), 0),
            limited_transmit_sent: 0,
            buffer_segments: u64::MAX,
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
