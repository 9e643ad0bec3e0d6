//! What the sources that open connections during the run (`arrivals`, `web`)
//! share: the connection factory the builder gives them, opening one finite
//! transfer on the instance's pair of hosts, and Poisson inter-arrival times.

use cclab_core::{Actions, BucketId, Open, RngStream};
use cclab_wire::{Control, ControlRefused, Endpoint, FlowId, NodeId, Time};

/// A connection's sending and receiving endpoints.
pub type EndpointPair = (Box<dyn Endpoint>, Box<dyn Endpoint>);

/// Builds the two endpoints of a connection opened at `start`, whose sender
/// sends what its application writes.
pub type ConnectionFactory = Box<dyn FnMut(Time) -> Result<EndpointPair, String>>;

/// Opens finite transfers from `from` to `to`, all counted in one bucket (one
/// row of the flows table), and remembers the first failure: a source that
/// cannot build a connection stops, and the run reports why.
pub struct TransferOpener {
    pub from: NodeId,
    pub to: NodeId,
    pub bucket: BucketId,
    factory: ConnectionFactory,
    opened: u64,
    failure: Option<String>,
}

impl TransferOpener {
    pub fn new(from: NodeId, to: NodeId, bucket: BucketId, factory: ConnectionFactory) -> Self {
        Self { from, to, bucket, factory, opened: 0, failure: None }
    }

    /// The nodes of the connections it opens, as [`cclab_core::Agent::connection_nodes`] wants them.
    pub fn connection_nodes(&self) -> Option<Vec<(NodeId, NodeId)>> {
        Some(vec![(self.from, self.to)])
    }

    /// Opens a connection at `now`, writes `size` bytes into it and closes it
    /// (the application's control inputs); `None` once the source has failed.
    pub fn open(&mut self, now: Time, size: u64, actions: &mut Actions) -> Option<FlowId> {
        if self.failure.is_some() {
            return None;
        }
        match (self.factory)(now) {
            Ok((sender, receiver)) => {
                let flow = actions.open(Open {
                    sender,
                    receiver,
                    from: self.from,
                    to: self.to,
                    bucket: self.bucket,
                    size: Some(size),
                    start: now,
                });
                actions.control(flow, Control::AppWrite { bytes: size });
                actions.control(flow, Control::AppClose);
                self.opened += 1;
                Some(flow)
            }
            Err(e) => {
                self.failure = Some(e);
                None
            }
        }
    }

    pub fn refused(&mut self, flow: FlowId, refused: ControlRefused) {
        self.failure = Some(format!("connection {flow}: {refused}"));
    }

    pub fn failed(&self) -> bool {
        self.failure.is_some()
    }

    pub fn failure(&self) -> Option<String> {
        self.failure.clone()
    }

    /// Transfers opened so far.
    pub fn opened(&self) -> u64 {
        self.opened
    }
}

/// An exponential inter-arrival time at `rate` per second, by inverse
/// transform, in whole nanoseconds.
pub fn poisson_gap(stream: &mut RngStream, rate: f64) -> Time {
    let u = stream.next_f64();
    let seconds = -(1.0 - u).ln() / rate;
    seconds_to_time(seconds)
}

/// Seconds as whole nanoseconds, capped far beyond any run.
pub fn seconds_to_time(seconds: f64) -> Time {
    (seconds * 1e9).round().min(1e18) as Time
}
