//! The TCP data sender: sequence state, RTT and retransmission timer, and the
//! glue between a congestion control and a loss recovery.
//!
//! Timer management follows RFC 6298 §5: (5.1) start the timer when sending
//! data if it is not running; (5.2) stop it when everything is acknowledged;
//! (5.3) restart it when an ACK acknowledges new data (loss recovery may veto,
//! e.g. NewReno's Impatient rule); (5.4-5.6) on expiry retransmit the first
//! unacknowledged segment, back off, restart. On expiry RFC 5681 §3.1 also sets
//! ssthresh (from congestion control) and cwnd = 1 segment, and the sender goes
//! back to `snd_una` (go-back-N, as BSD and ns-2 do). Following RFC 5681 §3.1,
//! ssthresh is held constant when the segment that timed out had already been
//! retransmitted by the timer. A timeout while the window in which a loss was
//! already detected is still unacknowledged (during fast recovery) lowers
//! ssthresh a second time (RFC 5681 §4.3) but never raises it: recomputing it
//! from FlightSize alone would count the segments that fast recovery's window
//! inflation sent while the receiver was holding them, and could put ssthresh
//! far above the window at which the loss happened.
//!
//! Stale ACKs (below `snd_una`) are ignored. Segments sent by limited transmit
//! (RFC 3042) do not count in the FlightSize that sets ssthresh at a fast
//! retransmit (RFC 5681 §3.2 step 2).
//!
//! RTT samples come from the timestamp echo of every ACK that acknowledges new
//! data (RFC 7323 §4); without timestamps, from the send time of the highest
//! newly acknowledged segment, and only if none of the acknowledged segments was
//! retransmitted (Karn's algorithm).

use super::recovery::{AckInfo, LossRecovery, Transmission};
use super::rtt::RttEstimator;
use super::scoreboard::Scoreboard;
use super::{App, TcpConfig};
use crate::cc::{AckSample, CcState, CongestionControl, LossEvent, LossKind};
use cclab_core::{Endpoint, EndpointCounters, Outbox, Packet, PacketKind, Probe, Time, NEVER};

/// The state that congestion control and loss recovery share. Segment numbers
/// count from 0; segment `s` carries bytes `[s*mss, s*mss + len(s))`.
#[derive(Debug)]
pub struct SenderCore {
    pub mss: u32,
    /// Segments in the stream (`None`: unlimited) and the size of the last one.
    pub total_segments: Option<u64>,
    pub last_segment_len: u32,
    /// First unacknowledged segment (HighACK + 1).
    pub snd_una: u64,
    /// Next segment the sequence window sends.
    pub snd_nxt: u64,
    /// One past the highest segment ever sent (HighData + 1).
    pub snd_max: u64,
    pub cc: CcState,
    /// Receiver window in segments.
    pub rwnd: u64,
    pub dupacks: u32,
    pub dupthresh: u32,
    pub limited_transmit: bool,
    pub scoreboard: Scoreboard,
    pub rtt: RttEstimator,
    /// A segment to retransmit now, whatever the window.
    pub force_retransmit: Option<u64>,
    /// New segments sent by limited transmit since the last cumulative ACK.
    pub limited_transmit_sent: u64,
}

impl SenderCore {
    pub fn flight_size(&self) -> u64 {
        self.snd_max - self.snd_una
    }

    pub fn segment_exists(&self, seg: u64) -> bool {
        self.total_segments.is_none_or(|t| seg < t)
    }

    pub fn has_unsent_data(&self) -> bool {
        self.segment_exists(self.snd_max)
    }

    pub fn segment_len(&self, seg: u64) -> u32 {
        match self.total_segments {
            Some(t) if seg + 1 == t => self.last_segment_len,
            _ => self.mss,
        }
    }

    pub fn loss_event(&self, now: Time, kind: LossKind) -> LossEvent {
        let flight = match kind {
            LossKind::FastRetransmit => self.flight_size().saturating_sub(self.limited_transmit_sent),
            LossKind::Timeout | LossKind::Ecn => self.flight_size(),
        };
        let mut loss = LossEvent::new(now, kind, flight, self.mss);
        loss.srtt = self.rtt.srtt();
        loss.min_rtt = self.rtt.min_rtt();
        loss
    }

    /// The segment boundary at or above a byte offset.
    fn segment_ceil(&self, bytes: u64) -> u64 {
        bytes.div_ceil(self.mss as u64)
    }
}

pub struct TcpSender {
    core: SenderCore,
    cc: Box<dyn CongestionControl>,
    recovery: Box<dyn LossRecovery>,
    header_bytes: u32,
    timestamps: bool,
    sack: bool,
    start: Time,
    started: bool,
    rto_deadline: Time,
    next_send_at: Time,
    pacing_blocked: bool,
    /// The segment the last timeout retransmitted.
    timer_retransmitted: Option<u64>,
    counters: EndpointCounters,
}

