//! What the real-network integration tests share: one test at a time, the
//! process's memory, an emulated path, and the simulator's prediction for it.
#![allow(dead_code)]

use cclab_net::driver::{Handle, Summary};
use cclab_net::emulator::{QueueLimit, IPV4_UDP_HEADER_BYTES};
use cclab_net::error::TransferError;
use cclab_net::{Emulator, EmulatorSpec, PathSpec};
use cclab_wire::random::SplitMix64;
use cclab_wire::time::millis;
use std::net::{SocketAddr, UdpSocket};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// Transfers share the machine's two cores with the emulator, and the memory tests read the
/// whole process's resident size: one test at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

pub fn serial() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The process's resident memory, KiB.
pub fn resident_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// One direction of an emulated path; the rate counts IPv4 and UDP headers, as a link would.
pub fn path(rate_bps: u64, one_way_ms: u64, loss: f64, queue_bytes: u64) -> PathSpec {
    PathSpec {
        rate_bps: Some(rate_bps),
        delay: millis(one_way_ms),
        loss,
        queue: QueueLimit::Bytes(queue_bytes),
        overhead_bytes: IPV4_UDP_HEADER_BYTES,
    }
}

/// An emulator in front of `server`: `forward` carries the data, `reverse` the replies.
pub fn emulator(server: SocketAddr, forward: PathSpec, reverse: PathSpec, seed: u64) -> Emulator {
    Emulator::start(EmulatorSpec {
        listen: "127.0.0.1:0".parse().unwrap(),
        forward: server,
        forward_path: forward,
        reverse_path: reverse,
        seed,
        max_clients: 4,
    })
    .unwrap()
}

/// The simulator's mean completion time of the first transfer of `scenario` (TOML) over seeds 1 to `seeds`.
pub fn simulated_completion_s(scenario: &str, seeds: u64) -> f64 {
    let total: f64 = (1..=seeds)
        .map(|seed| {
            let result = cclab_sim::run_toml(scenario, "real-network-test", Some(seed)).unwrap();
            result.transfers.completion_s[0].expect("the simulated transfer completes")
        })
        .sum();
    total / seeds as f64
}

/// What a receiver did under a flood from a connected peer.
pub struct Flooded {
    pub sent: u64,
    pub grown_kib: u64,
    pub malformed_or_unexpected: u64,
    pub outcome: Result<Summary, TransferError>,
}

/// Sends `receiver` datagrams that `hostile` makes from `peer` for 4 s (or until the receiver ends),
/// then lets the receiver give up on the silent peer: how many went, how much the process grew,
/// what the receiver counted, and how it ended.
pub fn flood(
    receiver: Handle<Summary>,
    peer: &UdpSocket,
    mut hostile: impl FnMut(&mut SplitMix64) -> Vec<u8>,
) -> Flooded {
    let baseline = resident_kib();
    let mut rng = SplitMix64::new(7);
    let started = Instant::now();
    let mut sent = 0u64;
    while started.elapsed() < Duration::from_secs(4) && !receiver.is_finished() {
        for _ in 0..200 {
            let _ = peer.send_to(&hostile(&mut rng), receiver.local_addr);
            sent += 1;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let grown_kib = resident_kib().saturating_sub(baseline);
    let progress = receiver.progress();
    let outcome = receiver.join();
    eprintln!("{sent} hostile datagrams; memory grew {grown_kib} KiB; {progress:?}; {outcome:?}");
    Flooded { sent, grown_kib, malformed_or_unexpected: progress.malformed + progress.unexpected, outcome }
}

/// The machine's CPU time (all CPUs, in clock ticks) so far, and the part of it the
/// hypervisor took (steal), from `/proc/stat`; zeros where it cannot be read.
pub fn cpu_and_steal_ticks() -> (u64, u64) {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let ticks: Vec<u64> =
        stat.lines().next().unwrap_or("").split_whitespace().skip(1).filter_map(|v| v.parse().ok()).collect();
    (ticks.iter().sum(), ticks.get(7).copied().unwrap_or(0))
}
