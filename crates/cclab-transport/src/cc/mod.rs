//! Congestion control: how large the window may be, and how to respond to congestion.
//!
//! The contract, in the order the sender calls it:
//!
//! 1. [`CongestionControl::on_ack`] sees every ACK first, before loss recovery
//!    acts on it, with an [`AckSample`]: newly acknowledged and SACKed segments,
//!    the RTT sample, the delivery-rate sample and round start, the flight size,
//!    the congestion mark, and whether the sender is in loss recovery. Window
//!    algorithms grow cwnd in [`AckPhase::Open`]; estimators (Westwood, Vegas,
//!    BBR) observe every phase.
//! 2. When loss recovery detects a loss, or the retransmission timer expires,
//!    or an ACK echoes a congestion mark, the sender asks
//!    [`CongestionControl::on_congestion`] with a [`CongestionEvent`] (its kind,
//!    the flight size, and the mark status of the loss where the path reports
//!    marks) and applies the [`Response`]: a reduction (new ssthresh and the
//!    window after the reduction) or no reduction at all. With ECN, marks and
//!    fast retransmits lead to at most one reduction per window of data (RFC
//!    3168 §6.1.2): within a window already reduced for, a mark is not
//!    reported and a loss is retransmitted without asking.
//! 3. During recovery, loss recovery shapes cwnd by its own rules (Reno's
//!    inflation, NewReno's partial ACKs, RFC 6675's pipe) starting from the
//!    window of the response, unless the algorithm declares that it owns cwnd
//!    in recovery ([`CongestionControl::owns_cwnd_in_recovery`], as BBR does):
//!    then recovery's cwnd changes are not applied and `on_ack` keeps setting it.
//! 4. [`CongestionControl::on_recovery_exit`] when recovery ends.
//!
//! Windows are in segments as `f64`, the unit the algorithm papers use (RFC
//! 5681 writes the same rules in bytes with SMSS = 1). An algorithm that
//! computes its own sending rate returns it from
//! [`CongestionControl::pacing_rate`], which then overrides the flow's pacing.
//! Fields may be added to [`AckSample`] and [`CongestionEvent`] for later
//! algorithms without changing the trait.

cclab_wire::algorithms! {
    /// The congestion controls a TCP flow can name (`cc = NAME`), in the
    /// order `cclab algorithms` lists them.
    pub const CONGESTION_CONTROLS: CcDescriptor =
        [reno, highspeed, scalable, bic, cubic, westwood, westwood_plus, decoupled, jersey, bbr, vegas, dctcp, copa, prague, bbr3];
}
#[cfg(test)]
mod test_support;

use crate::tcp::rate::RateSample;
use cclab_wire::{Descriptor, Metrics, ParamError, Params, Time};

/// How to build a congestion control, and whether it paces itself.
#[derive(Clone, Copy, Debug)]
pub struct CcBuilder {
    pub build: fn(&Params) -> Result<Box<dyn CongestionControl>, ParamError>,
    /// The algorithm computes its own sending rate (BBR), so a flow's `pacing`
    /// cannot be set: it would be overridden.
    pub paces_itself: bool,
    /// What the algorithm needs of ECN; it decides a flow's default `ecn`.
    pub ecn: EcnUse,
}

/// What a congestion control needs of ECN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnUse {
    /// It works without ECN and responds to marks as to a loss (RFC 3168
    /// §6.1.2) when the flow turns ECN on.
    Optional,
    /// Its response is to the extent of marking (DCTCP): a flow must have
    /// ECN, AccECN unless it asks for classic feedback; data is ECT(0).
    Required,
    /// An L4S congestion control (RFC 9331 §4): as `Required`, and its data
    /// carries the L4S identifier ECT(1).
    L4s,
}

pub type CcDescriptor = Descriptor<CcBuilder>;

/// The window variables congestion control and loss recovery share.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    /// Congestion window, segments.
    pub cwnd: f64,
    /// Slow-start threshold, segments.
    pub ssthresh: f64,
}

