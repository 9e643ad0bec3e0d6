//! The TCP data receiver.
//!
//! - Cumulative ACKs carry the next byte expected (`rcv_nxt`); out-of-order data
//!   is kept as sorted byte intervals and delivered once the gap below it fills,
//!   so the application sees every byte exactly once and in order.
//! - ACK timing, RFC 5681 §4.2 and RFC 1122 §4.2.3.2: with delayed ACKs, ACK every
//!   second in-order segment or when the delayed-ACK timer expires; always ACK at
//!   once for an out-of-order segment, a duplicate, or one that fills (part of) a gap.
//! - SACK, RFC 2018 §4: the first block is the one holding the segment that
//!   triggered the ACK (unless it advanced `rcv_nxt`); the rest repeat the most
//!   recently reported blocks; at most 3 blocks beside the timestamp option, 4 without.
//! - Timestamps, RFC 7323 §4.3: TS.Recent is updated from a segment with
//!   `SEG.SEQ <= Last.ACK.sent`, so a delayed ACK echoes the earlier segment and a
//!   duplicate ACK echoes the last in-order one.
//! - Congestion marks (CE) are echoed (ECE) on the next ACK.
//! - ECN feedback: with RFC 3168 feedback ECN-Echo is set on the next ACK
//!   after a CE mark only (no CWR is modelled, so it is not repeated until
//!   one arrives, RFC 3168 §6.1.3: a lost ACK loses the mark); with AccECN
//!   every ACK carries the count of CE-marked payload bytes, but the draft's
//!   immediate ACK on a change of CE state is not modelled (with delayed
//!   ACKs the count arrives up to one delayed-ACK interval later; it stays
//!   exact).

use super::timers::{Timer, Timers};
use super::{EcnFeedback, TcpConfig};
use cclab_wire::{
    BaseCounts, Counters, Endpoint, Header, Outbox, Packet, TcpHeader, TcpKind, Time, MAX_SACK_BLOCKS,
};
use std::collections::VecDeque;

pub struct TcpReceiver {
    header_bytes: u32,
    /// What ACKs advertise: the configured window, at most the 4 GiB the header holds.
    window_bytes: u32,
    sack: bool,
    max_sack_blocks: usize,
    delayed_ack: bool,
    delack_timeout: Time,
    timestamps: bool,

    rcv_nxt: u64,
    /// Received data above `rcv_nxt`: sorted, disjoint, non-adjacent `[start, end)`.
    /// A deque: filling the lowest hole removes from the front, and new data
    /// mostly extends the back, so neither shifts the thousands of blocks a
    /// large window can hold.
    out_of_order: VecDeque<(u64, u64)>,
    /// Blocks in the order they should be reported, most recent first.
    sack_history: Vec<(u64, u64)>,
    ts_recent: Time,
    last_ack_sent: u64,
    unacked_segments: u32,
    timers: Timers,
    /// A CE mark arrived since the last ACK (RFC 3168's echo, `Classic` feedback).
    ce_pending: bool,
    feedback: EcnFeedback,
    /// AccECN's r.ceb: payload bytes of every CE-marked data segment received
    /// (draft-ietf-tcpm-accurate-ecn §3.2.1), wrapping; echoed on every ACK
    /// with `Accurate` feedback.
    ce_bytes: u32,
    /// Where the stream ends, once a segment carrying FIN arrived: when all
    /// of it is in and acknowledged, the receiver has nothing left to do.
    fin_at: Option<u64>,
    counters: BaseCounts,
    /// When enabled (tests), every delivery to the application as `[start, end)`.
    delivery_log: Option<Vec<(u64, u64)>>,
}

