//! Linux `tcp_update_pacing_rate()` (net/ipv4/tcp_input.c) and ns-3
//! `TcpSocketBase::UpdatePacingRate`: rate = ratio x max(cwnd, in flight) x
//! MSS / srtt with ratio 200 % while cwnd < ssthresh / 2 (slow start) and
//! 120 % after; a packet of L bytes is followed by a gap of L / rate.

use super::{gap_at_rate, Departure, Pacer, PacingDescriptor};
use cclab_wire::{
    Descriptor, MetricDesc, Metrics, ParamDefault, ParamError, ParamType, Parameter, Params, Role, Time,
};

pub const DESCRIPTOR: PacingDescriptor = Descriptor {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pacing::departure;
    use cclab_wire::time::millis;

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
