//! Automatic TCP Buffer Tuning (ATBT): Semke, Mahdavi and Mathis, SIGCOMM
//! 1998, as summarised in algorithms.md §9 and in seed paper 004 §2.2.
//!
//! The connection's desired send buffer follows its congestion window, which
//! reflects both the RTT and its share of the bandwidth; a window of data
//! plus room for the window to grow needs about twice cwnd (slow start
//! doubles it in one RTT, fast recovery inflates it). To keep the desire from
//! changing with every ACK it moves only when cwnd leaves a band: the desire
//! stays between `low` x cwnd and `high` x cwnd (2 and 4; the seed: "the
//! desired buffer varies within about 2 to 4 times cwnd").
//!
//! Only the two-level structure is verified in the reference (the desire from
//! cwnd; a max-min fair share of the host's memory as an *upper limit*, with
//! memory allocated on demand). The 2x and 4x factors and the 500 ms period
//! are marked unverified there (§9 and §13 item 5); the seed states both, so
//! they are the defaults here. The fair share itself is [`super::share`]'s
//! `host_limits` with `Sharing::MaxMin`; the host recomputes it periodically,
//! by default every 500 ms (BSD's `tcp_slowtimo`, PR_SLOWHZ = 2, as in the
//! seed), which is the host's setting, not this policy's.
//!
//! Decisions where the sources are silent:
//! - **The hysteresis**: the last desire is kept and clamped into
//!   `[low x cwnd, high x cwnd]` on each call, so it moves only when cwnd
//!   leaves the band, and then to the band's nearest edge: up to `low x cwnd`
//!   as the window grows, down to `high x cwnd` after the window has shrunk
//!   to below a quarter of it (the defaults). Before any desire, it starts at
//!   `low x cwnd`.
//! - **Rounding**: both edges are rounded up to whole bytes.
//! - **`min`**: the desire is never below it (4 KB by default, the order of
//!   the minimum socket buffer of BSD and Linux), so a connection whose
//!   window collapsed to one segment after a timeout can still send it.

use super::{BufferInputs, SendBufferDescriptor, SendBufferPolicy};
use cclab_wire::{Descriptor, ParamDefault, ParamError, ParamType, Parameter, Params, Role, Time};

pub const DESCRIPTOR: SendBufferDescriptor = Descriptor {
    name: "atbt",
    role: Role::SendBuffer,
    summary: "desire follows cwnd inside a [2 cwnd, 4 cwnd] band; a host cap is shared max-min fairly",
    source: "Semke, Mahdavi, Mathis, SIGCOMM 1998 (reference §9, factors unverified); seed paper 004 §2.2",
    parameters: &[
        Parameter {
            name: "low",
            ty: ParamType::Number,
            unit: "x cwnd",
            min: 1.0,
            max: 16.0,
            default: ParamDefault::Value("2"),
            meaning: "lower edge of the band: the desire rises to low x cwnd when below it",
        },
        Parameter {
            name: "high",
            ty: ParamType::Number,
            unit: "x cwnd",
            min: 1.0,
            max: 16.0,
            default: ParamDefault::Value("4"),
            meaning: "upper edge of the band (at least low): the desire falls to high x cwnd when above it",
        },
        super::MIN_BUFFER,
    ],
    metrics: &[],
    build,
};

fn build(params: &Params) -> Result<Box<dyn SendBufferPolicy>, ParamError> {
    let (low, high) = (params.number("low")?, params.number("high")?);
    if high < low {
        return Err(ParamError { name: "high".into(), problem: "is below low: the band would be empty" });
    }
    Ok(Box::new(Atbt::new(low, high, params.size("min")?)))
}

#[derive(Clone, Debug, PartialEq)]
pub struct Atbt {
    low: f64,
    high: f64,
    min: u64,
    /// The desire inside the band, before `min`; `None` before the first call.
    banded: Option<u64>,
}

impl Atbt {
    pub fn new(low: f64, high: f64, min: u64) -> Self {
        Self { low, high, min, banded: None }
    }
}

