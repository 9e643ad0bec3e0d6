//! Congestion control: how large the window may be.
//!
//! The sender calls a [`CongestionControl`] on every ACK (`on_ack`, with an
//! [`AckSample`] carrying what estimators need: newly acknowledged and SACKed
//! segments, the RTT sample, flight size, ECN echo, whether the sender is in loss
//! recovery), once per loss event (`ssthresh_on_loss`), when loss recovery ends
//! (`on_recovery_exit`), and on each transmission (`on_send`). It may also pace
//! (`pacing_rate`). Windows are in segments as `f64`, the unit the algorithm papers
//! use (RFC 5681 writes the same rules in bytes with SMSS = 1).
//!
//! Loss recovery owns cwnd while recovery lasts (Reno inflation, NewReno partial
//! ACKs, the RFC 6675 pipe); congestion control owns it otherwise. Fields may be
//! added to [`AckSample`] and [`LossEvent`] for later algorithms without changing
//! the trait.

pub mod reno;

use cclab_core::Time;

/// The window variables shared by congestion control and loss recovery.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CcState {
    /// Congestion window, segments.
    pub cwnd: f64,
    /// Slow-start threshold, segments.
    pub ssthresh: f64,
}

impl CcState {
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckPhase {
    /// Normal operation: the window may grow.
    Open,
    /// In loss recovery, or the ACK that ends it: loss recovery owns cwnd.
    Recovery,
}

/// What one ACK told the sender.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct AckSample {
    pub now: Time,
    /// Segments newly acknowledged cumulatively.
    pub acked: u64,
    /// Segments newly SACKed.
    pub sacked: u64,
    /// RTT sample taken from this ACK, if any.
    pub rtt: Option<Time>,
    pub srtt: Time,
    pub min_rtt: Time,
    /// Segments outstanding after this ACK (snd_max - snd_una).
    pub in_flight: u64,
    pub phase: AckPhase,
    /// The receiver echoed a congestion mark.
    pub ece: bool,
    /// The ACK repeats the cumulative acknowledgment (a duplicate ACK).
    pub duplicate: bool,
    pub mss: u32,
}

impl AckSample {
    pub fn new(now: Time, mss: u32) -> Self {
        Self {
            now,
            acked: 0,
            sacked: 0,
            rtt: None,
            srtt: 0,
            min_rtt: 0,
            in_flight: 0,
            phase: AckPhase::Open,
            ece: false,
            duplicate: false,
            mss,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossKind {
    /// Detected by duplicate ACKs / SACK (fast retransmit).
    FastRetransmit,
    /// Retransmission timeout.
    Timeout,
    /// A congestion mark without loss.
    Ecn,
}

#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct LossEvent {
    pub now: Time,
    pub kind: LossKind,
    /// FlightSize in segments when the loss was detected.
    pub flight: u64,
    pub srtt: Time,
    pub min_rtt: Time,
    pub mss: u32,
}

impl LossEvent {
    pub fn new(now: Time, kind: LossKind, flight: u64, mss: u32) -> Self {
        Self { now, kind, flight, srtt: 0, min_rtt: 0, mss }
    }
}

pub trait CongestionControl {
    fn name(&self) -> &'static str;

    /// Every ACK, in every phase. Grows the window in `AckPhase::Open`;
    /// estimators also observe duplicate ACKs and ACKs during recovery.
    fn on_ack(&mut self, state: &mut CcState, ack: &AckSample);

    /// The new ssthresh (segments) after a loss event. Loss recovery then sets
    /// cwnd by its own rules (1 for Tahoe and RTO, ssthresh + 3 for Reno, ...).
    fn ssthresh_on_loss(&mut self, state: &CcState, loss: &LossEvent) -> f64;

    /// A retransmission timeout fired (after ssthresh and cwnd were set), for
    /// algorithms that reset their state on timeouts.
    fn on_timeout(&mut self, _state: &mut CcState, _now: Time) {}

    /// Loss recovery has ended (after it set cwnd by its own rules).
    fn on_recovery_exit(&mut self, _state: &mut CcState, _now: Time) {}

    /// A segment was put on the wire.
    fn on_send(&mut self, _now: Time, _retransmission: bool, _in_flight: u64) {}

    /// Pacing rate in bytes per second, if this algorithm paces.
    fn pacing_rate(&self, _state: &CcState, _srtt: Time) -> Option<f64> {
        None
    }
}
