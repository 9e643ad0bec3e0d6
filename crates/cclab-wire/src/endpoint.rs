//! The endpoint interface: the only way a driver talks to a transport protocol.
//!
//! An endpoint is a sans-IO state machine. It never reads a clock, owns a socket
//! or makes its own randomness: the driver (the simulator, or a socket loop in
//! real-network mode) hands it `now` and inputs (a packet, a timer, an
//! application's request), and it answers with packets to send and the next
//! time it wants to be woken.

use crate::counters::Counters;
use crate::metrics::Metrics;
use crate::packet::Packet;
use crate::time::Time;

/// Where an endpoint puts the packets it sends. Reused across calls so the hot
/// path never allocates.
#[derive(Default)]
pub struct Outbox {
    pub packets: Vec<Packet>,
}

impl Outbox {
    #[inline]
    pub fn send(&mut self, packet: Packet) {
        self.packets.push(packet);
    }
}

/// A request from the application or the host to a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    /// The application wrote this many more bytes to send.
    AppWrite { bytes: u64 },
    /// The application will write nothing more: finish what was written.
    AppClose,
    /// The host gives the connection a send buffer of this many bytes.
    SetSendBuffer { bytes: u64 },
}

/// An endpoint does not act on a control input (a receiver asked to write, say).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ControlRefused(pub Control);

impl std::fmt::Display for ControlRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "this endpoint does not accept {:?}", self.0)
    }
}

impl std::error::Error for ControlRefused {}

/// Lets a driver or a test reach the concrete type behind a trait object;
/// implemented for every type, so endpoints need not write it.
pub trait AsAny: std::any::Any {
    fn as_any(&self) -> &dyn std::any::Any;
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any;
}

impl<T: std::any::Any> AsAny for T {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

pub trait Endpoint: AsAny {
    /// A packet addressed to this endpoint arrived.
    fn on_packet(&mut self, now: Time, packet: &Packet, out: &mut Outbox);
    /// The time returned by [`Endpoint::next_wakeup`] has been reached.
    fn on_timer(&mut self, now: Time, out: &mut Outbox);
    /// When this endpoint next wants `on_timer`, or [`crate::NEVER`].
    fn next_wakeup(&self) -> Time;
    /// The application or host asks something of this endpoint.
    fn on_control(&mut self, _now: Time, control: Control, _out: &mut Outbox) -> Result<(), ControlRefused> {
        Err(ControlRefused(control))
    }
    fn counters(&self) -> Counters;
    /// When the application's finite job (a transfer) completed, if it has.
    fn finished_at(&self) -> Option<Time> {
        None
    }
    /// Nothing is left to do: the driver may forget this endpoint. Packets
    /// that still arrive for it are dropped as orphans.
    fn is_closed(&self) -> bool {
        false
    }
    /// Publishes the endpoint's state for time series (see [`crate::metrics`]);
    /// called only at sample times. Receivers publish nothing.
    fn metrics(&self, _out: &mut Metrics<'_>) {}
    /// What a sending endpoint tells its host for send-buffer allocation;
    /// `None` for endpoints that have no send buffer (receivers, UDP).
    fn send_state(&self) -> Option<SendState> {
        None
    }
}

/// What a connection's send-buffer policy reads of its own sender.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BufferInputs {
    pub mss: u32,
    /// Congestion window in bytes.
    pub cwnd_bytes: u64,
    /// Smoothed RTT; 0 before the first sample.
    pub srtt: Time,
    /// The current retransmission timeout.
    pub rto: Time,
    /// The receiver's advertised window in bytes (Padhye's `W_m x s`).
    pub rwnd_bytes: u64,
    /// Data packets sent so far, retransmissions included.
    pub packets_sent: u64,
    /// Loss indications so far: fast recoveries entered plus retransmission timeouts.
    pub loss_events: u64,
}

/// A sending connection as its host's send-buffer allocator sees it: what its
/// policy reads, what the policy desires and how the host should weigh it, and
/// the buffer itself.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SendState {
    /// When it starts (or started): before then it needs no buffer.
    pub start: Time,
    pub inputs: BufferInputs,
    /// The send buffer the connection's policy desires now, in bytes.
    pub desired: u64,
    /// Its weight when the host shares a cap in proportion (RTBA: the expected rate in bytes/s).
    pub share_weight: f64,
    /// The send buffer it has: the desire, at most the host's limit.
    pub send_buffer: u64,
    /// Bytes in the send buffer now: unacknowledged data plus data the
    /// application wrote that is not yet sent.
    pub buffered: u64,
}
