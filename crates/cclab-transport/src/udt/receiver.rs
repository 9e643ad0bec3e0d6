//! The UDT receiver (UDT 4.11 `src/core.cpp`: `processData`, `sendCtrl`,
//! `checkTimers`, the ACK2 case of `processCtrl`; `src/window.cpp`).
//!
//! - **Data**: a packet at or beyond the receive buffer's end, already
//!   received or already acknowledged is dropped. A gap (a number beyond the
//!   largest received plus one) enters the loss list and is reported at once
//!   in a NAK of that one range; 4.11 sends no periodic NAKs (the sender's EXP
//!   timer recovers lost NAKs and retransmissions). A late arrival leaves the
//!   loss list.
//! - **Timers**, checked after every data packet and at the ACK deadline:
//!   a full ACK when the time is past the next ACK time (every SYN), else a
//!   light ACK every 64 packets since the last full ACK.
//! - **Full ACK**: the acknowledged number is the first loss, or the largest
//!   received plus one. Nothing is sent if the sender already confirmed it by
//!   an ACK2, or if it repeats the last ACK within `RTT + 4 RTTVar` of the last
//!   ACK that carried rates. A new number delivers the data below it to the
//!   application (UDT hands data over at ACK time). The ACK carries RTT,
//!   RTTVar, the available buffer (at least 2) and, if more than SYN passed
//!   since the last ACK that did, the arrival speed and the link capacity
//!   ([`super::time_window`]). It is remembered with its ACK sequence number
//!   and send time (the ACK window, 1024 entries).
//! - **ACK2**: the RTT sample is the time since the ACK it answers left;
//!   `RTTVar = (3 RTTVar + |rtt - RTT|) / 4`, `RTT = (7 RTT + rtt) / 8`
//!   (integers, initial 100 ms and 50 ms).
//!
//! The application reads each full ACK's data at once, just after that ACK
//! leaves: the ACK advertises the buffer less one slot less the packets it
//! acknowledges (4.11's `getAvailBufSize` right after `ackData`, before its
//! reader thread can have copied them). The
//! model's receiver has no EXP timer of its own (4.11's receiver sends
//! keep-alives on one); the sender's timer is what recovers losses.

use super::loss_list::LossList;
use super::seq::SeqSpace;
use super::time_window::{ArrivalSpeed, PacketPairCapacity};
use super::{control_packet, emit, UdtConfig, IP_UDP_BYTES, LIGHT_ACK_PACKETS, SYN, UDT_HEADER_BYTES};
use crate::app::App;
use cclab_wire::time::micros;
use cclab_wire::{
    Counters, Endpoint, Header, Outbox, Packet, Time, UdtControl, UdtHeader, UdtLossList, UdtRates, NEVER,
};
use std::collections::VecDeque;

/// ACKs remembered for ACK2 matching (`CACKWindow`'s size).
const ACK_HISTORY: usize = 1024;

#[derive(Clone, Copy, Debug, Default)]
struct ReceiverCounters {
    duplicates: u64,
    beyond_buffer: u64,
    naks: u64,
    ignored: u64,
}

pub struct UdtReceiver {
    cfg: UdtConfig,
    space: SeqSpace,
    /// Payload bytes of each packet from `last_ack` on; `None` where none arrived yet.
    buffer: VecDeque<Option<u32>>,
    /// Largest packet received plus one (`incseq(m_iRcvCurrSeqNo)`).
    received_end: u64,
    /// Everything below it was acknowledged and delivered (`m_iRcvLastAck`).
    last_ack: u64,
    /// The largest ACK the sender confirmed with an ACK2 (`m_iRcvLastAckAck`).
    last_ack_ack: u64,
    losses: LossList,
    ack_seq: u32,
    /// (ACK sequence number, acknowledged packet, send time).
    ack_history: VecDeque<(u32, u64, Time)>,
    next_ack_time: Time,
    last_rate_ack_time: Time,
    packets_since_ack: u64,
    light_acks: u64,
    rtt_us: i64,
    rtt_var_us: i64,
    arrivals: ArrivalSpeed,
    pairs: PacketPairCapacity,
    /// Bytes expected in all (a finite transfer), when known.
    expected: Option<u64>,
    finished_at: Option<Time>,
    common: Counters,
    counters: ReceiverCounters,
    /// Packet numbers handed to the application, in order, when a test asks.
    deliveries: Option<Vec<u64>>,
}

