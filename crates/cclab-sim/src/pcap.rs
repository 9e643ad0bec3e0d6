//! pcap files from the trace table: one Ethernet frame per row, with
//! synthesized Ethernet II, IPv4 and TCP or UDP headers that carry the
//! simulator's own sequence and ACK numbers, SACK blocks and timestamps, so
//! Wireshark, tshark and tcptrace analyse a simulated connection as a real one.
//!
//! Formats and libraries:
//! * the classic pcap file format (tcpdump.org, pcap-savefile(5); IETF
//!   draft-ietf-opsawg-pcap), in its nanosecond variant (magic 0xa1b23c4d) so
//!   that the simulator's nanosecond times survive; written by the `pcap-file`
//!   crate. Link type LINKTYPE_ETHERNET (1, tcpdump.org/linktypes.html).
//! * headers are built by `etherparse` (`PacketBuilder`): Ethernet II, IPv4
//!   (RFC 791), TCP (RFC 9293) with the options NOP, Timestamps (RFC 7323)
//!   and SACK (RFC 2018), UDP (RFC 768). Checksums are computed over a zero
//!   payload of the real length.
//!
//! Each frame is stored truncated to its headers (`incl_len` < `orig_len`, as
//! `tcpdump -s` would): the payload is zeros and carries nothing, and files
//! stay small. The IPv4 total length is the real one, so tools see every
//! segment's length. Mapping of simulator values to header fields:
//! * addresses and ports: as the trace table gives them ([`crate::trace::ipv4`], [`crate::trace::port`]); MACs by [`crate::trace::mac`];
//! * TCP sequence, ACK and SACK edges: the 64-bit byte offsets modulo 2^32
//!   (the stream starts at sequence number 0; there is no handshake);
//! * TCP timestamps: TSval and TSecr are the sender's clock in microseconds, modulo 2^32;
//! * TCP window: the advertised window in bytes, capped at 65 535 (no window
//!   scaling is negotiated without a handshake);
//! * SACK: at most three blocks fit beside the timestamp option in 40 option
//!   bytes; a fourth block (the simulator keeps up to four) is left out;
//! * ECN: the IPv4 ECN field is ECT(0) or CE as the packet's bits say (RFC 3168); ECE is set on ACKs that echo;
//! * UDP and UDT packets: a UDP datagram with the packet's payload length.

pub use crate::trace::UDT_OVERHEAD;
use crate::trace::{mac, Capture, TraceTable};
use cclab_wire::Ect;
use etherparse::{IpNumber, Ipv4Header, PacketBuilder, TcpOptionElement};
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, TsResolution};
use std::fmt;
use std::io::Write;
use std::time::Duration;

/// IPv4 and TCP or UDP headers must fit the IPv4 total length field.
const MAX_PAYLOAD: usize = 65_535 - 20 - 60;

/// Why a pcap could not be written.
#[derive(Debug)]
pub enum PcapError {
    Io(std::io::Error),
    Pcap(String),
    /// A row index of a capture is outside the table (a table edited by hand).
    Row(u32),
}

impl fmt::Display for PcapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PcapError::Io(e) => write!(f, "{e}"),
            PcapError::Pcap(e) => write!(f, "{e}"),
            PcapError::Row(r) => write!(f, "capture row {r} is not in the trace table"),
        }
    }
}

impl std::error::Error for PcapError {}

impl From<std::io::Error> for PcapError {
    fn from(e: std::io::Error) -> Self {
        PcapError::Io(e)
    }
}

impl From<pcap_file::PcapError> for PcapError {
    fn from(e: pcap_file::PcapError) -> Self {
        PcapError::Pcap(e.to_string())
    }
}

fn node_of(dotted: &str) -> [u8; 4] {
    let mut out = [0u8; 4];
    for (slot, part) in out.iter_mut().zip(dotted.split('.')) {
        *slot = part.parse().unwrap_or(0);
    }
    out
}

/// The ECN field of the IPv4 header (RFC 3168 §5) of a trace row.
fn ecn(table: &TraceTable, row: usize) -> u8 {
    let codepoint = match (table.ect[row], table.ect1[row]) {
        (_, true) => Ect::Ect1,
        (true, false) => Ect::Ect0,
        (false, false) => Ect::NotEct,
    };
    codepoint.ip_bits(table.ce[row])
}

