//! The receiver's two speed estimates (UDT 4.11 `src/window.cpp`,
//! `CPktTimeWindow(16, 64)`), reported in full ACKs:
//!
//! - **packet arrival speed** (`getPktRcvSpeed`): the last 16 gaps between
//!   data arrivals, in microseconds. The median M is taken as UDT takes it,
//!   `nth_element` at position 8 over the *first 15* slots only; the gaps
//!   strictly between M/8 and 8M are kept, and with more than 8 of them the
//!   speed is `ceil(1e6 / (sum / count))` packets per second, the mean being
//!   C integer division; otherwise 0 (no estimate). Every slot starts at 1 s.
//! - **link capacity** (`getBandwidth`) from packet pairs: the sender sends
//!   the packet whose number is 0 mod 16 and its successor back to back, and
//!   the receiver records the gap between their arrivals in a window of 64.
//!   Median as above over the first 63; the mean starts from M itself (count
//!   1, sum M) and adds the gaps strictly within (M/8, 8M); the capacity is
//!   `ceil(1e6 / mean)` packets per second. Every slot starts at 1 ms.
//!
//! Times are whole microseconds, as UDT's clock gives them.

const ARRIVAL_SLOTS: usize = 16;
const PROBE_SLOTS: usize = 64;

/// The median as UDT 4.11 computes it: the element that would sit at `n/2`
/// after sorting the first `n - 1` values.
fn udt_median<const N: usize>(window: &[i64; N]) -> i64 {
    let mut copy = *window;
    let head = &mut copy[..N - 1];
    head.select_nth_unstable(N / 2);
    head[N / 2]
}

#[derive(Clone, Debug)]
pub struct ArrivalSpeed {
    gaps_us: [i64; ARRIVAL_SLOTS],
    next: usize,
    last_arrival_us: i64,
}

impl ArrivalSpeed {
    /// A window whose gaps are measured from `start_us` (the connection's start).
    pub fn new(start_us: i64) -> Self {
        Self { gaps_us: [1_000_000; ARRIVAL_SLOTS], next: 0, last_arrival_us: start_us }
    }

    pub fn on_arrival(&mut self, now_us: i64) {
        self.gaps_us[self.next] = now_us - self.last_arrival_us;
        self.next = (self.next + 1) % ARRIVAL_SLOTS;
        self.last_arrival_us = now_us;
    }

    /// Packets per second, or 0 when too few gaps agree.
    pub fn packets_per_second(&self) -> u32 {
        let median = udt_median(&self.gaps_us);
        let (upper, lower) = (median << 3, median >> 3);
        let kept = self.gaps_us.iter().filter(|&&g| g < upper && g > lower);
        let (count, sum) = kept.fold((0i64, 0i64), |(c, s), &g| (c + 1, s + g));
        if count > (ARRIVAL_SLOTS as i64 >> 1) {
            (1e6 / (sum / count).max(1) as f64).ceil() as u32
        } else {
            0
        }
    }
}

#[derive(Clone, Debug)]
pub struct PacketPairCapacity {
    gaps_us: [i64; PROBE_SLOTS],
    next: usize,
    first_arrival_us: Option<i64>,
}

impl Default for PacketPairCapacity {
    fn default() -> Self {
        Self { gaps_us: [1000; PROBE_SLOTS], next: 0, first_arrival_us: None }
    }
}

impl PacketPairCapacity {
    /// The first packet of a pair (number 0 mod 16) arrived.
    pub fn on_first(&mut self, now_us: i64) {
        self.first_arrival_us = Some(now_us);
    }

    /// Its successor (1 mod 16) arrived. UDT records the gap from the last
    /// first-of-pair arrival whenever it sees a second one, even if the first
    /// was lost; the model does the same, once a first has been seen.
    pub fn on_second(&mut self, now_us: i64) {
        if let Some(first) = self.first_arrival_us {
            self.gaps_us[self.next] = now_us - first;
            self.next = (self.next + 1) % PROBE_SLOTS;
        }
    }

    /// Packets per second.
    pub fn packets_per_second(&self) -> u32 {
        let median = udt_median(&self.gaps_us);
        let (upper, lower) = (median << 3, median >> 3);
        let (mut count, mut sum) = (1i64, median);
        for &g in self.gaps_us.iter().filter(|&&g| g < upper && g > lower) {
            count += 1;
            sum += g;
        }
        (1e6 / (sum as f64 / count as f64).max(1.0)).ceil() as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_steady_arrival_rate_is_measured_exactly() {
        let mut w = ArrivalSpeed::new(0);
        for k in 1..=16 {
            w.on_arrival(k * 12);
        }
        assert_eq!(w.packets_per_second(), 83_334, "ceil(1e6 / 12)");
    }

    #[test]
    fn no_estimate_until_more_than_half_the_gaps_agree() {
        let mut w = ArrivalSpeed::new(0);
        // Eight 100 µs gaps beside eight of the initial 1 s: the median over
        // the first 15 slots is 1 s, and only the eight 1 s gaps lie within
        // (M/8, 8M): not more than half.
        for k in 1..=8 {
            w.on_arrival(k * 100);
        }
        assert_eq!(w.packets_per_second(), 0);
        w.on_arrival(900);
        // Nine 100 µs gaps: the median is now 100 µs and nine of them agree.
        assert_eq!(w.packets_per_second(), 10_000);
    }

    #[test]
    fn outliers_beyond_eight_times_the_median_are_ignored() {
        let mut w = ArrivalSpeed::new(0);
        let mut t = 0;
        for k in 0..16 {
            // One pause of 5 ms among 15 gaps of 100 µs: filtered out.
            t += if k == 5 { 5000 } else { 100 };
            w.on_arrival(t);
        }
        assert_eq!(w.packets_per_second(), 10_000);
    }

    #[test]
    fn the_mean_of_kept_gaps_uses_integer_division() {
        let mut w = ArrivalSpeed::new(0);
        let mut t = 0;
        // Gaps 10 and 11 alternate: sum/count = 168/16 = 10 (integer), speed 100 000.
        for k in 0..16 {
            t += 10 + (k % 2);
            w.on_arrival(t);
        }
        assert_eq!(w.packets_per_second(), 100_000);
    }

    #[test]
    fn the_median_ignores_the_last_slot_as_udt_does() {
        // 15 slots of 10 and the last of 1000: the median of the first 15 is
        // 10, so the last slot (above 8 x 10) is filtered out.
        let mut window = [10i64; 16];
        window[15] = 1000;
        assert_eq!(udt_median(&window), 10);
        // With the big values in the first 15 slots the median moves.
        let mut window = [1000i64; 16];
        window[15] = 10;
        assert_eq!(udt_median(&window), 1000);
    }

    #[test]
    fn packet_pair_capacity_is_the_median_filtered_mean_counting_the_median_once() {
        let mut c = PacketPairCapacity::default();
        for k in 0..64 {
            c.on_first(k * 1000);
            c.on_second(k * 1000 + 8); // 8 µs pairs: 1500 B at 1.5 Gbit/s
        }
        assert_eq!(c.packets_per_second(), 125_000);
        // Before any pair, the initial 1 ms slots give 1000 packets per second.
        assert_eq!(PacketPairCapacity::default().packets_per_second(), 1000);
    }

    #[test]
    fn a_second_packet_without_any_first_is_not_a_pair() {
        let mut c = PacketPairCapacity::default();
        c.on_second(50);
        assert_eq!(c.packets_per_second(), 1000);
    }
}
