//! What can go wrong in a transfer of `cclab send` or `cclab recv`, each one
//! line for the command to print: a flag's value, the socket, the file, the
//! peer, or the content the stream carried.

use std::io;
use std::net::SocketAddr;

#[derive(Debug, thiserror::Error)]
pub enum TransferError {
    #[error("{option}: {message}")]
    Invalid { option: String, message: String },
    #[error("cannot use {addr}: {source}")]
    Bind { addr: SocketAddr, source: io::Error },
    #[error("{path}: {source}")]
    File { path: String, source: io::Error },
    #[error("socket error: {0}")]
    Socket(io::Error),
    #[error("no answer from {0} within 3 s (is `cclab recv` listening there?)")]
    ConnectTimeout(SocketAddr),
    #[error("{0} rejected the connection (another UDT version or socket type)")]
    Rejected(SocketAddr),
    #[error("{peer}'s handshake response did not echo our initial sequence number ({sent}, got {got})")]
    IsnMismatch { peer: SocketAddr, sent: u32, got: u32 },
    #[error(
        "the receiver closed the connection after {acknowledged} of {total} content bytes were acknowledged"
    )]
    ReceiverClosed { acknowledged: u64, total: u64 },
    /// `expiries`: of the retransmission timer (UDT's EXP, TCP's RTO) since the receiver was last heard.
    #[error("the receiver stopped responding: {expiries} expiries, no response for {silent_s:.1} s")]
    ReceiverGone { expiries: u64, silent_s: f64 },
    #[error("the sender went silent: nothing heard for {silent_s:.1} s")]
    PeerSilent { silent_s: f64 },
    #[error("the sender shut the connection down after {received} of {expected} content bytes")]
    Incomplete { received: u64, expected: u64 },
    #[error(
        "the sender shut the connection down after {received} bytes of a stream that declared {declared}: \
         not cclab's framing; a plain UDT 4 sender's? receive it with --raw"
    )]
    NotFramed { received: u64, declared: u64 },
    #[error(
        "the sender shut the connection down with data missing: {received} bytes in order, then a gap \
         before {held} packets that arrived"
    )]
    RawIncomplete { received: u64, held: usize },
    #[error("{0}")]
    Content(#[from] StreamError),
    #[error("{mismatched} of {written} content bytes differ from the test pattern")]
    PatternMismatch { written: u64, mismatched: u64 },
    #[error("the transfer thread failed: {0}")]
    Thread(String),
}

pub fn invalid(option: &str, message: impl Into<String>) -> TransferError {
    TransferError::Invalid { option: option.to_string(), message: message.into() }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum StreamError {
    #[error("content checksum {got:016x} differs from the sender's {sent:016x}")]
    Checksum { sent: u64, got: u64 },
    #[error("the sender sent {extra} bytes after the checksum that ends its stream")]
    BeyondEnd { extra: u64 },
}
