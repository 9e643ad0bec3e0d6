//! Distributions of the random quantities a parameter can name (sizes in
//! bytes; durations or counts in a base unit), sampled by inverse transform.
//! Apart from the descriptor so that the unit parsers, which write them, and
//! the descriptor, which parses with those parsers, do not import each other.

use serde::{Serialize, Serializer};

/// A distribution of sizes in bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SizeDistribution {
    Constant(u64),
    Exponential {
        mean: f64,
    },
    /// Pareto with this mean and shape (> 1, so the mean exists); scale = mean (shape - 1) / shape.
    Pareto {
        mean: f64,
        shape: f64,
    },
    /// Pareto of the second kind (Lomax, ns-2's `RandomVariable/ParetoII`): support
    /// from zero, scale = mean (shape - 1); see [`Law::Pareto2`].
    Pareto2 {
        mean: f64,
        shape: f64,
    },
}

/// How a [`SizeDistribution`] is written in JSON: serde cannot tag a newtype
/// variant holding a number (`Constant(u64)`) inside the object, so a constant
/// is written as `{"kind": "constant", "bytes": N}`.
#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum SizeDistributionJson {
    Constant { bytes: u64 },
    Exponential { mean: f64 },
    Pareto { mean: f64, shape: f64 },
    Pareto2 { mean: f64, shape: f64 },
}

impl Serialize for SizeDistribution {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            SizeDistribution::Constant(bytes) => SizeDistributionJson::Constant { bytes },
            SizeDistribution::Exponential { mean } => SizeDistributionJson::Exponential { mean },
            SizeDistribution::Pareto { mean, shape } => SizeDistributionJson::Pareto { mean, shape },
            SizeDistribution::Pareto2 { mean, shape } => SizeDistributionJson::Pareto2 { mean, shape },
        }
        .serialize(s)
    }
}

impl SizeDistribution {
    pub fn mean(&self) -> f64 {
        match *self {
            SizeDistribution::Constant(b) => b as f64,
            SizeDistribution::Exponential { mean }
            | SizeDistribution::Pareto { mean, .. }
            | SizeDistribution::Pareto2 { mean, .. } => mean,
        }
    }

    /// The size whose upper tail has probability `1 - u` (inverse transform
    /// sampling with `u` uniform in [0, 1)), rounded to whole bytes, at least one.
    pub fn quantile(&self, u: f64) -> u64 {
        let bytes = match *self {
            SizeDistribution::Constant(b) => return b.max(1),
            SizeDistribution::Exponential { mean } => -mean * (1.0 - u).ln(),
            SizeDistribution::Pareto { mean, shape } => {
                let scale = mean * (shape - 1.0) / shape;
                scale / (1.0 - u).powf(1.0 / shape)
            }
            SizeDistribution::Pareto2 { mean, shape } => Law::Pareto2 { mean, shape }.quantile(u),
        };
        // Capped so that a draw in the far tail stays representable.
        bytes.round().clamp(1.0, 1e15) as u64
    }
}

/// A distribution of non-negative reals in a base unit (seconds, a count):
/// the law behind duration and count parameters. Pareto laws need a shape
/// above 1, so that the mean they are given exists.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Law {
    Constant {
        value: f64,
    },
    Exponential {
        mean: f64,
    },
    /// Pareto (first kind): scale = mean (shape - 1) / shape, support from the scale.
    Pareto {
        mean: f64,
        shape: f64,
    },
    /// Pareto of the second kind (Lomax), what ns-2's `RandomVariable/ParetoII`
    /// draws with `avg_` and `shape_` (ns-2 `tools/ranvar.cc`, `tools/random.h`):
    /// scale = mean (shape - 1), survival (1 + x / scale)^-shape, support from 0,
    /// so most draws are small and the mean comes from the tail.
    Pareto2 {
        mean: f64,
        shape: f64,
    },
}

impl Law {
    pub fn mean(&self) -> f64 {
        match *self {
            Law::Constant { value: x } => x,
            Law::Exponential { mean } | Law::Pareto { mean, .. } | Law::Pareto2 { mean, .. } => mean,
        }
    }

    /// The value whose upper tail has probability `1 - u` (inverse transform
    /// sampling with `u` uniform in [0, 1)).
    pub fn quantile(&self, u: f64) -> f64 {
        match *self {
            Law::Constant { value: x } => x,
            Law::Exponential { mean } => -mean * (1.0 - u).ln(),
            Law::Pareto { mean, shape } => mean * (shape - 1.0) / shape / (1.0 - u).powf(1.0 / shape),
            Law::Pareto2 { mean, shape } => mean * (shape - 1.0) * ((1.0 - u).powf(-1.0 / shape) - 1.0),
        }
    }

    /// A whole count from a draw: rounded up, at least one (ns-2's WebTraf takes
    /// `ceil` of its page and object counts).
    pub fn count(&self, u: f64) -> u64 {
        self.quantile(u).ceil().clamp(1.0, 1e12) as u64
    }

    /// The probability that a draw exceeds `x`.
    fn survival(&self, x: f64) -> f64 {
        match *self {
            Law::Constant { value: c } => f64::from(u8::from(c > x)),
            Law::Exponential { mean } => (-x / mean).exp(),
            Law::Pareto { mean, shape } => {
                let scale = mean * (shape - 1.0) / shape;
                if x < scale {
                    1.0
                } else {
                    (scale / x).powf(shape)
                }
            }
            Law::Pareto2 { mean, shape } => (1.0 + x / (mean * (shape - 1.0))).powf(-shape),
        }
    }

    /// The mean of [`Law::count`]: E[max(1, ceil X)] = 1 + sum over k >= 1 of
    /// P(X > k), summed to 100 000 and the rest taken as the integral of the
    /// survival function from 100 000.5 (the tail of a Pareto law whose shape is
    /// near 1 converges too slowly to sum).
    pub fn count_mean(&self) -> f64 {
        const TERMS: u32 = 100_000;
        let sum: f64 = (1..=TERMS).map(|k| self.survival(f64::from(k))).sum();
        let from = f64::from(TERMS) + 0.5;
        let tail = match *self {
            Law::Constant { .. } => 0.0,
            Law::Exponential { mean } => mean * (-from / mean).exp(),
            Law::Pareto { shape, .. } => from * self.survival(from) / (shape - 1.0),
            Law::Pareto2 { mean, shape } => {
                (mean * (shape - 1.0) + from) * self.survival(from) / (shape - 1.0)
            }
        };
        1.0 + sum + tail
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pareto_quantiles_have_the_requested_mean_and_tail() {
        let d = SizeDistribution::Pareto { mean: 100_000.0, shape: 1.5 };
        // Scale = mean (a - 1) / a; the median is scale * 2^(1/a).
        let scale: f64 = 100_000.0 * 0.5 / 1.5;
        assert_eq!(d.quantile(0.0), scale.round() as u64);
        let median = scale * 2f64.powf(1.0 / 1.5);
        assert_eq!(d.quantile(0.5), median.round() as u64);
    }

    #[test]
    fn exponential_quantile_is_minus_mean_log_of_the_tail() {
        let d = SizeDistribution::Exponential { mean: 1000.0 };
        assert_eq!(d.quantile(0.5), (1000.0 * 2f64.ln()).round() as u64);
        assert_eq!(d.quantile(0.0), 1, "never zero bytes");
    }
}
