//! `cclab send --protocol tcp`: a sending host. It opens one or several TCP
//! connections to a listening `cclab recv --protocol tcp` (the handshake of
//! [`super::handshake`]), each sending the same content through the
//! simulator's own [`TcpSender`] with the congestion control, loss recovery,
//! pacing and send-buffer policy named as in a scenario.
//!
//! With a send-buffer policy and a memory cap the host does what the
//! simulator's host agent does (seed paper 004): every `share_every` from the
//! host's start, and as each connection opens (its handshake done), it turns the connections'
//! desires into limits under the cap ([`share::connection_limits`]) and tells
//! each its limit; every such decision is kept for the allocation-over-time
//! plot.
//!
//! All connections share one UDP socket (the host's) and one thread. As with
//! UDT, content is read again for every send and the checksum computed as
//! segments first leave ([`StreamSender`]).

use super::codec::{self, Datagram, Message, SynOptions};
use super::handshake::{Agreed, Caller, CallerState};
use crate::clock::{Clock, HandedTime};
use crate::content::UNBOUNDED;
use crate::content::{read_error, Content, Source};
use crate::driver::{
    self, open_socket, Allocation, ConnectionSummary, Handle, Progress, Received, Shared, Summary, TURN,
};
use crate::emulator::IPV4_UDP_HEADER_BYTES as IP_UDP_HEADER_BYTES;
use crate::error::{invalid, TransferError};
use crate::stream::{Framing, StreamSender, CHECKSUM_BYTES, LENGTH_BYTES};
use cclab_transport::app::App;
use cclab_transport::buffer::share::{self, ShareSchedule};
use cclab_transport::buffer::Sharing;
pub use cclab_transport::cc::CwndGrowth;
use cclab_transport::pacing;
use cclab_transport::registry;
use cclab_transport::tcp::{TcpConfig, TcpSender};
use cclab_wire::time::secs;
use cclab_wire::{Control, Endpoint, Header, Outbox, Packet, SendState, Time};
use std::net::{SocketAddr, UdpSocket};

/// Payload bytes per segment by default: a full data datagram is 1500 bytes with the IPv4 and UDP headers.
pub const DEFAULT_MSS: u32 = 1500 - super::PACKET_HEADER_BYTES;
/// Segments an unbounded test's application keeps written ahead of what was acknowledged, beyond the receive window.
const WRITE_AHEAD_SEGMENTS: u64 = 256;
/// A connected receiver silent this long, while data is outstanding, is given up: TCP's R2 (RFC 1122
/// 4.2.3.5) as a time. RFC 1122 asks at least 100 s of it and Linux's `tcp_retries2` (15 backed-off
/// retransmissions) comes to about 15 minutes, for paths nobody knows; a laboratory's path is known,
/// and this is `cclab recv --timeout`'s default. (UDT's sender gives up after 5 s, at an EXP expiry.)
pub const RECEIVER_SILENCE: Time = secs(10);
/// Most connections one `cclab send` opens.
pub const MAX_CONNECTIONS: u32 = 64;

/// The algorithm and its parameters (name, value as text), as a scenario names them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Named {
    pub name: String,
    pub params: Vec<(String, String)>,
}

impl Named {
    pub fn new(name: &str) -> Self {
        Self { name: name.to_string(), params: Vec::new() }
    }
}

/// The sending host's send buffers: each connection's policy, and the host's cap.
#[derive(Clone, Debug, PartialEq)]
pub struct BufferSpec {
    pub policy: Named,
    /// Bytes the host's connections may hold in all; `None`: each has what its policy desires.
    pub memory_cap: Option<u64>,
    /// How often the host shares its memory (500 ms: the BSD slow timer, as in the simulator).
    pub share_every: Time,
}

