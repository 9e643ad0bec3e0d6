//! The system clock as the endpoints' and the emulator's [`Time`]: nanoseconds
//! since a fixed start, from the monotonic clock (never the wall clock, which
//! can step).

use cclab_wire::Time;
use std::time::{Duration, Instant};

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
