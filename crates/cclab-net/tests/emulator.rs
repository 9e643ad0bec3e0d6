//! The emulator on loopback: what arrives, when, and what it reports. Timing
//! is checked on medians and long-run rates with margins for a loaded machine;
//! the `emulator_accuracy` example reports the full distributions. One test at
//! a time: each emulator spins before its deliveries, and several spinning at
//! once on two cores starve each other (a rate of 15.7 Mbit/s against 20 in CI).

use crate::common;

use cclab_net::emulator::{parse_addr, QueueLimit, IPV4_UDP_HEADER_BYTES};
use cclab_net::{DirectionArgs, Emulator, EmulatorError, EmulatorSpec, PathSpec};
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

fn path(rate_bps: Option<u64>, delay_ms: u64, loss: f64, queue: QueueLimit) -> PathSpec {
    PathSpec { rate_bps, delay: delay_ms * 1_000_000, loss, queue, overhead_bytes: IPV4_UDP_HEADER_BYTES }
}

/// A server socket, and an emulator in front of it with `forward` client-to-server and `reverse` back.
fn setup(forward: PathSpec, reverse: PathSpec) -> (UdpSocket, Emulator) {
    let server = UdpSocket::bind("127.0.0.1:0").unwrap();
    server.set_read_timeout(Some(Duration::from_millis(500))).unwrap();
    let emulator = common::emulator(server.local_addr().unwrap(), forward, reverse, 7);
    (server, emulator)
}

fn client(emulator: &Emulator) -> UdpSocket {
    let c = UdpSocket::bind("127.0.0.1:0").unwrap();
    c.connect(emulator.local_addr()).unwrap();
    c.set_read_timeout(Some(Duration::from_millis(500))).unwrap();
    c
}

