//! Send-buffer policies: how big a connection's socket send buffer is, and how
//! a host with a memory cap shares it among its connections (seed paper 004).
//!
//! Two levels, as in Semke, Mahdavi and Mathis's automatic buffer tuning
//! (SIGCOMM 1998), where the host's fair share sets *upper limits* and memory
//! is still allocated on demand:
//!
//! - per connection, a [`SendBufferPolicy`] says how much buffer the
//!   connection *desires* from its own state; the sender asks it after every
//!   ACK it processes (and when it starts), so a desire that follows cwnd
//!   follows it between the host's recomputations;
//! - per host with a cap, [`share::host_limits`] turns the desires (and each
//!   policy's share weight) into limits that sum to at most the cap; the host
//!   recomputes them periodically and sends each connection its limit.
//!
//! A connection's send buffer is `min(desire, limit)`: the sender may have at
//! most that many bytes unacknowledged (the application is blocked when the
//! buffer is full). Because every buffer is at most its limit and the limits
//! sum to at most the cap, the buffers never sum above the cap, at any instant.
//!
//! One file per policy: [`fixed`], [`atbt`], [`rtba`]; [`padhye`] is the
//! throughput model RTBA uses, [`share`] the redistribution rules. Each
//! policy file exports a descriptor and [`SEND_BUFFER_POLICIES`] lists them;
//! each file's header states the decisions it makes where its sources are
//! silent.

cclab_wire::algorithms! {
    /// How a connection sizes its send buffer (`send_buffer.policy`).
    pub const SEND_BUFFER_POLICIES: SendBufferDescriptor = [fixed, atbt, rtba];
}
pub mod padhye;
pub mod share;

pub use cclab_wire::BufferInputs;
use cclab_wire::{Descriptor, Metrics, ParamDefault, ParamError, ParamType, Parameter, Params, Time};

pub type SendBufferDescriptor = Descriptor<fn(&Params) -> Result<Box<dyn SendBufferPolicy>, ParamError>>;

/// The floor of a policy that sizes the buffer from the connection's state.
pub const MIN_BUFFER: Parameter = Parameter {
    name: "min",
    ty: ParamType::Size,
    unit: "",
    min: 0.0,
    max: 1e9,
    default: ParamDefault::Value("4KB"),
    meaning: "the desire is never below this (a minimum socket buffer)",
};

/// How much send buffer one connection desires.
pub trait SendBufferPolicy {
    fn name(&self) -> &'static str;
    /// The buffer this connection desires now, in bytes; called after every
    /// ACK the sender processes and when it starts. A policy that updates on
    /// its own period (RTBA, once per RTT) keeps its last value in between.
    fn desire(&mut self, now: Time, inputs: &BufferInputs) -> u64;
    /// This connection's weight when its host shares a cap in proportion
    /// (RTBA: its expected rate); policies that share max-min fairly keep 1.
    fn share_weight(&self) -> f64 {
        1.0
    }
    /// How the host shares its cap among connections of this policy.
    fn sharing(&self) -> Sharing {
        Sharing::MaxMin
    }
    /// Publishes the policy's state for time series under the names its
    /// descriptor lists; the sender adds the `send_buffer.` prefix.
    fn metrics(&self, _out: &mut Metrics<'_>) {}
}

/// How a host with a cap redistributes it when the desires exceed it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sharing {
    /// Max-min fair: connections that desire less than an equal share get
    /// their desire, the rest is split equally among the others (ATBT, fixed).
    MaxMin,
    /// In proportion to each connection's share weight, no connection above
    /// its desire (RTBA, seed paper 004 §3.2 and its Fig. 1).
    Proportional,
}