#[derive(Clone, Debug)]
pub struct TcpSendSpec {
    pub to: SocketAddr,
    pub source: Source,
    pub connections: u32,
    /// Connection `i` starts `i x stagger` after the first.
    pub stagger: Time,
    pub cc: Named,
    pub recovery: Named,
    pub pacing: Named,
    pub send_buffer: Option<BufferSpec>,
    /// Stop after this long: the end of an unbounded test, a limit otherwise.
    pub duration: Option<Time>,
    /// Payload bytes per full segment the sender offers (the receiver may lower it).
    pub mss: u32,
    /// Whether an ACK grows the window whether or not it was in use (a scenario's `cwnd_growth`).
    pub cwnd_growth: CwndGrowth,
}

impl TcpSendSpec {
    /// A spec with the simulator's TCP defaults: the registry's default algorithms (Reno with NewReno
    /// recovery, no pacing), no send-buffer policy.
    pub fn new(to: SocketAddr, source: Source) -> Self {
        Self {
            to,
            source,
            connections: 1,
            stagger: 0,
            cc: Named::new(registry::DEFAULT_CONGESTION_CONTROL),
            recovery: Named::new(registry::DEFAULT_LOSS_RECOVERY),
            pacing: Named::new(registry::DEFAULT_PACING),
            send_buffer: None,
            duration: None,
            mss: DEFAULT_MSS,
            cwnd_growth: CwndGrowth::Always,
        }
    }
}

/// The algorithms of one connection, built from the spec.
struct Algorithms {
    sender: TcpSender,
    sharing: Option<Sharing>,
}

fn algorithms(spec: &TcpSendSpec, cfg: &TcpConfig, connection: u32) -> Result<Algorithms, TransferError> {
    let (cc_d, cc_p) = driver::algorithm(
        registry::CONGESTION_CONTROLS,
        "--cc",
        "--cc-param",
        &spec.cc.name,
        &spec.cc.params,
    )?;
    let mut cc = (cc_d.build.build)(&cc_p).map_err(|e| invalid("--cc-param", e.to_string()))?;
    // BBR draws its first gain phase; a real connection draws it from the operating system.
    cc.seed(driver::os_random() ^ u64::from(connection));
    let (rec_d, rec_p) = driver::algorithm(
        registry::LOSS_RECOVERIES,
        "--recovery",
        "--recovery-param",
        &spec.recovery.name,
        &spec.recovery.params,
    )?;
    let recovery = (rec_d.build.build)(&rec_p).map_err(|e| invalid("--recovery-param", e.to_string()))?;
    let (pace_d, pace_p) = driver::algorithm(
        registry::PACINGS,
        "--pacing",
        "--pacing-param",
        &spec.pacing.name,
        &spec.pacing.params,
    )?;
    if cc_d.build.paces_itself && spec.pacing.name != pacing::none::DESCRIPTOR.name {
        return Err(invalid("--pacing", format!("{} paces itself; leave --pacing at none", spec.cc.name)));
    }
    let pacer = (pace_d.build)(&pace_p).map_err(|e| invalid("--pacing-param", e.to_string()))?;
    let mut sender = TcpSender::new(cfg, cc, recovery, pacer);
    let mut sharing = None;
    if let Some(b) = &spec.send_buffer {
        let (d, p) = driver::algorithm(
            registry::SEND_BUFFER_POLICIES,
            "--send-buffer",
            "--buffer-param",
            &b.policy.name,
            &b.policy.params,
        )?;
        let policy = (d.build)(&p).map_err(|e| invalid("--buffer-param", e.to_string()))?;
        sharing = Some(policy.sharing());
        // Under a cap the host gives a connection its share when it counts it in; until then none.
        sender = sender.with_send_buffer(policy, if b.memory_cap.is_some() { 0 } else { u64::MAX });
    }
    Ok(Algorithms { sender, sharing })
}

/// Whether the named recovery reads SACK blocks (then the receiver must send them).
fn uses_sack(recovery: &str) -> bool {
    registry::loss_recovery(recovery).is_some_and(|d| d.build.uses_sack)
}

