//! Pacing: when the next packet may leave, whatever congestion control and
//! loss recovery decided to send. Chosen per flow (`pacing = "none" | "rtt" |
//! "linux"`), so it combines with every congestion control and every loss
//! recovery; a congestion control that computes its own rate (BBR) overrides it.
//! One file per pacer: [`none`], [`rtt`], [`linux`].
//!
//! Before the first RTT sample there is no srtt to pace by, so every pacer
//! sends at once.

cclab_wire::algorithms! {
    /// The pacings a TCP flow can name (`pacing = NAME`).
    pub const PACINGS: PacingDescriptor = [none, rtt, linux];
}

use crate::cc::Window;
use cclab_wire::{Descriptor, Metrics, ParamError, Params, Time};

/// `Ok(None)` is "no pacing".
pub type PacingDescriptor = Descriptor<fn(&Params) -> Result<Option<Box<dyn Pacer>>, ParamError>>;

/// What a pacer needs to know about the packet that just left.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Departure {
    pub now: Time,
    pub wire_bytes: u32,
    pub window: Window,
    pub srtt: Time,
    pub mss: u32,
    /// Segments outstanding after this departure.
    pub in_flight: u64,
}

pub trait Pacer {
    fn name(&self) -> &'static str;
    /// The earliest time the next packet may leave.
    fn next_departure(&mut self, d: &Departure) -> Time;
    /// Publishes the pacer's state for time series under the names its
    /// descriptor lists; the sender adds the `pacing.` prefix.
    fn metrics(&self, _out: &mut Metrics<'_>) {}
}

/// Time to send `wire_bytes` at `rate` bytes per second.
pub fn gap_at_rate(wire_bytes: u32, rate: f64) -> Time {
    if rate > 0.0 {
        (wire_bytes as f64 / rate * 1e9).round() as Time
    } else {
        0
    }
}

#[cfg(test)]
fn departure(cwnd: f64, ssthresh: f64, srtt: Time) -> Departure {
    Departure { now: 0, wire_bytes: 1040, window: Window { cwnd, ssthresh }, srtt, mss: 1000, in_flight: 0 }
}
