//! cclab-core: the deterministic packet-level simulation engine.
//!
//! Time is an integer count of nanoseconds ([`Time`]). Events are ordered by
//! `(time, insertion sequence)`, so two runs of the same scenario with the same
//! seed process exactly the same events in exactly the same order. Every random
//! component draws from its own named stream ([`RngStream`]) derived from the run
//! seed, so adding a component never perturbs the draws of another.
//!
//! The engine knows transport protocols only through the [`Endpoint`] trait:
//! an endpoint takes `(now, packet)` or `(now, timer)` and returns packets to
//! send plus the next time it wants to run.

pub mod endpoint;
pub mod engine;
pub mod link;
pub mod network;
pub mod packet;
pub mod queue;
pub mod rng;
pub mod stats;
pub mod time;

pub use endpoint::{Endpoint, EndpointCounters, Outbox, Probe};
pub use engine::{Engine, RunTotals};
pub use link::{Enqueued, Link, LinkSpec};
pub use network::{Network, NetworkError, Node, NodeKind};
pub use packet::{
    EndpointId, LinkId, NodeId, Packet, PacketId, PacketKind, PacketPool, SackBlocks, MAX_SACK_BLOCKS,
};
pub use queue::{BufferLimit, DropTail, QueueDiscipline};
pub use rng::RngStream;
pub use stats::{LinkStats, MeasurementWindow, TimeSeries};
pub use time::{Time, NEVER};
