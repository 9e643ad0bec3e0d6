//! `cclab recv --protocol tcp`: listens for TCP connections carried in UDP
//! (the handshake of [`super::handshake`]), answers each through the
//! simulator's own [`TcpReceiver`], puts its bytes in order through a
//! [`StreamReceiver`] and verifies its content at the end. It ends when the
//! number of transfers it was told to expect have ended.
//!
//! Safety, whatever a peer sends:
//! - a connection exists only after the caller echoed the listener's cookie,
//!   and every later datagram must carry it; nothing is kept per stranger;
//! - at most `connections` are accepted, and no connection is opened again
//!   after it ended; further callers get a RESET;
//! - datagrams that do not decode, or are not for a connection, are counted and dropped;
//! - memory is bounded by the window: a connection holds at most `window`
//!   segments out of order (the stream, and the TCP receiver's intervals),
//!   and a segment beyond the window, or not on a segment boundary, is dropped;
//! - a connected peer silent for the idle timeout ends the transfer with an error.

use super::codec::{self, Datagram, Message, SynOptions};
use super::handshake::{self, Agreed, Listener, Verdict};
use super::send::{config, DEFAULT_MSS, MAX_CONNECTIONS};
use crate::clock::{Clock, HandedTime};
use crate::content::UNBOUNDED;
use crate::content::{output_error, Sink};
use crate::driver::{
    self, open_socket, ConnectionSummary, Handle, Progress, Received, Shared, Summary, TURN,
};
use crate::emulator::IPV4_UDP_HEADER_BYTES as IP_UDP_HEADER_BYTES;
use crate::error::{invalid, TransferError};
use crate::stream::{Accepted, Framing, StreamReceiver};
use cclab_transport::app::App;
use cclab_transport::tcp::{EcnFeedback, TcpReceiver};
use cclab_wire::{Ect, Endpoint, Header, Outbox, Packet, TcpKind, Time};
use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;

/// After a connection's content is verified it keeps answering (its last ACK may be
/// lost) until the sender's CLOSE, or this long without a datagram.
pub const LINGER: Time = cclab_wire::time::secs(1);
/// The receive window by default, segments: 4096 x 1412 bytes, about 5.8 MB, more
/// than the bandwidth-delay product of 100 Mbit/s at 400 ms.
pub const DEFAULT_WINDOW: u32 = 4096;

#[derive(Clone, Debug)]
pub struct TcpRecvSpec {
    pub listen: SocketAddr,
    pub out: Option<PathBuf>,
    /// Give up on a connected sender silent this long.
    pub idle_timeout: Time,
    /// The most payload bytes per segment it takes.
    pub mss: u32,
    /// The receive window it advertises, segments (and the most it holds out of order).
    pub window_segments: u32,
    /// Transfers to take before it ends.
    pub connections: u32,
    /// ACK every second segment (RFC 5681 §4.2), as the simulator's `delayed_ack`.
    pub delayed_ack: bool,
}

impl TcpRecvSpec {
    pub fn new(listen: SocketAddr) -> Self {
        Self {
            listen,
            out: None,
            idle_timeout: cclab_wire::time::secs(10),
            mss: DEFAULT_MSS,
            window_segments: DEFAULT_WINDOW,
            connections: 1,
            delayed_ack: false,
        }
    }
}

