//! What the sending and the receiving socket loops share: the socket, the
//! connection's random identities, encoding, waiting, and what they report.
//!
//! Each side is one thread with one non-blocking UDP socket. A loop turn reads
//! every datagram waiting, hands each to the endpoint, runs the endpoint's
//! timer if it is due, sends what it produced, and then waits on the socket
//! until the endpoint's next wake-up (`ppoll`, timer slack 1 ns). The
//! endpoints are the simulator's own ([`cclab_transport::udt`],
//! [`cclab_transport::tcp`]): the loop adds only the clock, the socket and the bytes.

use crate::clock::Clock;
use crate::error::{invalid, TransferError};
use crate::sys;
use cclab_wire::time::{micros, millis};
use cclab_wire::{Descriptor, Params, Time};
use std::io::{ErrorKind, Read};
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

/// Largest datagram either side reads (a UDT 4 MSS may be up to the 65 507 of IPv4).
pub const MAX_DATAGRAM: usize = 65_507;
/// Socket buffers asked of the kernel: a second of 100 Mbit/s, so that a burst
/// the endpoint sends, or the peer's packets during a slow turn, are not lost in
/// the host before they reach the network or the endpoint.
pub const SOCKET_BUFFER: usize = 12 << 20;
/// The loop looks at the stop flag at least this often, and publishes its progress.
pub const TURN: Time = millis(50);
/// A wait shorter than this is not worth a system call: the loop spins instead.
const SPIN_BELOW: Time = micros(20);

/// A snapshot of a transfer, published every loop [`TURN`] for the command's reports.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Progress {
    /// Since the connection was established (0 before).
    pub elapsed: Time,
    pub connected: bool,
    pub peer: Option<SocketAddr>,
    /// Content bytes: acknowledged (sender) or written out in order (receiver).
    pub bytes: u64,
    /// The content's length, when known.
    pub total: Option<u64>,
    pub rtt_us: i64,
    /// Congestion window (sender), packets.
    pub cwnd: f64,
    /// Inter-packet period (sender), µs.
    pub period_us: f64,
    /// The receiver's advertised buffer as the sender knows it, packets.
    pub flow_window: f64,
    /// The sender's smoothed view of the receiver's arrival speed and of the
    /// link capacity (packet pairs), packets per second: what UDT's rate increase reads.
    pub receive_rate: f64,
    pub bandwidth: f64,
    pub packets_sent: u64,
    pub packets_received: u64,
    /// Full ACKs received (sender) or sent (receiver); NAKs likewise.
    pub acks: u64,
    pub naks: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    /// Datagrams that did not decode, or were not for this connection.
    pub malformed: u64,
    pub unexpected: u64,
    /// Datagrams this host could not send (its socket buffer was full).
    pub lost_in_host: u64,
    /// How late the sender's sends left after their scheduled time.
    pub pacing: PacingStats,
}

/// How a transfer ended, on either side.
#[derive(Clone, Debug)]
pub struct Summary {
    /// The last progress.
    pub progress: Progress,
    /// Content bytes acknowledged (sender) or written out (receiver).
    pub content_bytes: u64,
    /// False if the duration or a stop request ended it first.
    pub complete: bool,
    /// The FNV-1a checksum of a bounded stream: computed (sender) or verified (receiver).
    pub checksum: Option<u64>,
    /// The receiver checked an unbounded test's content byte by byte against the pattern.
    pub pattern_checked: bool,
    /// Each connection of a transfer that opened several (TCP), in the order they started.
    pub connections: Vec<ConnectionSummary>,
    /// The sending host's send-buffer allocations, each time it shared its memory (TCP with a send-buffer policy).
    pub allocations: Vec<Allocation>,
}

/// One connection of several, at the end.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConnectionSummary {
    pub index: u32,
    /// Since the transfer started: when the connection opened, and when all its content was
    /// acknowledged (sender) or verified (receiver).
    pub started: Time,
    pub finished: Option<Time>,
    pub content_bytes: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub checksum: Option<u64>,
}

/// A sending host's decision for one connection at one sharing time: what its policy
/// desired, the limit it got, and what it held.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Allocation {
    /// Since the transfer started.
    pub at: Time,
    pub connection: u32,
    pub desired: u64,
    pub limit: u64,
    /// Bytes in its send buffer: unacknowledged plus written and not yet sent.
    pub buffered: u64,
    pub cwnd_bytes: u64,
    pub srtt: Time,
    /// The policy's share weight (RTBA: the expected rate, bytes/s).
    pub weight: f64,
}

impl Summary {
    /// The summary of what `progress` shows so far.
    pub fn of(progress: &Progress, complete: bool, checksum: Option<u64>) -> Self {
        Self {
            progress: progress.clone(),
            content_bytes: progress.bytes,
            complete,
            checksum,
            pattern_checked: false,
            connections: Vec::new(),
            allocations: Vec::new(),
        }
    }
}

