//! Random loss in transit on a link: independent (Bernoulli) or bursty
//! (Gilbert-Elliott).
//!
//! The two-state model is E. N. Gilbert, "Capacity of a burst-noise channel",
//! Bell System Technical Journal 39(5), 1960, with the per-state loss
//! probabilities of E. O. Elliott, "Estimates of error rates for codes on
//! burst-noise channels", BSTJ 42(5), 1963. The channel is a two-state Markov
//! chain stepped once per packet: a packet is lost with the probability of the
//! state the channel is in when it arrives, and then the channel moves from
//! good to bad with probability `good_to_bad` or from bad to good with
//! `bad_to_good`. Gilbert's original model is `loss_good = 0`, `loss_bad = 1`.
//!
//! Stationary share of packets seen in the bad state: π_B = p / (p + r) with
//! p = `good_to_bad`, r = `bad_to_good`; mean loss = (1 − π_B) loss_good +
//! π_B loss_bad; a stay in the bad state lasts 1 / r packets on average. The
//! first packet finds the channel in the bad state with probability π_B, so a
//! run starts from the stationary distribution rather than from a state the
//! model would rarely be in.

use crate::rng::RngStream;
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "model", rename_all = "snake_case")]
pub enum LossModel {
    /// Each packet is lost independently with probability `p`.
    Bernoulli {
        p: f64,
    },
    GilbertElliott {
        good_to_bad: f64,
        bad_to_good: f64,
        loss_good: f64,
        loss_bad: f64,
    },
}

impl LossModel {
    pub const NONE: LossModel = LossModel::Bernoulli { p: 0.0 };

    /// True if the model can lose a packet at all (a link without loss draws nothing).
    pub fn is_lossy(&self) -> bool {
        match *self {
            LossModel::Bernoulli { p } => p > 0.0,
            LossModel::GilbertElliott { good_to_bad, loss_good, loss_bad, .. } => {
                loss_good > 0.0 || (good_to_bad > 0.0 && loss_bad > 0.0)
            }
        }
    }

    /// Share of packets found in the bad state in the long run (0 for Bernoulli).
    pub fn stationary_bad(&self) -> f64 {
        match *self {
            LossModel::Bernoulli { .. } => 0.0,
            LossModel::GilbertElliott { good_to_bad, bad_to_good, .. } => {
                good_to_bad / (good_to_bad + bad_to_good)
            }
        }
    }

    /// Long-run fraction of packets lost.
    pub fn mean_loss(&self) -> f64 {
        match *self {
            LossModel::Bernoulli { p } => p,
            LossModel::GilbertElliott { loss_good, loss_bad, .. } => {
                let bad = self.stationary_bad();
                (1.0 - bad) * loss_good + bad * loss_bad
            }
        }
    }
}

/// A link's loss model with its random stream and, for Gilbert-Elliott, the
/// channel's current state.
pub struct LossProcess {
    model: LossModel,
    rng: RngStream,
    bad: bool,
}

impl LossProcess {
    pub fn new(model: LossModel, mut rng: RngStream) -> Self {
        // Bernoulli draws nothing here, so its stream is exactly as before the
        // two-state model existed.
        let bad = match model {
            LossModel::Bernoulli { .. } => false,
            LossModel::GilbertElliott { .. } => rng.bernoulli(model.stationary_bad()),
        };
        Self { model, rng, bad }
    }

    /// Whether the next packet is lost.
    #[inline]
    pub fn next_lost(&mut self) -> bool {
        match self.model {
            LossModel::Bernoulli { p } => self.rng.bernoulli(p),
            LossModel::GilbertElliott { good_to_bad, bad_to_good, loss_good, loss_bad } => {
                let lost = self.rng.bernoulli(if self.bad { loss_bad } else { loss_good });
                let leave = if self.bad { bad_to_good } else { good_to_bad };
                if self.rng.bernoulli(leave) {
                    self.bad = !self.bad;
                }
                lost
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gilbert(p: f64, r: f64) -> LossModel {
        LossModel::GilbertElliott { good_to_bad: p, bad_to_good: r, loss_good: 0.0, loss_bad: 1.0 }
    }

    /// Lengths of the runs of consecutive losses in `n` packets, and the loss count.
    fn bursts(model: LossModel, n: usize) -> (Vec<usize>, usize) {
        let mut process = LossProcess::new(model, RngStream::new(7, "loss-test"));
        let (mut runs, mut current, mut lost) = (Vec::new(), 0, 0);
        for _ in 0..n {
            if process.next_lost() {
                lost += 1;
                current += 1;
            } else if current > 0 {
                runs.push(current);
                current = 0;
            }
        }
        (runs, lost)
    }

    #[test]
    fn stationary_share_and_mean_loss_follow_the_chain() {
        let m = LossModel::GilbertElliott {
            good_to_bad: 0.01,
            bad_to_good: 0.24,
            loss_good: 0.001,
            loss_bad: 0.5,
        };
        assert!((m.stationary_bad() - 0.04).abs() < 1e-12);
        assert!((m.mean_loss() - (0.96 * 0.001 + 0.04 * 0.5)).abs() < 1e-12);
        assert_eq!(LossModel::Bernoulli { p: 0.02 }.mean_loss(), 0.02);
    }

    #[test]
    fn gilbert_loses_the_stationary_share_in_bursts_of_one_over_r() {
        // p = 0.002, r = 0.25: pi_B = 0.002 / 0.252 = 0.7937 %, bursts of 4 packets
        // on average (geometric). Over 2 million packets about 3 970 bursts: the
        // burst mean's standard error is sqrt(12)/sqrt(3970) = 0.055, the loss
        // fraction's about 3 % of itself; the bounds allow more than 4 of each.
        let (runs, lost) = bursts(gilbert(0.002, 0.25), 2_000_000);
        let fraction = lost as f64 / 2e6;
        assert!((fraction / 0.007937 - 1.0).abs() < 0.12, "loss fraction {fraction}");
        let mean_burst = runs.iter().sum::<usize>() as f64 / runs.len() as f64;
        assert!((mean_burst - 4.0).abs() < 0.25, "mean burst {mean_burst}");
    }

    #[test]
    fn bernoulli_losses_do_not_cluster() {
        // Same mean loss as above without memory: a loss is followed by another
        // with probability p, so the mean run is 1 / (1 - p) = 1.008 packets.
        let (runs, lost) = bursts(LossModel::Bernoulli { p: 0.007937 }, 2_000_000);
        let mean_burst = runs.iter().sum::<usize>() as f64 / runs.len() as f64;
        assert!((lost as f64 / 2e6 / 0.007937 - 1.0).abs() < 0.05);
        assert!(mean_burst < 1.05, "mean burst {mean_burst}");
    }

    #[test]
    fn a_channel_that_never_turns_bad_loses_only_its_good_state_share() {
        let m =
            LossModel::GilbertElliott { good_to_bad: 0.0, bad_to_good: 0.5, loss_good: 0.0, loss_bad: 1.0 };
        assert!(!m.is_lossy());
        assert_eq!(bursts(m, 100_000).1, 0);
        assert!(!LossModel::NONE.is_lossy());
        assert!(gilbert(0.01, 0.5).is_lossy());
    }

    #[test]
    fn same_stream_same_losses() {
        let draw = |seed| {
            let mut p = LossProcess::new(gilbert(0.05, 0.3), RngStream::new(seed, "link:a->b:loss"));
            (0..1000).map(|_| p.next_lost()).collect::<Vec<_>>()
        };
        assert_eq!(draw(1), draw(1));
        assert_ne!(draw(1), draw(2));
    }
}
