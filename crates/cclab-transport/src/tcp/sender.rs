//! The TCP data sender: sequence state, RTT and timers, and the glue between
//! a congestion control, a loss recovery and a pacer.
//!
//! On each ACK the sender updates the scoreboard, `snd_una` and the RTT
//! estimator, lets congestion control see the ACK, then lets loss recovery act
//! on it, and carries out recovery's [`Outcome`] (see [`crate::cc`] for the
//! order and [`crate::tcp::recovery`] for the recovery side of the contract).
//!
//! Timer management follows RFC 6298 §5: (5.1) start the timer when sending
//! data if it is not running; (5.2) stop it when everything is acknowledged;
//! (5.3) restart it when an ACK acknowledges new data (loss recovery may veto,
//! e.g. NewReno's Impatient rule); (5.4-5.6) on expiry retransmit the first
//! unacknowledged segment, back off, restart. On expiry RFC 5681 §3.1 also sets
//! ssthresh and the loss window (from congestion control's response to the
//! timeout), and the sender goes back to `snd_una` (go-back-N, as BSD and ns-2
//! do). Following RFC 5681 §3.1, ssthresh is held constant when the segment
//! that timed out had already been retransmitted by the timer. A timeout while
//! the window in which a loss was already detected is still unacknowledged
//! (during fast recovery) lowers ssthresh a second time (RFC 5681 §4.3) but
//! never raises it: recomputing it from FlightSize alone would count the
//! segments that fast recovery's window inflation sent while the receiver was
//! holding them, and could put ssthresh far above the window at which the loss
//! happened. A loss recovery may replace this timer with its own.
//!
//! With ECN (`ecn`), an ACK echoing a congestion mark outside recovery is a
//! congestion event, and a loss carries its mark status (marked if the ACK that
//! revealed it echoed a mark) to congestion control. RFC 3168 §6.1.2: the
//! window is reduced only once for the marks and losses of one window of data,
//! so after any reduction (mark, fast retransmit or timeout) a mark is not
//! answered, and a loss is retransmitted without a new reduction, until an ACK
//! covers more than the data outstanding at that reduction (a mark echoed by
//! the ACK that just completes the window came from a segment of it).
//!
//! Stale ACKs (below `snd_una`) are ignored. Segments sent by limited transmit
//! (RFC 3042) do not count in the FlightSize that sets ssthresh at a fast
//! retransmit (RFC 5681 §3.2 step 2).
//!
//! RTT samples come from the timestamp echo of every ACK that acknowledges new
//! data (RFC 7323 §4); without timestamps, from the send time of the highest
//! newly acknowledged segment, and only if none of the acknowledged segments was
//! retransmitted (Karn's algorithm).

use super::cwnd_usage::CwndUsage;
use super::rate::{DeliveryRate, RateSample};
use super::recovery::sack::Sack;
use super::recovery::{AckInfo, LossRecovery, Outcome, Recover, Transmission};
use super::rtt::RttEstimator;
use super::scoreboard::Scoreboard;
use super::timers::{Timer, Timers};
use super::{App, EcnFeedback, TcpConfig};
use crate::buffer::{BufferInputs, SendBufferPolicy};
use crate::cc::{
    AckPhase, AckSample, CongestionControl, CongestionEvent, CwndGrowth, EventKind, MarkStatus, Response,
    SsthreshBasis, Window,
};
use crate::pacing::{gap_at_rate, Departure, Pacer};
use cclab_wire::random::SplitMix64;
use cclab_wire::time::to_secs_f64;
use cclab_wire::{
    Control, ControlRefused, Counters, Ect, Endpoint, Header, Measure, MetricDesc, Metrics, Outbox, Packet,
    SendState, TcpHeader, TcpKind, Time, NEVER,
};

// The sender's own metrics, each named once: what it publishes, what
// `cclab algorithms` lists and the columns of the simulator's wide
// time-series view all refer to these.
pub const CWND: MetricDesc = MetricDesc { name: "cwnd", unit: "segments", meaning: "congestion window" };
pub const SSTHRESH: MetricDesc =
    MetricDesc { name: "ssthresh", unit: "segments", meaning: "slow-start threshold" };
pub const SRTT: MetricDesc =
    MetricDesc { name: "srtt", unit: "s", meaning: "smoothed RTT (0 before the first sample)" };
pub const RTT: MetricDesc =
    MetricDesc { name: "rtt", unit: "s", meaning: "latest RTT sample (0 before the first)" };
pub const SEQ_SENT: MetricDesc =
    MetricDesc { name: "seq_sent", unit: "bytes", meaning: "highest byte sent so far (exclusive)" };
pub const SEQ_ACKED: MetricDesc =
    MetricDesc { name: "seq_acked", unit: "bytes", meaning: "bytes cumulatively acknowledged" };
pub const IN_FLIGHT: MetricDesc = MetricDesc {
    name: "in_flight",
    unit: "segments",
    meaning: "FlightSize, snd_max - snd_una: segments sent and not cumulatively acknowledged, SACKed and lost ones included (SACK recovery's sending limit is recovery.pipe)",
};

/// What the sender itself publishes, in publishing order; its congestion
/// control, loss recovery and pacer add theirs under `cc.`, `recovery.` and
/// `pacing.` (their descriptors' `metrics`).
pub const METRICS: &[MetricDesc] = &[CWND, SSTHRESH, SRTT, RTT, SEQ_SENT, SEQ_ACKED, IN_FLIGHT];

