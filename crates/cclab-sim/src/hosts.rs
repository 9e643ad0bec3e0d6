//! A host with a memory cap on its connections' send buffers (seed paper
//! 004): an agent that periodically turns the desires of the connections
//! sending from the host into limits that sum to at most the cap
//! ([`share::host_limits`]), and tells each connection its limit.
//!
//! It recomputes every `share_every` (500 ms by default: the BSD slow timer
//! that runs ATBT's fair share, Semke et al. 1998), and also at each start
//! time of a connection declared before the run, so a connection that starts
//! between two periods gets its share at once instead of waiting with an
//! empty buffer. Each connection is guaranteed [`MIN_SEGMENTS`] segments
//! (at most its desire) before the rest is shared. A connection that has not started gets nothing; one whose
//! limit shrinks below what it already holds keeps its data and sends nothing
//! new until acknowledgements bring it under the limit.

use cclab_core::{Actions, Agent, Connections};
use cclab_transport::buffer::{share, Sharing};
use cclab_wire::{Control, ControlRefused, FlowId, NodeId, SendState, Time, NEVER};

/// Segments of buffer every connection is guaranteed before the cap is shared
/// (see [`share::host_limits`]): two, so a connection is never reduced to
/// stop-and-wait by the sharing alone.
pub const MIN_SEGMENTS: u64 = 2;

/// When the host recomputes: every `every` from time 0, and at each start in `starts`.
#[derive(Clone, Debug, PartialEq)]
pub struct ShareSchedule {
    every: Time,
    next_period: Time,
    /// Start times still ahead, latest first (popped from the end).
    starts: Vec<Time>,
}

impl ShareSchedule {
    pub fn new(every: Time, mut starts: Vec<Time>) -> Self {
        starts.sort_unstable_by(|a, b| b.cmp(a));
        starts.dedup();
        Self { every: every.max(1), next_period: 0, starts }
    }

    pub fn next(&self) -> Time {
        self.next_period.min(self.starts.last().copied().unwrap_or(NEVER))
    }

    /// The recomputation due at `now` happened: moves past it.
    pub fn done(&mut self, now: Time) {
        while self.next_period <= now {
            self.next_period += self.every;
        }
        while self.starts.last().is_some_and(|&s| s <= now) {
            self.starts.pop();
        }
    }
}

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
        let desires: Vec<u64> = sharing.iter().map(|(_, s)| s.desired).collect();
        let weights: Vec<f64> = sharing.iter().map(|(_, s)| s.share_weight).collect();
        let floors: Vec<u64> = sharing.iter().map(|(_, s)| MIN_SEGMENTS * u64::from(s.inputs.mss)).collect();
        let limits = share::host_limits(&desires, &weights, self.sharing, self.cap, &floors);
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

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_wire::time::millis;

    /// ATBT's recomputation period: every 500 ms from time 0, whatever else wakes the host.
    #[test]
    fn the_host_recomputes_every_period_and_at_each_start() {
        let mut schedule = ShareSchedule::new(millis(500), vec![millis(3000), millis(700), millis(700)]);
        let mut wakes = Vec::new();
        while schedule.next() <= millis(3500) {
            let now = schedule.next();
            wakes.push(now / millis(1));
            schedule.done(now);
        }
        assert_eq!(wakes, [0, 500, 700, 1000, 1500, 2000, 2500, 3000, 3500]);
    }
}
