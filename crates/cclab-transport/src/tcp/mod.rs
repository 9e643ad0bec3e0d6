//! TCP as two sans-IO endpoints: [`TcpSender`] and [`TcpReceiver`].
//!
//! There is no connection set-up (as with ns-2's one-way TCP agents): the sender
//! starts sending at its start time, the receiver answers every data segment by
//! the rules of RFC 5681 §4.2 / RFC 1122 (immediate or delayed cumulative ACKs),
//! RFC 2018 (SACK blocks) and RFC 7323 (timestamp echo). Sequence numbers are
//! 64-bit byte offsets; the sender works in whole segments of `mss` bytes, the
//! last one possibly shorter.

pub mod cwnd_usage;
pub mod rate;
pub mod receiver;
pub mod recovery;
pub mod rtt;
pub mod scoreboard;
pub mod sender;
pub mod timers;

pub use receiver::TcpReceiver;
pub use sender::TcpSender;

use crate::cc::{CwndGrowth, SsthreshBasis};
use cclab_wire::time::{millis, secs};
use cclab_wire::{Ect, Time};

pub use crate::app::App;

/// Everything that configures one TCP connection (both ends).
#[derive(Clone, Debug, PartialEq)]
pub struct TcpConfig {
    /// Payload bytes per full segment (SMSS).
    pub mss: u32,
    /// Header bytes added on the wire to every segment and ACK.
    pub header_bytes: u32,
    /// Initial congestion window in segments.
    pub initial_window: u32,
    /// Initial ssthresh in segments ("arbitrarily high" in RFC 5681).
    pub initial_ssthresh: f64,
    /// Receiver window in segments (ns-2's `window_`); `None` is unlimited.
    pub max_window: Option<u64>,
    pub min_rto: Time,
    pub initial_rto: Time,
    pub max_rto: Time,
    /// Clock granularity G of RFC 6298 §2.
    pub clock_granularity: Time,
    pub dupthresh: u32,
    /// RFC 3042 limited transmit.
    pub limited_transmit: bool,
    /// RFC 7323 timestamps; without them RTT samples follow Karn's algorithm.
    pub timestamps: bool,
    /// The receiver sends SACK blocks (negotiated when the sender uses SACK recovery).
    pub sack: bool,
    pub delayed_ack: bool,
    pub delack_timeout: Time,
    /// How the connection reports congestion marks: not at all, RFC 3168's
    /// ECN-Echo, or AccECN's count of CE-marked bytes. With either, the
    /// sender sets `ect` on its data segments and reacts to echoed marks.
    pub ecn: EcnFeedback,
    /// The ECN codepoint data segments carry when `ecn` is on: ECT(0), or
    /// ECT(1) for an L4S congestion control (RFC 9331 §4).
    pub ect: Ect,
    /// The window a congestion event's multiplicative decrease applies to.
    pub ssthresh_basis: SsthreshBasis,
    /// Whether an ACK grows the window whether or not it was in use.
    pub cwnd_growth: CwndGrowth,
    /// ns-2's `overhead_`: when the window lets data out, the sender first
    /// waits a uniform random time in [0, send_overhead), then sends all the
    /// window allows; 0 sends at once. It breaks the phase effects of
    /// deterministic DropTail simulations (Floyd and Jacobson 1992).
    pub send_overhead: Time,
    /// Seeds the send-overhead draws; the driver takes it from the run's
    /// random stream named after the connection.
    pub send_overhead_seed: u64,
    pub app: App,
    pub start: Time,
}

/// How a receiver reports the congestion marks it sees (a flow's `ecn`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EcnFeedback {
    /// No ECN: data is Not-ECT and queues drop instead of marking.
    #[default]
    Off,
    /// RFC 3168 §6.1.3: ECN-Echo on the ACK that follows a CE mark, so the
    /// sender learns that a window saw congestion, not how much.
    Classic,
    /// AccECN (draft-ietf-tcpm-accurate-ecn §3.2): every ACK carries the
    /// receiver's running count of CE-marked payload bytes (the ECEB
    /// field), so the sender sees the fraction of its bytes marked.
    Accurate,
}

impl EcnFeedback {
    pub const NAMES: [&'static str; 3] = ["off", "classic", "accecn"];

    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "off" => Some(Self::Off),
            "classic" => Some(Self::Classic),
            "accecn" => Some(Self::Accurate),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Classic => "classic",
            Self::Accurate => "accecn",
        }
    }

    pub fn is_on(self) -> bool {
        self != Self::Off
    }
}

impl TcpConfig {
    /// The window the receiver advertises, in bytes: `max_window` segments,
    /// at most the 4 GiB the header holds (unlimited: 4 GiB, beyond any
    /// window a run reaches; RFC 7323's scaled window stops at 1 GiB).
    pub fn advertised_window_bytes(&self) -> u32 {
        let bytes = self.max_window.map_or(u64::MAX, |w| w.saturating_mul(self.mss as u64));
        u32::try_from(bytes).unwrap_or(u32::MAX)
    }

    /// RFC 5681 §3.1 (from RFC 3390): IW = min(4*SMSS, max(2*SMSS, 4380 bytes)).
    pub fn rfc3390_initial_window(mss: u32) -> u32 {
        let bytes = (4 * mss).min((2 * mss).max(4380));
        bytes / mss
    }
}

impl Default for TcpConfig {
    fn default() -> Self {
        let mss = 1000;
        Self {
            mss,
            header_bytes: 40,
            initial_window: Self::rfc3390_initial_window(mss),
            initial_ssthresh: 1e9,
            max_window: None,
            min_rto: secs(1),
            initial_rto: secs(1),
            max_rto: secs(60),
            clock_granularity: millis(1),
            dupthresh: 3,
            limited_transmit: false,
            timestamps: true,
            sack: false,
            delayed_ack: false,
            delack_timeout: millis(200),
            ecn: EcnFeedback::Off,
            ect: Ect::Ect0,
            ssthresh_basis: SsthreshBasis::FlightSize,
            cwnd_growth: CwndGrowth::Always,
            send_overhead: 0,
            send_overhead_seed: 0,
            app: App::Bulk,
            start: 0,
        }
    }
}

#[cfg(test)]
mod contract_tests;
#[cfg(test)]
mod send_buffer_tests;
#[cfg(test)]
mod test_support;
#[cfg(test)]
mod tests;
