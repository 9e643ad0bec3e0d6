//! RED's average queue (Floyd and Jacobson, "Random Early Detection Gateways
//! for Congestion Avoidance", IEEE/ACM ToN 1(4), 1993, §4 and the appendix),
//! as ns-2.35 computes it (`queue/red.cc`, `REDQueue::enque` and
//! `REDQueue::estimator`, hbatmit/ns2.35 @f95482f0): at each arrival,
//!
//! ```text
//! avg <- (1 - w_q) avg + w_q q        q = packets waiting, before the arrival
//! ```
//!
//! and, when the packet finds the link idle, the average first decays as if
//! `m` packets had arrived to an empty queue during the idle period:
//! `avg <- (1 - w_q)^m avg`, with `m = floor(idle time x ptc)` and `ptc` the
//! link's rate in packets of `mean_pktsize_` per second. ns-2 marks the
//! queue idle when a dequeue finds it empty, that is when the transmitter
//! finishes its last packet; a link here knows that time (`idle_since`).
//! Shared by RED ([`super::red`]) and Jersey's congestion-warning marker
//! ([`super::cw`]).

use cclab_wire::time::{to_secs_f64, Time};
use cclab_wire::{ParamDefault, ParamType, Parameter};

/// The estimator's parameters, which every discipline using it lists.
pub const W_Q: Parameter = Parameter {
    name: "w_q",
    ty: ParamType::Number,
    unit: "",
    min: 0.0,
    max: 1.0,
    default: ParamDefault::Value("0.002"),
    meaning: "weight of each arrival's queue in the average, in (0, 1) (ns-2 RED's q_weight_)",
};

pub const MEAN_PACKET_SIZE: Parameter = Parameter {
    name: "mean_packet_size",
    ty: ParamType::Size,
    unit: "B",
    min: 1.0,
    max: 1e6,
    default: ParamDefault::Value("500B"),
    meaning: "packet size that turns idle time into packets for the average's decay (ns-2 mean_pktsize_)",
};

#[derive(Clone, Debug)]
pub struct AverageQueue {
    w_q: f64,
    /// Packets of the mean size the link transmits per second (ns-2 `ptc_`).
    packets_per_second: f64,
    avg: f64,
    /// The start of the idle period already decayed for: an arrival the
    /// queue refuses leaves the link idle since the same time, and ns-2
    /// (`idle_ = 0` at every arrival) decays each idle period once.
    decayed_idle_since: Option<Time>,
}

impl AverageQueue {
    pub fn new(w_q: f64, rate_bps: u64, mean_packet_bytes: u64) -> Self {
        let packets_per_second = rate_bps as f64 / (8.0 * mean_packet_bytes.max(1) as f64);
        Self { w_q, packets_per_second, avg: 0.0, decayed_idle_since: None }
    }

    /// Folds in an arrival that finds `waiting` packets queued, the link idle
    /// since `idle_since` if it is idle; returns the new average.
    pub fn on_arrival(&mut self, now: Time, waiting: u64, idle_since: Option<Time>) -> f64 {
        let keep = 1.0 - self.w_q;
        if let Some(since) = idle_since.filter(|&since| self.decayed_idle_since != Some(since)) {
            self.decayed_idle_since = Some(since);
            let idle_packets = (to_secs_f64(now.saturating_sub(since)) * self.packets_per_second).floor();
            self.avg *= keep.powf(idle_packets);
        }
        self.avg = keep * self.avg + self.w_q * waiting as f64;
        self.avg
    }

    /// The average queue, in packets.
    pub fn value(&self) -> f64 {
        self.avg
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_wire::time::micros;

    /// 8 Mbit/s and 500-byte packets: ptc = 2000 packets/s, one per 500 us.
    fn estimator(w_q: f64) -> AverageQueue {
        AverageQueue::new(w_q, 8_000_000, 500)
    }

    #[test]
    fn a_constant_queue_is_approached_as_the_closed_form_says() {
        // From avg = 0 with q constant: avg_n = q (1 - (1 - w)^n).
        let (w, q) = (0.002, 12u64);
        let mut a = estimator(w);
        for n in 1..=2000 {
            let avg = a.on_arrival(0, q, None);
            let closed = q as f64 * (1.0 - (1.0 - w).powi(n));
            assert!((avg - closed).abs() < 1e-9 * q as f64, "n={n}: {avg} vs {closed}");
        }
        // After 2000 arrivals at w = 0.002 the average has covered 1 - e^-4 of the way.
        assert!((a.value() / q as f64 - (1.0 - (1.0 - w).powi(2000))).abs() < 1e-12);
        assert!((a.value() - 11.78).abs() < 0.01, "{}", a.value());
    }

    #[test]
    fn one_step_weights_the_new_sample_by_w_q() {
        let mut a = estimator(0.25);
        a.on_arrival(0, 8, None); // 0.75 * 0 + 0.25 * 8 = 2
        assert_eq!(a.on_arrival(0, 4, None), 0.75 * 2.0 + 0.25 * 4.0);
    }

    #[test]
    fn an_idle_period_decays_the_average_by_the_packets_it_could_have_carried() {
        let w = 0.1;
        let mut a = estimator(w);
        a.on_arrival(0, 10, None); // avg = 1
                                   // Idle for 10.25 ms: floor(10.25 ms x 2000/s) = 20 packets, then the
                                   // arrival's own step with q = 0: avg = (1 - w)^21.
        let avg = a.on_arrival(micros(10_250), 0, Some(0));
        assert!((avg - (1.0 - w).powi(21)).abs() < 1e-12, "{avg}");
    }

    #[test]
    fn an_idle_period_decays_once_even_if_its_first_arrival_is_refused() {
        let w = 0.1;
        let mut a = estimator(w);
        a.on_arrival(0, 10, None); // avg = 1
                                   // Idle since 0; the arrival at 10.25 ms is refused, so the link is
                                   // still idle since 0 when the next one comes 1 ms later: that one
                                   // takes only its own step.
        let first = a.on_arrival(micros(10_250), 0, Some(0));
        let second = a.on_arrival(micros(11_250), 0, Some(0));
        assert!((second - first * (1.0 - w)).abs() < 1e-15, "{first} then {second}");
        // A new idle period (the link idle since a later time) decays again.
        let third = a.on_arrival(micros(21_250), 0, Some(micros(11_250)));
        assert!((third - second * (1.0 - w).powi(21)).abs() < 1e-15, "{third}");
    }

    #[test]
    fn less_than_one_packet_time_of_idleness_does_not_decay() {
        let mut a = estimator(0.1);
        a.on_arrival(0, 10, None);
        let avg = a.on_arrival(micros(499), 0, Some(0));
        assert!((avg - 0.9).abs() < 1e-12, "{avg}");
    }
}
