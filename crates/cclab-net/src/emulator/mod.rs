//! `cclab emulate`: a user-space link emulator that relays UDP datagrams
//! between clients and one server, each direction through its own emulated
//! path ([`path::Path`]: rate, DropTail queue, propagation delay, Bernoulli
//! loss), as netem with a rate or a token-bucket shaper would on a router.
//!
//! Clients send to `listen`; each client gets its own upstream socket towards
//! `forward` (as a NAT would), so the server's replies find their way back and
//! several transfers can share the emulated link. All datagrams of one
//! direction share that direction's queue and transmitter.
//!
//! Threads: one receives on the listening socket, one on each upstream socket;
//! the kernel stamps each datagram as it reaches the socket, so arrival times
//! do not depend on when a thread got to read it. One scheduler runs both
//! paths and sends each datagram when it is due, sleeping until shortly
//! before and spinning the rest ([`SPIN_BEFORE_DUE`]), so send times are
//! exact to a few microseconds while the machine gives the scheduler a core;
//! the `emulator_accuracy` example measures both.

pub mod path;

use crate::clock::Clock;
use crate::driver::SOCKET_BUFFER;
use cclab_wire::time::secs;
use cclab_wire::{units, Time};
use path::Path;
pub use path::{Fate, PathCounts, PathSpec, QueueLimit, IPV4_UDP_HEADER_BYTES};
use std::collections::{HashMap, VecDeque};
use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};

/// Largest UDP payload (IPv4).
const MAX_DATAGRAM: usize = 65_507;
/// How often a blocked thread looks at the stop flag.
const POLL: Duration = Duration::from_millis(20);
/// The scheduler sleeps until this long before a datagram is due and spins
/// for the rest. A timed wait alone wakes 30-80 µs late on a shared virtual
/// machine, and by different amounts each time, which moves a packet pair's
/// two deliveries closer or further apart than the rate sets them: UDT's
/// receiver then measured the capacity of the 100 Mbit/s path (8333 packets/s)
/// as 7088 to 12929 packets/s in seven transfers, and the overestimates drove
/// the sender back over the queue. Spinning the last 80 µs, five transfers
/// measured 8312 to 8424, for about a quarter of a core while the path is busy.
const SPIN_BEFORE_DUE: Duration = Duration::from_micros(80);

