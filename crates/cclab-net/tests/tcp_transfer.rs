//! TCP carried in UDP, `cclab send --protocol tcp` to `cclab recv --protocol tcp`:
//! content intact over loopback and through the emulator, several connections
//! from one host under a send-buffer memory cap, and the simulator's
//! prediction for the same path as the yardstick of the real transfer.

use crate::common;

use cclab_net::content::Source;
use cclab_net::driver::{Handle, Summary};
use cclab_net::emulator::IPV4_UDP_HEADER_BYTES;
use cclab_net::error::TransferError;
use cclab_net::tcp::recv::{self, TcpRecvSpec};
use cclab_net::tcp::send::{self, BufferSpec, Named, TcpSendSpec};
use cclab_wire::time::{millis, secs};
use common::*;
use std::net::SocketAddr;

fn receiver(connections: u32, out: Option<std::path::PathBuf>) -> Handle<Summary> {
    let spec = TcpRecvSpec { connections, out, ..TcpRecvSpec::new("127.0.0.1:0".parse().unwrap()) };
    recv::start(spec).unwrap()
}

fn spec(to: SocketAddr, source: Source) -> TcpSendSpec {
    TcpSendSpec { duration: Some(secs(60)), ..TcpSendSpec::new(to, source) }
}

#[test]
fn pattern_bytes_arrive_intact_over_loopback_for_each_recovery() {
    let _serial = serial();
    for (cc, recovery) in [("reno", "newreno"), ("cubic", "sack"), ("highspeed", "sack1"), ("bbr", "sack")] {
        let r = receiver(1, None);
        let s = TcpSendSpec {
            cc: Named::new(cc),
            recovery: Named::new(recovery),
            ..spec(r.local_addr, Source::Bytes(3_000_000))
        };
        let sent = send::start(s).unwrap().join().unwrap();
        let received = r.join().unwrap();
        assert!(sent.complete && received.complete, "{cc}/{recovery}");
        assert_eq!((sent.content_bytes, received.content_bytes), (3_000_000, 3_000_000), "{cc}/{recovery}");
        assert_eq!(sent.checksum, received.checksum, "{cc}/{recovery}");
        assert!(received.checksum.is_some());
    }
}

#[test]
fn a_file_arrives_byte_for_byte_through_a_lossy_path() {
    let _serial = serial();
    let dir = std::env::temp_dir();
    let (input, output) = (
        dir.join(format!("cclab-tcp-in-{}", std::process::id())),
        dir.join(format!("cclab-tcp-out-{}", std::process::id())),
    );
    let data: Vec<u8> = (0..2_345_678u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8).collect();
    std::fs::write(&input, &data).unwrap();
    let r = receiver(1, Some(output.clone()));
    // 1 % loss each way: retransmissions, SACK recovery and lost ACKs all happen.
    let e = emulator(r.local_addr, path(20_000_000, 5, 0.01, 100_000), path(20_000_000, 5, 0.01, 100_000), 3);
    let s = TcpSendSpec {
        cc: Named::new("cubic"),
        recovery: Named::new("sack"),
        ..spec(e.local_addr(), Source::File(input.clone()))
    };
    let sent = send::start(s).unwrap().join().unwrap();
    let received = r.join().unwrap();
    let stats = e.stop();
    assert!(sent.progress.retransmits > 0, "a 1 % loss path makes retransmissions");
    assert!(stats.forward.path.lost > 0);
    assert_eq!(sent.checksum, received.checksum);
    assert!(std::fs::read(&output).unwrap() == data, "the copy differs");
    std::fs::remove_file(input).unwrap();
    std::fs::remove_file(output).unwrap();
}

/// The simulator's completion time of a `bytes` transfer with `cc` and `recovery` over
/// a dumbbell like the emulated path (the rate counts IP and UDP headers, as the
/// emulator's does), mean of `seeds` runs.
fn simulated_completion_s(cc: &str, recovery: &str, bytes: u64, seeds: u64) -> f64 {
    let header = IPV4_UDP_HEADER_BYTES + cclab_net::tcp::codec::SEGMENT_HEADER_BYTES as u32;
    let scenario = format!(
        r#"
        [run]
        duration = "60s"
        [topology]
        kind = "dumbbell"
        access = {{ rate = "10Gbps" }}
        [topology.bottleneck]
        rate = "50Mbps"
        delay = "10ms"
        buffer = "125KB"
        loss = 0.001
        [[flows]]
        name = "tcp"
        cc = "{cc}"
        recovery = "{recovery}"
        mss = {mss}
        header = {header}
        max_window = {window}
        rtt = "20ms"
        app = {{ kind = "transfer", size = "{bytes}B" }}
        "#,
        mss = send::DEFAULT_MSS,
        window = recv::DEFAULT_WINDOW,
    );
    common::simulated_completion_s(&scenario, seeds)
}

