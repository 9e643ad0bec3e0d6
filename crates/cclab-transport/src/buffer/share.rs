//! How a host with a memory cap shares it among its connections' desires.
//!
//! [`water_fill`] is weighted max-min fairness by progressive filling: every
//! connection's allocation rises in proportion to its weight until it reaches
//! its desire or the cap runs out. With equal weights that is ATBT's max-min
//! fair share (Semke, Mahdavi and Mathis, SIGCOMM 1998; algorithms.md §9:
//! connections desiring less than an equal share get their desire, the rest
//! is split equally among the others, iterating); with each connection's
//! expected rate as its weight it is RTBA's proportional redistribution (seed
//! paper 004 §3.2 and Fig. 1).
//!
//! [`host_limits`] turns desires into the limits a host sends its connections;
//! [`connection_limits`] does it for the connections' [`SendState`]s, as both
//! drivers (the simulator's host agent and the real sending host) call it.
//!
//! Decisions where the sources are silent:
//! - **Whole bytes, rounded down**, so the allocations never sum above the
//!   cap; up to one byte per connection may stay unallocated. The result is
//!   a function of its inputs only (no ordering or randomness).
//! - **A weight that is zero, negative or not finite** (and a missing one,
//!   when `weights` is shorter than `desires`) counts as zero: such a
//!   connection gets nothing while a connection with a positive weight is
//!   unsatisfied, and shares what is left after all of those are satisfied
//!   max-min fairly with the other zero-weight connections. A connection
//!   without an estimate yet is served last, but not starved of spare memory.
//! - **Weights are relative**: they are scaled by the largest before use, so
//!   huge or tiny rates (bytes per second) neither overflow nor underflow.
//! - **Under the cap, the leftover is headroom**: see [`host_limits`].

use super::Sharing;
use cclab_wire::{SendState, Time, NEVER};

/// Segments of buffer every connection is guaranteed before the cap is shared
/// (see [`host_limits`]): two, so a connection is never reduced to
/// stop-and-wait by the sharing alone.
pub const MIN_SEGMENTS: u64 = 2;

/// The limits a host with `cap` bytes gives connections in these states:
/// their desires and weights, each guaranteed [`MIN_SEGMENTS`] segments.
pub fn connection_limits(states: &[SendState], sharing: Sharing, cap: u64) -> Vec<u64> {
    let desires: Vec<u64> = states.iter().map(|s| s.desired).collect();
    let weights: Vec<f64> = states.iter().map(|s| s.share_weight).collect();
    let floors: Vec<u64> = states.iter().map(|s| MIN_SEGMENTS * u64::from(s.inputs.mss)).collect();
    host_limits(&desires, &weights, sharing, cap, &floors)
}

/// When the host recomputes: every `every` from time 0, and at each start in `starts`.
#[derive(Clone, Debug, PartialEq)]
pub struct ShareSchedule {
    every: Time,
    next_period: Time,
    /// Start times still ahead, latest first (popped from the end).
    starts: Vec<Time>,
}

impl ShareSchedule {
    pub fn new(every: Time, mut starts: Vec<Time>) -> Self {
        starts.sort_unstable_by(|a, b| b.cmp(a));
        starts.dedup();
        Self { every: every.max(1), next_period: 0, starts }
    }

    pub fn next(&self) -> Time {
        self.next_period.min(self.starts.last().copied().unwrap_or(NEVER))
    }

    /// The recomputation due at `now` happened: moves past it.
    pub fn done(&mut self, now: Time) {
        while self.next_period <= now {
            self.next_period += self.every;
        }
        while self.starts.last().is_some_and(|&s| s <= now) {
            self.starts.pop();
        }
    }
}

/// Weighted max-min allocation of `cap` bytes among `desires`: no connection
/// gets more than its desire, and the unsatisfied ones share what the others
/// leave in proportion to their weights. If the desires fit, they are the
/// result; otherwise the result sums to at most `cap` (and to more than
/// `cap - desires.len()`).
pub fn water_fill(desires: &[u64], weights: &[f64], cap: u64) -> Vec<u64> {
    if total(desires) <= u128::from(cap) {
        return desires.to_vec();
    }
    let usable = |w: f64| w.is_finite() && w > 0.0;
    let largest = weights.iter().copied().filter(|&w| usable(w)).fold(0.0, f64::max);
    let weight = |i: usize| weights.get(i).copied().filter(|&w| usable(w)).map_or(0.0, |w| w / largest);
    let (weighted, unweighted): (Vec<usize>, Vec<usize>) = (0..desires.len()).partition(|&i| weight(i) > 0.0);
    let mut grant = vec![0; desires.len()];
    let left = fill(desires, &weighted, weight, cap, &mut grant);
    // Not even the bytes the rounding left over while a weighted connection is short.
    if weighted.iter().all(|&i| grant[i] == desires[i]) {
        fill(desires, &unweighted, |_| 1.0, left, &mut grant);
    }
    grant
}

