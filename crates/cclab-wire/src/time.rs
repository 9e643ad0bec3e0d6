//! Simulated time: integer nanoseconds since the start of the run.
//!
//! Integer time keeps event ordering exact and platform independent; floating
//! seconds appear only at the edges (configuration and reports).

/// A point in simulated time, in nanoseconds.
pub type Time = u64;

/// "No deadline": later than any event a run can reach.
pub const NEVER: Time = Time::MAX;

pub const NANOS_PER_SEC: u64 = 1_000_000_000;

/// Seconds (as configured by a user) to nanoseconds, rounded to the nearest nanosecond.
pub fn from_secs_f64(seconds: f64) -> Time {
    (seconds * NANOS_PER_SEC as f64).round() as Time
}

/// Nanoseconds to seconds, for reports.
pub fn to_secs_f64(t: Time) -> f64 {
    t as f64 / NANOS_PER_SEC as f64
}

pub const fn millis(ms: u64) -> Time {
    ms * 1_000_000
}

pub const fn micros(us: u64) -> Time {
    us * 1_000
}

pub const fn secs(s: u64) -> Time {
    s * NANOS_PER_SEC
}

/// Time to serialise `bytes` onto a link of `rate_bps`, rounded to the nearest
/// nanosecond (the rounding error is below 1e-5 of a 1000-byte packet at 10 Gbit/s).
#[inline]
pub fn serialization_time(bytes: u32, rate_bps: u64) -> Time {
    // bytes < 2^32 and 8e9 < 2^33, so the product fits in u64 below 2^65 only
    // for huge packets; use u128 just for those.
    let rate = rate_bps.max(1);
    match (bytes as u64).checked_mul(8 * NANOS_PER_SEC) {
        Some(bits) if bits <= u64::MAX - rate / 2 => (bits + rate / 2) / rate,
        _ => ((bytes as u128 * 8 * NANOS_PER_SEC as u128 + rate as u128 / 2) / rate as u128) as Time,
    }
}

/// Length of the intersection of `[a, b)` with `[lo, hi)`.
#[inline]
pub fn overlap(a: Time, b: Time, lo: Time, hi: Time) -> Time {
    let start = a.max(lo);
    let end = b.min(hi);
    end.saturating_sub(start)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialization_of_a_1040_byte_packet_at_100mbps_is_83_2_us() {
        assert_eq!(serialization_time(1040, 100_000_000), 83_200);
    }

    #[test]
    fn serialization_rounds_to_nearest_nanosecond() {
        // 1 byte at 3 bit/ns: 8/3 ns = 2.67 ns -> 3 ns.
        assert_eq!(serialization_time(1, 3_000_000_000), 3);
    }

    #[test]
    fn overlap_clips_to_window() {
        assert_eq!(overlap(0, 10, 5, 20), 5);
        assert_eq!(overlap(6, 8, 5, 20), 2);
        assert_eq!(overlap(0, 4, 5, 20), 0);
        assert_eq!(overlap(25, 30, 5, 20), 0);
    }

    #[test]
    fn seconds_round_trip() {
        assert_eq!(from_secs_f64(0.04), millis(40));
        assert!((to_secs_f64(millis(1500)) - 1.5).abs() < 1e-12);
    }
}
