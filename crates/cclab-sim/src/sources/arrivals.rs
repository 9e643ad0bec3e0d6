//! Finite transfers arriving as a Poisson process: the web-like traffic of a
//! server. A host agent on the sending host draws exponential inter-arrival
//! times at `rate` and a size for each transfer from `size` (constant,
//! exponential or Pareto with a given mean and shape), opens a connection for
//! it, writes the transfer into it and closes it (the application's control
//! inputs), and the engine forgets the connection when it completes; each
//! transfer leaves a record with its completion time. All of a source's transfers share its pair of hosts, and
//! its counters are reported as one row of the flows table.
//!
//! Inter-arrival times and sizes come from two random streams of their own
//! (named after the flow instance), so changing the size distribution does not
//! move the arrival times. Pareto sizes use the scale `mean (shape - 1) / shape`,
//! so the mean is the one asked for; with shape <= 2 the variance is infinite,
//! as in the web-traffic models of Crovella and Bestavros (1997).

use super::agent::{poisson_gap, TransferOpener};
use super::{AppSpec, SourceBuilder, SourceDescriptor};
use cclab_core::{Actions, Agent, Connections, RngStream};
use cclab_wire::{
    ControlRefused, Descriptor, FlowId, NodeId, ParamDefault, ParamError, ParamType, Parameter, Params, Role,
    SizeDistribution, Time, NEVER,
};

pub const DESCRIPTOR: SourceDescriptor = Descriptor {
    name: "arrivals",
    role: Role::TrafficSource,
    summary: "finite transfers arriving as a Poisson process at `rate`, sizes drawn from `size`",
    source:
        "Poisson session arrivals with heavy-tailed sizes: Paxson and Floyd, ToN 3(3) 1995; Crovella and \
             Bestavros, ToN 5(6) 1997; ns-2 PackMime-style web traffic",
    parameters: &[
        Parameter {
            name: "rate",
            ty: ParamType::PerSecond,
            unit: "",
            min: 1e-6,
            max: 1e6,
            default: ParamDefault::Required,
            meaning: "mean arrivals per unit of time, e.g. \"50/s\"",
        },
        Parameter {
            name: "size",
            ty: ParamType::SizeDistribution,
            unit: "",
            min: 1.0,
            max: 1e12,
            default: ParamDefault::Required,
            meaning:
                "transfer size: \"100KB\", \"exponential(mean=100KB)\" or \"pareto(mean=100KB, shape=1.2)\"",
        },
    ],
    metrics: &[],
    build: SourceBuilder { build, protocols: &["tcp"] },
};

fn build(params: &Params) -> Result<AppSpec, ParamError> {
    Ok(AppSpec::Arrivals { rate: params.per_second("rate")?, size: params.distribution("size")? })
}

pub struct ArrivalSource {
    rate: f64,
    sizes: SizeDistribution,
    gaps: RngStream,
    size_draws: RngStream,
    next: Time,
    opener: TransferOpener,
}

pub struct ArrivalPlan {
    pub rate: f64,
    pub sizes: SizeDistribution,
    pub start: Time,
    /// Names the random streams: "flow:NAME:INDEX".
    pub stream: String,
    pub seed: u64,
}

impl ArrivalSource {
    pub fn new(plan: ArrivalPlan, opener: TransferOpener) -> Self {
        let mut gaps = RngStream::new(plan.seed, &format!("{}:arrivals", plan.stream));
        let next = plan.start + poisson_gap(&mut gaps, plan.rate);
        Self {
            rate: plan.rate,
            sizes: plan.sizes,
            gaps,
            size_draws: RngStream::new(plan.seed, &format!("{}:sizes", plan.stream)),
            next,
            opener,
        }
    }

    pub fn opened(&self) -> u64 {
        self.opener.opened()
    }
}

impl Agent for ArrivalSource {
    fn connection_nodes(&self) -> Option<Vec<(NodeId, NodeId)>> {
        self.opener.connection_nodes()
    }

    /// It controls only the connections it opened.
    fn watched_nodes(&self) -> Option<Vec<NodeId>> {
        Some(Vec::new())
    }

    fn next_wakeup(&self) -> Time {
        if self.opener.failed() {
            NEVER
        } else {
            self.next
        }
    }

    fn on_timer(&mut self, now: Time, _connections: &Connections, actions: &mut Actions) {
        while self.next <= now && !self.opener.failed() {
            let size = self.sizes.quantile(self.size_draws.next_f64());
            self.opener.open(now, size, actions);
            self.next = self.next.saturating_add(poisson_gap(&mut self.gaps, self.rate));
        }
    }

    fn on_refused(&mut self, flow: FlowId, refused: ControlRefused) {
        self.opener.refused(flow, refused);
    }

    fn failure(&self) -> Option<String> {
        self.opener.failure()
    }
}
