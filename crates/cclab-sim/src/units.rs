//! Buffer sizes as a scenario writes them: "500pkts", "750KB", "1bdp",
//! "25%bdp", "unlimited". Other unit-bearing values are parsed by
//! [`cclab_wire::units`].

use cclab_wire::units::{size, split_number, BDP_UNITS, PACKET_UNITS};
use cclab_wire::Time;
use serde::{Serialize, Serializer};

// Physically meaningful ranges. A value outside them is a typo (a unit of `h`
// for `ms`, an exponent too many) rather than an experiment, and the run it
// asked for would report nonsense (no packet delivered in the whole run) or
// take the machine's memory, so it is refused naming the key and the range.
// Rates are bounded where they are parsed (`cclab_wire::units::rate`: 1 bit/s,
// the slowest links in use carry a few bits a second, to 1 Pbit/s, more than
// any fibre has carried); segment sizes by their protocols' ranges.

/// The longest one-way delay of a link: the Moon is 1.3 s away and a
/// geostationary satellite 0.12 s, so 10 s is generous for any path on Earth
/// or near it.
pub const MAX_LINK_DELAY: Time = 10_000_000_000;
/// The longest base RTT of a flow: twice the longest one-way delay.
pub const MAX_RTT: Time = 2 * MAX_LINK_DELAY;
/// The longest run: a year of simulated time. No congestion-control question
/// needs more, and the run-time limit refuses far shorter runs unless asked.
pub const MAX_RUN_DURATION: Time = 365 * 24 * 3600 * 1_000_000_000;
/// The largest buffer in BDPs: 1000 BDP hold 40 s of queueing on a 40 ms
/// path, ten times the worst bufferbloat measured (seconds); a buffer that
/// never drops is "unlimited".
pub const MAX_BUFFER_BDP: f64 = 1000.0;
/// The largest buffer in packets: 100 million full packets are 100 GB or more.
pub const MAX_BUFFER_PACKETS: u64 = 100_000_000;
/// The largest buffer in bytes: 100 GB, well above the packet memory of any
/// router (a few GB).
pub const MAX_BUFFER_BYTES: u64 = 100_000_000_000;
/// What to write instead of a larger buffer.
const LARGER_BUFFER: &str = "write \"unlimited\" for a buffer that never drops";

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
    let is = |units: &[(&str, f64)]| units.iter().any(|(u, _)| *u == unit);
    match unit {
        _ if is(PACKET_UNITS) => {
            if value.fract() != 0.0 {
                return Err(format!("\"{s}\": a packet count must be whole"));
            }
            if value > MAX_BUFFER_PACKETS as f64 {
                return Err(format!(
                    "\"{s}\" is above {MAX_BUFFER_PACKETS}pkts, the largest buffer in packets; {LARGER_BUFFER}"
                ));
            }
            Ok(BufferSpec::Packets(value as u64))
        }
        _ if is(BDP_UNITS) => {
            let multiple = if unit.starts_with('%') { value / 100.0 } else { value };
            if multiple > MAX_BUFFER_BDP {
                return Err(format!(
                    "\"{s}\" is above {MAX_BUFFER_BDP}bdp, the largest buffer in BDPs (1000 BDP queue 40 s on a 40 ms path); {LARGER_BUFFER}"
                ));
            }
            Ok(BufferSpec::Bdp(multiple))
        }
        _ => match size(t) {
            Ok(bytes) if bytes > MAX_BUFFER_BYTES => Err(format!(
                "\"{s}\" is above 100GB, the largest buffer in bytes (routers have a few GB); {LARGER_BUFFER}"
            )),
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

/// Serializes a time as seconds (the JSON form of every duration).
pub(crate) fn as_secs<S: Serializer>(t: &Time, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(cclab_wire::time::to_secs_f64(*t))
}

/// A time for messages, in the largest unit that keeps it at least 1: "20s",
/// "500ms", "1.5us", "1ns".
pub fn fmt_time(t: Time) -> String {
    let (scale, unit) = match t {
        0 => return "0s".to_string(),
        t if t >= 1_000_000_000 => (1e9, "s"),
        t if t >= 1_000_000 => (1e6, "ms"),
        t if t >= 1_000 => (1e3, "us"),
        _ => (1.0, "ns"),
    };
    format!("{}{unit}", t as f64 / scale)
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
        assert_eq!(buffer("1000bdp"), Ok(BufferSpec::Bdp(1000.0)));
        assert_eq!(buffer("100000%bdp"), Ok(BufferSpec::Bdp(1000.0)));
        assert_eq!(buffer("100000000pkts"), Ok(BufferSpec::Packets(100_000_000)));
        assert_eq!(buffer("100GB"), Ok(BufferSpec::Bytes(100_000_000_000)));
        for (text, range) in [
            ("1e12bdp", "is above 1000bdp"),
            ("100001%bdp", "is above 1000bdp"),
            ("100000001pkts", "is above 100000000pkts"),
            ("101GB", "is above 100GB"),
        ] {
            let message = buffer(text).unwrap_err();
            assert!(message.contains(range) && message.contains("\"unlimited\""), "{message}");
        }
    }
}
