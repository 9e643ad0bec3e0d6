//! What an endpoint counts: a small common set every protocol has, plus named
//! protocol-specific extras (TCP's retransmissions and RTT samples, a UDP
//! sink's losses). The driver snapshots counters at the start and the end of
//! the measurement window and reports the difference; counters of connections
//! that share a report row (all transfers of one traffic source) are merged.

use crate::time::Time;

/// How an extra counter combines and what a report shows of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    /// Events counted since the start; a report shows the window's difference.
    Count(u64),
    /// Sum and number of time samples; a report shows the window's mean in seconds.
    MeanSeconds { sum: Time, samples: u64 },
    /// The smallest time sample of the whole run (not windowed), in seconds.
    MinSeconds(Option<Time>),
}

impl Measure {
    fn merge(&mut self, other: Measure) {
        *self = match (*self, other) {
            (Measure::Count(a), Measure::Count(b)) => Measure::Count(a + b),
            (Measure::MeanSeconds { sum: a, samples: n }, Measure::MeanSeconds { sum: b, samples: m }) => {
                Measure::MeanSeconds { sum: a + b, samples: n + m }
            }
            (Measure::MinSeconds(a), Measure::MinSeconds(b)) => Measure::MinSeconds(match (a, b) {
                (Some(x), Some(y)) => Some(x.min(y)),
                (x, y) => x.or(y),
            }),
            // Two protocols gave one name two meanings: keep the first.
            (mine, _) => mine,
        }
    }

    /// This value minus its value at `start`.
    fn since(&self, start: Option<Measure>) -> Measure {
        match (*self, start) {
            (Measure::Count(a), Some(Measure::Count(b))) => Measure::Count(a.saturating_sub(b)),
            (Measure::MeanSeconds { sum, samples }, Some(Measure::MeanSeconds { sum: s0, samples: n0 })) => {
                Measure::MeanSeconds { sum: sum.saturating_sub(s0), samples: samples.saturating_sub(n0) }
            }
            (now, _) => now,
        }
    }
}

/// Most extras a protocol reports; a fixed array keeps counters a plain value.
pub const MAX_EXTRAS: usize = 8;

