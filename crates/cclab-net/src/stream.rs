//! What `cclab send` puts in a byte stream (UDT's, or each TCP connection's),
//! and how `cclab recv` takes it back out: an 8-byte big-endian length (as UDT 4's own `sendfile` example
//! sends the size before the file), the content, then an 8-byte FNV-1a
//! checksum of the content, so the receiver can verify size and content.
//!
//! `cclab send` cuts the stream into full packets: data packet `k` (counted
//! from the ISN) carries stream bytes `[k * payload, (k + 1) * payload)`, the
//! last one fewer. The receiver does not rely on that: UDT 4 starts a new
//! packet at every `send()` call of its application, so a stream from UDT 4
//! comes in packets of any size up to the payload, and the receiver
//! concatenates them in sequence order. It holds packets that arrive ahead of
//! the next in-order one, at most `window` of them (UDT's receive buffer, the
//! flow window it advertised), and drops any beyond: its memory is bounded
//! whatever the peer sends.
//!
//! With `--raw` ([`Framing::Raw`]) the stream is the content alone, as any UDT 4
//! application's `sendfile` sends it: no length, no checksum. The receiver then
//! writes what arrives, in order, until the sender closes the connection, and can
//! check nothing but that no packet was missing when it did.

use crate::content::{Content, UNBOUNDED};
use crate::error::StreamError;
use std::collections::VecDeque;
use std::io::{self, Write};

/// Bytes before the content (its length) and after it (its checksum).
pub const LENGTH_BYTES: u64 = 8;
pub const CHECKSUM_BYTES: u64 = 8;

/// FNV-1a, 64 bits (Fowler, Noll and Vo): enough to detect a corrupted or misplaced
/// packet, which is all the check is for, and a dozen lines in the C++ test programs.
#[derive(Clone, Copy, Debug)]
pub struct Fnv64(u64);

impl Fnv64 {
    pub fn new() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }

    pub fn update(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    pub fn value(&self) -> u64 {
        self.0
    }
}

impl Default for Fnv64 {
    fn default() -> Self {
        Self::new()
    }
}

/// What the stream carries besides the content.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Framing {
    /// cclab's own: the length before the content, its checksum after it.
    #[default]
    Framed,
    /// The content alone, as a plain UDT 4 application sends and reads it.
    Raw,
}

impl Framing {
    /// Stream bytes before the content.
    pub fn header_bytes(self) -> u64 {
        match self {
            Framing::Framed => LENGTH_BYTES,
            Framing::Raw => 0,
        }
    }

    /// Stream bytes after the content (an unbounded stream has none: it never ends).
    pub fn trailer_bytes(self, content_len: u64) -> u64 {
        match self {
            Framing::Framed if content_len != UNBOUNDED => CHECKSUM_BYTES,
            _ => 0,
        }
    }
}

/// The stream of `content_len` bytes of content cut into packets of `payload` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub payload: u64,
    pub content_len: u64,
    pub framing: Framing,
}

impl Layout {
    pub fn stream_len(&self) -> u64 {
        match self.framing {
            Framing::Framed => (LENGTH_BYTES + CHECKSUM_BYTES).saturating_add(self.content_len),
            Framing::Raw => self.content_len,
        }
    }

    /// Stream bytes that are not content: what a complete transfer sent beyond its content.
    pub fn overhead(&self) -> u64 {
        self.framing.header_bytes() + self.framing.trailer_bytes(self.content_len)
    }

    pub fn packets(&self) -> u64 {
        self.stream_len().div_ceil(self.payload)
    }

    /// Stream bytes of packet `k`, as (offset, length).
    pub fn packet(&self, k: u64) -> (u64, u64) {
        let start = k * self.payload;
        (start, self.payload.min(self.stream_len().saturating_sub(start)))
    }

