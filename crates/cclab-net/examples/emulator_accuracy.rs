//! How exactly the emulator keeps its settings on this machine: one-way delay
//! (error percentiles against the setting), long-run rate (against the setting)
//! and loss (against a binomial interval), each measured between a client and
//! a server thread on loopback.
//!
//!     cargo run --release -p cclab-net --example emulator_accuracy

use cclab_net::emulator::{QueueLimit, IPV4_UDP_HEADER_BYTES};
use cclab_net::{Emulator, EmulatorSpec, PathSpec};
use std::net::UdpSocket;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

fn path(rate_bps: Option<u64>, delay: Duration, loss: f64) -> PathSpec {
    PathSpec {
        rate_bps,
        delay: delay.as_nanos() as u64,
        loss,
        queue: QueueLimit::Bytes(u64::MAX),
        overhead_bytes: IPV4_UDP_HEADER_BYTES,
    }
}

/// An emulator with `forward` in front of a server thread that returns (arrival instant, first 8 bytes) of each datagram.
fn setup(forward: PathSpec) -> (UdpSocket, Emulator, JoinHandle<Vec<(Instant, u64)>>) {
    let server = UdpSocket::bind("127.0.0.1:0").expect("bind");
    let spec = EmulatorSpec {
        listen: "127.0.0.1:0".parse().expect("addr"),
        forward: server.local_addr().expect("addr"),
        reverse_path: path(None, Duration::ZERO, 0.0),
        forward_path: forward,
        seed: 11,
        max_clients: 1,
    };
    let emulator = Emulator::start(spec).expect("start");
    let receiver = std::thread::spawn(move || {
        let mut got = Vec::new();
        let mut buf = [0u8; 2048];
        server.set_read_timeout(Some(Duration::from_secs(5))).expect("timeout");
        while let Ok(n) = server.recv(&mut buf) {
            let tag = u64::from_be_bytes(buf[..8.min(n)].try_into().unwrap_or([0; 8]));
            got.push((Instant::now(), tag));
            server.set_read_timeout(Some(Duration::from_millis(500))).expect("timeout");
        }
        got
    });
    let client = UdpSocket::bind("127.0.0.1:0").expect("bind");
    client.connect(emulator.local_addr()).expect("connect");
    (client, emulator, receiver)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn delay(setting: Duration) {
    let (client, emulator, receiver) = setup(path(None, setting, 0.0));
    let mut sent = Vec::new();
    for i in 0u64..1000 {
        sent.push(Instant::now());
        client.send(&i.to_be_bytes()).expect("send");
        std::thread::sleep(Duration::from_micros(1000));
    }
    let got = receiver.join().expect("receiver");
    emulator.stop();
    let mut errors: Vec<f64> = got
        .iter()
        .map(|&(at, i)| at.duration_since(sent[i as usize]).as_secs_f64() * 1e3 - setting.as_secs_f64() * 1e3)
        .collect();
    errors.sort_by(f64::total_cmp);
    println!(
        "delay {:>5.1} ms: {} probes; error (ms) min {:.3}, median {:.3}, p90 {:.3}, p99 {:.3}, max {:.3}",
        setting.as_secs_f64() * 1e3,
        errors.len(),
        errors[0],
        percentile(&errors, 0.5),
        percentile(&errors, 0.9),
        percentile(&errors, 0.99),
        errors[errors.len() - 1]
    );
}

fn rate(rate_bps: u64) {
    // 1472-byte payloads (1500 on the wire), offered at 1.25 times the rate for 2 s.
    let (client, emulator, receiver) = setup(path(Some(rate_bps), Duration::from_millis(1), 0.0));
    let per_packet = 1500.0 * 8.0 / rate_bps as f64 / 1.25;
    let start = Instant::now();
    let n = (2.0 / per_packet) as u64;
    for i in 0..n {
        let due = start + Duration::from_secs_f64(i as f64 * per_packet);
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        let mut payload = [0u8; 1472];
        payload[..8].copy_from_slice(&i.to_be_bytes());
        client.send(&payload).expect("send");
    }
    let got = receiver.join().expect("receiver");
    let stats = emulator.stop();
    // The middle 80 % of arrivals: away from the start-up and the tail.
    let (a, b) = (got.len() / 10, got.len() * 9 / 10);
    let span = got[b].0.duration_since(got[a].0).as_secs_f64();
    let measured = (b - a) as f64 * 1500.0 * 8.0 / span;
    println!(
        "rate {:>6.1} Mbit/s: offered {} datagrams, emulator received {}, delivered {}; measured {:.2} Mbit/s, ratio {:.4}",
        rate_bps as f64 / 1e6,
        n,
        stats.forward.path.offered,
        got.len(),
        measured / 1e6,
        measured / rate_bps as f64
    );
}

fn loss(p: f64) {
    let (client, emulator, receiver) = setup(path(None, Duration::ZERO, p));
    let n = 100_000u64;
    for i in 0..n {
        client.send(&i.to_be_bytes()).expect("send");
        // 20 000 a second: slow enough that neither socket's buffer overflows on a loaded machine.
        if i % 10 == 9 {
            std::thread::sleep(Duration::from_micros(500));
        }
    }
    let got = receiver.join().expect("receiver");
    let stats = emulator.stop();
    let offered = stats.forward.path.offered as f64;
    let lost = stats.forward.path.lost as f64;
    let sigma = (offered * p * (1.0 - p)).sqrt();
    println!(
        "loss {p}: {} sent, {} reached the emulator, it lost {}, {} arrived; loss rate {:.5} (expected {:.0} +- {:.0} at 3 sigma: {})",
        n,
        offered,
        lost,
        got.len(),
        lost / offered,
        offered * p,
        3.0 * sigma,
        if (lost - offered * p).abs() <= 3.0 * sigma { "within" } else { "OUTSIDE" }
    );
}

fn main() {
    for ms in [1, 10, 50] {
        delay(Duration::from_millis(ms));
    }
    for r in [10_000_000, 100_000_000, 500_000_000] {
        rate(r);
    }
    for p in [0.001, 0.01, 0.05] {
        loss(p);
    }
}
