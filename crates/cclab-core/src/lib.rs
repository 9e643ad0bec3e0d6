//! cclab-core: the deterministic packet-level simulation engine.
//!
//! Time is an integer count of nanoseconds. Events are ordered by
//! `(time, insertion sequence)`, so two runs of the same scenario with the same
//! seed process exactly the same events in exactly the same order. Every random
//! component draws from its own named stream ([`RngStream`]) derived from the run
//! seed, so adding a component never perturbs the draws of another.
//!
//! The engine knows transport protocols only through the
//! [`cclab_wire::Endpoint`] trait and never looks inside a packet's protocol
//! header: an endpoint takes `(now, packet)` or `(now, timer)` and returns
//! packets to send plus the next time it wants to run.

pub mod cancel;
pub mod delivery_trace;
pub mod engine;
mod events;
pub mod huge_pages;
pub mod link;
pub mod loss;
pub mod network;
pub mod pool;
pub mod queue;
mod ring;
pub mod rng;
pub mod schedule;
pub mod stats;
pub mod trace;
pub mod transmitter;

pub use cancel::{CancelToken, Cancelled, CANCEL_CHECK_EVENTS};
pub use engine::{
    Actions, Agent, AgentId, BucketId, ConnectionInfo, Connections, Engine, Open, RunTotals, SideCounters,
    TransferRecord,
};
pub use huge_pages::HugePageAlloc;
pub use link::{Link, LinkSpec, Variation};
pub use network::{Network, NetworkError, Node, NodeKind};
pub use pool::{PacketId, PacketPool, PacketRef};
pub use queue::{BufferLimit, Discipline, DropTail, QueueDiscipline};
pub use rng::RngStream;
pub use stats::{LinkStats, MeasurementWindow, MetricRow, Observation, Source, TimeSeries, Watch};
pub use trace::{DropCause, TraceEvent, TraceFilter, TraceRecord, Tracer};
