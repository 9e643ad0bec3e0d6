//! Loss recovery: what a TCP sender transmits next, and how it manages cwnd
//! between detecting a loss and recovering from it.
//!
//! One implementation per file: [`tahoe`], [`reno`], [`newreno`], [`sack`]. The
//! sender updates the scoreboard and `snd_una` from each ACK, then hands the
//! [`AckInfo`] to `on_ack`; it asks `next_segment` for transmissions until that
//! returns `None`; and it calls `on_timeout` after its RTO rules (RFC 6298 §5.4-5.6,
//! RFC 5681 §3.1: ssthresh from congestion control, cwnd = 1, back-off, go back to
//! `snd_una`). A retransmission that must go out regardless of the window (fast
//! retransmit, a NewReno partial ACK) is requested through `core.force_retransmit`.

pub mod newreno;
pub mod reno;
pub mod sack;
pub mod tahoe;

use super::sender::SenderCore;
use crate::cc::{AckPhase, CongestionControl, LossKind};
use cclab_core::Time;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxKind {
    New,
    Retransmit,
    /// RFC 6675 NextSeg rule (4): does not move HighRxt.
    Rescue,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transmission {
    pub seg: u64,
    pub kind: TxKind,
    /// New data sent beyond cwnd by limited transmit (RFC 3042), which RFC 5681
    /// §3.2 keeps out of the FlightSize that sets ssthresh.
    pub limited_transmit: bool,
}

impl Transmission {
    pub fn new_data(seg: u64) -> Self {
        Self { seg, kind: TxKind::New, limited_transmit: false }
    }

    pub fn retransmit(seg: u64) -> Self {
        Self { seg, kind: TxKind::Retransmit, limited_transmit: false }
    }

    pub fn via_limited_transmit(self) -> Self {
        Self { limited_transmit: true, ..self }
    }
}

/// What one ACK told the sender, after the scoreboard and `snd_una` were updated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckInfo {
    pub now: Time,
    /// The cumulative ACK as a segment number (= the new `snd_una`).
    pub ack_seg: u64,
    pub newly_acked: u64,
    pub newly_sacked: u64,
    pub window_changed: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub phase: AckPhase,
    /// Restart the retransmission timer (RFC 6298 §5.3) because of this ACK.
    pub restart_timer: bool,
    pub entered_recovery: bool,
}

impl Verdict {
    /// Outside recovery: restart the timer when new data was acknowledged.
    pub fn open(ack: &AckInfo) -> Self {
        Self { phase: AckPhase::Open, restart_timer: ack.newly_acked > 0, entered_recovery: false }
    }

    pub fn recovery(restart_timer: bool) -> Self {
        Self { phase: AckPhase::Recovery, restart_timer, entered_recovery: false }
    }

    pub fn entered() -> Self {
        Self { phase: AckPhase::Recovery, restart_timer: false, entered_recovery: true }
    }
}

pub trait LossRecovery {
    fn name(&self) -> &'static str;
    fn on_ack(&mut self, core: &mut SenderCore, cc: &mut dyn CongestionControl, ack: &AckInfo) -> Verdict;
    /// After the sender applied the common RTO rules.
    fn on_timeout(&mut self, core: &mut SenderCore);
    /// The next segment the window allows, if any.
    fn next_segment(&mut self, core: &SenderCore) -> Option<Transmission>;
    /// A transmission left (from `next_segment` or `force_retransmit`).
    fn on_transmit(&mut self, _core: &SenderCore, _tx: Transmission) {}
    fn in_recovery(&self) -> bool;
    /// True while the window of data in which the last loss was detected is
    /// not yet fully acknowledged. A timeout then does not reduce ssthresh again.
    fn in_loss_episode(&self, core: &SenderCore) -> bool;
}

/// RFC 6582's `recover` (RFC 6675's RecoveryPoint plays the same part): the
/// exclusive end of the data outstanding when the last loss was detected, by
/// fast retransmit or timeout; `None` before any loss.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Recover(Option<u64>);

impl Recover {
    pub fn set(&mut self, snd_max: u64) {
        self.0 = Some(snd_max);
    }

    pub fn get(&self) -> Option<u64> {
        self.0
    }

    /// RFC 6582 §3.2 step 2: the cumulative ACK "covers more than recover",
    /// `ack_number - 1 > recover`; with an exclusive end, `ack_seg > end`. Duplicate
    /// ACKs that acknowledge exactly `recover` (go-back-N's own duplicates) do not count.
    pub fn covered_by(&self, ack_seg: u64) -> bool {
        self.0.is_none_or(|end| ack_seg > end)
    }