/// Validates the spec, creates the output file and binds the socket, and starts listening.
pub fn start(spec: TcpRecvSpec) -> Result<Handle<Summary>, TransferError> {
    if spec.idle_timeout == 0 {
        return Err(invalid("--timeout", "must be positive"));
    }
    if spec.connections == 0 || spec.connections > MAX_CONNECTIONS {
        return Err(invalid(
            "--connections",
            format!("{} is outside [1, {MAX_CONNECTIONS}]", spec.connections),
        ));
    }
    if spec.out.is_some() && spec.connections > 1 {
        return Err(invalid("--out", "takes the content of one connection; leave --connections at 1"));
    }
    if spec.window_segments < 2 || spec.window_segments > 1 << 20 {
        return Err(invalid(
            "--window",
            format!("{} segments is outside [2, {}]", spec.window_segments, 1 << 20),
        ));
    }
    let max_mss = driver::MAX_DATAGRAM as u32 - codec::SEGMENT_HEADER_BYTES as u32 - 64;
    if spec.mss < 16 || spec.mss > max_mss {
        return Err(invalid("--mss", format!("{} is outside [16, {max_mss}]", spec.mss)));
    }
    let sink = Some(Sink::create(spec.out.as_deref())?);
    let socket = open_socket(spec.listen)?;
    let local = socket.local_addr().map_err(TransferError::Socket)?;
    driver::spawn("cclab-recv-tcp", local, move |shared| {
        Receiving { spec, socket, shared, clock: Clock::new(), progress: Progress::default(), sink }.run()
    })
}

struct Connection {
    index: u32,
    peer: SocketAddr,
    number: u32,
    agreed: Agreed,
    receiver: TcpReceiver,
    stream: StreamReceiver<Sink>,
    started: Time,
    last_heard: Time,
    complete_at: Option<Time>,
    checksum: Option<u64>,
    closed: bool,
    /// Ended (verified and closed, or lingered out): kept for its summary and to refuse its datagrams.
    ended: bool,
}

struct Receiving<'a> {
    spec: TcpRecvSpec,
    socket: UdpSocket,
    shared: &'a Shared,
    clock: Clock,
    progress: Progress,
    /// The sink with the output file, for the first connection.
    sink: Option<Sink>,
}