impl TcpReceiver {
    pub fn new(cfg: &TcpConfig) -> Self {
        Self {
            header_bytes: cfg.header_bytes,
            window_bytes: cfg.advertised_window_bytes(),
            sack: cfg.sack,
            max_sack_blocks: if cfg.timestamps { 3 } else { MAX_SACK_BLOCKS },
            delayed_ack: cfg.delayed_ack,
            delack_timeout: cfg.delack_timeout,
            timestamps: cfg.timestamps,
            rcv_nxt: 0,
            out_of_order: VecDeque::new(),
            sack_history: Vec::new(),
            ts_recent: 0,
            last_ack_sent: 0,
            unacked_segments: 0,
            timers: Timers::default(),
            ce_pending: false,
            feedback: cfg.ecn,
            ce_bytes: 0,
            fin_at: None,
            counters: BaseCounts::default(),
            delivery_log: None,
        }
    }

    /// Records every delivery to the application (for invariant tests).
    pub fn record_deliveries(&mut self) {
        self.delivery_log = Some(Vec::new());
    }

    pub fn deliveries(&self) -> Option<&[(u64, u64)]> {
        self.delivery_log.as_deref()
    }

    fn deliver(&mut self, from: u64, to: u64) {
        self.counters.bytes_delivered += to - from;
        if let Some(log) = self.delivery_log.as_mut() {
            log.push((from, to));
        }
    }

    /// Inserts `[start, end)` above `rcv_nxt`; returns the merged interval holding it.
    fn insert_out_of_order(&mut self, start: u64, end: u64) -> (u64, u64) {
        let mut merged = (start, end);
        // Intervals that overlap or touch [start, end) merge with it.
        let first = self.out_of_order.partition_point(|&(_, e)| e < start);
        let mut last = first;
        while last < self.out_of_order.len() && self.out_of_order[last].0 <= end {
            merged.0 = merged.0.min(self.out_of_order[last].0);
            merged.1 = merged.1.max(self.out_of_order[last].1);
            last += 1;
        }
        // Overwriting the first merged block in place: removing it and
        // inserting the union shifted up to half the deque twice per segment.
        if last == first {
            self.out_of_order.insert(first, merged);
        } else {
            self.out_of_order[first] = merged;
            if last > first + 1 {
                self.out_of_order.drain(first + 1..last);
            }
        }
        merged
    }

    fn remember_sack_block(&mut self, block: (u64, u64)) {
        // Older blocks inside the new one are now reported by it.
        self.sack_history.retain(|&(s, e)| e <= block.0 || s >= block.1);
        self.sack_history.insert(0, block);
        self.sack_history.truncate(MAX_SACK_BLOCKS);
    }

    fn send_ack(&mut self, out: &mut Outbox) {
        let mut p = TcpHeader::new(TcpKind::Ack);
        p.ack = self.rcv_nxt;
        p.window = self.window_bytes;
        p.ts_ecr = self.ts_recent;
        match self.feedback {
            EcnFeedback::Classic => p.ece = self.ce_pending,
            EcnFeedback::Accurate => p.ce_bytes = self.ce_bytes,
            EcnFeedback::Off => {}
        }
        if self.sack {
            for &(s, e) in self.sack_history.iter().take(self.max_sack_blocks) {
                p.push_sack((s, e));
            }
            // RFC 2018 §4: as many distinct blocks as fit. Blocks that fell out of
            // the recent history are still held; report them, highest first.
            for &(s, e) in self.out_of_order.iter().rev() {
                if p.sack().len() >= self.max_sack_blocks {
                    break;
                }
                if !p.sack().iter().any(|&(a, b)| a == s && b == e) {
                    p.push_sack((s, e));
                }
            }
        }
        out.send(Packet::new(Header::Tcp(p), self.header_bytes));
        self.counters.packets_sent += 1;
        self.counters.bytes_sent += self.header_bytes as u64;
        self.last_ack_sent = self.rcv_nxt;
        self.unacked_segments = 0;
        self.timers.cancel(Timer::DelayedAck);
        self.ce_pending = false;
    }