/// The configuration both ends of a real connection use: the simulator's TCP
/// defaults (as a scenario's flow gets them), with the agreed segment size and
/// window, and the real headers' bytes.
pub fn config(mss: u32, window_segments: u32, sack: bool, app: App, start: Time) -> TcpConfig {
    TcpConfig {
        mss,
        header_bytes: super::PACKET_HEADER_BYTES,
        initial_window: TcpConfig::rfc3390_initial_window(mss),
        max_window: Some(u64::from(window_segments)),
        sack,
        app,
        start,
        ..TcpConfig::default()
    }
}

/// Validates the spec, opens the content and the socket, and starts the sending host's thread.
pub fn start(spec: TcpSendSpec) -> Result<Handle<Summary>, TransferError> {
    // Built here to report a bad name or parameter at once; built again per connection.
    let probe = algorithms(&spec, &config(spec.mss.max(1), 1, false, App::Bulk, 0), 0)?;
    if spec.source == Source::Unbounded && spec.duration.is_none() {
        return Err(invalid("--duration", "a test without --bytes or a file needs a duration"));
    }
    if spec.duration == Some(0) {
        return Err(invalid("--duration", "must be positive"));
    }
    if let Some(problem) = crate::emulator::destination_problem(spec.to) {
        return Err(invalid("--to", problem));
    }
    if spec.connections == 0 || spec.connections > MAX_CONNECTIONS {
        return Err(invalid(
            "--connections",
            format!("{} is outside [1, {MAX_CONNECTIONS}]", spec.connections),
        ));
    }
    let max_mss = driver::MAX_DATAGRAM as u32 - codec::SEGMENT_HEADER_BYTES as u32 - 64;
    if spec.mss < 16 || spec.mss > max_mss {
        return Err(invalid("--mss", format!("{} is outside [16, {max_mss}]", spec.mss)));
    }
    if let Some(b) = &spec.send_buffer {
        if b.share_every == 0 {
            return Err(invalid("--share-every", "must be positive"));
        }
        if b.memory_cap == Some(0) {
            return Err(invalid("--memory-cap", "must be positive"));
        }
    }
    let sharing = probe.sharing;
    let contents = (0..spec.connections).map(|_| spec.source.open()).collect::<Result<Vec<_>, _>>()?;
    let any: SocketAddr = if spec.to.is_ipv4() { ([0, 0, 0, 0], 0).into() } else { ([0u16; 8], 0).into() };
    let socket = open_socket(any)?;
    let local = socket.local_addr().map_err(TransferError::Socket)?;
    driver::spawn("cclab-send-tcp", local, move |shared| {
        Host::new(spec, socket, shared, sharing).run(contents)
    })
}

/// One connection of the host.
struct Connection {
    index: u32,
    caller: Caller,
    /// When it starts calling (since the host started).
    starts_at: Time,
    content: Option<Content>,
    open: Option<Open>,
    /// Everything acknowledged, or given up; its CLOSE sent.
    done: bool,
    finished: Option<Time>,
}

/// A connection after its handshake.
struct Open {
    connection: u32,
    agreed: Agreed,
    sender: TcpSender,
    stream: StreamSender,
    /// When it connected (the sender's clock zero is the host's).
    started: Time,
    /// Bytes the application wrote (an unbounded test writes as it goes).
    written: u64,
    closing: bool,
    last_heard: Time,
    /// The sender's retransmission timeouts when the receiver was last heard.
    timeouts_when_heard: u64,
    acks: u64,
}

impl Open {
    fn acked_content(&self) -> u64 {
        let s = self.sender.state();
        let acked = s.snd_una * u64::from(s.mss);
        acked.saturating_sub(LENGTH_BYTES).min(self.stream.layout().content_len)
    }
}

