//! The UDT sender (UDT 4.11 `src/core.cpp`: `packData`, `processCtrl`,
//! `checkTimers`, `CCUpdate`; draft-gg-udt-03 §4-6).
//!
//! - **Sending**: one packet each period; retransmissions from the sender
//!   loss list go before new data; a new packet leaves only while fewer than
//!   `min(flow window, congestion window)` are unacknowledged. A packet
//!   numbered 0 mod 16 is followed by the next one at once, the packet pair
//!   the receiver measures the link capacity with. With nothing it may send,
//!   the sender sleeps until a full ACK, a NAK, a timeout or the application
//!   wakes it (UDT's send list), and then sends at once. A NAK or a timeout
//!   also pulls a send scheduled later forward to now; a full ACK or new
//!   data leaves a scheduled send where it is (`update(this, false)`).
//! - **Full ACK**: answered with an ACK2 when more than SYN has passed since
//!   the last ACK2 or it repeats the last one acknowledged (4.11 compares a
//!   CPU tick count with microseconds there, so in practice it acknowledges
//!   every full ACK; with ACKs a SYN apart the two readings send the same
//!   ACK2s). An ACK that acknowledges nothing new is otherwise ignored; a new
//!   one sets the flow window to the receiver's available buffer, drops
//!   acknowledged numbers from the loss list, folds the receiver's RTT into
//!   the sender's (`RTT = (7 RTT + rtt) / 8`, `RTTVar = (3 RTTVar + |rtt -
//!   RTT|) / 4`, integers), the arrival speed and capacity into theirs (`x =
//!   (7x + sample) / 8`, when present and positive), and calls congestion
//!   control.
//! - **Light ACK**: moves the acknowledged point and shrinks the flow window
//!   by what it acknowledged.
//! - **NAK**: congestion control first, then the reported numbers at or
//!   above the acknowledged point join the loss list, and the sender is
//!   woken at once for the retransmission.
//! - **EXP timer**: `EXPCount x (RTT + 4 RTTVar) + SYN`, at least `EXPCount
//!   x 300 ms`, after the last packet from the receiver. On expiry with
//!   unacknowledged data and an empty loss list, all of it joins the loss
//!   list; congestion control hears of the timeout; EXPCount grows. After 16
//!   expirations and 5 s of silence the connection is broken. Any packet
//!   from the receiver resets EXPCount to 1.

use super::cc::{UdtCcInput, UdtCongestionControl};
use super::loss_list::LossList;
use super::seq::SeqSpace;
use super::{control_packet, emit, timestamp_us, UdtConfig, IP_UDP_BYTES, SYN, UDT_HEADER_BYTES};
use crate::app::App;
use cclab_wire::time::{micros, secs};
use cclab_wire::{
    Control, ControlRefused, Counters, Endpoint, Header, MetricDesc, Metrics, Outbox, Packet, Time,
    UdtControl, UdtHeader, NEVER,
};

pub const METRICS: &[MetricDesc] = &[
    MetricDesc { name: "period_us", unit: "us", meaning: "inter-packet sending period in use" },
    MetricDesc { name: "cwnd", unit: "packets", meaning: "congestion window" },
    MetricDesc {
        name: "flow_window",
        unit: "packets",
        meaning: "flow window: the receiver's available buffer",
    },
    MetricDesc { name: "in_flight", unit: "packets", meaning: "packets sent and not acknowledged" },
    MetricDesc { name: "rtt", unit: "s", meaning: "smoothed RTT" },
    MetricDesc { name: "receive_rate", unit: "packets/s", meaning: "the receiver's arrival speed, smoothed" },
    MetricDesc { name: "bandwidth", unit: "packets/s", meaning: "estimated link capacity, smoothed" },
    MetricDesc { name: "loss_list", unit: "packets", meaning: "packets waiting for retransmission" },
];

#[derive(Clone, Copy, Debug, Default)]
struct SenderCounters {
    retransmits: u64,
    naks: u64,
    acks: u64,
    timeouts: u64,
    ignored: u64,
}