/// Named protocol-specific counters, in the order the protocol declared them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extras {
    len: u8,
    items: [(&'static str, Measure); MAX_EXTRAS],
}

impl Default for Extras {
    fn default() -> Self {
        Self { len: 0, items: [("", Measure::Count(0)); MAX_EXTRAS] }
    }
}

/// Whether two extras' names are the same. Names are `&'static str`
/// constants, nearly always the same pointer wherever they are used, so the
/// pointers are compared before the text.
#[inline]
fn same_name(a: &str, b: &str) -> bool {
    std::ptr::eq(a, b) || a == b
}

impl Extras {
    /// Where `name` is, looked for first at `hint`: two endpoints of one
    /// protocol list their names in one order, so merging and subtracting
    /// counters (for every connection, at 20 000 flows) finds each at once.
    #[inline]
    fn index_of(&self, name: &str, hint: usize) -> Option<usize> {
        let items = &self.items[..self.len as usize];
        if items.get(hint).is_some_and(|(n, _)| same_name(n, name)) {
            return Some(hint);
        }
        items.iter().position(|(n, _)| same_name(n, name))
    }

    /// Sets `name` (adding it if new). Names beyond [`MAX_EXTRAS`] are a
    /// protocol bug, caught by its tests.
    pub fn set(&mut self, name: &'static str, value: Measure) {
        if let Some(i) = self.index_of(name, self.len as usize) {
            self.items[i].1 = value;
        } else {
            debug_assert!((self.len as usize) < MAX_EXTRAS, "more than {MAX_EXTRAS} extra counters");
            if (self.len as usize) < MAX_EXTRAS {
                self.items[self.len as usize] = (name, value);
                self.len += 1;
            }
        }
    }

    pub fn get(&self, name: &str) -> Option<Measure> {
        self.index_of(name, 0).map(|i| self.items[i].1)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&'static str, Measure)> + '_ {
        self.items[..self.len as usize].iter().copied()
    }

    /// The count named `name`, or 0.
    pub fn count(&self, name: &str) -> u64 {
        match self.get(name) {
            Some(Measure::Count(n)) => n,
            _ => 0,
        }
    }
}

/// The counts every endpoint keeps: [`Counters`] without the extras, for an
/// endpoint that has none to report. 32 bytes where `Counters` is 360: a TCP
/// receiver kept a whole `Counters`, a tenth of the memory of a flow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BaseCounts {
    pub bytes_delivered: u64,
    pub packets_sent: u64,
    pub bytes_sent: u64,
    pub packets_received: u64,
}

impl BaseCounts {
    pub fn counters(&self) -> Counters {
        Counters {
            bytes_delivered: self.bytes_delivered,
            packets_sent: self.packets_sent,
            bytes_sent: self.bytes_sent,
            packets_received: self.packets_received,
            extra: Extras::default(),
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// In-order payload bytes handed to the receiving application.
    pub bytes_delivered: u64,
    /// Packets and bytes (headers included) this endpoint put on the wire.
    pub packets_sent: u64,
    pub bytes_sent: u64,
    pub packets_received: u64,
    pub extra: Extras,
}

impl Counters {
    /// These counters with each named count set as an extra, in order.
    pub fn with_counts(mut self, counts: &[(&'static str, u64)]) -> Self {
        for &(name, value) in counts {
            self.extra.set(name, Measure::Count(value));
        }
        self
    }

    /// Adds another endpoint's counters (of the same protocol) to these.
    pub fn merge(&mut self, other: &Counters) {
        self.bytes_delivered += other.bytes_delivered;
        self.packets_sent += other.packets_sent;
        self.bytes_sent += other.bytes_sent;
        self.packets_received += other.packets_received;
        for (i, (name, value)) in other.extra.iter().enumerate() {
            match self.extra.index_of(name, i) {
                Some(mine) => self.extra.items[mine].1.merge(value),
                None => self.extra.set(name, value),
            }
        }
    }

    /// Nothing counted yet: `since` these counters is the identity.
    pub fn is_zero(&self) -> bool {
        let nothing = |m: Measure| match m {
            Measure::Count(n) => n == 0,
            Measure::MeanSeconds { sum, samples } => sum == 0 && samples == 0,
            Measure::MinSeconds(min) => min.is_none(),
        };
        self.bytes_delivered == 0
            && self.packets_sent == 0
            && self.bytes_sent == 0
            && self.packets_received == 0
            && self.extra.iter().all(|(_, m)| nothing(m))
    }

    /// What happened between `start` and these counters.
    pub fn since(&self, start: &Counters) -> Counters {
        // The names stay in this order, each once, as `set` would keep them.
        let mut extra = self.extra;
        for (i, (name, value)) in self.extra.iter().enumerate() {
            let at_start = start.extra.index_of(name, i).map(|j| start.extra.items[j].1);
            extra.items[i].1 = value.since(at_start);
        }
        Counters {
            bytes_delivered: self.bytes_delivered.saturating_sub(start.bytes_delivered),
            packets_sent: self.packets_sent.saturating_sub(start.packets_sent),
            bytes_sent: self.bytes_sent.saturating_sub(start.bytes_sent),
            packets_received: self.packets_received.saturating_sub(start.packets_received),
            extra,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tcp_like(delivered: u64, retx: u64, rtt_sum: Time, n: u64, min: Option<Time>) -> Counters {
        let mut c = Counters { bytes_delivered: delivered, ..Counters::default() };
        c.extra.set("retransmits", Measure::Count(retx));
        c.extra.set("rtt_mean_s", Measure::MeanSeconds { sum: rtt_sum, samples: n });
        c.extra.set("rtt_min_s", Measure::MinSeconds(min));
        c
    }

    #[test]
    fn names_match_by_text_whatever_their_order_or_address() {
        // The same names at other addresses (as another crate's constants may be), in another order.
        let leak = |s: &str| -> &'static str { Box::leak(s.to_string().into_boxed_str()) };
        let mut other = Counters { bytes_delivered: 10, ..Counters::default() };
        other.extra.set(leak("rtt_min_s"), Measure::MinSeconds(Some(70)));
        other.extra.set(leak("retransmits"), Measure::Count(4));
        other.extra.set(leak("rtt_mean_s"), Measure::MeanSeconds { sum: 100, samples: 2 });
        let mut total = tcp_like(1000, 2, 300, 3, Some(90));
        total.merge(&other);
        assert_eq!(total, tcp_like(1010, 6, 400, 5, Some(70)));
        assert_eq!(total.extra.get(leak("retransmits")), Some(Measure::Count(6)));
        let reordered_start = Counters { bytes_delivered: 10, ..other };
        let diff = total.since(&reordered_start);
        assert_eq!(diff, tcp_like(1000, 2, 300, 3, Some(70)));
        assert_eq!(
            diff.extra.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            ["retransmits", "rtt_mean_s", "rtt_min_s"]
        );
    }

    #[test]
    fn zero_counters_are_an_identity_start_and_any_count_is_not_zero() {
        let zero = tcp_like(0, 0, 0, 0, None);
        assert!(zero.is_zero() && Counters::default().is_zero());
        let later = tcp_like(5000, 2, 300, 3, Some(90));
        assert_eq!(later.since(&zero), later.since(&Counters::default()));
        assert!(!later.is_zero());
        assert!(!tcp_like(0, 1, 0, 0, None).is_zero());
        assert!(!tcp_like(0, 0, 0, 0, Some(1)).is_zero());
        assert!(!Counters { packets_received: 1, ..zero }.is_zero());
    }

    #[test]
    fn window_difference_subtracts_counts_and_sums_but_keeps_the_minimum() {
        let start = tcp_like(1000, 2, 300, 3, Some(90));
        let end = tcp_like(5000, 7, 1000, 10, Some(80));
        let d = end.since(&start);
        assert_eq!(d.bytes_delivered, 4000);
        assert_eq!(d.extra.count("retransmits"), 5);
        assert_eq!(d.extra.get("rtt_mean_s"), Some(Measure::MeanSeconds { sum: 700, samples: 7 }));
        assert_eq!(d.extra.get("rtt_min_s"), Some(Measure::MinSeconds(Some(80))));
    }

    #[test]
    fn merging_adds_counts_pools_means_and_takes_the_smaller_minimum() {
        let mut a = tcp_like(10, 1, 100, 1, None);
        a.merge(&tcp_like(20, 2, 50, 2, Some(7)));
        assert_eq!(a.bytes_delivered, 30);
        assert_eq!(a.extra.count("retransmits"), 3);
        assert_eq!(a.extra.get("rtt_mean_s"), Some(Measure::MeanSeconds { sum: 150, samples: 3 }));
        assert_eq!(a.extra.get("rtt_min_s"), Some(Measure::MinSeconds(Some(7))));
        // A name only the other side has is added.
        let mut b = Counters::default();
        b.merge(&a);
        assert_eq!(b.extra.count("retransmits"), 3);
    }

    #[test]
    fn extras_keep_declaration_order_and_overwrite_by_name() {
        let mut e = Extras::default();
        e.set("b", Measure::Count(1));
        e.set("a", Measure::Count(2));
        e.set("b", Measure::Count(3));
        let names: Vec<_> = e.iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["b", "a"]);
        assert_eq!(e.count("b"), 3);
        assert_eq!(e.count("missing"), 0);
    }
}
