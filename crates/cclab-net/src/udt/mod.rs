//! UDT over real sockets: what the simulator's UDT model leaves out because a
//! simulated connection starts connected (UDT 4's handshake), what a transfer
//! carries (the stream's framing, the content), and the socket loops of
//! `cclab send` and `cclab recv` that drive the simulator's own endpoints.

pub mod handshake;
pub mod recv;
pub mod send;

use crate::driver::os_random;
use cclab_wire::{udt_codec, UdtHeader};

/// UDT 4.11's defaults (`CUDT::CUDT`): MSS 1500 bytes; flight flag size 25 600 packets; buffers 8192 packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tuning {
    pub mss: u32,
    /// The largest flow window this side allows (`UDT_FC`).
    pub flight_flag_size: u32,
    /// Packets this side buffers (`UDT_RCVBUF` and `UDT_SNDBUF`, in packets).
    pub buffer_packets: u32,
}

impl Default for Tuning {
    fn default() -> Self {
        Self { mss: 1500, flight_flag_size: 25_600, buffer_packets: 8192 }
    }
}

/// A UDT socket ID: random, non-zero (0 addresses a listener), 31 bits as UDT 4 draws them.
pub fn socket_id() -> u32 {
    ((os_random() as u32) & 0x7FFF_FFFF).max(1)
}

/// Encodes `header` and appends `payload`, into `buf`.
pub fn encode_into(header: &UdtHeader, payload: &[u8], buf: &mut Vec<u8>) {
    buf.clear();
    // The endpoints produce only numbers within 31 bits and well-formed loss lists.
    if udt_codec::encode(header, buf).is_ok() {
        buf.extend_from_slice(payload);
    } else {
        buf.clear();
    }
}