pub struct UdtSender {
    cfg: UdtConfig,
    space: SeqSpace,
    cc: Box<dyn UdtCongestionControl>,
    /// Bytes the application has written, and whether it will write more.
    written: u64,
    closed: bool,
    /// Next new packet to send (packets 0..next_new have been sent once).
    next_new: u64,
    /// The receiver's next expected packet, from any ACK (`m_iSndLastAck`).
    last_ack: u64,
    /// The same from full ACKs only (`m_iSndLastDataAck`).
    last_data_ack: u64,
    flow_window: i64,
    losses: LossList,
    rtt_us: i64,
    rtt_var_us: i64,
    receive_rate: i64,
    bandwidth: i64,
    next_send: Time,
    exp_count: u32,
    last_response: Time,
    last_ack2: Option<(u32, Time)>,
    broken: bool,
    finished_at: Option<Time>,
    common: Counters,
    counters: SenderCounters,
}

impl UdtSender {
    pub fn new(cfg: UdtConfig, cc: Box<dyn UdtCongestionControl>) -> Self {
        let (written, closed) = match cfg.app {
            App::Bulk => (u64::MAX, false),
            App::Transfer { bytes } => (bytes, true),
            App::Stream => (0, false),
        };
        let mut s = Self {
            space: SeqSpace::new(cfg.isn),
            cc,
            written,
            closed,
            next_new: 0,
            last_ack: 0,
            last_data_ack: 0,
            flow_window: cfg.flow_window as i64,
            losses: LossList::new(),
            rtt_us: 100_000,
            rtt_var_us: 50_000,
            receive_rate: 16,
            bandwidth: 1,
            next_send: cfg.start,
            exp_count: 1,
            last_response: cfg.start,
            last_ack2: None,
            broken: false,
            finished_at: None,
            common: Counters::default(),
            counters: SenderCounters::default(),
            cfg,
        };
        if s.packets_available() == 0 {
            s.next_send = NEVER;
        }
        s
    }

    /// Packets the application's data makes: whole payloads, and the rest once it closed.
    fn packets_available(&self) -> u64 {
        let payload = self.cfg.payload() as u64;
        if self.closed {
            self.written.div_ceil(payload)
        } else {
            self.written / payload
        }
    }

    fn payload_of(&self, n: u64) -> u32 {
        let payload = self.cfg.payload() as u64;
        if self.closed && n + 1 == self.packets_available() {
            (self.written - n * payload) as u32
        } else {
            payload as u32
        }
    }

    fn largest_sent(&self) -> i64 {
        self.next_new as i64 - 1
    }

    fn cc_input(&self, now: Time) -> UdtCcInput {
        UdtCcInput {
            now,
            rtt_us: self.rtt_us,
            receive_rate: self.receive_rate,
            bandwidth: self.bandwidth,
            mss: self.cfg.mss,
            max_window: self.cfg.flow_window as f64,
            largest_sent: self.largest_sent(),
        }
    }

    fn control(&self, now: Time, body: UdtControl) -> Packet {
        control_packet(now, self.cfg.start, self.cfg.receiver_socket, body)
    }

    fn send(&mut self, packet: Packet, out: &mut Outbox) {
        emit(&mut self.common, packet, out);
    }

