//! Named random streams.
//!
//! Each random component (a link's loss process, a flow's start time, a web
//! traffic source) owns one ChaCha8 stream. The key is derived from the run seed
//! and the stream number from a stable hash of the component's name, so:
//! - the same seed and component name give the same draws on every machine;
//! - adding or removing one component never shifts the draws of another.

use cclab_wire::random::SplitMix64;
use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};

pub struct RngStream {
    inner: ChaCha8Rng,
}

impl RngStream {
    pub fn new(run_seed: u64, component: &str) -> Self {
        let mut key = [0u8; 32];
        let mut expand = SplitMix64::new(run_seed);
        for chunk in key.chunks_exact_mut(8) {
            chunk.copy_from_slice(&expand.next_u64().to_le_bytes());
        }
        let mut inner = ChaCha8Rng::from_seed(key);
        inner.set_stream(fnv1a64(component.as_bytes()));
        Self { inner }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.inner.next_u64()
    }

    /// Uniform in [0, 1) with 53 bits of precision.
    pub fn next_f64(&mut self) -> f64 {
        (self.inner.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p`.
    pub fn bernoulli(&mut self, p: f64) -> bool {
        self.next_f64() < p
    }

    /// Uniform integer in `[lo, hi]` (inclusive), without modulo bias.
    pub fn uniform_inclusive(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        let span = hi - lo;
        if span == u64::MAX {
            return self.next_u64();
        }
        let n = span + 1;
        let zone = u64::MAX - (u64::MAX % n) - 1;
        loop {
            let x = self.next_u64();
            if x <= zone {
                return lo + x % n;
            }
        }
    }
}

/// FNV-1a: a fixed, documented hash so stream ids never depend on the Rust version.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_and_name_give_same_draws() {
        let mut a = RngStream::new(7, "link:0:loss");
        let mut b = RngStream::new(7, "link:0:loss");
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
    }

    #[test]
    fn different_names_or_seeds_give_different_draws() {
        let first = |seed, name: &str| RngStream::new(seed, name).next_u64();
        assert_ne!(first(7, "a"), first(7, "b"));
        assert_ne!(first(7, "a"), first(8, "a"));
    }

    #[test]
    fn draws_are_pinned_across_versions() {
        // Pins the derivation (splitmix64 key, FNV-1a stream id, ChaCha8): a change
        // here silently changes every published result, so it must be deliberate.
        let mut r = RngStream::new(1, "pin");
        let got: Vec<u64> = (0..2).map(|_| r.next_u64()).collect();
        assert_eq!(got, PINNED);
    }
    const PINNED: [u64; 2] = [1612387834060847252, 18367513645131059742];

    #[test]
    fn bernoulli_frequency_matches_p() {
        let mut r = RngStream::new(3, "bern");
        let n = 200_000;
        let hits = (0..n).filter(|_| r.bernoulli(0.01)).count() as f64;
        // Binomial sd = sqrt(n p (1-p)) = 44.5; allow 5 sd.
        assert!((hits - 2000.0).abs() < 5.0 * 44.5, "hits {hits}");
    }

    #[test]
    fn uniform_inclusive_covers_bounds() {
        let mut r = RngStream::new(3, "u");
        let mut seen = [false; 4];
        for _ in 0..1000 {
            let x = r.uniform_inclusive(10, 13);
            assert!((10..=13).contains(&x));
            seen[(x - 10) as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
    }
}
