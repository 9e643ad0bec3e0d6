//! How the simulator's TCP segments travel in UDP datagrams: cclab's own
//! encapsulation, not TCP's wire format. The sans-IO TCP endpoints number
//! bytes with 64-bit offsets and have no connection set-up (as ns-2's one-way
//! agents), so the datagram carries their header as it is, and a small
//! set-up of its own ([`super::handshake`]) in front.
//!
//! Every datagram starts with 12 bytes, big-endian:
//! `"CT"`, version (1), type, the connection number the caller chose (u32),
//! and the listener's cookie (u32; 0 in a SYN). Then, by type:
//!
//! - **SYN** (1): the payload bytes per segment the caller would send (u32) and
//!   its options (u8: bit 0 SACK blocks wanted, bit 1 timestamps, bit 2 ECN);
//!   first with cookie 0, then again with the listener's cookie.
//! - **COOKIE** (2): the listener's answer to a SYN without a cookie: the cookie, in the prefix.
//! - **ACCEPT** (6): the listener's answer to a SYN with a good cookie: the agreed
//!   payload bytes per segment (u32) and the receive window it advertises (u32, segments).
//! - **SEGMENT** (3): a [`TcpHeader`]: kind (u8: 0 data, 1 ACK), flags (u8:
//!   FIN, ECE, ECT(0), CE, ECT(1)), the number of SACK blocks (u8, at most
//!   [`MAX_SACK_BLOCKS`]), one zero byte, seq (u64), length (u32), ack (u64),
//!   window (u32), AccECN's CE byte count (u32), TSval and TSecr (u64 ns
//!   each), the blocks (two u64 each),
//!   then exactly `length` bytes of payload.
//! - **CLOSE** (4): the sender is done (everything acknowledged) or gives up.
//! - **RESET** (5): the listener will not take, or no longer has, this connection.
//!
//! Decoding is strict and typed: a short datagram, another magic or version,
//! an unknown type or kind, more SACK blocks than allowed, or a payload whose
//! size differs from the header's length is an error, never a panic.

use cclab_wire::packet::{Ect, TcpHeader, TcpKind, MAX_SACK_BLOCKS};

const MAGIC: [u8; 2] = *b"CT";
pub const VERSION: u8 = 1;
/// Bytes before any type's body.
pub const PREFIX_BYTES: usize = 12;
/// Bytes of a segment's header without SACK blocks, prefix included.
pub const SEGMENT_HEADER_BYTES: usize = PREFIX_BYTES + 4 + 8 + 4 + 8 + 8 + 8 + 8;
const SACK_BLOCK_BYTES: usize = 16;

/// Options a caller asks for in its SYN.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SynOptions {
    pub sack: bool,
    pub timestamps: bool,
    pub ecn: bool,
}

/// One datagram's meaning.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Message {
    Syn {
        mss: u32,
        options: SynOptions,
    },
    Cookie,
    Accept {
        mss: u32,
        window_segments: u32,
    },
    /// A TCP segment with the ECN bits of the packet that carries it.
    Segment {
        header: TcpHeader,
        ect: Ect,
        ce: bool,
    },
    Close,
    Reset,
}

/// A datagram's prefix and meaning; a segment's payload is the rest of the datagram.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Datagram {
    pub connection: u32,
    pub cookie: u32,
    pub message: Message,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("{0} bytes is too short")]
    Short(usize),
    #[error("not a cclab TCP datagram (magic or version)")]
    NotOurs,
    #[error("unknown type {0}")]
    UnknownType(u8),
    #[error("unknown segment kind {0}")]
    UnknownKind(u8),
    #[error("{0} SACK blocks (at most 4)")]
    TooManySackBlocks(u8),
    #[error("the header says {said} payload bytes, the datagram has {has}")]
    PayloadLength { said: u32, has: usize },
}

const SYN: u8 = 1;
const COOKIE: u8 = 2;
const ACCEPT: u8 = 6;
const SEGMENT: u8 = 3;
const CLOSE: u8 = 4;
const RESET: u8 = 5;

const FIN: u8 = 1;
const ECE: u8 = 2;
const ECT0: u8 = 4;
const CE: u8 = 8;
const ECT1: u8 = 16;