    /// UDT's `packData`: the next packet, and whether it opens a packet pair.
    fn pack_data(&mut self, now: Time) -> Option<(Packet, bool)> {
        let mut chosen = None;
        while let Some(n) = self.losses.pop_first() {
            if n >= self.last_data_ack && n < self.next_new {
                chosen = Some((n, false));
                break;
            }
        }
        if chosen.is_some() {
            self.counters.retransmits += 1;
        } else {
            let window = self.flow_window.min(self.cc.window() as i64);
            let in_flight = self.next_new - self.last_ack;
            let buffered = self.next_new - self.last_data_ack;
            if window <= in_flight as i64
                || buffered >= u64::from(self.cfg.send_buffer)
                || self.next_new >= self.packets_available()
            {
                return None;
            }
            let n = self.next_new;
            self.next_new += 1;
            chosen = Some((n, self.space.wire(n) & 0xF == 0));
        }
        let (n, probe) = chosen?;
        let payload = self.payload_of(n);
        let header = UdtHeader::Data {
            seq: self.space.wire(n),
            msg: 0,
            timestamp_us: timestamp_us(now, self.cfg.start),
            dst_socket: self.cfg.receiver_socket,
        };
        Some((Packet::new(Header::Udt(header), payload + UDT_HEADER_BYTES + IP_UDP_BYTES), probe))
    }

    /// Sends at once, even if a send was scheduled later (a NAK or a
    /// timeout: UDT's `CSndUList::update(this)`, which reschedules).
    fn wake(&mut self, now: Time) {
        self.next_send = self.next_send.min(now);
    }

    /// Sends at once only if the sender had stopped (a full ACK or new data
    /// from the application: UDT's `CSndUList::update(this, false)`); a send
    /// already scheduled keeps its time, so the pacing is not cut short.
    fn resume(&mut self, now: Time) {
        if self.next_send == NEVER {
            self.next_send = now;
        }
    }

    fn exp_deadline(&self) -> Time {
        let count = self.exp_count as Time;
        let by_rtt = micros(count * (self.rtt_us + 4 * self.rtt_var_us).max(0) as u64) + SYN;
        self.last_response + by_rtt.max(count * self.cfg.min_exp)
    }

    /// Something is unacknowledged or unsent (UDT's non-empty send buffer).
    fn has_data(&self) -> bool {
        self.last_data_ack < self.packets_available() || !self.closed
    }

    fn on_exp(&mut self, now: Time, out: &mut Outbox) {
        if self.exp_count > 16 && now - self.last_response > secs(5) {
            self.broken = true;
            self.next_send = NEVER;
            return;
        }
        if self.has_data() {
            if self.next_new != self.last_ack && self.losses.is_empty() {
                self.losses.insert(self.last_ack, self.next_new - 1);
            }
            self.counters.timeouts += 1;
            let input = self.cc_input(now);
            self.cc.on_timeout(&input);
            self.wake(now);
        } else {
            let keep_alive = self.control(now, UdtControl::KeepAlive);
            self.send(keep_alive, out);
        }
        self.exp_count += 1;
        self.last_response = now;
    }

    fn on_full_ack(&mut self, now: Time, ack_seq: u32, wire_ack: u32, fields: FullAck, out: &mut Outbox) {
        let repeat = self.last_ack2.is_some_and(|(seq, _)| seq == ack_seq);
        if self.last_ack2.is_none_or(|(_, at)| now - at > SYN) || repeat {
            let ack2 = self.control(now, UdtControl::Ack2 { ack_seq });
            self.send(ack2, out);
            self.last_ack2 = Some((ack_seq, now));
        }
        let Some(ack) = self.space.unwrap(wire_ack, self.last_ack) else {
            self.counters.ignored += 1;
            return;
        };
        if ack > self.next_new {
            // UDT breaks the connection: an acknowledgement of data never sent.
            self.counters.ignored += 1;
            return;
        }
        if ack >= self.last_ack {
            self.flow_window = fields.available_buffer as i64;
            self.last_ack = ack;
        }
        if ack <= self.last_data_ack {
            return;
        }
        self.last_data_ack = ack;
        self.losses.remove_below(ack);
        self.counters.acks += 1;
        if self.last_data_ack >= self.packets_available() && self.closed && self.finished_at.is_none() {
            self.finished_at = Some(now);
            self.next_send = NEVER;
        } else {
            self.resume(now);
        }
        let rtt = fields.rtt_us as i64;
        self.rtt_var_us = (self.rtt_var_us * 3 + (rtt - self.rtt_us).abs()) >> 2;
        self.rtt_us = (self.rtt_us * 7 + rtt) >> 3;
        if let Some((arrival, capacity)) = fields.rates {
            if arrival > 0 {
                self.receive_rate = (self.receive_rate * 7 + arrival as i64) >> 3;
            }
            if capacity > 0 {
                self.bandwidth = (self.bandwidth * 7 + capacity as i64) >> 3;
            }
        }
        let input = self.cc_input(now);
        self.cc.on_ack(ack as i64, &input);
    }

