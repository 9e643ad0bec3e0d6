//! How long one dependent load takes from buffers the size of a core's L2
//! cache, of a shared L3 and of main memory: `memory_probe [MILLIS]`.
//!
//! The simulator spends most of its time waiting for memory, and on a shared
//! machine the caches it waits on are shared with other tenants, so its CPU
//! time moved by a third within twenty minutes with nothing of ours running.
//! The speed benchmarks print this probe before and after their runs: a
//! slower figure at the L3 size says the machine, not the build, got slower.
//!
//! Each buffer holds one 64-byte node per cache line, linked into a single
//! cycle in random order (Sattolo's algorithm), so every load depends on the
//! one before and the hardware prefetchers cannot guess the next line.

use cclab_wire::random::SplitMix64;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// On huge pages, as the simulator's buffers are (`cclab_core::huge_pages`):
/// with 4 KiB pages the walk would time page-table walks, not the caches.
#[global_allocator]
static ALLOCATOR: cclab_sim::HugePageAlloc = cclab_sim::HugePageAlloc;

/// Buffer sizes probed: within a 1 MiB L2, within a 32 MiB L3, beyond both.
const SIZES: [(&str, usize); 3] = [("256K", 256 << 10), ("8M", 8 << 20), ("256M", 256 << 20)];
const LINE: usize = 64;

/// A node per cache line: the index of the next node, padded to the line.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Node {
    next: usize,
}

/// Nodes linked into one cycle through all of them, in random order.
fn cycle(n: usize) -> Vec<Node> {
    let mut order: Vec<usize> = (0..n).collect();
    // A fixed seed, so every run walks the same cycle.
    let mut draws = SplitMix64::new(1);
    // Sattolo: swapping only with earlier positions yields a single cycle.
    for i in (1..n).rev() {
        order.swap(i, (draws.next_u64() % i as u64) as usize);
    }
    let mut nodes = vec![Node { next: 0 }; n];
    for w in 0..n {
        nodes[order[w]].next = order[(w + 1) % n];
    }
    nodes
}

/// Nanoseconds per dependent load, walking `nodes` for about `budget`.
fn ns_per_load(nodes: &[Node], budget: Duration) -> f64 {
    let mut at = 0;
    // One lap to bring the buffer into whatever cache holds it.
    for _ in 0..nodes.len() {
        at = nodes[at].next;
    }
    let (mut loads, start) = (0u64, Instant::now());
    while start.elapsed() < budget {
        for _ in 0..100_000 {
            at = nodes[at].next;
        }
        loads += 100_000;
    }
    black_box(at);
    start.elapsed().as_secs_f64() * 1e9 / loads as f64
}

fn main() {
    let millis = match std::env::args().nth(1).map(|a| a.parse::<u64>()) {
        None => 300,
        Some(Ok(m)) if m > 0 => m,
        Some(_) => {
            eprintln!("usage: memory_probe [MILLIS per size, a positive integer; default 300]");
            std::process::exit(2);
        }
    };
    let figures: Vec<String> = SIZES
        .iter()
        .map(|&(name, bytes)| {
            let nodes = cycle(bytes / LINE);
            format!("{name} {:.1}", ns_per_load(&nodes, Duration::from_millis(millis)))
        })
        .collect();
    println!("ns per dependent load: {}", figures.join(", "));
}