    /// Fills `out` with packet `k`'s bytes: `content(offset, buf)` fills `buf` from the content at `offset`.
    pub fn fill(
        &self,
        k: u64,
        checksum: u64,
        out: &mut Vec<u8>,
        mut content: impl FnMut(u64, &mut [u8]) -> io::Result<()>,
    ) -> io::Result<()> {
        let (start, len) = self.packet(k);
        out.clear();
        out.resize(len as usize, 0);
        let header = self.content_len.to_be_bytes();
        let trailer = checksum.to_be_bytes();
        let header_len = self.framing.header_bytes();
        let content_end = header_len.saturating_add(self.content_len);
        let mut at = 0usize;
        while (at as u64) < len {
            let pos = start + at as u64;
            let rest = len as usize - at;
            let n = if pos < header_len {
                let n = rest.min((header_len - pos) as usize);
                out[at..at + n].copy_from_slice(&header[pos as usize..pos as usize + n]);
                n
            } else if pos < content_end {
                let n = rest.min((content_end - pos) as usize);
                content(pos - header_len, &mut out[at..at + n])?;
                n
            } else {
                let i = (pos - content_end) as usize;
                let n = rest.min(CHECKSUM_BYTES as usize - i);
                out[at..at + n].copy_from_slice(&trailer[i..i + n]);
                n
            };
            at += n;
        }
        Ok(())
    }
}

/// The sending side of a stream: packet `k`'s bytes, read again from the
/// content whenever it is sent, first or again, so the sender never holds the
/// content in memory. New packets must leave in order (both transports send
/// new data in sequence): the checksum takes in each packet's content as it
/// first leaves, and is complete when the last packet, which carries it, does.
pub struct StreamSender {
    layout: Layout,
    content: Content,
    first_sends: u64,
    hash: Fnv64,
}

impl StreamSender {
    pub fn new(payload: u64, content: Content, framing: Framing) -> Self {
        Self {
            layout: Layout { payload, content_len: content.len(), framing },
            content,
            first_sends: 0,
            hash: Fnv64::new(),
        }
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Packets sent at least once: all of `0..first_sends()`.
    pub fn first_sends(&self) -> u64 {
        self.first_sends
    }

    /// The content's checksum, complete once the last packet has left.
    pub fn checksum(&self) -> u64 {
        self.hash.value()
    }

    /// Packet `k`'s bytes into `out`.
    pub fn fill(&mut self, k: u64, out: &mut Vec<u8>) -> io::Result<()> {
        let content = &self.content;
        let read = |at: u64, buf: &mut [u8]| content.read_at(at, buf);
        if k < self.first_sends {
            return self.layout.fill(k, self.hash.value(), out, read);
        }
        if k > self.first_sends {
            let message = format!("packet {k} sent before packet {}", self.first_sends);
            return Err(io::Error::new(io::ErrorKind::InvalidInput, message));
        }
        self.layout.fill(k, 0, out, read)?;
        let (start, len) = self.layout.packet(k);
        let header_len = self.layout.framing.header_bytes();
        let content_end = header_len.saturating_add(self.layout.content_len);
        let from = start.max(header_len).min(start + len);
        let to = (start + len).min(content_end).max(from);
        self.hash.update(&out[(from - start) as usize..(to - start) as usize]);
        self.first_sends += 1;
        if start + len > content_end {
            // This packet carries (part of) the checksum, now complete.
            self.layout.fill(k, self.hash.value(), out, read)?;
        }
        Ok(())
    }
}

/// What became of a data packet offered to the receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accepted {
    /// Stored (and whatever is now in order written out).
    Stored,
    /// Already had it.
    Duplicate,
    /// Beyond the receive window, or past the end of the stream: dropped.
    OutOfWindow,
    /// Not the packet's length at its place in the stream: dropped.
    WrongSize,
}

/// How the stream ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verified {
    pub content_len: u64,
    pub checksum: u64,
}

/// The receiving side: puts packets in order, writes the content to `sink`, checks the checksum.
pub struct StreamReceiver<W: Write> {
    payload: u64,
    window: usize,
    /// Index of the next packet to write out.
    next: u64,
    /// Packets `next..next + pending.len()` that have arrived (None: not yet).
    pending: VecDeque<Option<Vec<u8>>>,
    /// The stream bytes written out so far (header and trailer included).
    consumed: u64,
    header: Vec<u8>,
    trailer: Vec<u8>,
    content_len: Option<u64>,
    hash: Fnv64,
    /// Bytes that came after the checksum: a sender that sent more than it declared.
    beyond_end: u64,
    framing: Framing,
    sink: W,
}

