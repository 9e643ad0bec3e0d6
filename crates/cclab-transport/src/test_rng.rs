//! A small deterministic generator for unit tests (the crate takes its
//! randomness from the simulator, so it has none of its own): xorshift64
//! (Marsaglia 2003, shifts 13, 7, 17), seeded by a multiplicative hash so that
//! neighbouring seeds give unrelated streams.

pub(crate) struct XorShift(u64);

impl XorShift {
    /// Seed 0 is the one seed that never leaves zero; callers use others.
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15))
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Uniform in (0, 1]: never 0, so its logarithm is finite.
    pub(crate) fn unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }

    /// Trials up to and including the first success of a Bernoulli(p) sequence
    /// (inverse transform), the same law as drawing each trial in turn.
    pub(crate) fn geometric(&mut self, p: f64) -> u64 {
        (self.unit().ln() / (-p).ln_1p()).floor() as u64 + 1
    }
}
