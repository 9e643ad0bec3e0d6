//! `cclab recv`: listens for one UDT 4 connection, takes the byte stream of
//! [`crate::stream`] through the simulator's [`UdtReceiver`], writes the
//! content in order (to a file, or nowhere) and verifies it at the end.
//!
//! Safety, whatever a peer sends:
//! - a connection exists only after the caller echoed the listener's SYN
//!   cookie ([`super::handshake`]); until then nothing is kept per caller;
//! - datagrams that do not decode as UDT 4, come from another address, or
//!   name another socket are counted and dropped;
//! - memory is bounded by the receive buffer: at most that many packets
//!   are held out of order (the stream) and tracked (the UDT receiver's
//!   buffer and loss list), and no packet beyond it is stored;
//! - a peer silent for the idle timeout ends the transfer with an error.

use super::handshake::{Agreed, Listener, Offer, Verdict, RESPONSE};
use super::{encode_into, Tuning};
use crate::clock::{Clock, HandedTime};
use crate::content::UNBOUNDED;
use crate::content::{output_error, Sink};
use crate::driver::{self, open_socket, Handle, Progress, Received, Shared, Summary, TURN};
use crate::error::{invalid, TransferError};
use crate::stream::{Accepted, Framing, StreamReceiver};
use cclab_transport::app::App;
use cclab_transport::udt::receiver::UdtReceiver;
use cclab_transport::udt::seq::SeqSpace;
use cclab_transport::udt::{control_packet, UdtConfig, IP_UDP_BYTES, SYN};
use cclab_wire::time::{micros, millis, secs};
use cclab_wire::{Endpoint, Header, Outbox, Packet, Time, UdtControl, UdtHeader};
use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;

/// After the content is complete and verified, the receiver keeps answering
/// (its last ACK may be lost) until the sender's shutdown, or this long without a datagram.
pub const LINGER: Time = secs(1);
/// A declared content length beyond this (a petabyte) is the first 8 bytes of a stream without
/// cclab's framing, most likely: a plain UDT 4 sender's, which `--raw` receives.
const IMPLAUSIBLE_LENGTH: u64 = 1 << 50;
/// The EXP timer's floor per expiration (UDT 4.11 `m_ullMinExpInt`).
const MIN_EXP: Time = millis(300);

#[derive(Clone, Debug)]
pub struct RecvSpec {
    pub listen: SocketAddr,
    pub out: Option<PathBuf>,
    /// Give up on a connected sender silent this long.
    pub idle_timeout: Time,
    pub tuning: Tuning,
    /// `--raw`: the stream is the content alone (a plain UDT 4 sender's), complete when the sender closes.
    pub framing: Framing,
}

/// Validates the spec, creates the output file and binds the socket, and starts listening.
pub fn start(spec: RecvSpec) -> Result<Handle<Summary>, TransferError> {
    if spec.idle_timeout == 0 {
        return Err(invalid("--timeout", "must be positive"));
    }
    let sink = Sink::create(spec.out.as_deref())?;
    let socket = open_socket(spec.listen)?;
    let local = socket.local_addr().map_err(TransferError::Socket)?;
    driver::spawn("cclab-recv", local, move |shared| {
        Receiving { spec, socket, shared, clock: Clock::new(), progress: Progress::default() }.run(sink)
    })
}

struct Connection {
    peer: SocketAddr,
    my_socket: u32,
    reply: UdtHeader,
    receiver: UdtReceiver,
    stream: StreamReceiver<Sink>,
    space: SeqSpace,
    start: Time,
    last_heard: Time,
    /// UDT 4's EXP timer on the receiving side: expirations since the peer was last heard,
    /// and when the timer last expired (or the peer was heard).
    exp_count: u64,
    last_exp: Time,
    peer_socket: u32,
    complete_at: Option<Time>,
    checksum: Option<u64>,
    shutdown: bool,
}

impl Connection {
    #[allow(clippy::too_many_arguments)]
    fn new(
        peer: SocketAddr,
        my_socket: u32,
        reply: UdtHeader,
        agreed: Agreed,
        now: Time,
        tuning: Tuning,
        framing: Framing,
        sink: Sink,
    ) -> Self {
        let cfg = UdtConfig {
            mss: agreed.mss,
            isn: agreed.isn,
            receive_buffer: tuning.buffer_packets,
            start: now,
            app: App::Bulk,
            sender_socket: agreed.peer_socket,
            receiver_socket: my_socket,
            ..UdtConfig::default()
        };
        Self {
            peer,
            my_socket,
            reply,
            receiver: UdtReceiver::new(cfg),
            stream: StreamReceiver::new(
                u64::from(cfg.payload()),
                tuning.buffer_packets as usize,
                framing,
                sink,
            ),
            space: SeqSpace::new(cfg.isn),
            start: now,
            last_heard: now,
            exp_count: 1,
            last_exp: now,
            peer_socket: agreed.peer_socket,
            complete_at: None,
            checksum: None,
            shutdown: false,
        }
    }

