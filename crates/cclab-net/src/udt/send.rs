//! `cclab send`: connects to a listening receiver with UDT 4's handshake and
//! sends a file, a given number of pattern bytes, or pattern bytes for a
//! duration, through the simulator's [`UdtSender`] with the congestion
//! control named as in a scenario.
//!
//! The sender never keeps the content in memory: packet `k` is read again
//! from the file (or regenerated) whenever it is sent, first or again. New
//! packets leave in order, so the checksum is computed as each one first
//! leaves and is complete when the last one, which carries it, does.
//!
//! A receiver that stops answering is given up at the first EXP expiry more
//! than [`RECEIVER_SILENCE`] after it was last heard: UDT 4.11's `checkTimers`
//! breaks the connection after more than 16 expiries and 5 s, but it restarts
//! that 5 s at every expiry while the expiries back off (the k-th comes
//! max(k (RTT + 4 RTTVar) + SYN, k x 300 ms) after the one before), so a dead peer
//! takes it 46 s at least, and minutes on a long or bloated path. The EXP timer itself, and 4.11's break
//! behind ours, are the simulator's and unchanged.

use super::handshake::{Agreed, Caller, CallerState, Offer};
use super::{encode_into, Tuning};
use crate::clock::{Clock, HandedTime};
use crate::content::UNBOUNDED;
use crate::content::{read_error, Content, Source};
use crate::driver::{self, open_socket, Handle, Progress, Received, Shared, Summary, TURN};
use crate::error::{invalid, TransferError};
use crate::stream::{Framing, StreamSender};
use cclab_transport::app::App;
use cclab_transport::registry;
use cclab_transport::udt::cc::UdtCongestionControl;
use cclab_transport::udt::sender::UdtSender;
use cclab_transport::udt::seq::SeqSpace;
use cclab_transport::udt::{control_packet, UdtConfig, IP_UDP_BYTES};
use cclab_wire::time::{millis, secs};
use cclab_wire::{
    Control, Endpoint, Header, MetricLog, Metrics, Outbox, Packet, Time, UdtControl, UdtHeader,
};
use std::net::SocketAddr;

/// Packets an unbounded test's application keeps written but not yet sent.
const WRITE_AHEAD_PACKETS: u64 = 256;
/// A receiver not heard from for longer than this, at an EXP expiry, is given up (UDT 4.11's 5 s).
pub const RECEIVER_SILENCE: Time = secs(5);

#[derive(Clone, Debug)]
pub struct SendSpec {
    pub to: SocketAddr,
    pub source: Source,
    /// A UDT congestion control's name (`cclab algorithms`): udt, udt_rtt_banded, ...
    pub cc: String,
    /// Its parameters that differ from the defaults: (name, value as text).
    pub cc_params: Vec<(String, String)>,
    /// Stop after this long: the end of an unbounded test, a limit otherwise.
    pub duration: Option<Time>,
    pub tuning: Tuning,
    /// The content alone on the wire (`--raw`), for a plain UDT 4 receiver: no length, no checksum.
    pub framing: Framing,
}

/// The UDT congestion control `name` at its defaults but for `overrides` (see [`driver::algorithm`]).
pub fn congestion_control(
    name: &str,
    overrides: &[(String, String)],
) -> Result<Box<dyn UdtCongestionControl>, TransferError> {
    let (descriptor, params) =
        driver::algorithm(registry::UDT_CONGESTION_CONTROLS, "--cc", "--cc-param", name, overrides)?;
    (descriptor.build)(&params).map_err(|e| invalid("--cc-param", e.to_string()))
}

/// Validates the spec, opens the content and the socket, and starts the transfer thread.
pub fn start(spec: SendSpec) -> Result<Handle<Summary>, TransferError> {
    // Built here to report a bad name or parameter at once; built again on the transfer's thread, which owns it.
    congestion_control(&spec.cc, &spec.cc_params)?;
    if spec.source == Source::Unbounded && spec.duration.is_none() {
        return Err(invalid("--duration", "a test without --bytes or a file needs a duration"));
    }
    if spec.duration == Some(0) {
        return Err(invalid("--duration", "must be positive"));
    }
    if let Some(problem) = crate::emulator::destination_problem(spec.to) {
        return Err(invalid("--to", problem));
    }
    let min_mss = IP_UDP_BYTES + cclab_wire::udt_codec::HEADER_BYTES as u32 + 1;
    if spec.tuning.mss < min_mss || spec.tuning.mss as usize > driver::MAX_DATAGRAM {
        return Err(invalid(
            "--mss",
            format!("{} is outside [{min_mss}, {}]", spec.tuning.mss, driver::MAX_DATAGRAM),
        ));
    }
    let content = spec.source.open()?;
    let any: SocketAddr = if spec.to.is_ipv4() { ([0, 0, 0, 0], 0).into() } else { ([0u16; 8], 0).into() };
    let socket = open_socket(any)?;
    let local = socket.local_addr().map_err(TransferError::Socket)?;
    driver::spawn("cclab-send", local, move |shared| {
        let cc = congestion_control(&spec.cc, &spec.cc_params)?;
        Sending::new(spec, content, socket, shared).run(cc)
    })
}

