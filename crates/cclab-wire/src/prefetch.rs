//! A hint to the processor to start loading memory that is about to be read.
//!
//! At gigabit rates the packets and delay lines inside the network, and a
//! large window's scoreboard, are far larger than the cache, and the reads
//! and writes of a hop or an ACK missed it each time. Their addresses are
//! known several operations ahead, so the engine and the TCP sender ask for
//! them early. Here, in the crate both depend on, because it is the crate's
//! one `unsafe` block.

/// Starts loading the cache lines of `*value`. Changes nothing a program can
/// observe but its speed.
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let start = value as *const T as *const i8;
        let lines = std::mem::size_of::<T>().div_ceil(64).max(1);
        for i in 0..lines {
            // SAFETY: a prefetch never faults and writes nothing; SSE, which it
            // needs, is part of the x86_64 baseline. `wrapping_add` keeps the
            // address computation defined even past the value's end.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(start.wrapping_add(i * 64)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