    fn on_nak(&mut self, now: Time, losses: &[(u32, u32)]) {
        let Some(&(first_wire, _)) = losses.first() else { return };
        let near = self.last_ack;
        let Some(first) = self.space.unwrap(first_wire, near) else {
            self.counters.ignored += 1;
            return;
        };
        let mut ranges = Vec::with_capacity(losses.len());
        for &(a, b) in losses {
            let (Some(a), Some(b)) = (self.space.unwrap(a, near), self.space.unwrap(b, near)) else {
                self.counters.ignored += 1;
                return;
            };
            if a > b || b >= self.next_new {
                // UDT breaks the connection here ("attack or bug").
                self.counters.ignored += 1;
                return;
            }
            ranges.push((a, b));
        }
        self.counters.naks += 1;
        let input = self.cc_input(now);
        self.cc.on_loss(first as i64, &input);
        for (a, b) in ranges {
            if b >= self.last_ack {
                self.losses.insert(a.max(self.last_ack), b);
            }
        }
        self.wake(now);
    }

    /// Whether the sender gave up on a silent receiver.
    pub fn is_broken(&self) -> bool {
        self.broken
    }

    /// EXP expiries since the receiver was last heard (UDT's EXPCount less one).
    pub fn expirations(&self) -> u32 {
        self.exp_count - 1
    }

    pub fn congestion_control(&self) -> &dyn UdtCongestionControl {
        self.cc.as_ref()
    }

    /// The inter-packet period congestion control chose, read where UDT's
    /// `CCUpdate` would copy it: at every send.
    pub fn period(&self) -> Time {
        (self.cc.period_us() * 1000.0).max(1.0) as Time
    }

    pub fn acknowledged(&self) -> u64 {
        self.last_data_ack
    }
}

/// The fields of a full ACK the sender uses.
#[derive(Clone, Copy, Debug)]
struct FullAck {
    rtt_us: u32,
    available_buffer: u32,
    rates: Option<(u32, u32)>,
}

impl Endpoint for UdtSender {
    fn on_packet(&mut self, now: Time, packet: &Packet, out: &mut Outbox) {
        let Header::Udt(UdtHeader::Control { body, .. }) = &packet.header else {
            self.counters.ignored += 1;
            return;
        };
        if self.broken {
            return;
        }
        self.common.packets_received += 1;
        self.exp_count = 1;
        self.last_response = now;
        match *body {
            UdtControl::LightAck { last_seq } => {
                if let Some(ack) = self.space.unwrap(last_seq, self.last_ack) {
                    if ack >= self.last_ack && ack <= self.next_new {
                        self.flow_window -= (ack - self.last_ack) as i64;
                        self.last_ack = ack;
                    }
                }
            }
            UdtControl::Ack { ack_seq, last_seq, rtt_us, available_buffer, rates, .. } => {
                let rates = rates.map(|r| (r.arrival, r.capacity));
                self.on_full_ack(now, ack_seq, last_seq, FullAck { rtt_us, available_buffer, rates }, out);
            }
            UdtControl::Nak { losses } => self.on_nak(now, losses.as_slice()),
            _ => {}
        }
    }

    fn on_timer(&mut self, now: Time, out: &mut Outbox) {
        if self.broken {
            return;
        }
        if now > self.exp_deadline() && self.finished_at.is_none() {
            self.on_exp(now, out);
        }
        while self.next_send <= now {
            let at = self.next_send;
            match self.pack_data(at) {
                Some((packet, probe)) => {
                    self.send(packet, out);
                    self.next_send = if probe { at } else { at + self.period() };
                }
                None => self.next_send = NEVER,
            }
        }
    }