/// What a sender with a send buffer publishes besides [`METRICS`]; its policy
/// adds its own under `send_buffer.`.
pub const SEND_BUFFER_METRICS: &[MetricDesc] = &[
    MetricDesc {
        name: "send_buffer",
        unit: "bytes",
        meaning: "send buffer: the policy's desire, at most the host's limit",
    },
    MetricDesc {
        name: "send_buffer_used",
        unit: "bytes",
        meaning: "bytes in the send buffer: unacknowledged data plus data written and not yet sent",
    },
];

/// What the sender knows, as loss recovery reads it. Segment numbers count
/// from 0; segment `s` carries bytes `[s*mss, s*mss + len(s))`.
#[derive(Debug)]
pub struct SenderState {
    pub mss: u32,
    /// Segments the application has given to send (`None`: unlimited) and the
    /// size of the last one.
    pub total_segments: Option<u64>,
    pub last_segment_len: u32,
    /// The application may still write: the stream's end is not known yet.
    pub app_writing: bool,
    /// First unacknowledged segment (HighACK + 1).
    pub snd_una: u64,
    /// Next segment the sequence window sends.
    pub snd_nxt: u64,
    /// One past the highest segment ever sent (HighData + 1).
    pub snd_max: u64,
    pub window: Window,
    /// Receiver window in segments.
    pub rwnd: u64,
    /// Whole segments the send buffer holds (`u64::MAX` without a send-buffer
    /// policy): new data goes only below `snd_una + buffer_segments`.
    pub buffer_segments: u64,
    pub dupthresh: u32,
    pub limited_transmit: bool,
    pub scoreboard: Scoreboard,
    pub rtt: RttEstimator,
    /// New segments sent by limited transmit since the last cumulative ACK.
    pub limited_transmit_sent: u64,
}

impl SenderState {
    pub fn flight_size(&self) -> u64 {
        self.snd_max - self.snd_una
    }

    /// Outstanding segments neither SACKed nor deemed lost by RFC 6675 IsLost:
    /// SetPipe without the retransmissions it adds back.
    pub fn pipe_without_retransmissions(&self) -> u64 {
        let not_lost_from = Sack::lost_bound(self).clamp(self.snd_una, self.snd_max);
        (self.snd_max - not_lost_from) - self.scoreboard.sacked_in(not_lost_from, self.snd_max)
    }

    pub fn segment_exists(&self, seg: u64) -> bool {
        self.total_segments.is_none_or(|t| seg < t)
    }

    pub fn has_unsent_data(&self) -> bool {
        self.segment_exists(self.snd_max)
    }

    /// The next new segment (`snd_max`) may go as far as the receiver's window
    /// and the send buffer are concerned: the application has written it and
    /// both have room for it. Congestion control's window is the recovery's to apply.
    pub fn new_data_allowed(&self) -> bool {
        self.has_unsent_data() && self.snd_max < self.snd_una + self.rwnd.min(self.buffer_segments)
    }

    pub fn segment_len(&self, seg: u64) -> u32 {
        segment_len(seg, self.mss, self.total_segments, self.last_segment_len)
    }

    /// The event congestion control is asked about.
    /// `in_network` is what loss recovery counts as in the network
    /// ([`LossRecovery::in_network`]): RFC 5681's FlightSize for every
    /// recovery that sends within `snd_una + cwnd`.
    pub fn congestion_event(
        &self,
        now: Time,
        kind: EventKind,
        mark: MarkStatus,
        basis: SsthreshBasis,
        in_network: u64,
    ) -> CongestionEvent {
        let flight = match kind {
            EventKind::FastRetransmit => in_network.saturating_sub(self.limited_transmit_sent),
            EventKind::Timeout | EventKind::Mark => in_network,
        };
        let mut event = CongestionEvent::new(now, kind, flight, self.mss);
        event.basis = match basis {
            SsthreshBasis::FlightSize => flight as f64,
            SsthreshBasis::Pipe => self.pipe_without_retransmissions() as f64,
            SsthreshBasis::Cwnd => self.window.cwnd.min(self.rwnd as f64),
        };
        event.mark = mark;
        event.srtt = self.rtt.srtt();
        event.min_rtt = self.rtt.min_rtt();
        event
    }

    /// The segment boundary at or above a byte offset.
    fn segment_ceil(&self, bytes: u64) -> u64 {
        bytes.div_ceil(self.mss as u64)
    }
}

/// Segments of a stream of `bytes`, and the length of the last.
fn stream_of(bytes: u64, mss: u32) -> (Option<u64>, u32) {
    let segs = bytes.div_ceil(mss as u64);
    let last = bytes - segs.saturating_sub(1) * mss as u64;
    (Some(segs), last as u32)
}

