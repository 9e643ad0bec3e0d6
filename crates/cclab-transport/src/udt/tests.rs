//! The UDT sender and receiver together over an in-memory path: FIFO links
//! with a rate, a delay, a buffer in packets and a drop rule, so the rules
//! can be checked where they meet (delivery, ACK timing, rate control).

use super::receiver::UdtReceiver;
use super::sender::UdtSender;
use super::{UdtConfig, SYN};
use crate::app::App;
use crate::registry::defaults;
use cclab_wire::random::SplitMix64;
use cclab_wire::time::{millis, secs};
use cclab_wire::{udt_codec, Endpoint, Header, Outbox, Packet, Time, UdtControl, UdtHeader};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};

type DropRule = Box<dyn FnMut(&Packet) -> bool>;

struct Link {
    rate_bps: u64,
    delay: Time,
    limit: usize,
    departures: VecDeque<Time>,
    busy_until: Time,
    drop: DropRule,
    drops: u64,
}

impl Link {
    fn new(rate_bps: u64, delay: Time, limit: usize) -> Self {
        Self {
            rate_bps,
            delay,
            limit,
            departures: VecDeque::new(),
            busy_until: 0,
            drop: Box::new(|_| false),
            drops: 0,
        }
    }

    /// When `p` arrives at the far end, or `None` if the link drops it.
    fn admit(&mut self, now: Time, p: &Packet) -> Option<Time> {
        while self.departures.front().is_some_and(|&d| d <= now) {
            self.departures.pop_front();
        }
        if self.departures.len() >= self.limit || (self.drop)(p) {
            self.drops += 1;
            return None;
        }
        let tx = p.wire_bytes as u64 * 8 * 1_000_000_000 / self.rate_bps;
        let departure = now.max(self.busy_until) + tx;
        self.busy_until = departure;
        self.departures.push_back(departure);
        Some(departure + self.delay)
    }
}

struct Path {
    sender: UdtSender,
    receiver: UdtReceiver,
    forward: Link,
    backward: Link,
    events: BinaryHeap<Reverse<(Time, u64)>>,
    packets: HashMap<u64, (bool, Packet)>,
    next_id: u64,
    /// Control packets each way, by kind: (time, body).
    controls: Vec<(Time, bool, UdtControl)>,
    /// (time, payload bytes) of each data packet the receiver got.
    arrivals: Vec<(Time, u32)>,
}

impl Path {
    fn new(cfg: UdtConfig, cc: &str, forward: Link, backward: Link) -> Self {
        let cc = defaults::udt_congestion_control(cc).unwrap_or_else(|e| panic!("{e}"));
        let mut receiver = UdtReceiver::new(cfg);
        receiver.record_deliveries();
        Self {
            sender: UdtSender::new(cfg, cc),
            receiver,
            forward,
            backward,
            events: BinaryHeap::new(),
            packets: HashMap::new(),
            next_id: 0,
            controls: Vec::new(),
            arrivals: Vec::new(),
        }
    }

    fn post(&mut self, now: Time, out: Outbox, to_receiver: bool) {
        for p in out.packets {
            let Header::Udt(h) = p.header else { panic!("a UDT endpoint sent {p:?}") };
            // Every packet an endpoint sends encodes to UDT 4's bytes and back.
            let mut bytes = Vec::new();
            udt_codec::encode(&h, &mut bytes).unwrap_or_else(|e| panic!("{h:?}: {e}"));
            assert_eq!(udt_codec::decode(&bytes).map(|(read, _)| read), Ok(h));
            if let UdtHeader::Control { body, .. } = h {
                self.controls.push((now, to_receiver, body));
            }
            let link = if to_receiver { &mut self.forward } else { &mut self.backward };
            if let Some(at) = link.admit(now, &p) {
                self.next_id += 1;
                self.events.push(Reverse((at, self.next_id)));
                self.packets.insert(self.next_id, (to_receiver, p));
            }
        }
    }

    fn run(&mut self, until: Time) {
        loop {
            let next_packet = self.events.peek().map_or(Time::MAX, |e| e.0 .0);
            let (ws, wr) = (self.sender.next_wakeup(), self.receiver.next_wakeup());
            let t = next_packet.min(ws).min(wr);
            if t >= until {
                return;
            }
            let mut out = Outbox::default();
            if next_packet == t {
                let Some(Reverse((_, id))) = self.events.pop() else { return };
                let Some((to_receiver, p)) = self.packets.remove(&id) else { continue };
                if to_receiver {
                    if matches!(p.header, Header::Udt(UdtHeader::Data { .. })) {
                        self.arrivals.push((t, p.wire_bytes - 44));
                    }
                    self.receiver.on_packet(t, &p, &mut out);
                } else {
                    self.sender.on_packet(t, &p, &mut out);
                }
                self.post(t, out, !to_receiver);
            } else if ws == t {
                self.sender.on_timer(t, &mut out);
                self.post(t, out, true);
            } else {
                self.receiver.on_timer(t, &mut out);
                self.post(t, out, false);
            }
        }
    }

