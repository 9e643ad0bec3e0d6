//! UDT over real sockets: what the simulator's UDT model leaves out because a
//! simulated connection starts connected. First, UDT 4's connection handshake.

pub mod handshake;
pub mod stream;
