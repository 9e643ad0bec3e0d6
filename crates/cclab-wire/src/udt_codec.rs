//! UDT 4's wire format for every packet [`UdtHeader`] models, so that the
//! real-network mode and the reference implementation (UDT 4.11,
//! `libudt-dev`) read the same bytes the simulator's endpoints mean.
//!
//! The layout, as UDT 4.11 builds and reads it (`src/packet.cpp` for
//! `CPacket::pack` and `CHandShake::serialize`, `src/channel.cpp` for the
//! byte order, `src/core.cpp` for the ACK and NAK contents), all fields
//! 32-bit big-endian words:
//!
//! - header, 16 bytes. Data: `0 | seq (31 bits)`, `ff | o | msg (29 bits)`
//!   (here the whole word), timestamp (µs), destination socket ID. Control:
//!   `1 | type (15 bits) | reserved (16 bits)`, additional information,
//!   timestamp, destination socket ID;
//! - control information after it: handshake (type 0) 12 words: version,
//!   socket type, initial sequence number, MSS, flow window, request type,
//!   socket ID, cookie, peer IP (4 words); ACK (2) with the ACK sequence
//!   number in the additional information: the acknowledged sequence number,
//!   then RTT, RTT variance (µs) and available buffer (packets), then,
//!   when present, the arrival speed and the link capacity (packets per
//!   second), so 16 or 24 bytes; a light ACK is an ACK of 4 bytes with ACK
//!   sequence number 0; NAK (3) the loss list, a single lost number as is
//!   and a range of two or more as `first | 0x8000_0000`, `last`; ACK2 (6)
//!   the ACK sequence number in the additional information; message drop
//!   request (7) the message number there and the first and last sequence
//!   numbers after; error (8) its code there. Keep-alive (1), warning (4),
//!   shutdown (5), ACK2 and error carry one padding word (UDT 4 sends 4
//!   bytes because `writev` will not send an empty vector).
//!
//! Decoding is strict: a packet shorter than its type needs, a control type
//! UDT 4 does not define here (0x7FFF, user-defined) or a loss list whose
//! range lacks its end is refused with a typed error, never a panic.

use crate::packet::{UdtControl, UdtHeader, UdtLossList, UdtRates, MAX_UDT_LOSS_RANGES};

/// Bytes of the UDT header.
pub const HEADER_BYTES: usize = 16;
/// Bytes of the handshake's control information (`CHandShake::m_iContentSize`).
pub const HANDSHAKE_BYTES: usize = 48;
/// Set on control packets, and on the first number of a loss range.
const FLAG: u32 = 0x8000_0000;
/// Sequence and message numbers are 31 bits (UDT 4 `CSeqNo::m_iMaxSeqNo`).
const SEQ_MASK: u32 = 0x7FFF_FFFF;

mod kind {
    pub const HANDSHAKE: u32 = 0;
    pub const KEEP_ALIVE: u32 = 1;
    pub const ACK: u32 = 2;
    pub const NAK: u32 = 3;
    pub const WARNING: u32 = 4;
    pub const SHUTDOWN: u32 = 5;
    pub const ACK2: u32 = 6;
    pub const DROP_REQUEST: u32 = 7;
    pub const PEER_ERROR: u32 = 8;
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UdtEncodeError {
    /// A sequence number of 2^31 or more: UDT numbers packets in 31 bits.
    SequenceOutOfRange(u32),
    /// A loss range whose last number precedes its first.
    InvertedLossRange(u32, u32),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UdtDecodeError {
    /// Fewer bytes than the packet's type needs: (needed, got).
    Truncated { needed: usize, got: usize },
    /// A control type this codec does not model (UDT 4's 0x7FFF user type, or undefined).
    UnknownControlType(u32),
    /// A NAK whose last range start has no end, or more ranges than a header holds.
    BadLossList,
}

impl std::fmt::Display for UdtEncodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::SequenceOutOfRange(n) => write!(f, "UDT sequence number {n} does not fit in 31 bits"),
            Self::InvertedLossRange(a, b) => write!(f, "UDT loss range {a}..{b} ends before it starts"),
        }
    }
}