/// Appends `datagram` to `out`, and `payload` after a segment's header.
pub fn encode(datagram: &Datagram, payload: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let kind = match datagram.message {
        Message::Syn { .. } => SYN,
        Message::Cookie => COOKIE,
        Message::Accept { .. } => ACCEPT,
        Message::Segment { .. } => SEGMENT,
        Message::Close => CLOSE,
        Message::Reset => RESET,
    };
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&[VERSION, kind]);
    out.extend_from_slice(&datagram.connection.to_be_bytes());
    out.extend_from_slice(&datagram.cookie.to_be_bytes());
    match datagram.message {
        Message::Syn { mss, options } => {
            out.extend_from_slice(&mss.to_be_bytes());
            let bits =
                u8::from(options.sack) | u8::from(options.timestamps) << 1 | u8::from(options.ecn) << 2;
            out.push(bits);
        }
        Message::Accept { mss, window_segments } => {
            out.extend_from_slice(&mss.to_be_bytes());
            out.extend_from_slice(&window_segments.to_be_bytes());
        }
        Message::Segment { header: h, ect, ce } => {
            let flags = (u8::from(h.fin) * FIN)
                | (u8::from(h.ece) * ECE)
                | (u8::from(ect == Ect::Ect0) * ECT0)
                | (u8::from(ce) * CE)
                | (u8::from(ect == Ect::Ect1) * ECT1);
            let kind = match h.kind {
                TcpKind::Data => 0,
                TcpKind::Ack => 1,
            };
            out.extend_from_slice(&[kind, flags, h.sack().len() as u8, 0]);
            out.extend_from_slice(&h.seq.to_be_bytes());
            // The endpoints send at most one segment of payload; the driver sends exactly `len` bytes.
            out.extend_from_slice(&(payload.len() as u32).to_be_bytes());
            out.extend_from_slice(&h.ack.to_be_bytes());
            out.extend_from_slice(&h.window.to_be_bytes());
            out.extend_from_slice(&h.ce_bytes.to_be_bytes());
            out.extend_from_slice(&h.ts_val.to_be_bytes());
            out.extend_from_slice(&h.ts_ecr.to_be_bytes());
            for &(left, right) in h.sack() {
                out.extend_from_slice(&left.to_be_bytes());
                out.extend_from_slice(&right.to_be_bytes());
            }
            out.extend_from_slice(payload);
        }
        Message::Cookie | Message::Close | Message::Reset => {}
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let end = self.at + N;
        let slice = self.bytes.get(self.at..end).ok_or(DecodeError::Short(self.bytes.len()))?;
        self.at = end;
        let mut word = [0u8; N];
        word.copy_from_slice(slice);
        Ok(word)
    }

    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take::<1>()?[0])
    }

    fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_be_bytes(self.take()?))
    }

    fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_be_bytes(self.take()?))
    }
}

/// Reads a datagram: its meaning, and a segment's payload.
pub fn decode(bytes: &[u8]) -> Result<(Datagram, &[u8]), DecodeError> {
    let mut r = Reader { bytes, at: 0 };
    if r.take::<2>()? != MAGIC || r.u8()? != VERSION {
        return Err(DecodeError::NotOurs);
    }
    let kind = r.u8()?;
    let (connection, cookie) = (r.u32()?, r.u32()?);
    let message = match kind {
        SYN => {
            let mss = r.u32()?;
            let bits = r.u8()?;
            Message::Syn {
                mss,
                options: SynOptions { sack: bits & 1 != 0, timestamps: bits & 2 != 0, ecn: bits & 4 != 0 },
            }
        }
        COOKIE => Message::Cookie,
        ACCEPT => Message::Accept { mss: r.u32()?, window_segments: r.u32()? },
        SEGMENT => {
            let kind = match r.u8()? {
                0 => TcpKind::Data,
                1 => TcpKind::Ack,
                other => return Err(DecodeError::UnknownKind(other)),
            };
            let flags = r.u8()?;
            let blocks = r.u8()?;
            if usize::from(blocks) > MAX_SACK_BLOCKS {
                return Err(DecodeError::TooManySackBlocks(blocks));
            }
            r.u8()?;
            let mut h = TcpHeader::new(kind);
            h.seq = r.u64()?;
            h.len = r.u32()?;
            (h.ack, h.window, h.ce_bytes) = (r.u64()?, r.u32()?, r.u32()?);
            (h.ts_val, h.ts_ecr) = (r.u64()?, r.u64()?);
            for _ in 0..blocks {
                h.push_sack((r.u64()?, r.u64()?));
            }
            h.fin = flags & FIN != 0;
            h.ece = flags & ECE != 0;
            let payload = &bytes[r.at..];
            if payload.len() != h.len as usize {
                return Err(DecodeError::PayloadLength { said: h.len, has: payload.len() });
            }
            let datagram = Datagram {
                connection,
                cookie,
                message: Message::Segment { header: h, ect: codepoint(flags), ce: flags & CE != 0 },
            };
            return Ok((datagram, payload));
        }
        CLOSE => Message::Close,
        RESET => Message::Reset,
        other => return Err(DecodeError::UnknownType(other)),
    };
    Ok((Datagram { connection, cookie, message }, &[]))
}

