//! `cclab recv --protocol tcp` against hostile input: random and truncated
//! datagrams and forged SYNs from strangers, and a peer that completes the
//! handshake and then sends random segments at any offset. The receiver must
//! not panic, must keep its memory bounded by its window, and must still serve
//! a real sender.

use crate::common;

use cclab_net::content::Source;
use cclab_net::driver::{Handle, Summary};
use cclab_net::tcp::codec::{self, Datagram, Message, SynOptions};
use cclab_net::tcp::handshake::{Caller, CallerState};
use cclab_net::tcp::recv::{self, TcpRecvSpec};
use cclab_net::tcp::send::{self, TcpSendSpec, DEFAULT_MSS};
use cclab_wire::random::SplitMix64;
use cclab_wire::time::secs;
use cclab_wire::{Ect, TcpHeader, TcpKind};
use common::*;
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

fn receiver(timeout_s: u64) -> Handle<Summary> {
    let spec =
        TcpRecvSpec { idle_timeout: secs(timeout_s), ..TcpRecvSpec::new("127.0.0.1:0".parse().unwrap()) };
    recv::start(spec).unwrap()
}

fn encode(datagram: &Datagram, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    codec::encode(datagram, payload, &mut out);
    out
}

/// A random datagram of connection `connection` with `cookie` (or random ones): a segment at any
/// offset with any length and SACK blocks, or any other type (CLOSE only with random ones); then
/// perhaps truncated or bit-flipped.
fn hostile_datagram(rng: &mut SplitMix64, connection: u32, cookie: u32) -> Vec<u8> {
    let r = rng.next_u64();
    let (connection, cookie) =
        if r & 1 == 0 { (connection, cookie) } else { (rng.next_u64() as u32, rng.next_u64() as u32) };
    let message = match (r >> 1) % 6 {
        0..=2 => {
            let mut h = TcpHeader::new(if r & 8 == 0 { TcpKind::Data } else { TcpKind::Ack });
            h.seq = match r % 3 {
                0 => rng.next_u64(),
                1 => rng.next_u64() % 20_000_000,
                _ => (rng.next_u64() % 20_000) * u64::from(DEFAULT_MSS),
            };
            (h.ack, h.ts_val, h.ts_ecr) = (rng.next_u64(), rng.next_u64(), rng.next_u64());
            (h.window, h.ce_bytes) = (rng.next_u64() as u32, rng.next_u64() as u32);
            h.fin = r & 16 != 0;
            for _ in 0..(rng.next_u64() % 5) {
                h.push_sack((rng.next_u64(), rng.next_u64()));
            }
            Message::Segment {
                header: h,
                ect: if r & 32 != 0 { Ect::Ect0 } else { Ect::NotEct },
                ce: r & 64 != 0,
            }
        }
        3 => Message::Syn {
            mss: rng.next_u64() as u32,
            options: SynOptions { sack: true, timestamps: true, ecn: true },
        },
        // A CLOSE on the real connection ends it (as it should); the stress test wants it to go on.
        4 if r & 1 == 1 => Message::Close,
        4 => Message::Reset,
        _ => Message::Accept { mss: rng.next_u64() as u32, window_segments: rng.next_u64() as u32 },
    };
    let payload = vec![0x5A; (rng.next_u64() % 1500) as usize];
    let mut bytes = encode(&Datagram { connection, cookie, message }, &payload);
    match rng.next_u64() % 4 {
        0 => bytes.truncate((rng.next_u64() as usize) % (bytes.len() + 1)),
        1 => {
            // Not the type byte: a RESET or SEGMENT flipped into a CLOSE would end the connection early.
            let i = match (rng.next_u64() as usize) % bytes.len() {
                3 => 4,
                i => i,
            };
            bytes[i] ^= 1 << (rng.next_u64() % 8);
        }
        _ => {}
    }
    bytes
}

/// Opens a connection to `server` from `socket` by hand: its number and cookie.
fn handshake(socket: &UdpSocket, server: SocketAddr) -> (u32, u32) {
    socket.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
    let mut caller =
        Caller::new(0, 4242, DEFAULT_MSS, SynOptions { sack: true, timestamps: true, ecn: false });
    let started = Instant::now();
    let mut buf = [0u8; 2048];
    loop {
        let now = started.elapsed().as_nanos() as u64;
        if let Some(syn) = caller.poll(now) {
            socket.send_to(&encode(&syn, &[]), server).unwrap();
        }
        if let Ok((n, _)) = socket.recv_from(&mut buf) {
            if let Ok((d, _)) = codec::decode(&buf[..n]) {
                caller.on_datagram(&d);
            }
        }
        match caller.state() {
            CallerState::Connected(agreed) => return (caller.connection(), agreed.cookie),
            CallerState::Connecting => {}
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn strangers_garbage_and_forged_syns_are_counted_and_a_real_sender_still_gets_through() {
    let _serial = serial();
    let r = receiver(10);
    let stranger = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut rng = SplitMix64::new(2026);
    for i in 0..20_000u32 {
        let bytes = if i % 5 == 0 {
            // A SYN that skips the cookie exchange with a guessed cookie.
            let message = Message::Syn { mss: DEFAULT_MSS, options: SynOptions::default() };
            encode(&Datagram { connection: i, cookie: rng.next_u64() as u32 | 1, message }, &[])
        } else {
            let (connection, cookie) = (rng.next_u64() as u32, rng.next_u64() as u32);
            hostile_datagram(&mut rng, connection, cookie)
        };
        let _ = stranger.send_to(&bytes, r.local_addr);
    }
    std::thread::sleep(Duration::from_millis(300));
    let before = r.progress();
    assert!(!before.connected, "a guessed cookie must not open a connection");
    assert!(before.malformed + before.unexpected > 1000, "{before:?}");
    let spec =
        TcpSendSpec { duration: Some(secs(30)), ..TcpSendSpec::new(r.local_addr, Source::Bytes(2_000_000)) };
    let sent = send::start(spec).unwrap().join().unwrap();
    let received = r.join().unwrap();
    assert_eq!((received.content_bytes, received.checksum), (2_000_000, sent.checksum));
}

#[test]
fn a_connected_hostile_peer_cannot_crash_the_receiver_or_grow_its_memory() {
    let _serial = serial();
    let r = receiver(2);
    let peer = UdpSocket::bind("127.0.0.1:0").unwrap();
    let (connection, cookie) = handshake(&peer, r.local_addr);
    let flooded = flood(r, &peer, |rng| {
        if !rng.next_u64().is_multiple_of(3) {
            return hostile_datagram(rng, connection, cookie);
        }
        // Data within the window, on segment boundaries, with the wrong contents.
        let mut h = TcpHeader::new(TcpKind::Data);
        h.seq = (rng.next_u64() % u64::from(recv::DEFAULT_WINDOW)) * u64::from(DEFAULT_MSS);
        let payload = vec![0xAB; 1 + (rng.next_u64() % u64::from(DEFAULT_MSS)) as usize];
        h.len = payload.len() as u32;
        let message = Message::Segment { header: h, ect: Ect::NotEct, ce: false };
        encode(&Datagram { connection, cookie, message }, &payload)
    });
    // The hostile peer stops; the receiver gives up on it after its idle timeout, with an error, not a panic.
    let (outcome, grown_kib) = (flooded.outcome, flooded.grown_kib);
    assert!(outcome.is_err(), "a stream of garbage does not verify");
    // The window of 4096 segments of at most 1412 bytes bounds what is held (5.8 MB).
    assert!(grown_kib < 30 * 1024, "memory grew {grown_kib} KiB");
    assert!(flooded.malformed_or_unexpected > 0);
}