/// Receives on `server` in a thread, from now until it has been quiet for the socket's
/// timeout: every datagram with its arrival instant (join the handle for them).
fn receive(server: UdpSocket) -> std::thread::JoinHandle<Vec<(Instant, Vec<u8>)>> {
    std::thread::spawn(move || {
        let mut got = Vec::new();
        let mut buf = [0u8; 2048];
        // The first datagram may be a while coming; the end is a quiet half second.
        server.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        while let Ok((n, _)) = server.recv_from(&mut buf) {
            got.push((Instant::now(), buf[..n].to_vec()));
            server.set_read_timeout(Some(Duration::from_millis(500))).unwrap();
        }
        got
    })
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

#[test]
fn the_delay_is_the_setting_within_a_millisecond() {
    let _one = common::serial();
    let (server, emulator) = setup(
        path(None, 20, 0.0, QueueLimit::Bytes(u64::MAX)),
        path(None, 20, 0.0, QueueLimit::Bytes(u64::MAX)),
    );
    let c = client(&emulator);
    let arrivals = receive(server);
    let mut sent = Vec::new();
    for i in 0u32..100 {
        sent.push(Instant::now());
        c.send(&i.to_be_bytes()).unwrap();
        std::thread::sleep(Duration::from_millis(2));
    }
    let got = arrivals.join().unwrap();
    assert_eq!(got.len(), 100, "no loss, no queue: everything arrives");
    let delays: Vec<f64> = got
        .iter()
        .map(|(at, data)| {
            let i = u32::from_be_bytes(data[..4].try_into().unwrap()) as usize;
            at.duration_since(sent[i]).as_secs_f64() * 1e3
        })
        .collect();
    let m = median(delays.clone());
    assert!((m - 20.0).abs() < 1.0, "median one-way delay {m:.3} ms against 20 ms");
    assert!(delays.iter().all(|&d| d >= 20.0), "never early: {delays:?}");
    let stats = emulator.stop();
    assert_eq!(stats.forward.path.delivered, 100);
    assert_eq!(stats.clients, 1);
}

#[test]
fn the_rate_is_the_setting_within_five_percent() {
    let _one = common::serial();
    // 1222 + 28 = 1250 bytes: 500 µs each at 20 Mbit/s. Offered at about twice that, in bursts.
    let (server, emulator) = setup(
        path(Some(20_000_000), 0, 0.0, QueueLimit::Bytes(u64::MAX)),
        path(None, 0, 0.0, QueueLimit::Bytes(u64::MAX)),
    );
    let c = client(&emulator);
    let arrivals = receive(server);
    let n = 1200usize;
    for burst in 0..n / 10 {
        for i in 0..10 {
            c.send(&[((burst * 10 + i) % 251) as u8; 1222]).unwrap();
        }
        std::thread::sleep(Duration::from_micros(2500));
    }
    let got = arrivals.join().unwrap();
    let stats = emulator.stop();
    assert_eq!(got.len(), n, "an unlimited queue drops nothing");
    assert_eq!(stats.forward.path.dropped_queue_full, 0);
    let span = got[got.len() - 1].0.duration_since(got[0].0).as_secs_f64();
    let rate = (got.len() - 1) as f64 * 1250.0 * 8.0 / span;
    assert!((rate / 20e6 - 1.0).abs() < 0.05, "{:.3} Mbit/s against 20", rate / 1e6);
}

#[test]
fn a_full_queue_drops_the_tail_and_says_so() {
    let _one = common::serial();
    // 100 ms per datagram at 100 kbit/s: a burst of 30 finds one on the wire and room for 9 behind it.
    let (server, emulator) = setup(
        path(Some(100_000), 0, 0.0, QueueLimit::Packets(9)),
        path(None, 0, 0.0, QueueLimit::Bytes(u64::MAX)),
    );
    let c = client(&emulator);
    let arrivals = receive(server);
    for i in 0u8..30 {
        c.send(&[i; 1222]).unwrap();
    }
    let got = arrivals.join().unwrap();
    let stats = emulator.stop();
    let firsts: Vec<u8> = got.iter().map(|(_, d)| d[0]).collect();
    assert_eq!(firsts, (0u8..10).collect::<Vec<_>>(), "the first ten, in order");
    assert_eq!(stats.forward.path.dropped_queue_full, 20);
    assert_eq!(stats.forward.path.delivered, 10);
}

#[test]
fn loss_is_within_its_statistical_bounds_and_counted() {
    let _one = common::serial();
    let (server, emulator) = setup(
        path(None, 0, 0.05, QueueLimit::Bytes(u64::MAX)),
        path(None, 0, 0.0, QueueLimit::Bytes(u64::MAX)),
    );
    let c = client(&emulator);
    let arrivals = receive(server);
    let n = 8000u32;
    for i in 0..n {
        c.send(&i.to_be_bytes()).unwrap();
        // At most 10 000 a second: no socket buffer overflows even on a loaded machine.
        if i % 10 == 9 {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    let got = arrivals.join().unwrap();
    let stats = emulator.stop();
    assert_eq!(stats.forward.path.offered, u64::from(n), "the emulator saw every datagram");
    assert_eq!(got.len() as u64, stats.forward.path.delivered);
    // Binomial(8000, 0.05): mean 400, standard deviation 19.5; 5 sigma.
    let lost = stats.forward.path.lost as f64;
    assert!((lost - 400.0).abs() < 5.0 * 19.5, "{lost} lost of {n}");
}

#[test]
fn replies_reach_each_of_several_clients() {
    let _one = common::serial();
    let (server, emulator) = setup(
        path(None, 5, 0.0, QueueLimit::Bytes(u64::MAX)),
        path(None, 5, 0.0, QueueLimit::Bytes(u64::MAX)),
    );
    let clients: Vec<UdpSocket> = (0..3).map(|_| client(&emulator)).collect();
    for (i, c) in clients.iter().enumerate() {
        c.send(&[i as u8]).unwrap();
    }
    let mut buf = [0u8; 16];
    for _ in 0..3 {
        let (n, from) = server.recv_from(&mut buf).unwrap();
        assert_eq!(n, 1);
        server.send_to(&[buf[0] + 100], from).unwrap();
    }
    for (i, c) in clients.iter().enumerate() {
        let n = c.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], &[i as u8 + 100], "client {i} gets its own reply");
    }
    let stats = emulator.stop();
    assert_eq!((stats.clients, stats.forward.path.delivered, stats.reverse.path.delivered), (3, 3, 3));
}

#[test]
fn clients_beyond_the_limit_are_refused_and_counted() {
    let _one = common::serial();
    let (_server, emulator) = setup(
        path(None, 0, 0.0, QueueLimit::Bytes(u64::MAX)),
        path(None, 0, 0.0, QueueLimit::Bytes(u64::MAX)),
    );
    let clients: Vec<UdpSocket> = (0..6).map(|_| client(&emulator)).collect();
    for c in &clients {
        c.send(b"x").unwrap();
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(50));
    let stats = emulator.stop();
    assert_eq!((stats.clients, stats.refused_client_datagrams), (4, 2));
}

#[test]
fn bad_settings_name_their_option() {
    let none = DirectionArgs::default();
    let with = |f: fn(&mut DirectionArgs)| {
        let mut a = DirectionArgs::default();
        f(&mut a);
        a
    };
    let err = |a: DirectionArgs, prefix: &str| a.parse(prefix, &none).unwrap_err().to_string();
    assert!(err(with(|a| a.rate = Some("fast".into())), "--").starts_with("--rate: "));
    assert!(err(with(|a| a.rate = Some("0Mbps".into())), "--").starts_with("--rate: "));
    assert!(err(with(|a| a.delay = Some("-3ms".into())), "--reverse-").starts_with("--reverse-delay: "));
    assert!(err(with(|a| a.loss = Some(1.0)), "--").starts_with("--loss: 1 is not a probability"));
    assert!(err(with(|a| a.loss = Some(f64::NAN)), "--").starts_with("--loss: "));
    let queue_without_rate = with(|a| a.queue = Some("100p".into()));
    assert!(err(queue_without_rate, "--").starts_with("--queue: a queue needs a rate"));
    for q in ["0p", "0KB", "lots", "-5p"] {
        let a = DirectionArgs { rate: Some("10Mbps".into()), queue: Some(q.into()), ..Default::default() };
        assert!(err(a, "--").starts_with("--queue: "), "{q}");
    }
    assert_eq!(
        parse_addr("--listen", "localhost").unwrap_err(),
        EmulatorError::Invalid {
            option: "--listen".into(),
            message: "\"localhost\" is not an address ADDR:PORT (such as 127.0.0.1:9000)".into()
        }
    );
    // The reverse direction takes the forward's settings unless given its own.
    let forward = DirectionArgs {
        rate: Some("10Mbps".into()),
        delay: Some("50ms".into()),
        loss: Some(0.01),
        queue: Some("300KB".into()),
    };
    let reverse =
        DirectionArgs { loss: Some(0.0), ..Default::default() }.parse("--reverse-", &forward).unwrap();
    assert_eq!(
        reverse,
        PathSpec {
            rate_bps: Some(10_000_000),
            delay: 50_000_000,
            loss: 0.0,
            queue: QueueLimit::Bytes(300_000),
            overhead_bytes: 28
        }
    );
    let taken: SocketAddr = "127.0.0.1:1".parse().unwrap();
    let busy = UdpSocket::bind("127.0.0.1:0").unwrap();
    let spec = EmulatorSpec {
        listen: busy.local_addr().unwrap(),
        forward: taken,
        forward_path: reverse.clone(),
        reverse_path: reverse,
        seed: 1,
        max_clients: 1,
    };
    assert!(
        matches!(Emulator::start(spec), Err(EmulatorError::Listen { .. })),
        "an address in use is refused at start"
    );
}
