//! A fixed send buffer: the connection desires `size` bytes whatever its
//! state, as a socket whose `SO_SNDBUF` is set once. The baseline the tuning
//! policies are compared against: seed paper 004 §1 names the fixed sizes of
//! the time, 256 KB in Unix (BSD) TCP and 64 KB in Linux, given to every flow
//! whatever its path, and §4.2 compares RTBA with an over-provisioned 320 KB.
//! The default is Linux's 64 KB (the largest window without window scaling).
//!
//! Decisions where the sources are silent:
//! - **64KB is 64,000 bytes** (the scenario's units are SI; write `"64KiB"`
//!   for 65,536).
//! - Under a host cap the fixed desires share it max-min fairly, like ATBT's,
//!   each with weight 1.

use super::{BufferInputs, SendBufferDescriptor, SendBufferPolicy};
use cclab_wire::{Descriptor, ParamDefault, ParamError, ParamType, Parameter, Params, Role, Time};

pub const DESCRIPTOR: SendBufferDescriptor = Descriptor {
    name: "fixed",
    role: Role::SendBuffer,
    summary: "a constant send buffer of `size` bytes (SO_SNDBUF set once)",
    source: "seed paper 004 §1 (Linux 64 KB, Unix 256 KB), §4.2 (an over-provisioned 320 KB)",
    parameters: &[Parameter {
        name: "size",
        ty: ParamType::Size,
        unit: "",
        min: 1e3,
        max: 1e9,
        default: ParamDefault::Value("64KB"),
        meaning: "the send buffer, in bytes",
    }],
    metrics: &[],
    build,
};

fn build(params: &Params) -> Result<Box<dyn SendBufferPolicy>, ParamError> {
    Ok(Box::new(Fixed::new(params.size("size")?)))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fixed {
    size: u64,
}

impl Fixed {
    pub fn new(size: u64) -> Self {
        Self { size }
    }
}

impl SendBufferPolicy for Fixed {
    fn name(&self) -> &'static str {
        "fixed"
    }

    fn desire(&mut self, _now: Time, _inputs: &BufferInputs) -> u64 {
        self.size
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::defaults;
    use cclab_wire::time::millis;

    #[test]
    fn desires_its_size_whatever_the_connection_does() {
        let mut f = Fixed::new(320_000);
        let idle = BufferInputs::default();
        let busy = BufferInputs { mss: 1460, cwnd_bytes: 1 << 30, srtt: millis(10), ..idle };
        assert_eq!(f.desire(0, &idle), 320_000);
        assert_eq!(f.desire(millis(500), &busy), 320_000);
        assert_eq!((f.share_weight(), f.sharing()), (1.0, crate::buffer::Sharing::MaxMin));
    }

    #[test]
    fn default_is_64_kb() {
        let mut f = defaults::send_buffer_policy("fixed").expect("fixed is registered");
        assert_eq!(f.desire(0, &BufferInputs::default()), 64_000);
    }
}