struct Host<'a> {
    spec: TcpSendSpec,
    socket: UdpSocket,
    shared: &'a Shared,
    clock: Clock,
    sharing: Option<Sharing>,
    progress: Progress,
    recv_buf: Vec<u8>,
    send_buf: Vec<u8>,
    segment_buf: Vec<u8>,
    out: Outbox,
    allocations: Vec<Allocation>,
}

impl<'a> Host<'a> {
    fn new(spec: TcpSendSpec, socket: UdpSocket, shared: &'a Shared, sharing: Option<Sharing>) -> Self {
        Self {
            progress: Progress { peer: Some(spec.to), ..Progress::default() },
            spec,
            socket,
            shared,
            clock: Clock::new(),
            sharing,
            recv_buf: vec![0; driver::MAX_DATAGRAM],
            send_buf: Vec::with_capacity(2048),
            segment_buf: Vec::with_capacity(2048),
            out: Outbox::default(),
            allocations: Vec::new(),
        }
    }

    fn send(&mut self, datagram: &Datagram, payload: &[u8]) -> Result<(), TransferError> {
        codec::encode(datagram, payload, &mut self.send_buf);
        driver::send_datagram(&self.socket, self.spec.to, &self.send_buf, &mut self.progress.lost_in_host)
    }

    fn run(&mut self, contents: Vec<Content>) -> Result<Summary, TransferError> {
        let origin = self.clock.now();
        let lengths: Vec<u64> = contents.iter().map(Content::len).collect();
        self.progress.total = self.bounded().then(|| lengths.iter().sum());
        let options = SynOptions { sack: uses_sack(&self.spec.recovery.name), timestamps: true, ecn: false };
        let mut conns: Vec<Connection> = contents
            .into_iter()
            .enumerate()
            .map(|(i, content)| {
                let i = i as u32;
                let starts_at = origin + u64::from(i) * self.spec.stagger;
                // Connection numbers: random, so that a restarted sender is not taken for its predecessor.
                let number = (driver::os_random() as u32 & !0xFF) | i;
                Connection {
                    index: i,
                    caller: Caller::new(starts_at, number, self.spec.mss, options),
                    starts_at,
                    content: Some(content),
                    open: None,
                    done: false,
                    finished: None,
                }
            })
            .collect();
        let capped =
            self.spec.send_buffer.as_ref().and_then(|b| b.memory_cap.map(|cap| (cap, b.share_every)));
        let mut schedule = capped.map(|(_, every)| ShareSchedule::new(every, Vec::new()));
        let deadline = self.spec.duration.map(|d| origin + d);
        let mut next_publish = origin;
        let mut failure: Option<TransferError> = None;
        let mut handed = HandedTime::new(origin);
        self.progress.connected = true;
        loop {
            let now = self.clock.now();
            let stop = self.shared.stopping() || deadline.is_some_and(|d| now >= d);
            if stop {
                // A bounded transfer, or a stop request, closes every connection at once; an
                // unbounded test's connections close as each delivers what it wrote.
                self.close_all(&mut conns, now, origin)?;
                handed.give(now);
                if conns.iter().all(|c| c.done) {
                    break;
                }
            }
            // Handshakes.
            for c in conns.iter_mut().filter(|c| c.open.is_none() && !c.done && now >= c.starts_at) {
                if let Some(syn) = c.caller.poll(now) {
                    self.send(&syn, &[])?;
                }
                match c.caller.state() {
                    CallerState::Connecting | CallerState::Connected(_) => {}
                    CallerState::Reset => failure = Some(TransferError::Rejected(self.spec.to)),
                    CallerState::TimedOut => failure = Some(TransferError::ConnectTimeout(self.spec.to)),
                }
            }
            // What the receiver sent.
            let mut opened = false;
            while let Some(Received { len: n, from, at }) =
                driver::receive(&self.socket, &mut self.recv_buf, &self.clock)?
            {
                if from != self.spec.to {
                    self.progress.unexpected += 1;
                    continue;
                }
                let Ok((datagram, _)) = codec::decode(&self.recv_buf[..n]) else {
                    self.progress.malformed += 1;
                    continue;
                };
                let Some(c) = conns.iter_mut().find(|c| c.caller.connection() == datagram.connection) else {
                    self.progress.unexpected += 1;
                    continue;
                };
                // When the ACK arrived, not when this loop got to it: RTT samples and the ACK clock
                // then leave out the loop's scheduling.
                let now = handed.give(at);
                match (&mut c.open, datagram.message) {
                    (None, _) => {
                        c.caller.on_datagram(&datagram);
                        if let CallerState::Connected(agreed) = c.caller.state() {
                            let content = c
                                .content
                                .take()
                                .ok_or_else(|| TransferError::Thread("connected twice".into()))?;
                            let connection = c.caller.connection();
                            c.open = Some(self.open(c.index, connection, agreed, content, now, origin)?);
                            opened = true;
                        }
                    }
                    (Some(open), Message::Segment { header, ect, ce })
                        if datagram.cookie == open.agreed.cookie =>
                    {
                        open.last_heard = now;
                        open.timeouts_when_heard = open.sender.timeouts();
                        open.acks += 1;
                        let wire = IP_UDP_HEADER_BYTES + n as u32;
                        let mut packet = Packet::new(Header::Tcp(header), wire);
                        (packet.ect, packet.ce) = (ect, ce);
                        open.sender.on_packet(now - origin, &packet, &mut self.out);
                        self.transmit(open, None)?;
                    }
                    (Some(open), Message::Reset) if datagram.cookie == open.agreed.cookie => {
                        let acknowledged = open.acked_content();
                        failure = Some(TransferError::ReceiverClosed {
                            acknowledged,
                            total: open.stream.layout().content_len,
                        });
                    }
                    // A repeated ACCEPT (our SYN went twice), or a stranger's guess.
                    _ => self.progress.unexpected += 1,
                }
            }
            if let Some(e) = failure.take() {
                return self.fail(&mut conns, origin, e);
            }
            // The host shares its memory.
            let now = self.clock.now();
            if let (Some(schedule), Some((cap, _))) = (schedule.as_mut(), capped) {
                if now - origin >= schedule.next() {
                    schedule.done(now - origin);
                    self.share(&mut conns, cap, now - origin)?;
                }
            }
            // Timers, the application's writes, and what the senders send.
            for c in conns.iter_mut() {
                let Some(open) = c.open.as_mut() else { continue };
                if c.done {
                    continue;
                }
                let rel = self.clock.now() - origin;
                if !self.bounded() && !open.closing {
                    let payload = u64::from(open.agreed.mss);
                    let acked = open.sender.state().snd_una * payload;
                    // Never less than the receiver's window ahead, so an unbounded test is not limited by
                    // its application where a bulk flow of the simulator is not.
                    let ahead = WRITE_AHEAD_SEGMENTS + u64::from(open.agreed.window_segments);
                    let want = acked + ahead * payload;
                    if open.written < want {
                        let more = want - open.written;
                        open.written += more;
                        let _ = open.sender.on_control(rel, Control::AppWrite { bytes: more }, &mut self.out);
                    }
                }
                let due = open.sender.next_wakeup();
                let mut late = None;
                if rel >= due {
                    late = Some(rel - due);
                    open.sender.on_timer(rel, &mut self.out);
                }
                self.transmit(open, late)?;
                if open.sender.finished_at().is_some() {
                    c.finished = open.sender.finished_at();
                    self.close(c)?;
                } else if self.clock.now() - open.last_heard > RECEIVER_SILENCE {
                    let silent_s = (self.clock.now() - open.last_heard) as f64 / 1e9;
                    let expiries = open.sender.timeouts() - open.timeouts_when_heard;
                    return self.fail(&mut conns, origin, TransferError::ReceiverGone { expiries, silent_s });
                }
            }
            if let (true, Some((cap, _))) = (opened, capped) {
                // The host counts a connection in as soon as it opens, as the simulator's host does at a
                // connection's start, instead of leaving it without a buffer until the next period; after
                // the connection's first turn above, which asked its policy for a desire.
                self.share(&mut conns, cap, self.clock.now() - origin)?;
            }
            if conns.iter().all(|c| c.done) {
                break;
            }
            // Later than any time the endpoints were given in this turn.
            let now = handed.now(&self.clock);
            if now >= next_publish {
                self.observe(&conns, origin);
                next_publish = now + TURN;
            }
            let mut next = next_publish;
            for c in &conns {
                if c.done {
                    continue;
                }
                next = next.min(match &c.open {
                    Some(open) => open.sender.next_wakeup().saturating_add(origin),
                    None => c.caller.next_wakeup().max(c.starts_at),
                });
            }
            if let Some(s) = &schedule {
                next = next.min(origin + s.next());
            }
            if let Some(d) = deadline {
                next = next.min(d);
            }
            driver::wait(&self.socket, &self.clock, next)?;
        }
        self.observe(&conns, origin);
        Ok(self.summary(&conns))
    }

