//! A set of lost sequence numbers kept as disjoint inclusive ranges: UDT's
//! sender and receiver loss lists (UDT 4.11 `src/list.cpp`, `CSndLossList`,
//! `CRcvLossList`), which hold the same thing and differ only in who asks.

use std::collections::BTreeMap;

#[derive(Clone, Debug, Default)]
pub struct LossList {
    /// First number of each range -> its last number.
    ranges: BTreeMap<u64, u64>,
    len: u64,
}

impl LossList {
    pub fn new() -> Self {
        Self::default()
    }

    /// Numbers in the list.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn first(&self) -> Option<u64> {
        self.ranges.keys().next().copied()
    }

    pub fn contains(&self, seq: u64) -> bool {
        self.ranges.range(..=seq).next_back().is_some_and(|(_, &last)| last >= seq)
    }

    /// Adds `first..=last`, merging with neighbours; returns how many numbers
    /// were not in the list before (what UDT counts as newly lost).
    pub fn insert(&mut self, first: u64, last: u64) -> u64 {
        if last < first {
            return 0;
        }
        let (mut lo, mut hi) = (first, last);
        let mut covered = 0;
        let touching: Vec<(u64, u64)> = self
            .ranges
            .range(..=last.saturating_add(1))
            .rev()
            .take_while(|(_, &end)| end.saturating_add(1) >= first)
            .map(|(&a, &b)| (a, b))
            .collect();
        for (a, b) in touching {
            self.ranges.remove(&a);
            self.len -= b - a + 1;
            covered += b.min(last).saturating_sub(a.max(first)) + u64::from(a.max(first) <= b.min(last));
            lo = lo.min(a);
            hi = hi.max(b);
        }
        self.ranges.insert(lo, hi);
        self.len += hi - lo + 1;
        (last - first + 1) - covered
    }

    /// Removes one number (a retransmission arrived); true if it was there.
    pub fn remove(&mut self, seq: u64) -> bool {
        let Some((&a, &b)) = self.ranges.range(..=seq).next_back() else { return false };
        if b < seq {
            return false;
        }
        self.ranges.remove(&a);
        if a < seq {
            self.ranges.insert(a, seq - 1);
        }
        if seq < b {
            self.ranges.insert(seq + 1, b);
        }
        self.len -= 1;
        true
    }

    /// Removes every number below `seq` (they were acknowledged).
    pub fn remove_below(&mut self, seq: u64) {
        while let Some((&a, &b)) = self.ranges.iter().next() {
            if a >= seq {
                break;
            }
            self.ranges.remove(&a);
            self.len -= b - a + 1;
            if b >= seq {
                self.ranges.insert(seq, b);
                self.len += b - seq + 1;
                break;
            }
        }
    }

    /// Takes the smallest number out (the sender's next retransmission,
    /// `CSndLossList::getLostSeq`).
    pub fn pop_first(&mut self) -> Option<u64> {
        let first = self.first()?;
        self.remove(first);
        Some(first)
    }

    pub fn ranges(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.ranges.iter().map(|(&a, &b)| (a, b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(l: &LossList) -> Vec<(u64, u64)> {
        l.ranges().collect()
    }

    #[test]
    fn insert_merges_overlapping_and_adjacent_ranges_and_counts_new_numbers() {
        let mut l = LossList::new();
        assert_eq!(l.insert(10, 12), 3);
        assert_eq!(l.insert(20, 20), 1);
        assert_eq!(l.insert(13, 14), 2, "adjacent: merged");
        assert_eq!(list(&l), [(10, 14), (20, 20)]);
        assert_eq!(l.insert(12, 21), 6, "15..=19 and 21 are new");
        assert_eq!(list(&l), [(10, 21)]);
        assert_eq!(l.len(), 12);
        assert_eq!(l.insert(11, 11), 0);
    }

    #[test]
    fn remove_splits_a_range_and_pop_takes_the_smallest() {
        let mut l = LossList::new();
        l.insert(5, 9);
        assert!(l.remove(7));
        assert!(!l.remove(7));
        assert_eq!(list(&l), [(5, 6), (8, 9)]);
        assert_eq!(l.pop_first(), Some(5));
        assert_eq!(l.pop_first(), Some(6));
        assert_eq!(l.len(), 2);
        assert!(l.contains(9) && !l.contains(10));
    }

    #[test]
    fn remove_below_cuts_into_a_range() {
        let mut l = LossList::new();
        l.insert(1, 3);
        l.insert(6, 10);
        l.remove_below(8);
        assert_eq!(list(&l), [(8, 10)]);
        assert_eq!(l.len(), 3);
        l.remove_below(100);
        assert!(l.is_empty());
    }

    #[test]
    fn random_operations_agree_with_a_plain_set() {
        let mut l = LossList::new();
        let mut set = std::collections::BTreeSet::new();
        let mut x: u64 = 12345;
        let mut next = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        for _ in 0..5000 {
            match next(4) {
                0 | 1 => {
                    let a = next(200);
                    let b = a + next(6);
                    let before = set.len() as u64;
                    set.extend(a..=b);
                    assert_eq!(l.insert(a, b), set.len() as u64 - before);
                }
                2 => {
                    let s = next(200);
                    assert_eq!(l.remove(s), set.remove(&s));
                }
                _ => {
                    let s = next(200);
                    l.remove_below(s);
                    set.retain(|&v| v >= s);
                }
            }
            assert_eq!(l.len(), set.len() as u64);
            assert_eq!(l.first(), set.first().copied());
        }
    }
}