#[derive(Clone, Debug, PartialEq)]
pub struct EmulatorSpec {
    pub listen: SocketAddr,
    pub forward: SocketAddr,
    /// Client to server.
    pub forward_path: PathSpec,
    /// Server to client.
    pub reverse_path: PathSpec,
    /// Seeds the two loss processes.
    pub seed: u64,
    /// More clients than this are refused (each has a socket and a thread).
    pub max_clients: usize,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum EmulatorError {
    /// A command-line option's value is invalid: `option` names it.
    #[error("{option}: {message}")]
    Invalid { option: String, message: String },
    #[error("cannot listen on {addr}: {message}")]
    Listen { addr: SocketAddr, message: String },
    #[error("emulator thread failed: {0}")]
    Thread(String),
}

fn invalid(option: &str, message: impl Into<String>) -> EmulatorError {
    EmulatorError::Invalid { option: option.to_string(), message: message.into() }
}

/// One direction's settings as the command line gives them (strings with units).
#[derive(Clone, Debug, Default)]
pub struct DirectionArgs {
    pub rate: Option<String>,
    pub delay: Option<String>,
    pub loss: Option<f64>,
    pub queue: Option<String>,
}

impl DirectionArgs {
    /// Parses these settings; `prefix` ("--" or "--reverse-") names the options in errors,
    /// and `defaults` gives what an unset option takes.
    pub fn parse(&self, prefix: &str, defaults: &DirectionArgs) -> Result<PathSpec, EmulatorError> {
        let rate = self.rate.as_ref().or(defaults.rate.as_ref());
        let rate_bps = match rate.map(String::as_str) {
            None | Some("unlimited") => None,
            Some(text) => {
                let r = units::rate(text).map_err(|e| invalid(&format!("{prefix}rate"), e))?;
                if r == 0 {
                    return Err(invalid(&format!("{prefix}rate"), "must be positive (or \"unlimited\")"));
                }
                Some(r)
            }
        };
        let delay = match self.delay.as_ref().or(defaults.delay.as_ref()) {
            None => 0,
            Some(text) => units::duration(text).map_err(|e| invalid(&format!("{prefix}delay"), e))?,
        };
        if delay > secs(60) {
            return Err(invalid(&format!("{prefix}delay"), "at most 60s"));
        }
        let loss = self.loss.or(defaults.loss).unwrap_or(0.0);
        if !(0.0..1.0).contains(&loss) {
            return Err(invalid(&format!("{prefix}loss"), format!("{loss} is not a probability in [0, 1)")));
        }
        let queue = match self.queue.as_ref().or(defaults.queue.as_ref()).map(String::as_str) {
            None => QueueLimit::Bytes(u64::MAX),
            Some(text) => parse_queue(text).map_err(|e| invalid(&format!("{prefix}queue"), e))?,
        };
        if rate_bps.is_none() && self.queue.is_some() {
            return Err(invalid(
                &format!("{prefix}queue"),
                "a queue needs a rate (without one nothing waits)",
            ));
        }
        Ok(PathSpec { rate_bps, delay, loss, queue, overhead_bytes: IPV4_UDP_HEADER_BYTES })
    }
}

/// A queue limit: a size ("300KB") or a number of datagrams ("100p").
fn parse_queue(text: &str) -> Result<QueueLimit, String> {
    let trimmed = text.trim();
    if let Some(count) = trimmed.strip_suffix('p') {
        return match count.trim().parse::<u64>() {
            Ok(0) | Err(_) => Err(format!(
                "\"{text}\": write a positive number of datagrams (\"100p\") or a size (\"300KB\")"
            )),
            Ok(n) => Ok(QueueLimit::Packets(n)),
        };
    }
    match units::size(trimmed) {
        Ok(0) => Err(format!("\"{text}\" holds nothing: every datagram behind another would be dropped")),
        Ok(bytes) => Ok(QueueLimit::Bytes(bytes)),
        Err(e) => Err(format!("{e}; or a number of datagrams such as \"100p\"")),
    }
}

/// Why datagrams cannot be sent to `addr`, if they cannot: port 0 means "any free port" to
/// bind, and names no socket to send to (the kernel refuses it with EINVAL).
pub fn destination_problem(addr: SocketAddr) -> Option<String> {
    (addr.port() == 0).then(|| {
        format!("{addr} has port 0, which names no socket to send to; give the port the peer listens on")
    })
}

/// Parses an `ADDR:PORT` option.
pub fn parse_addr(option: &str, text: &str) -> Result<SocketAddr, EmulatorError> {
    text.parse::<SocketAddr>().map_err(|_| {
        invalid(option, format!("\"{text}\" is not an address ADDR:PORT (such as 127.0.0.1:9000)"))
    })
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DirectionStats {
    pub path: PathCounts,
    /// Datagrams the operating system refused to send on (the peer's port closed, say).
    pub send_errors: u64,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EmulatorStats {
    pub forward: DirectionStats,
    pub reverse: DirectionStats,
    pub clients: u64,
    /// Datagrams from clients beyond `max_clients`, dropped unrelayed.
    pub refused_client_datagrams: u64,
}

enum Message {
    NewClient {
        client: SocketAddr,
        upstream: Arc<UdpSocket>,
    },
    /// `arrived` is the kernel's stamp ([`crate::sys::recv_stamped`]).
    Datagram {
        arrived: Option<SystemTime>,
        to_server: bool,
        client: SocketAddr,
        data: Vec<u8>,
    },
}

/// A running emulator; [`Emulator::stop`] ends it and returns what it did.
pub struct Emulator {
    stop: Arc<AtomicBool>,
    stats: Arc<Mutex<EmulatorStats>>,
    threads: Arc<Mutex<Vec<JoinHandle<()>>>>,
    local: SocketAddr,
}

impl Emulator {
    /// Binds the listening socket (so an address in use is reported here) and starts relaying.
    pub fn start(spec: EmulatorSpec) -> Result<Emulator, EmulatorError> {
        if let Some(problem) = destination_problem(spec.forward) {
            return Err(invalid("--forward", problem));
        }
        let listen = UdpSocket::bind(spec.listen)
            .map_err(|e| EmulatorError::Listen { addr: spec.listen, message: e.to_string() })?;
        listen.set_read_timeout(Some(POLL)).map_err(|e| EmulatorError::Thread(e.to_string()))?;
        // As the endpoints' (udt::driver::SOCKET_BUFFER): the kernel's default receive buffer
        // (about 90 full datagrams on Linux) would drop a sender's burst on loopback before the
        // emulated queue saw it. The kernel may grant less; relaying works either way.
        let _granted = crate::sys::set_socket_buffers(&listen, SOCKET_BUFFER);
        crate::sys::stamp_arrivals(&listen).map_err(|e| EmulatorError::Thread(e.to_string()))?;
        let local = listen.local_addr().map_err(|e| EmulatorError::Thread(e.to_string()))?;
        let listen = Arc::new(listen);
        let stop = Arc::new(AtomicBool::new(false));
        let stats = Arc::new(Mutex::new(EmulatorStats::default()));
        let threads = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = mpsc::channel();
        let clock = Clock::new();
        let scheduler = Scheduler {
            forward: Path::new(spec.forward_path.clone(), spec.seed),
            reverse: Path::new(spec.reverse_path.clone(), spec.seed ^ 0x5bd1_e995_5bd1_e995),
            pending_forward: VecDeque::new(),
            pending_reverse: VecDeque::new(),
            upstream: HashMap::new(),
            listen: Arc::clone(&listen),
            send_errors: [0, 0],
            clock,
            stats: Arc::clone(&stats),
        };
        let stop_s = Arc::clone(&stop);
        let handle = std::thread::Builder::new()
            .name("emulate-scheduler".into())
            .spawn(move || {
                // Each delivery is a timed wait: with the default 50 µs timer slack the kernel
                // may defer it by that much, which spreads a packet pair's gap by as much.
                crate::sys::precise_timers();
                scheduler.run(rx, &stop_s)
            })
            .map_err(|e| EmulatorError::Thread(e.to_string()))?;
        let receiver = ListenReceiver {
            listen,
            forward: spec.forward,
            max_clients: spec.max_clients,
            tx,
            stop: Arc::clone(&stop),
            threads: Arc::clone(&threads),
            stats: Arc::clone(&stats),
        };
        let listen_handle = std::thread::Builder::new()
            .name("emulate-listen".into())
            .spawn(move || receiver.run())
            .map_err(|e| EmulatorError::Thread(e.to_string()))?;
        if let Ok(mut t) = threads.lock() {
            t.push(handle);
            t.push(listen_handle);
        }
        Ok(Emulator { stop, stats, threads, local })
    }

    /// The address clients send to (the listening socket's, with its port if 0 was asked).
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    pub fn stats(&self) -> EmulatorStats {
        *self.stats.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Stops relaying (datagrams still queued are dropped) and returns the final counts.
    pub fn stop(self) -> EmulatorStats {
        self.stop.store(true, Ordering::SeqCst);
        loop {
            let next = self.threads.lock().unwrap_or_else(PoisonError::into_inner).pop();
            match next {
                Some(handle) => {
                    let _ = handle.join();
                }
                None => break,
            }
        }
        self.stats()
    }
}

struct ListenReceiver {
    listen: Arc<UdpSocket>,
    forward: SocketAddr,
    max_clients: usize,
    tx: Sender<Message>,
    stop: Arc<AtomicBool>,
    threads: Arc<Mutex<Vec<JoinHandle<()>>>>,
    stats: Arc<Mutex<EmulatorStats>>,
}

impl ListenReceiver {
    fn run(self) {
        let mut clients: HashMap<SocketAddr, ()> = HashMap::new();
        let mut buf = vec![0u8; MAX_DATAGRAM];
        while !self.stop.load(Ordering::Relaxed) {
            let (n, client, arrived) = match crate::sys::recv_stamped(&self.listen, &mut buf) {
                Ok(got) => (got.len, got.from, got.arrived),
                Err(e)
                    if matches!(
                        e.kind(),
                        ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                    ) =>
                {
                    continue
                }
                // An ICMP "port unreachable" for an earlier reply surfaces here on some systems.
                Err(_) => continue,
            };
            if !clients.contains_key(&client) {
                if clients.len() >= self.max_clients {
                    self.stats.lock().unwrap_or_else(PoisonError::into_inner).refused_client_datagrams += 1;
                    continue;
                }
                let Some(upstream) = self.upstream_for(client) else { continue };
                clients.insert(client, ());
                self.stats.lock().unwrap_or_else(PoisonError::into_inner).clients += 1;
                if self.tx.send(Message::NewClient { client, upstream }).is_err() {
                    return;
                }
            }
            let data = buf[..n].to_vec();
            if self.tx.send(Message::Datagram { arrived, to_server: true, client, data }).is_err() {
                return;
            }
        }
    }

    /// A socket towards the server for `client`, and the thread that relays the server's replies.
    fn upstream_for(&self, client: SocketAddr) -> Option<Arc<UdpSocket>> {
        let any: SocketAddr =
            if self.forward.is_ipv4() { ([0, 0, 0, 0], 0).into() } else { ([0u16; 8], 0).into() };
        let socket = UdpSocket::bind(any).ok()?;
        socket.connect(self.forward).ok()?;
        socket.set_read_timeout(Some(POLL)).ok()?;
        let _granted = crate::sys::set_socket_buffers(&socket, SOCKET_BUFFER);
        crate::sys::stamp_arrivals(&socket).ok()?;
        let socket = Arc::new(socket);
        let reader = Arc::clone(&socket);
        let tx = self.tx.clone();
        let stop = Arc::clone(&self.stop);
        let handle = std::thread::Builder::new()
            .name("emulate-upstream".into())
            .spawn(move || {
                let mut buf = vec![0u8; MAX_DATAGRAM];
                while !stop.load(Ordering::Relaxed) {
                    let (n, arrived) = match crate::sys::recv_stamped(&reader, &mut buf) {
                        Ok(got) => (got.len, got.arrived),
                        Err(_) => continue,
                    };
                    let data = buf[..n].to_vec();
                    if tx.send(Message::Datagram { arrived, to_server: false, client, data }).is_err() {
                        return;
                    }
                }
            })
            .ok()?;
        self.threads.lock().unwrap_or_else(PoisonError::into_inner).push(handle);
        Some(socket)
    }
}

struct Scheduler {
    forward: Path,
    reverse: Path,
    pending_forward: VecDeque<(Time, SocketAddr, Vec<u8>)>,
    pending_reverse: VecDeque<(Time, SocketAddr, Vec<u8>)>,
    upstream: HashMap<SocketAddr, Arc<UdpSocket>>,
    listen: Arc<UdpSocket>,
    send_errors: [u64; 2],
    clock: Clock,
    stats: Arc<Mutex<EmulatorStats>>,
}

impl Scheduler {
    fn run(mut self, rx: Receiver<Message>, stop: &AtomicBool) {
        // Arrivals from different threads can reach the channel a few microseconds
        // out of order; each path sees non-decreasing times.
        let mut last = [0 as Time; 2];
        while !stop.load(Ordering::Relaxed) {
            let due = self.next_due();
            let wait = self.clock.until(due).min(POLL);
            let got = if wait <= SPIN_BEFORE_DUE {
                match rx.try_recv() {
                    Ok(m) => Ok(m),
                    Err(mpsc::TryRecvError::Empty) => {
                        std::hint::spin_loop();
                        Err(RecvTimeoutError::Timeout)
                    }
                    Err(mpsc::TryRecvError::Disconnected) => Err(RecvTimeoutError::Disconnected),
                }
            } else {
                rx.recv_timeout(wait - SPIN_BEFORE_DUE)
            };
            match got {
                Ok(Message::NewClient { client, upstream }) => {
                    self.upstream.insert(client, upstream);
                }
                Ok(Message::Datagram { arrived, to_server, client, data }) => {
                    let d = usize::from(!to_server);
                    let now = self.clock.arrival(arrived).max(last[d]);
                    last[d] = now;
                    let (path, pending) = if to_server {
                        (&mut self.forward, &mut self.pending_forward)
                    } else {
                        (&mut self.reverse, &mut self.pending_reverse)
                    };
                    if let Fate::Deliver(when) = path.offer(now, data.len()) {
                        pending.push_back((when, client, data));
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return,
            }
            self.send_due();
            self.publish();
        }
    }

    fn next_due(&self) -> Time {
        let f = self.pending_forward.front().map_or(Time::MAX, |p| p.0);
        let r = self.pending_reverse.front().map_or(Time::MAX, |p| p.0);
        f.min(r)
    }

    fn send_due(&mut self) {
        let now = self.clock.now();
        while self.pending_forward.front().is_some_and(|p| p.0 <= now) {
            let Some((_, client, data)) = self.pending_forward.pop_front() else { break };
            let sent = self.upstream.get(&client).map(|s| s.send(&data));
            if !matches!(sent, Some(Ok(_))) {
                self.send_errors[0] += 1;
            }
        }
        while self.pending_reverse.front().is_some_and(|p| p.0 <= now) {
            let Some((_, client, data)) = self.pending_reverse.pop_front() else { break };
            if self.listen.send_to(&data, client).is_err() {
                self.send_errors[1] += 1;
            }
        }
    }

    fn publish(&self) {
        let mut stats = self.stats.lock().unwrap_or_else(PoisonError::into_inner);
        stats.forward = DirectionStats { path: self.forward.counts, send_errors: self.send_errors[0] };
        stats.reverse = DirectionStats { path: self.reverse.counts, send_errors: self.send_errors[1] };
    }
}
