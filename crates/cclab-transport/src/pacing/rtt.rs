//! The pacing of seed paper 000 (after Aggarwal, Savage and Anderson,
//! INFOCOM 2000): a leaky bucket that lets one packet out every srtt / cwnd,
//! so a window is spread evenly over a round trip; RTTs come from timestamps.
//! No credit accumulates while the sender waits for ACKs, so pacing never
//! releases a burst.

use super::{Departure, Pacer, PacingDescriptor};
use cclab_wire::{Descriptor, ParamError, Params, Role, Time};

pub const DESCRIPTOR: PacingDescriptor = Descriptor {
    name: "rtt",
    role: Role::Pacing,
    summary: "leaky bucket: one packet every srtt / cwnd, spreading each window over a round trip",
    source:
        "seed paper 000 §IV (ns-2, leaky bucket, interval from cwnd and RTT, timestamps); Aggarwal et al., \
             INFOCOM 2000",
    parameters: &[],
    metrics: &[],
    build: build_rtt,
};

fn build_rtt(_: &Params) -> Result<Option<Box<dyn Pacer>>, ParamError> {
    Ok(Some(Box::new(RttPacer)))
}

/// One packet per srtt / cwnd.
#[derive(Debug, Default)]
pub struct RttPacer;

impl RttPacer {
    pub fn gap(srtt: Time, cwnd: f64) -> Time {
        (srtt as f64 / cwnd.max(1.0)).round() as Time
    }
}

impl Pacer for RttPacer {
    fn name(&self) -> &'static str {
        "rtt"
    }

    fn next_departure(&mut self, d: &Departure) -> Time {
        d.now + Self::gap(d.srtt, d.window.cwnd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pacing::departure;
    use cclab_wire::time::millis;

    #[test]
    fn rtt_pacing_spreads_a_window_over_srtt() {
        // 100 ms / 50 segments = 2 ms between packets.
        assert_eq!(RttPacer.next_departure(&departure(50.0, 1e9, millis(100))), millis(2));
        assert_eq!(RttPacer.next_departure(&departure(50.0, 1e9, 0)), 0, "no srtt yet: no pacing");
    }
}
