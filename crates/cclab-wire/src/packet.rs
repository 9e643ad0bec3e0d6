//! The packet: a small plain struct moved by value through the network.
//!
//! A packet has three parts. Routing fields (`src`, `dst`, `to_endpoint`,
//! `flow`) are stamped by the driver and are all the network looks at, besides
//! the size on the wire and the congestion-mark bits a queue may set. The
//! protocol header ([`Header`]) is written and read only by endpoints: the
//! engine never looks inside it, so a new transport adds a header variant and
//! nothing else changes.

use crate::time::Time;

pub type NodeId = u32;
pub type LinkId = u32;
pub type EndpointId = u32;
/// A connection's identity for the whole run: never reused, so a packet that
/// arrives after its connection closed is recognised as an orphan.
pub type FlowId = u32;

/// A packet as links carry it; the engine knows its source and destination
/// nodes (a link moves a packet by its destination alone).
///
/// Exactly two cache lines (128 bytes, `repr(C)` so that no layout change
/// makes it larger): the pool keeps packets on whole lines, and a copy this
/// size is a few vector moves instead of a call to `memcpy`. Together with
/// the 64-byte SACK blocks, the source and destination no longer fitted; at
/// 144 bytes each packet spanned three lines. The fields an endpoint reads on
/// every delivery come first, the SACK blocks last.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct Packet {
    // Stamped by the driver.
    pub to_endpoint: EndpointId,
    pub flow: FlowId,
    /// The ECN-capable transport codepoint the sender set (RFC 3168 §5):
    /// not ECN-capable, ECT(0), or ECT(1), which identifies L4S traffic
    /// (RFC 9331 §4).
    pub ect: Ect,
    /// A queue marked this packet: Congestion Experienced (RFC 3168), or a
    /// congestion warning (TCP-Jersey); what the mark means is the queue's business.
    pub ce: bool,
    /// Bytes on the wire: payload plus every header.
    pub wire_bytes: u32,
    pub header: Header,
}

impl Packet {
    /// A packet carrying `header`, `wire_bytes` long, with the driver's fields unset.
    #[inline]
    pub fn new(header: Header, wire_bytes: u32) -> Self {
        Self { to_endpoint: 0, flow: 0, wire_bytes, ect: Ect::NotEct, ce: false, header }
    }

    pub fn tcp(&self) -> Option<&TcpHeader> {
        match &self.header {
            Header::Tcp(h) => Some(h),
            _ => None,
        }
    }

    pub fn udp(&self) -> Option<&UdpHeader> {
        match &self.header {
            Header::Udp(h) => Some(h),
            _ => None,
        }
    }

    /// The traffic kind a link counts this packet's departure under. It is
    /// read here, beside the headers, so the engine can count by kind without
    /// looking inside a header itself.
    #[inline]
    pub fn traffic_kind(&self) -> TrafficKind {
        match &self.header {
            Header::Tcp(h) => match h.kind {
                TcpKind::Data => TrafficKind::TcpData,
                TcpKind::Ack => TrafficKind::TcpAck,
            },
            Header::Udp(_) => TrafficKind::Udp,
            Header::Udt(_) => TrafficKind::Udt,
        }
    }
}

/// The ECN-capable transport codepoint of a packet's IP header (RFC 3168
/// §5). Congestion Experienced is kept apart, in [`Packet::ce`], so that a
/// queue's mark does not erase which codepoint the sender chose: a DualPI2
/// classifier (RFC 9332 §2.3) and a trace still see it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Ect {
    /// Not-ECT: a queue drops where it would mark.
    #[default]
    NotEct,
    /// ECT(0): classic ECN (RFC 3168).
    Ect0,
    /// ECT(1): the L4S identifier (RFC 9331 §4).
    Ect1,
}

impl Ect {
    /// A queue may mark this packet instead of dropping it.
    #[inline]
    pub fn capable(self) -> bool {
        self != Ect::NotEct
    }

    /// The codepoint's two bits in an IP header (RFC 3168 §5), with CE (11)
    /// when the packet was marked.
    pub fn ip_bits(self, ce: bool) -> u8 {
        match (self, ce) {
            (_, true) => 0b11,
            (Ect::NotEct, false) => 0b00,
            (Ect::Ect1, false) => 0b01,
            (Ect::Ect0, false) => 0b10,
        }
    }
}

/// The classes of traffic a link counts departures by: what the header tells
/// without any lookup (a flow's group would need a table per hop).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrafficKind {
    /// TCP segments (payload-carrying, including a FIN).
    TcpData = 0,
    /// Pure TCP acknowledgments.
    TcpAck = 1,
    Udp = 2,
    Udt = 3,
}

impl TrafficKind {
    pub const COUNT: usize = 4;
    pub const ALL: [TrafficKind; TrafficKind::COUNT] =
        [TrafficKind::TcpData, TrafficKind::TcpAck, TrafficKind::Udp, TrafficKind::Udt];

