//! A value that changes in steps over time: a link's rate or propagation
//! delay. Either steps, each value holding from its time until the next
//! step's (the last for ever), or a cycle of values held for given durations
//! and repeated from the start (an on/off link is a cycle of two).

use cclab_wire::time::serialization_time;
use cclab_wire::{Time, NEVER};
use serde::Serialize;

const NANOS_PER_SEC: u128 = 1_000_000_000;

/// One step of a schedule: its value over `[from, until)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    pub from: Time,
    pub until: Time,
    pub value: u64,
}

impl Step {
    #[inline]
    pub fn contains(&self, t: Time) -> bool {
        self.from <= t && t < self.until
    }
}

/// A schedule read mostly at times close together (a transmitter's): the
/// step last read is kept, so a read inside it needs no search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cursor {
    schedule: Schedule,
    step: Step,
}

impl Cursor {
    pub fn new(schedule: Schedule) -> Self {
        let step = schedule.step_at(0);
        Self { schedule, step }
    }

    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    /// The step `t` falls in.
    #[inline]
    pub fn step_at(&mut self, t: Time) -> Step {
        if !self.step.contains(t) {
            self.step = self.schedule.step_at(t);
        }
        self.step
    }

    #[inline]
    pub fn value_at(&mut self, t: Time) -> u64 {
        self.step_at(t).value
    }

    /// Whether `t` falls in the step last read and its value is above zero:
    /// the common case, answered without touching the schedule.
    #[inline(always)]
    pub fn nonzero_in_current_step(&self, t: Time) -> bool {
        self.step.contains(t) && self.step.value > 0
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Schedule {
    /// `(from, value)`, times strictly increasing, the first at 0.
    Steps(Vec<(Time, u64)>),
    /// `(offset in the cycle, value)`, offsets strictly increasing from 0,
    /// and the cycle's length.
    Cycle { steps: Vec<(Time, u64)>, period: Time },
}

/// Why a schedule cannot be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScheduleError {
    Empty,
    /// The first step is not at time 0.
    FirstNotAtZero,
    /// Step `.0` is not after the one before it.
    BackInTime(usize),
    /// Cycle entry `.0` lasts no time.
    ZeroDuration(usize),
}

impl std::fmt::Display for ScheduleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScheduleError::Empty => write!(f, "has no steps"),
            ScheduleError::FirstNotAtZero => write!(f, "must start at 0s (its first step's time)"),
            ScheduleError::BackInTime(i) => write!(f, "goes back in time at step {i}: times must increase"),
            ScheduleError::ZeroDuration(i) => write!(f, "entry {i} lasts no time"),
        }
    }
}

impl Schedule {
    pub fn constant(value: u64) -> Self {
        Schedule::Steps(vec![(0, value)])
    }

    /// Steps `(from, value)`: times strictly increasing, the first at 0.
    pub fn steps(steps: Vec<(Time, u64)>) -> Result<Self, ScheduleError> {
        match steps.first() {
            None => return Err(ScheduleError::Empty),
            Some(&(t, _)) if t != 0 => return Err(ScheduleError::FirstNotAtZero),
            _ => {}
        }
        if let Some(i) = (1..steps.len()).find(|&i| steps[i].0 <= steps[i - 1].0) {
            return Err(ScheduleError::BackInTime(i));
        }
        Ok(Schedule::Steps(steps))
    }

    /// A cycle of `(duration, value)` entries, repeated for ever.
    pub fn cycle(entries: &[(Time, u64)]) -> Result<Self, ScheduleError> {
        if entries.is_empty() {
            return Err(ScheduleError::Empty);
        }
        let mut steps = Vec::with_capacity(entries.len());
        let mut offset: Time = 0;
        for (i, &(duration, value)) in entries.iter().enumerate() {
            if duration == 0 {
                return Err(ScheduleError::ZeroDuration(i));
            }
            steps.push((offset, value));
            offset = offset.saturating_add(duration);
        }
        Ok(Schedule::Cycle { steps, period: offset })
    }