impl std::fmt::Display for UdtDecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Truncated { needed, got } => {
                write!(f, "UDT packet of {got} bytes, its type needs {needed}")
            }
            Self::UnknownControlType(t) => write!(f, "UDT control type {t:#x} is not modelled"),
            Self::BadLossList => write!(f, "UDT loss list with an unfinished range or too many ranges"),
        }
    }
}

impl std::error::Error for UdtEncodeError {}
impl std::error::Error for UdtDecodeError {}

fn seq(n: u32) -> Result<u32, UdtEncodeError> {
    if n > SEQ_MASK {
        return Err(UdtEncodeError::SequenceOutOfRange(n));
    }
    Ok(n)
}

/// Appends the packet's header and control information to `out` (for a data
/// packet the caller appends the payload).
pub fn encode(header: &UdtHeader, out: &mut Vec<u8>) -> Result<(), UdtEncodeError> {
    // Every field is checked before anything is written, so a refused packet leaves `out` as it was;
    // a data packet (the per-packet case) allocates nothing.
    fn put(out: &mut Vec<u8>, words: impl IntoIterator<Item = u32>) {
        out.extend(words.into_iter().flat_map(u32::to_be_bytes));
    }
    match *header {
        UdtHeader::Data { seq: n, msg, timestamp_us, dst_socket } => {
            put(out, [seq(n)?, msg, timestamp_us, dst_socket]);
        }
        UdtHeader::Control { timestamp_us, dst_socket, body } => {
            let (kind, info, control) = control_words(&body)?;
            put(out, [FLAG | (kind << 16), info, timestamp_us, dst_socket].into_iter().chain(control));
        }
    }
    Ok(())
}

/// Bytes [`encode`] writes for `header` (a data packet's payload not
/// included), computed without encoding: what a simulated packet's wire size needs.
pub fn encoded_len(header: &UdtHeader) -> usize {
    let control = match header {
        UdtHeader::Data { .. } => 0,
        UdtHeader::Control { body, .. } => match body {
            UdtControl::Handshake { .. } => HANDSHAKE_BYTES,
            UdtControl::Ack { rates, .. } => 16 + if rates.is_some() { 8 } else { 0 },
            UdtControl::Nak { losses } => {
                losses.as_slice().iter().map(|(first, last)| if first == last { 4 } else { 8 }).sum()
            }
            UdtControl::DropRequest { .. } => 8,
            UdtControl::KeepAlive
            | UdtControl::LightAck { .. }
            | UdtControl::Warning
            | UdtControl::Shutdown
            | UdtControl::Ack2 { .. }
            | UdtControl::PeerError { .. } => 4,
        },
    };
    HEADER_BYTES + control
}

/// A control packet's type, additional information and control information.
fn control_words(body: &UdtControl) -> Result<(u32, u32, Vec<u32>), UdtEncodeError> {
    const PAD: u32 = 0;
    Ok(match *body {
        UdtControl::Handshake {
            version,
            socket_type,
            initial_seq,
            mss,
            flow_window,
            request,
            socket_id,
            cookie,
            peer_ip,
        } => {
            let mut w = vec![version, socket_type, seq(initial_seq)?, mss, flow_window];
            w.extend([request as u32, socket_id, cookie]);
            w.extend(peer_ip);
            (kind::HANDSHAKE, 0, w)
        }
        UdtControl::KeepAlive => (kind::KEEP_ALIVE, 0, vec![PAD]),
        UdtControl::Ack { ack_seq, last_seq, rtt_us, rtt_var_us, available_buffer, rates } => {
            let mut w = vec![seq(last_seq)?, rtt_us, rtt_var_us, available_buffer];
            if let Some(r) = rates {
                w.extend([r.arrival, r.capacity]);
            }
            (kind::ACK, ack_seq, w)
        }
        UdtControl::LightAck { last_seq } => (kind::ACK, 0, vec![seq(last_seq)?]),
        UdtControl::Nak { losses } => {
            let mut w = Vec::with_capacity(2 * losses.len());
            for &(first, last) in losses.as_slice() {
                // Numbers wrap at 2^31: a range may run from near the top to near 0
                // (UDT 4 compares with `CSeqNo::seqcmp`); it is inverted only when its
                // last number lies behind its first on the circle.
                if last.wrapping_sub(first) & SEQ_MASK >= 0x4000_0000 {
                    return Err(UdtEncodeError::InvertedLossRange(first, last));
                }
                if first == last {
                    w.push(seq(first)?);
                } else {
                    w.extend([FLAG | seq(first)?, seq(last)?]);
                }
            }
            (kind::NAK, 0, w)
        }
        UdtControl::Warning => (kind::WARNING, 0, vec![PAD]),
        UdtControl::Shutdown => (kind::SHUTDOWN, 0, vec![PAD]),
        UdtControl::Ack2 { ack_seq } => (kind::ACK2, ack_seq, vec![PAD]),
        UdtControl::DropRequest { msg, first_seq, last_seq } => {
            (kind::DROP_REQUEST, msg, vec![seq(first_seq)?, seq(last_seq)?])
        }
        UdtControl::PeerError { code } => (kind::PEER_ERROR, code, vec![PAD]),
    })
}

