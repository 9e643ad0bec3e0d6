//! The endpoint interface: the only way the engine talks to a transport protocol.
//!
//! An endpoint is a sans-IO state machine. It never reads a clock, owns a socket
//! or makes its own randomness: the driver (the simulator here, a socket loop in
//! real-network mode) hands it `now` and inputs, and it answers with packets to
//! send and the next time it wants to be woken.

use crate::packet::Packet;
use crate::time::Time;

/// Where an endpoint puts the packets it sends. Reused across calls so the hot
/// path never allocates.
#[derive(Default)]
pub struct Outbox {
    pub packets: Vec<Packet>,
}

impl Outbox {
    pub fn send(&mut self, packet: Packet) {
        self.packets.push(packet);
    }
}

/// Cumulative counters an endpoint keeps; the engine snapshots them at the start
/// and end of the measurement window and reports differences.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EndpointCounters {
    /// In-order payload bytes handed to the receiving application.
    pub bytes_delivered: u64,
    /// Packets and bytes (headers included) this endpoint put on the wire.
    pub packets_sent: u64,
    pub wire_bytes_sent: u64,
    /// Payload bytes sent, retransmissions included.
    pub payload_bytes_sent: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    /// Loss-recovery episodes entered (fast retransmits).
    pub recoveries: u64,
    /// Sum and count of RTT samples, and the smallest sample.
    pub rtt_sum: u64,
    pub rtt_samples: u64,
    pub rtt_min: Time,
    pub packets_received: u64,
    /// When a finite transfer was completely acknowledged.
    pub finished_at: Option<Time>,
}

/// Instantaneous sender state for time series.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Probe {
    /// Congestion window and slow-start threshold in segments.
    pub cwnd: f64,
    pub ssthresh: f64,
    /// Smoothed RTT and latest RTT sample (0 before the first sample).
    pub srtt: Time,
    pub rtt: Time,
    /// Highest byte sequence sent so far (exclusive) and cumulatively acknowledged.
    pub seq_sent: u64,
    pub seq_acked: u64,
    pub in_flight: u64,
}

pub trait Endpoint {
    /// A packet addressed to this endpoint arrived.
    fn on_packet(&mut self, now: Time, packet: &Packet, out: &mut Outbox);
    /// The time returned by [`Endpoint::next_wakeup`] has been reached.
    fn on_timer(&mut self, now: Time, out: &mut Outbox);
    /// When this endpoint next wants `on_timer`, or [`crate::NEVER`].
    fn next_wakeup(&self) -> Time;
    fn counters(&self) -> EndpointCounters;
    /// Sender state for time series; `None` for endpoints without one (receivers).
    fn probe(&self) -> Option<Probe> {
        None
    }
    /// Allows tests and drivers to reach the concrete endpoint behind the trait.
    fn as_any(&self) -> &dyn std::any::Any;
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any;
}