struct Sending<'a> {
    spec: SendSpec,
    /// Taken by the transfer once the handshake has agreed the payload size.
    content: Option<Content>,
    socket: std::net::UdpSocket,
    shared: &'a Shared,
    clock: Clock,
    progress: Progress,
    recv_buf: Vec<u8>,
    send_buf: Vec<u8>,
    packet_buf: Vec<u8>,
    out: Outbox,
}

impl<'a> Sending<'a> {
    fn new(spec: SendSpec, content: Content, socket: std::net::UdpSocket, shared: &'a Shared) -> Self {
        let total = (content.len() != UNBOUNDED).then_some(content.len());
        Self {
            progress: Progress { peer: Some(spec.to), total, ..Progress::default() },
            spec,
            content: Some(content),
            socket,
            shared,
            clock: Clock::new(),
            recv_buf: vec![0; driver::MAX_DATAGRAM],
            send_buf: Vec::with_capacity(2048),
            packet_buf: Vec::with_capacity(2048),
            out: Outbox::default(),
        }
    }

    fn transmit(&mut self, header: &UdtHeader, payload_from_packet_buf: bool) -> Result<(), TransferError> {
        let payload: &[u8] = if payload_from_packet_buf { &self.packet_buf } else { &[] };
        encode_into(header, payload, &mut self.send_buf);
        driver::send_datagram(&self.socket, self.spec.to, &self.send_buf, &mut self.progress.lost_in_host)
    }

    /// The next datagram waiting from the receiver, decoded, with its length and arrival;
    /// datagrams from elsewhere and those that do not decode are counted and skipped.
    fn receive_from_peer(&mut self) -> Result<Option<(UdtHeader, usize, Time)>, TransferError> {
        while let Some(Received { len: n, from, at }) =
            driver::receive(&self.socket, &mut self.recv_buf, &self.clock)?
        {
            if from != self.spec.to {
                self.progress.unexpected += 1;
                continue;
            }
            match cclab_wire::udt_codec::decode(&self.recv_buf[..n]) {
                Ok((header, _)) => return Ok(Some((header, n, at))),
                Err(_) => self.progress.malformed += 1,
            }
        }
        Ok(None)
    }

    fn handshake(&mut self) -> Result<Option<(Agreed, u32)>, TransferError> {
        let my_socket = super::socket_id();
        let isn = driver::os_random() as u32;
        // As UDT 4's caller: the flow window offered is the smaller of its limit and the receive buffer.
        let tuning = self.spec.tuning;
        let offer =
            Offer { mss: tuning.mss, flow_window: tuning.buffer_packets.min(tuning.flight_flag_size) };
        let mut caller = Caller::new(self.clock.now(), my_socket, isn, offer, self.spec.to);
        loop {
            if self.shared.stopping() {
                return Ok(None);
            }
            let now = self.clock.now();
            if let Some(request) = caller.poll(now) {
                self.transmit(&request, false)?;
            }
            while let Some((header, ..)) = self.receive_from_peer()? {
                caller.on_packet(&header);
            }
            match caller.state() {
                CallerState::Connecting => {}
                CallerState::Connected(agreed) => return Ok(Some((agreed, my_socket))),
                CallerState::Rejected => return Err(TransferError::Rejected(self.spec.to)),
                CallerState::IsnMismatch { sent, got } => {
                    return Err(TransferError::IsnMismatch { peer: self.spec.to, sent, got })
                }
                CallerState::TimedOut => return Err(TransferError::ConnectTimeout(self.spec.to)),
            }
            driver::wait(&self.socket, &self.clock, caller.next_wakeup())?;
        }
    }