/// 20 MB at 50 Mbit/s, 20 ms RTT, 0.1 % loss on the data: the real transfer
/// takes within a factor of two of the simulator's mean for the same path, for
/// a loss-based and a SACK sender.
#[test]
fn twenty_megabytes_through_a_lossy_emulated_path_take_about_the_simulated_time() {
    let _serial = serial();
    const BYTES: u64 = 20_000_000;
    for (i, (cc, recovery)) in [("reno", "newreno"), ("cubic", "sack")].into_iter().enumerate() {
        let r = receiver(1, None);
        let e = emulator(
            r.local_addr,
            path(50_000_000, 10, 0.001, 125_000),
            path(50_000_000, 10, 0.0, 125_000),
            21 + i as u64,
        );
        let s = TcpSendSpec {
            cc: Named::new(cc),
            recovery: Named::new(recovery),
            ..spec(e.local_addr(), Source::Bytes(BYTES))
        };
        let sent = send::start(s).unwrap().join().unwrap();
        let received = r.join().unwrap();
        let stats = e.stop();
        assert_eq!(sent.checksum, received.checksum, "{cc}");
        let real_s = sent.connections[0].finished.unwrap() as f64 / 1e9;
        let sim_s = simulated_completion_s(cc, recovery, BYTES, 3);
        println!(
            "{cc}/{recovery}: real {real_s:.2} s, simulated {sim_s:.2} s, ratio {:.2}; retransmits {}, timeouts {}, \
             queue drops {}, random drops {}, pacing late p50 {} us",
            real_s / sim_s,
            sent.progress.retransmits,
            sent.progress.timeouts,
            stats.forward.path.dropped_queue_full,
            stats.forward.path.lost,
            sent.progress.pacing.quantile_us(0.5),
        );
        assert!(
            (0.5..2.0).contains(&(real_s / sim_s)),
            "{cc}: real {real_s:.2} s against simulated {sim_s:.2} s"
        );
    }
}

/// Seed 004's sharing on a real path: four connections from one host, RTBA
/// under a 400 KB cap through a 20 Mbit/s, 40 ms path: every transfer arrives
/// intact, the host's limits never sum above the cap, and each connection is
/// counted in at every sharing time it is open.
#[test]
fn several_connections_share_one_host_memory_cap_under_rtba() {
    let _serial = serial();
    const CAP: u64 = 400_000;
    let r = receiver(4, None);
    let e =
        emulator(r.local_addr, path(20_000_000, 20, 0.0001, 300_000), path(20_000_000, 20, 0.0, 300_000), 5);
    let s = TcpSendSpec {
        connections: 4,
        stagger: millis(500),
        send_buffer: Some(BufferSpec {
            policy: Named::new("rtba"),
            memory_cap: Some(CAP),
            share_every: millis(500),
        }),
        ..spec(e.local_addr(), Source::Bytes(3_000_000))
    };
    let sent = send::start(s).unwrap().join().unwrap();
    let received = r.join().unwrap();
    e.stop();
    assert!(sent.complete && received.complete);
    assert_eq!(sent.connections.len(), 4);
    for c in sent.connections.iter().chain(&received.connections) {
        assert_eq!(c.content_bytes, 3_000_000);
    }
    // The same content on every connection: one checksum, computed by each sender and verified by each receiver.
    let sums: std::collections::BTreeSet<Option<u64>> =
        sent.connections.iter().chain(&received.connections).map(|c| c.checksum).collect();
    assert_eq!(sums.len(), 1);
    assert!(sums.iter().all(Option::is_some));
    let mut times: Vec<u64> = sent.allocations.iter().map(|a| a.at).collect();
    times.dedup();
    assert!(times.len() >= 6, "the host shared its memory {} times", times.len());
    for t in &times {
        let at: Vec<_> = sent.allocations.iter().filter(|a| a.at == *t).collect();
        let sum: u64 = at.iter().map(|a| a.limit).sum();
        assert!(sum <= CAP, "at {t}: {sum} > {CAP}");
    }
    let connections: std::collections::BTreeSet<u32> =
        sent.allocations.iter().map(|a| a.connection).collect();
    assert_eq!(connections.len(), 4, "every connection got allocations");
}

#[test]
fn a_sender_without_a_receiver_times_out_and_a_full_receiver_resets() {
    let _serial = serial();
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let s = spec(silent.local_addr().unwrap(), Source::Bytes(1000));
    let outcome = send::start(s).unwrap().join();
    assert!(matches!(outcome, Err(TransferError::ConnectTimeout(_))), "{outcome:?}");
    // A receiver that takes one transfer refuses a second caller while the first runs.
    let r = receiver(1, None);
    let long = spec(r.local_addr, Source::Unbounded);
    let first = send::start(TcpSendSpec { duration: Some(secs(2)), ..long }).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let second = send::start(spec(r.local_addr, Source::Bytes(1000))).unwrap().join();
    assert!(matches!(second, Err(TransferError::Rejected(_))), "{second:?}");
    let sent = first.join().unwrap();
    let received = r.join().unwrap();
    assert!(sent.complete && received.pattern_checked);
    assert_eq!(sent.content_bytes, received.content_bytes);
}
