//! UDT over real sockets: what the simulator's UDT model leaves out because a
//! simulated connection starts connected (UDT 4's handshake), what a transfer
//! carries (the stream's framing, the content), and the socket loops of
//! `cclab send` and `cclab recv` that drive the simulator's own endpoints.

pub mod content;
pub mod driver;
pub mod handshake;
pub mod recv;
pub mod send;
pub mod stream;
