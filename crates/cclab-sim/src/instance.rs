//! A flow instance as built: one row of the flows table, what the observers,
//! the traces and the results find a flow group's instances by.

use cclab_core::BucketId;
use cclab_wire::{EndpointId, FlowId, Time};

/// One instance of a flow group: a row of the flows table.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowInstance {
    pub group: usize,
    pub index: u32,
    /// Position among all flow instances; also the flow id of its connection, if it has one.
    pub flow_id: FlowId,
    pub bucket: BucketId,
    /// The endpoints of its one connection; `None` for a source that opens many.
    pub sender: Option<EndpointId>,
    pub receiver: Option<EndpointId>,
    pub start: Time,
    /// Propagation-only round-trip time of the path.
    pub base_rtt: Time,
}
