//! Periodic work of a discipline without a timer: PIE's and DualPI2's
//! probability update every `tupdate`, caught up at the next arrival or
//! departure.
//!
//! The engine calls a discipline only at arrivals and dequeues. The updates
//! fall at `k period`, k = 1, 2, ... from the start of the run; a call runs,
//! in order and before anything else, every update due at or before its
//! `now` (an update at the instant of a call goes before it). That is exact
//! when an update reads only state that changes at updates and at calls,
//! and the time it is due: every update due since the last call then sees
//! what it would have seen at its own time. A discipline at rest (an update
//! would leave everything but a countdown unchanged, and so would every later
//! one until the next call) skips the rest of the updates due in one step, so
//! that a long idle period costs nothing.

use cclab_wire::Time;

/// When the next update is due, and the period.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clock {
    pub next: Time,
    pub period: Time,
}

impl Clock {
    /// The first update one `period` after the start of the run.
    pub fn new(period: Time) -> Self {
        Self { next: period, period }
    }
}

/// A discipline with periodic work.
pub trait Periodic {
    fn clock(&mut self) -> &mut Clock;

    /// The update due at `at`.
    fn update_at(&mut self, at: Time);

    /// Whether the next update, and every one after it until the next call,
    /// would change nothing but what [`Periodic::rest`] accounts for.
    fn at_rest(&self) -> bool;

    /// `due` updates, spanning `span`, are skipped at rest.
    fn rest(&mut self, _due: u64, _span: Time) {}
}

/// Runs every update of `d` due at or before `now`, in order.
pub fn catch_up<D: Periodic + ?Sized>(d: &mut D, now: Time) {
    loop {
        let Clock { next, period } = *d.clock();
        if next > now {
            return;
        }
        if d.at_rest() {
            let due = (now - next) / period + 1;
            let span = due.saturating_mul(period);
            d.rest(due, span);
            d.clock().next = next.saturating_add(span);
            return;
        }
        d.update_at(next);
        match next.checked_add(period) {
            Some(later) => d.clock().next = later,
            None => {
                d.clock().next = Time::MAX;
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts down by one at each update until 0, where it rests.
    struct Countdown {
        clock: Clock,
        left: u64,
        updates: Vec<Time>,
        skipped: Vec<(u64, Time)>,
    }

    impl Periodic for Countdown {
        fn clock(&mut self) -> &mut Clock {
            &mut self.clock
        }
        fn update_at(&mut self, at: Time) {
            self.left = self.left.saturating_sub(1);
            self.updates.push(at);
        }
        fn at_rest(&self) -> bool {
            self.left == 0
        }
        fn rest(&mut self, due: u64, span: Time) {
            self.skipped.push((due, span));
        }
    }

    #[test]
    fn updates_due_run_in_order_at_their_times_then_rest_is_skipped_in_one_step() {
        let mut d = Countdown { clock: Clock::new(10), left: 3, updates: Vec::new(), skipped: Vec::new() };
        catch_up(&mut d, 9);
        assert!(d.updates.is_empty());
        // An update at the instant of the call runs.
        catch_up(&mut d, 20);
        assert_eq!(d.updates, [10, 20]);
        // 30 brings it to rest; 40..=95 are skipped together.
        catch_up(&mut d, 95);
        assert_eq!(d.updates, [10, 20, 30]);
        assert_eq!(d.skipped, [(6, 60)]);
        assert_eq!(d.clock.next, 100);
        d.left = 1;
        catch_up(&mut d, 100);
        assert_eq!(d.updates, [10, 20, 30, 100]);
    }
}
