//! The seed paper's NAK decrease by RTT band (Park, Lee, Kim, Cho, "A
//! Performance Improvement Method with Considering of Congestion Prediction
//! and Packet Loss on UDT Environment", 2011, §III.1 and Fig. 6): on a NAK the
//! inter-packet period grows by 1.120 when the RTT is at most 50 ms, by 1.125
//! (UDT's own factor) up to 150 ms, and by 1.123 above, factors the authors
//! found best in ns-2 at 1 Gbit/s for each band.
//!
//! Decisions where the paper is silent: the RTT is the sender's smoothed RTT
//! (the one UDT's congestion control sees); the band's factor applies to
//! every decrease of a congestion period, the first and the up to four
//! further ones UDT allows, since Fig. 6 replaces the one constant UDT uses
//! for both. Band edges and factors are parameters.

use super::daimd::{self, Decrease, Window};
use super::UdtCcDescriptor;
use cclab_wire::{Descriptor, Role, Time};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RttBands {
    /// Upper edge of the first band (inclusive) and of the second.
    pub low_edge: Time,
    pub high_edge: Time,
    pub low_factor: f64,
    pub mid_factor: f64,
    pub high_factor: f64,
}

impl RttBands {
    /// The period multiplier for a smoothed RTT of `rtt_us` microseconds.
    pub fn factor(&self, rtt_us: i64) -> f64 {
        let rtt = rtt_us.max(0) as Time * 1000;
        if rtt <= self.low_edge {
            self.low_factor
        } else if rtt <= self.high_edge {
            self.mid_factor
        } else {
            self.high_factor
        }
    }
}

pub const DESCRIPTOR: UdtCcDescriptor = Descriptor {
    name: "udt_rtt_banded",
    role: Role::CongestionControl,
    summary:
        "UDT DAIMD with the seed's NAK decrease by RTT band (1.120 <= 50 ms, 1.125 <= 150 ms, 1.123 above)",
    source: "Park et al. 2011 (seed 002) §III.1, Fig. 6; UDT 4.11 src/ccc.cpp",
    parameters: &daimd::parameters(Decrease::RttBanded, Window::Native),
    metrics: daimd::METRICS,
    build: daimd::build,
};

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_wire::time::millis;

    fn seed_bands() -> RttBands {
        RttBands {
            low_edge: millis(50),
            high_edge: millis(150),
            low_factor: 1.120,
            mid_factor: 1.125,
            high_factor: 1.123,
        }
    }

    #[test]
    fn each_band_has_its_factor_and_edges_belong_to_the_lower_band() {
        let b = seed_bands();
        assert_eq!(b.factor(1_000), 1.120);
        assert_eq!(b.factor(50_000), 1.120);
        assert_eq!(b.factor(50_001), 1.125);
        assert_eq!(b.factor(150_000), 1.125);
        assert_eq!(b.factor(150_001), 1.123);
        assert_eq!(b.factor(200_000), 1.123);
    }
}
