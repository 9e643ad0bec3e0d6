//! The engine's event queue: a binary min-heap of `(time, seq)` keys.
//!
//! `std::collections::BinaryHeap` did the same job, but nearly every event is
//! a link arrival that replaces the top entry with the link's next head, and
//! replacing through `PeekMut` wrote the new entry field by field and read it
//! back whole for the sift (a stalled store-to-load forward on every event,
//! a third of the event loop's samples at 2.5 Gbit/s). Here the sift carries
//! the entry in registers and writes it once, at its final place. Keys are
//! unique (`seq` is), so any correct heap pops the same sequence of events.

use cclab_wire::Time;

/// The order of events of the same time: the one made earlier first, then by
/// `id`, which names the event's maker and its count (see the engine's
/// `Maker`). Neither depends on the order in which the engine does work that
/// happens at one simulated time, and `id` makes keys unique.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Seq {
    pub made_at: Time,
    pub id: u64,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Event<T> {
    pub time: Time,
    pub seq: Seq,
    pub target: T,
}

impl<T> Event<T> {
    /// Whether this event goes before `other`. Events of one time are rare,
    /// so the time alone decides almost every comparison, on a branch the
    /// processor predicts.
    #[inline(always)]
    fn before(&self, other: &Self) -> bool {
        if self.time != other.time {
            self.time < other.time
        } else {
            self.seq < other.seq
        }
    }
}

pub(crate) struct EventQueue<T> {
    heap: Vec<Event<T>>,
}

impl<T: Copy> EventQueue<T> {
    pub fn new() -> Self {
        Self { heap: Vec::new() }
    }

    #[inline]
    pub fn peek(&self) -> Option<&Event<T>> {
        self.heap.first()
    }

    pub fn push(&mut self, event: Event<T>) {
        let mut pos = self.heap.len();
        self.heap.push(event);
        while pos > 0 {
            let parent = (pos - 1) / 2;
            if !event.before(&self.heap[parent]) {
                break;
            }
            self.heap[pos] = self.heap[parent];
            pos = parent;
        }
        self.heap[pos] = event;
    }

    /// Removes the earliest event.
    #[inline]
    pub fn pop(&mut self) {
        let Some(last) = self.heap.pop() else { return };
        if !self.heap.is_empty() {
            self.sift_down_from_top(last);
        }
    }

    /// Replaces the earliest event by `event` (which may be later than others).
    #[inline]
    pub fn replace_top(&mut self, event: Event<T>) {
        if self.heap.is_empty() {
            self.heap.push(event);
        } else {
            self.sift_down_from_top(event);
        }
    }

    /// Puts `event` at the root's place and moves it down to where it belongs.
    #[inline(always)]
    fn sift_down_from_top(&mut self, event: Event<T>) {
        let n = self.heap.len();
        let mut pos = 0;
        loop {
            let mut child = 2 * pos + 1;
            if child >= n {
                break;
            }
            if child + 1 < n && self.heap[child + 1].before(&self.heap[child]) {
                child += 1;
            }
            if !self.heap[child].before(&event) {
                break;
            }
            self.heap[pos] = self.heap[child];
            pos = child;
        }
        self.heap[pos] = event;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_wire::random::SplitMix64;

    /// Pops the same sequence as std's BinaryHeap under random pushes, pops
    /// and top replacements, with many events of one time (ordered by when
    /// they were made, then by id).
    #[test]
    fn pops_in_key_order_like_the_std_heap() {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        let mut rng = SplitMix64::new(7);
        let mut q = EventQueue::new();
        let mut reference = BinaryHeap::new();
        for id in 0..200_000u64 {
            let r = rng.next_u64();
            let now = reference.peek().map_or(0, |Reverse((t, _, _))| *t);
            let time = now + r % 50;
            // Made at a time before `time`, often the same as other events'.
            let seq = Seq { made_at: time.saturating_sub((r >> 20) % 4), id: id ^ (r >> 40) << 20 };
            let event = Event { time, seq, target: id };
            match r % 7 {
                0..=2 => {
                    q.push(event);
                    reference.push(Reverse((time, seq, id)));
                }
                3 | 4 => {
                    q.pop();
                    reference.pop();
                }
                _ => {
                    if reference.pop().is_some() {
                        reference.push(Reverse((time, seq, id)));
                        q.replace_top(event);
                    }
                }
            }
            let top = q.peek().map(|e| (e.time, e.seq, e.target));
            assert_eq!(top, reference.peek().map(|r| r.0));
        }
        while let Some(Reverse(want)) = reference.pop() {
            let got = q.peek().map(|e| (e.time, e.seq, e.target));
            assert_eq!(got, Some(want));
            q.pop();
        }
        assert!(q.peek().is_none());
    }

    #[test]
    fn of_events_at_one_time_the_one_made_first_goes_first_then_the_smaller_id() {
        let mut q = EventQueue::new();
        for (made_at, id) in [(5, 1), (3, 9), (5, 0), (3, 2)] {
            q.push(Event { time: 10, seq: Seq { made_at, id }, target: (made_at, id) });
        }
        q.push(Event { time: 9, seq: Seq { made_at: 9, id: 99 }, target: (9, 99) });
        let mut order = Vec::new();
        while let Some(e) = q.peek() {
            order.push(e.target);
            q.pop();
        }
        assert_eq!(order, [(9, 99), (3, 2), (3, 9), (5, 0), (5, 1)]);
    }
}