impl<W: Write> StreamReceiver<W> {
    pub fn new(payload: u64, window: usize, framing: Framing, sink: W) -> Self {
        Self {
            framing,
            payload,
            window,
            next: 0,
            pending: VecDeque::new(),
            consumed: 0,
            header: Vec::with_capacity(8),
            trailer: Vec::with_capacity(8),
            content_len: None,
            hash: Fnv64::new(),
            beyond_end: 0,
            sink,
        }
    }

    /// The content's length, once the first packet is in (never for a raw stream: it ends when the sender closes).
    pub fn content_len(&self) -> Option<u64> {
        self.content_len
    }

    pub fn framing(&self) -> Framing {
        self.framing
    }

    /// The FNV-1a checksum of the content written so far.
    pub fn content_checksum(&self) -> u64 {
        self.hash.value()
    }

    /// Content bytes written to the sink so far.
    pub fn content_written(&self) -> u64 {
        match self.framing {
            Framing::Framed => {
                self.consumed.saturating_sub(LENGTH_BYTES).min(self.content_len.unwrap_or(u64::MAX))
            }
            Framing::Raw => self.consumed,
        }
    }

    /// The next packet to write out: everything before it is in.
    pub fn next_packet(&self) -> u64 {
        self.next
    }

    /// Packets held out of order (at most the window).
    pub fn held(&self) -> usize {
        self.pending.iter().filter(|p| p.is_some()).count()
    }

    pub fn into_sink(self) -> W {
        self.sink
    }

    /// Data packet `k` with `data` (1 to `payload` bytes); writes out whatever is now in order.
    pub fn accept(&mut self, k: u64, data: &[u8]) -> io::Result<Accepted> {
        if k < self.next {
            return Ok(Accepted::Duplicate);
        }
        let offset = (k - self.next) as usize;
        if offset >= self.window {
            return Ok(Accepted::OutOfWindow);
        }
        if data.len() as u64 > self.payload || data.is_empty() {
            return Ok(Accepted::WrongSize);
        }
        if self.pending.len() <= offset {
            self.pending.resize(offset + 1, None);
        }
        if self.pending[offset].is_some() {
            return Ok(Accepted::Duplicate);
        }
        self.pending[offset] = Some(data.to_vec());
        while let Some(Some(_)) = self.pending.front() {
            if let Some(Some(bytes)) = self.pending.pop_front() {
                self.consume(&bytes)?;
                self.next += 1;
            }
        }
        Ok(Accepted::Stored)
    }

    fn consume(&mut self, mut bytes: &[u8]) -> io::Result<()> {
        if self.framing == Framing::Raw {
            self.hash.update(bytes);
            self.sink.write_all(bytes)?;
            self.consumed += bytes.len() as u64;
            return Ok(());
        }
        while !bytes.is_empty() {
            if self.consumed < LENGTH_BYTES {
                let n = bytes.len().min((LENGTH_BYTES - self.consumed) as usize);
                self.header.extend_from_slice(&bytes[..n]);
                if self.header.len() == LENGTH_BYTES as usize {
                    let mut word = [0u8; 8];
                    word.copy_from_slice(&self.header);
                    self.content_len = Some(u64::from_be_bytes(word));
                }
                self.consumed += n as u64;
                bytes = &bytes[n..];
                continue;
            }
            let end = LENGTH_BYTES.saturating_add(self.content_len.unwrap_or(UNBOUNDED));
            if self.consumed < end {
                let n = bytes.len().min((end - self.consumed).min(usize::MAX as u64) as usize);
                self.hash.update(&bytes[..n]);
                self.sink.write_all(&bytes[..n])?;
                self.consumed += n as u64;
                bytes = &bytes[n..];
                continue;
            }
            let n = bytes.len().min(CHECKSUM_BYTES as usize - self.trailer.len());
            self.trailer.extend_from_slice(&bytes[..n]);
            self.consumed += n as u64;
            bytes = &bytes[n..];
            if n == 0 {
                self.beyond_end += bytes.len() as u64;
                break;
            }
        }
        Ok(())
    }

