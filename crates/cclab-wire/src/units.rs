//! Parsing of unit-bearing values written as strings: "100Mbps", "10ms",
//! "64KB", "50/s", "pareto(mean=100KB, shape=1.2)". Every parser returns a
//! message fit to follow a key path in an error ("run.warmup: ...").

use crate::distribution::{Law, SizeDistribution};
use crate::time::Time;

/// The length of the number at the start of `s`: an optional sign, digits,
/// optionally a point and more digits, optionally an exponent (`e`, an
/// optional sign, digits); 0 if `s` does not start with one.
fn number_prefix(s: &str) -> usize {
    let b = s.as_bytes();
    let digits = |mut i: usize| {
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let int_end = digits(i);
    if int_end == i {
        return 0;
    }
    i = int_end;
    if b.get(i) == Some(&b'.') {
        let frac_end = digits(i + 1);
        if frac_end == i + 1 {
            return 0; // "5." or "5..": a point must be followed by digits
        }
        i = frac_end;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(b.get(i + 1), Some(b'+' | b'-')));
        let exp_end = digits(i + 1 + sign);
        if exp_end > i + 1 + sign {
            i = exp_end;
        }
    }
    i
}

/// The number a unit-bearing value starts with and the unit after it. The
/// value must be exactly a number (`10`, `1.5`, `-3`, `1e-3`), optionally
/// spaces, and a unit that starts with a letter, `µ`, `%` or `/`: "1.5.3ms",
/// "1-2s" and "5.ms" are refused rather than read as far as they parse.
pub fn split_number(s: &str) -> Result<(f64, &str), String> {
    let s = s.trim();
    let end = number_prefix(s);
    let (num, rest) = s.split_at(end);
    let unit = rest.trim_start();
    // No unit starts with anything else or holds a digit or a point: "1e3e3ms",
    // "10ms5" and "1.5.3ms" are numbers gone wrong, not unknown units.
    let unit_is_a_word = unit.chars().next().is_none_or(|c| c.is_alphabetic() || matches!(c, '%' | '/'))
        && !unit.contains(|c: char| c.is_ascii_digit() || c == '.');
    if end == 0 || !unit_is_a_word {
        let starts_like_a_number =
            s.starts_with(|c: char| c.is_ascii_digit()) || (s.len() > 1 && s.starts_with(['-', '+']));
        return Err(if starts_like_a_number {
            format!("\"{s}\" is not a number followed by a unit (write it like \"10ms\" or \"1.5Mbps\")")
        } else {
            format!("\"{s}\" does not start with a number")
        });
    }
    let value: f64 = num.parse().map_err(|_| format!("\"{num}\" is not a number"))?;
    if !value.is_finite() {
        return Err(format!("\"{s}\" is not a finite number"));
    }
    Ok((value, unit))
}

fn scale(value: f64, unit: &str, units: &[(&str, f64)], what: &str, example: &str) -> Result<f64, String> {
    if unit.is_empty() {
        return Err(format!("{value} has no unit; write it like \"{example}\""));
    }
    match units.iter().find(|(u, _)| *u == unit) {
        Some((_, factor)) => Ok(value * factor),
        None => {
            let known: Vec<&str> = units.iter().map(|(u, _)| *u).collect();
            Err(format!("unknown {what} unit \"{unit}\" (use one of {})", known.join(", ")))
        }
    }
}

const TIME_UNITS: &[(&str, f64)] =
    &[("ns", 1.0), ("us", 1e3), ("µs", 1e3), ("ms", 1e6), ("s", 1e9), ("min", 60e9), ("h", 3600e9)];

/// A non-negative duration such as "10ms" or "1.5s".
pub fn duration(s: &str) -> Result<Time, String> {
    let (value, unit) = split_number(s)?;
    let ns = scale(value, unit, TIME_UNITS, "time", "10ms")?;
    if ns < 0.0 {
        return Err(format!("\"{s}\" is negative"));
    }
    if ns > 1e18 {
        return Err(format!("\"{s}\" is too long"));
    }
    Ok(ns.round() as Time)
}