    /// Ends every connection after `error`, with the progress published.
    fn fail(
        &mut self,
        conns: &mut [Connection],
        origin: Time,
        error: TransferError,
    ) -> Result<Summary, TransferError> {
        self.close_all(conns, self.clock.now(), origin)?;
        self.observe(conns, origin);
        Err(error)
    }

    fn bounded(&self) -> bool {
        self.spec.source != Source::Unbounded
    }

    /// The connection's sender, from the agreed terms.
    fn open(
        &self,
        index: u32,
        connection: u32,
        agreed: Agreed,
        content: Content,
        now: Time,
        origin: Time,
    ) -> Result<Open, TransferError> {
        let payload = u64::from(agreed.mss);
        let stream = StreamSender::new(payload, content, Framing::Framed);
        let layout = *stream.layout();
        let bounded = layout.content_len != UNBOUNDED;
        let app = if bounded { App::Transfer { bytes: layout.stream_len() } } else { App::Stream };
        let sack = uses_sack(&self.spec.recovery.name);
        let cfg = TcpConfig {
            cwnd_growth: self.spec.cwnd_growth,
            ..config(agreed.mss, agreed.window_segments, sack, app, now - origin)
        };
        let sender = algorithms(&self.spec, &cfg, index)?.sender;
        Ok(Open {
            connection,
            agreed,
            sender,
            stream,
            started: now - origin,
            written: if bounded { layout.stream_len() } else { 0 },
            closing: false,
            last_heard: now,
            timeouts_when_heard: 0,
            acks: 0,
        })
    }