    fn on_data(&mut self, now: Time, p: &TcpHeader, ce: bool, out: &mut Outbox) {
        let (start, end) = (p.seq, p.seq + p.len as u64);
        self.ce_pending |= ce;
        if ce {
            self.ce_bytes = self.ce_bytes.wrapping_add(p.len);
        }
        if p.fin {
            self.fin_at = Some(end);
        }
        if end <= self.rcv_nxt {
            // Entirely old data (the ACK that covered it was lost or is late). RFC 7323
            // §5.3 rejects it before TS.Recent is considered (R2 before R3).
            self.send_ack(out);
            return;
        }
        if self.timestamps && p.ts_val >= self.ts_recent && start <= self.last_ack_sent {
            self.ts_recent = p.ts_val;
        }
        if start > self.rcv_nxt {
            let block = self.insert_out_of_order(start, end);
            self.remember_sack_block(block);
            self.send_ack(out);
            return;
        }

        let filled_gap = !self.out_of_order.is_empty();
        let from = self.rcv_nxt;
        self.rcv_nxt = end;
        if filled_gap {
            let joined = self.out_of_order.partition_point(|&(s, _)| s <= self.rcv_nxt);
            for &(_, e) in self.out_of_order.range(..joined) {
                self.rcv_nxt = self.rcv_nxt.max(e);
            }
            self.out_of_order.drain(..joined);
        }
        let rcv_nxt = self.rcv_nxt;
        self.sack_history.retain(|&(_, e)| e > rcv_nxt);
        self.deliver(from, rcv_nxt);

        if filled_gap || !self.delayed_ack {
            self.send_ack(out);
            return;
        }
        self.unacked_segments += 1;
        if self.unacked_segments >= 2 {
            self.send_ack(out);
        } else if !self.timers.is_running(Timer::DelayedAck) {
            self.timers.set(Timer::DelayedAck, now + self.delack_timeout);
        }
    }
}

impl Endpoint for TcpReceiver {
    fn on_packet(&mut self, now: Time, packet: &Packet, out: &mut Outbox) {
        self.counters.packets_received += 1;
        match packet.tcp() {
            Some(h) if h.kind == TcpKind::Data => self.on_data(now, h, packet.ce, out),
            _ => {}
        }
    }

    fn on_timer(&mut self, now: Time, out: &mut Outbox) {
        if self.timers.expired(Timer::DelayedAck, now) {
            if self.unacked_segments > 0 {
                self.send_ack(out);
            }
            self.timers.cancel(Timer::DelayedAck);
        }
    }

    fn next_wakeup(&self) -> Time {
        self.timers.next()
    }

    fn counters(&self) -> Counters {
        self.counters.counters()
    }

    /// Everything expected arrived and was acknowledged.
    fn is_closed(&self) -> bool {
        self.fin_at.is_some_and(|end| self.rcv_nxt >= end && self.last_ack_sent >= end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_wire::time::millis;
    use cclab_wire::NEVER;

    fn data(seq: u64, len: u32, ts: Time) -> Packet {
        let mut h = TcpHeader::new(TcpKind::Data);
        h.seq = seq;
        h.len = len;
        h.ts_val = ts;
        Packet::new(Header::Tcp(h), len + 40)
    }

    /// The TCP headers of what the receiver sent.
    fn headers(packets: Vec<Packet>) -> Vec<TcpHeader> {
        packets.iter().filter_map(|p| p.tcp().copied()).collect()
    }

    fn receiver(delayed: bool, sack: bool) -> TcpReceiver {
        let cfg = TcpConfig { delayed_ack: delayed, sack, ..TcpConfig::default() };
        let mut r = TcpReceiver::new(&cfg);
        r.record_deliveries();
        r
    }

    fn feed(r: &mut TcpReceiver, now: Time, p: Packet) -> Vec<TcpHeader> {
        let mut out = Outbox::default();
        r.on_packet(now, &p, &mut out);
        headers(out.packets)
    }

    #[test]
    fn in_order_segments_are_acked_one_by_one_without_delayed_acks() {
        let mut r = receiver(false, false);
        let mut out = Outbox::default();
        r.on_packet(0, &data(0, 1000, 1), &mut out);
        assert_eq!(out.packets.len(), 1);
        assert_eq!(out.packets[0].wire_bytes, 40);
        let acks = headers(out.packets);
        assert_eq!(acks[0].ack, 1000);
        assert_eq!(acks[0].ts_ecr, 1);
    }

    #[test]
    fn delayed_acks_every_second_segment_or_on_timer() {
        let mut r = receiver(true, false);
        assert!(feed(&mut r, 0, data(0, 1000, 0)).is_empty());
        assert_eq!(r.next_wakeup(), millis(200));
        let acks = feed(&mut r, 10, data(1000, 1000, 10));
        assert_eq!(acks.len(), 1);
        assert_eq!(acks[0].ack, 2000);
        // RFC 7323: the delayed ACK echoes the earlier of the two segments.
        assert_eq!(acks[0].ts_ecr, 0);
        assert_eq!(r.next_wakeup(), NEVER);

        assert!(feed(&mut r, 20, data(2000, 1000, 20)).is_empty());
        let mut out = Outbox::default();
        r.on_timer(20 + millis(200), &mut out);
        let sent = headers(out.packets);
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0].ack, 3000);
    }