    /// Its position in a per-kind counter array.
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }
}

/// The protocol header: one variant per transport.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Header {
    Tcp(TcpHeader),
    Udp(UdpHeader),
    Udt(UdtHeader),
}

/// A list of at most `N` items stored inline, so a header stays a plain value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounded<T: Copy + Default, const N: usize> {
    len: u8,
    items: [T; N],
}

impl<T: Copy + Default, const N: usize> Default for Bounded<T, N> {
    fn default() -> Self {
        Self { len: 0, items: [T::default(); N] }
    }
}

impl<T: Copy + Default, const N: usize> Bounded<T, N> {
    /// Appends an item; returns false (and ignores it) when full.
    pub fn push(&mut self, item: T) -> bool {
        push_after(&mut self.items, &mut self.len, item)
    }

    pub fn as_slice(&self) -> &[T] {
        &self.items[..self.len as usize]
    }

    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Writes `item` after the first `len` of `items` and counts it; returns
/// false (and ignores it) when they are all in use. The count is apart from
/// the items so that a header can keep it among its small fields.
#[inline]
fn push_after<T>(items: &mut [T], len: &mut u8, item: T) -> bool {
    let Some(slot) = items.get_mut(*len as usize) else { return false };
    *slot = item;
    *len += 1;
    true
}

// ------------------------------------------------------------------ TCP

/// Up to four SACK blocks (RFC 2018); three fit beside the timestamp option.
pub const MAX_SACK_BLOCKS: usize = 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcpKind {
    Data,
    Ack,
}

/// A TCP segment's header. Sequence numbers are 64-bit byte offsets from the
/// start of the stream, so they never wrap. Laid out in declaration order
/// (`repr(C)`, see [`Packet`]): the SACK blocks, present only while a
/// receiver holds out-of-order data, last.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct TcpHeader {
    pub kind: TcpKind,
    /// ECN-Echo: the receiver saw a congestion mark.
    pub ece: bool,
    /// The last segment of the stream: the application will send nothing more.
    pub fin: bool,
    sack_len: u8,
    /// Payload bytes.
    pub len: u32,
    /// First payload byte (data).
    pub seq: u64,
    /// Cumulative acknowledgment: next byte expected (ACKs).
    pub ack: u64,
    /// Advertised receive window in bytes (ACKs), at most 4 GiB (RFC 7323's
    /// scaled window reaches 1 GiB); u32 leaves room for the AccECN count.
    pub window: u32,
    /// AccECN's ECEB counter (draft-ietf-tcpm-accurate-ecn §3.2.3): the
    /// payload bytes of CE-marked data the receiver has seen, wrapping; sent
    /// on every ACK of a connection that negotiated AccECN, 0 otherwise. The
    /// draft's field is 24 bits; 32 wrap later and change nothing else.
    pub ce_bytes: u32,
    /// Timestamp value (sender clock) and echo reply (RFC 7323).
    pub ts_val: Time,
    pub ts_ecr: Time,
    /// SACK blocks `[left, right)` in byte sequence space, most recent first:
    /// the first `sack_len`.
    sack_blocks: [(u64, u64); MAX_SACK_BLOCKS],
}

impl TcpHeader {
    /// A header of the given kind with every field zero.
    #[inline]
    pub fn new(kind: TcpKind) -> Self {
        Self {
            kind,
            ece: false,
            fin: false,
            sack_len: 0,
            len: 0,
            seq: 0,
            ack: 0,
            window: 0,
            ce_bytes: 0,
            ts_val: 0,
            ts_ecr: 0,
            sack_blocks: [(0, 0); MAX_SACK_BLOCKS],
        }
    }

    /// The SACK blocks `[left, right)`, most recent first.
    #[inline]
    pub fn sack(&self) -> &[(u64, u64)] {
        &self.sack_blocks[..self.sack_len as usize]
    }

    /// Appends a SACK block; returns false (and ignores it) when
    /// [`MAX_SACK_BLOCKS`] are already there.
    pub fn push_sack(&mut self, block: (u64, u64)) -> bool {
        push_after(&mut self.sack_blocks, &mut self.sack_len, block)
    }
}

// ------------------------------------------------------------------ UDP

/// A UDP datagram as a measuring source sends it: the sequence number and send
/// time let the sink count losses and one-way delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UdpHeader {
    pub seq: u64,
    pub sent_at: Time,
    /// Application payload bytes (the wire size adds the UDP and IP headers).
    pub payload: u32,
}

// ------------------------------------------------------------------ UDT

/// Ranges a UDT NAK can carry in one packet. UDT 4 packs its loss list into one
/// datagram; a model keeps a fixed bound so the packet stays a plain value, and
/// a longer list goes out over several NAKs.
pub const MAX_UDT_LOSS_RANGES: usize = 8;

