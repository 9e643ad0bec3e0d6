//! UDP as two sans-IO endpoints: a constant-bit-rate [`source::CbrSource`]
//! with optional on/off periods, and a [`sink::UdpSink`] that counts what
//! arrives, what went missing (sequence gaps) and the one-way delay. UDP has no
//! feedback: it is the unresponsive cross traffic of the wireless study.

pub mod sink;
pub mod source;

pub use sink::UdpSink;
pub use source::{CbrConfig, CbrSource};

/// IPv4 (20 bytes) and UDP (8 bytes) headers.
pub const UDP_IP_HEADER_BYTES: u32 = 28;
