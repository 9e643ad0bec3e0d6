//! `cclab recv` against hostile input: random and truncated datagrams from
//! strangers, forged handshakes, and a peer that completes the handshake and
//! then sends random UDT packets. The receiver must not panic, must keep its
//! memory bounded by its receive buffer, and must still serve a real sender.

use crate::common;

use cclab_net::content::Source;
use cclab_net::driver::{Handle, Summary};
use cclab_net::stream::Framing;
use cclab_net::udt::handshake::{Caller, CallerState, Offer};
use cclab_net::udt::recv::{self, RecvSpec};
use cclab_net::udt::send::{self, SendSpec};
use cclab_net::udt::Tuning;
use cclab_wire::random::SplitMix64;
use cclab_wire::time::secs;
use cclab_wire::{udt_codec, UdtControl, UdtHeader, UdtLossList};
use common::*;
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

fn receiver(timeout_s: u64) -> Handle<Summary> {
    recv::start(RecvSpec {
        listen: "127.0.0.1:0".parse().unwrap(),
        out: None,
        idle_timeout: secs(timeout_s),
        tuning: Tuning::default(),
        framing: Framing::Framed,
    })
    .unwrap()
}

fn encode(header: &UdtHeader, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    udt_codec::encode(header, &mut out).unwrap();
    out.extend_from_slice(payload);
    out
}

/// A random UDT packet: data at any sequence number with any length, or any control type
/// with random fields; then perhaps truncated, perhaps with a flipped bit.
fn hostile_datagram(rng: &mut SplitMix64, socket_id: u32) -> Vec<u8> {
    let r = rng.next_u64();
    let word = |rng: &mut SplitMix64| rng.next_u64() as u32;
    let dst_socket = if r & 1 == 0 { socket_id } else { word(rng) };
    let header = match (r >> 1) % 7 {
        0..=2 => UdtHeader::Data {
            seq: word(rng) & 0x7FFF_FFFF,
            msg: word(rng),
            timestamp_us: word(rng),
            dst_socket,
        },
        3 => {
            UdtHeader::Control { timestamp_us: 0, dst_socket, body: UdtControl::Ack2 { ack_seq: word(rng) } }
        }
        4 => {
            let mut losses = UdtLossList::default();
            let a = word(rng) & 0x7FFF_FFFF;
            losses.push((a, a.saturating_add(word(rng) % 1000).min(0x7FFF_FFFF)));
            UdtHeader::Control { timestamp_us: 0, dst_socket, body: UdtControl::Nak { losses } }
        }
        5 => UdtHeader::Control {
            timestamp_us: 0,
            dst_socket,
            body: UdtControl::Ack {
                ack_seq: word(rng),
                last_seq: word(rng) & 0x7FFF_FFFF,
                rtt_us: word(rng),
                rtt_var_us: word(rng),
                available_buffer: word(rng),
                rates: None,
            },
        },
        _ => UdtHeader::Control { timestamp_us: 0, dst_socket, body: UdtControl::KeepAlive },
    };
    let payload_len = (rng.next_u64() % 2000) as usize;
    let payload: Vec<u8> = (0..payload_len).map(|_| rng.next_u64() as u8).collect();
    let mut bytes = encode(&header, &payload);
    match rng.next_u64() % 4 {
        0 => bytes.truncate((rng.next_u64() % (bytes.len() as u64 + 1)) as usize),
        1 => {
            let i = (rng.next_u64() % bytes.len() as u64) as usize;
            bytes[i] ^= 1 << (rng.next_u64() % 8);
        }
        _ => {}
    }
    bytes
}

/// Completes UDT 4's handshake with `server` from `socket`; returns the receiver's socket ID and the ISN.
fn handshake(socket: &UdpSocket, server: SocketAddr) -> (u32, u32) {
    let start = Instant::now();
    let now = || start.elapsed().as_nanos() as u64;
    let mut caller = Caller::new(now(), 77, 1234, Offer { mss: 1500, flow_window: 25_600 }, server);
    socket.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
    let mut buf = vec![0u8; 2048];
    loop {
        if let Some(h) = caller.poll(now()) {
            socket.send_to(&encode(&h, &[]), server).unwrap();
        }
        if let Ok((n, _)) = socket.recv_from(&mut buf) {
            if let Ok((h, _)) = udt_codec::decode(&buf[..n]) {
                caller.on_packet(&h);
            }
        }
        match caller.state() {
            CallerState::Connected(agreed) => return (agreed.peer_socket, agreed.isn),
            CallerState::Connecting => {}
            other => panic!("handshake failed: {other:?}"),
        }
    }
}