/// Inclusive ranges of lost UDT sequence numbers (UDT 4 `CPacket` NAK
/// encoding: a single number, or first-with-flag and last).
pub type UdtLossList = Bounded<(u32, u32), MAX_UDT_LOSS_RANGES>;

/// UDT 4 packets (draft-gg-udt §3; UDT 4.11 `src/packet.cpp`): data packets
/// with a 31-bit sequence number, and control packets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum UdtHeader {
    Data { seq: u32, msg: u32, timestamp_us: u32, dst_socket: u32 },
    Control { timestamp_us: u32, dst_socket: u32, body: UdtControl },
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum UdtControl {
    Handshake {
        version: u32,
        socket_type: u32,
        initial_seq: u32,
        mss: u32,
        flow_window: u32,
        request: i32,
        socket_id: u32,
        /// The listener's SYN cookie, echoed by a rendezvous-free caller.
        cookie: u32,
        /// The peer's IP address as UDT 4 stores it (IPv4 in the first word).
        peer_ip: [u32; 4],
    },
    KeepAlive,
    /// A full ACK; the rate fields are present only when more than SYN has passed since the last ones.
    Ack {
        ack_seq: u32,
        last_seq: u32,
        rtt_us: u32,
        rtt_var_us: u32,
        available_buffer: u32,
        rates: Option<UdtRates>,
    },
    /// A light ACK: the acknowledged sequence number alone.
    LightAck {
        last_seq: u32,
    },
    Nak {
        losses: UdtLossList,
    },
    Shutdown,
    Ack2 {
        ack_seq: u32,
    },
    /// Congestion or delay warning (type 4).
    Warning,
    /// The sender gave up on a message: its number and sequence range (type 7).
    DropRequest {
        msg: u32,
        first_seq: u32,
        last_seq: u32,
    },
    /// An error signalled by the peer (type 8).
    PeerError {
        code: u32,
    },
}

/// The receiver's packet arrival speed and estimated link capacity, packets per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UdtRates {
    pub arrival: u32,
    pub capacity: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sack_blocks_hold_at_most_four() {
        let mut h = TcpHeader::new(TcpKind::Ack);
        for i in 0..4 {
            assert!(h.push_sack((i * 10, i * 10 + 5)));
        }
        assert!(!h.push_sack((100, 105)));
        assert_eq!(h.sack().len(), 4);
        assert_eq!(h.sack()[0], (0, 5));
    }

    #[test]
    fn udt_loss_list_is_bounded() {
        let mut l = UdtLossList::default();
        for i in 0..MAX_UDT_LOSS_RANGES as u32 {
            assert!(l.push((i * 10, i * 10 + 2)));
        }
        assert!(!l.push((1000, 1000)));
        assert_eq!(l.as_slice().len(), MAX_UDT_LOSS_RANGES);
    }

    #[test]
    fn packet_stays_small() {
        // Two cache lines: packets are copied into the pool, and out of the cache while in flight.
        assert_eq!(std::mem::size_of::<Packet>(), 128);
    }

    #[test]
    fn the_fields_every_delivery_reads_come_first_and_the_sack_blocks_last() {
        let mut h = TcpHeader::new(TcpKind::Ack);
        h.push_sack((1, 2));
        let p = Packet::new(Header::Tcp(h), 40);
        let Header::Tcp(t) = &p.header else { unreachable!() };
        let start = &p as *const Packet as usize;
        fn span<T>(start: usize, field: &T) -> (usize, usize) {
            let first = field as *const T as usize - start;
            (first, first + std::mem::size_of::<T>())
        }
        macro_rules! spans {
            ($($field:expr),*) => { [$(span(start, &$field)),*] };
        }
        let read_on_delivery = spans!(
            p.to_endpoint,
            p.flow,
            p.ce,
            t.kind,
            t.ece,
            t.fin,
            t.sack_len,
            t.len,
            t.seq,
            t.ack,
            t.window,
            t.ce_bytes,
            t.ts_val,
            t.ts_ecr
        );
        for (first, end) in read_on_delivery {
            assert!(end <= 64, "a field at bytes {first}..{end}");
        }
        let (first, end) = span(start, &t.sack_blocks);
        assert!(first >= 64 && end <= 128, "SACK blocks at bytes {first}..{end}");
    }

    #[test]
    fn header_accessors_see_only_their_protocol() {
        let p = Packet::new(Header::Tcp(TcpHeader::new(TcpKind::Ack)), 40);
        assert!(p.tcp().is_some() && p.udp().is_none());
        let u = Packet::new(Header::Udp(UdpHeader { seq: 1, sent_at: 0, payload: 972 }), 1000);
        assert_eq!(u.udp().map(|h| h.seq), Some(1));
        assert!(u.tcp().is_none());
    }
}