impl SendBufferPolicy for Atbt {
    fn name(&self) -> &'static str {
        "atbt"
    }

    fn desire(&mut self, _now: Time, inputs: &BufferInputs) -> u64 {
        let cwnd = inputs.cwnd_bytes as f64;
        let (lower, upper) = ((self.low * cwnd).ceil() as u64, (self.high * cwnd).ceil() as u64);
        // `max` then `min`, not `clamp`: clamp panics on an empty band, which
        // build refuses but `new` does not.
        let banded = self.banded.unwrap_or(lower).max(lower).min(upper);
        self.banded = Some(banded);
        banded.max(self.min)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::{defaults, SEND_BUFFER_POLICIES};
    use cclab_wire::{ParamValue, Params};

    fn with_cwnd(cwnd_bytes: u64) -> BufferInputs {
        BufferInputs { mss: 1000, cwnd_bytes, ..BufferInputs::default() }
    }

    fn atbt() -> Atbt {
        Atbt::new(2.0, 4.0, 4000)
    }

    #[test]
    fn starts_at_twice_cwnd() {
        assert_eq!(atbt().desire(0, &with_cwnd(10_000)), 20_000);
    }

    #[test]
    fn desire_moves_only_when_cwnd_leaves_the_band() {
        let mut a = atbt();
        assert_eq!(a.desire(0, &with_cwnd(10_000)), 20_000);
        // Growth: 2 x 15,000 = 30,000 > 20,000, the desire rises to the lower edge.
        assert_eq!(a.desire(1, &with_cwnd(15_000)), 30_000);
        // Halving: the band is [15,000, 30,000] and 30,000 is in it: no change.
        assert_eq!(a.desire(2, &with_cwnd(7_500)), 30_000);
        // Within the band, small changes either way: no change.
        assert_eq!(a.desire(3, &with_cwnd(9_000)), 30_000);
        assert_eq!(a.desire(4, &with_cwnd(7_600)), 30_000);
        // Below a quarter: 4 x 5,000 = 20,000 < 30,000, the desire falls to the upper edge.
        assert_eq!(a.desire(5, &with_cwnd(5_000)), 20_000);
        // Growing back: the band [18,000, 36,000] holds 20,000; [22,000, 44,000] does not.
        assert_eq!(a.desire(6, &with_cwnd(9_000)), 20_000);
        assert_eq!(a.desire(7, &with_cwnd(11_000)), 22_000);
    }

    #[test]
    fn desire_is_never_below_min() {
        let mut a = atbt();
        // One segment after a timeout: 2 x 1,000 = 2,000 < 4,000.
        assert_eq!(a.desire(0, &with_cwnd(1_000)), 4_000);
        // The band still tracks the window beneath the floor: 2 x 3,000 = 6,000.
        assert_eq!(a.desire(1, &with_cwnd(3_000)), 6_000);
        assert_eq!(a.desire(2, &with_cwnd(0)), 4_000);
    }

    #[test]
    fn shares_max_min_with_weight_one() {
        let a = atbt();
        assert_eq!((a.share_weight(), a.sharing()), (1.0, crate::buffer::Sharing::MaxMin));
    }

    #[test]
    fn defaults_build_and_an_empty_band_is_refused() {
        let mut a = defaults::send_buffer_policy("atbt").expect("atbt builds at its defaults");
        assert_eq!(a.desire(0, &with_cwnd(10_000)), 20_000);
        let mut params = Params::new();
        params.insert("low", ParamValue::Number(3.0));
        params.insert("high", ParamValue::Number(2.0));
        params.insert("min", ParamValue::Size(4000));
        let atbt = SEND_BUFFER_POLICIES.iter().find(|d| d.name == "atbt").expect("listed");
        let refused = (atbt.build)(&params).err().map(|e| e.name);
        assert_eq!(refused.as_deref(), Some("high"));
        params.insert("high", ParamValue::Number(3.0));
        assert!((atbt.build)(&params).is_ok(), "low = high is a band of one point");
    }
}