    /// Once the whole stream is in: its length and checksum, or how the checksum failed
    /// (never for a raw stream, which only the sender's close ends).
    pub fn finish(&mut self) -> Option<Result<Verified, StreamError>> {
        let len = self.content_len?;
        if self.trailer.len() < CHECKSUM_BYTES as usize {
            return None;
        }
        let mut word = [0u8; 8];
        word.copy_from_slice(&self.trailer);
        let sent = u64::from_be_bytes(word);
        let got = self.hash.value();
        if self.sink.flush().is_err() {
            return None;
        }
        if self.beyond_end > 0 {
            return Some(Err(StreamError::BeyondEnd { extra: self.beyond_end }));
        }
        Some(if sent == got {
            Ok(Verified { content_len: len, checksum: got })
        } else {
            Err(StreamError::Checksum { sent, got })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_wire::random::SplitMix64;

    fn content(n: usize, seed: u64) -> Vec<u8> {
        let mut rng = SplitMix64::new(seed);
        (0..n).map(|_| rng.next_u64() as u8).collect()
    }

    fn packets(data: &[u8], payload: u64) -> Vec<Vec<u8>> {
        let layout = Layout { payload, content_len: data.len() as u64, framing: Framing::Framed };
        let mut hash = Fnv64::new();
        hash.update(data);
        (0..layout.packets())
            .map(|k| {
                let mut out = Vec::new();
                layout
                    .fill(k, hash.value(), &mut out, |at, buf| {
                        buf.copy_from_slice(&data[at as usize..at as usize + buf.len()]);
                        Ok(())
                    })
                    .unwrap();
                out
            })
            .collect()
    }

    #[test]
    fn fnv1a_64_matches_its_published_values() {
        // Test vectors of the FNV reference (Noll): "" and "a" and "foobar".
        let h = |s: &str| {
            let mut f = Fnv64::new();
            f.update(s.as_bytes());
            f.value()
        };
        assert_eq!(h(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(h("a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(h("foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn the_stream_is_length_content_checksum_cut_at_the_payload() {
        let data = content(20, 1);
        let p = packets(&data, 16);
        assert_eq!(p.iter().map(Vec::len).collect::<Vec<_>>(), vec![16, 16, 4], "8 + 20 + 8 = 36 bytes");
        let stream: Vec<u8> = p.concat();
        assert_eq!(&stream[..8], &20u64.to_be_bytes());
        assert_eq!(&stream[8..28], &data[..]);
        let mut hash = Fnv64::new();
        hash.update(&data);
        assert_eq!(&stream[28..], &hash.value().to_be_bytes());
    }

    #[test]
    fn reordered_and_duplicated_packets_give_the_content_and_a_good_checksum() {
        let data = content(10_000, 2);
        let p = packets(&data, 1456);
        let mut order: Vec<usize> = (0..p.len()).rev().collect();
        order.extend([3, 0, 5]);
        let mut r = StreamReceiver::new(1456, 64, Framing::Framed, Vec::new());
        for &k in &order {
            r.accept(k as u64, &p[k]).unwrap();
        }
        assert_eq!(
            r.finish(),
            Some(Ok(Verified {
                content_len: 10_000,
                checksum: {
                    let mut h = Fnv64::new();
                    h.update(&data);
                    h.value()
                }
            }))
        );
        assert_eq!(r.into_sink(), data);
    }

    #[test]
    fn a_corrupted_byte_fails_the_checksum() {
        let data = content(5_000, 3);
        let mut p = packets(&data, 1000);
        p[2][17] ^= 0x40;
        let mut r = StreamReceiver::new(1000, 64, Framing::Framed, Vec::new());
        for (k, bytes) in p.iter().enumerate() {
            r.accept(k as u64, bytes).unwrap();
        }
        assert!(matches!(r.finish(), Some(Err(StreamError::Checksum { .. }))));
    }

    #[test]
    fn the_window_bounds_what_is_held_whatever_arrives() {
        let data = content(100_000, 4);
        let p = packets(&data, 1000);
        let mut r = StreamReceiver::new(1000, 8, Framing::Framed, Vec::new());
        // Packet 0 lost: 1..8 are held, everything from 8 on is beyond the window.
        for (k, bytes) in p.iter().enumerate().skip(1) {
            let verdict = r.accept(k as u64, bytes).unwrap();
            assert_eq!(verdict, if k < 8 { Accepted::Stored } else { Accepted::OutOfWindow }, "packet {k}");
        }
        assert_eq!(r.held(), 7);
        assert_eq!(r.accept(0, &p[0]).unwrap(), Accepted::Stored);
        assert_eq!((r.held(), r.content_written()), (0, 8 * 1000 - 8));
        assert_eq!(r.accept(3, &p[3]).unwrap(), Accepted::Duplicate);
        assert_eq!(r.finish(), None, "not all there yet");
    }

    #[test]
    fn empty_and_oversized_packets_are_dropped_and_bytes_past_the_end_are_an_error() {
        let data = content(3_000, 5);
        let p = packets(&data, 1000);
        let mut r = StreamReceiver::new(1000, 64, Framing::Framed, Vec::new());
        assert_eq!(r.accept(0, &[]).unwrap(), Accepted::WrongSize);
        assert_eq!(r.accept(0, &[0; 1001]).unwrap(), Accepted::WrongSize);
        for k in 0..4 {
            r.accept(k, &p[k as usize]).unwrap();
        }
        assert!(matches!(r.finish(), Some(Ok(_))));
        r.accept(4, &[1, 2, 3]).unwrap();
        assert_eq!(r.finish(), Some(Err(StreamError::BeyondEnd { extra: 3 })));
    }

    /// UDT 4 starts a packet at every `send()`: a stream may come in packets of any size.
    #[test]
    fn a_stream_cut_into_packets_of_any_size_is_reassembled_in_sequence_order() {
        let data = content(5_000, 9);
        let whole: Vec<u8> = packets(&data, 10_000).concat();
        let mut cuts = Vec::new();
        let mut rest = &whole[..];
        for size in [8usize, 1456, 16, 1, 1456, 700].iter().cycle() {
            if rest.is_empty() {
                break;
            }
            let n = (*size).min(rest.len());
            cuts.push(rest[..n].to_vec());
            rest = &rest[n..];
        }
        let mut r = StreamReceiver::new(1456, 64, Framing::Framed, Vec::new());
        for k in (0..cuts.len()).rev() {
            assert_eq!(r.accept(k as u64, &cuts[k]).unwrap(), Accepted::Stored);
        }
        assert_eq!(r.finish().map(|v| v.map(|v| v.content_len)), Some(Ok(5_000)));
        assert_eq!(r.into_sink(), data);
    }

    #[test]
    fn an_empty_content_is_a_length_and_a_checksum() {
        let p = packets(&[], 1456);
        assert_eq!(p.len(), 1);
        let mut r = StreamReceiver::new(1456, 4, Framing::Framed, Vec::new());
        r.accept(0, &p[0]).unwrap();
        assert_eq!(r.finish(), Some(Ok(Verified { content_len: 0, checksum: Fnv64::new().value() })));
    }

    #[test]
    fn a_raw_stream_is_the_content_alone_in_sequence_order() {
        let data = content(5_000, 6);
        let layout = Layout { payload: 1000, content_len: 5_000, framing: Framing::Raw };
        assert_eq!((layout.stream_len(), layout.packets(), layout.overhead()), (5_000, 5, 0));
        let cut: Vec<Vec<u8>> = (0..layout.packets())
            .map(|k| {
                let mut out = Vec::new();
                layout
                    .fill(k, 0, &mut out, |at, buf| {
                        buf.copy_from_slice(&data[at as usize..at as usize + buf.len()]);
                        Ok(())
                    })
                    .unwrap();
                out
            })
            .collect();
        assert_eq!(cut.concat(), data, "no length, no checksum");
        let mut r = StreamReceiver::new(1000, 64, Framing::Raw, Vec::new());
        for k in [1usize, 0, 4, 3, 2] {
            r.accept(k as u64, &cut[k]).unwrap();
        }
        assert_eq!((r.content_written(), r.content_len(), r.finish()), (5_000, None, None));
        assert_eq!(r.into_sink(), data);
    }
}
