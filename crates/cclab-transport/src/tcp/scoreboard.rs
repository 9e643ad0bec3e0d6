//! The sender's per-segment record of what is outstanding: when each segment
//! was last sent, whether it was retransmitted, and whether the receiver has
//! SACKed it (RFC 6675 §3 "scoreboard"). Indexed by segment number, covering
//! `[snd_una, snd_max)`; a ring buffer, so steady-state operation does not allocate.

use cclab_wire::Time;
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentRecord {
    pub sent_at: Time,
    pub retransmitted: bool,
    pub sacked: bool,
}

/// What a cumulative ACK removed from the scoreboard.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Acked {
    pub segments: u64,
    /// Any of them was ever retransmitted (Karn: no RTT sample from this ACK).
    pub any_retransmitted: bool,
    /// Send time of the highest segment acknowledged.
    pub last_sent_at: Time,
    /// How many of them had been SACKed already.
    pub previously_sacked: u64,
}

#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    base: u64,
    records: VecDeque<SegmentRecord>,
    sacked: u64,
}

impl Scoreboard {
    pub fn base(&self) -> u64 {
        self.base
    }

    /// One past the highest segment sent.
    pub fn end(&self) -> u64 {
        self.base + self.records.len() as u64
    }

    pub fn get(&self, seg: u64) -> Option<&SegmentRecord> {
        seg.checked_sub(self.base).and_then(|i| self.records.get(i as usize))
    }

    pub fn is_sacked(&self, seg: u64) -> bool {
        self.get(seg).is_some_and(|r| r.sacked)
    }

    pub fn sacked_count(&self) -> u64 {
        self.sacked
    }

    /// Records a transmission of `seg`, which must be at most `end()`.
    pub fn on_transmit(&mut self, seg: u64, now: Time, retransmission: bool) {
        let end = self.end();
        if seg == end {
            self.records.push_back(SegmentRecord {
                sent_at: now,
                retransmitted: retransmission,
                sacked: false,
            });
        } else if let Some(r) = seg.checked_sub(self.base).and_then(|i| self.records.get_mut(i as usize)) {
            r.sent_at = now;
            r.retransmitted |= retransmission;
        }
    }

    /// Removes every segment below `seg` (a cumulative ACK).
    pub fn ack_to(&mut self, seg: u64) -> Acked {
        let mut acked = Acked::default();
        while self.base < seg {
            let Some(r) = self.records.pop_front() else {
                self.base = seg;
                break;
            };
            self.base += 1;
            acked.segments += 1;
            acked.any_retransmitted |= r.retransmitted;
            acked.last_sent_at = r.sent_at;
            if r.sacked {
                self.sacked -= 1;
                acked.previously_sacked += 1;
            }
        }
        acked
    }

    /// Marks `[start, end)` SACKed (clipped to what is outstanding); returns how
    /// many segments were newly marked.
    pub fn mark_sacked(&mut self, start: u64, end: u64) -> u64 {
        let lo = start.max(self.base);
        let hi = end.min(self.end());
        let mut newly = 0;
        for seg in lo..hi {
            let r = &mut self.records[(seg - self.base) as usize];
            if !r.sacked {
                r.sacked = true;
                newly += 1;
            }
        }
        self.sacked += newly;
        newly
    }

    /// Forgets all SACK information (RFC 2018 §5: after a retransmission timeout
    /// the sender should turn off the SACKed bits; the receiver may have reneged).
    pub fn clear_sacks(&mut self) {
        for r in self.records.iter_mut() {
            r.sacked = false;
        }
        self.sacked = 0;
    }

    /// The `k`-th highest SACKed segment (k = 1 is the highest).
    pub fn kth_highest_sacked(&self, k: u64) -> Option<u64> {
        if k == 0 || self.sacked < k {
            return None;
        }
        let mut seen = 0;
        for (i, r) in self.records.iter().enumerate().rev() {
            if r.sacked {
                seen += 1;
                if seen == k {
                    return Some(self.base + i as u64);
                }
            }
        }
        None
    }

    /// Number of SACKed segments in `[start, end)`.
    pub fn sacked_in(&self, start: u64, end: u64) -> u64 {
        let lo = start.max(self.base);
        let hi = end.min(self.end());
        (lo..hi).filter(|&s| self.records[(s - self.base) as usize].sacked).count() as u64
    }

    /// The first segment in `[start, end)` that is not SACKed.
    pub fn first_unsacked_in(&self, start: u64, end: u64) -> Option<u64> {
        let lo = start.max(self.base);
        let hi = end.min(self.end());
        (lo..hi).find(|&s| !self.records[(s - self.base) as usize].sacked)
    }

    /// The last segment in `[start, end)` that is not SACKed.
    pub fn last_unsacked_in(&self, start: u64, end: u64) -> Option<u64> {
        let lo = start.max(self.base);
        let hi = end.min(self.end());
        (lo..hi).rev().find(|&s| !self.records[(s - self.base) as usize].sacked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(n: u64) -> Scoreboard {
        let mut b = Scoreboard::default();
        for s in 0..n {
            b.on_transmit(s, s * 10, false);
        }
        b
    }

    #[test]
    fn sack_marks_only_outstanding_segments_once() {
        let mut b = board(10);
        assert_eq!(b.mark_sacked(3, 6), 3);
        assert_eq!(b.mark_sacked(4, 12), 4);
        assert_eq!(b.sacked_count(), 7);
        assert!(b.is_sacked(9) && !b.is_sacked(2));
    }

    #[test]
    fn cumulative_ack_removes_records_and_reports_them() {
        let mut b = board(10);
        b.mark_sacked(2, 3);
        b.on_transmit(1, 500, true);
        let a = b.ack_to(4);
        assert_eq!(a.segments, 4);
        assert!(a.any_retransmitted);
        assert_eq!(a.last_sent_at, 30);
        assert_eq!(a.previously_sacked, 1);
        assert_eq!(b.sacked_count(), 0);
        assert_eq!(b.base(), 4);
    }

    #[test]
    fn kth_highest_sacked_counts_from_the_top() {
        let mut b = board(10);
        b.mark_sacked(2, 3);
        b.mark_sacked(5, 7);
        assert_eq!(b.kth_highest_sacked(1), Some(6));
        assert_eq!(b.kth_highest_sacked(3), Some(2));
        assert_eq!(b.kth_highest_sacked(4), None);
    }

    #[test]
    fn clear_sacks_forgets_everything() {
        let mut b = board(5);
        b.mark_sacked(1, 4);
        b.clear_sacks();
        assert_eq!(b.sacked_count(), 0);
        assert_eq!(b.kth_highest_sacked(1), None);
    }

    #[test]
    fn unsacked_search_in_both_directions() {
        let mut b = board(8);
        b.mark_sacked(0, 2);
        b.mark_sacked(6, 8);
        assert_eq!(b.first_unsacked_in(0, 8), Some(2));
        assert_eq!(b.last_unsacked_in(0, 8), Some(5));
        assert_eq!(b.sacked_in(0, 8), 4);
    }
}
