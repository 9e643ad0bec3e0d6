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
    ///
    /// The wall clock is read first: the time between the two reads then
    /// makes the result late, never early (read the other way round, the
    /// emulator delivered a datagram 5 µs before its delay had passed).
    pub fn arrival(&self, stamp: Option<SystemTime>) -> Time {
        let (wall_now, now) = (SystemTime::now(), self.now());
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

/// The latest time a socket loop has handed its endpoints. The kernel's arrival
/// stamps of the datagrams read in one turn need not be in order, and an
/// endpoint's time must never run backwards, so every time handed over is
/// moved up to this one first.
#[derive(Clone, Copy, Debug)]
pub struct HandedTime {
    latest: Time,
}

impl HandedTime {
    pub fn new(start: Time) -> Self {
        Self { latest: start }
    }

    /// `at`, or the latest time already handed over if that is later, without
    /// handing it over (for a datagram that may yet be ignored).
    pub fn no_earlier(&self, at: Time) -> Time {
        at.max(self.latest)
    }

    /// [`Self::no_earlier`], handed over.
    pub fn give(&mut self, at: Time) -> Time {
        self.latest = self.no_earlier(at);
        self.latest
    }

    /// The clock's now, handed over.
    pub fn now(&mut self, clock: &Clock) -> Time {
        self.give(clock.now())
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
    fn a_handed_time_never_goes_back() {
        let mut handed = HandedTime::new(100);
        assert_eq!(handed.no_earlier(50), 100);
        assert_eq!(handed.give(300), 300);
        assert_eq!(handed.no_earlier(200), 300, "not handed over, but the latest stays");
        assert_eq!(handed.give(200), 300);
        assert_eq!(handed.give(400), 400);
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