/// Reads one datagram: the header it carries and, for a data packet, its payload.
pub fn decode(bytes: &[u8]) -> Result<(UdtHeader, &[u8]), UdtDecodeError> {
    let need = |needed: usize| {
        if bytes.len() < needed {
            Err(UdtDecodeError::Truncated { needed, got: bytes.len() })
        } else {
            Ok(())
        }
    };
    need(HEADER_BYTES)?;
    let word =
        |i: usize| u32::from_be_bytes([bytes[4 * i], bytes[4 * i + 1], bytes[4 * i + 2], bytes[4 * i + 3]]);
    let (first, info, timestamp_us, dst_socket) = (word(0), word(1), word(2), word(3));
    if first & FLAG == 0 {
        let header = UdtHeader::Data { seq: first, msg: info, timestamp_us, dst_socket };
        return Ok((header, &bytes[HEADER_BYTES..]));
    }
    let control = &bytes[HEADER_BYTES..];
    let words = control.len() / 4;
    let at = |i: usize| word(HEADER_BYTES / 4 + i);
    let body = match (first >> 16) & 0x7FFF {
        kind::HANDSHAKE => {
            need(HEADER_BYTES + HANDSHAKE_BYTES)?;
            UdtControl::Handshake {
                version: at(0),
                socket_type: at(1),
                initial_seq: at(2),
                mss: at(3),
                flow_window: at(4),
                request: at(5) as i32,
                socket_id: at(6),
                cookie: at(7),
                peer_ip: [at(8), at(9), at(10), at(11)],
            }
        }
        kind::KEEP_ALIVE => UdtControl::KeepAlive,
        kind::ACK if words == 1 => UdtControl::LightAck { last_seq: at(0) },
        kind::ACK => {
            need(HEADER_BYTES + 16)?;
            let rates = (words >= 6).then(|| UdtRates { arrival: at(4), capacity: at(5) });
            UdtControl::Ack {
                ack_seq: info,
                last_seq: at(0),
                rtt_us: at(1),
                rtt_var_us: at(2),
                available_buffer: at(3),
                rates,
            }
        }
        kind::NAK => UdtControl::Nak { losses: loss_list((0..words).map(at))? },
        kind::WARNING => UdtControl::Warning,
        kind::SHUTDOWN => UdtControl::Shutdown,
        kind::ACK2 => UdtControl::Ack2 { ack_seq: info },
        kind::DROP_REQUEST => {
            need(HEADER_BYTES + 8)?;
            UdtControl::DropRequest { msg: info, first_seq: at(0), last_seq: at(1) }
        }
        kind::PEER_ERROR => UdtControl::PeerError { code: info },
        other => return Err(UdtDecodeError::UnknownControlType(other)),
    };
    Ok((UdtHeader::Control { timestamp_us, dst_socket, body }, &[]))
}

