//! The network a scenario runs on, as the one form everything after parsing
//! handles: a [`Graph`] of named nodes and duplex links, each link with its
//! role (`bottleneck`, `access`, or a plain `link`) as data.
//!
//! A named shape (`kind = "dumbbell"`) is compiled into that graph when the
//! scenario is parsed ([`Topology::compile`]); the shape itself is kept only
//! as the user wrote it ([`Topology`]), for the resolved scenario and its JSON
//! form. So the builder, the estimates and the observers know one topology,
//! and a new shape is one compile function, not a case in each of them.

use crate::capacity::Capacity;
use crate::units::BufferSpec;
use cclab_core::loss::LossModel;
use cclab_core::schedule::Schedule;
use cclab_wire::{Params, Time};
use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkParams {
    /// The rate; on a link whose rate varies, the rate a BDP-sized buffer and
    /// the access links' default rate are computed from: `buffer_rate` if
    /// given, else the forward direction's nominal rate ([`Capacity::nominal_bps`]).
    pub rate_bps: u64,
    /// The propagation delay (at time 0, if it follows `delay_schedule`).
    #[serde(serialize_with = "crate::units::as_secs")]
    pub delay: Time,
    pub buffer: BufferSpec,
    /// Queue discipline (a descriptor name) and its parameters.
    pub queue: String,
    pub queue_params: Params,
    /// Random loss in the link's forward (`from` -> `to`) direction.
    pub loss: LossModel,
    pub reverse_loss: LossModel,
    /// What each direction carries over time (`rate` or `trace`, and
    /// `reverse_rate` or `reverse_trace` where the reverse differs). Left
    /// out of the JSON form when they say no more than `rate_bps`: the
    /// resolved form keys the sweep cache, whose committed runs stay valid.
    #[serde(skip_serializing_if = "Capacity::is_constant")]
    pub capacity: Capacity,
    /// `None` when the reverse direction carries what the forward one does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reverse_capacity: Option<Capacity>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay_schedule: Option<Schedule>,
    /// The rate a BDP-sized buffer is computed from, on a link whose rate varies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buffer_rate: Option<u64>,
}

impl LinkParams {
    /// A link of constant `rate_bps` and `delay`, without loss.
    pub fn constant(
        rate_bps: u64,
        delay: Time,
        buffer: BufferSpec,
        queue: &str,
        queue_params: Params,
    ) -> Self {
        Self {
            rate_bps,
            delay,
            buffer,
            queue: queue.to_string(),
            queue_params,
            loss: LossModel::NONE,
            reverse_loss: LossModel::NONE,
            capacity: Capacity::Rate(rate_bps),
            reverse_capacity: None,
            delay_schedule: None,
            buffer_rate: None,
        }
    }

    /// Whether either direction's rate varies (a schedule or a trace).
    pub fn varies(&self) -> bool {
        !self.capacity.is_constant() || !self.reverse().is_constant()
    }

    /// What the reverse direction carries over time.
    pub fn reverse(&self) -> &Capacity {
        self.reverse_capacity.as_ref().unwrap_or(&self.capacity)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Dumbbell {
    pub access_rate_bps: u64,
    pub access_buffer: BufferSpec,
    pub bottleneck: LinkParams,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GraphLink {
    pub from: String,
    pub to: String,
    pub params: LinkParams,
    /// What the link is for; a compiled shape says, a graph's own links are plain links.
    #[serde(skip)]
    pub role: LinkRole,
    /// Where the link was configured (`topology.bottleneck`, `topology.links[2]`), for messages.
    #[serde(skip)]
    pub key: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Graph {
    pub nodes: Vec<String>,
    pub links: Vec<GraphLink>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<HostSpec>,
    /// How flow instances with hosts of their own join the graph (a dumbbell's access links).
    #[serde(skip)]
    pub access: Option<AccessLinks>,
}

/// A node whose connections share a cap on send-buffer memory (`[[topology.hosts]]`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HostSpec {
    pub node: String,
    /// Bytes the send buffers of all its connections may hold together.
    pub memory: u64,
    /// How often the host recomputes its connections' limits.
    pub share_every: Time,
}

/// ATBT's fair share runs from the BSD slow timer, twice a second (Semke et al. 1998).
pub const DEFAULT_SHARE_EVERY: Time = 500_000_000;

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
// One per scenario: the size of its variants does not matter.
#[allow(clippy::large_enum_variant)]
pub enum Topology {
    Dumbbell(Dumbbell),
    Graph(Graph),
}

/// Which way a dumbbell flow sends: from the left router to the right one, or back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    Forward,
    Reverse,
}

impl Direction {
    pub fn as_str(&self) -> &'static str {
        match self {
            Direction::Forward => "forward",
            Direction::Reverse => "reverse",
        }
    }
}

/// What a link is for, as the links table's `role` column says it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LinkRole {
    /// A link of a graph the user drew: no role beyond carrying its routes.
    #[default]
    Link,
    /// The link a shape's flows share; its `from -> to` direction is the
    /// bottleneck, the other `bottleneck.reverse`.
    Bottleneck,
    /// A link joining a flow instance's own host to the graph.
    Access,
}

