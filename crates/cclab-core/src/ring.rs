//! A FIFO ring buffer that prefetches the slots it is about to write and read.
//!
//! A link's delay line and waiting set are FIFOs that grow to the link's
//! largest occupancy (tens of thousands of packets at 2.5 Gbit/s) and are then
//! walked round and round: the slot a push writes and the one a pop reads were
//! last touched a whole lap ago and are out of the cache. `VecDeque` cannot
//! name a slot beyond its length, so it cannot ask for the next one early.

use cclab_wire::prefetch::prefetch;

/// How many slots ahead of the tail and head are prefetched.
const AHEAD: usize = 4;

/// The first allocation's slots. Small: with thousands of flows most links
/// are access links holding a few packets at a time, and 16 slots of a delay
/// line (640 bytes) on each of them were a tenth of the memory per flow.
const MIN_CAPACITY: usize = 4;

#[derive(Clone, Debug)]
pub(crate) struct Ring<T: Copy> {
    /// Every slot holds a value (freed ones hold stale copies); the length is
    /// zero or a power of two.
    slots: Vec<T>,
    head: usize,
    len: usize,
}

impl<T: Copy> Ring<T> {
    pub fn new() -> Self {
        Self { slots: Vec::new(), head: 0, len: 0 }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    fn mask(&self) -> usize {
        self.slots.len().wrapping_sub(1)
    }

    #[inline]
    pub fn push_back(&mut self, value: T) {
        if self.len == self.slots.len() {
            self.grow(value);
        }
        let mask = self.mask();
        self.slots[(self.head + self.len) & mask] = value;
        self.len += 1;
        prefetch(&self.slots[(self.head + self.len + AHEAD) & mask]);
    }

    #[inline]
    pub fn front(&self) -> Option<&T> {
        (self.len > 0).then(|| &self.slots[self.head])
    }

    #[inline]
    pub fn pop_front(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let value = self.slots[self.head];
        self.head = (self.head + 1) & self.mask();
        self.len -= 1;
        if self.len > AHEAD {
            prefetch(&self.slots[(self.head + AHEAD) & self.mask()]);
        }
        Some(value)
    }

    /// Doubles the capacity (or creates it), keeping the order; `fill` pads the new slots.
    #[cold]
    fn grow(&mut self, fill: T) {
        let capacity = (self.slots.len() * 2).max(MIN_CAPACITY);
        let mut slots = Vec::with_capacity(capacity);
        let mask = self.mask();
        slots.extend((0..self.len).map(|i| self.slots[(self.head + i) & mask]));
        slots.resize(capacity, fill);
        self.slots = slots;
        self.head = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    #[test]
    fn behaves_as_a_fifo_through_growth_and_wrap_around() {
        let mut ring = Ring::new();
        let mut reference = VecDeque::new();
        let mut x: u64 = 1;
        for step in 0..100_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Mostly balanced, with phases of growth so the ring doubles several times.
            let push = x % 100 < if (step / 5000) % 2 == 0 { 60 } else { 45 };
            if push {
                ring.push_back(step);
                reference.push_back(step);
            } else {
                assert_eq!(ring.pop_front(), reference.pop_front());
            }
            assert_eq!(ring.front(), reference.front());
            assert_eq!(ring.len(), reference.len());
        }
    }
}