impl Window {
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// The whole segments cwnd allows, ns-2's `int(cwnd_)` (cwnd is at least
    /// 1, so truncation is floor). Converted through `i64`, about eight
    /// instructions with the clamp at zero: the conversion to `u64` takes
    /// fourteen, twice on every ACK, and no window comes near 2^63 segments.
    #[inline]
    pub fn whole_segments(&self) -> u64 {
        (self.cwnd as i64).max(0) as u64
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckPhase {
    /// Normal operation: the window may grow.
    Open,
    /// The sender was in loss recovery when this ACK arrived.
    Recovery,
}

/// What one ACK told the sender.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct AckSample {
    pub now: Time,
    /// Segments newly acknowledged cumulatively.
    pub acked: u64,
    /// Segments newly SACKed whose latest transmission had not been
    /// delivered before (a SACK re-reported after the scoreboard was cleared
    /// on a timeout is not counted again).
    pub sacked: u64,
    /// Segments this ACK delivered for the first time, SACKed or cumulatively
    /// acknowledged, each counted once in the connection's life (Linux
    /// `rs->acked_sacked`): unlike `acked + sacked`, a cumulative ACK over
    /// segments SACKed before does not count them again.
    pub delivered: u64,
    /// RTT sample taken from this ACK, if any.
    pub rtt: Option<Time>,
    pub srtt: Time,
    pub min_rtt: Time,
    /// Segments outstanding after this ACK (snd_max - snd_una).
    pub in_flight: u64,
    /// Of those, the segments neither SACKed nor deemed lost by RFC 6675
    /// IsLost (the pipe without retransmissions; Linux's packets_in_flight
    /// approximately). Computed only for an algorithm that owns cwnd in
    /// recovery (BBR), since it costs a scoreboard walk; `None` otherwise.
    pub pipe: Option<u64>,
    pub phase: AckPhase,
    /// Segments the sender newly marked lost (Linux `rs->losses`, the draft's
    /// `RS.newly_lost`): those RFC 6675 IsLost deems lost on this ACK's
    /// scoreboard, and the segment retransmitted at a fast retransmit, a
    /// partial ACK or a timeout (everything outstanding then) since the last
    /// ACK. Each segment counts once: a lost retransmission is not counted again.
    /// Counted, as `rate`, only for an algorithm whose `uses_delivery_rate` is
    /// true; 0 otherwise.
    pub newly_lost: u64,
    /// Segments in flight as Linux's `tcp_packets_in_flight` counts them:
    /// outstanding, neither SACKed nor marked lost (see `newly_lost`; a
    /// timeout marks everything outstanding), plus retransmissions sent and
    /// not yet delivered. Counted, as `rate`, only for an algorithm whose
    /// `uses_delivery_rate` is true; `None` otherwise.
    pub packets_in_flight: Option<u64>,
    /// The ACK reports a new congestion mark: RFC 3168's ECN-Echo, or with
    /// AccECN a rise of the receiver's CE byte count.
    pub ece: bool,
    /// With AccECN, the payload bytes the receiver newly reports as having
    /// arrived CE-marked (the rise of its ECEB count); `None` without AccECN,
    /// when a sender knows only whether a window saw a mark.
    pub ce_bytes: Option<u64>,
    /// The oldest unacknowledged segment after this ACK, and the next new
    /// segment (SND.UNA and SND.NXT in segments): an algorithm that
    /// measures per window of data (DCTCP's observation window) compares them.
    pub snd_una: u64,
    pub snd_max: u64,
    /// The ACK repeats the cumulative acknowledgment (a duplicate ACK).
    pub duplicate: bool,
    pub mss: u32,
    /// Delivery rate measured by this ACK (draft-cheng-iccrg-delivery-rate-estimation).
    /// Measured only for an algorithm whose `uses_delivery_rate` is true; `None` otherwise.
    pub rate: Option<RateSample>,
    /// This ACK starts a new packet-timed round trip. Counted, as `rate`, only
    /// for an algorithm whose `uses_delivery_rate` is true; false otherwise.
    pub round_start: bool,
    /// The window was in use, so it may grow ([`CwndGrowth`]); always true
    /// for a flow whose window grows regardless.
    pub cwnd_limited: bool,
}

impl AckSample {
    /// The window may grow on this ACK: it acknowledges new data outside loss
    /// recovery and echoes no congestion mark (RFC 5681 §3.1, RFC 3168 §6.1.2).
    pub fn opens_window(&self) -> bool {
        self.phase == AckPhase::Open && !self.ece && self.acked > 0 && self.cwnd_limited
    }