impl LinkRole {
    /// The roles of a duplex link's two directions (`from -> to`, then back).
    pub fn directions(self) -> [&'static str; 2] {
        match self {
            LinkRole::Link => ["link", "link"],
            LinkRole::Bottleneck => ["bottleneck", "bottleneck.reverse"],
            LinkRole::Access => ["access", "access"],
        }
    }
}

/// The links that join flow instances with hosts of their own to the graph:
/// per instance, its sender host to the group's sender node and the
/// receiver node to its receiver host, each a duplex link of `params` whose
/// delays make up the instance's RTT (see [`FlowEnds::own_hosts`]).
#[derive(Clone, Debug, PartialEq)]
pub struct AccessLinks {
    /// Rate, buffer and queue of every access link (its delay is set per instance).
    pub params: LinkParams,
    /// One-way delay between the nodes the access links join, which the two
    /// access links of a direction add to, to make up half the instance's RTT.
    pub core_delay: Time,
    /// Where they were configured (`topology.access`), for messages.
    pub key: String,
}

impl AccessLinks {
    /// The delays of an instance's sender-side and receiver-side access links
    /// for a round trip of `rtt`: they split what `core_delay` leaves of `rtt / 2`.
    pub fn delays(&self, rtt: Time) -> (Time, Time) {
        let spare = rtt / 2 - self.core_delay;
        (spare / 2, spare - spare / 2)
    }
}

/// Where a flow group's instances join the graph.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlowEnds {
    /// The nodes its data leaves from and goes to.
    pub sender: String,
    pub receiver: String,
    /// Each instance has hosts of its own (`NAME[k].snd`, `NAME[k].rcv`),
    /// joined to `sender` and `receiver` by the graph's [`AccessLinks`], and
    /// an RTT of its own (the group's `rtt`); else every instance sends from
    /// `sender` to `receiver` themselves.
    pub own_hosts: bool,
}

impl FlowEnds {
    /// The names of instance `index`'s own sender and receiver hosts.
    pub fn host_names(group: &str, index: u32) -> (String, String) {
        (format!("{group}[{index}].snd"), format!("{group}[{index}].rcv"))
    }
}

/// A duplex link's two direction names, `from->to` then `to->from`.
pub fn direction_names(from: &str, to: &str) -> [String; 2] {
    [format!("{from}->{to}"), format!("{to}->{from}")]
}

impl Graph {
    /// The link one of whose directions is called `name`, and which direction (0 forward, 1 back).
    pub fn link_direction(&self, name: &str) -> Option<(&GraphLink, usize)> {
        self.links.iter().find_map(|l| {
            let names = direction_names(&l.from, &l.to);
            names.iter().position(|n| n == name).map(|d| (l, d))
        })
    }

    /// The first link of `role`.
    pub fn link_of_role(&self, role: LinkRole) -> Option<&GraphLink> {
        self.links.iter().find(|l| l.role == role)
    }
}

impl Topology {
    /// The graph a run of this topology is built on.
    pub fn compile(&self) -> Graph {
        match self {
            Topology::Dumbbell(d) => d.compile(),
            Topology::Graph(g) => g.clone(),
        }
    }
}

