//! Buffer sizes as a scenario writes them: "500pkts", "750KB", "1bdp",
//! "25%bdp", "unlimited". Other unit-bearing values are parsed by
//! [`cclab_wire::units`].

use cclab_wire::units::{size, split_number};
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