const RATE_UNITS: &[(&str, f64)] = &[
    ("bps", 1.0),
    ("kbps", 1e3),
    ("Kbps", 1e3),
    ("Mbps", 1e6),
    ("Gbps", 1e9),
    ("Tbps", 1e12),
    ("bit/s", 1.0),
    ("kbit/s", 1e3),
    ("Mbit/s", 1e6),
    ("Gbit/s", 1e9),
];

/// A positive bit rate such as "100Mbps".
pub fn rate(s: &str) -> Result<u64, String> {
    let (value, unit) = split_number(s)?;
    let bps = scale(value, unit, RATE_UNITS, "rate", "100Mbps")?;
    if bps < 1.0 {
        return Err(format!("\"{s}\" must be a positive rate of at least 1bps"));
    }
    if bps > 1e15 {
        return Err(format!("\"{s}\" is too fast"));
    }
    Ok(bps.round() as u64)
}

const SIZE_UNITS: &[(&str, f64)] = &[
    ("B", 1.0),
    ("KB", 1e3),
    ("kB", 1e3),
    ("MB", 1e6),
    ("GB", 1e9),
    ("TB", 1e12),
    ("KiB", 1024.0),
    ("MiB", 1048576.0),
    ("GiB", 1073741824.0),
];

/// A non-negative byte count such as "64KB" (SI) or "1MiB" (binary).
pub fn size(s: &str) -> Result<u64, String> {
    let (value, unit) = split_number(s)?;
    let bytes = scale(value, unit, SIZE_UNITS, "size", "10MB")?;
    if bytes < 0.0 {
        return Err(format!("\"{s}\" is negative"));
    }
    if bytes > 1e18 {
        return Err(format!("\"{s}\" is too large"));
    }
    Ok(bytes.round() as u64)
}

const FREQUENCY_UNITS: &[(&str, f64)] =
    &[("/s", 1.0), ("/min", 1.0 / 60.0), ("/h", 1.0 / 3600.0), ("/ms", 1e3)];

/// A frequency such as "50/s" or "3/min", in events per second.
pub fn per_second(s: &str) -> Result<f64, String> {
    let (value, unit) = split_number(s)?;
    let hz = scale(value, unit, FREQUENCY_UNITS, "frequency", "50/s")?;
    if hz < 0.0 {
        return Err(format!("\"{s}\" is negative"));
    }
    Ok(hz)
}

/// Units of a packet count (a buffer's "500pkts").
pub const PACKET_UNITS: &[(&str, f64)] = &[("pkts", 1.0), ("pkt", 1.0), ("packets", 1.0), ("packet", 1.0)];

/// Units of a multiple of the bandwidth-delay product (a buffer's "1bdp", "25%bdp").
pub const BDP_UNITS: &[(&str, f64)] = &[("bdp", 1.0), ("BDP", 1.0), ("%bdp", 0.01), ("%BDP", 0.01)];

/// Units, each with its factor to its family's smallest unit (ns for a time).
type Units = &'static [(&'static str, f64)];

/// What each family of units measures, its units, and what their factors
/// are divided by to give the family's base unit: seconds, bit/s, bytes,
/// events per second, packets, BDPs.
const QUANTITIES: &[(&str, Units, f64)] = &[
    ("rate", RATE_UNITS, 1.0),
    ("duration", TIME_UNITS, 1e9),
    ("size", SIZE_UNITS, 1.0),
    ("frequency", FREQUENCY_UNITS, 1.0),
    ("packets", PACKET_UNITS, 1.0),
    ("bdp", BDP_UNITS, 1.0),
];