/// Lateness of the sending loop against the send times the endpoint scheduled:
/// how closely the real sender follows the period congestion control chose.
#[derive(Clone, PartialEq)]
pub struct PacingStats {
    /// Counts of lateness in whole microseconds; the last bucket holds everything from its value on.
    buckets: Vec<u64>,
    pub sends: u64,
    pub total_late_ns: u128,
    pub max_late_ns: Time,
}

const PACING_BUCKETS: usize = 10_001;

impl Default for PacingStats {
    fn default() -> Self {
        Self { buckets: vec![0; PACING_BUCKETS], sends: 0, total_late_ns: 0, max_late_ns: 0 }
    }
}

impl std::fmt::Debug for PacingStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "PacingStats {{ sends: {}, mean: {:.1} us, p50: {} us, p99: {} us, max: {:.1} us }}",
            self.sends,
            self.mean_us(),
            self.quantile_us(0.5),
            self.quantile_us(0.99),
            self.max_late_ns as f64 / 1e3
        )
    }
}

impl PacingStats {
    pub fn record(&mut self, late: Time) {
        let bucket = ((late / 1000) as usize).min(PACING_BUCKETS - 1);
        self.buckets[bucket] += 1;
        self.sends += 1;
        self.total_late_ns += u128::from(late);
        self.max_late_ns = self.max_late_ns.max(late);
    }

    pub fn mean_us(&self) -> f64 {
        if self.sends == 0 {
            0.0
        } else {
            self.total_late_ns as f64 / self.sends as f64 / 1e3
        }
    }

    /// The `q` quantile of lateness in µs (the upper edge of its 1 µs bucket).
    pub fn quantile_us(&self, q: f64) -> f64 {
        let target = (q.clamp(0.0, 1.0) * self.sends as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (us, &n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= target {
                return (us + 1) as f64;
            }
        }
        0.0
    }
}

/// The algorithm `name` from `list` (one of the transport's registries) and its
/// parameters: its defaults but for `overrides` (name, value as text), each parsed
/// and range-checked by its descriptor, as a scenario's parameters are. Errors name
/// `option` (the algorithm's) or `param_option` (its parameters').
pub fn algorithm<B>(
    list: &'static [Descriptor<B>],
    option: &str,
    param_option: &str,
    name: &str,
    overrides: &[(String, String)],
) -> Result<(&'static Descriptor<B>, Params), TransferError> {
    let descriptor = list.iter().find(|d| d.name == name).ok_or_else(|| {
        let known: Vec<&str> = list.iter().map(|d| d.name).collect();
        invalid(option, format!("\"{name}\" is not one of: {}", known.join(", ")))
    })?;
    let info = descriptor.info();
    let mut params = info.defaults().map_err(|e| invalid(option, e.to_string()))?;
    for (key, text) in overrides {
        let parameter = info.parameter(key).ok_or_else(|| {
            let known: Vec<&str> = info.parameters.iter().map(|p| p.name).collect();
            let has = if known.is_empty() { "none".to_string() } else { known.join(", ") };
            invalid(param_option, format!("{name} has no parameter \"{key}\" (it has: {has})"))
        })?;
        let value = parameter
            .parse_text(text)
            .and_then(|v| parameter.check_range(&v).map(|()| v))
            .map_err(|e| invalid(param_option, format!("{key}: {e}")))?;
        params.insert(parameter.name, value);
    }
    Ok((descriptor, params))
}

/// A UDP socket bound to `addr`, non-blocking, with large buffers, whose datagrams the kernel stamps.
pub fn open_socket(addr: SocketAddr) -> Result<UdpSocket, TransferError> {
    let socket = UdpSocket::bind(addr).map_err(|source| TransferError::Bind { addr, source })?;
    socket.set_nonblocking(true).map_err(TransferError::Socket)?;
    sys::stamp_arrivals(&socket).map_err(TransferError::Socket)?;
    // The kernel may grant less than asked; the transfer still works, with more losses in the host.
    let _granted = sys::set_socket_buffers(&socket, SOCKET_BUFFER);
    Ok(socket)
}

/// 64 random bits from the operating system (socket IDs, initial sequence numbers, the cookie secret).
pub fn os_random() -> u64 {
    let mut bytes = [0u8; 8];
    if std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes)).is_ok() {
        return u64::from_le_bytes(bytes);
    }
    use std::hash::{BuildHasher, Hasher};
    // The standard library seeds each RandomState from the operating system.
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()),
    );
    hasher.finish()
}

