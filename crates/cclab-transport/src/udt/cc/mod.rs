//! UDT congestion control: the contract of UDT 4's `CCC` class (`src/ccc.h`)
//! as a sans-IO trait. The protocol calls it on every full ACK, every NAK and
//! every EXP timeout, with what the connection knows (RTT, the receiver's
//! arrival speed and the link capacity, both EWMA-smoothed by the sender, the
//! largest number sent); the algorithm answers with the two things UDT
//! controls, the inter-packet period and the congestion window. A flow of
//! `protocol = "udt"` names one of [`UDT_CONGESTION_CONTROLS`] with `cc`
//! (default `udt`, the native DAIMD).
//!
//! The paper's variants are options of the native algorithm
//! ([`daimd`]): the NAK decrease by RTT band ([`rtt_banded`]) and the
//! congestion-prediction window ([`prediction`]) compose, and each named
//! variant (`udt_rtt_banded`, `udt_prediction`, `udt_combined` in
//! [`combined`]) is the native algorithm with those options' defaults
//! switched on.

cclab_wire::algorithms! {
    /// Congestion controls of `protocol = "udt"` flows (UDT 4's `CCC` contract).
    pub const UDT_CONGESTION_CONTROLS: UdtCcDescriptor = [daimd, rtt_banded, prediction, combined];
}

use cclab_wire::{Descriptor, Metrics, ParamError, Params, Time};

/// What the connection tells its congestion control (UDT 4's `setRTT`,
/// `setRcvRate`, `setBandwidth`, `m_iSndCurrSeqNo`, `m_dMaxCWndSize`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UdtCcInput {
    pub now: Time,
    /// The sender's smoothed RTT, microseconds.
    pub rtt_us: i64,
    /// The receiver's packet arrival speed, smoothed, packets per second.
    pub receive_rate: i64,
    /// The estimated link capacity, smoothed, packets per second.
    pub bandwidth: i64,
    /// Bytes of a full packet on the wire (UDT's MSS, IP and UDP headers included).
    pub mss: u32,
    /// The flow window agreed in the handshake: slow start ends above it.
    pub max_window: f64,
    /// The largest packet number sent so far (-1 before the first).
    pub largest_sent: i64,
}

pub trait UdtCongestionControl {
    /// A full ACK acknowledging new data up to (not including) `ack`.
    fn on_ack(&mut self, ack: i64, input: &UdtCcInput);
    /// A NAK whose first reported loss is `first_lost`.
    fn on_loss(&mut self, first_lost: i64, input: &UdtCcInput);
    /// The EXP timer expired with data outstanding.
    fn on_timeout(&mut self, input: &UdtCcInput);
    /// Microseconds between packets.
    fn period_us(&self) -> f64;
    /// Packets allowed in flight (the protocol takes the minimum with the flow window).
    fn window(&self) -> f64;
    fn metrics(&self, _out: &mut Metrics<'_>) {}
}

pub type UdtCcBuilder = fn(&Params) -> Result<Box<dyn UdtCongestionControl>, ParamError>;
pub type UdtCcDescriptor = Descriptor<UdtCcBuilder>;
