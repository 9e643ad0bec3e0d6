//! Statistics kept in place while the simulation runs: windowed link counters
//! and optional sampled time series. Nothing here allocates per packet.

use cclab_wire::time::{overlap, Time};
use serde::Serialize;

/// Statistics cover `[start, end)`: the warm-up is excluded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct MeasurementWindow {
    pub start: Time,
    pub end: Time,
}

impl MeasurementWindow {
    pub fn contains(&self, t: Time) -> bool {
        t >= self.start && t < self.end
    }

    pub fn len(&self) -> Time {
        self.end.saturating_sub(self.start)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Part of `[a, b)` that falls inside the window.
    pub fn overlap(&self, a: Time, b: Time) -> Time {
        overlap(a, b, self.start, self.end)
    }
}

/// Per link direction. Whole-run counters support conservation checks; the
/// `window_*` fields and integrals cover the measurement window only.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// Packets offered to the queue.
    pub arrivals: u64,
    /// Refused by the queue discipline (buffer overflow).
    pub drops: u64,
    /// Transmitted but discarded by the link's random loss process.
    pub losses: u64,
    /// Handed to the node at the far end.
    pub delivered: u64,

    pub window_arrivals: u64,
    pub window_drops: u64,
    pub window_losses: u64,
    /// Time the transmitter was busy inside the window.
    pub window_busy: Time,
    /// Wire bytes whose transmission started inside the window.
    pub window_bytes: u64,
    /// Integral of the number (and bytes) of waiting packets over the window.
    pub queue_packet_time: u128,
    pub queue_byte_time: u128,
    pub queue_max_packets: u64,
    pub queue_max_bytes: u64,
}

/// One sample of a sender's state.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct FlowSample {
    pub time: Time,
    pub endpoint: u32,
    pub flow: u32,
    pub cwnd: f64,
    pub ssthresh: f64,
    pub srtt: Time,
    pub rtt: Time,
    pub seq_sent: u64,
    pub seq_acked: u64,
    pub in_flight: u64,
    /// Bytes the peer receiver has delivered to its application so far.
    pub bytes_delivered: u64,
}

/// One sample of a link's queue.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct LinkSample {
    pub time: Time,
    pub link: u32,
    pub queue_packets: u64,
    pub queue_bytes: u64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct TimeSeries {
    pub flows: Vec<FlowSample>,
    pub links: Vec<LinkSample>,
}
