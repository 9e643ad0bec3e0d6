//! TCP over real sockets: the simulator's sans-IO TCP endpoints carried in UDP
//! datagrams (cclab's own encapsulation, [`codec`]), with a connection set-up
//! they do not have ([`handshake`]), a sending host that runs several
//! connections under one send-buffer memory cap ([`send`]) and a receiver that
//! takes several ([`recv`]).

pub mod codec;
pub mod handshake;
pub mod recv;
pub mod send;

use crate::emulator::IPV4_UDP_HEADER_BYTES;
use crate::error::{invalid, TransferError};

/// Bytes of headers in a data packet without SACK blocks: IPv4, UDP and the segment's header.
pub const PACKET_HEADER_BYTES: u32 = IPV4_UDP_HEADER_BYTES + codec::SEGMENT_HEADER_BYTES as u32;

/// The payload bytes per full segment in packets of `packet` bytes, headers included (`--mss`).
pub fn payload_of(packet: u32) -> Result<u32, TransferError> {
    packet.checked_sub(PACKET_HEADER_BYTES).filter(|&p| p > 0).ok_or_else(|| {
        invalid("--mss", format!("{packet} leaves no payload after {PACKET_HEADER_BYTES} bytes of headers"))
    })
}
