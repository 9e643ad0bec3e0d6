//! cclab-wire: what a driver and the protocols it drives share.
//!
//! The simulator's engine, the transport protocols and the real-network mode
//! all speak this vocabulary and nothing else of each other: simulated or
//! real [`Time`] in integer nanoseconds; the [`Packet`] with its routing
//! fields, size, congestion-mark bits and a protocol [`Header`]; the
//! [`Endpoint`] interface of a sans-IO protocol state machine with its
//! [`Counters`], [`Control`] inputs and named [`Metrics`]; and the [`Descriptor`] every
//! algorithm exports. The engine never looks inside a header, and a protocol
//! never sees the engine.

pub mod counters;
pub mod descriptor;
pub mod distribution;
pub mod endpoint;
pub mod metrics;
pub mod packet;
pub mod prefetch;
pub mod random;
pub mod time;
pub mod udt_codec;
pub mod units;

pub use counters::{BaseCounts, Counters, Extras, Measure};
pub use descriptor::{
    Descriptor, Info, ParamDefault, ParamError, ParamType, ParamValue, Parameter, Params, Role,
};
pub use distribution::{Law, SizeDistribution};
pub use endpoint::{AsAny, BufferInputs, Control, ControlRefused, Endpoint, Outbox, SendState};
pub use metrics::{MetricDesc, MetricLog, MetricSink, Metrics};
pub use packet::{
    Ect, EndpointId, FlowId, Header, LinkId, NodeId, Packet, TcpHeader, TcpKind, TrafficKind, UdpHeader,
    UdtControl, UdtHeader, UdtLossList, UdtRates, MAX_SACK_BLOCKS,
};
pub use time::{Time, NEVER};