impl UdtReceiver {
    pub fn new(cfg: UdtConfig) -> Self {
        let expected = match cfg.app {
            App::Transfer { bytes } => Some(bytes),
            _ => None,
        };
        Self {
            space: SeqSpace::new(cfg.isn),
            buffer: VecDeque::new(),
            received_end: 0,
            last_ack: 0,
            last_ack_ack: 0,
            losses: LossList::new(),
            ack_seq: 0,
            ack_history: VecDeque::with_capacity(ACK_HISTORY),
            next_ack_time: cfg.start + SYN,
            last_rate_ack_time: cfg.start,
            packets_since_ack: 0,
            light_acks: 1,
            rtt_us: 100_000,
            rtt_var_us: 50_000,
            arrivals: ArrivalSpeed::new(us(cfg.start)),
            pairs: PacketPairCapacity::default(),
            expected,
            finished_at: None,
            common: Counters::default(),
            counters: ReceiverCounters::default(),
            deliveries: None,
            cfg,
        }
    }

    fn available_buffer(&self) -> u64 {
        self.cfg.receive_buffer.saturating_sub(1) as u64
    }

    fn control(&self, now: Time, body: UdtControl) -> Packet {
        control_packet(now, self.cfg.start, self.cfg.sender_socket, body)
    }

    fn send(&mut self, packet: Packet, out: &mut Outbox) {
        emit(&mut self.common, packet, out);
    }

    /// The number a full ACK would acknowledge now.
    fn ack_point(&self) -> u64 {
        self.losses.first().unwrap_or(self.received_end)
    }

    fn on_data(&mut self, now: Time, wire_seq: u32, payload: u32, out: &mut Outbox) {
        self.common.packets_received += 1;
        self.packets_since_ack += 1;
        let now_us = us(now);
        self.arrivals.on_arrival(now_us);
        match wire_seq & 0xF {
            0 => self.pairs.on_first(now_us),
            1 => self.pairs.on_second(now_us),
            _ => {}
        }
        let Some(n) = self.space.unwrap(wire_seq, self.received_end) else {
            self.counters.ignored += 1;
            return;
        };
        if n < self.last_ack {
            self.counters.duplicates += 1;
            return;
        }
        let offset = (n - self.last_ack) as usize;
        if offset as u64 >= self.available_buffer() {
            self.counters.beyond_buffer += 1;
            return;
        }
        if self.buffer.len() <= offset {
            self.buffer.resize(offset + 1, None);
        }
        if self.buffer[offset].is_some() {
            self.counters.duplicates += 1;
            return;
        }
        self.buffer[offset] = Some(payload);
        if n > self.received_end {
            let (first, last) = (self.received_end, n - 1);
            self.losses.insert(first, last);
            let mut report = UdtLossList::default();
            report.push((self.space.wire(first), self.space.wire(last)));
            let nak = self.control(now, UdtControl::Nak { losses: report });
            self.send(nak, out);
            self.counters.naks += 1;
        }
        if payload != self.cfg.payload() {
            // An irregular size usually ends a message: acknowledge at once.
            self.next_ack_time = now;
        }
        if n >= self.received_end {
            self.received_end = n + 1;
        } else {
            self.losses.remove(n);
        }
    }

    fn check_timers(&mut self, now: Time, out: &mut Outbox) {
        if now > self.next_ack_time {
            self.send_full_ack(now, out);
            self.next_ack_time = now + SYN;
            self.packets_since_ack = 0;
            self.light_acks = 1;
        } else if LIGHT_ACK_PACKETS * self.light_acks <= self.packets_since_ack {
            let ack = self.ack_point();
            if ack != self.last_ack_ack {
                let light = self.control(now, UdtControl::LightAck { last_seq: self.space.wire(ack) });
                self.send(light, out);
            }
            self.light_acks += 1;
        }
    }