    /// Everything outstanding at the loss is acknowledged (`ack_number - 1 >= recover`):
    /// the full ACK of RFC 6582 and RFC 6675's `HighACK >= RecoveryPoint`.
    pub fn reached_by(&self, ack_seg: u64) -> bool {
        self.0.is_none_or(|end| ack_seg >= end)
    }
}

/// RFC 5681 §2 duplicate ACK: data is outstanding, the ACK acknowledges nothing
/// new and does not change the advertised window (our ACKs never carry data).
pub fn is_duplicate_ack(core: &SenderCore, ack: &AckInfo) -> bool {
    ack.newly_acked == 0 && core.snd_max > core.snd_una && !ack.window_changed
}

/// RFC 5681 duplicate-ACK counting outside recovery: new data resets the
/// count; returns true when this ACK is the DupThresh-th duplicate.
pub fn reaches_dupthresh(core: &mut SenderCore, ack: &AckInfo) -> bool {
    if ack.newly_acked > 0 {
        core.dupacks = 0;
        return false;
    }
    if !is_duplicate_ack(core, ack) {
        return false;
    }
    core.dupacks += 1;
    core.dupacks == core.dupthresh
}

/// RFC 5681 §3.2 steps 2-3: ssthresh from congestion control, retransmit the
/// first unacknowledged segment, cwnd = ssthresh + DupThresh.
pub fn enter_fast_recovery(core: &mut SenderCore, cc: &mut dyn CongestionControl, now: Time) {
    set_ssthresh_on_loss(core, cc, now);
    core.force_retransmit = Some(core.snd_una);
    core.cc.cwnd = core.cc.ssthresh + core.dupthresh as f64;
}

/// RFC 5681 §3.2 step 4: in fast recovery each further duplicate ACK inflates
/// cwnd by one segment (it says one segment has left the network).
pub fn inflate_on_duplicate(core: &mut SenderCore, ack: &AckInfo) {
    if is_duplicate_ack(core, ack) {
        core.dupacks += 1;
        core.cc.cwnd += 1.0;
    }
}

/// Asks congestion control for ssthresh after a loss detected by duplicate ACKs
/// and stores it.
pub fn set_ssthresh_on_loss(core: &mut SenderCore, cc: &mut dyn CongestionControl, now: Time) {
    let loss = core.loss_event(now, LossKind::FastRetransmit);
    core.cc.ssthresh = cc.ssthresh_on_loss(&core.cc, &loss);
}

/// RFC 3042 limited transmit: on the first and second duplicate ACK one new
/// segment each may be sent beyond cwnd.
pub fn limited_transmit_allowance(core: &SenderCore) -> u64 {
    let eligible = core.limited_transmit
        && core.dupacks > 0
        && core.dupacks < core.dupthresh
        && core.snd_nxt == core.snd_max;
    if eligible {
        core.dupacks.min(2) as u64
    } else {
        0
    }
}

/// What Reno and NewReno send: the sequence window, plus limited transmit
/// while not in fast recovery (whose window inflation takes its place).
pub fn fast_recovery_next_segment(core: &SenderCore, in_recovery: bool) -> Option<Transmission> {
    let extra = if in_recovery { 0 } else { limited_transmit_allowance(core) };
    next_in_window(core, extra, false)
}

/// Sequence-window sending: the segment at `snd_nxt` (skipping SACKed ones if
/// asked) if it lies below `snd_una + min(cwnd + extra, rwnd)`. After a timeout
/// `snd_nxt` is back at `snd_una`, so this is go-back-N.
pub fn next_in_window(core: &SenderCore, extra: u64, skip_sacked: bool) -> Option<Transmission> {
    let mut seg = core.snd_nxt;
    if skip_sacked {
        seg = core.scoreboard.skip_sacked(seg, core.snd_max);
    }
    // cwnd >= 1, so truncation is floor (and avoids a libm call on the hot path).
    let cwnd = core.cc.cwnd as u64;
    let window = (cwnd + extra).min(core.rwnd);
    if seg >= core.snd_una + window || !core.segment_exists(seg) {
        return None;
    }
    let kind = if seg < core.snd_max { TxKind::Retransmit } else { TxKind::New };
    Some(Transmission { seg, kind, limited_transmit: seg >= core.snd_una + cwnd })
}