/// A non-negative value written with any unit a scenario knows ("20Mbps",
/// "10ms", "64KB", "50/s", "500pkts", "25%bdp") as its number in its family's
/// base unit (see [`QUANTITIES`]) and the family's name ("rate", "duration",
/// "size", "frequency", "packets", "bdp"). Neither rounded nor bounded as a
/// scenario key would be: this reads a value, for a plot's axis or a
/// command-line option, without knowing which key it is for.
pub fn quantity(s: &str) -> Result<(f64, &'static str), String> {
    let (value, unit) = split_number(s)?;
    if unit.is_empty() {
        return Err(format!("{value} has no unit; write it like \"10ms\" or \"100Mbps\""));
    }
    let found = QUANTITIES.iter().find_map(|&(kind, units, base)| {
        units.iter().find(|(u, _)| *u == unit).map(|&(_, f)| (kind, f / base))
    });
    let Some((kind, factor)) = found else {
        return Err(format!("unknown unit \"{unit}\""));
    };
    if value < 0.0 {
        return Err(format!("\"{}\" is negative", s.trim()));
    }
    Ok((value * factor, kind))
}

/// A size distribution: a constant size ("100KB"), "exponential(mean=100KB)",
/// "pareto(mean=100KB, shape=1.2)" or "pareto2(mean=100KB, shape=1.2)" (shape
/// above 1, so that the mean exists).
pub fn size_distribution(s: &str) -> Result<SizeDistribution, String> {
    let t = s.trim();
    if !t.contains('(') {
        return size(t).map(SizeDistribution::Constant).map_err(|e| {
            format!("{e}; or write a distribution like \"exponential(mean=100KB)\" or \"pareto(mean=100KB, shape=1.2)\"")
        });
    }
    let law = law(t, size_value, 1.0, "at least one byte")?;
    Ok(match law {
        Law::Constant { value: x } => SizeDistribution::Constant(x.round() as u64),
        Law::Exponential { mean } => SizeDistribution::Exponential { mean },
        Law::Pareto { mean, shape } => SizeDistribution::Pareto { mean, shape },
        Law::Pareto2 { mean, shape } => SizeDistribution::Pareto2 { mean, shape },
    })
}

/// A distribution of durations in seconds: a constant ("1s"), "exponential(mean=1s)",
/// "pareto(mean=1s, shape=1.5)" or "pareto2(mean=1s, shape=1.5)".
pub fn duration_distribution(s: &str) -> Result<Law, String> {
    let t = s.trim();
    if !t.contains('(') {
        return duration(t).map(|d| Law::Constant { value: crate::time::to_secs_f64(d) }).map_err(|e| {
            format!("{e}; or write a distribution like \"exponential(mean=1s)\" or \"pareto(mean=1s, shape=1.5)\"")
        });
    }
    let seconds = |v: &str| duration(v).map(crate::time::to_secs_f64);
    law(t, seconds, 0.0, "positive")
}

/// A distribution of counts: a number ("10"), "exponential(mean=10)",
/// "pareto(mean=10, shape=1.5)" or "pareto2(mean=10, shape=1.5)"; each draw is
/// rounded up to a whole number, at least one (see [`Law::count`]).
pub fn count_distribution(s: &str) -> Result<Law, String> {
    let t = s.trim();
    let number = |v: &str| match v.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        _ => Err(format!("\"{}\" is not a non-negative number", v.trim())),
    };
    if !t.contains('(') {
        return match number(t) {
            Ok(x) if x >= 1.0 => Ok(Law::Constant { value: x }),
            Ok(_) => Err(format!("\"{t}\" is under one")),
            Err(e) => {
                Err(format!("{e}; write a count like \"10\" or a distribution like \"exponential(mean=10)\""))
            }
        };
    }
    law(t, number, 1.0, "at least one")
}

