//! Helpers shared by the TCP sender tests: a sender fed hand-made ACKs, and an
//! in-memory path joining a sender and a receiver.

use super::*;
use crate::registry::defaults;
use cclab_wire::time::millis;
use cclab_wire::{Endpoint, Header, Outbox, Packet, TcpHeader, TcpKind, Time};

pub(super) const MSS: u64 = 1000;

pub(super) fn config(initial_window: u32, sack: bool) -> TcpConfig {
    TcpConfig { initial_window, sack, min_rto: millis(200), ..TcpConfig::default() }
}

pub(super) fn sender(recovery: &str, cfg: &TcpConfig) -> TcpSender {
    TcpSender::new(
        cfg,
        defaults::congestion_control("reno").unwrap(),
        defaults::loss_recovery(recovery).unwrap(),
        None,
    )
}

/// Starts the sender at t = 0; returns the segments it sent.
pub(super) fn start(s: &mut TcpSender) -> Vec<u64> {
    let mut out = Outbox::default();
    s.on_timer(0, &mut out);
    segs(&out.packets)
}

pub(super) fn segs(packets: &[Packet]) -> Vec<u64> {
    packets.iter().filter_map(|p| p.tcp()).map(|h| h.seq / MSS).collect()
}

pub(super) fn ack_packet(ack_seg: u64, ts_ecr: Time, sack: &[(u64, u64)]) -> Packet {
    let mut h = TcpHeader::new(TcpKind::Ack);
    h.ack = ack_seg * MSS;
    h.window = u32::MAX;
    h.ts_ecr = ts_ecr;
    for &(a, b) in sack {
        h.push_sack((a * MSS, b * MSS));
    }
    Packet::new(Header::Tcp(h), 40)
}

/// The same ACK echoing a congestion mark (ECN-Echo).
pub(super) fn echoing_mark(mut ack: Packet) -> Packet {
    if let Header::Tcp(h) = &mut ack.header {
        h.ece = true;
    }
    ack
}

/// Feeds one ACK packet; returns the segments the sender sent in answer.
pub(super) fn feed(s: &mut TcpSender, now: Time, ack: &Packet) -> Vec<u64> {
    let mut out = Outbox::default();
    s.on_packet(now, ack, &mut out);
    segs(&out.packets)
}

/// Feeds an ACK for `ack_seg` segments with SACK blocks given in segments.
pub(super) fn ack(s: &mut TcpSender, now: Time, ack_seg: u64, sack: &[(u64, u64)]) -> Vec<u64> {
    feed(s, now, &ack_packet(ack_seg, 0, sack))
}

pub(super) fn cwnd(s: &TcpSender) -> f64 {
    s.state().window.cwnd
}

pub(super) fn ssthresh(s: &TcpSender) -> f64 {
    s.state().window.ssthresh
}

/// Decides whether a data transmission is dropped, from its segment and how
/// many times that segment has been sent (1 for the first transmission).
pub(super) type DropRule = Box<dyn FnMut(u64, u32) -> bool>;

/// Drops `percent` % of data transmissions, reproducibly for a seed.
pub(super) fn random_loss(seed: u64, percent: u64) -> DropRule {
    let mut rng = cclab_wire::random::SplitMix64::new(seed);
    Box::new(move |_seg, _n| rng.next_u64() % 100 < percent)
}

/// Sender and receiver joined by a fixed-delay path that drops chosen data
/// transmissions (by segment and transmission count) or a random fraction.
pub(super) struct Path {
    pub(super) sender: TcpSender,
    pub(super) receiver: TcpReceiver,
    one_way: Time,
    in_flight: Vec<(Time, u64, bool, Packet)>,
    seq: u64,
    sends: std::collections::HashMap<u64, u32>,
    drop: DropRule,
}

impl Path {
    /// A Reno sender with the named loss recovery.
    pub(super) fn new(recovery: &str, cfg: &TcpConfig, drop: DropRule) -> Self {
        Self::with_sender(sender(recovery, cfg), cfg, drop)
    }

    pub(super) fn with_sender(sender: TcpSender, cfg: &TcpConfig, drop: DropRule) -> Self {
        let mut receiver = TcpReceiver::new(cfg);
        receiver.record_deliveries();
        Self {
            sender,
            receiver,
            one_way: millis(50),
            in_flight: Vec::new(),
            seq: 0,
            sends: Default::default(),
            drop,
        }
    }

    fn post(&mut self, now: Time, packets: Vec<Packet>, to_receiver: bool) {
        for p in packets {
            if to_receiver {
                let seq = p.tcp().map_or(0, |h| h.seq);
                let n = self.sends.entry(seq).or_insert(0);
                *n += 1;
                if (self.drop)(seq / MSS, *n) {
                    continue;
                }
            }
            self.seq += 1;
            self.in_flight.push((now + self.one_way, self.seq, to_receiver, p));
        }
    }

    /// Gives the sender a control input at `now` (between two runs).
    pub(super) fn control(&mut self, now: Time, control: cclab_wire::Control) {
        let mut out = Outbox::default();
        let _ = self.sender.on_control(now, control, &mut out);
        self.post(now, out.packets, true);
    }

    pub(super) fn run(&mut self, until: Time) {
        loop {
            let next_packet = self.in_flight.iter().map(|e| (e.0, e.1)).min();
            let wake_s = self.sender.next_wakeup();
            let wake_r = self.receiver.next_wakeup();
            let t = next_packet.map_or(Time::MAX, |k| k.0).min(wake_s).min(wake_r);
            if t >= until {
                return;
            }
            let mut out = Outbox::default();
            if wake_s == t {
                self.sender.on_timer(t, &mut out);
                self.post(t, std::mem::take(&mut out.packets), true);
            } else if wake_r == t {
                self.receiver.on_timer(t, &mut out);
                self.post(t, std::mem::take(&mut out.packets), false);
            } else {
                let key = next_packet.unwrap_or_default();
                let i = self.in_flight.iter().position(|e| (e.0, e.1) == key).unwrap_or(0);
                let (_, _, to_receiver, p) = self.in_flight.swap_remove(i);
                if to_receiver {
                    self.receiver.on_packet(t, &p, &mut out);
                } else {
                    self.sender.on_packet(t, &p, &mut out);
                }
                self.post(t, std::mem::take(&mut out.packets), !to_receiver);
            }
        }
    }

    pub(super) fn delivered_exactly_once_in_order(&self, bytes: u64) -> bool {
        let mut expect = 0;
        for &(a, b) in self.receiver.deliveries().unwrap_or(&[]) {
            if a != expect || b <= a {
                return false;
            }
            expect = b;
        }
        expect == bytes
    }
}

pub(super) fn transfer(bytes: u64, sack: bool) -> TcpConfig {
    TcpConfig { app: App::Transfer { bytes }, max_window: Some(64), ..config(4, sack) }
}
