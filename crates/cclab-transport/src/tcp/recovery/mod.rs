//! Loss recovery: what a TCP sender transmits next, and how it shapes cwnd
//! between detecting a loss and recovering from it.
//!
//! One implementation per file: [`tahoe`], [`reno`], [`newreno`], [`sack`],
//! [`sack1`], [`decoupled`].
//! Loss recovery reads the sender's state ([`SenderState`]) and answers with
//! what should happen ([`Outcome`]); it never changes the sender itself. The
//! sender, on each ACK, first updates the scoreboard, `snd_una` and
//! congestion control, then calls `on_ack`. When an outcome reports a detected
//! loss, the sender asks congestion control for its response, sets ssthresh,
//! and calls `enter` with the window after the reduction; recovery answers with
//! its starting cwnd and the retransmission. `next_segment` says what the
//! window allows next. On a retransmission timeout the sender applies RFC 6298
//! §5.4-5.6 and RFC 5681 §3.1 (ssthresh and the loss window from congestion
//! control, back-off, go back to `snd_una`) and then calls `on_rto`. A
//! recovery may own timers of its own (`next_timer`/`on_timer`), and may take
//! over retransmission timing entirely (`replaces_rto`).

cclab_wire::algorithms! {
    /// The loss recoveries a TCP flow can name (`recovery = NAME`).
    pub const LOSS_RECOVERIES: RecoveryDescriptor = [tahoe, reno, newreno, sack, sack1, decoupled];
}

use super::sender::SenderState;
use cclab_wire::{Descriptor, MetricDesc, Metrics, ParamError, Params, Time, NEVER};

/// How to build a loss recovery, and whether it reads SACK blocks.
#[derive(Clone, Copy, Debug)]
pub struct RecoveryBuilder {
    pub build: fn(&Params) -> Result<Box<dyn LossRecovery>, ParamError>,
    /// The recovery reads the scoreboard, so the receiver must send SACK
    /// blocks (RFC 2018); without them it would never see a duplicate ACK.
    pub uses_sack: bool,
}

pub type RecoveryDescriptor = Descriptor<RecoveryBuilder>;

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

/// What loss recovery wants done; the sender carries it out.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Outcome {
    /// Restart the retransmission timer (RFC 6298 §5.3) because of this ACK.
    /// From `enter`, restart it although nothing new was acknowledged (ns-2
    /// Sack1 does at fast retransmit).
    pub restart_timer: bool,
    /// A loss was detected: ask congestion control, then call `enter`.
    pub loss_detected: bool,
    /// Recovery ended.
    pub exited: bool,
    /// Recovery's cwnd (not applied when congestion control owns cwnd in recovery).
    pub cwnd: Option<f64>,
    /// Retransmit this segment now, whatever the window allows.
    pub retransmit: Option<u64>,
    /// Resend everything from `snd_una` (go-back-N).
    pub go_back: bool,
    /// Forget all SACK information (RFC 2018 §5, after a timeout).
    pub forget_sacks: bool,
}

impl Outcome {
    /// Outside recovery: restart the timer when new data was acknowledged.
    pub fn open(ack: &AckInfo) -> Self {
        Self { restart_timer: ack.newly_acked > 0, ..Self::default() }
    }

    /// A loss was detected by this ACK.
    pub fn loss(restart_timer: bool) -> Self {
        Self { restart_timer, loss_detected: true, ..Self::default() }
    }
}

pub trait LossRecovery {
    fn name(&self) -> &'static str;
    /// An ACK arrived.
    fn on_ack(&mut self, s: &SenderState, ack: &AckInfo) -> Outcome;
    /// Start recovering from the loss the last outcome reported; `window` is
    /// cwnd after congestion control's response (ssthresh is already set).
    fn enter(&mut self, s: &SenderState, window: f64) -> Outcome;
    /// After the sender applied the common retransmission-timeout rules.
    fn on_rto(&mut self, s: &SenderState) -> Outcome;
    /// Segments this recovery counts as in the network, which congestion
    /// control sees as the flight (`AckSample::in_flight`, a congestion
    /// event's FlightSize): RFC 5681's FlightSize, `snd_max - snd_una`, for a
    /// recovery that sends within `snd_una + cwnd`. One that sends past a
    /// standing hole (Decoupled TCP) counts only what may still be in transit.
    fn in_network(&self, s: &SenderState) -> u64 {
        s.flight_size()
    }

