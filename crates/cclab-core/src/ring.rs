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
    slots: Box<[T]>,
    /// 32 bits each: a ring is part of every link, 24 bytes where a `Vec`
    /// and two `usize` took 40, and 2^32 slots would not fit in memory.
    head: u32,
    len: u32,
}

impl<T: Copy> Ring<T> {
    pub fn new() -> Self {
        Self { slots: Box::default(), head: 0, len: 0 }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
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
        if self.len() == self.slots.len() {
            self.grow(value);
        }
        let mask = self.mask();
        let (head, len) = (self.head as usize, self.len as usize);
        self.slots[(head + len) & mask] = value;
        self.len += 1;
        prefetch(&self.slots[(head + len + 1 + AHEAD) & mask]);
    }

    #[inline]
    pub fn front(&self) -> Option<&T> {
        (self.len > 0).then(|| &self.slots[self.head as usize])
    }

    #[inline]
    pub fn pop_front(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let value = self.slots[self.head as usize];
        let head = (self.head as usize + 1) & self.mask();
        self.head = head as u32;
        self.len -= 1;
        if self.len() > AHEAD {
            prefetch(&self.slots[(head + AHEAD) & self.mask()]);
        }
        Some(value)
    }

    /// Doubles the capacity (or creates it), keeping the order; `fill` pads the new slots.
    #[cold]
    fn grow(&mut self, fill: T) {
        let capacity = (self.slots.len() * 2).max(MIN_CAPACITY);
        assert!(capacity <= 1 << 31, "a ring of more than 2^31 slots");
        let mut slots = Vec::with_capacity(capacity);
        let (mask, head) = (self.mask(), self.head as usize);
        slots.extend((0..self.len()).map(|i| self.slots[(head + i) & mask]));
        slots.resize(capacity, fill);
        self.slots = slots.into_boxed_slice();
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
