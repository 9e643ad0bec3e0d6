//! Parsing of unit-bearing values written as strings: "100Mbps", "10ms",
//! "64KB", "1.5bdp", "500pkts". Every parser returns a message fit to follow
//! the key path in an error ("run.warmup: ...").

use cclab_core::Time;
use serde::Serialize;

/// A buffer size as the user wrote it, resolved to packets or bytes once the
/// topology (and so the BDP) is known.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BufferSpec {
    Packets(u64),
    Bytes(u64),
    /// A multiple of the bandwidth-delay product.
    Bdp(f64),
    Unlimited,
}

fn split_number(s: &str) -> Result<(f64, &str), String> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E'))
        .map_or(s.len(), |(i, _)| i);
    // "1e3" style exponents are fine, but a unit starting with 'e' is not a
    // concern: no unit we accept starts with 'e'.
    let (num, unit) = s.split_at(end);
    if num.is_empty() {
        return Err(format!("\"{s}\" does not start with a number"));
    }
    let value: f64 = num.parse().map_err(|_| format!("\"{num}\" is not a number"))?;
    if !value.is_finite() {
        return Err(format!("\"{s}\" is not a finite number"));
    }
    Ok((value, unit.trim()))
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

/// "500pkts", "750KB", "1bdp", "25%bdp" or "unlimited".
pub fn buffer(s: &str) -> Result<BufferSpec, String> {
    let t = s.trim();
    if t == "unlimited" {
        return Ok(BufferSpec::Unlimited);
    }
    let (value, unit) = split_number(t)?;
    if value < 0.0 {
        return Err(format!("\"{s}\" is negative"));
    }
    match unit {
        "pkts" | "pkt" | "packets" | "packet" => {
            if value.fract() != 0.0 {
                return Err(format!("\"{s}\": a packet count must be whole"));
            }
            Ok(BufferSpec::Packets(value as u64))
        }
        "bdp" | "BDP" => Ok(BufferSpec::Bdp(value)),
        "%bdp" | "%BDP" => Ok(BufferSpec::Bdp(value / 100.0)),
        _ => match size(t) {
            Ok(bytes) => Ok(BufferSpec::Bytes(bytes)),
            Err(_) if unit.is_empty() => {
                Err(format!("{value} has no unit; write it like \"100pkts\", \"64KB\" or \"1bdp\""))
            }
            Err(_) => {
                Err(format!("unknown buffer unit \"{unit}\" (use pkts, B, KB, MB, KiB, MiB, bdp or %bdp)"))
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_core::time::{millis, secs};

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
    fn buffers() {
        assert_eq!(buffer("500pkts"), Ok(BufferSpec::Packets(500)));
        assert_eq!(buffer("750KB"), Ok(BufferSpec::Bytes(750_000)));
        assert_eq!(buffer("1bdp"), Ok(BufferSpec::Bdp(1.0)));
        assert_eq!(buffer("25%bdp"), Ok(BufferSpec::Bdp(0.25)));
        assert_eq!(buffer("unlimited"), Ok(BufferSpec::Unlimited));
        assert!(buffer("2.5pkts").unwrap_err().contains("whole"));
        assert!(buffer("100").unwrap_err().contains("no unit"));
        assert!(buffer("3furlongs").unwrap_err().contains("unknown buffer unit"));
    }
}