    /// The next segment the window allows, if any.
    fn next_segment(&mut self, s: &SenderState) -> Option<Transmission>;
    /// A transmission left (from `next_segment` or a requested retransmission).
    fn on_transmit(&mut self, _s: &SenderState, _tx: Transmission) {}
    fn in_recovery(&self) -> bool;
    /// True while the window of data in which the last loss was detected is
    /// not yet fully acknowledged. A timeout then does not raise ssthresh.
    fn in_loss_episode(&self, s: &SenderState) -> bool;
    /// Whether this recovery has timers of its own; asked once, so that
    /// recoveries without them cost nothing per packet.
    fn has_timers(&self) -> bool {
        false
    }
    /// When a timer this recovery owns next expires.
    fn next_timer(&self) -> Time {
        NEVER
    }
    /// A timer this recovery owns expired.
    fn on_timer(&mut self, _now: Time, _s: &SenderState) -> Outcome {
        Outcome::default()
    }
    /// This recovery times retransmissions itself: the RFC 6298 timer is not
    /// run. Asked once.
    fn replaces_rto(&self) -> bool {
        false
    }
    /// Publishes the recovery's state for time series under the names its
    /// descriptor lists; the sender adds the `recovery.` prefix. Every
    /// recovery knows whether it is recovering, so the default publishes that
    /// (listed in [`METRICS`]).
    fn metrics(&self, out: &mut Metrics<'_>) {
        out.put("in_recovery", f64::from(u8::from(self.in_recovery())));
    }
}

/// What every loss recovery publishes (the trait's default `metrics`).
pub const METRICS: &[MetricDesc] =
    &[MetricDesc { name: "in_recovery", unit: "bool", meaning: "1 while in loss recovery, else 0" }];

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
pub fn is_duplicate_ack(s: &SenderState, ack: &AckInfo) -> bool {
    ack.newly_acked == 0 && s.snd_max > s.snd_una && !ack.window_changed
}

/// RFC 5681 duplicate-ACK counting for the Reno family.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DupAcks(pub u32);

impl DupAcks {
    /// Outside recovery: new data resets the count; true when this ACK is the
    /// DupThresh-th duplicate.
    pub fn reaches_threshold(&mut self, s: &SenderState, ack: &AckInfo) -> bool {
        if ack.newly_acked > 0 {
            self.0 = 0;
            return false;
        }
        if !is_duplicate_ack(s, ack) {
            return false;
        }
        self.0 += 1;
        self.0 == s.dupthresh
    }

    /// RFC 5681 §3.2 step 4: in fast recovery each further duplicate ACK
    /// inflates cwnd by one segment (it says one segment has left the network).
    pub fn inflate(&mut self, s: &SenderState, ack: &AckInfo) -> Outcome {
        if !is_duplicate_ack(s, ack) {
            return Outcome::default();
        }
        self.0 += 1;
        Outcome { cwnd: Some(s.window.cwnd + 1.0), ..Outcome::default() }
    }
}

/// RFC 3042 limited transmit: on the first and second duplicate ACK one new
/// segment each may be sent beyond cwnd.
pub fn limited_transmit_allowance(s: &SenderState, dupacks: DupAcks) -> u64 {
    let eligible = s.limited_transmit && dupacks.0 > 0 && dupacks.0 < s.dupthresh && s.snd_nxt == s.snd_max;
    if eligible {
        dupacks.0.min(2) as u64
    } else {
        0
    }
}

/// What Reno and NewReno send: the sequence window, plus limited transmit
/// while not in fast recovery (whose window inflation takes its place).
pub fn fast_recovery_next_segment(
    s: &SenderState,
    in_recovery: bool,
    dupacks: DupAcks,
) -> Option<Transmission> {
    let extra = if in_recovery { 0 } else { limited_transmit_allowance(s, dupacks) };
    next_in_window(s, extra, false)
}

/// RFC 5681 §3.2 steps 2-3 for the Reno family: retransmit the first
/// unacknowledged segment and set cwnd to the reduced window plus DupThresh.
pub fn fast_recovery_entry(s: &SenderState, window: f64) -> Outcome {
    Outcome { cwnd: Some(window + s.dupthresh as f64), retransmit: Some(s.snd_una), ..Outcome::default() }
}

/// Sequence-window sending: the segment at `snd_nxt` (skipping SACKed ones if
/// asked) if it lies below `snd_una + min(cwnd + extra, rwnd)` and, if new,
/// below `snd_una + buffer_segments`. After a timeout
/// `snd_nxt` is back at `snd_una`, so this is go-back-N.
pub fn next_in_window(s: &SenderState, extra: u64, skip_sacked: bool) -> Option<Transmission> {
    let mut seg = s.snd_nxt;
    if skip_sacked {
        seg = s.scoreboard.skip_sacked(seg, s.snd_max);
    }
    let cwnd = s.window.whole_segments();
    let window = (cwnd + extra).min(s.rwnd);
    if seg >= s.snd_una + window || !s.segment_exists(seg) {
        return None;
    }
    // The send buffer bounds new data only: what was sent is still in it.
    if seg >= s.snd_max && seg >= s.snd_una.saturating_add(s.buffer_segments) {
        return None;
    }
    let kind = if seg < s.snd_max { TxKind::Retransmit } else { TxKind::New };
    Some(Transmission { seg, kind, limited_transmit: seg >= s.snd_una + cwnd })
}
