//! cclab-transport: sans-IO transport endpoints and the algorithms they combine.
//!
//! Congestion control ([`cc`]: how much may be in flight), loss recovery
//! ([`tcp::recovery`]: what to send next after a loss) and pacing ([`pacing`]:
//! when) are separate traits with one file per algorithm; a TCP flow is a
//! combination of one of each, chosen by name. Send-buffer policies
//! ([`buffer`]: how much a connection may buffer, and how a host shares a
//! memory cap among its connections) are a fourth kind. Every algorithm file
//! exports a descriptor, listed beside its role's trait; [`registry`] gathers
//! the lists and the default names. The crate depends only on `cclab-wire`: it
//! never sees the simulator's engine.

pub mod app;
pub mod buffer;
pub mod cc;
pub mod estimate;
pub mod pacing;
pub mod registry;
pub mod tcp;
pub mod udp;
pub mod udt;
pub mod windowed_filter;