impl TcpSender {
    pub fn new(cfg: &TcpConfig, cc: Box<dyn CongestionControl>, recovery: Box<dyn LossRecovery>) -> Self {
        let mss = cfg.mss.max(1);
        let (total_segments, last_segment_len) = match cfg.app {
            App::Bulk => (None, mss),
            App::Transfer { bytes } => {
                let segs = bytes.div_ceil(mss as u64);
                let last = bytes - segs.saturating_sub(1) * mss as u64;
                (Some(segs), last as u32)
            }
        };
        let core = SenderCore {
            mss,
            total_segments,
            last_segment_len,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            cc: CcState { cwnd: cfg.initial_window.max(1) as f64, ssthresh: cfg.initial_ssthresh },
            rwnd: cfg.receive_window_bytes() / mss as u64,
            dupacks: 0,
            dupthresh: cfg.dupthresh.max(1),
            limited_transmit: cfg.limited_transmit,
            scoreboard: Scoreboard::default(),
            rtt: RttEstimator::new(cfg.initial_rto, cfg.min_rto, cfg.max_rto, cfg.clock_granularity),
            force_retransmit: None,
            limited_transmit_sent: 0,
        };
        Self {
            core,
            cc,
            recovery,
            header_bytes: cfg.header_bytes,
            timestamps: cfg.timestamps,
            sack: cfg.sack,
            start: cfg.start,
            started: false,
            rto_deadline: NEVER,
            next_send_at: 0,
            pacing_blocked: false,
            timer_retransmitted: None,
            counters: EndpointCounters::default(),
        }
    }

    pub fn core(&self) -> &SenderCore {
        &self.core
    }

    pub fn recovery(&self) -> &dyn LossRecovery {
        self.recovery.as_ref()
    }

    pub fn rto_deadline(&self) -> Time {
        self.rto_deadline
    }

    pub fn is_finished(&self) -> bool {
        self.core.total_segments.is_some_and(|t| self.core.snd_una >= t)
    }

    fn on_ack(&mut self, now: Time, p: &Packet, out: &mut Outbox) {
        let core = &mut self.core;
        let ack_seg = core.segment_ceil(p.ack).min(core.snd_max);
        if ack_seg < core.snd_una {
            return; // an old ACK overtaken by a newer one: it says nothing new
        }
        let rwnd = p.window / core.mss as u64;
        let window_changed = rwnd != core.rwnd;
        core.rwnd = rwnd;

        let mut newly_sacked = 0;
        if self.sack {
            for &(left, right) in p.sack.as_slice() {
                let (first, end) = (left / core.mss as u64, core.segment_ceil(right));
                newly_sacked += core.scoreboard.mark_sacked(first.max(ack_seg), end);
            }
        }

        let newly_acked = ack_seg.saturating_sub(core.snd_una);
        let mut rtt_sample = None;
        if newly_acked > 0 {
            let acked = core.scoreboard.ack_to(ack_seg);
            rtt_sample = if self.timestamps {
                Some(now.saturating_sub(p.ts_ecr))
            } else if !acked.any_retransmitted {
                Some(now.saturating_sub(acked.last_sent_at))
            } else {
                None
            };
            core.snd_una = ack_seg;
            core.snd_nxt = core.snd_nxt.max(ack_seg);
            core.limited_transmit_sent = 0;
            if core.force_retransmit.is_some_and(|s| s < ack_seg) {
                core.force_retransmit = None;
            }
        }
        if let Some(r) = rtt_sample {
            core.rtt.on_sample(r);
            let c = &mut self.counters;
            c.rtt_min = if c.rtt_samples == 0 { r } else { c.rtt_min.min(r) };
            c.rtt_sum += r;
            c.rtt_samples += 1;
        }

        let info = AckInfo { now, ack_seg, newly_acked, newly_sacked, window_changed };
        let verdict = self.recovery.on_ack(&mut self.core, self.cc.as_mut(), &info);
        if verdict.entered_recovery {
            self.counters.recoveries += 1;
        }

        let core = &mut self.core;
        let mut sample = AckSample::new(now, core.mss);
        sample.acked = newly_acked;
        sample.sacked = newly_sacked;
        sample.rtt = rtt_sample;
        sample.srtt = core.rtt.srtt();
        sample.min_rtt = core.rtt.min_rtt();
        sample.in_flight = core.flight_size();
        sample.phase = verdict.phase;
        sample.ece = p.ece;
        sample.duplicate = newly_acked == 0;
        self.cc.on_ack(&mut core.cc, &sample);
        core.cc.cwnd = core.cc.cwnd.max(1.0);

        if newly_acked > 0 {
            if core.snd_una >= core.snd_max {
                self.rto_deadline = NEVER;
            } else if verdict.restart_timer {
                self.rto_deadline = now + core.rtt.rto();
            }
            if self.is_finished() && self.counters.finished_at.is_none() {
                self.counters.finished_at = Some(now);
            }
        }
        self.try_send(now, out);
    }

