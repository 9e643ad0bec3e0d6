//! A host with a memory cap on its connections' send buffers (seed paper
//! 004): an agent that periodically turns the desires of the connections
//! sending from the host into limits that sum to at most the cap
//! ([`share::host_limits`]), and tells each connection its limit.
//!
//! It recomputes every `share_every` (500 ms by default: the BSD slow timer
//! that runs ATBT's fair share, Semke et al. 1998), and also at each start
//! time of a connection declared before the run, so a connection that starts
//! between two periods gets its share at once instead of waiting with an
//! empty buffer. Each connection is guaranteed [`share::MIN_SEGMENTS`] segments
//! (at most its desire) before the rest is shared. A connection that has not started gets nothing; one whose
//! limit shrinks below what it already holds keeps its data and sends nothing
//! new until acknowledgements bring it under the limit.

use cclab_core::{Actions, Agent, Connections};
use cclab_transport::buffer::share::{self, ShareSchedule};
use cclab_transport::buffer::Sharing;
use cclab_wire::{Control, ControlRefused, FlowId, NodeId, SendState, Time};

pub struct SendBufferHost {
    node: NodeId,
    cap: u64,
    sharing: Sharing,
    schedule: ShareSchedule,
    refused: Option<String>,
}

impl SendBufferHost {
    pub fn new(node: NodeId, cap: u64, sharing: Sharing, schedule: ShareSchedule) -> Self {
        Self { node, cap, sharing, schedule, refused: None }
    }
}

impl Agent for SendBufferHost {
    /// It sizes buffers and opens nothing.
    fn connection_nodes(&self) -> Option<Vec<(NodeId, NodeId)>> {
        Some(Vec::new())
    }

    /// It reads and controls the connections sending from its node.
    fn watched_nodes(&self) -> Option<Vec<NodeId>> {
        Some(vec![self.node])
    }

    fn next_wakeup(&self) -> Time {
        self.schedule.next()
    }

    fn on_timer(&mut self, now: Time, connections: &Connections, actions: &mut Actions) {
        self.schedule.done(now);
        // A connection counts from its start time on, even if its own start
        // event comes after this one at the same instant.
        let sharing: Vec<(FlowId, SendState)> = connections
            .at(self.node)
            .iter()
            .filter_map(|c| c.send.filter(|s| s.start <= now).map(|s| (c.flow, s)))
            .collect();
        let states: Vec<SendState> = sharing.iter().map(|&(_, s)| s).collect();
        let limits = share::connection_limits(&states, self.sharing, self.cap);
        for (&(flow, _), bytes) in sharing.iter().zip(limits) {
            actions.control(flow, Control::SetSendBuffer { bytes });
        }
    }

    fn on_refused(&mut self, flow: FlowId, refused: ControlRefused) {
        self.refused.get_or_insert_with(|| format!("flow {flow}: {refused}"));
    }

    fn failure(&self) -> Option<String> {
        self.refused.clone()
    }
}