/// The per-connection limits a host with `cap` bytes sends its connections,
/// summing to at most `cap`.
///
/// If the desires fit, each limit is its desire plus an equal share of the
/// leftover `cap - sum(desires)`: as in ATBT the fair share is an upper limit
/// and memory is allocated on demand, so a connection whose desire grows
/// between two recomputations (cwnd doubling in slow start) may use spare
/// memory at once instead of waiting up to a period for it. If they do not
/// fit, every connection is first guaranteed its `floor` (at most its
/// desire; the floors themselves shared max-min if even they do not fit),
/// and the rest of the cap is [`water_fill`]ed over what the desires ask
/// beyond the floors, with equal weights (`MaxMin`) or with `weights`
/// (`Proportional`).
///
/// The floor is our addition, as an operating system guarantees every socket
/// a minimum send buffer (Linux's `SOCK_MIN_SNDBUF`): in proportion to
/// expected rates, a connection whose rate is not yet known, or was measured
/// while it had no buffer, would get a share too small for one segment, never
/// send, never measure a rate, and starve for good.
pub fn host_limits(desires: &[u64], weights: &[f64], sharing: Sharing, cap: u64, floors: &[u64]) -> Vec<u64> {
    let sum = total(desires);
    if sum <= u128::from(cap) {
        // sum <= cap, so it fits in u64.
        let leftover = cap - sum as u64;
        let headroom = leftover / (desires.len().max(1) as u64);
        return desires.iter().map(|&d| d + headroom).collect();
    }
    let wanted: Vec<u64> =
        desires.iter().enumerate().map(|(i, &d)| d.min(floors.get(i).copied().unwrap_or(0))).collect();
    let guaranteed = water_fill(&wanted, &vec![1.0; desires.len()], cap);
    let rest = cap - total(&guaranteed) as u64;
    let beyond: Vec<u64> = desires.iter().zip(&guaranteed).map(|(&d, &g)| d - g).collect();
    let extra = match sharing {
        Sharing::MaxMin => water_fill(&beyond, &vec![1.0; desires.len()], rest),
        Sharing::Proportional => water_fill(&beyond, weights, rest),
    };
    guaranteed.iter().zip(extra).map(|(&g, e)| g + e).collect()
}

fn total(values: &[u64]) -> u128 {
    values.iter().map(|&v| u128::from(v)).sum()
}