/// "kind(mean=..., shape=...)" with the mean read by `value` and at least `least`
/// (strictly above it when `least` is 0); `what` says so in a refusal.
fn law(t: &str, value: impl Fn(&str) -> Result<f64, String>, least: f64, what: &str) -> Result<Law, String> {
    let Some((kind, rest)) = t.split_once('(') else {
        return Err(format!("\"{t}\": expected kind(mean=...)"));
    };
    let Some(args) = rest.strip_suffix(')') else {
        return Err(format!("\"{t}\": missing \")\" at the end"));
    };
    let mut mean = None;
    let mut shape = None;
    for arg in args.split(',') {
        let Some((key, v)) = arg.split_once('=') else {
            return Err(format!("\"{t}\": \"{}\" is not key=value", arg.trim()));
        };
        match key.trim() {
            "mean" => mean = Some(value(v.trim()).map_err(|e| format!("\"{t}\": mean {e}"))?),
            "shape" => {
                let x: f64 = v
                    .trim()
                    .parse()
                    .map_err(|_| format!("\"{t}\": shape \"{}\" is not a number", v.trim()))?;
                shape = Some(x);
            }
            other => {
                return Err(format!("\"{t}\": unknown argument \"{other}\" (use mean, and shape for pareto)"))
            }
        }
    }
    let mean = mean.ok_or_else(|| format!("\"{t}\": mean=... is required"))?;
    if mean < least || (least == 0.0 && mean <= 0.0) {
        return Err(format!("\"{t}\": the mean must be {what}"));
    }
    let pareto = |kind: &str, make: fn(f64, f64) -> Law| match shape {
        Some(a) if a.is_finite() && a > 1.0 && a <= 100.0 => Ok(make(mean, a)),
        Some(a) => Err(format!("\"{t}\": shape {a} must be above 1 (so the mean exists) and at most 100")),
        None => Err(format!("\"{t}\": {kind} needs a shape, e.g. shape=1.2")),
    };
    match kind.trim() {
        "exponential" => match shape {
            None => Ok(Law::Exponential { mean }),
            Some(_) => Err(format!("\"{t}\": exponential takes only a mean")),
        },
        "pareto" => pareto("pareto", |mean, shape| Law::Pareto { mean, shape }),
        "pareto2" => pareto("pareto2", |mean, shape| Law::Pareto2 { mean, shape }),
        "constant" => match shape {
            None => Ok(Law::Constant { value: mean }),
            Some(_) => Err(format!("\"{t}\": constant takes only a mean")),
        },
        other => Err(format!(
            "\"{t}\": unknown distribution \"{other}\" (use constant, exponential, pareto or pareto2)"
        )),
    }
}

