//! A TCP endpoint's named timers. Each holds its deadline or [`NEVER`]; the
//! endpoint's next wake-up is the earliest, and on waking it asks which have
//! expired. Loss recovery may own further timers of its own
//! ([`crate::tcp::recovery::LossRecovery::next_timer`]).

use cclab_wire::{Time, NEVER};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timer {
    /// The application starts sending.
    Start,
    /// RFC 6298 retransmission timer.
    Retransmission,
    /// Pacing holds the next packet until then.
    Pacing,
    /// RFC 1122 §4.2.3.2 delayed ACK.
    DelayedAck,
}

const COUNT: usize = 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timers {
    deadlines: [Time; COUNT],
}

impl Default for Timers {
    fn default() -> Self {
        Self { deadlines: [NEVER; COUNT] }
    }
}

impl Timers {
    pub fn set(&mut self, timer: Timer, at: Time) {
        self.deadlines[timer as usize] = at;
    }

    pub fn cancel(&mut self, timer: Timer) {
        self.deadlines[timer as usize] = NEVER;
    }

    pub fn at(&self, timer: Timer) -> Time {
        self.deadlines[timer as usize]
    }

    pub fn is_running(&self, timer: Timer) -> bool {
        self.at(timer) != NEVER
    }

    pub fn expired(&self, timer: Timer, now: Time) -> bool {
        self.at(timer) <= now
    }

    /// The earliest deadline of all.
    pub fn next(&self) -> Time {
        self.deadlines.iter().copied().min().unwrap_or(NEVER)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_is_the_earliest_running_deadline() {
        let mut t = Timers::default();
        assert_eq!(t.next(), NEVER);
        t.set(Timer::Retransmission, 500);
        t.set(Timer::Pacing, 200);
        assert_eq!(t.next(), 200);
        assert!(t.expired(Timer::Pacing, 200) && !t.expired(Timer::Retransmission, 499));
        t.cancel(Timer::Pacing);
        assert_eq!(t.next(), 500);
        assert!(!t.is_running(Timer::Start));
    }
}
