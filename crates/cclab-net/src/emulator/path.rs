//! One direction of the emulated link, with time handed in: the same link the
//! simulator models (`cclab-core`'s `Link`), so that a testbed run through the
//! emulator and its simulation mean the same thing by rate, queue, delay and loss.
//!
//! - A datagram arriving at `now` is refused if the bytes waiting for the
//!   transmitter (not counting the one being sent) would exceed the queue
//!   limit: tail drop, as ns-2's `Queue/DropTail`, Linux's `pfifo`/`bfifo` and
//!   NIST Net's queue.
//! - Otherwise it is sent at `rate` when the transmitter is free: serialisation
//!   takes its wire size (payload plus `overhead_bytes` of IP and UDP headers)
//!   over the rate. This is a token bucket whose depth is one packet, which is
//!   what netem's `rate` does.
//! - It arrives `delay` after its last bit left, unless the Bernoulli loss
//!   process takes it: as on the simulator's lossy links, a lost datagram has
//!   used its queue place and its transmission time (netem, by contrast, drops
//!   before its queue; at the loss rates of the seeds, 1e-5 to 1e-2, the two
//!   differ by less than the loss rate itself).
//!
//! Deliveries are in arrival order, so the pending ones form a FIFO.

use cclab_wire::random::SplitMix64;
use cclab_wire::time::serialization_time;
use cclab_wire::Time;
use std::collections::VecDeque;

/// IPv4 (20 bytes) and UDP (8 bytes) headers: what a datagram of `n` payload
/// bytes occupies on an IP link, as netem's rate counts it.
pub const IPV4_UDP_HEADER_BYTES: u32 = 28;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueLimit {
    Bytes(u64),
    Packets(u64),
}

#[derive(Clone, Debug, PartialEq)]
pub struct PathSpec {
    /// Bits per second; `None`: no rate limit (and so no queue).
    pub rate_bps: Option<u64>,
    /// One-way propagation delay.
    pub delay: Time,
    /// Probability that a transmitted datagram is lost, in [0, 1).
    pub loss: f64,
    pub queue: QueueLimit,
    /// Bytes added to each datagram's payload for the rate (IP and UDP headers).
    pub overhead_bytes: u32,
}

/// Why a datagram did not arrive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// It arrives at this time.
    Deliver(Time),
    /// The queue was full.
    QueueFull,
    /// Transmitted, then lost by the loss process (it would have arrived at this time).
    Lost(Time),
}

/// What one direction did with the datagrams it was offered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PathCounts {
    pub offered: u64,
    pub offered_bytes: u64,
    pub delivered: u64,
    pub delivered_bytes: u64,
    pub dropped_queue_full: u64,
    pub lost: u64,
    /// Most bytes ever waiting for the transmitter.
    pub max_waiting_bytes: u64,
    /// Sum of the waits for the transmitter of the datagrams accepted, in ns.
    pub total_queueing_ns: u64,
}

pub struct Path {
    spec: PathSpec,
    rng: SplitMix64,
    busy_until: Time,
    /// Transmission start and wire size of each accepted datagram not yet started.
    waiting: VecDeque<(Time, u64)>,
    waiting_bytes: u64,
    pub counts: PathCounts,
}

impl Path {
    pub fn new(spec: PathSpec, seed: u64) -> Self {
        Self {
            spec,
            rng: SplitMix64::new(seed),
            busy_until: 0,
            waiting: VecDeque::new(),
            waiting_bytes: 0,
            counts: PathCounts::default(),
        }
    }

    pub fn spec(&self) -> &PathSpec {
        &self.spec
    }