    fn delivered_exactly_once_in_order(&self, packets: u64) -> bool {
        let d = self.receiver.deliveries().unwrap_or(&[]);
        d.len() as u64 == packets && d.iter().enumerate().all(|(i, &n)| i as u64 == n)
    }

    fn count(&self, to_receiver: bool, kind: fn(&UdtControl) -> bool) -> usize {
        self.controls.iter().filter(|(_, dir, c)| *dir == to_receiver && kind(c)).count()
    }
}

fn random_loss(seed: u64, percent: f64) -> DropRule {
    let mut rng = SplitMix64::new(seed);
    Box::new(move |_| (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 100.0 < percent)
}

fn transfer(bytes: u64) -> UdtConfig {
    UdtConfig { app: App::Transfer { bytes }, ..UdtConfig::default() }
}

#[test]
fn every_byte_arrives_exactly_once_and_in_order_under_random_loss_up_to_10_percent() {
    let bytes = 3000 * 1456 + 77;
    for percent in [0.0, 1.0, 5.0, 10.0] {
        for seed in 1..=4 {
            let mut forward = Link::new(20_000_000, millis(10), 200);
            forward.drop = random_loss(seed, percent);
            let mut backward = Link::new(20_000_000, millis(10), 200);
            backward.drop = random_loss(seed + 100, percent);
            let mut path = Path::new(transfer(bytes), "udt", forward, backward);
            path.run(secs(300));
            let c = path.receiver.counters();
            assert!(path.delivered_exactly_once_in_order(3001), "{percent} % seed {seed}: {c:?}");
            assert_eq!(c.bytes_delivered, bytes, "{percent} % seed {seed}");
            assert!(path.sender.finished_at().is_some(), "{percent} % seed {seed}");
        }
    }
}

#[test]
fn each_variant_delivers_a_transfer_intact_under_loss() {
    for cc in ["udt_rtt_banded", "udt_prediction", "udt_combined"] {
        let mut forward = Link::new(50_000_000, millis(25), 500);
        forward.drop = random_loss(7, 2.0);
        let mut path = Path::new(transfer(2000 * 1456), cc, forward, Link::new(50_000_000, millis(25), 500));
        path.run(secs(300));
        assert!(path.delivered_exactly_once_in_order(2000), "{cc}");
    }
}

#[test]
fn full_acks_come_every_syn_light_acks_every_64_packets_and_each_full_ack_gets_an_ack2() {
    // 100 Mbit/s, 10 ms each way, no loss, 2 s.
    let mut path = Path::new(
        UdtConfig::default(),
        "udt",
        Link::new(100_000_000, millis(10), 10_000),
        Link::new(100_000_000, millis(10), 10_000),
    );
    path.run(secs(2));
    let full: Vec<Time> = path
        .controls
        .iter()
        .filter(|(_, to_r, c)| !to_r && matches!(c, UdtControl::Ack { .. }))
        .map(|(t, _, _)| *t)
        .collect();
    assert!(full.len() > 150, "{} full ACKs in 2 s", full.len());
    // After slow start the sender never pauses, so every SYN has news to acknowledge.
    let steady: Vec<Time> = full.iter().copied().filter(|&t| t > secs(1)).collect();
    for pair in steady.windows(2) {
        let gap = pair[1] - pair[0];
        assert!(gap > SYN && gap < SYN + millis(1), "full ACKs {gap} ns apart");
    }
    // Every full ACK that had time to reach the sender (one way is 10 ms) was answered.
    let answerable = full.iter().filter(|&&t| t < secs(2) - millis(11)).count();
    let ack2s = path.count(true, |c| matches!(c, UdtControl::Ack2 { .. }));
    assert_eq!(ack2s, answerable, "an ACK2 for every full ACK a SYN apart");
    // About 8300 packets per second: 83 per SYN, so one light ACK per SYN.
    let light = path.count(false, |c| matches!(c, UdtControl::LightAck { .. }));
    let received = path.arrivals.len() as f64;
    let expected =
        received / (received / full.len() as f64).max(1.0) * ((received / full.len() as f64) / 64.0).floor();
    assert!(
        (light as f64 - expected).abs() <= 0.1 * expected + 5.0,
        "{light} light ACKs, expected ~{expected}"
    );
    assert_eq!(path.count(false, |c| matches!(c, UdtControl::Nak { .. })), 0);
}

#[test]
fn a_lost_packet_is_reported_at_once_and_retransmitted_before_new_data() {
    let mut forward = Link::new(100_000_000, millis(10), 10_000);
    let mut n = 0u64;
    forward.drop = Box::new(move |p| {
        let data = matches!(p.header, Header::Udt(UdtHeader::Data { .. }));
        n += u64::from(data);
        data && n == 100
    });
    let mut path =
        Path::new(transfer(1000 * 1456), "udt", forward, Link::new(100_000_000, millis(10), 10_000));
    path.run(secs(5));
    let naks: Vec<_> = path
        .controls
        .iter()
        .filter_map(|(t, to_r, c)| match c {
            UdtControl::Nak { losses } if !to_r => Some((*t, losses.as_slice().to_vec())),
            _ => None,
        })
        .collect();
    assert_eq!(naks.len(), 1, "{naks:?}");
    assert_eq!(naks[0].1, [(99, 99)], "the 100th packet, number 99");
    // The NAK left when packet 100 arrived, the one after the gap.
    let arrival_of_100 = path.arrivals[99].0;
    assert_eq!(naks[0].0, arrival_of_100);
    assert!(path.delivered_exactly_once_in_order(1000));
    assert_eq!(path.sender.counters().extra.count("retransmits"), 1);
}

#[test]
fn native_udt_fills_a_clean_1_gbit_100_ms_path_within_10_s() {
    // Queue of one BDP at the bottleneck; 1500-byte packets. The flow window
    // is UDT's flow-control limit UDT_FC (25 600 packets), and both buffers
    // are that large: with 4.11's defaults of 8192 packets the window's right
    // edge moves only at full ACKs, a SYN apart, and each ACK advertises the
    // buffer less what it acknowledges, so fewer than 8192 packets cover
    // RTT + SYN and the link stays below 90 % busy.
    let bdp_packets = (1e9 * 0.1 / (1500.0 * 8.0)) as usize;
    let cfg = UdtConfig {
        flow_window: 25_600,
        receive_buffer: 25_600,
        send_buffer: 25_600,
        ..UdtConfig::default()
    };
    let mut path = Path::new(
        cfg,
        "udt",
        Link::new(1_000_000_000, millis(50), bdp_packets),
        Link::new(1_000_000_000, millis(50), bdp_packets),
    );
    path.run(secs(10));
    let last_second: u64 =
        path.arrivals.iter().filter(|(t, _)| *t >= secs(9)).map(|(_, b)| *b as u64 + 44).sum();
    let utilisation = last_second as f64 * 8.0 / 1e9;
    assert!(utilisation >= 0.90, "utilisation in 9-10 s: {utilisation:.3}");
}

#[test]
fn the_sender_survives_random_and_nonsense_control_packets() {
    let mut rng = SplitMix64::new(42);
    let mut sender =
        UdtSender::new(UdtConfig::default(), defaults::udt_congestion_control("udt").expect("udt"));
    let mut receiver = UdtReceiver::new(UdtConfig::default());
    let mut out = Outbox::default();
    sender.on_timer(0, &mut out);
    for i in 0..20_000u64 {
        let r = |rng: &mut SplitMix64| rng.next_u64() as u32;
        let body = match rng.next_u64() % 5 {
            0 => UdtControl::LightAck { last_seq: r(&mut rng) & 0x7FFF_FFFF },
            1 => UdtControl::Ack {
                ack_seq: r(&mut rng),
                last_seq: r(&mut rng) & 0x7FFF_FFFF,
                rtt_us: r(&mut rng),
                rtt_var_us: r(&mut rng),
                available_buffer: r(&mut rng),
                rates: None,
            },
            2 => {
                let mut losses = cclab_wire::UdtLossList::default();
                let a = r(&mut rng) & 0x7FFF_FFFF;
                losses.push((a, a.saturating_add(r(&mut rng) % 50) & 0x7FFF_FFFF));
                UdtControl::Nak { losses }
            }
            3 => UdtControl::Ack2 { ack_seq: r(&mut rng) },
            _ => UdtControl::KeepAlive,
        };
        let now = millis(i);
        let control =
            Packet::new(Header::Udt(UdtHeader::Control { timestamp_us: 0, dst_socket: 1, body }), 60);
        let data = Packet::new(
            Header::Udt(UdtHeader::Data {
                seq: r(&mut rng) & 0x7FFF_FFFF,
                msg: 0,
                timestamp_us: 0,
                dst_socket: 2,
            }),
            1500,
        );
        sender.on_packet(now, &control, &mut out);
        receiver.on_packet(now, &data, &mut out);
        receiver.on_packet(now, &control, &mut out);
        sender.on_timer(now.max(sender.next_wakeup().min(now)), &mut out);
        out.packets.clear();
    }
    // The receiver's buffer is bounded whatever numbers arrive.
    assert!(receiver.counters().extra.count("beyond_buffer") > 0);
}
