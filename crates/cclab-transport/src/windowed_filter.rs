//! A windowed running maximum (or minimum) in constant space, after Kathleen
//! Nichols' algorithm as Linux `lib/minmax.c` keeps it (torvalds/linux; used
//! by `tcp_bbr.c` for BBR's bottleneck bandwidth over 10 round trips).
//!
//! The filter keeps three samples: the best value in the window, and the best
//! of the samples after it and after that, so that when the best one leaves
//! the window a successor is already known. A sample at least as good as the
//! best, or one arriving when even the newest kept sample is older than the
//! window, restarts the filter. The second and third choices are also
//! refreshed when a quarter and half of the window passed without a better
//! sample, so that they stay spread over the window. Time is whatever the
//! caller counts in (round trips for BBR's bandwidth, nanoseconds for an RTT),
//! and the answer may lag the exact windowed extreme by part of a window,
//! which the source accepts as the price of constant space.

/// Which extreme the filter tracks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extreme {
    Max,
    Min,
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Sample {
    at: u64,
    value: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct WindowedFilter {
    extreme: Extreme,
    window: u64,
    /// Best, second best (newer), third best (newest).
    kept: [Sample; 3],
}

impl WindowedFilter {
    /// A filter over `window` time units, holding `initial` as if sampled at `at`.
    pub fn new(extreme: Extreme, window: u64, at: u64, initial: f64) -> Self {
        let s = Sample { at, value: initial };
        Self { extreme, window, kept: [s; 3] }
    }

    /// The windowed extreme.
    pub fn best(&self) -> f64 {
        self.kept[0].value
    }

    /// Forgets everything and holds `value` as sampled at `at`.
    pub fn reset(&mut self, at: u64, value: f64) {
        self.kept = [Sample { at, value }; 3];
    }

    fn at_least_as_good(&self, a: f64, b: f64) -> bool {
        match self.extreme {
            Extreme::Max => a >= b,
            Extreme::Min => a <= b,
        }
    }

    /// Adds a sample taken at `at` (not earlier than the previous one) and
    /// returns the windowed extreme.
    pub fn update(&mut self, at: u64, value: f64) -> f64 {
        let s = Sample { at, value };
        if self.at_least_as_good(value, self.kept[0].value)
            || at.saturating_sub(self.kept[2].at) > self.window
        {
            self.reset(at, value);
            return value;
        }
        if self.at_least_as_good(value, self.kept[1].value) {
            self.kept[1] = s;
            self.kept[2] = s;
        } else if self.at_least_as_good(value, self.kept[2].value) {
            self.kept[2] = s;
        }
        self.age(s);
        self.kept[0].value
    }

    /// Moves the choices along when the best one has left the window, and
    /// refreshes the later choices when they have not changed for a quarter
    /// (second) or half (third) of it.
    fn age(&mut self, s: Sample) {
        let since_best = s.at.saturating_sub(self.kept[0].at);
        if since_best > self.window {
            self.kept = [self.kept[1], self.kept[2], s];
            if s.at.saturating_sub(self.kept[0].at) > self.window {
                self.kept = [self.kept[1], self.kept[2], s];
            }
        } else if self.kept[1].at == self.kept[0].at && since_best > self.window / 4 {
            self.kept[1] = s;
            self.kept[2] = s;
        } else if self.kept[2].at == self.kept[1].at && since_best > self.window / 2 {
            self.kept[2] = s;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_max_holds_a_peak_for_the_window_then_forgets_it() {
        let mut f = WindowedFilter::new(Extreme::Max, 10, 0, 0.0);
        assert_eq!(f.update(0, 100.0), 100.0);
        for round in 1..=10 {
            assert_eq!(f.update(round, 50.0), 100.0, "round {round} is still within 10 of the peak");
        }
        // Round 11 is more than 10 rounds after the peak: the next best takes over.
        assert_eq!(f.update(11, 50.0), 50.0);
    }

    #[test]
    fn a_better_sample_replaces_the_best_at_once() {
        let mut f = WindowedFilter::new(Extreme::Max, 10, 0, 10.0);
        assert_eq!(f.update(1, 30.0), 30.0);
        assert_eq!(f.update(2, 20.0), 30.0);
    }

    #[test]
    fn after_the_peak_leaves_the_window_the_best_later_sample_remains() {
        // A peak at 0, then a decreasing ramp: when the peak expires, the best of
        // the samples kept from later in the window (not the newest) is the answer.
        let mut f = WindowedFilter::new(Extreme::Max, 10, 0, 0.0);
        f.update(0, 100.0);
        for (t, v) in [(3, 80.0), (6, 60.0), (9, 40.0)] {
            f.update(t, v);
        }
        assert_eq!(f.update(11, 10.0), 80.0);
    }

    #[test]
    fn the_min_tracks_the_smallest_sample() {
        let mut f = WindowedFilter::new(Extreme::Min, 100, 0, f64::INFINITY);
        assert_eq!(f.update(0, 40.0), 40.0);
        assert_eq!(f.update(50, 45.0), 40.0);
        assert_eq!(f.update(101, 45.0), 45.0);
    }
}
