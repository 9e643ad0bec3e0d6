//! cclab-transport: sans-IO transport endpoints and the algorithms they combine.
//!
//! Congestion control ([`cc`]: how much may be in flight) and loss recovery
//! ([`tcp::recovery`]: what to send next after a loss) are separate traits with
//! one file per algorithm; a TCP flow is a combination of one of each, chosen by
//! name through the registries in [`registry`].

pub mod cc;
pub mod registry;
pub mod tcp;