#[test]
fn strangers_garbage_and_forged_handshakes_are_counted_and_a_real_sender_still_gets_through() {
    let _serial = serial();
    let r = receiver(10);
    let stranger = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut rng = SplitMix64::new(2026);
    for i in 0..20_000u32 {
        let bytes = if i % 5 == 0 {
            // A handshake that skips the cookie exchange: request type -1 with a guessed cookie.
            let body = UdtControl::Handshake {
                version: 4,
                socket_type: 1,
                initial_seq: 1,
                mss: 1500,
                flow_window: 25_600,
                request: -1,
                socket_id: 5,
                cookie: rng.next_u64() as u32,
                peer_ip: [0; 4],
            };
            encode(&UdtHeader::Control { timestamp_us: 0, dst_socket: 0, body }, &[])
        } else {
            let socket_id = rng.next_u64() as u32;
            hostile_datagram(&mut rng, socket_id)
        };
        let _ = stranger.send_to(&bytes, r.local_addr);
    }
    std::thread::sleep(Duration::from_millis(300));
    let before = r.progress();
    assert!(!before.connected, "a guessed cookie must not open a connection");
    assert!(before.malformed + before.unexpected > 1000, "{before:?}");
    let sent = send::start(SendSpec {
        to: r.local_addr,
        source: Source::Bytes(2_000_000),
        cc: "udt".into(),
        cc_params: Vec::new(),
        duration: Some(secs(30)),
        tuning: Tuning::default(),
        framing: Framing::Framed,
    })
    .unwrap()
    .join()
    .unwrap();
    let received = r.join().unwrap();
    assert_eq!((received.content_bytes, received.checksum), (2_000_000, sent.checksum));
}

#[test]
fn a_connected_hostile_peer_cannot_crash_the_receiver_or_grow_its_memory() {
    let _serial = serial();
    let r = receiver(2);
    let peer = UdpSocket::bind("127.0.0.1:0").unwrap();
    let (socket_id, isn) = handshake(&peer, r.local_addr);
    let flooded = flood(r, &peer, |rng| {
        if !rng.next_u64().is_multiple_of(3) {
            return hostile_datagram(rng, socket_id);
        }
        // Data within the receive window, with the wrong sizes and contents.
        let seq = (isn + (rng.next_u64() % 9000) as u32) & 0x7FFF_FFFF;
        let header = UdtHeader::Data { seq, msg: 0, timestamp_us: 0, dst_socket: socket_id };
        encode(&header, &vec![0xAB; 1 + (rng.next_u64() % 1456) as usize])
    });
    // The hostile peer stops; the receiver gives up on it after its idle timeout, with an error, not a panic.
    let (outcome, grown_kib) = (flooded.outcome, flooded.grown_kib);
    assert!(outcome.is_err(), "a stream of garbage does not verify");
    // The receive buffer of 8192 packets of at most 1456 bytes bounds what is held (12 MB).
    assert!(grown_kib < 40 * 1024, "memory grew {grown_kib} KiB");
    assert!(flooded.malformed_or_unexpected > 0);
}

/// UDT 4.11 `checkTimers`: a receiver with nothing to send answers its EXP timer
/// with keep-alives, or a UDT 4 sender idle for about 40 s breaks the connection.
#[test]
fn a_connected_receiver_sends_keep_alives_to_a_quiet_sender() {
    let _serial = serial();
    let r = receiver(3);
    let peer = UdpSocket::bind("127.0.0.1:0").unwrap();
    handshake(&peer, r.local_addr);
    let started = Instant::now();
    let mut keep_alives = Vec::new();
    let mut buf = vec![0u8; 2048];
    while started.elapsed() < Duration::from_millis(1500) {
        if let Ok((n, _)) = peer.recv_from(&mut buf) {
            if let Ok((UdtHeader::Control { body: UdtControl::KeepAlive, dst_socket, .. }, _)) =
                udt_codec::decode(&buf[..n])
            {
                assert_eq!(dst_socket, 77, "addressed to the caller's socket");
                keep_alives.push(started.elapsed());
            }
        }
    }
    r.stop();
    let _ = r.join();
    // The first after max(RTT + 4 RTTVar + SYN, 300 ms) = 310 ms with UDT's initial RTT; the next 620 ms later.
    assert!(matches!(keep_alives.len(), 1..=3), "{keep_alives:?}");
    assert!(
        keep_alives[0] > Duration::from_millis(250) && keep_alives[0] < Duration::from_millis(800),
        "{keep_alives:?}"
    );
}