/// Sends a datagram; a full socket buffer (the kernel's queue) loses it, as a
/// full interface queue would, and that is counted, not fatal.
pub fn send_datagram(
    socket: &UdpSocket,
    to: SocketAddr,
    bytes: &[u8],
    lost_in_host: &mut u64,
) -> Result<(), TransferError> {
    if bytes.is_empty() {
        return Ok(());
    }
    match socket.send_to(bytes, to) {
        Ok(_) => Ok(()),
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::ConnectionRefused) => {
            *lost_in_host += 1;
            Ok(())
        }
        Err(e) => Err(TransferError::Socket(e)),
    }
}

/// A datagram read by [`receive`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Received {
    pub len: usize,
    pub from: SocketAddr,
    /// When it reached the socket (the kernel's stamp on a socket from
    /// [`open_socket`]), on the loop's clock: earlier than now when the loop was busy.
    pub at: Time,
}

/// One datagram waiting on the socket, if any: `Ok(None)` when none is.
pub fn receive(socket: &UdpSocket, buf: &mut [u8], clock: &Clock) -> Result<Option<Received>, TransferError> {
    loop {
        match sys::recv_stamped(socket, buf) {
            Ok(got) => {
                return Ok(Some(Received { len: got.len, from: got.from, at: clock.arrival(got.arrived) }))
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(None),
            // An ICMP port-unreachable for an earlier send: the peer is not (yet) there.
            Err(e) if matches!(e.kind(), ErrorKind::ConnectionRefused | ErrorKind::ConnectionReset) => {
                continue
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(TransferError::Socket(e)),
        }
    }
}

/// Waits until a datagram arrives or the clock reaches `until` (at most one [`TURN`]).
pub fn wait(socket: &UdpSocket, clock: &Clock, until: Time) -> Result<(), TransferError> {
    let now = clock.now();
    let until = until.min(now + TURN);
    if until <= now + SPIN_BELOW {
        std::hint::spin_loop();
        return Ok(());
    }
    sys::wait_readable(socket, clock.until(until)).map(|_| ()).map_err(TransferError::Socket)
}

/// What the caller of a transfer thread holds: its progress, its stop flag, its result.
pub struct Handle<T> {
    pub(crate) progress: Arc<Mutex<Progress>>,
    pub(crate) stop: Arc<AtomicBool>,
    pub(crate) thread: Option<JoinHandle<Result<T, TransferError>>>,
    pub local_addr: SocketAddr,
}

impl<T> Handle<T> {
    pub fn progress(&self) -> Progress {
        self.progress.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Asks the transfer to stop (at its next turn, within [`TURN`]).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    pub fn is_finished(&self) -> bool {
        self.thread.as_ref().is_none_or(JoinHandle::is_finished)
    }

    /// Waits for the transfer's end and its result.
    pub fn join(mut self) -> Result<T, TransferError> {
        let thread = self.thread.take().ok_or_else(|| TransferError::Thread("already joined".into()))?;
        thread.join().map_err(|_| TransferError::Thread("it panicked".into()))?
    }
}

/// Where a loop publishes its progress and reads its stop flag.
pub struct Shared {
    pub progress: Arc<Mutex<Progress>>,
    pub stop: Arc<AtomicBool>,
}

impl Shared {
    pub fn new() -> Self {
        Self { progress: Arc::new(Mutex::new(Progress::default())), stop: Arc::new(AtomicBool::new(false)) }
    }

    pub fn publish(&self, progress: &Progress) {
        *self.progress.lock().unwrap_or_else(PoisonError::into_inner) = progress.clone();
    }

    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

impl Default for Shared {
    fn default() -> Self {
        Self::new()
    }
}

/// Starts `body` on its own thread, with precise timers, and returns its handle.
pub fn spawn<T: Send + 'static>(
    name: &str,
    local_addr: SocketAddr,
    body: impl FnOnce(&Shared) -> Result<T, TransferError> + Send + 'static,
) -> Result<Handle<T>, TransferError> {
    let shared = Shared::new();
    let (progress, stop) = (shared.progress.clone(), shared.stop.clone());
    let thread = std::thread::Builder::new()
        .name(name.to_string())
        .spawn(move || {
            sys::precise_timers();
            body(&shared)
        })
        .map_err(|e| TransferError::Thread(e.to_string()))?;
    Ok(Handle { progress, stop, thread: Some(thread), local_addr })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pacing_quantiles_come_from_microsecond_buckets() {
        let mut p = PacingStats::default();
        for late_us in [0, 0, 1, 5, 100] {
            p.record(late_us * 1000 + 300);
        }
        assert_eq!(p.quantile_us(0.5), 2.0);
        assert_eq!(p.quantile_us(1.0), 101.0);
        assert!((p.mean_us() - 21.5).abs() < 1e-9);
        p.record(secs_ns(1));
        assert_eq!(p.quantile_us(1.0), PACING_BUCKETS as f64, "the last bucket holds the rest");
    }

    fn secs_ns(s: u64) -> Time {
        s * 1_000_000_000
    }
}