/// Writes `capture`'s rows of `table` as a nanosecond pcap to `out`.
pub fn write_capture<W: Write>(table: &TraceTable, capture: &Capture, out: W) -> Result<(), PcapError> {
    let header = PcapHeader {
        snaplen: 65_535,
        datalink: DataLink::ETHERNET,
        ts_resolution: TsResolution::NanoSecond,
        ..PcapHeader::default()
    };
    let mut writer = PcapWriter::with_header(out, header)?;
    let zeros = vec![0u8; MAX_PAYLOAD];
    let mut frame = Vec::with_capacity(2048);
    for &row in &capture.rows {
        let r = row as usize;
        if r >= table.len() {
            return Err(PcapError::Row(row));
        }
        frame.clear();
        let (src, dst) = (node_of(&table.ip_src[r]), node_of(&table.ip_dst[r]));
        // The MACs follow the addresses' node ids: 10.0.0.0 + id + 1.
        let id = |a: [u8; 4]| (u32::from_be_bytes([0, a[1], a[2], a[3]])).wrapping_sub(1);
        let payload = &zeros[..(table.len[r] as usize).min(MAX_PAYLOAD)];
        let (sport, dport) = (table.sport[r], table.dport[r]);
        let mut ip =
            Ipv4Header::new(0, 64, IpNumber::TCP, src, dst).map_err(|e| PcapError::Pcap(e.to_string()))?;
        ip.ecn = etherparse::IpEcn::try_new(ecn(table, r)).map_err(|e| PcapError::Pcap(e.to_string()))?;
        let eth = PacketBuilder::ethernet2(mac(id(src)), mac(id(dst)));
        if table.protocol[r] == "tcp" {
            let seq = table.seq[r].unwrap_or(0) as u32;
            let window = table.window[r].unwrap_or(65_535).min(65_535) as u16;
            let ip = etherparse::IpHeaders::Ipv4(ip, Default::default());
            let mut tcp = eth.ip(ip).tcp(sport, dport, seq, window);
            if let Some(ack) = table.ack[r] {
                tcp = tcp.ack(ack as u32);
            }
            if table.fin[r] {
                tcp = tcp.fin();
            }
            if table.ece[r] {
                tcp = tcp.ece();
            }
            let micros = |ns: Option<u64>| (ns.unwrap_or(0) / 1_000) as u32;
            let mut options = vec![
                TcpOptionElement::Noop,
                TcpOptionElement::Noop,
                TcpOptionElement::Timestamp(micros(table.ts_val_ns[r]), micros(table.ts_ecr_ns[r])),
            ];
            let blocks: Vec<(u32, u32)> = table.sack_left[r]
                .iter()
                .zip(&table.sack_right[r])
                .map(|(&a, &b)| (a as u32, b as u32))
                .collect();
            if let Some((&first, rest)) = blocks.split_first() {
                let mut more = [None; 3];
                for (slot, &b) in more.iter_mut().zip(rest.iter().take(2)) {
                    *slot = Some(b);
                }
                options.extend([TcpOptionElement::Noop, TcpOptionElement::Noop]);
                options.push(TcpOptionElement::SelectiveAcknowledgement(first, more));
            }
            let tcp = tcp.options(&options).map_err(|e| PcapError::Pcap(e.to_string()))?;
            let headers = tcp.size(0);
            tcp.write(&mut frame, payload).map_err(|e| PcapError::Pcap(e.to_string()))?;
            frame.truncate(headers);
        } else {
            ip.protocol = IpNumber::UDP;
            let ip = etherparse::IpHeaders::Ipv4(ip, Default::default());
            let udp = eth.ip(ip).udp(sport, dport);
            let headers = udp.size(0);
            udp.write(&mut frame, payload).map_err(|e| PcapError::Pcap(e.to_string()))?;
            frame.truncate(headers);
        }
        let orig_len = (frame.len() + payload.len()) as u32;
        writer.write_packet(&PcapPacket::new(Duration::from_nanos(table.time_ns[r]), orig_len, &frame))?;
    }
    writer.into_writer().flush()?;
    Ok(())
}

/// Writes every capture of `table` into directory `dir`; returns the paths written.
pub fn write_all(table: &TraceTable, dir: &std::path::Path) -> Result<Vec<std::path::PathBuf>, PcapError> {
    let mut written = Vec::with_capacity(table.captures.len());
    for capture in &table.captures {
        let path = dir.join(&capture.file);
        let file = std::io::BufWriter::new(std::fs::File::create(&path)?);
        write_capture(table, capture, file)?;
        written.push(path);
    }
    Ok(written)
}