    /// Sends what `open`'s sender put in `out`, each data segment with its bytes.
    /// `late`: how long after the sender's wake-up time (a pacing release, a timer) this
    /// turn ran, `None` when an ACK or the host made the sender send.
    fn transmit(&mut self, open: &mut Open, late: Option<Time>) -> Result<(), TransferError> {
        let mss = u64::from(open.agreed.mss);
        let mut packets = std::mem::take(&mut self.out.packets);
        let mut segment = std::mem::take(&mut self.segment_buf);
        for packet in packets.drain(..) {
            let Header::Tcp(header) = packet.header else { continue };
            segment.clear();
            if header.len > 0 {
                // The sender works in whole segments: segment k starts at byte k x mss.
                open.stream.fill(header.seq / mss, &mut segment).map_err(read_error)?;
                segment.truncate(header.len as usize);
                if let Some(late) = late {
                    self.progress.pacing.record(late);
                }
            }
            let message = Message::Segment { header, ect: packet.ect, ce: false };
            self.send(
                &Datagram { connection: open.connection, cookie: open.agreed.cookie, message },
                &segment,
            )?;
        }
        (self.out.packets, self.segment_buf) = (packets, segment);
        Ok(())
    }

    fn share(&mut self, conns: &mut [Connection], cap: u64, rel: Time) -> Result<(), TransferError> {
        let Some(sharing) = self.sharing else { return Ok(()) };
        let counted: Vec<(usize, SendState)> = conns
            .iter()
            .enumerate()
            .filter(|(_, c)| !c.done)
            .filter_map(|(i, c)| c.open.as_ref().and_then(|o| o.sender.send_state()).map(|s| (i, s)))
            .collect();
        let states: Vec<SendState> = counted.iter().map(|&(_, s)| s).collect();
        let limits = share::connection_limits(&states, sharing, cap);
        for (&(i, state), limit) in counted.iter().zip(limits) {
            let c = &mut conns[i];
            let Some(open) = c.open.as_mut() else { continue };
            let _ = open.sender.on_control(rel, Control::SetSendBuffer { bytes: limit }, &mut self.out);
            // A larger buffer lets the sender send at once.
            self.transmit(open, None)?;
            self.allocations.push(Allocation {
                at: rel,
                connection: c.index,
                desired: state.desired,
                limit,
                buffered: state.buffered,
                cwnd_bytes: state.inputs.cwnd_bytes,
                srtt: state.inputs.srtt,
                weight: state.share_weight,
            });
        }
        Ok(())
    }