    pub fn new(now: Time, mss: u32) -> Self {
        Self {
            now,
            acked: 0,
            sacked: 0,
            delivered: 0,
            rtt: None,
            srtt: 0,
            min_rtt: 0,
            in_flight: 0,
            pipe: None,
            phase: AckPhase::Open,
            newly_lost: 0,
            packets_in_flight: None,
            ece: false,
            ce_bytes: None,
            snd_una: 0,
            snd_max: 0,
            duplicate: false,
            mss,
            rate: None,
            round_start: false,
            cwnd_limited: true,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// A loss detected by duplicate ACKs or SACK (fast retransmit).
    FastRetransmit,
    /// The retransmission timer expired.
    Timeout,
    /// An ACK echoed a congestion mark (ECN-Echo, a congestion warning) without a loss.
    Mark,
}

/// What the path said about the congestion behind a loss.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarkStatus {
    /// The path does not report marks (ECN not in use), so a loss says nothing either way.
    Unknown,
    /// The ACK that revealed the loss echoed a mark: the queue was congested.
    Marked,
    /// Marks are reported and this one carried none: likely a loss not caused by congestion.
    Unmarked,
}

#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct CongestionEvent {
    pub now: Time,
    pub kind: EventKind,
    pub mark: MarkStatus,
    /// FlightSize in segments when the event happened (limited-transmit segments excluded, RFC 5681 §3.2).
    pub flight: u64,
    /// The window a multiplicative decrease applies to, in segments, as the
    /// flow's [`SsthreshBasis`] chooses: FlightSize (the default), the pipe, or cwnd.
    pub basis: f64,
    pub srtt: Time,
    pub min_rtt: Time,
    pub mss: u32,
}

impl CongestionEvent {
    /// The basis, but not above cwnd: for the algorithms that keep more than
    /// half of it (HighSpeed, Scalable, BI-TCP, CUBIC). After a recovery,
    /// FlightSize still counts SACKed data above the holes and can exceed cwnd
    /// by more than 1 / (1 - b); a decrease to (1 - b) x FlightSize would then
    /// raise the window at every loss (seen with HighSpeed at 1 Gbit/s and
    /// loss 1e-4: cwnd climbed to 600 000 segments). Reno keeps RFC 5681's
    /// literal FlightSize, which would need more than twice cwnd outstanding.
    pub fn basis_within_cwnd(&self, w: &Window) -> f64 {
        self.basis.min(w.cwnd)
    }

    pub fn new(now: Time, kind: EventKind, flight: u64, mss: u32) -> Self {
        Self { now, kind, mark: MarkStatus::Unknown, flight, basis: flight as f64, srtt: 0, min_rtt: 0, mss }
    }
}

/// Which window a multiplicative decrease is taken from (a flow's `ssthresh_basis`).
///
/// Implementations disagree, and the disagreement alone changes how two flows
/// split a link: RFC 5681 eq. (4) halves FlightSize, ns-3 (`TcpSocketBase`
/// calls `GetSsThresh(tcb, BytesInFlight())`) halves the RFC 6675 pipe, which
/// leaves out SACKed segments and those deemed lost, and Linux and ns-2 reduce
/// the congestion window (`tcp_reno_ssthresh` and the high-speed modules read
/// `snd_cwnd`; ns-2's `slowdown()` reads `windowd()`, cwnd capped by the
/// receiver window). With SACK, many segments are SACKed by the time a loss
/// is detected, so the pipe is the smallest of the three; cwnd is the largest
/// when the sender is window-limited.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SsthreshBasis {
    /// RFC 5681 §3.2: outstanding data, `snd_max - snd_una`, without
    /// segments sent by limited transmit.
    #[default]
    FlightSize,
    /// ns-3: FlightSize less SACKed segments and those RFC 6675 IsLost deems
    /// lost. Exactly RFC 6675's SetPipe when a fast retransmit is detected (no
    /// retransmission of an earlier episode is then outstanding); at a timeout
    /// in recovery the retransmissions still in flight are not counted.
    Pipe,
    /// Linux and ns-2: the congestion window, capped by the receiver window
    /// (ns-2's `windowd()`).
    Cwnd,
}

impl SsthreshBasis {
    pub const NAMES: [&'static str; 3] = ["flight", "pipe", "cwnd"];

    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "flight" => Some(Self::FlightSize),
            "pipe" => Some(Self::Pipe),
            "cwnd" => Some(Self::Cwnd),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::FlightSize => "flight",
            Self::Pipe => "pipe",
            Self::Cwnd => "cwnd",
        }
    }
}

/// When an ACK may grow the window (a flow's `cwnd_growth`).
///
/// RFC 5681 grows cwnd on every ACK of new data, and ns-2 and ns-3 do so
/// whether or not the window was in use. A sender held back by the receiver's
/// window, its send buffer or its application then grows cwnd without bound,
/// and anything sized from cwnd (ATBT's and RTBA's 2 x cwnd send buffer,
/// seed paper 004) follows it. Linux grows cwnd only while it is used
/// (`tcp_is_cwnd_limited`, include/net/tcp.h; `tcp_cwnd_validate`,
/// net/ipv4/tcp_output.c), in the spirit of RFC 7661 §4.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CwndGrowth {
    /// On every ACK of new data outside recovery (RFC 5681, ns-2, ns-3).
    #[default]
    Always,
    /// Only while the window is in use, as Linux judges it: the window was
    /// full (in-network data at least cwnd) at some send since the data then
    /// outstanding was sent, or, in slow start, cwnd is below twice the most
    /// data outstanding over that time.
    CwndLimited,
}

