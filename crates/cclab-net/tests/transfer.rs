//! `cclab send` to `cclab recv` over loopback, directly and through the
//! emulator: the content arrives intact, and through an emulated path at a
//! rate the transfer reaches most of it.

use cclab_net::emulator::{QueueLimit, IPV4_UDP_HEADER_BYTES};
use cclab_net::udt::driver::{Handle, Tuning};
use cclab_net::udt::recv::{self, RecvSpec, RecvSummary};
use cclab_net::udt::send::{self, SendSpec, SendSummary, Source};
use cclab_net::{Emulator, EmulatorSpec, PathSpec};
use cclab_wire::time::{millis, secs};
use std::net::SocketAddr;

fn receiver(out: Option<std::path::PathBuf>) -> Handle<RecvSummary> {
    let spec = RecvSpec {
        listen: "127.0.0.1:0".parse().unwrap(),
        out,
        idle_timeout: secs(10),
        tuning: Tuning::default(),
    };
    recv::start(spec).unwrap()
}

fn sender(to: SocketAddr, source: Source, cc: &str) -> Handle<SendSummary> {
    let spec = SendSpec { to, source, cc: cc.into(), duration: Some(secs(60)), tuning: Tuning::default() };
    send::start(spec).unwrap()
}

fn transfer(to: Option<SocketAddr>, source: Source, cc: &str) -> (SendSummary, RecvSummary, f64) {
    let r = receiver(None);
    let to = to.unwrap_or(r.local_addr);
    let started = std::time::Instant::now();
    let s = sender(to, source, cc);
    let sent = s.join().unwrap();
    let received = r.join().unwrap();
    (sent, received, started.elapsed().as_secs_f64())
}

#[test]
fn pattern_bytes_arrive_intact_over_loopback() {
    let (sent, received, _) = transfer(None, Source::Bytes(3_000_000), "udt");
    assert!(sent.complete && received.complete);
    assert_eq!((sent.content_bytes, received.content_bytes), (3_000_000, 3_000_000));
    assert_eq!(sent.checksum, received.checksum);
    assert!(received.checksum.is_some());
}

#[test]
fn a_file_arrives_byte_for_byte() {
    let dir = std::env::temp_dir();
    let (input, output) = (
        dir.join(format!("cclab-in-{}", std::process::id())),
        dir.join(format!("cclab-out-{}", std::process::id())),
    );
    let data: Vec<u8> = (0..1_234_567u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    std::fs::write(&input, &data).unwrap();
    let r = receiver(Some(output.clone()));
    let s = sender(r.local_addr, Source::File(input.clone()), "udt");
    let sent = s.join().unwrap();
    let received = r.join().unwrap();
    assert_eq!(sent.checksum, received.checksum);
    assert!(std::fs::read(&output).unwrap() == data, "the copy differs");
    std::fs::remove_file(input).unwrap();
    std::fs::remove_file(output).unwrap();
}

#[test]
fn through_the_emulator_at_100_mbit_s_with_loss() {
    let r = receiver(None);
    // 100 Mbit/s, 20 ms RTT, 0.1 % loss each way, a queue of one bandwidth-delay product.
    let path = PathSpec {
        rate_bps: Some(100_000_000),
        delay: millis(10),
        loss: 0.001,
        queue: QueueLimit::Bytes(250_000),
        overhead_bytes: IPV4_UDP_HEADER_BYTES,
    };
    let emulator = Emulator::start(EmulatorSpec {
        listen: "127.0.0.1:0".parse().unwrap(),
        forward: r.local_addr,
        forward_path: path.clone(),
        reverse_path: path,
        seed: 7,
        max_clients: 4,
    })
    .unwrap();
    let started = std::time::Instant::now();
    let s = sender(emulator.local_addr(), Source::Bytes(20_000_000), "udt");
    let sent = s.join().unwrap();
    let received = r.join().unwrap();
    let elapsed = started.elapsed().as_secs_f64();
    let stats = emulator.stop();
    eprintln!("{elapsed:.2} s; {:?}; {:?}", sent.progress, stats);
    assert_eq!(sent.checksum, received.checksum);
}