    /// Ends a connection: its CLOSE, three times a few ms apart so one lost datagram does not strand the receiver.
    fn close(&mut self, c: &mut Connection) -> Result<(), TransferError> {
        if c.done {
            return Ok(());
        }
        c.done = true;
        let Some(open) = &c.open else { return Ok(()) };
        let close = Datagram {
            connection: c.caller.connection(),
            cookie: open.agreed.cookie,
            message: Message::Close,
        };
        for _ in 0..3 {
            self.send(&close, &[])?;
        }
        Ok(())
    }

    /// At the deadline or a stop: a bounded transfer ends every connection now; an
    /// unbounded test stops writing and lets each finish what it wrote.
    fn close_all(&mut self, conns: &mut [Connection], now: Time, origin: Time) -> Result<(), TransferError> {
        let hard = self.bounded() || self.shared.stopping();
        for c in conns.iter_mut() {
            match c.open.as_mut() {
                Some(open) if !hard && !open.closing => {
                    open.closing = true;
                    let _ = open.sender.on_control(now - origin, Control::AppClose, &mut self.out);
                    self.transmit(open, None)?;
                }
                Some(_) if !hard => {}
                _ => self.close(c)?,
            }
        }
        Ok(())
    }

    /// The connections' state into the progress, published.
    fn observe(&mut self, conns: &[Connection], origin: Time) {
        let now = self.clock.now();
        let p = &mut self.progress;
        p.elapsed = now - origin;
        (p.bytes, p.cwnd, p.flow_window) = (0, 0.0, 0.0);
        (p.packets_sent, p.packets_received, p.acks, p.retransmits, p.timeouts) = (0, 0, 0, 0, 0);
        let mut rtts = Vec::new();
        for open in conns.iter().filter_map(|c| c.open.as_ref()) {
            let s = open.sender.state();
            let counters = open.sender.counters();
            p.bytes += open.acked_content();
            p.cwnd += s.window.cwnd;
            p.flow_window = s.rwnd as f64;
            p.packets_sent += counters.packets_sent;
            p.packets_received += counters.packets_received;
            p.acks += open.acks;
            p.retransmits += open.sender.retransmits();
            p.timeouts += open.sender.timeouts();
            if s.rtt.srtt() > 0 {
                rtts.push(s.rtt.srtt());
            }
        }
        p.rtt_us =
            if rtts.is_empty() { 0 } else { (rtts.iter().sum::<Time>() / rtts.len() as u64 / 1000) as i64 };
        self.shared.publish(p);
    }