/// A NAK's loss list from its words: a flagged number starts a range the next word ends.
fn loss_list(mut words: impl Iterator<Item = u32>) -> Result<UdtLossList, UdtDecodeError> {
    let mut losses = UdtLossList::default();
    while let Some(w) = words.next() {
        let range = if w & FLAG != 0 {
            let last = words.next().ok_or(UdtDecodeError::BadLossList)?;
            (w & SEQ_MASK, last)
        } else {
            (w, w)
        };
        if !losses.push(range) {
            return Err(UdtDecodeError::BadLossList);
        }
    }
    debug_assert!(losses.len() <= MAX_UDT_LOSS_RANGES);
    Ok(losses)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn control(body: UdtControl) -> UdtHeader {
        UdtHeader::Control { timestamp_us: 0x0102_0304, dst_socket: 0x0A0B_0C0D, body }
    }

    fn bytes(header: &UdtHeader) -> Vec<u8> {
        let mut out = Vec::new();
        encode(header, &mut out).expect("encodable");
        out
    }

    fn words(hex: &[u32]) -> Vec<u8> {
        hex.iter().flat_map(|w| w.to_be_bytes()).collect()
    }

    fn losses(ranges: &[(u32, u32)]) -> UdtLossList {
        let mut l = UdtLossList::default();
        for &r in ranges {
            assert!(l.push(r));
        }
        l
    }

    /// Every packet type, with values at the edges of their fields, reads back as written.
    #[test]
    fn every_packet_round_trips() {
        let max = SEQ_MASK;
        let rates = Some(UdtRates { arrival: 81_000, capacity: u32::MAX });
        let headers = [
            UdtHeader::Data { seq: max, msg: 0xE000_0001, timestamp_us: u32::MAX, dst_socket: 1 },
            control(UdtControl::Handshake {
                version: 4,
                socket_type: 1,
                initial_seq: max,
                mss: 1500,
                flow_window: 25_600,
                request: -1,
                socket_id: 0x1234_5678,
                cookie: 0xDEAD_BEEF,
                peer_ip: [0x7F00_0001, 0, 0, 0],
            }),
            control(UdtControl::KeepAlive),
            control(UdtControl::Ack {
                ack_seq: 7,
                last_seq: 100,
                rtt_us: 100_000,
                rtt_var_us: 50_000,
                available_buffer: 2,
                rates: None,
            }),
            control(UdtControl::Ack {
                ack_seq: u32::MAX,
                last_seq: max,
                rtt_us: 1,
                rtt_var_us: 0,
                available_buffer: 8192,
                rates,
            }),
            control(UdtControl::LightAck { last_seq: 64 }),
            control(UdtControl::Nak { losses: losses(&[(3, 3), (10, 11), (20, 40), (max, max)]) }),
            control(UdtControl::Nak { losses: UdtLossList::default() }),
            control(UdtControl::Warning),
            control(UdtControl::Shutdown),
            control(UdtControl::Ack2 { ack_seq: 9 }),
            control(UdtControl::DropRequest { msg: 5, first_seq: 10, last_seq: 20 }),
            control(UdtControl::PeerError { code: 3 }),
        ];
        for header in headers {
            let mut wire = bytes(&header);
            assert_eq!(encoded_len(&header), wire.len(), "{header:?}");
            if matches!(header, UdtHeader::Data { .. }) {
                wire.extend_from_slice(b"payload");
            }
            let (read, payload) = decode(&wire).unwrap_or_else(|e| panic!("{header:?}: {e}"));
            assert_eq!(read, header);
            let expected_payload: &[u8] =
                if matches!(header, UdtHeader::Data { .. }) { b"payload" } else { &[] };
            assert_eq!(payload, expected_payload);
        }
    }

    /// The bytes, word by word, as `CPacket::pack` lays them out and the channel sends them (big-endian).
    #[test]
    fn the_layout_is_udt_4s() {
        let data = UdtHeader::Data { seq: 5, msg: 0xC000_0001, timestamp_us: 1000, dst_socket: 7 };
        assert_eq!(bytes(&data), words(&[5, 0xC000_0001, 1000, 7]));
        let h = [0x0102_0304, 0x0A0B_0C0D];
        // ACK2: type 6 in bits 1-15, the ACK sequence number as additional information, one padding word.
        let ack2 = bytes(&control(UdtControl::Ack2 { ack_seq: 9 }));
        assert_eq!(ack2, words(&[0x8006_0000, 9, h[0], h[1], 0]));
        // A light ACK: type 2, ACK sequence number 0, the acknowledged number alone.
        let light = bytes(&control(UdtControl::LightAck { last_seq: 64 }));
        assert_eq!(light, words(&[0x8002_0000, 0, h[0], h[1], 64]));
        // A full ACK without rates is 16 bytes of control information, with them 24.
        let ack = |rates| {
            control(UdtControl::Ack {
                ack_seq: 3,
                last_seq: 100,
                rtt_us: 20,
                rtt_var_us: 10,
                available_buffer: 50,
                rates,
            })
        };
        assert_eq!(bytes(&ack(None)), words(&[0x8002_0000, 3, h[0], h[1], 100, 20, 10, 50]));
        let with_rates = bytes(&ack(Some(UdtRates { arrival: 6, capacity: 8 })));
        assert_eq!(with_rates, words(&[0x8002_0000, 3, h[0], h[1], 100, 20, 10, 50, 6, 8]));
        // NAK: a single loss as is, a range as first with the top bit set, then last.
        let nak = bytes(&control(UdtControl::Nak { losses: losses(&[(3, 3), (10, 12)]) }));
        assert_eq!(nak, words(&[0x8003_0000, 0, h[0], h[1], 3, 0x8000_000A, 12]));
        // Handshake: 16 + 48 bytes, the request type as a signed word.
        let hs = bytes(&control(UdtControl::Handshake {
            version: 4,
            socket_type: 1,
            initial_seq: 77,
            mss: 1500,
            flow_window: 25_600,
            request: -1,
            socket_id: 42,
            cookie: 9,
            peer_ip: [1, 2, 3, 4],
        }));
        assert_eq!(hs.len(), HEADER_BYTES + HANDSHAKE_BYTES);
        assert_eq!(
            hs,
            words(&[0x8000_0000, 0, h[0], h[1], 4, 1, 77, 1500, 25_600, u32::MAX, 42, 9, 1, 2, 3, 4])
        );
        assert_eq!(bytes(&control(UdtControl::Shutdown)), words(&[0x8005_0000, 0, h[0], h[1], 0]));
    }

    #[test]
    fn malformed_datagrams_are_refused_by_kind() {
        assert_eq!(decode(&[0; 15]), Err(UdtDecodeError::Truncated { needed: 16, got: 15 }));
        let h = [0x0102_0304, 0x0A0B_0C0D];
        let short_handshake = words(&[0x8000_0000, 0, h[0], h[1], 4, 1]);
        assert_eq!(decode(&short_handshake), Err(UdtDecodeError::Truncated { needed: 64, got: 24 }));
        let short_ack = words(&[0x8002_0000, 3, h[0], h[1], 100, 20]);
        assert_eq!(decode(&short_ack), Err(UdtDecodeError::Truncated { needed: 32, got: 24 }));
        let user_type = words(&[0xFFFF_0001, 0, h[0], h[1], 0]);
        assert_eq!(decode(&user_type), Err(UdtDecodeError::UnknownControlType(0x7FFF)));
        let open_range = words(&[0x8003_0000, 0, h[0], h[1], 3, 0x8000_000A]);
        assert_eq!(decode(&open_range), Err(UdtDecodeError::BadLossList));
        let too_many: Vec<u32> =
            [0x8003_0000, 0, h[0], h[1]].into_iter().chain(0..=MAX_UDT_LOSS_RANGES as u32).collect();
        assert_eq!(decode(&words(&too_many)), Err(UdtDecodeError::BadLossList));
    }

    #[test]
    fn fields_outside_udt_s_ranges_are_not_encoded() {
        let mut out = Vec::new();
        let data = UdtHeader::Data { seq: 1 << 31, msg: 0, timestamp_us: 0, dst_socket: 0 };
        assert_eq!(encode(&data, &mut out), Err(UdtEncodeError::SequenceOutOfRange(1 << 31)));
        let inverted = control(UdtControl::Nak { losses: losses(&[(12, 10)]) });
        assert_eq!(encode(&inverted, &mut out), Err(UdtEncodeError::InvertedLossRange(12, 10)));
        assert!(out.is_empty(), "nothing is written for a packet that cannot be encoded");
    }

    #[test]
    fn a_loss_range_across_the_wrap_of_sequence_numbers_is_encoded() {
        let mut out = Vec::new();
        let across = control(UdtControl::Nak { losses: losses(&[(0x7FFF_FFFE, 1)]) });
        encode(&across, &mut out).unwrap();
        match decode(&out).unwrap().0 {
            UdtHeader::Control { body: UdtControl::Nak { losses }, .. } => {
                assert_eq!(losses.as_slice(), [(0x7FFF_FFFE, 1)]);
            }
            other => panic!("{other:?}"),
        }
    }
}