    #[test]
    fn out_of_order_segment_gets_an_immediate_duplicate_ack_with_sack() {
        let mut r = receiver(true, true);
        feed(&mut r, 0, data(0, 1000, 0));
        let acks = feed(&mut r, 1, data(2000, 1000, 1));
        assert_eq!(acks.len(), 1);
        assert_eq!(acks[0].ack, 1000);
        assert_eq!(acks[0].sack(), &[(2000, 3000)]);
        // The duplicate ACK echoes the last in-order segment's timestamp.
        assert_eq!(acks[0].ts_ecr, 0);
    }

    #[test]
    fn gap_filling_segment_is_acked_at_once_and_delivers_everything() {
        let mut r = receiver(true, true);
        feed(&mut r, 0, data(0, 1000, 0));
        feed(&mut r, 1, data(2000, 1000, 1));
        feed(&mut r, 2, data(3000, 1000, 2));
        let acks = feed(&mut r, 3, data(1000, 1000, 3));
        assert_eq!(acks.len(), 1);
        assert_eq!(acks[0].ack, 4000);
        assert!(acks[0].sack().is_empty());
        assert_eq!(r.deliveries().unwrap(), &[(0, 1000), (1000, 4000)]);
    }

    #[test]
    fn first_sack_block_reports_the_latest_segment_then_recent_blocks() {
        let mut r = receiver(false, true);
        feed(&mut r, 0, data(1000, 1000, 0)); // hole at 0
        feed(&mut r, 1, data(3000, 1000, 1));
        feed(&mut r, 2, data(5000, 1000, 2));
        let acks = feed(&mut r, 3, data(6000, 1000, 3));
        assert_eq!(acks[0].sack(), &[(5000, 7000), (3000, 4000), (1000, 2000)]);
        // Three blocks fit beside timestamps; a fourth is not reported.
        feed(&mut r, 4, data(8000, 1000, 4));
        let acks = feed(&mut r, 5, data(10000, 1000, 5));
        assert_eq!(acks[0].sack().len(), 3);
        assert_eq!(acks[0].sack()[0], (10000, 11000));
    }

    #[test]
    fn old_duplicates_do_not_change_ts_recent() {
        let mut r = receiver(true, false);
        feed(&mut r, 0, data(0, 1000, 1));
        feed(&mut r, 1, data(1000, 1000, 2)); // ACK 2000, Last.ACK.sent = 2000
        assert!(feed(&mut r, 10, data(2000, 1000, 10)).is_empty(), "delayed");
        // An old duplicate with a newer timestamp must not be echoed.
        let acks = feed(&mut r, 40, data(0, 1000, 40));
        assert_eq!(acks[0].ack, 3000);
        assert_eq!(acks[0].ts_ecr, 10);
    }