    /// Whether the value never changes.
    pub fn is_constant(&self) -> bool {
        let steps = match self {
            Schedule::Steps(s) | Schedule::Cycle { steps: s, .. } => s,
        };
        steps.iter().all(|&(_, v)| v == steps[0].1)
    }

    /// The value at `t` and the time it next changes (`NEVER` if it does not).
    pub fn at(&self, t: Time) -> (u64, Time) {
        let step = self.step_at(t);
        (step.value, step.until)
    }

    /// The step `t` falls in.
    pub fn step_at(&self, t: Time) -> Step {
        match self {
            Schedule::Steps(steps) => {
                let i = steps.partition_point(|&(from, _)| from <= t).max(1) - 1;
                let until = steps.get(i + 1).map_or(NEVER, |&(from, _)| from);
                Step { from: steps[i].0, until, value: steps[i].1 }
            }
            Schedule::Cycle { steps, period } => {
                let base = t - t % period;
                let offset = t - base;
                let i = steps.partition_point(|&(from, _)| from <= offset).max(1) - 1;
                let end = steps.get(i + 1).map_or(*period, |&(from, _)| from);
                Step { from: base + steps[i].0, until: base.saturating_add(end), value: steps[i].1 }
            }
        }
    }

    pub fn value_at(&self, t: Time) -> u64 {
        self.at(t).0
    }

    /// The smallest and largest values it takes.
    pub fn range(&self) -> (u64, u64) {
        let steps = match self {
            Schedule::Steps(s) | Schedule::Cycle { steps: s, .. } => s,
        };
        let values = steps.iter().map(|&(_, v)| v);
        (values.clone().min().unwrap_or(0), values.max().unwrap_or(0))
    }

    /// The first time at or after `t` with a value above zero, or `NEVER`.
    pub fn next_nonzero(&self, mut t: Time) -> Time {
        // A cycle with a nonzero entry has one within a period.
        let limit = match self {
            Schedule::Steps(s) => s.len(),
            Schedule::Cycle { steps, .. } => steps.len() + 1,
        };
        for _ in 0..=limit {
            let (value, end) = self.at(t);
            if value > 0 {
                return t;
            }
            if end == NEVER {
                return NEVER;
            }
            t = end;
        }
        NEVER
    }

    /// When the last bit of `bytes` leaves a transmitter that starts at
    /// `start` and sends at this schedule's rate (bit/s), pausing while it is
    /// zero; `NEVER` if the rate stays zero. Within one step this is
    /// `start + serialization_time(bytes, rate)`, as on a constant link.
    pub fn finish(&self, start: Time, bytes: u32) -> Time {
        let (rate, end) = self.at(start);
        if rate > 0 {
            let t = start.saturating_add(serialization_time(bytes, rate));
            if t <= end {
                return t;
            }
        }
        // Across steps: what is left to send, in bit-nanoseconds per second
        // (a rate of r bit/s sends r of these per nanosecond).
        let mut left = bytes as u128 * 8 * NANOS_PER_SEC;
        let mut t = start;
        loop {
            let (rate, end) = self.at(t);
            let rate = rate as u128;
            if end == NEVER {
                if rate == 0 {
                    return NEVER;
                }
                let rest = (left + rate / 2) / rate;
                return t.saturating_add(rest.min(NEVER as u128) as Time);
            }
            let capacity = rate * (end - t) as u128;
            if rate > 0 && left <= capacity {
                return t + ((left + rate / 2) / rate) as Time;
            }
            left -= capacity;
            t = end;
        }
    }