/// Progressive filling of the connections `members` from `budget` bytes:
/// while some desire at most their weighted share of what is left, they get
/// their desire and leave; the rest then get their share, rounded down.
/// Returns the bytes left over.
fn fill(
    desires: &[u64],
    members: &[usize],
    weight: impl Fn(usize) -> f64,
    budget: u64,
    grant: &mut [u64],
) -> u64 {
    let mut left = budget;
    let mut active: Vec<usize> = members.iter().copied().filter(|&i| desires[i] > 0).collect();
    while !active.is_empty() {
        let level = left as f64 / active.iter().map(|&i| weight(i)).sum::<f64>();
        let (satisfied, unsatisfied): (Vec<usize>, Vec<usize>) =
            active.iter().partition(|&&i| desires[i] as f64 <= level * weight(i));
        if satisfied.is_empty() {
            for i in unsatisfied {
                // `min(left)` keeps the sum within the budget whatever the float rounding.
                let give = ((level * weight(i)).floor() as u64).min(desires[i]).min(left);
                grant[i] = give;
                left -= give;
            }
            break;
        }
        for i in satisfied {
            let give = desires[i].min(left);
            grant[i] = give;
            left -= give;
        }
        active = unsatisfied;
    }
    left
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_wire::random::SplitMix64;
    use cclab_wire::time::millis;

    /// ATBT's recomputation period: every 500 ms from time 0, whatever else wakes the host.
    #[test]
    fn the_host_recomputes_every_period_and_at_each_start() {
        let mut schedule = ShareSchedule::new(millis(500), vec![millis(3000), millis(700), millis(700)]);
        let mut wakes = Vec::new();
        while schedule.next() <= millis(3500) {
            let now = schedule.next();
            wakes.push(now / millis(1));
            schedule.done(now);
        }
        assert_eq!(wakes, [0, 500, 700, 1000, 1500, 2000, 2500, 3000, 3500]);
    }

    #[test]
    fn max_min_gives_small_desires_in_full_and_splits_the_rest_equally() {
        // sum 140 > 100. Equal share 100/3 = 33.3: 10 fits; 90 left for two,
        // 45 each, and both desire more.
        assert_eq!(water_fill(&[10, 50, 80], &[1.0; 3], 100), [10, 45, 45]);
        // Share 25: 20 fits; 80 left for three, 26.67: 25 fits; 55 for two, 27.5 -> 27.
        assert_eq!(water_fill(&[20, 25, 60, 90], &[1.0; 4], 100), [20, 25, 27, 27]);
        // Rounding down: 100/3 = 33.3 -> 33 each, one byte unallocated.
        assert_eq!(water_fill(&[50, 50, 50], &[1.0; 3], 100), [33, 33, 33]);
    }

    #[test]
    fn desires_that_fit_are_returned_as_they_are() {
        assert_eq!(water_fill(&[10, 20, 30], &[1.0, 0.0, f64::NAN], 60), [10, 20, 30]);
        assert_eq!(water_fill(&[], &[], 0), Vec::<u64>::new());
        assert_eq!(water_fill(&[0, 5], &[1.0, 1.0], 0), [0, 0]);
    }

    /// A connection whose rate is not known yet (weight 1e-9 against 1) still
    /// gets its floor: 3000 of the cap of 10000; the other its floor and
    /// 4000 / (1 + 1e-9) more, rounded down to 3999. Floors that do not fit
    /// are shared max-min: cap 5000 for floors of min(desire, 3000) = 3000,
    /// 2000, 3000 gives 1666 each, and the 2 bytes left are too few to share.
    #[test]
    fn every_connection_gets_its_floor_before_the_proportional_share() {
        let limits =
            host_limits(&[20_000, 20_000], &[1.0, 1e-9], Sharing::Proportional, 10_000, &[3000, 3000]);
        assert_eq!(limits, [6999, 3000]);
        let limits = host_limits(&[20_000, 20_000], &[1.0, 1e-9], Sharing::Proportional, 10_000, &[]);
        assert_eq!(limits, [9999, 0], "without floors the slow connection starves");
        let limits = host_limits(&[20_000, 2000, 20_000], &[1.0; 3], Sharing::Proportional, 5000, &[3000; 3]);
        assert_eq!(limits, [1666, 1666, 1666]);
    }

    #[test]
    fn proportional_shares_follow_the_weights() {
        // Weights 1:1:2 of 100: 25, 25, 50. 10 <= 25 fits; 90 left for
        // weights 1 and 2: 30 and 60, both below their desires.
        assert_eq!(water_fill(&[10, 50, 80], &[1.0, 1.0, 2.0], 100), [10, 30, 60]);
        // 25, 25, 50: the third desires 30 <= 50 and fits; 70 for 1:1 = 35 each.
        assert_eq!(water_fill(&[40, 50, 30], &[1.0, 1.0, 2.0], 100), [35, 35, 30]);
        // Only the ratio matters (rates in bytes/s as weights).
        assert_eq!(water_fill(&[10, 50, 80], &[1e6, 1e6, 2e6], 100), [10, 30, 60]);
        assert_eq!(water_fill(&[10, 50, 80], &[1e-300, 1e-300, 2e-300], 100), [10, 30, 60]);
    }

    #[test]
    fn zero_weights_are_served_after_every_positive_weight() {
        // The others are not all satisfied (80 > 50): nothing for weight 0.
        assert_eq!(water_fill(&[10, 50, 80], &[0.0, 1.0, 1.0], 100), [0, 50, 50]);
        // sum 90 > 80; 20 and 40 fit in 40 each; the 20 left go to the first.
        assert_eq!(water_fill(&[30, 20, 40], &[0.0, 1.0, 1.0], 80), [20, 20, 40]);
        // Negative, NaN, infinite and missing weights count as zero alike.
        assert_eq!(water_fill(&[30, 20, 40], &[-1.0, 1.0, 1.0], 80), [20, 20, 40]);
        assert_eq!(water_fill(&[30, 20, 40], &[f64::NAN, 1.0, 1.0], 80), [20, 20, 40]);
        assert_eq!(water_fill(&[30, 20, 40], &[f64::INFINITY, 1.0, 1.0], 80), [20, 20, 40]);
        assert_eq!(water_fill(&[20, 40, 30], &[1.0, 1.0], 80), [20, 40, 20]);
        // All weights zero: max-min among them.
        assert_eq!(water_fill(&[10, 50, 80], &[0.0; 3], 100), [10, 45, 45]);
    }

    #[test]
    fn host_limits_add_the_leftover_as_headroom_when_desires_fit() {
        // sum 60, leftover 40, 40/3 = 13 each: 23, 33, 43 (sum 99).
        for sharing in [Sharing::MaxMin, Sharing::Proportional] {
            assert_eq!(host_limits(&[10, 20, 30], &[1.0, 1.0, 2.0], sharing, 100, &[]), [23, 33, 43]);
        }
        assert_eq!(host_limits(&[10, 20, 30], &[1.0; 3], Sharing::MaxMin, 60, &[]), [10, 20, 30]);
        assert_eq!(host_limits(&[], &[], Sharing::MaxMin, 100, &[]), Vec::<u64>::new());
    }

    #[test]
    fn host_limits_water_fill_when_desires_exceed_the_cap() {
        let weights = [1.0, 1.0, 2.0];
        assert_eq!(host_limits(&[10, 50, 80], &weights, Sharing::MaxMin, 100, &[]), [10, 45, 45]);
        assert_eq!(host_limits(&[10, 50, 80], &weights, Sharing::Proportional, 100, &[]), [10, 30, 60]);
    }

    /// Random inputs: the invariants of both functions, and max-min
    /// optimality: no unsatisfied connection with a positive weight could get
    /// more without taking from one that has as much per unit of weight.
    #[test]
    fn invariants_hold_over_random_inputs() {
        let mut rng = SplitMix64::new(4);
        for case in 0..5000 {
            let n = 1 + (rng.next_u64() % 8) as usize;
            let scale = [100, 10_000, 1 << 40][case % 3];
            let desires: Vec<u64> = (0..n)
                .map(|_| if rng.next_u64().is_multiple_of(5) { 0 } else { rng.next_u64() % scale })
                .collect();
            let weights: Vec<f64> = (0..n)
                .map(|_| if rng.next_u64().is_multiple_of(6) { 0.0 } else { 0.01 + 10.0 * rng.next_f64() })
                .collect();
            let cap = rng.next_u64() % (scale * n as u64);
            let sum_desired: u64 = desires.iter().sum();

            let grant = water_fill(&desires, &weights, cap);
            let granted: u64 = grant.iter().sum();
            assert_eq!(grant.len(), n);
            assert!(granted <= cap, "case {case}");
            assert!(grant.iter().zip(&desires).all(|(g, d)| g <= d), "case {case}");
            if sum_desired <= cap {
                assert_eq!(grant, desires, "case {case}");
                for sharing in [Sharing::MaxMin, Sharing::Proportional] {
                    let limits = host_limits(&desires, &weights, sharing, cap, &[]);
                    assert!(limits.iter().sum::<u64>() <= cap, "case {case}");
                    assert!(limits.iter().zip(&desires).all(|(l, d)| l >= d), "case {case}: headroom");
                }
                continue;
            }
            assert!(granted + n as u64 > cap, "case {case}: {granted} of {cap}");
            for i in (0..n).filter(|&i| grant[i] < desires[i] && weights[i] > 0.0) {
                for j in 0..n {
                    // Floor rounding costs i at most one byte.
                    let (per_i, per_j) =
                        ((grant[i] + 1) as f64 / weights[i], grant[j] as f64 / weights[j].max(1e-300));
                    assert!(
                        per_i >= per_j * (1.0 - 1e-9),
                        "case {case}: {i} {j} {grant:?} {desires:?} {weights:?}"
                    );
                }
            }

            for sharing in [Sharing::MaxMin, Sharing::Proportional] {
                let limits = host_limits(&desires, &weights, sharing, cap, &[]);
                assert!(limits.iter().sum::<u64>() <= cap, "case {case}");
                assert!(
                    limits.iter().zip(&desires).all(|(l, d)| l <= d),
                    "case {case}: over the cap, limits are grants"
                );
            }
        }
    }
}
