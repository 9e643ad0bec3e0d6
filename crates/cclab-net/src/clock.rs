//! The system clock as the endpoints' and the emulator's [`Time`]: nanoseconds
//! since a fixed start, from the monotonic clock (never the wall clock, which
//! can step).

use cclab_wire::Time;
use std::time::{Duration, Instant, SystemTime};

/// A kernel arrival stamp older than this is not believed (the wall clock it is
/// read against stepped): the datagram counts as arriving when it is read.
const OLDEST_STAMP: Duration = Duration::from_secs(1);

#[derive(Clone, Copy, Debug)]
pub struct Clock {
    start: Instant,
}

impl Clock {
    pub fn new() -> Self {
        Self { start: Instant::now() }
    }

    pub fn now(&self) -> Time {
        self.at(Instant::now())
    }

    /// `instant` on this clock (0 for an instant before its start).
    pub fn at(&self, instant: Instant) -> Time {
        instant.saturating_duration_since(self.start).as_nanos().min(u128::from(u64::MAX)) as Time
    }

    /// When a datagram arrived, from the kernel's wall-clock `stamp`
    /// ([`crate::sys::recv_stamped`]): now, less how long it waited in the
    /// socket. Without a stamp, or with one in the future or older than
    /// [`OLDEST_STAMP`], now.
    pub fn arrival(&self, stamp: Option<SystemTime>) -> Time {
        let (now, wall_now) = (self.now(), SystemTime::now());
        let waited = stamp.and_then(|s| wall_now.duration_since(s).ok()).filter(|w| *w <= OLDEST_STAMP);
        waited.map_or(now, |w| now.saturating_sub(w.as_nanos() as Time))
    }

    /// How long from now until `time`, zero if it has passed.
    pub fn until(&self, time: Time) -> Duration {
        Duration::from_nanos(time.saturating_sub(self.now()))
    }
}

impl Default for Clock {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_arrival_is_now_less_the_time_the_datagram_waited() {
        let clock = Clock::new();
        std::thread::sleep(Duration::from_millis(20));
        let before = clock.now();
        let at = clock.arrival(Some(SystemTime::now() - Duration::from_millis(5)));
        let after = clock.now();
        assert!(at + 5_000_000 >= before && at + 5_000_000 <= after, "{before} {at} {after}");
    }

    #[test]
    fn an_implausible_stamp_or_none_counts_as_now() {
        let clock = Clock::new();
        std::thread::sleep(Duration::from_millis(2));
        for stamp in [None, Some(SystemTime::now() + Duration::from_secs(60)), Some(SystemTime::UNIX_EPOCH)] {
            let before = clock.now();
            let at = clock.arrival(stamp);
            assert!(at >= before && at <= clock.now(), "{stamp:?}");
        }
    }
}
