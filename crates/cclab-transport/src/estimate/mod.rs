//! Available-bandwidth estimators fed with ACKs: one file per estimator, each
//! citing its source, chosen by name from [`ESTIMATORS`].
//!
//! A congestion control that sets its window from an estimate (Westwood,
//! Westwood+, later Jersey and Decoupled TCP with WABE) owns one
//! [`BandwidthEstimator`], hands it every [`AckSample`] in every phase (an
//! estimate must keep learning during loss recovery, when the window does not
//! grow), and reads [`BandwidthEstimator::estimate`] when it responds to
//! congestion. The estimator never touches the window.
//!
//! What an ACK delivered is counted once for all estimators by
//! [`DeliveredBytes`]; the sample, the filter and when to sample are each
//! estimator's own.

pub mod jersey;
pub mod wabe;
pub mod westwood;
pub mod westwood_plus;

use crate::cc::AckSample;
use cclab_wire::{Metrics, ParamError, Params};

/// An available-bandwidth estimator fed with ACKs.
pub trait BandwidthEstimator {
    fn name(&self) -> &'static str;

    /// Every ACK the sender receives, duplicates included, in arrival order.
    fn on_ack(&mut self, ack: &AckSample);

    /// The current estimate in bytes per second; 0 before the first sample.
    fn estimate(&self) -> f64;

    /// Publishes the estimator's own state beyond the estimate (a raw
    /// sample, a window), under names the owning descriptor lists.
    fn metrics(&self, _out: &mut Metrics<'_>) {}
}

/// How to build an estimator from the parameters of the congestion control
/// that owns it; each estimator reads its own keys and exports their
/// [`cclab_wire::Parameter`]s for that congestion control's descriptor.
#[derive(Clone, Copy, Debug)]
pub struct EstimatorEntry {
    pub name: &'static str,
    pub source: &'static str,
    pub build: fn(&Params) -> Result<Box<dyn BandwidthEstimator>, ParamError>,
}

/// Every estimator, by name.
pub const ESTIMATORS: &[EstimatorEntry] =
    &[westwood::ENTRY, westwood_plus::ENTRY, wabe::ENTRY, jersey::ENTRY];

pub fn by_name(name: &str) -> Option<&'static EstimatorEntry> {
    ESTIMATORS.iter().find(|e| e.name == name)
}

/// The bytes each ACK newly reports delivered, counting a duplicate ACK
/// without SACK information as one MSS (a segment left the network), as
/// Linux `tcp_westwood.c` (`westwood_acked_count`) does, and SACKed
/// segments when they are SACKed. Both are a credit: the cumulative ACK that
/// later covers those segments counts only what the credit did not, so
/// every byte is counted once however it was reported.
///
/// Linux subtracts the credit only from a cumulative ACK of more than one
/// MSS and then still counts one MSS; here any cumulative ACK pays the credit
/// back in full, so the long-run count is exact.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DeliveredBytes {
    credit: u64,
}

impl DeliveredBytes {
    /// Bytes this ACK newly reports delivered.
    pub fn on_ack(&mut self, ack: &AckSample) -> u64 {
        let mss = u64::from(ack.mss);
        let sacked = ack.sacked * mss;
        if ack.duplicate {
            let reported = if sacked > 0 { sacked } else { mss };
            self.credit += reported;
            return reported;
        }
        let cumulative = ack.acked * mss;
        let paid_back = self.credit.min(cumulative);
        self.credit -= paid_back;
        self.credit += sacked;
        cumulative - paid_back + sacked
    }

    /// Bytes counted ahead of the cumulative ACK.
    pub fn credit(&self) -> u64 {
        self.credit
    }
}

#[cfg(test)]
pub(crate) mod test_streams {
    //! Synthetic ACK streams of known rate for the estimator tests.

    use crate::cc::AckSample;
    use cclab_wire::Time;

    pub const MSS: u32 = 1000;

    /// A cumulative ACK of one segment at `now`, with an RTT sample.
    pub fn ack_at(now: Time, rtt: Time) -> AckSample {
        let mut a = AckSample::new(now, MSS);
        a.acked = 1;
        a.rtt = Some(rtt);
        a.srtt = rtt;
        a.min_rtt = rtt;
        a
    }

    /// One ACK per segment every `gap`, from `start` for `count` ACKs;
    /// returns the time of the last.
    pub fn steady(start: Time, gap: Time, count: u64, rtt: Time, mut feed: impl FnMut(&AckSample)) -> Time {
        let mut now = start;
        for _ in 0..count {
            now += gap;
            feed(&ack_at(now, rtt));
        }
        now
    }

    /// Per round trip of `rtt`, `burst` ACKs `spacing` apart, then silence
    /// until the next round trip; `rounds` of them. Returns the end time.
    pub fn clustered(
        rounds: u64,
        burst: u64,
        spacing: Time,
        rtt: Time,
        mut feed: impl FnMut(&AckSample),
    ) -> Time {
        for r in 0..rounds {
            for i in 0..burst {
                feed(&ack_at(r * rtt + i * spacing, rtt));
            }
        }
        rounds * rtt
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(acked: u64, sacked: u64, duplicate: bool) -> AckSample {
        let mut a = AckSample::new(0, 1000);
        a.acked = acked;
        a.sacked = sacked;
        a.duplicate = duplicate;
        a
    }

    #[test]
    fn a_cumulative_ack_counts_its_segments() {
        let mut d = DeliveredBytes::default();
        assert_eq!(d.on_ack(&ack(2, 0, false)), 2000);
        assert_eq!(d.credit(), 0);
    }

    /// Linux `westwood_acked_count`: a duplicate ACK counts one MSS, and the
    /// cumulative ACK that ends the episode counts only the rest.
    #[test]
    fn duplicate_acks_count_one_mss_each_and_the_next_cumulative_ack_pays_it_back() {
        let mut d = DeliveredBytes::default();
        let dups: u64 = (0..3).map(|_| d.on_ack(&ack(0, 0, true))).sum();
        assert_eq!((dups, d.credit()), (3000, 3000));
        // The retransmission fills the hole: 4 segments acknowledged, 3 already counted.
        assert_eq!(d.on_ack(&ack(4, 0, false)), 1000);
        assert_eq!(d.credit(), 0);
        // A credit larger than the ACK carries over.
        for _ in 0..3 {
            d.on_ack(&ack(0, 0, true));
        }
        assert_eq!(d.on_ack(&ack(2, 0, false)), 0);
        assert_eq!(d.credit(), 1000);
    }

    #[test]
    fn sacked_segments_count_when_sacked_and_not_again_when_acknowledged() {
        let mut d = DeliveredBytes::default();
        assert_eq!(d.on_ack(&ack(0, 2, true)), 2000);
        // The cumulative ACK pays the credit back first (it cannot tell which
        // of its segments were SACKed), the new SACK adds to it.
        assert_eq!(d.on_ack(&ack(1, 1, false)), 1000);
        assert_eq!(d.credit(), 2000);
        assert_eq!(d.on_ack(&ack(4, 0, false)), 2000);
        // Five segments acknowledged in all, each counted once.
        assert_eq!(d.credit(), 0);
    }

    #[test]
    fn estimators_are_found_by_name() {
        for e in ESTIMATORS {
            assert_eq!(by_name(e.name).map(|f| f.name), Some(e.name));
            assert!(!e.source.is_empty());
        }
        assert!(by_name("nonesuch").is_none());
    }
}
