//! What the congestion-control unit tests build their inputs from.

use super::{AckSample, CongestionEvent, EventKind, Window};

/// An ACK at time 0 of a 1000-byte-MSS flow acknowledging `acked` segments.
pub fn ack_of(acked: u64) -> AckSample {
    let mut a = AckSample::new(0, 1000);
    a.acked = acked;
    a
}

/// A congestion event of `kind` whose decrease applies to `basis` segments.
pub fn event(kind: EventKind, basis: f64) -> CongestionEvent {
    let mut e = CongestionEvent::new(0, kind, basis as u64, 1000);
    e.basis = basis;
    e
}

/// A window in congestion avoidance (ssthresh 2).
pub fn ca(cwnd: f64) -> Window {
    Window { cwnd, ssthresh: 2.0 }
}