    fn summary(&self, conns: &[Connection]) -> Summary {
        let connections: Vec<ConnectionSummary> = conns
            .iter()
            .map(|c| {
                let open = c.open.as_ref();
                let complete = c.finished.is_some();
                let content_bytes = open.map_or(0, |o| {
                    if complete {
                        o.written
                            .saturating_sub(LENGTH_BYTES + if self.bounded() { CHECKSUM_BYTES } else { 0 })
                    } else {
                        o.acked_content()
                    }
                });
                ConnectionSummary {
                    index: c.index,
                    started: open.map_or(0, |o| o.started),
                    finished: c.finished,
                    content_bytes,
                    retransmits: open.map_or(0, |o| o.sender.retransmits()),
                    timeouts: open.map_or(0, |o| o.sender.timeouts()),
                    checksum: open.filter(|_| self.bounded() && complete).map(|o| o.stream.checksum()),
                }
            })
            .collect();
        let complete = conns.iter().all(|c| c.finished.is_some());
        let checksum = if connections.len() == 1 { connections[0].checksum } else { None };
        Summary {
            content_bytes: connections.iter().map(|c| c.content_bytes).sum(),
            connections,
            allocations: self.allocations.clone(),
            ..Summary::of(&self.progress, complete, checksum)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_wire::time::millis;

    fn spec() -> TcpSendSpec {
        TcpSendSpec::new("127.0.0.1:9".parse().unwrap(), Source::Bytes(1000))
    }

    fn error(spec: TcpSendSpec) -> String {
        start(spec).err().map(|e| e.to_string()).unwrap_or_default()
    }

    #[test]
    fn bad_settings_name_their_option() {
        assert!(
            error(TcpSendSpec { cc: Named::new("udt"), ..spec() }).starts_with("--cc: \"udt\" is not one of")
        );
        let mut s = spec();
        s.cc.params.push(("beta".into(), "2".into()));
        assert!(error(s).starts_with("--cc-param: reno has no parameter \"beta\""),);
        assert!(error(TcpSendSpec { recovery: Named::new("nope"), ..spec() }).starts_with("--recovery:"));
        assert!(error(TcpSendSpec { pacing: Named::new("nope"), ..spec() }).starts_with("--pacing:"));
        assert!(error(TcpSendSpec { cc: Named::new("bbr"), pacing: Named::new("rtt"), ..spec() })
            .starts_with("--pacing: bbr paces itself"));
        assert!(error(TcpSendSpec { connections: 0, ..spec() }).starts_with("--connections:"));
        assert!(error(TcpSendSpec { connections: 65, ..spec() }).starts_with("--connections:"));
        assert!(error(TcpSendSpec { mss: 3, ..spec() }).starts_with("--mss:"));
        assert!(error(TcpSendSpec { source: Source::Unbounded, ..spec() }).starts_with("--duration:"));
        let buffer = |policy: &str, cap| BufferSpec {
            policy: Named::new(policy),
            memory_cap: cap,
            share_every: millis(500),
        };
        assert!(error(TcpSendSpec { send_buffer: Some(buffer("nope", None)), ..spec() })
            .starts_with("--send-buffer:"));
        assert!(error(TcpSendSpec { send_buffer: Some(buffer("rtba", Some(0))), ..spec() })
            .starts_with("--memory-cap:"));
        let mut b = buffer("fixed", None);
        b.policy.params.push(("size".into(), "-1".into()));
        assert!(error(TcpSendSpec { send_buffer: Some(b), ..spec() }).starts_with("--buffer-param: size"));
    }

    #[test]
    fn a_full_data_segment_is_a_1500_byte_ip_packet() {
        assert_eq!(DEFAULT_MSS + codec::SEGMENT_HEADER_BYTES as u32 + IP_UDP_HEADER_BYTES, 1500);
        let cfg = config(DEFAULT_MSS, 100, true, App::Bulk, 0);
        assert_eq!(cfg.mss + cfg.header_bytes, 1500);
        assert_eq!((cfg.max_window, cfg.timestamps, cfg.sack), (Some(100), true, true));
    }
}