    #[test]
    fn sack_blocks_are_refilled_from_held_data() {
        let mut r = receiver(false, true);
        for seg in [11u64, 9, 7, 5, 3, 1] {
            feed(&mut r, seg, data(seg * 1000, 1000, seg));
        }
        for seg in [0u64, 2, 4, 6] {
            feed(&mut r, 20 + seg, data(seg * 1000, 1000, 20 + seg));
        }
        let acks = feed(&mut r, 30, data(8000, 1000, 30)); // fills 8: ACK 10000
        assert_eq!(acks[0].ack, 10000);
        assert_eq!(acks[0].sack(), &[(11000, 12000)], "the block still held is reported");
    }

    #[test]
    fn duplicate_data_is_acked_and_not_delivered_twice() {
        let mut r = receiver(false, false);
        feed(&mut r, 0, data(0, 1000, 0));
        let acks = feed(&mut r, 1, data(0, 1000, 1));
        assert_eq!(acks.len(), 1);
        assert_eq!(acks[0].ack, 1000);
        assert_eq!(r.counters().bytes_delivered, 1000);
    }

    #[test]
    fn advertised_window_reflects_max_window() {
        let cfg = TcpConfig { max_window: Some(64), ..TcpConfig::default() };
        let mut r = TcpReceiver::new(&cfg);
        let acks = feed(&mut r, 0, data(0, 1000, 0));
        assert_eq!(acks[0].window, 64_000);
    }

    fn with_feedback(ecn: EcnFeedback, delayed_ack: bool) -> TcpReceiver {
        TcpReceiver::new(&TcpConfig { ecn, delayed_ack, ..TcpConfig::default() })
    }

    fn marked(mut p: Packet) -> Packet {
        p.ce = true;
        p
    }

    #[test]
    fn classic_feedback_echoes_a_mark_on_the_next_ack_only() {
        let mut r = with_feedback(EcnFeedback::Classic, false);
        let acks = feed(&mut r, 0, marked(data(0, 1000, 0)));
        assert!(acks[0].ece);
        assert_eq!(acks[0].ce_bytes, 0, "no AccECN field without AccECN");
        assert!(!feed(&mut r, 1, data(1000, 1000, 1))[0].ece);
    }

    #[test]
    fn without_ecn_nothing_is_echoed() {
        let mut r = with_feedback(EcnFeedback::Off, false);
        let acks = feed(&mut r, 0, marked(data(0, 1000, 0)));
        assert!(!acks[0].ece && acks[0].ce_bytes == 0);
    }

    /// draft-ietf-tcpm-accurate-ecn §3.2.1: r.ceb counts the payload bytes of
    /// every CE-marked segment, out of order and duplicate ones included, and
    /// every ACK carries the running count; ECE is not the classic echo.
    #[test]
    fn accurate_feedback_counts_ce_marked_payload_bytes_on_every_ack() {
        let mut r = with_feedback(EcnFeedback::Accurate, true);
        assert!(feed(&mut r, 0, marked(data(0, 1000, 0))).is_empty(), "delayed");
        let acks = feed(&mut r, 1, data(1000, 500, 1));
        assert_eq!((acks[0].ack, acks[0].ce_bytes, acks[0].ece), (1500, 1000, false));
        let acks = feed(&mut r, 2, marked(data(3000, 700, 2)));
        assert_eq!(acks[0].ce_bytes, 1700, "an out-of-order segment counts too");
        let acks = feed(&mut r, 3, marked(data(0, 1000, 3)));
        assert_eq!(acks[0].ce_bytes, 2700, "and a duplicate");
        let acks = feed(&mut r, 4, data(1500, 1500, 4));
        assert_eq!(acks[0].ce_bytes, 2700, "the count is repeated on unmarked ACKs");
    }

    #[test]
    fn the_ce_byte_count_wraps() {
        let mut r = with_feedback(EcnFeedback::Accurate, false);
        r.ce_bytes = u32::MAX - 10;
        assert_eq!(feed(&mut r, 0, marked(data(0, 1000, 0)))[0].ce_bytes, 989);
    }
}