    fn deliver_to(&mut self, now: Time, ack: u64) {
        for n in self.last_ack..ack {
            let bytes = self.buffer.pop_front().flatten().unwrap_or(0);
            self.common.bytes_delivered += bytes as u64;
            if let Some(d) = &mut self.deliveries {
                d.push(n);
            }
        }
        self.last_ack = ack;
        if self.expected.is_some_and(|e| self.common.bytes_delivered >= e) && self.finished_at.is_none() {
            self.finished_at = Some(now);
        }
    }

    fn send_full_ack(&mut self, now: Time, out: &mut Outbox) {
        let ack = self.ack_point();
        if ack == self.last_ack_ack {
            return;
        }
        // 4.11 makes the acknowledged data readable, then measures the free buffer for this ACK
        // before the reader can have taken it: the ACK advertises that data as still held.
        let unread = ack.saturating_sub(self.last_ack);
        if ack > self.last_ack {
            self.deliver_to(now, ack);
        } else if ack == self.last_ack {
            let quiet = micros((self.rtt_us + 4 * self.rtt_var_us).max(0) as u64);
            if now - self.last_rate_ack_time < quiet {
                return;
            }
        } else {
            return;
        }
        if self.last_ack <= self.last_ack_ack {
            return;
        }
        self.ack_seq = self.ack_seq.wrapping_add(1);
        let rates = (now - self.last_rate_ack_time > SYN).then(|| UdtRates {
            arrival: self.arrivals.packets_per_second(),
            capacity: self.pairs.packets_per_second(),
        });
        if rates.is_some() {
            self.last_rate_ack_time = now;
        }
        let body = UdtControl::Ack {
            ack_seq: self.ack_seq,
            last_seq: self.space.wire(self.last_ack),
            rtt_us: self.rtt_us as u32,
            rtt_var_us: self.rtt_var_us as u32,
            available_buffer: self.available_buffer().saturating_sub(unread).max(2) as u32,
            rates,
        };
        let packet = self.control(now, body);
        self.send(packet, out);
        if self.ack_history.len() == ACK_HISTORY {
            self.ack_history.pop_front();
        }
        self.ack_history.push_back((self.ack_seq, self.last_ack, now));
    }

    fn on_ack2(&mut self, now: Time, ack_seq: u32) {
        let Some(&(_, ack, sent)) = self.ack_history.iter().find(|(seq, _, _)| *seq == ack_seq) else {
            return;
        };
        let rtt = ((now - sent) / 1000) as i64;
        if rtt <= 0 {
            return;
        }
        self.rtt_var_us = (self.rtt_var_us * 3 + (rtt - self.rtt_us).abs()) >> 2;
        self.rtt_us = (self.rtt_us * 7 + rtt) >> 3;
        self.last_ack_ack = self.last_ack_ack.max(ack);
    }

    /// Keeps the number of every packet delivered (tests of exactly-once delivery).
    pub fn record_deliveries(&mut self) {
        self.deliveries = Some(Vec::new());
    }

    pub fn deliveries(&self) -> Option<&[u64]> {
        self.deliveries.as_deref()
    }

    pub fn losses(&self) -> &LossList {
        &self.losses
    }

    pub fn rtt_us(&self) -> i64 {
        self.rtt_us
    }

    pub fn rtt_var_us(&self) -> i64 {
        self.rtt_var_us
    }
}

fn us(t: Time) -> i64 {
    (t / 1000) as i64
}

impl Endpoint for UdtReceiver {
    fn on_packet(&mut self, now: Time, packet: &Packet, out: &mut Outbox) {
        let Header::Udt(header) = &packet.header else {
            self.counters.ignored += 1;
            return;
        };
        match *header {
            UdtHeader::Data { seq, .. } => {
                let payload = packet.wire_bytes.saturating_sub(IP_UDP_BYTES + UDT_HEADER_BYTES);
                self.on_data(now, seq, payload, out);
                self.check_timers(now, out);
            }
            UdtHeader::Control { body: UdtControl::Ack2 { ack_seq }, .. } => self.on_ack2(now, ack_seq),
            UdtHeader::Control { .. } => {}
        }
    }