    /// Offers a datagram of `payload` bytes arriving at `now` (never earlier than the previous offer's).
    pub fn offer(&mut self, now: Time, payload: usize) -> Fate {
        let payload = payload as u64;
        self.counts.offered += 1;
        self.counts.offered_bytes += payload;
        let wire = payload + u64::from(self.spec.overhead_bytes);
        let departure = match self.spec.rate_bps {
            None => now,
            Some(rate) => {
                while self.waiting.front().is_some_and(|&(start, _)| start <= now) {
                    if let Some((_, bytes)) = self.waiting.pop_front() {
                        self.waiting_bytes -= bytes;
                    }
                }
                let fits = match self.spec.queue {
                    QueueLimit::Bytes(limit) => self.waiting_bytes + wire <= limit,
                    QueueLimit::Packets(limit) => (self.waiting.len() as u64) < limit,
                };
                let start = self.busy_until.max(now);
                if start > now && !fits {
                    self.counts.dropped_queue_full += 1;
                    return Fate::QueueFull;
                }
                if start > now {
                    self.waiting.push_back((start, wire));
                    self.waiting_bytes += wire;
                    self.counts.max_waiting_bytes = self.counts.max_waiting_bytes.max(self.waiting_bytes);
                }
                self.counts.total_queueing_ns += start - now;
                let bytes = u32::try_from(wire).unwrap_or(u32::MAX);
                self.busy_until = start + serialization_time(bytes, rate);
                self.busy_until
            }
        };
        let arrival = departure + self.spec.delay;
        if self.spec.loss > 0.0 && self.rng.next_f64() < self.spec.loss {
            self.counts.lost += 1;
            return Fate::Lost(arrival);
        }
        self.counts.delivered += 1;
        self.counts.delivered_bytes += payload;
        Fate::Deliver(arrival)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_wire::time::{micros, millis};

    fn path(rate_bps: Option<u64>, queue: QueueLimit, loss: f64) -> Path {
        let spec =
            PathSpec { rate_bps, delay: millis(10), loss, queue, overhead_bytes: IPV4_UDP_HEADER_BYTES };
        Path::new(spec, 1)
    }

    #[test]
    fn an_idle_link_delivers_after_serialisation_and_delay() {
        // 972 + 28 = 1000 bytes at 8 Mbit/s: 1 ms on the wire, then 10 ms of propagation.
        let mut p = path(Some(8_000_000), QueueLimit::Bytes(10_000), 0.0);
        assert_eq!(p.offer(0, 972), Fate::Deliver(millis(11)));
        // Long after: the link is idle again.
        assert_eq!(p.offer(millis(50), 972), Fate::Deliver(millis(61)));
        assert_eq!(p.counts.total_queueing_ns, 0);
    }

    #[test]
    fn a_burst_leaves_at_the_rate_and_the_tail_is_dropped() {
        // A 1000-byte (wire) datagram takes 1 ms; the queue holds 3 waiting behind the one on the wire.
        let mut p = path(Some(8_000_000), QueueLimit::Bytes(3_000), 0.0);
        let fates: Vec<Fate> = (0..6).map(|_| p.offer(0, 972)).collect();
        assert_eq!(
            fates,
            vec![
                Fate::Deliver(millis(11)),
                Fate::Deliver(millis(12)),
                Fate::Deliver(millis(13)),
                Fate::Deliver(millis(14)),
                Fate::QueueFull,
                Fate::QueueFull,
            ]
        );
        assert_eq!(p.counts.max_waiting_bytes, 3_000);
        // Once the second has started (1 ms), one place is free again.
        assert_eq!(p.offer(millis(1), 972), Fate::Deliver(millis(15)));
        assert_eq!(p.offer(millis(1), 972), Fate::QueueFull);
        assert_eq!(p.counts.dropped_queue_full, 3);
        assert_eq!(p.counts.total_queueing_ns, millis(1 + 2 + 3 + 3));
    }

    #[test]
    fn a_packet_limit_counts_datagrams_not_bytes() {
        let mut p = path(Some(8_000_000), QueueLimit::Packets(2), 0.0);
        let small = (0..4).map(|_| p.offer(0, 72)).filter(|f| matches!(f, Fate::Deliver(_))).count();
        assert_eq!(small, 3, "one on the wire and two waiting");
    }

    #[test]
    fn without_a_rate_only_the_delay_applies() {
        let mut p = path(None, QueueLimit::Bytes(0), 0.0);
        for i in 0..100 {
            assert_eq!(p.offer(micros(i), 1400), Fate::Deliver(micros(i) + millis(10)));
        }
    }

    #[test]
    fn loss_is_bernoulli_at_the_given_rate_and_lost_datagrams_use_the_link() {
        let mut p = path(Some(1_000_000_000), QueueLimit::Bytes(u64::MAX), 0.01);
        let n = 200_000u64;
        let mut last = 0;
        for _ in 0..n {
            match p.offer(0, 972) {
                Fate::Lost(at) | Fate::Deliver(at) => {
                    assert!(at > last, "every datagram takes its transmission time");
                    last = at;
                }
                Fate::QueueFull => unreachable!("unlimited queue"),
            }
        }
        // Binomial(200 000, 0.01): mean 2000, standard deviation 44.5; 5 sigma.
        assert!((p.counts.lost as i64 - 2000).abs() < 223, "{} lost", p.counts.lost);
        assert_eq!(p.counts.lost + p.counts.delivered, n);
    }

    #[test]
    fn long_run_rate_is_the_configured_rate() {
        // Offered at twice the rate: the deliveries are spaced exactly by the serialisation time.
        let mut p = path(Some(100_000_000), QueueLimit::Bytes(u64::MAX), 0.0);
        let mut arrivals = Vec::new();
        for i in 0..10_000u64 {
            if let Fate::Deliver(at) = p.offer(i * micros(40), 1222) {
                arrivals.push(at);
            }
        }
        // 1250 wire bytes at 100 Mbit/s: 100 µs each.
        let span = arrivals[arrivals.len() - 1] - arrivals[0];
        assert_eq!(span, (arrivals.len() as u64 - 1) * micros(100));
    }
}
