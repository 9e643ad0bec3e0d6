//! SplitMix64 (Steele, Lea and Flood, OOPSLA 2014): the one small
//! deterministic generator the crates share. Protocol code that must draw
//! (ns-2's random send overhead) is handed a seed by its driver, which takes
//! it from the run's named random stream, so an endpoint still creates no
//! randomness of its own; the engine's streams use it to expand a run seed
//! into a key; tests use it for reproducible inputs.

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1) with 53 bits of precision.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Trials up to and including the first success of a sequence of
    /// Bernoulli(p) trials, by inverse transform: the same law as drawing each
    /// trial in turn, in one draw.
    pub fn geometric(&mut self, p: f64) -> u64 {
        let unit = 1.0 - self.next_f64(); // (0, 1]: its logarithm is finite
        (unit.ln() / (-p).ln_1p()).floor() as u64 + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_published_reference_output() {
        // The first outputs for seed 1234567 of the reference C implementation
        // (Vigna, prng.di.unimi.it/splitmix64.c).
        let mut r = SplitMix64::new(1234567);
        assert_eq!(r.next_u64(), 6457827717110365317);
        assert_eq!(r.next_u64(), 3203168211198807973);
    }

    #[test]
    fn geometric_draws_have_mean_one_over_p() {
        let mut r = SplitMix64::new(5);
        let n = 100_000;
        let mean = (0..n).map(|_| r.geometric(0.01) as f64).sum::<f64>() / n as f64;
        // sd of the mean: sqrt((1-p)/p^2 / n) = 0.31; allow 5 sd.
        assert!((mean - 100.0).abs() < 1.6, "{mean}");
    }

    #[test]
    fn unit_draws_lie_in_zero_one() {
        let mut r = SplitMix64::new(9);
        assert!((0..10_000).map(|_| r.next_f64()).all(|x| (0.0..1.0).contains(&x)));
    }
}