    fn on_timer(&mut self, now: Time, out: &mut Outbox) {
        self.check_timers(now, out);
    }

    fn next_wakeup(&self) -> Time {
        if self.ack_point() == self.last_ack_ack {
            NEVER
        } else {
            self.next_ack_time + 1
        }
    }

    fn counters(&self) -> Counters {
        let c = &self.counters;
        self.common.with_counts(&[
            ("duplicates", c.duplicates),
            ("beyond_buffer", c.beyond_buffer),
            ("naks_sent", c.naks),
            ("ignored", c.ignored),
        ])
    }

    fn finished_at(&self) -> Option<Time> {
        self.finished_at
    }

    fn is_closed(&self) -> bool {
        self.finished_at.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_wire::time::millis;

    fn data(seq: u32, payload: u32) -> Packet {
        let header = UdtHeader::Data { seq, msg: 0, timestamp_us: 0, dst_socket: 2 };
        Packet::new(Header::Udt(header), payload + UDT_HEADER_BYTES + IP_UDP_BYTES)
    }

    fn ack2(ack_seq: u32) -> Packet {
        let body = UdtControl::Ack2 { ack_seq };
        Packet::new(Header::Udt(UdtHeader::Control { timestamp_us: 0, dst_socket: 2, body }), 48)
    }

    /// Runs the receiver's timer at each wake-up up to `until`.
    fn run(r: &mut UdtReceiver, until: Time, out: &mut Outbox) {
        while r.next_wakeup() <= until {
            r.on_timer(r.next_wakeup(), out);
        }
    }

    /// (ACK sequence number, acknowledged number, whether it carried rates, available buffer) of each full ACK.
    fn full_acks(out: &Outbox) -> Vec<(u32, u32, bool, u32)> {
        out.packets
            .iter()
            .filter_map(|p| match p.header {
                Header::Udt(UdtHeader::Control {
                    body: UdtControl::Ack { ack_seq, last_seq, available_buffer, rates, .. },
                    ..
                }) => Some((ack_seq, last_seq, rates.is_some(), available_buffer)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn full_ack_rates_repeats_and_ack2_follow_udt_4_11() {
        let mut r = UdtReceiver::new(UdtConfig::default());
        let mut out = Outbox::default();
        let full = UdtConfig::default().payload();
        r.on_packet(millis(1), &data(0, full), &mut out);
        // The first full ACK, just past SYN, carries the rates. The buffer it
        // advertises is 8192 less one slot less the packet it acknowledges,
        // which the application has not read yet.
        run(&mut r, millis(11), &mut out);
        assert_eq!(full_acks(&out), [(1, 1, true, 8190)]);
        r.on_packet(millis(12), &data(1, full), &mut out);
        // A short packet asks for an ACK at once; less than SYN after the
        // last ACK with rates, this one has none (16 bytes).
        r.on_packet(millis(15), &data(2, 100), &mut out);
        run(&mut r, millis(16), &mut out);
        assert_eq!(full_acks(&out)[1..], [(2, 3, false, 8189)]);
        // Nothing new: the same number again only RTT + 4 RTTVar (300 ms)
        // after the last ACK with rates, here the one just past 10 ms.
        out.packets.clear();
        run(&mut r, millis(310), &mut out);
        assert!(full_acks(&out).is_empty());
        run(&mut r, millis(330), &mut out);
        assert_eq!(full_acks(&out), [(3, 3, true, 8191)], "nothing newly acknowledged is unread");
        // The sender's ACK2 gives an RTT sample and confirms the number:
        // no further ACK for it.
        r.on_packet(millis(340), &ack2(2), &mut out);
        // ACK 2 left 1 ns after 15 ms (UDT fires past the deadline): 324 999 µs whole.
        let rtt = 324_999;
        assert_eq!(r.rtt_us(), (100_000 * 7 + rtt) >> 3);
        assert_eq!(r.next_wakeup(), NEVER);
    }
}