    fn run(&mut self, cc: Box<dyn UdtCongestionControl>) -> Result<Summary, TransferError> {
        let Some((agreed, my_socket)) = self.handshake()? else {
            return Ok(Summary::of(&self.progress, false, None));
        };
        let start = self.clock.now();
        let cfg = UdtConfig {
            mss: agreed.mss,
            isn: agreed.isn,
            flow_window: agreed.peer_flow_window,
            receive_buffer: self.spec.tuning.buffer_packets,
            send_buffer: self.spec.tuning.buffer_packets,
            start,
            app: App::Stream,
            sender_socket: my_socket,
            receiver_socket: agreed.peer_socket,
            ..UdtConfig::default()
        };
        let mut sender = UdtSender::new(cfg, cc);
        let space = SeqSpace::new(cfg.isn);
        let payload = u64::from(cfg.payload());
        let content = self.content.take().ok_or_else(|| TransferError::Thread("run twice".into()))?;
        let mut stream = StreamSender::new(payload, content, self.spec.framing);
        let layout = *stream.layout();
        let bounded = layout.content_len != UNBOUNDED;
        // An unbounded test writes whole packets a little ahead of what left: enough that
        // the sender never waits for the application (the loop tops it up every period),
        // little enough that the test ends when its duration does, not a send buffer later.
        let ahead = payload * WRITE_AHEAD_PACKETS;
        let mut written = 0u64;
        if bounded {
            written = layout.stream_len();
            let _ = sender.on_control(start, Control::AppWrite { bytes: written }, &mut self.out);
            let _ = sender.on_control(start, Control::AppClose, &mut self.out);
        }
        let deadline = self.spec.duration.map(|d| start + d);
        let mut closing = false;
        let mut receiver_closed = false;
        let mut last_heard = start;
        let mut next_publish = start;
        let mut handed = HandedTime::new(start);
        self.progress.connected = true;
        loop {
            let now = self.clock.now();
            let stop = self.shared.stopping() || deadline.is_some_and(|d| now >= d);
            if stop && !closing {
                closing = true;
                if bounded {
                    break;
                }
                let _ = sender.on_control(now, Control::AppClose, &mut self.out);
                handed.give(now);
            }
            let first_sends = stream.first_sends();
            if !bounded && !closing && written < first_sends * payload + ahead {
                let more = ahead - (written - first_sends * payload);
                let more = more - more % payload;
                written += more;
                let _ = sender.on_control(now, Control::AppWrite { bytes: more }, &mut self.out);
                handed.give(now);
            }
            while let Some((header, n, at)) = self.receive_from_peer()? {
                // When the ACK arrived, not when this loop got to it: UDT's rate control acts on a
                // full ACK only if a SYN has passed since the last one it acted on, so a late read
                // that shortens the gap between two ACKs would skip an increase.
                let at = handed.no_earlier(at);
                last_heard = at;
                match header {
                    UdtHeader::Control { dst_socket, body, .. } if dst_socket == my_socket => {
                        match body {
                            UdtControl::Handshake { .. } => continue, // a repeated response to our handshake
                            // UDT 4 (`processCtrl`, type 5): the peer closed; the connection is broken at once.
                            UdtControl::Shutdown => receiver_closed = true,
                            _ => {}
                        }
                        let packet = Packet::new(Header::Udt(header), IP_UDP_BYTES + n as u32);
                        sender.on_packet(at, &packet, &mut self.out);
                        handed.give(at);
                    }
                    _ => self.progress.unexpected += 1,
                }
            }
            let now = handed.now(&self.clock);
            let due = sender.next_wakeup();
            if now >= due {
                let expiries = sender.expirations();
                sender.on_timer(now, &mut self.out);
                let silent = now.saturating_sub(last_heard);
                if sender.expirations() > expiries && silent > RECEIVER_SILENCE {
                    self.observe(&sender, start, &layout);
                    let expiries = u64::from(sender.expirations());
                    return Err(TransferError::ReceiverGone { expiries, silent_s: silent as f64 / 1e9 });
                }
            }
            let mut packets = std::mem::take(&mut self.out.packets);
            for packet in packets.drain(..) {
                let Header::Udt(header) = packet.header else { continue };
                if let UdtHeader::Data { seq, timestamp_us, .. } = header {
                    let Some(k) = space.unwrap(seq, stream.first_sends()) else { continue };
                    stream.fill(k, &mut self.packet_buf).map_err(read_error)?;
                    // The endpoint stamped each packet with its scheduled send time.
                    let scheduled = start + u64::from(timestamp_us) * 1000;
                    self.progress.pacing.record(now.saturating_sub(scheduled));
                    self.transmit(&header, true)?;
                } else {
                    self.transmit(&header, false)?;
                }
            }
            self.out.packets = packets;
            if sender.finished_at().is_some() {
                break;
            }
            if receiver_closed {
                self.observe(&sender, start, &layout);
                let total = self.progress.total.unwrap_or(u64::MAX);
                return Err(TransferError::ReceiverClosed { acknowledged: self.progress.bytes, total });
            }
            if sender.is_broken() {
                self.observe(&sender, start, &layout);
                let silent_s = (self.clock.now() - last_heard) as f64 / 1e9;
                return Err(TransferError::ReceiverGone {
                    expiries: u64::from(sender.expirations()),
                    silent_s,
                });
            }
            if now >= next_publish {
                self.observe(&sender, start, &layout);
                next_publish = now + TURN;
            }
            driver::wait(&self.socket, &self.clock, sender.next_wakeup().min(next_publish))?;
        }
        // UDT's close: a shutdown after everything was acknowledged (or when giving up).
        // Three copies, a SYN apart, so that one lost datagram does not leave the receiver waiting.
        for i in 0..3 {
            let now = self.clock.now();
            let shutdown = control_packet(now, start, agreed.peer_socket, UdtControl::Shutdown);
            if let Header::Udt(header) = shutdown.header {
                self.transmit(&header, false)?;
            }
            if i < 2 {
                std::thread::sleep(std::time::Duration::from_nanos(millis(10)));
            }
        }
        self.observe(&sender, start, &layout);
        let complete = sender.finished_at().is_some();
        let content_bytes =
            if complete { written.saturating_sub(layout.overhead()) } else { self.progress.bytes };
        Ok(Summary {
            content_bytes,
            ..Summary::of(&self.progress, complete, bounded.then(|| stream.checksum()))
        })
    }