impl CwndGrowth {
    pub const NAMES: [&'static str; 2] = ["always", "cwnd_limited"];

    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "always" => Some(Self::Always),
            "cwnd_limited" => Some(Self::CwndLimited),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Always => "always",
            Self::CwndLimited => "cwnd_limited",
        }
    }
}

/// How congestion control answers a congestion event.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Response {
    /// Set ssthresh, and make `cwnd` the window after the reduction: loss
    /// recovery starts from it (Reno: cwnd + DupThresh while inflating,
    /// RFC 6675: cwnd), a timeout sets it as the loss window, a mark sets it.
    Reduce { ssthresh: f64, cwnd: f64 },
    /// Keep ssthresh and cwnd (a loss the algorithm does not blame on congestion).
    /// Recovery still retransmits, starting from the current cwnd.
    NoReduction,
}

pub trait CongestionControl {
    fn name(&self) -> &'static str;

    /// Every ACK, in every phase, before loss recovery sees it.
    fn on_ack(&mut self, w: &mut Window, ack: &AckSample);

    /// A congestion event: what to do about the window.
    fn on_congestion(&mut self, w: &Window, event: &CongestionEvent) -> Response;

    /// True if this algorithm sets cwnd itself during loss recovery (BBR);
    /// otherwise recovery's rules apply. Asked once.
    fn owns_cwnd_in_recovery(&self) -> bool {
        false
    }

    /// Whether the connection's receiver sends SACK blocks (the flow's loss
    /// recovery reads them): told once, by the sender as it is built. BBRv3
    /// reads losses differently without them (draft-ietf-ccwg-bbr §5.5.10.2).
    fn set_selective_acks(&mut self, _negotiated: bool) {}

    /// True if a loss detected within a window of data already reduced for
    /// a congestion mark is still answered (Prague: Linux enters loss
    /// recovery from its CWR state and halves the window); otherwise the
    /// loss is only retransmitted (RFC 3168 §6.1.2). Asked once.
    fn answers_loss_after_mark(&self) -> bool {
        false
    }

    /// True if this algorithm reads [`AckSample::rate`] or
    /// [`AckSample::round_start`] (BBR, Vegas); otherwise the sender does not
    /// measure them (1.6 % of the steady state's instructions in the pacing
    /// study's Table 2 run at 2.5 Gbit/s). Asked once.
    fn uses_delivery_rate(&self) -> bool {
        false
    }

    /// Seeds the algorithm's random draws (BBR's first PROBE_BW phase). An
    /// algorithm has no randomness of its own: the driver calls this once,
    /// right after building it, with a seed from the run's random stream
    /// named after the connection, as it seeds the sender's send overhead.
    fn seed(&mut self, _seed: u64) {}

    /// Loss recovery has ended (after it set cwnd by its own rules).
    fn on_recovery_exit(&mut self, _w: &mut Window, _now: Time) {}

    /// Everything outstanding at the last retransmission timeout is now
    /// acknowledged (Linux leaves its Loss state), told before the `on_ack`
    /// of the ACK that did it; only for a loss recovery that keeps that point
    /// (its `in_loss_episode` after a timeout).
    fn on_timeout_recovered(&mut self, _w: &mut Window, _now: Time) {}

    /// A segment was put on the wire.
    fn on_send(&mut self, _now: Time, _retransmission: bool, _in_flight: u64) {}

    /// The algorithm's own sending rate in bytes per second, if it computes one;
    /// it overrides the flow's pacing.
    fn pacing_rate(&self, _w: &Window, _srtt: Time) -> Option<f64> {
        None
    }

    /// Publishes the algorithm's own state (a bandwidth estimate, a mode) for
    /// time series, under the names its descriptor's `metrics` lists; the
    /// sender adds the `cc.` prefix. Called only at sample times.
    fn metrics(&self, _out: &mut Metrics<'_>) {}
}

#[cfg(test)]
mod window_tests {
    use super::Window;

    #[test]
    fn whole_segments_truncate_the_window_and_never_wrap() {
        let segments = |cwnd: f64| Window { cwnd, ssthresh: 0.0 }.whole_segments();
        assert_eq!(segments(1.0), 1);
        assert_eq!(segments(5.999), 5);
        assert_eq!(segments(83_000.5), 83_000);
        assert_eq!(segments(1e30), i64::MAX as u64);
        assert_eq!(segments(-3.0), 0);
        assert_eq!(segments(f64::NAN), 0);
    }
}
