//! Pacing: when the next packet may leave, whatever congestion control and
//! loss recovery decided to send. Chosen per flow (`pacing = "none" | "rtt" |
//! "linux"`), so it combines with every congestion control and every loss
//! recovery; a congestion control that computes its own rate (BBR) overrides it.
//!
//! - `rtt`: the pacing of seed paper 000 (after Aggarwal, Savage and Anderson,
//!   INFOCOM 2000): a leaky bucket that lets one packet out every srtt / cwnd,
//!   so a window is spread evenly over a round trip; RTTs come from timestamps.
//!   No credit accumulates while the sender waits for ACKs, so pacing never
//!   releases a burst.
//! - `linux`: Linux `tcp_update_pacing_rate()` (net/ipv4/tcp_input.c) and ns-3
//!   `TcpSocketBase::UpdatePacingRate`: rate = ratio x max(cwnd, in flight) x
//!   MSS / srtt with ratio 200 % while cwnd < ssthresh / 2 (slow start) and
//!   120 % after; a packet of L bytes is followed by a gap of L / rate.
//!
//! Before the first RTT sample there is no srtt to pace by, so both send at once.

use crate::cc::Window;
use crate::registry::PacingDescriptor;
use cclab_wire::{
    Descriptor, MetricDesc, Metrics, ParamDefault, ParamError, ParamType, Parameter, Params, Role, Time,
};

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

pub const NONE: PacingDescriptor = Descriptor {
    name: "none",
    role: Role::Pacing,
    summary: "no pacing: send whenever the window allows",
    source: "RFC 5681 (ACK clocking)",
    parameters: &[],
    metrics: &[],
    build: build_none,
};

fn build_none(_: &Params) -> Result<Option<Box<dyn Pacer>>, ParamError> {
    Ok(None)
}

pub const RTT: PacingDescriptor = Descriptor {
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

pub const LINUX: PacingDescriptor = Descriptor {
    name: "linux",
    role: Role::Pacing,
    summary: "rate = 200 % of cwnd x MSS / srtt in slow start, 120 % after; gap = packet size / rate",
    source: "Linux net/ipv4/tcp_input.c tcp_update_pacing_rate() (sysctl tcp_pacing_ss_ratio, \
             tcp_pacing_ca_ratio); ns-3 TcpSocketState PacingSsRatio / PacingCaRatio",
    parameters: &[
        Parameter {
            name: "ss_ratio",
            ty: ParamType::Number,
            unit: "%",
            min: 1.0,
            max: 10_000.0,
            default: ParamDefault::Value("200"),
            meaning: "pacing rate in slow start (cwnd < ssthresh / 2), percent of cwnd x MSS / srtt",
        },
        Parameter {
            name: "ca_ratio",
            ty: ParamType::Number,
            unit: "%",
            min: 1.0,
            max: 10_000.0,
            default: ParamDefault::Value("120"),
            meaning: "pacing rate otherwise, percent of cwnd x MSS / srtt",
        },
    ],
    metrics: &[MetricDesc {
        name: "rate",
        unit: "bit/s",
        meaning: "the pacing rate of the last departure (0 before the first RTT sample)",
    }],
    build: build_linux,
};

fn build_linux(params: &Params) -> Result<Option<Box<dyn Pacer>>, ParamError> {
    Ok(Some(Box::new(LinuxPacer::new(
        params.number("ss_ratio")? / 100.0,
        params.number("ca_ratio")? / 100.0,
    ))))
}

#[derive(Debug)]
pub struct LinuxPacer {
    pub ss_ratio: f64,
    pub ca_ratio: f64,
    /// Bytes per second at the last departure, kept only to publish it.
    last_rate: f64,
}

impl LinuxPacer {
    pub fn new(ss_ratio: f64, ca_ratio: f64) -> Self {
        Self { ss_ratio, ca_ratio, last_rate: 0.0 }
    }

    /// Bytes per second.
    pub fn rate(&self, d: &Departure) -> Option<f64> {
        if d.srtt == 0 {
            return None;
        }
        let ratio = if d.window.cwnd < d.window.ssthresh / 2.0 { self.ss_ratio } else { self.ca_ratio };
        let packets = d.window.cwnd.max(d.in_flight as f64);
        Some(ratio * packets * d.mss as f64 / cclab_wire::time::to_secs_f64(d.srtt))
    }
}

impl Pacer for LinuxPacer {
    fn name(&self) -> &'static str {
        "linux"
    }

    fn next_departure(&mut self, d: &Departure) -> Time {
        let rate = self.rate(d);
        self.last_rate = rate.unwrap_or(0.0);
        match rate {
            Some(rate) => d.now + gap_at_rate(d.wire_bytes, rate),
            None => d.now,
        }
    }

    fn metrics(&self, out: &mut Metrics<'_>) {
        out.put("rate", self.last_rate * 8.0);
    }
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
mod tests {
    use super::*;
    use cclab_wire::time::millis;

    fn departure(cwnd: f64, ssthresh: f64, srtt: Time) -> Departure {
        Departure {
            now: 0,
            wire_bytes: 1040,
            window: Window { cwnd, ssthresh },
            srtt,
            mss: 1000,
            in_flight: 0,
        }
    }

    #[test]
    fn rtt_pacing_spreads_a_window_over_srtt() {
        // 100 ms / 50 segments = 2 ms between packets.
        assert_eq!(RttPacer.next_departure(&departure(50.0, 1e9, millis(100))), millis(2));
        assert_eq!(RttPacer.next_departure(&departure(50.0, 1e9, 0)), 0, "no srtt yet: no pacing");
    }

    #[test]
    fn linux_pacing_uses_200_percent_in_slow_start_and_120_percent_after() {
        let linux = LinuxPacer::new(2.0, 1.2);
        // cwnd 10 < ssthresh/2 = 50: 2 x 10 x 1000 B / 0.1 s = 200 kB/s.
        let ss = departure(10.0, 100.0, millis(100));
        assert!((linux.rate(&ss).unwrap_or(0.0) - 200_000.0).abs() < 1e-6);
        // cwnd 60 >= 50: 1.2 x 60 x 1000 / 0.1 = 720 kB/s; 1040 B take 1.444 ms.
        let ca = departure(60.0, 100.0, millis(100));
        assert!((linux.rate(&ca).unwrap_or(0.0) - 720_000.0).abs() < 1e-6);
        let mut linux = linux;
        assert_eq!(linux.next_departure(&ca), (1040.0 / 720_000.0 * 1e9_f64).round() as Time);
    }

    #[test]
    fn linux_pacing_counts_the_flight_when_it_exceeds_cwnd() {
        let linux = LinuxPacer::new(2.0, 1.2);
        let mut d = departure(10.0, 10.0, millis(100));
        d.in_flight = 20;
        assert!((linux.rate(&d).unwrap_or(0.0) - 1.2 * 20.0 * 1000.0 / 0.1).abs() < 1e-6);
    }
}