/// A byte count as a float (a mean need not be whole); negative values are refused.
fn size_value(s: &str) -> Result<f64, String> {
    let (value, unit) = split_number(s)?;
    let bytes = scale(value, unit, SIZE_UNITS, "size", "100KB")?;
    if bytes < 0.0 {
        return Err(format!("\"{s}\" is negative"));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{millis, secs};

    #[test]
    fn durations() {
        assert_eq!(duration("10ms"), Ok(millis(10)));
        assert_eq!(duration("1.5s"), Ok(millis(1500)));
        assert_eq!(duration("250us"), Ok(250_000));
        assert_eq!(duration("2min"), Ok(secs(120)));
        assert!(duration("10").unwrap_err().contains("no unit"));
        assert!(duration("10 parsecs").unwrap_err().contains("unknown time unit \"parsecs\""));
        assert!(duration("-1s").unwrap_err().contains("negative"));
        assert!(duration("ms").unwrap_err().contains("does not start with a number"));
        assert_eq!(duration("1e-3s"), Ok(millis(1)));
        assert_eq!(duration("10 ms"), Ok(millis(10)));
        assert_eq!(duration("+2s"), Ok(secs(2)));
    }

    #[test]
    fn a_value_is_exactly_a_number_then_a_unit() {
        for bad in ["1.5.3ms", "1-2s", "--5ms", "1e3e3ms", "5.ms", "5..1s", "0s...1s", "1,5s", "1 2ms", "1s2"]
        {
            let e = duration(bad).unwrap_err();
            assert!(e.contains("is not a number followed by a unit"), "{bad}: {e}");
        }
        assert!(duration(".5s").unwrap_err().contains("does not start with a number"));
        assert!(duration("-").unwrap_err().contains("does not start with a number"));
        assert!(duration("1e999s").unwrap_err().contains("not a finite number"));
        assert!(duration("10ms5").unwrap_err().contains("is not a number followed by a unit"));
        assert!(duration("10parsecs").unwrap_err().contains("unknown time unit \"parsecs\""));
        assert_eq!(split_number("1e"), Ok((1.0, "e")));
        assert_eq!(split_number("25%bdp"), Ok((25.0, "%bdp")));
        assert_eq!(split_number("50/s"), Ok((50.0, "/s")));
        assert_eq!(split_number("3µs"), Ok((3.0, "µs")));
        assert!(rate("100..5Mbps").unwrap_err().contains("is not a number followed by a unit"));
    }

    #[test]
    fn rates() {
        assert_eq!(rate("100Mbps"), Ok(100_000_000));
        assert_eq!(rate("1.5Gbps"), Ok(1_500_000_000));
        assert_eq!(rate("64kbps"), Ok(64_000));
        assert!(rate("0Mbps").unwrap_err().contains("positive"));
        assert!(rate("-5Mbps").unwrap_err().contains("positive"));
        assert!(rate("100MBps").unwrap_err().contains("unknown rate unit"));
    }

    #[test]
    fn sizes() {
        assert_eq!(size("64KB"), Ok(64_000));
        assert_eq!(size("1MiB"), Ok(1_048_576));
        assert_eq!(size("10MB"), Ok(10_000_000));
        assert!(size("10").unwrap_err().contains("no unit"));
    }

    #[test]
    fn frequencies() {
        assert_eq!(per_second("50/s"), Ok(50.0));
        assert_eq!(per_second("3/min"), Ok(0.05));
        assert!(per_second("50").unwrap_err().contains("no unit"));
        assert!(per_second("50/fortnight").unwrap_err().contains("unknown frequency unit"));
    }

    #[test]
    fn quantities() {
        assert_eq!(quantity("20Mbps"), Ok((20e6, "rate")));
        assert_eq!(quantity(" 250ms "), Ok((0.25, "duration")));
        assert_eq!(quantity("1.5s"), Ok((1.5, "duration")));
        assert_eq!(quantity("64KiB"), Ok((65536.0, "size")));
        assert_eq!(quantity("50/s"), Ok((50.0, "frequency")));
        assert_eq!(quantity("500pkts"), Ok((500.0, "packets")));
        assert_eq!(quantity("1bdp"), Ok((1.0, "bdp")));
        assert_eq!(quantity("25%bdp"), Ok((0.25, "bdp")));
        assert!(quantity("10").unwrap_err().contains("no unit"));
        assert!(quantity("10 parsecs").unwrap_err().contains("unknown unit \"parsecs\""));
        assert!(quantity("-5ms").unwrap_err().contains("negative"));
        assert!(quantity("droptail").unwrap_err().contains("does not start with a number"));
    }

    #[test]
    fn distributions() {
        assert_eq!(size_distribution("100KB"), Ok(SizeDistribution::Constant(100_000)));
        assert_eq!(
            size_distribution("exponential(mean=2KB)"),
            Ok(SizeDistribution::Exponential { mean: 2000.0 })
        );
        assert_eq!(
            size_distribution("pareto(mean=100KB, shape=1.2)"),
            Ok(SizeDistribution::Pareto { mean: 100_000.0, shape: 1.2 })
        );
        assert!(size_distribution("pareto(mean=-1KB, shape=1.2)").unwrap_err().contains("negative"));
        assert!(size_distribution("pareto(mean=1KB, shape=0.9)").unwrap_err().contains("above 1"));
        assert!(size_distribution("pareto(mean=1KB)").unwrap_err().contains("needs a shape"));
        assert!(size_distribution("lognormal(mean=1KB)").unwrap_err().contains("unknown distribution"));
        assert!(size_distribution("pareto(mean=1KB, shape=2").unwrap_err().contains("missing"));
        assert!(size_distribution("100").unwrap_err().contains("no unit"));
    }
}