    fn on_timeout(&mut self, now: Time) {
        let core = &mut self.core;
        if core.flight_size() == 0 {
            self.rto_deadline = NEVER;
            return;
        }
        self.counters.timeouts += 1;
        let already_timed_out = self.timer_retransmitted == Some(core.snd_una);
        if !already_timed_out {
            let loss = core.loss_event(now, LossKind::Timeout);
            let reduced = self.cc.ssthresh_on_loss(&core.cc, &loss);
            core.cc.ssthresh =
                if self.recovery.in_loss_episode(core) { reduced.min(core.cc.ssthresh) } else { reduced };
        }
        self.timer_retransmitted = Some(core.snd_una);
        core.cc.cwnd = 1.0;
        core.rtt.back_off();
        core.dupacks = 0;
        core.snd_nxt = core.snd_una;
        core.force_retransmit = None;
        self.recovery.on_timeout(core);
        self.cc.on_timeout(&mut core.cc, now);
        // The retransmission below restarts the timer with the backed-off RTO.
        self.rto_deadline = NEVER;
    }

    fn try_send(&mut self, now: Time, out: &mut Outbox) {
        self.pacing_blocked = false;
        if !self.started {
            return;
        }
        loop {
            let forced =
                self.core.force_retransmit.filter(|&s| s >= self.core.snd_una && s < self.core.snd_max);
            let tx = match forced {
                Some(seg) => Transmission::retransmit(seg),
                None => {
                    self.core.force_retransmit = None;
                    match self.recovery.next_segment(&self.core) {
                        Some(tx) => tx,
                        None => break,
                    }
                }
            };
            if now < self.next_send_at {
                self.pacing_blocked = true;
                break;
            }
            self.core.force_retransmit = None;
            self.transmit(now, tx, out);
        }
    }

    fn transmit(&mut self, now: Time, tx: Transmission, out: &mut Outbox) {
        let core = &mut self.core;
        let seg = tx.seg;
        let len = core.segment_len(seg);
        let retransmission = seg < core.snd_max;
        let mut p = Packet::new(PacketKind::Data);
        p.seq = seg * core.mss as u64;
        p.len = len;
        p.ts_val = now;
        p.wire_bytes = len + self.header_bytes;
        out.send(p);

        let c = &mut self.counters;
        c.packets_sent += 1;
        c.wire_bytes_sent += p.wire_bytes as u64;
        c.payload_bytes_sent += len as u64;
        if retransmission {
            c.retransmits += 1;
        }
        core.scoreboard.on_transmit(seg, now, retransmission);
        if tx.limited_transmit {
            core.limited_transmit_sent += 1;
        }
        core.snd_max = core.snd_max.max(seg + 1);
        core.snd_nxt = core.snd_nxt.max(seg + 1);
        self.recovery.on_transmit(&self.core, tx);
        self.cc.on_send(now, retransmission, self.core.flight_size());
        if self.rto_deadline == NEVER {
            self.rto_deadline = now + self.core.rtt.rto();
        }
        if let Some(rate) = self.cc.pacing_rate(&self.core.cc, self.core.rtt.srtt()) {
            if rate > 0.0 {
                let gap = (p.wire_bytes as f64 / rate * 1e9).round() as Time;
                self.next_send_at = now + gap;
            }
        }
    }
}

impl Endpoint for TcpSender {
    fn on_packet(&mut self, now: Time, packet: &Packet, out: &mut Outbox) {
        self.counters.packets_received += 1;
        if packet.kind == PacketKind::Ack && self.started {
            self.on_ack(now, packet, out);
        }
    }

    fn on_timer(&mut self, now: Time, out: &mut Outbox) {
        if !self.started && now >= self.start {
            self.started = true;
        }
        if now >= self.rto_deadline {
            self.on_timeout(now);
        }
        self.try_send(now, out);
    }

    fn next_wakeup(&self) -> Time {
        if !self.started {
            return self.start;
        }
        let pacing = if self.pacing_blocked { self.next_send_at } else { NEVER };
        self.rto_deadline.min(pacing)
    }

    fn counters(&self) -> EndpointCounters {
        self.counters
    }

    fn probe(&self) -> Option<Probe> {
        let c = &self.core;
        let mss = c.mss as u64;
        let seq_sent = (c.snd_max * mss).min(self.stream_bytes());
        Some(Probe {
            cwnd: c.cc.cwnd,
            ssthresh: c.cc.ssthresh,
            srtt: c.rtt.srtt(),
            rtt: c.rtt.latest(),
            seq_sent,
            seq_acked: (c.snd_una * mss).min(self.stream_bytes()),
            in_flight: c.flight_size(),
        })
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

impl TcpSender {
    fn stream_bytes(&self) -> u64 {
        match self.core.total_segments {
            Some(t) => t.saturating_sub(1) * self.core.mss as u64 + self.core.last_segment_len as u64,
            None => u64::MAX,
        }
    }
}