    fn next_wakeup(&self) -> Time {
        if self.broken || self.finished_at.is_some() {
            return NEVER;
        }
        // UDT checks `now > deadline`: wake just after it.
        self.next_send.min(self.exp_deadline() + 1)
    }

    fn on_control(&mut self, now: Time, control: Control, _out: &mut Outbox) -> Result<(), ControlRefused> {
        match control {
            Control::AppWrite { bytes } if !self.closed && self.cfg.app == App::Stream => {
                self.written += bytes;
            }
            Control::AppClose if self.cfg.app == App::Stream => self.closed = true,
            other => return Err(ControlRefused(other)),
        }
        self.resume(now);
        Ok(())
    }

    fn counters(&self) -> Counters {
        let c = &self.counters;
        self.common.with_counts(&[
            ("retransmits", c.retransmits),
            ("naks", c.naks),
            ("acks", c.acks),
            ("timeouts", c.timeouts),
            ("ignored", c.ignored),
        ])
    }

    fn finished_at(&self) -> Option<Time> {
        self.finished_at
    }

    fn is_closed(&self) -> bool {
        self.finished_at.is_some() || self.broken
    }

    fn metrics(&self, out: &mut Metrics<'_>) {
        out.put("period_us", self.period() as f64 / 1000.0);
        out.put("cwnd", self.cc.window());
        out.put("flow_window", self.flow_window as f64);
        out.put("in_flight", (self.next_new - self.last_ack) as f64);
        out.put("rtt", self.rtt_us as f64 / 1e6);
        out.put("receive_rate", self.receive_rate as f64);
        out.put("bandwidth", self.bandwidth as f64);
        out.put("loss_list", self.losses.len() as f64);
        self.cc.metrics(&mut out.part("cc."));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::defaults;
    use cclab_wire::time::millis;
    use cclab_wire::UdtLossList;

    fn sender() -> UdtSender {
        UdtSender::new(UdtConfig::default(), defaults::udt_congestion_control("udt").expect("udt"))
    }

    fn from_receiver(body: UdtControl) -> Packet {
        Packet::new(Header::Udt(UdtHeader::Control { timestamp_us: 0, dst_socket: 1, body }), 60)
    }

    fn full_ack(ack_seq: u32, last_seq: u32) -> Packet {
        from_receiver(UdtControl::Ack {
            ack_seq,
            last_seq,
            rtt_us: 100_000,
            rtt_var_us: 50_000,
            available_buffer: 8191,
            rates: None,
        })
    }

    /// Runs the sender's timer at each wake-up up to `until`; the data packets' numbers it sent.
    fn run(s: &mut UdtSender, until: Time) -> Vec<u32> {
        let mut out = Outbox::default();
        while s.next_wakeup() <= until {
            s.on_timer(s.next_wakeup(), &mut out);
        }
        out.packets
            .iter()
            .filter_map(|p| match p.header {
                Header::Udt(UdtHeader::Data { seq, .. }) => Some(seq),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn the_send_buffer_holds_what_no_full_ack_has_acknowledged() {
        // 4.11 keeps every packet in its send buffer until a full ACK (`ackData`) frees it, so
        // at most UDT_SNDBUF packets lie beyond the last full ACK, whatever the windows allow.
        let sent_after_ack = |send_buffer: u32| {
            let cfg = UdtConfig { send_buffer, ..UdtConfig::default() };
            let mut s = UdtSender::new(cfg, defaults::udt_congestion_control("udt").expect("udt"));
            assert_eq!(run(&mut s, millis(1)), (0..16).collect::<Vec<_>>(), "slow start's window of 16");
            // A full ACK of 0..8 grows slow start's window to 26 packets beyond 8.
            s.on_packet(millis(2), &full_ack(1, 8), &mut Outbox::default());
            assert_eq!(s.cc.window(), 26.0);
            run(&mut s, millis(3))
        };
        assert_eq!(sent_after_ack(8192), (16..34).collect::<Vec<_>>(), "the window: 8 + 26");
        assert_eq!(sent_after_ack(24), (16..32).collect::<Vec<_>>(), "the send buffer: 8 + 24");
    }

    #[test]
    fn a_full_ack_leaves_a_scheduled_send_where_it_is_and_wakes_only_an_idle_sender() {
        // UDT 4.11 answers a full ACK with `CSndUList::update(this, false)`:
        // a sender already waiting for its next send time keeps it; only one
        // that had stopped (nothing it may send) is put back at once.
        let mut s = sender();
        assert_eq!(run(&mut s, millis(1)), (0..16).collect::<Vec<_>>(), "slow start's window of 16");
        assert_eq!(s.next_wakeup(), s.exp_deadline() + 1, "window full: idle");
        // A NAK ends slow start at the initial receive rate, 16 packets/s
        // (62.5 ms apart), and the retransmission leaves at once.
        let mut losses = UdtLossList::default();
        losses.push((5, 5));
        let mut out = Outbox::default();
        s.on_packet(millis(1), &from_receiver(UdtControl::Nak { losses }), &mut out);
        assert_eq!(run(&mut s, millis(1)), [5]);
        let next = millis(1) + micros(62_500);
        assert_eq!(s.next_wakeup(), next);
        // A full ACK 10 ms later opens the window but does not move that time.
        s.on_packet(millis(11), &full_ack(1, 10), &mut out);
        assert_eq!(s.next_wakeup(), next);
        assert!(run(&mut s, next - 1).is_empty());
        assert_eq!(run(&mut s, next), [16, 17], "16 opens a packet pair");
        // Idle again (the window is full): a full ACK restarts it at once.
        let mut s = sender();
        run(&mut s, millis(1));
        s.on_packet(millis(30), &full_ack(1, 4), &mut out);
        assert_eq!(s.next_wakeup(), millis(30));
    }

    #[test]
    fn exp_fires_after_count_x_rtt_plus_4_rttvar_plus_syn_at_least_count_x_300_ms_and_backs_off() {
        let mut s = sender();
        assert_eq!(run(&mut s, millis(1)).len(), 16);
        // EXPCount 1: 100 + 4 x 50 ms + SYN = 310 ms after the last response (the start).
        assert_eq!(s.exp_deadline(), millis(310));
        // UDT fires when the time is past the deadline: everything unacknowledged
        // goes back to the loss list and is resent, before any new packet.
        assert!(run(&mut s, millis(310)).is_empty());
        let t1 = millis(310) + 1;
        assert_eq!(run(&mut s, t1), [0]);
        assert_eq!(s.counters().extra.count("timeouts"), 1);
        // EXPCount 2 from the expiry: 2 x 300 ms + SYN.
        assert_eq!(s.exp_deadline(), t1 + millis(610));
        // Any packet from the receiver resets the count (a light ACK here).
        let mut out = Outbox::default();
        s.on_packet(millis(400), &from_receiver(UdtControl::LightAck { last_seq: 2 }), &mut out);
        assert_eq!(s.exp_deadline(), millis(400) + millis(310));
        // Silence: after 16 expirations the 17th, 17 x 300 ms + SYN > 5 s
        // after the 16th, breaks the connection.
        let mut t = millis(400);
        while !s.is_broken() {
            t = s.next_wakeup();
            assert!(t < secs(100), "never broken");
            s.on_timer(t, &mut out);
        }
        assert_eq!(s.counters().extra.count("timeouts"), 17, "one before the light ACK, 16 after");
        let expected: Time = millis(400) + (1..=17).map(|k| millis(300 * k + 10) + 1).sum::<Time>();
        assert_eq!(t, expected);
    }
}