/// Bytes of segment `seg` of a stream of `total` segments (all full but the last).
fn segment_len(seg: u64, mss: u32, total: Option<u64>, last: u32) -> u32 {
    match total {
        Some(t) if seg + 1 == t => last,
        _ => mss,
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct SenderCounters {
    packets_sent: u64,
    bytes_sent: u64,
    packets_received: u64,
    payload_bytes_sent: u64,
    retransmits: u64,
    timeouts: u64,
    recoveries: u64,
    rtt_sum: Time,
    rtt_samples: u64,
    rtt_min: Option<Time>,
}

/// One transmission as a test sees it: when, and the srtt and cwnd of the moment.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TransmitRecord {
    pub at: Time,
    pub seg: u64,
    pub srtt: Time,
    pub cwnd: f64,
    pub wire_bytes: u32,
    /// `snd_una + buffer_segments` before the transmission: new data goes only below it.
    pub buffer_end: u64,
}

/// The segments marked lost so far, for the delivery-rate sampler's `lost`
/// count (Linux `tp->lost`): a segment is marked once, when RFC 6675 IsLost
/// first deems it lost, when a fast retransmit or partial ACK resends it, or
/// when a timeout finds it outstanding. Marks go in sequence order, so one
/// bound says what is marked.
#[derive(Clone, Copy, Debug, Default)]
struct LossMarks {
    /// Every segment below this that was not SACKed when its mark came is marked.
    to: u64,
    /// Marked since the last ACK sample took them (`AckSample::newly_lost`).
    unreported: u64,
}

impl LossMarks {
    /// Marks the segments below `end` not SACKed and not marked before.
    fn below(&mut self, s: &SenderState, rate: &mut DeliveryRate, end: u64) {
        if !rate.sampling() {
            return;
        }
        let from = self.to.max(s.snd_una);
        let end = end.min(s.snd_max);
        if end <= from {
            return;
        }
        let lost = (end - from) - s.scoreboard.sacked_in(from, end);
        self.to = end;
        self.unreported += lost;
        rate.on_lost(lost);
    }

    /// Linux's `tcp_packets_in_flight`: outstanding segments neither SACKed
    /// nor marked lost, plus retransmissions not yet delivered (kept while the
    /// rate is sampled).
    fn packets_in_flight(&self, s: &SenderState, rate: &DeliveryRate) -> u64 {
        let from = self.to.clamp(s.snd_una, s.snd_max);
        (s.snd_max - from) - s.scoreboard.sacked_in(from, s.snd_max) + rate.retrans_out()
    }

    /// Loss recovery resends `seg` outright: the lowest segment not yet
    /// marked is lost (a retransmission further up, which marks cannot reach
    /// in order, is not counted).
    fn resent(&mut self, s: &SenderState, rate: &mut DeliveryRate, seg: u64) {
        if seg == self.to.max(s.snd_una) {
            self.below(s, rate, seg + 1);
        }
    }
}

/// A send buffer sized by a policy, within the limit the host set.
struct SendBuffer {
    policy: Box<dyn SendBufferPolicy>,
    /// The host's limit (`u64::MAX` until a host with a cap sets one).
    limit: u64,
    desired: u64,
}

impl SendBuffer {
    /// What the sender may hold: the desire, at most the limit.
    fn bytes(&self) -> u64 {
        self.desired.min(self.limit)
    }
}

/// What an ACK reports of congestion marks: whether any new one was seen,
/// and with AccECN how many payload bytes newly arrived marked (`last` is the
/// count the previous ACK carried).
fn echoed_marks(ecn: EcnFeedback, last: &mut u32, h: &TcpHeader) -> (bool, Option<u64>) {
    match ecn {
        EcnFeedback::Off => (false, None),
        EcnFeedback::Classic => (h.ece, None),
        EcnFeedback::Accurate => {
            // A count below the last one (an ACK overtaken by a later one)
            // reads as a wrapped, huge increase: it says nothing new.
            let increase = h.ce_bytes.wrapping_sub(*last);
            if increase > u32::MAX / 2 {
                return (false, Some(0));
            }
            *last = h.ce_bytes;
            (increase > 0, Some(u64::from(increase)))
        }
    }
}

pub struct TcpSender {
    state: SenderState,
    cc: Box<dyn CongestionControl>,
    recovery: Box<dyn LossRecovery>,
    pacer: Option<Box<dyn Pacer>>,
    /// Fixed properties of the algorithms, asked once.
    cc_owns_cwnd: bool,
    cc_answers_loss_after_mark: bool,
    recovery_timers: bool,
    rfc6298_timer: bool,
    header_bytes: u32,
    timestamps: bool,
    sack: bool,
    ecn: EcnFeedback,
    /// The codepoint data segments carry: `ect` of the config with ECN, Not-ECT without.
    ect: Ect,
    /// The last AccECN CE byte count an ACK carried.
    ce_bytes_echoed: u32,
    ssthresh_basis: SsthreshBasis,
    /// Whether the window is in use, kept only if it grows only then.
    cwnd_usage: Option<CwndUsage>,
    start: Time,
    started: bool,
    timers: Timers,
    /// The pacer or congestion control's rate holds the next packet until then.
    next_send_at: Time,
    /// ns-2's `overhead_` (see [`TcpConfig::send_overhead`]): its maximum and the draws.
    send_overhead: Option<(Time, SplitMix64)>,
    /// When the data the window let out may leave, once the overhead was drawn
    /// for it; cleared when the window has nothing more to send.
    overhead_release: Option<Time>,
    /// A segment to retransmit now, whatever the window.
    force_retransmit: Option<u64>,
    /// The segment the last timeout retransmitted.
    timer_retransmitted: Option<u64>,
    /// Data outstanding at the last timeout is not all acknowledged yet.
    after_timeout: bool,
    /// RFC 3168 §6.1.2: the end of the window of data of the last reduction; with
    /// ECN, no new reduction for a mark or a loss until an ACK covers more.
    ecn_recover: Recover,
    rate: DeliveryRate,
    loss_marks: LossMarks,
    send_buffer: Option<SendBuffer>,
    counters: SenderCounters,
    /// Bytes the application wrote (`App::Stream`).
    written: u64,
    finished_at: Option<Time>,
    transmit_log: Option<Vec<TransmitRecord>>,
    rate_log: Option<Vec<(Time, RateSample)>>,
}

impl TcpSender {
    pub fn new(
        cfg: &TcpConfig,
        mut cc: Box<dyn CongestionControl>,
        recovery: Box<dyn LossRecovery>,
        pacer: Option<Box<dyn Pacer>>,
    ) -> Self {
        cc.set_selective_acks(cfg.sack);
        let mss = cfg.mss.max(1);
        let (total_segments, last_segment_len) = match cfg.app {
            App::Bulk => (None, mss),
            App::Transfer { bytes } => stream_of(bytes, mss),
            App::Stream => (Some(0), mss),
        };
        let state = SenderState {
            mss,
            total_segments,
            last_segment_len,
            app_writing: cfg.app == App::Stream,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            window: Window { cwnd: cfg.initial_window.max(1) as f64, ssthresh: cfg.initial_ssthresh },
            rwnd: u64::from(cfg.advertised_window_bytes()) / mss as u64,
            buffer_segments: u64::MAX,
            dupthresh: cfg.dupthresh.max(1),
            limited_transmit: cfg.limited_transmit,
            scoreboard: Scoreboard::default(),
            rtt: RttEstimator::new(cfg.initial_rto, cfg.min_rto, cfg.max_rto, cfg.clock_granularity),
            limited_transmit_sent: 0,
        };
        let mut timers = Timers::default();
        timers.set(Timer::Start, cfg.start);
        let measure_rate = cc.uses_delivery_rate();
        Self {
            state,
            cc_owns_cwnd: cc.owns_cwnd_in_recovery(),
            cc_answers_loss_after_mark: cc.answers_loss_after_mark(),
            recovery_timers: recovery.has_timers(),
            rfc6298_timer: !recovery.replaces_rto(),
            cc,
            recovery,
            pacer,
            header_bytes: cfg.header_bytes,
            timestamps: cfg.timestamps,
            sack: cfg.sack,
            ecn: cfg.ecn,
            ect: if cfg.ecn.is_on() { cfg.ect } else { Ect::NotEct },
            ce_bytes_echoed: 0,
            ssthresh_basis: cfg.ssthresh_basis,
            cwnd_usage: (cfg.cwnd_growth == CwndGrowth::CwndLimited).then(CwndUsage::default),
            start: cfg.start,
            started: false,
            timers,
            next_send_at: 0,
            send_overhead: (cfg.send_overhead > 0)
                .then(|| (cfg.send_overhead, SplitMix64::new(cfg.send_overhead_seed))),
            overhead_release: None,
            force_retransmit: None,
            timer_retransmitted: None,
            after_timeout: false,
            ecn_recover: Recover::default(),
            rate: DeliveryRate::new(measure_rate),
            loss_marks: LossMarks::default(),
            send_buffer: None,
            counters: SenderCounters::default(),
            written: 0,
            finished_at: None,
            transmit_log: None,
            rate_log: None,
        }
    }

    /// Gives the connection a send buffer that `policy` sizes (seed paper 004):
    /// at most that many bytes are unacknowledged; the application is blocked
    /// while the buffer is full. Without one the buffer never limits.
    /// `limit` is the host's until it sets another: `u64::MAX` where the host
    /// has no cap, 0 where it has one and has not yet counted this connection in.
    pub fn with_send_buffer(mut self, policy: Box<dyn SendBufferPolicy>, limit: u64) -> Self {
        self.send_buffer = Some(SendBuffer { policy, limit, desired: 0 });
        self.state.buffer_segments = 0;
        self
    }

    /// Asks the policy for its desire and applies the host's limit to it.
    fn size_send_buffer(&mut self, now: Time) {
        // Before every sending decision: most senders have no buffer, and
        // skip building the inputs.
        if self.send_buffer.is_none() {
            return;
        }
        let inputs = self.buffer_inputs();
        let Some(buffer) = self.send_buffer.as_mut() else { return };
        buffer.desired = buffer.policy.desire(now, &inputs);
        self.state.buffer_segments = buffer.bytes() / self.state.mss as u64;
    }

    fn buffer_inputs(&self) -> BufferInputs {
        let s = &self.state;
        let mss = s.mss as u64;
        BufferInputs {
            mss: s.mss,
            cwnd_bytes: (s.window.cwnd * mss as f64) as u64,
            srtt: s.rtt.srtt(),
            rto: s.rtt.rto(),
            rwnd_bytes: s.rwnd.saturating_mul(mss),
            packets_sent: self.counters.packets_sent,
            loss_events: self.counters.recoveries + self.counters.timeouts,
        }
    }

    /// Bytes in the send buffer: what is unacknowledged, and what the
    /// application wrote into the room left (all of it for a bulk sender).
    fn buffered_bytes(&self, buffer: u64) -> u64 {
        let s = &self.state;
        let mss = s.mss as u64;
        let stream = self.stream_bytes();
        let acked = (s.snd_una * mss).min(stream);
        let sent = (s.snd_max * mss).min(stream);
        let unacked = sent - acked;
        unacked + buffer.saturating_sub(unacked).min(stream - sent)
    }

    pub fn state(&self) -> &SenderState {
        &self.state
    }

    pub fn recovery(&self) -> &dyn LossRecovery {
        self.recovery.as_ref()
    }

    pub fn rto_deadline(&self) -> Time {
        self.timers.at(Timer::Retransmission)
    }

    pub fn is_finished(&self) -> bool {
        let s = &self.state;
        !s.app_writing && s.total_segments.is_some_and(|t| s.snd_una >= t)
    }

    pub fn timeouts(&self) -> u64 {
        self.counters.timeouts
    }

    pub fn retransmits(&self) -> u64 {
        self.counters.retransmits
    }

    pub fn recoveries(&self) -> u64 {
        self.counters.recoveries
    }

    pub fn rtt_samples(&self) -> u64 {
        self.counters.rtt_samples
    }

    pub fn payload_bytes_sent(&self) -> u64 {
        self.counters.payload_bytes_sent
    }

    /// Records every transmission from now on (for tests of timing).
    pub fn record_transmissions(&mut self) {
        self.transmit_log = Some(Vec::new());
    }

    pub fn transmissions(&self) -> Option<&[TransmitRecord]> {
        self.transmit_log.as_deref()
    }

    /// Records every delivery-rate sample from now on (for tests of the estimator).
    pub fn record_rate_samples(&mut self) {
        self.rate_log = Some(Vec::new());
        self.rate.start_sampling();
    }

    pub fn rate_samples(&self) -> Option<&[(Time, RateSample)]> {
        self.rate_log.as_deref()
    }

    fn mark_status(&self, echoed: bool) -> MarkStatus {
        match (self.ecn.is_on(), echoed) {
            (false, _) => MarkStatus::Unknown,
            (true, true) => MarkStatus::Marked,
            (true, false) => MarkStatus::Unmarked,
        }
    }

    fn on_ack(&mut self, now: Time, h: &TcpHeader, out: &mut Outbox) {
        let s = &mut self.state;
        let ack_seg = s.segment_ceil(h.ack).min(s.snd_max);
        if ack_seg < s.snd_una {
            return; // an old ACK overtaken by a newer one: it says nothing new
        }
        let (marked, ce_bytes) = echoed_marks(self.ecn, &mut self.ce_bytes_echoed, h);
        let rwnd = u64::from(h.window) / s.mss as u64;
        let window_changed = rwnd != s.rwnd;
        s.rwnd = rwnd;

        let (mss, total, last) = (s.mss, s.total_segments, s.last_segment_len);
        let bytes = move |seg: u64| segment_len(seg, mss, total, last) as u64;
        // The rate sampler counts each transmission delivered once: SACK blocks
        // re-reported after a timeout cleared the scoreboard deliver nothing
        // new, nor does a cumulative ACK over segments SACKed before.
        let delivered_before = self.rate.delivered_segments();
        let mut newly_sacked = 0;
        if self.sack {
            for &(left, right) in h.sack() {
                let (first, end) = (left / s.mss as u64, s.segment_ceil(right));
                let rate = &mut self.rate;
                newly_sacked += s.scoreboard.mark_sacked_with(first.max(ack_seg), end, |seg, tx| {
                    rate.on_delivered(now, tx, bytes(seg))
                });
            }
        }
        let first_sacked = self.rate.delivered_segments() - delivered_before;

        let newly_acked = ack_seg.saturating_sub(s.snd_una);
        let mut rtt_sample = None;
        if newly_acked > 0 {
            let rate = &mut self.rate;
            let acked = s.scoreboard.ack_to_with(ack_seg, |seg, tx| rate.on_delivered(now, tx, bytes(seg)));
            rtt_sample = if self.timestamps {
                Some(now.saturating_sub(h.ts_ecr))
            } else if !acked.any_retransmitted {
                Some(now.saturating_sub(acked.last_sent_at))
            } else {
                None
            };
            s.snd_una = ack_seg;
            s.snd_nxt = s.snd_nxt.max(ack_seg);
            s.limited_transmit_sent = 0;
            if self.force_retransmit.is_some_and(|seg| seg < ack_seg) {
                self.force_retransmit = None;
            }
        }
        if let Some(r) = rtt_sample {
            s.rtt.on_sample(r);
            let c = &mut self.counters;
            c.rtt_min = Some(c.rtt_min.map_or(r, |m| m.min(r)));
            c.rtt_sum += r;
            c.rtt_samples += 1;
        }

        if self.rate.sampling() {
            // Before congestion control sees the ACK, as Linux marks losses before its rate sample.
            self.loss_marks.below(s, &mut self.rate, Sack::lost_bound(s));
        }
        let (rate_sample, round_start) = self.rate.finish_ack(s.rtt.min_rtt());
        if let (Some(log), Some(r)) = (self.rate_log.as_mut(), rate_sample) {
            log.push((now, r));
        }

        // Congestion control sees the ACK first, with the phase the sender was in.
        let mut sample = AckSample::new(now, s.mss);
        sample.rate = rate_sample;
        sample.round_start = round_start;
        sample.acked = newly_acked;
        sample.sacked = first_sacked;
        sample.delivered = self.rate.delivered_segments() - delivered_before;
        sample.rtt = rtt_sample;
        sample.srtt = s.rtt.srtt();
        sample.min_rtt = s.rtt.min_rtt();
        sample.in_flight = self.recovery.in_network(s);
        sample.pipe = self.cc_owns_cwnd.then(|| s.pipe_without_retransmissions());
        sample.phase = if self.recovery.in_recovery() { AckPhase::Recovery } else { AckPhase::Open };
        sample.newly_lost = std::mem::take(&mut self.loss_marks.unreported);
        sample.packets_in_flight =
            self.rate.sampling().then(|| self.loss_marks.packets_in_flight(s, &self.rate));
        sample.ece = marked;
        sample.ce_bytes = ce_bytes;
        sample.snd_una = s.snd_una;
        sample.snd_max = s.snd_max;
        sample.duplicate = newly_acked == 0;
        sample.cwnd_limited = self.cwnd_usage.is_none_or(|u| u.allows_growth(&s.window));
        if self.after_timeout && !self.recovery.in_loss_episode(s) {
            self.after_timeout = false;
            self.cc.on_timeout_recovered(&mut s.window, now);
        }
        self.cc.on_ack(&mut s.window, &sample);

        let info = AckInfo { now, ack_seg, newly_acked, newly_sacked, window_changed };
        let outcome = self.recovery.on_ack(&self.state, &info);
        self.apply(now, outcome);
        if outcome.loss_detected {
            self.on_loss_detected(now, marked);
        } else if marked && !self.recovery.in_recovery() && self.ecn_recover.covered_by(self.state.snd_una) {
            let in_network = self.recovery.in_network(&self.state);
            let event = self.state.congestion_event(
                now,
                EventKind::Mark,
                MarkStatus::Marked,
                self.ssthresh_basis,
                in_network,
            );
            let window = self.respond(&event);
            self.state.window.cwnd = window;
        }
        let s = &mut self.state;
        s.window.cwnd = s.window.cwnd.max(1.0);

        if newly_acked > 0 {
            if s.snd_una >= s.snd_max {
                self.timers.cancel(Timer::Retransmission);
            } else if outcome.restart_timer {
                self.timers.set(Timer::Retransmission, now + s.rtt.rto());
            }
            if self.is_finished() && self.finished_at.is_none() {
                self.finished_at = Some(now);
            }
        }
        self.try_send(now, out);
    }

    /// Loss recovery detected a loss (on an ACK, or by a timer of its own):
    /// congestion control answers, then recovery starts from the new window.
    fn on_loss_detected(&mut self, now: Time, echoed: bool) {
        self.counters.recoveries += 1;
        let reduced_for_a_mark = self.ecn.is_on() && !self.ecn_recover.covered_by(self.state.snd_una);
        let window = if reduced_for_a_mark && !self.cc_answers_loss_after_mark {
            // This window of data was already reduced for: retransmit only.
            self.state.window.cwnd
        } else {
            let mark = self.mark_status(echoed);
            let in_network = self.recovery.in_network(&self.state);
            let event = self.state.congestion_event(
                now,
                EventKind::FastRetransmit,
                mark,
                self.ssthresh_basis,
                in_network,
            );
            self.respond(&event)
        };
        let entry = self.recovery.enter(&self.state, window);
        self.apply(now, entry);
        if entry.restart_timer {
            self.timers.set(Timer::Retransmission, now + self.state.rtt.rto());
        }
    }

    /// Applies congestion control's response to an event: sets ssthresh and
    /// returns the window after it.
    fn respond(&mut self, event: &CongestionEvent) -> f64 {
        match self.cc.on_congestion(&self.state.window, event) {
            Response::Reduce { ssthresh, cwnd } => {
                self.state.window.ssthresh = ssthresh;
                // Read only with ECN: one reduction per window of data (RFC 3168 §6.1.2).
                self.ecn_recover.set(self.state.snd_max);
                cwnd
            }
            Response::NoReduction => self.state.window.cwnd,
        }
    }

    /// Carries out what loss recovery asked for.
    fn apply(&mut self, now: Time, o: Outcome) {
        let s = &mut self.state;
        if let Some(cwnd) = o.cwnd.filter(|_| !self.cc_owns_cwnd) {
            s.window.cwnd = cwnd;
        }
        if o.exited {
            self.cc.on_recovery_exit(&mut s.window, now);
        }
        if let Some(seg) = o.retransmit {
            self.force_retransmit = Some(seg);
            self.loss_marks.resent(s, &mut self.rate, seg);
        }
        if o.go_back {
            s.snd_nxt = s.snd_una;
        }
        if o.forget_sacks {
            s.scoreboard.clear_sacks();
        }
    }

    fn on_timeout(&mut self, now: Time) {
        if self.state.flight_size() == 0 {
            self.timers.cancel(Timer::Retransmission);
            return;
        }
        self.counters.timeouts += 1;
        // Linux marks everything outstanding lost on entering its Loss state.
        self.loss_marks.below(&self.state, &mut self.rate, self.state.snd_max);
        let repeated = self.timer_retransmitted == Some(self.state.snd_una);
        let loss_window = if repeated {
            1.0
        } else {
            let event = self.state.congestion_event(
                now,
                EventKind::Timeout,
                MarkStatus::Unknown,
                self.ssthresh_basis,
                self.state.flight_size(),
            );
            let ssthresh_before = self.state.window.ssthresh;
            let window = self.respond(&event);
            if self.recovery.in_loss_episode(&self.state) {
                self.state.window.ssthresh = self.state.window.ssthresh.min(ssthresh_before);
            }
            window
        };
        let s = &mut self.state;
        self.timer_retransmitted = Some(s.snd_una);
        s.window.cwnd = loss_window.max(1.0);
        s.rtt.back_off();
        s.snd_nxt = s.snd_una;
        self.force_retransmit = None;
        let outcome = self.recovery.on_rto(&self.state);
        self.apply(now, outcome);
        self.after_timeout = self.recovery.in_loss_episode(&self.state);
        // The retransmission below restarts the timer with the backed-off RTO.
        self.timers.cancel(Timer::Retransmission);
    }

    fn try_send(&mut self, now: Time, out: &mut Outbox) {
        self.timers.cancel(Timer::Pacing);
        if !self.started {
            return;
        }
        self.size_send_buffer(now);
        let mut sent = false;
        loop {
            let s = &self.state;
            let forced = self.force_retransmit.filter(|&seg| seg >= s.snd_una && seg < s.snd_max);
            let tx = match forced {
                Some(seg) => Transmission::retransmit(seg),
                None => {
                    self.force_retransmit = None;
                    match self.recovery.next_segment(&self.state) {
                        Some(tx) => tx,
                        None => {
                            self.check_app_limited();
                            if self.overhead_release.is_some_and(|at| at <= now) {
                                self.overhead_release = None;
                            }
                            break;
                        }
                    }
                }
            };
            // ns-2 sends a fast retransmission at once (output(), not send_much()).
            if let (None, Some((max, draws))) = (forced, self.send_overhead.as_mut()) {
                let release = *self
                    .overhead_release
                    .get_or_insert_with(|| now + (draws.next_f64() * *max as f64) as Time);
                self.next_send_at = self.next_send_at.max(release);
            }
            if now < self.next_send_at {
                self.timers.set(Timer::Pacing, self.next_send_at);
                break;
            }
            self.force_retransmit = None;
            self.transmit(now, tx, out);
            sent = true;
        }
        if let Some(usage) = self.cwnd_usage.as_mut() {
            let s = &self.state;
            let full = self.recovery.in_network(s) as f64 >= s.window.cwnd.floor();
            usage.after_send(sent, full, s.snd_una, s.snd_max);
        }
    }

    /// The application has run out of data while the window has room: rate
    /// samples taken until what is in flight now is delivered understate the path.
    fn check_app_limited(&mut self) {
        let s = &self.state;
        if !s.has_unsent_data() && (s.flight_size() as f64) < s.window.cwnd {
            self.rate.on_app_limited(s.flight_size() * s.mss as u64);
        }
    }

    fn transmit(&mut self, now: Time, tx: Transmission, out: &mut Outbox) {
        // The flight this segment joins, for the rate sample's `tx_in_flight`.
        let in_flight =
            if self.rate.sampling() { self.loss_marks.packets_in_flight(&self.state, &self.rate) } else { 0 };
        let s = &mut self.state;
        let seg = tx.seg;
        let len = s.segment_len(seg);
        let retransmission = seg < s.snd_max;
        let mut h = TcpHeader::new(TcpKind::Data);
        h.seq = seg * s.mss as u64;
        h.len = len;
        h.ts_val = now;
        h.fin = !s.app_writing && s.total_segments == Some(seg + 1);
        let wire_bytes = len + self.header_bytes;
        let mut packet = Packet::new(Header::Tcp(h), wire_bytes);
        packet.ect = self.ect;
        out.send(packet);

        let c = &mut self.counters;
        c.packets_sent += 1;
        c.bytes_sent += wire_bytes as u64;
        c.payload_bytes_sent += len as u64;
        if retransmission {
            c.retransmits += 1;
        }
        // A retransmission counts in flight while it may still be delivered: a
        // segment delivered before (its SACK forgotten at a timeout) delivers
        // nothing when resent; one resent again replaces its earlier copy.
        let mut counts = retransmission;
        if retransmission && self.rate.sampling() {
            if let Some(old) = s.scoreboard.get(seg).map(|r| r.tx) {
                self.rate.on_replaced(&old);
                counts = old.pending;
            }
        }
        let snapshot = self.rate.on_send(now, s.flight_size() == 0, in_flight + 1, counts);
        s.scoreboard.on_transmit_with(seg, now, retransmission, snapshot);
        if tx.limited_transmit {
            s.limited_transmit_sent += 1;
        }
        s.snd_max = s.snd_max.max(seg + 1);
        s.snd_nxt = s.snd_nxt.max(seg + 1);
        self.recovery.on_transmit(&self.state, tx);
        self.cc.on_send(now, retransmission, self.state.flight_size());
        if !self.timers.is_running(Timer::Retransmission) {
            self.timers.set(Timer::Retransmission, now + self.state.rtt.rto());
        }
        let s = &self.state;
        if let Some(log) = self.transmit_log.as_mut() {
            log.push(TransmitRecord {
                at: now,
                seg,
                srtt: s.rtt.srtt(),
                cwnd: s.window.cwnd,
                wire_bytes,
                buffer_end: s.snd_una.saturating_add(s.buffer_segments),
            });
        }
        if let Some(rate) = self.cc.pacing_rate(&s.window, s.rtt.srtt()) {
            if rate > 0.0 {
                self.next_send_at = now + gap_at_rate(wire_bytes, rate);
            }
        } else if let Some(pacer) = self.pacer.as_mut() {
            let departure = Departure {
                now,
                wire_bytes,
                window: s.window,
                srtt: s.rtt.srtt(),
                mss: s.mss,
                in_flight: s.flight_size(),
            };
            self.next_send_at = pacer.next_departure(&departure);
        }
    }

    fn stream_bytes(&self) -> u64 {
        match self.state.total_segments {
            Some(t) => t.saturating_sub(1) * self.state.mss as u64 + self.state.last_segment_len as u64,
            None => u64::MAX,
        }
    }
}

impl Endpoint for TcpSender {
    fn on_packet(&mut self, now: Time, packet: &Packet, out: &mut Outbox) {
        self.counters.packets_received += 1;
        match packet.tcp() {
            Some(h) if h.kind == TcpKind::Ack && self.started => self.on_ack(now, h, out),
            _ => {}
        }
    }

    fn on_timer(&mut self, now: Time, out: &mut Outbox) {
        if !self.started && self.timers.expired(Timer::Start, now) {
            self.started = true;
            self.timers.cancel(Timer::Start);
        }
        if self.rfc6298_timer && self.timers.expired(Timer::Retransmission, now) {
            self.on_timeout(now);
        }
        if self.recovery_timers && self.recovery.next_timer() <= now {
            let outcome = self.recovery.on_timer(now, &self.state);
            self.apply(now, outcome);
            if outcome.loss_detected {
                self.on_loss_detected(now, false);
                self.state.window.cwnd = self.state.window.cwnd.max(1.0);
            }
        }
        self.try_send(now, out);
    }

    fn next_wakeup(&self) -> Time {
        if !self.started {
            return self.start;
        }
        let rto = if self.rfc6298_timer { self.timers.at(Timer::Retransmission) } else { NEVER };
        let recovery = if self.recovery_timers { self.recovery.next_timer() } else { NEVER };
        rto.min(self.timers.at(Timer::Pacing)).min(recovery)
    }

    /// `AppWrite` and `AppClose` for a stream the application writes
    /// (`App::Stream`); `SetSendBuffer` (the host's limit) with a send-buffer policy.
    fn on_control(&mut self, now: Time, control: Control, out: &mut Outbox) -> Result<(), ControlRefused> {
        let s = &mut self.state;
        match control {
            Control::AppWrite { bytes } if s.app_writing => {
                self.written += bytes;
                // Only whole segments go before the close: segment numbers are byte offsets / MSS.
                s.total_segments = Some(self.written / s.mss as u64);
            }
            Control::SetSendBuffer { bytes } if self.send_buffer.is_some() => {
                if let Some(buffer) = self.send_buffer.as_mut() {
                    buffer.limit = bytes;
                }
            }
            Control::AppClose if s.app_writing => {
                s.app_writing = false;
                (s.total_segments, s.last_segment_len) = stream_of(self.written, s.mss);
                if self.is_finished() && self.finished_at.is_none() {
                    self.finished_at = Some(now); // nothing was written
                }
            }
            _ => return Err(ControlRefused(control)),
        }
        self.try_send(now, out);
        Ok(())
    }

    fn counters(&self) -> Counters {
        let c = &self.counters;
        let mut counters = Counters {
            bytes_delivered: 0,
            packets_sent: c.packets_sent,
            bytes_sent: c.bytes_sent,
            packets_received: c.packets_received,
            ..Counters::default()
        };
        let extra = &mut counters.extra;
        extra.set("retransmits", Measure::Count(c.retransmits));
        extra.set("timeouts", Measure::Count(c.timeouts));
        extra.set("recoveries", Measure::Count(c.recoveries));
        extra.set("rtt_mean_s", Measure::MeanSeconds { sum: c.rtt_sum, samples: c.rtt_samples });
        extra.set("rtt_min_s", Measure::MinSeconds(c.rtt_min));
        extra.set("payload_bytes_sent", Measure::Count(c.payload_bytes_sent));
        counters
    }

    fn finished_at(&self) -> Option<Time> {
        self.finished_at
    }

    fn is_closed(&self) -> bool {
        self.is_finished()
    }

    fn metrics(&self, out: &mut Metrics<'_>) {
        let s = &self.state;
        let mss = s.mss as u64;
        out.put(CWND.name, s.window.cwnd);
        out.put(SSTHRESH.name, s.window.ssthresh);
        out.put(SRTT.name, to_secs_f64(s.rtt.srtt()));
        out.put(RTT.name, to_secs_f64(s.rtt.latest()));
        out.put(SEQ_SENT.name, (s.snd_max * mss).min(self.stream_bytes()) as f64);
        out.put(SEQ_ACKED.name, (s.snd_una * mss).min(self.stream_bytes()) as f64);
        out.put(IN_FLIGHT.name, s.flight_size() as f64);
        // Each part publishes its own state under its role's prefix.
        self.cc.metrics(&mut out.part("cc."));
        self.recovery.metrics(&mut out.part("recovery."));
        if let Some(pacer) = &self.pacer {
            pacer.metrics(&mut out.part("pacing."));
        }
        if let Some(buffer) = &self.send_buffer {
            out.put("send_buffer", buffer.bytes() as f64);
            out.put("send_buffer_used", self.buffered_bytes(buffer.bytes()) as f64);
            buffer.policy.metrics(&mut out.part("send_buffer."));
        }
    }

    fn send_state(&self) -> Option<SendState> {
        let buffer = self.send_buffer.as_ref()?;
        Some(SendState {
            start: self.start,
            inputs: self.buffer_inputs(),
            desired: buffer.desired,
            share_weight: buffer.policy.share_weight(),
            send_buffer: buffer.bytes(),
            buffered: self.buffered_bytes(buffer.bytes()),
        })
    }
}