    /// `EXPCount x (RTT + 4 RTTVar) + SYN`, at least `EXPCount x 300 ms`, after the last expiry.
    fn exp_deadline(&self) -> Time {
        let rtt = (self.receiver.rtt_us() + 4 * self.receiver.rtt_var_us()).max(0) as u64;
        let by_rtt = self.exp_count * micros(rtt) + SYN;
        self.last_exp + by_rtt.max(self.exp_count * MIN_EXP)
    }
}

struct Receiving<'a> {
    spec: RecvSpec,
    socket: UdpSocket,
    shared: &'a Shared,
    clock: Clock,
    progress: Progress,
}

impl Receiving<'_> {
    fn run(&mut self, sink: Sink) -> Result<Summary, TransferError> {
        let tuning = self.spec.tuning;
        let offer =
            Offer { mss: tuning.mss, flow_window: tuning.buffer_packets.min(tuning.flight_flag_size) };
        let listener = Listener::new(driver::os_random(), offer);
        // One connection: its socket ID is drawn once, not for every handshake a stranger sends.
        let my_socket = super::socket_id();
        let mut sink = Some(sink);
        let mut conn: Option<Connection> = None;
        let mut buf = vec![0u8; driver::MAX_DATAGRAM];
        let mut send_buf = Vec::with_capacity(2048);
        let mut out = Outbox::default();
        let mut next_publish = 0;
        let mut handed = HandedTime::new(0);
        loop {
            if self.shared.stopping() {
                if let Some(c) = &conn {
                    self.observe(c, self.clock.now());
                }
                return Ok(Summary::of(&self.progress, false, conn.and_then(|c| c.checksum)));
            }
            while let Some(Received { len: n, from, at }) =
                driver::receive(&self.socket, &mut buf, &self.clock)?
            {
                // When the datagram arrived, not when this loop got to it: the receiver's arrival
                // speed and packet-pair capacity are gaps between arrivals, which a busy loop would
                // compress or stretch. Never before a time the endpoint has already been given.
                let now = handed.give(at);
                let Ok((header, payload)) = cclab_wire::udt_codec::decode(&buf[..n]) else {
                    self.progress.malformed += 1;
                    continue;
                };
                let Some(c) = conn.as_mut().filter(|c| c.peer == from) else {
                    if conn.is_some() {
                        // One transfer at a time: another caller is not answered.
                        self.progress.unexpected += 1;
                        continue;
                    }
                    match listener.on_handshake(now, from, &header, my_socket) {
                        Verdict::Reply(reply) => self.reply(&reply, from, &mut send_buf)?,
                        Verdict::Accept { reply, agreed } => {
                            let Some(sink) = sink.take() else { continue };
                            let framing = self.spec.framing;
                            conn = Some(Connection::new(
                                from, my_socket, reply, agreed, now, tuning, framing, sink,
                            ));
                            self.progress.connected = true;
                            self.progress.peer = Some(from);
                            self.reply(&reply, from, &mut send_buf)?;
                        }
                        Verdict::Ignore => self.progress.unexpected += 1,
                    }
                    continue;
                };
                c.last_heard = now;
                (c.exp_count, c.last_exp) = (1, now);
                match header {
                    UdtHeader::Control { body: UdtControl::Handshake { request, .. }, .. } => {
                        if request == RESPONSE {
                            // Our response was lost: the caller asks again with the cookie.
                            let reply = c.reply;
                            self.reply(&reply, from, &mut send_buf)?;
                        } else {
                            self.progress.unexpected += 1;
                        }
                    }
                    UdtHeader::Data { seq, dst_socket, .. } if dst_socket == c.my_socket => {
                        let Some(k) = c.space.unwrap(seq, c.stream.next_packet()) else {
                            self.progress.unexpected += 1;
                            continue;
                        };
                        let accepted = c
                            .stream
                            .accept(k, payload)
                            .map_err(|source| output_error(self.spec.out.as_deref(), source))?;
                        match accepted {
                            Accepted::Stored | Accepted::Duplicate => {
                                let packet = Packet::new(Header::Udt(header), IP_UDP_BYTES + n as u32);
                                c.receiver.on_packet(now, &packet, &mut out);
                            }
                            Accepted::OutOfWindow | Accepted::WrongSize => self.progress.unexpected += 1,
                        }
                    }
                    UdtHeader::Control { dst_socket, body, .. } if dst_socket == c.my_socket => {
                        if body == UdtControl::Shutdown {
                            c.shutdown = true;
                        } else {
                            let packet = Packet::new(Header::Udt(header), IP_UDP_BYTES + n as u32);
                            c.receiver.on_packet(now, &packet, &mut out);
                        }
                    }
                    _ => self.progress.unexpected += 1,
                }
            }
            let now = handed.now(&self.clock);
            let Some(c) = conn.as_mut() else {
                self.shared.publish(&self.progress);
                driver::wait(&self.socket, &self.clock, now + TURN)?;
                continue;
            };
            if now >= c.receiver.next_wakeup() {
                c.receiver.on_timer(now, &mut out);
            }
            if now > c.exp_deadline() {
                // UDT 4.11 `checkTimers`: a receiver with nothing to send answers its EXP timer
                // with a keep-alive, without which a UDT 4 sender idle for about 40 s would
                // declare the connection broken. The simulated receiver has no such timer.
                out.send(control_packet(now, c.start, c.peer_socket, UdtControl::KeepAlive));
                c.exp_count += 1;
                c.last_exp = now;
            }
            for packet in out.packets.drain(..) {
                let Header::Udt(header) = packet.header else { continue };
                if let UdtHeader::Control { body, .. } = &header {
                    match body {
                        UdtControl::Ack { .. } => self.progress.acks += 1,
                        UdtControl::Nak { .. } => self.progress.naks += 1,
                        _ => {}
                    }
                }
                encode_into(&header, &[], &mut send_buf);
                driver::send_datagram(&self.socket, c.peer, &send_buf, &mut self.progress.lost_in_host)?;
            }
            let unbounded = c.stream.content_len() == Some(UNBOUNDED);
            let raw = c.stream.framing() == Framing::Raw;
            if c.complete_at.is_none() && !unbounded {
                if let Some(result) = c.stream.finish() {
                    c.checksum = Some(result?.checksum);
                    c.complete_at = Some(now);
                }
            }
            let done = if raw && c.shutdown {
                // The sender closed: a UDT 4 sender lingers until everything is acknowledged first,
                // so the stream ends here, unless a packet is still missing before some that came.
                if c.stream.held() > 0 {
                    self.observe(c, now);
                    let (received, held) = (c.stream.content_written(), c.stream.held());
                    return Err(TransferError::RawIncomplete { received, held });
                }
                true
            } else if unbounded || raw {
                c.shutdown
            } else if c.complete_at.is_some() {
                c.shutdown || now - c.last_heard > LINGER
            } else if c.shutdown {
                self.observe(c, now);
                let (received, expected) = (c.stream.content_written(), c.stream.content_len().unwrap_or(0));
                if expected > IMPLAUSIBLE_LENGTH {
                    return Err(TransferError::NotFramed { received, declared: expected });
                }
                return Err(TransferError::Incomplete { received, expected });
            } else {
                false
            };
            if done {
                self.observe(c, now);
                return self.finish(conn.take(), unbounded, raw);
            }
            if now - c.last_heard > self.spec.idle_timeout {
                self.observe(c, now);
                return Err(TransferError::PeerSilent { silent_s: (now - c.last_heard) as f64 / 1e9 });
            }
            if now >= next_publish {
                self.observe(c, now);
                next_publish = now + TURN;
            }
            let next = c.receiver.next_wakeup().min(next_publish).min(c.exp_deadline() + 1);
            driver::wait(&self.socket, &self.clock, next)?;
        }
    }

    /// The end of a complete transfer: the output flushed, an unbounded test's pattern checked.
    fn finish(&self, conn: Option<Connection>, unbounded: bool, raw: bool) -> Result<Summary, TransferError> {
        // Raw: the checksum of what was written, which nothing on the wire confirms.
        let checksum =
            conn.as_ref().and_then(|c| if raw { Some(c.stream.content_checksum()) } else { c.checksum });
        if let Some(c) = conn {
            let mut sink = c.stream.into_sink();
            if unbounded && sink.pattern.mismatched > 0 {
                return Err(TransferError::PatternMismatch {
                    written: sink.pattern.written,
                    mismatched: sink.pattern.mismatched,
                });
            }
            sink.commit()?;
        }
        Ok(Summary { pattern_checked: unbounded, ..Summary::of(&self.progress, true, checksum) })
    }

    fn reply(&mut self, reply: &UdtHeader, to: SocketAddr, buf: &mut Vec<u8>) -> Result<(), TransferError> {
        encode_into(reply, &[], buf);
        driver::send_datagram(&self.socket, to, buf, &mut self.progress.lost_in_host)
    }

    /// Reads the connection's state into the progress and publishes it.
    fn observe(&mut self, c: &Connection, now: Time) {
        let counters = c.receiver.counters();
        let p = &mut self.progress;
        p.elapsed = now - c.start;
        p.bytes = c.stream.content_written();
        p.total = c.stream.content_len().filter(|&n| n != UNBOUNDED);
        p.rtt_us = c.receiver.rtt_us();
        p.packets_sent = counters.packets_sent;
        p.packets_received = counters.packets_received;
        self.shared.publish(p);
    }
}