    /// Bytes a transmitter at this schedule's rate could send in `[a, b)`.
    pub fn capacity_bytes(&self, a: Time, b: Time) -> f64 {
        let mut bits = 0.0;
        let mut t = a;
        while t < b {
            let (rate, end) = self.at(t);
            let until = end.min(b);
            bits += rate as f64 * (until - t) as f64 / NANOS_PER_SEC as f64;
            t = until;
        }
        bits / 8.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_wire::time::{micros, millis};

    #[test]
    fn steps_hold_each_value_until_the_next_step() {
        let s = Schedule::steps(vec![(0, 10), (millis(5), 20), (millis(7), 0)]).expect("valid");
        assert_eq!(s.at(0), (10, millis(5)));
        assert_eq!(s.at(millis(5) - 1), (10, millis(5)));
        assert_eq!(s.at(millis(5)), (20, millis(7)));
        assert_eq!(s.at(millis(100)), (0, NEVER));
        assert_eq!(s.range(), (0, 20));
        assert_eq!(s.next_nonzero(millis(6)), millis(6));
        assert_eq!(s.next_nonzero(millis(7)), NEVER);
    }

    #[test]
    fn a_cycle_repeats_from_its_start() {
        let s = Schedule::cycle(&[(millis(3), 100), (millis(2), 0)]).expect("valid");
        assert_eq!(s.at(millis(1)), (100, millis(3)));
        assert_eq!(s.at(millis(3)), (0, millis(5)));
        assert_eq!(s.at(millis(5)), (100, millis(8)));
        assert_eq!(s.at(millis(9)), (0, millis(10)));
        assert_eq!(s.next_nonzero(millis(9)), millis(10));
        assert!(!s.is_constant());
    }

    #[test]
    fn malformed_schedules_are_refused() {
        assert_eq!(Schedule::steps(vec![]), Err(ScheduleError::Empty));
        assert_eq!(Schedule::steps(vec![(1, 5)]), Err(ScheduleError::FirstNotAtZero));
        assert_eq!(Schedule::steps(vec![(0, 5), (9, 1), (9, 2)]), Err(ScheduleError::BackInTime(2)));
        assert_eq!(Schedule::cycle(&[(5, 1), (0, 2)]), Err(ScheduleError::ZeroDuration(1)));
    }

    /// 8 Mbit/s sends a byte per microsecond: 1000 bytes take 1 ms within a
    /// step, exactly as `serialization_time` says; across a halving of the
    /// rate at 0.5 ms, 500 bytes go in the first half millisecond and the
    /// other 500 take 1 ms more; across an off period the transmitter pauses.
    #[test]
    fn finish_integrates_the_rate_over_its_steps() {
        let constant = Schedule::constant(8_000_000);
        assert_eq!(constant.finish(micros(3), 1000), micros(1003));
        assert_eq!(constant.finish(7, 1234), 7 + serialization_time(1234, 8_000_000));
        let halved = Schedule::steps(vec![(0, 8_000_000), (micros(500), 4_000_000)]).expect("valid");
        assert_eq!(halved.finish(0, 1000), micros(1500));
        let off = Schedule::cycle(&[(micros(400), 8_000_000), (micros(600), 0)]).expect("valid");
        // 400 bytes by 0.4 ms, nothing until 1 ms, 400 more by 1.4 ms, the last 200 by 2.2 ms.
        assert_eq!(off.finish(0, 1000), micros(2200));
        let dies = Schedule::steps(vec![(0, 8_000_000), (micros(100), 0)]).expect("valid");
        assert_eq!(dies.finish(0, 1000), NEVER);
        assert_eq!(dies.finish(micros(200), 10), NEVER);
    }

    #[test]
    fn capacity_is_the_rate_integrated_over_the_interval() {
        let off = Schedule::cycle(&[(millis(1), 8_000_000), (millis(1), 0)]).expect("valid");
        assert!((off.capacity_bytes(0, millis(10)) - 5000.0).abs() < 1e-9);
        assert!((off.capacity_bytes(micros(500), micros(1500)) - 500.0).abs() < 1e-9);
    }
}