impl Receiving<'_> {
    fn run(&mut self) -> Result<Summary, TransferError> {
        let listener = Listener::new(driver::os_random(), self.spec.mss, self.spec.window_segments);
        let origin = self.clock.now();
        let mut conns: Vec<Connection> = Vec::new();
        let mut buf = vec![0u8; driver::MAX_DATAGRAM];
        let mut send_buf = Vec::with_capacity(2048);
        let mut out = Outbox::default();
        let mut next_publish = 0;
        let mut handed = HandedTime::new(origin);
        loop {
            if self.shared.stopping() {
                self.observe(&conns, origin);
                return Ok(self.summary(&conns, false));
            }
            while let Some(Received { len: n, from, at }) =
                driver::receive(&self.socket, &mut buf, &self.clock)?
            {
                // As UDT's receiver: the arrival, never before a time an endpoint was given.
                let now = handed.give(at);
                let Ok((datagram, payload)) = codec::decode(&buf[..n]) else {
                    self.progress.malformed += 1;
                    continue;
                };
                let known = conns.iter().position(|c| c.peer == from && c.number == datagram.connection);
                let Some(i) = known else {
                    self.on_stranger(&listener, &mut conns, now, origin, from, &datagram, &mut send_buf)?;
                    continue;
                };
                let c = &mut conns[i];
                if datagram.cookie != c.agreed.cookie || c.ended {
                    self.progress.unexpected += 1;
                    continue;
                }
                c.last_heard = now;
                match datagram.message {
                    // Our ACCEPT was lost: the caller asks again.
                    Message::Syn { .. } => {
                        let reply = handshake::accept(c.number, &c.agreed);
                        codec::encode(&reply, &[], &mut send_buf);
                        driver::send_datagram(
                            &self.socket,
                            from,
                            &send_buf,
                            &mut self.progress.lost_in_host,
                        )?;
                    }
                    Message::Segment { header, ect, ce } if header.kind == TcpKind::Data => {
                        let mss = u64::from(c.agreed.mss);
                        let k = header.seq / mss;
                        let next = c.stream.next_packet();
                        let aligned = header.seq % mss == 0 && header.len > 0 && u64::from(header.len) <= mss;
                        let accepted = if !aligned {
                            Accepted::WrongSize
                        } else if k < next {
                            Accepted::Duplicate
                        } else {
                            c.stream
                                .accept(k, payload)
                                .map_err(|source| output_error(self.spec.out.as_deref(), source))?
                        };
                        match accepted {
                            Accepted::Stored | Accepted::Duplicate => {
                                let mut packet =
                                    Packet::new(Header::Tcp(header), IP_UDP_HEADER_BYTES + n as u32);
                                (packet.ect, packet.ce) = (ect, ce);
                                c.receiver.on_packet(now - origin, &packet, &mut out);
                            }
                            Accepted::OutOfWindow | Accepted::WrongSize => self.progress.unexpected += 1,
                        }
                    }
                    Message::Close => c.closed = true,
                    _ => self.progress.unexpected += 1,
                }
                self.answer(&mut conns[i], &mut out, &mut send_buf)?;
            }
            let now = handed.now(&self.clock);
            for i in 0..conns.len() {
                if conns[i].ended {
                    continue;
                }
                if now - origin >= conns[i].receiver.next_wakeup() {
                    conns[i].receiver.on_timer(now - origin, &mut out);
                    self.answer(&mut conns[i], &mut out, &mut send_buf)?;
                }
                let c = &mut conns[i];
                let unbounded = c.stream.content_len() == Some(UNBOUNDED);
                if c.complete_at.is_none() && !unbounded {
                    if let Some(result) = c.stream.finish() {
                        c.checksum = Some(result?.checksum);
                        c.complete_at = Some(now - origin);
                    }
                }
                if unbounded && c.closed && c.complete_at.is_none() {
                    c.complete_at = Some(now - origin);
                }
                if c.complete_at.is_some() {
                    c.ended = c.closed || now - c.last_heard > LINGER;
                } else if c.closed {
                    self.observe(&conns, origin);
                    let c = &conns[i];
                    let (received, expected) =
                        (c.stream.content_written(), c.stream.content_len().unwrap_or(0));
                    return Err(TransferError::Incomplete { received, expected });
                } else if now - c.last_heard > self.spec.idle_timeout {
                    let silent_s = (now - c.last_heard) as f64 / 1e9;
                    self.observe(&conns, origin);
                    return Err(TransferError::PeerSilent { silent_s });
                }
            }
            let ended = conns.iter().filter(|c| c.ended).count() as u32;
            if ended == self.spec.connections {
                self.observe(&conns, origin);
                return self.finish(conns);
            }
            if now >= next_publish {
                self.observe(&conns, origin);
                next_publish = now + TURN;
            }
            let mut next = next_publish;
            for c in conns.iter().filter(|c| !c.ended) {
                next = next.min(c.receiver.next_wakeup().saturating_add(origin));
                if c.complete_at.is_some() {
                    next = next.min(c.last_heard + LINGER + 1);
                }
            }
            driver::wait(&self.socket, &self.clock, next)?;
        }
    }

    /// A datagram of no connection: a SYN goes to the listener; anything else is counted.
    #[allow(clippy::too_many_arguments)]
    fn on_stranger(
        &mut self,
        listener: &Listener,
        conns: &mut Vec<Connection>,
        now: Time,
        origin: Time,
        from: SocketAddr,
        datagram: &Datagram,
        send_buf: &mut Vec<u8>,
    ) -> Result<(), TransferError> {
        match listener.on_datagram(now, from, datagram) {
            Verdict::Reply(reply) => {
                codec::encode(&reply, &[], send_buf);
                driver::send_datagram(&self.socket, from, send_buf, &mut self.progress.lost_in_host)
            }
            Verdict::Accept { reply, agreed, options } => {
                let reply = if conns.len() as u32 >= self.spec.connections {
                    // No more than it was told to take: the caller is told so.
                    Datagram { message: Message::Reset, ..reply }
                } else {
                    let sink = self.sink.take().unwrap_or_default();
                    conns.push(self.connection(
                        conns.len() as u32,
                        from,
                        datagram.connection,
                        agreed,
                        options,
                        sink,
                        now,
                        origin,
                    ));
                    self.progress.connected = true;
                    self.progress.peer.get_or_insert(from);
                    reply
                };
                codec::encode(&reply, &[], send_buf);
                driver::send_datagram(&self.socket, from, send_buf, &mut self.progress.lost_in_host)
            }
            Verdict::Ignore => {
                self.progress.unexpected += 1;
                Ok(())
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn connection(
        &self,
        index: u32,
        peer: SocketAddr,
        number: u32,
        agreed: Agreed,
        options: SynOptions,
        sink: Sink,
        now: Time,
        origin: Time,
    ) -> Connection {
        let mut cfg = config(agreed.mss, agreed.window_segments, options.sack, App::Bulk, now - origin);
        (cfg.timestamps, cfg.delayed_ack) = (options.timestamps, self.spec.delayed_ack);
        if options.ecn {
            cfg.ecn = EcnFeedback::Classic;
        }
        Connection {
            index,
            peer,
            number,
            agreed,
            receiver: TcpReceiver::new(&cfg),
            stream: StreamReceiver::new(
                u64::from(agreed.mss),
                agreed.window_segments as usize,
                Framing::Framed,
                sink,
            ),
            started: now - origin,
            last_heard: now,
            complete_at: None,
            checksum: None,
            closed: false,
            ended: false,
        }
    }

    /// Sends the ACKs the connection's receiver put in `out`.
    fn answer(
        &mut self,
        c: &mut Connection,
        out: &mut Outbox,
        buf: &mut Vec<u8>,
    ) -> Result<(), TransferError> {
        for packet in out.packets.drain(..) {
            let Header::Tcp(header) = packet.header else { continue };
            self.progress.acks += 1;
            let message = Message::Segment { header, ect: Ect::NotEct, ce: false };
            codec::encode(&Datagram { connection: c.number, cookie: c.agreed.cookie, message }, &[], buf);
            driver::send_datagram(&self.socket, c.peer, buf, &mut self.progress.lost_in_host)?;
        }
        Ok(())
    }

    /// The end of every expected transfer: outputs flushed, unbounded tests' patterns checked.
    fn finish(&mut self, conns: Vec<Connection>) -> Result<Summary, TransferError> {
        let mut summary = self.summary(&conns, true);
        let mut unbounded = false;
        for c in conns {
            let is_unbounded = c.stream.content_len() == Some(UNBOUNDED);
            let mut sink = c.stream.into_sink();
            if is_unbounded {
                unbounded = true;
                if sink.pattern.mismatched > 0 {
                    return Err(TransferError::PatternMismatch {
                        written: sink.pattern.written,
                        mismatched: sink.pattern.mismatched,
                    });
                }
            }
            sink.commit()?;
        }
        summary.pattern_checked = unbounded;
        Ok(summary)
    }

    fn summary(&self, conns: &[Connection], complete: bool) -> Summary {
        let connections: Vec<ConnectionSummary> = conns
            .iter()
            .map(|c| ConnectionSummary {
                index: c.index,
                started: c.started,
                finished: c.complete_at,
                content_bytes: c.stream.content_written(),
                retransmits: 0,
                timeouts: 0,
                checksum: c.checksum,
            })
            .collect();
        let checksum = if connections.len() == 1 { connections[0].checksum } else { None };
        Summary { connections, ..Summary::of(&self.progress, complete, checksum) }
    }

    /// The connections' state into the progress, published.
    fn observe(&mut self, conns: &[Connection], origin: Time) {
        let p = &mut self.progress;
        p.elapsed = self.clock.now() - origin;
        p.bytes = conns.iter().map(|c| c.stream.content_written()).sum();
        let totals: Option<u64> =
            conns.iter().map(|c| c.stream.content_len().filter(|&n| n != UNBOUNDED)).sum();
        p.total = totals.filter(|_| conns.len() as u32 == self.spec.connections);
        p.packets_sent = conns.iter().map(|c| c.receiver.counters().packets_sent).sum();
        p.packets_received = conns.iter().map(|c| c.receiver.counters().packets_received).sum();
        self.shared.publish(p);
    }
}
