//! UDT (Gu and Grossman, Computer Networks 51(7), 2007; draft-gg-udt-03;
//! UDT 4.11 `src/core.cpp`), a reliable transport over UDP that controls a
//! sending *rate* (an inter-packet period) rather than a window, as a sans-IO
//! model: [`sender::UdtSender`] and [`receiver::UdtReceiver`] take `(now,
//! packet)` and return packets, like the TCP endpoints, so the simulator and
//! a socket loop drive the same code. Their packets are [`UdtHeader`]s that
//! [`cclab_wire::udt_codec`] encodes as UDT 4 lays them out.
//!
//! The connection starts established, with the values a UDT 4 handshake
//! would have agreed ([`UdtConfig`]: initial sequence number, MSS, flow
//! window), as ns-2's one-way TCP agents start without a SYN; the real
//! transport performs the handshake itself and then builds these endpoints.
//!
//! [`UdtHeader`]: cclab_wire::UdtHeader

pub mod cc;
pub mod loss_list;
pub mod receiver;
pub mod sender;
pub mod seq;
pub mod time_window;

#[cfg(test)]
mod tests;

use crate::app::App;
use cclab_wire::time::millis;
use cclab_wire::{Counters, Header, Outbox, Packet, Time, UdtControl, UdtHeader};

/// UDT's timer granularity: full ACKs and rate control every SYN (`m_iSYNInterval`).
pub const SYN: Time = millis(10);
/// IP and UDP headers, bytes.
pub const IP_UDP_BYTES: u32 = 28;
/// UDT's own header, bytes.
pub const UDT_HEADER_BYTES: u32 = cclab_wire::udt_codec::HEADER_BYTES as u32;
/// A light ACK every this many packets (`m_iSelfClockInterval`).
pub const LIGHT_ACK_PACKETS: u64 = 64;

/// What a UDT 4 handshake agrees and the socket options that shape a
/// connection (UDT 4.11 defaults).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UdtConfig {
    /// Bytes of a full packet on the wire, IP and UDP headers included (`UDT_MSS`, 1500).
    pub mss: u32,
    /// Initial sequence number of the data direction.
    pub isn: u32,
    /// The receiver's flow window from the handshake, `min(UDT_RCVBUF, UDT_FC)`
    /// packets (8192): the sender's first flow window and the window above
    /// which slow start ends.
    pub flow_window: u32,
    /// Receive buffer, packets (`UDT_RCVBUF`, 8192).
    pub receive_buffer: u32,
    /// Send buffer, packets (`UDT_SNDBUF`, 8192): it holds every packet not yet
    /// acknowledged by a full ACK, so at most this many are beyond the last one.
    pub send_buffer: u32,
    /// The EXP timer's floor, per expiration (`m_ullMinExpInt`, 300 ms).
    pub min_exp: Time,
    /// When the connection starts (the sender's first packet may leave).
    pub start: Time,
    pub app: App,
    /// Socket IDs carried in headers (each side's destination).
    pub sender_socket: u32,
    pub receiver_socket: u32,
}

impl Default for UdtConfig {
    fn default() -> Self {
        Self {
            mss: 1500,
            isn: 0,
            flow_window: 8192,
            receive_buffer: 8192,
            send_buffer: 8192,
            min_exp: millis(300),
            start: 0,
            app: App::Bulk,
            sender_socket: 1,
            receiver_socket: 2,
        }
    }
}

impl UdtConfig {
    /// Payload bytes of a full data packet (1456 with a 1500-byte MSS).
    pub fn payload(&self) -> u32 {
        self.mss - IP_UDP_BYTES - UDT_HEADER_BYTES
    }
}

/// A control packet to `dst_socket`, stamped with the time since `start`,
/// as long on the wire as IP, UDP and UDT 4's encoding of it.
pub fn control_packet(now: Time, start: Time, dst_socket: u32, body: UdtControl) -> Packet {
    let header = UdtHeader::Control { timestamp_us: timestamp_us(now, start), dst_socket, body };
    let wire = IP_UDP_BYTES + cclab_wire::udt_codec::encoded_len(&header) as u32;
    Packet::new(Header::Udt(header), wire)
}

/// Puts `packet` in `out`, counting it as sent.
pub fn emit(counters: &mut Counters, packet: Packet, out: &mut Outbox) {
    counters.packets_sent += 1;
    counters.bytes_sent += packet.wire_bytes as u64;
    out.send(packet);
}

/// Microseconds since the connection started, as UDT stamps its packets.
pub fn timestamp_us(now: Time, start: Time) -> u32 {
    (now.saturating_sub(start) / 1000) as u32
}