impl Dumbbell {
    /// The routers of a dumbbell, joined by its bottleneck.
    pub const ROUTERS: [&'static str; 2] = ["left", "right"];

    /// Two routers joined by the bottleneck (`left -> right` its forward
    /// direction); every flow instance on hosts of its own, joined to the
    /// routers by DropTail access links.
    fn compile(&self) -> Graph {
        let [left, right] = Self::ROUTERS.map(String::from);
        let droptail = cclab_core::queue::droptail::DESCRIPTOR.name;
        Graph {
            nodes: vec![left.clone(), right.clone()],
            links: vec![GraphLink {
                from: left,
                to: right,
                params: self.bottleneck.clone(),
                role: LinkRole::Bottleneck,
                key: "topology.bottleneck".into(),
            }],
            hosts: Vec::new(),
            access: Some(AccessLinks {
                params: LinkParams::constant(
                    self.access_rate_bps,
                    0,
                    self.access_buffer,
                    droptail,
                    Params::new(),
                ),
                core_delay: self.bottleneck.delay,
                key: "topology.access".into(),
            }),
        }
    }

    /// Where a flow of `direction` joins the compiled graph: forward flows
    /// send from the left router to the right one, reverse flows back.
    pub fn ends(direction: Direction) -> FlowEnds {
        let [left, right] = Self::ROUTERS.map(String::from);
        let (sender, receiver) = match direction {
            Direction::Forward => (left, right),
            Direction::Reverse => (right, left),
        };
        FlowEnds { sender, receiver, own_hosts: true }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DUMBBELL: &str = r#"
[run]
duration = "1s"
[topology]
kind = "dumbbell"
access = { rate = "1Gbps" }
[topology.bottleneck]
rate = "100Mbps"
delay = "10ms"
[[flows]]
name = "up"
rtt = "60ms"
[[flows]]
name = "down"
direction = "reverse"
rtt = "40ms"
"#;

    /// The graph a dumbbell compiles to is what its builder used to make:
    /// two routers, the bottleneck between them, and each instance's own
    /// hosts on access links whose delays make up its RTT.
    #[test]
    fn a_dumbbell_compiles_to_two_routers_a_bottleneck_and_access_links() {
        let s = crate::parse(DUMBBELL, "t").expect("valid");
        let g = &s.graph;
        assert_eq!(g.nodes, ["left", "right"]);
        assert_eq!(g.links.len(), 1);
        let l = &g.links[0];
        assert_eq!(
            (l.from.as_str(), l.to.as_str(), l.role, l.key.as_str()),
            ("left", "right", LinkRole::Bottleneck, "topology.bottleneck")
        );
        assert_eq!(g.link_direction("right->left").map(|(_, d)| d), Some(1));
        let access = g.access.as_ref().expect("access links");
        assert_eq!((access.params.rate_bps, access.params.queue.as_str()), (1_000_000_000, "droptail"));
        // 60 ms: 30 ms one way, 10 ms of it the bottleneck's, 10 ms each access link.
        assert_eq!(access.delays(60_000_000), (10_000_000, 10_000_000));
        assert_eq!(
            s.flows[0].ends,
            FlowEnds { sender: "left".into(), receiver: "right".into(), own_hosts: true }
        );
        assert_eq!(
            s.flows[1].ends,
            FlowEnds { sender: "right".into(), receiver: "left".into(), own_hosts: true }
        );
        let sim = crate::build(&s, 1).expect("builds");
        assert_eq!(
            sim.link_roles,
            [
                "bottleneck",
                "bottleneck.reverse",
                "access",
                "access",
                "access",
                "access",
                "access",
                "access",
                "access",
                "access"
            ]
        );
        let names: Vec<&str> = sim.engine.net.links.iter().map(|l| l.spec.name.as_str()).collect();
        assert_eq!(
            &names[..6],
            [
                "left->right",
                "right->left",
                "up[0].snd->left",
                "left->up[0].snd",
                "right->up[0].rcv",
                "up[0].rcv->right"
            ]
        );
        assert_eq!(
            &names[6..],
            ["down[0].snd->right", "right->down[0].snd", "left->down[0].rcv", "down[0].rcv->left"]
        );
    }
}