    /// Reads the sender's state into the progress and publishes it.
    fn observe(&mut self, sender: &UdtSender, start: Time, layout: &crate::stream::Layout) {
        let now = self.clock.now();
        let mut log = MetricLog::default();
        sender.metrics(&mut Metrics::new(&mut log));
        let counters = sender.counters();
        let p = &mut self.progress;
        p.elapsed = now - start;
        p.bytes = (sender.acknowledged() * layout.payload)
            .saturating_sub(layout.framing.header_bytes())
            .min(p.total.unwrap_or(u64::MAX));
        p.rtt_us = (log.get("rtt").unwrap_or(0.0) * 1e6) as i64;
        p.cwnd = log.get("cwnd").unwrap_or(0.0);
        p.period_us = log.get("period_us").unwrap_or(0.0);
        p.flow_window = log.get("flow_window").unwrap_or(0.0);
        p.receive_rate = log.get("receive_rate").unwrap_or(0.0);
        p.bandwidth = log.get("bandwidth").unwrap_or(0.0);
        p.packets_sent = counters.packets_sent;
        p.packets_received = counters.packets_received;
        p.acks = counters.extra.count("acks");
        p.naks = counters.extra.count("naks");
        p.retransmits = counters.extra.count("retransmits");
        p.timeouts = counters.extra.count("timeouts");
        self.shared.publish(p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_transport::udt::cc::UdtCcInput;

    fn period_after_a_loss(params: &[(&str, &str)]) -> f64 {
        let params: Vec<(String, String)> =
            params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let mut cc = congestion_control("udt", &params).unwrap();
        // Out of slow start without a receive rate, then a NAK starting a congestion period.
        let input = UdtCcInput {
            now: 0,
            rtt_us: 100_000,
            receive_rate: 0,
            bandwidth: 1,
            mss: 1500,
            max_window: 8192.0,
            largest_sent: 100,
        };
        cc.on_loss(1, &input);
        let before = cc.period_us();
        cc.on_loss(50, &input);
        cc.period_us() / before
    }

    #[test]
    fn parameters_override_the_defaults_through_the_descriptor() {
        let native = period_after_a_loss(&[]);
        let gentler = period_after_a_loss(&[("decrease_factor", "1.05")]);
        assert!((native - 1.125).abs() < 0.01, "{native}");
        assert!((gentler - 1.05).abs() < 0.01, "{gentler}");
        let err = |params: &[(&str, &str)]| {
            let params: Vec<(String, String)> =
                params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
            congestion_control("udt", &params).err().map(|e| e.to_string()).unwrap_or_default()
        };
        assert!(err(&[("decrease_factor", "3")]).starts_with("--cc-param: decrease_factor:"));
        assert!(err(&[("nope", "1")]).contains("has no parameter \"nope\""));
        assert!(congestion_control("cubic", &[])
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
            .starts_with("--cc:"));
    }
}
