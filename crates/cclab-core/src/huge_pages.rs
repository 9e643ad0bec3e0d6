//! A global allocator that puts large buffers on transparent huge pages.
//!
//! At 2.5 Gbit/s the packet pool, the bottleneck's delay line and a large
//! window's scoreboard span tens of megabytes that a run reads all over. With
//! 4 KiB pages most of those reads also missed the TLB, and in a virtual
//! machine a TLB miss walks two page tables (the guest's and the host's).
//! Linux backs memory with 2 MiB pages where a program asks for them
//! (`madvise(MADV_HUGEPAGE)`), and many systems, the development VM included,
//! give them only where asked (`/sys/kernel/mm/transparent_hugepage/enabled`
//! set to `madvise`). So each allocation of at least [`LARGE`] bytes is placed
//! on whole, aligned 2 MiB pages and advised: the pacing study's 2.5 Gbit/s
//! scenario took about 0.9 of the CPU time (benchmarks/results/
//! table2_speed-2026-11-23.txt). It changes nothing a run computes; the cost
//! is up to 2 MiB of rounding per large buffer, of which only the touched
//! pages take memory.
//!
//! Binaries opt in with `#[global_allocator] static A: HugePageAlloc = HugePageAlloc;`
//! (the `run` example and the Python extension do). Elsewhere than on Linux
//! it is the system allocator.

use std::alloc::{GlobalAlloc, Layout, System};

/// A transparent huge page on x86-64 and most aarch64 kernels.
const HUGE_PAGE: usize = 2 << 20;
/// Allocations from this size on go on huge pages; below it, rounding up to
/// a whole huge page would waste more than half of it.
const LARGE: usize = 1 << 20;

/// The system allocator, with large allocations on transparent huge pages.
pub struct HugePageAlloc;

impl HugePageAlloc {
    /// The layout a large allocation really gets: whole, aligned huge pages.
    /// A pure function of the requested layout, so that `dealloc` and
    /// `realloc` find the layout `alloc` used.
    #[inline]
    fn on_huge_pages(layout: Layout) -> Option<Layout> {
        if !cfg!(target_os = "linux") || layout.size() < LARGE {
            return None;
        }
        let size = layout.size().checked_next_multiple_of(HUGE_PAGE)?;
        Layout::from_size_align(size, layout.align().max(HUGE_PAGE)).ok()
    }
}

#[cfg(target_os = "linux")]
fn advise_huge_pages(ptr: *mut u8, len: usize) {
    const MADV_HUGEPAGE: std::ffi::c_int = 14;
    extern "C" {
        fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: std::ffi::c_int) -> std::ffi::c_int;
    }
    // SAFETY: `ptr..ptr + len` is one live allocation of ours, aligned to a
    // huge page; MADV_HUGEPAGE only changes how the kernel backs it, never its
    // contents. An error (a kernel without transparent huge pages) leaves the
    // memory as it was, so it is ignored.
    unsafe { madvise(ptr.cast(), len, MADV_HUGEPAGE) };
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_ptr: *mut u8, _len: usize) {}

// SAFETY: every block comes from `System` with the layout `on_huge_pages`
// derives from the caller's (the caller's own when it is small), and goes back
// to `System` with that same layout; that layout is at least as large and as
// aligned as the caller's, so the block satisfies the caller's layout.
unsafe impl GlobalAlloc for HugePageAlloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match Self::on_huge_pages(layout) {
            None => System.alloc(layout),
            Some(huge) => {
                let ptr = System.alloc(huge);
                if !ptr.is_null() {
                    advise_huge_pages(ptr, huge.size());
                }
                ptr
            }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match Self::on_huge_pages(layout) {
            None => System.alloc_zeroed(layout),
            Some(huge) => {
                let ptr = System.alloc_zeroed(huge);
                if !ptr.is_null() {
                    advise_huge_pages(ptr, huge.size());
                }
                ptr
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, Self::on_huge_pages(layout).unwrap_or(layout))
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // A valid layout by the trait's contract (new_size, rounded up to the
        // alignment, does not overflow isize).
        let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
        match (Self::on_huge_pages(layout), Self::on_huge_pages(new_layout)) {
            (None, None) => System.realloc(ptr, layout, new_size),
            // Still within the same whole huge pages: nothing to move.
            (Some(old), Some(new)) if old == new => ptr,
            _ => {
                let new_ptr = self.alloc(new_layout);
                if !new_ptr.is_null() {
                    std::ptr::copy_nonoverlapping(ptr, new_ptr, layout.size().min(new_size));
                    self.dealloc(ptr, layout);
                }
                new_ptr
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_layouts_are_left_alone_and_large_ones_fill_whole_aligned_huge_pages() {
        let small = Layout::from_size_align(LARGE - 1, 8).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(HugePageAlloc::on_huge_pages(small), None);
        let large = Layout::from_size_align(3 * HUGE_PAGE + 1, 8).unwrap_or_else(|e| panic!("{e}"));
        if cfg!(target_os = "linux") {
            let huge =
                HugePageAlloc::on_huge_pages(large).unwrap_or_else(|| panic!("not placed on huge pages"));
            assert_eq!((huge.size(), huge.align()), (4 * HUGE_PAGE, HUGE_PAGE));
        }
    }

    #[test]
    fn a_vec_grown_through_the_threshold_keeps_its_contents() {
        let a = HugePageAlloc;
        let mut size = 1024;
        let layout = Layout::from_size_align(size, 8).unwrap_or_else(|e| panic!("{e}"));
        // SAFETY: each pointer is used with the layout it was allocated or reallocated with.
        unsafe {
            let mut ptr = a.alloc(layout);
            assert!(!ptr.is_null());
            for i in 0..size {
                *ptr.add(i) = i as u8;
            }
            // Small to large, large to the same huge pages, to more of them, and back to small.
            for new_size in [3 * LARGE, 3 * LARGE + 10, 5 * HUGE_PAGE, 512] {
                ptr = a.realloc(ptr, Layout::from_size_align_unchecked(size, 8), new_size);
                assert!(!ptr.is_null());
                for i in 0..size.min(new_size).min(1024) {
                    assert_eq!(*ptr.add(i), i as u8, "byte {i} after growing to {new_size}");
                }
                size = new_size;
            }
            a.dealloc(ptr, Layout::from_size_align_unchecked(size, 8));
        }
    }
}