/// The ECT codepoint a segment's flags carry (both ECT bits: ECT(0), as a
/// router would not set both).
fn codepoint(flags: u8) -> Ect {
    if flags & ECT0 != 0 {
        Ect::Ect0
    } else if flags & ECT1 != 0 {
        Ect::Ect1
    } else {
        Ect::NotEct
    }
}

/// Bytes of a segment's header in a datagram, SACK blocks included.
pub fn segment_header_bytes(header: &TcpHeader) -> usize {
    SEGMENT_HEADER_BYTES + SACK_BLOCK_BYTES * header.sack().len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_wire::random::SplitMix64;

    fn segment() -> TcpHeader {
        let mut h = TcpHeader::new(TcpKind::Ack);
        h.seq = 1 << 40;
        h.ack = (1 << 33) + 7;
        h.window = 123_456_789;
        h.ce_bytes = 4_000_000_001;
        h.ts_val = 987_654_321_000;
        h.ts_ecr = 5;
        h.ece = true;
        h.push_sack((10, 20));
        h.push_sack((u64::MAX - 5, u64::MAX));
        h
    }

    #[test]
    fn every_message_round_trips() {
        let messages = [
            Message::Syn { mss: 1412, options: SynOptions { sack: true, timestamps: true, ecn: false } },
            Message::Cookie,
            Message::Accept { mss: 1400, window_segments: 8192 },
            Message::Segment { header: segment(), ect: Ect::Ect1, ce: true },
            Message::Close,
            Message::Reset,
        ];
        for message in messages {
            let d = Datagram { connection: 0xdead_beef, cookie: 42, message };
            let mut buf = Vec::new();
            encode(&d, &[], &mut buf);
            assert_eq!(decode(&buf), Ok((d, &[][..])), "{message:?}");
        }
    }

    #[test]
    fn a_data_segment_carries_exactly_its_payload() {
        let mut h = TcpHeader::new(TcpKind::Data);
        h.seq = 2824;
        h.len = 5;
        h.fin = true;
        let d = Datagram {
            connection: 1,
            cookie: 2,
            message: Message::Segment { header: h, ect: Ect::NotEct, ce: false },
        };
        let mut buf = Vec::new();
        encode(&d, b"hello", &mut buf);
        assert_eq!(buf.len(), SEGMENT_HEADER_BYTES + 5);
        assert_eq!(segment_header_bytes(&h), SEGMENT_HEADER_BYTES);
        let (back, payload) = decode(&buf).unwrap();
        assert_eq!((back, payload), (d, &b"hello"[..]));
        buf.push(0);
        assert_eq!(decode(&buf), Err(DecodeError::PayloadLength { said: 5, has: 6 }));
    }

    #[test]
    fn malformed_datagrams_are_typed_errors_never_panics() {
        let mut buf = Vec::new();
        encode(
            &Datagram {
                connection: 1,
                cookie: 2,
                message: Message::Segment { header: segment(), ect: Ect::NotEct, ce: false },
            },
            &[],
            &mut buf,
        );
        for n in 0..buf.len() {
            assert!(decode(&buf[..n]).is_err(), "truncated to {n}");
        }
        let mut wrong = buf.clone();
        wrong[0] = b'X';
        assert_eq!(decode(&wrong), Err(DecodeError::NotOurs));
        let mut wrong = buf.clone();
        wrong[3] = 9;
        assert_eq!(decode(&wrong), Err(DecodeError::UnknownType(9)));
        let mut wrong = buf.clone();
        wrong[PREFIX_BYTES] = 7;
        assert_eq!(decode(&wrong), Err(DecodeError::UnknownKind(7)));
        let mut wrong = buf.clone();
        wrong[PREFIX_BYTES + 2] = 5;
        assert_eq!(decode(&wrong), Err(DecodeError::TooManySackBlocks(5)));
        let mut rng = SplitMix64::new(3);
        for _ in 0..20_000 {
            let n = (rng.next_u64() % 200) as usize;
            let mut junk: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
            if rng.next_u64().is_multiple_of(2) && n >= 4 {
                junk[..3].copy_from_slice(&[b'C', b'T', VERSION]);
            }
            let _ = decode(&junk);
        }
    }
}
