//! Nodes, links and static shortest-path routing.

use crate::link::{Link, LinkSpec};
use crate::loss::LossProcess;
use crate::queue::Discipline;
use crate::rng::RngStream;
use cclab_wire::{LinkId, NodeId, Time};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    Host,
    Router,
}

#[derive(Clone, Debug)]
pub struct Node {
    pub name: String,
    pub kind: NodeKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NetworkError {
    DuplicateNode(String),
    UnknownNode(String),
}

impl std::fmt::Display for NetworkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NetworkError::DuplicateNode(n) => write!(f, "node \"{n}\" is defined twice"),
            NetworkError::UnknownNode(n) => write!(f, "unknown node \"{n}\""),
        }
    }
}

impl std::error::Error for NetworkError {}

const NO_ROUTE: u32 = u32::MAX;

/// Least-delay paths from one node, ties broken by hop count and then by link
/// order (Dijkstra): what the run routes by, and what the run-time estimate
/// follows before anything is built. `out[v]` lists node v's outgoing links as
/// (link, the node it leads to, its delay).
pub struct LeastDelayTree {
    src: usize,
    /// (delay, hops) of the best path to each node; `None` if unreachable.
    pub best: Vec<Option<(Time, u32)>>,
    /// The last link of the best path into each node.
    pub last_link: Vec<LinkId>,
    /// The node that link leaves from.
    from_node: Vec<u32>,
}

impl LeastDelayTree {
    pub fn from(out: &[Vec<(LinkId, NodeId, Time)>], src: usize) -> Self {
        let n = out.len();
        let mut tree = LeastDelayTree {
            src,
            best: vec![None; n],
            last_link: vec![NO_ROUTE; n],
            from_node: vec![NO_ROUTE; n],
        };
        let mut heap = BinaryHeap::new();
        tree.best[src] = Some((0, 0));
        heap.push(Reverse((0u64, 0u32, src as u32)));
        while let Some(Reverse((d, hops, u))) = heap.pop() {
            if tree.best[u as usize] != Some((d, hops)) {
                continue;
            }
            for &(l, v, delay) in &out[u as usize] {
                let v = v as usize;
                let cand = (d + delay, hops + 1);
                if tree.best[v].is_none_or(|b| cand < b) {
                    tree.best[v] = Some(cand);
                    tree.last_link[v] = l;
                    tree.from_node[v] = u;
                    heap.push(Reverse((cand.0, cand.1, v as u32)));
                }
            }
        }
        tree
    }

    /// The links of the best path to `v`, last first; empty for the source
    /// itself or a node it cannot reach.
    pub fn links_back(&self, mut v: usize) -> impl Iterator<Item = LinkId> + '_ {
        std::iter::from_fn(move || {
            if v == self.src || self.last_link[v] == NO_ROUTE {
                return None;
            }
            let l = self.last_link[v];
            v = self.from_node[v] as usize;
            Some(l)
        })
    }

    /// The first link of the best path to `v` (`NO_ROUTE` for the source or an
    /// unreachable node).
    fn first_link(&self, v: usize) -> LinkId {
        self.links_back(v).last().unwrap_or(NO_ROUTE)
    }
}

#[derive(Default)]
pub struct Network {
    pub nodes: Vec<Node>,
    pub links: Vec<Link>,
    index: HashMap<String, NodeId>,
    /// `next_hop[row_of[at] * n + dst]`: the link from `at` towards `dst`, for
    /// nodes with more than one outgoing link.
    next_hop: Vec<u32>,
    row_of: Vec<u32>,
    /// The outgoing link of nodes that have exactly one.
    only_link: Vec<u32>,
}

impl Network {
    /// Room for `nodes` more nodes and `links` more links.
    pub fn reserve(&mut self, nodes: usize, links: usize) {
        self.nodes.reserve_exact(nodes);
        self.index.reserve(nodes);
        self.links.reserve_exact(links);
    }

    pub fn add_node(&mut self, name: &str, kind: NodeKind) -> Result<NodeId, NetworkError> {
        if self.index.contains_key(name) {
            return Err(NetworkError::DuplicateNode(name.to_string()));
        }
        let id = self.nodes.len() as NodeId;
        self.nodes.push(Node { name: name.to_string(), kind });
        self.index.insert(name.to_string(), id);
        Ok(id)
    }

    pub fn node_id(&self, name: &str) -> Option<NodeId> {
        self.index.get(name).copied()
    }

    /// Adds a one-way link. Its loss process draws from the stream named after the
    /// link, so it is independent of every other random component.
    pub fn add_link(&mut self, spec: LinkSpec, discipline: Discipline, seed: u64) -> LinkId {
        let loss = spec
            .loss
            .is_lossy()
            .then(|| LossProcess::new(spec.loss, RngStream::new(seed, &format!("link:{}:loss", spec.name))));
        self.links.push(Link::new(spec, discipline, loss));
        (self.links.len() - 1) as LinkId
    }

    /// Computes shortest paths by propagation delay, ties broken by hop count and
    /// then by link order, so routes are deterministic. A node with a single
    /// outgoing link (every host of a dumbbell) needs no table: all its traffic
    /// takes that link. Only nodes with a choice get a row, so a dumbbell with F
    /// flows stores two rows rather than (2F)^2 entries.
    pub fn compute_routes(&mut self) {
        let n = self.nodes.len();
        let mut out_links: Vec<Vec<LinkId>> = vec![Vec::new(); n];
        for (i, l) in self.links.iter().enumerate() {
            out_links[l.spec.from as usize].push(i as LinkId);
        }
        self.only_link = out_links.iter().map(|o| if o.len() == 1 { o[0] } else { NO_ROUTE }).collect();
        self.row_of = vec![NO_ROUTE; n];
        self.next_hop.clear();
        let out: Vec<Vec<(LinkId, NodeId, Time)>> = out_links
            .iter()
            .map(|o| {
                o.iter()
                    .map(|&l| (l, self.links[l as usize].spec.to, self.links[l as usize].spec.delay))
                    .collect()
            })
            .collect();
        for src in (0..n).filter(|&v| out_links[v].len() > 1) {
            self.row_of[src] = (self.next_hop.len() / n) as u32;
            let tree = LeastDelayTree::from(&out, src);
            self.next_hop.extend((0..n).map(|v| tree.first_link(v)));
        }
    }

    /// The link to take from `at` towards `dst`. For a node with one outgoing
    /// link this is that link whatever `dst` is; [`Network::path`] tells whether
    /// `dst` is reachable at all.
    pub fn next_link(&self, at: NodeId, dst: NodeId) -> Option<LinkId> {
        let n = self.nodes.len();
        let l = match self.row_of.get(at as usize) {
            Some(&row) if row != NO_ROUTE => self.next_hop[row as usize * n + dst as usize],
            Some(_) => self.only_link[at as usize],
            None => NO_ROUTE,
        };
        (l != NO_ROUTE && at != dst).then_some(l)
    }

    /// The links from `src` to `dst`, or `None` if unreachable.
    pub fn path(&self, src: NodeId, dst: NodeId) -> Option<Vec<LinkId>> {
        let mut path = Vec::new();
        self.path_into(src, dst, &mut path).then_some(path)
    }

    /// [`Network::path`] into `path` (cleared first), false if unreachable:
    /// the engine asks for the paths of every connection at the start, and a
    /// vector for each was most of that work.
    pub fn path_into(&self, src: NodeId, dst: NodeId, path: &mut Vec<LinkId>) -> bool {
        path.clear();
        let mut at = src;
        while at != dst {
            let Some(l) = self.next_link(at, dst) else { return false };
            path.push(l);
            at = self.links[l as usize].spec.to;
            if path.len() > self.links.len() {
                return false;
            }
        }
        true
    }

    /// Sum of propagation delays along the route from `src` to `dst`.
    pub fn path_delay(&self, src: NodeId, dst: NodeId) -> Option<Time> {
        self.path(src, dst).map(|p| p.iter().map(|&l| self.links[l as usize].spec.delay).sum())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::{BufferLimit, DropTail};
    use cclab_wire::time::millis;

    fn spec(from: NodeId, to: NodeId, delay_ms: u64) -> LinkSpec {
        LinkSpec {
            name: format!("{from}->{to}"),
            from,
            to,
            rate_bps: 1_000_000,
            delay: millis(delay_ms),
            buffer: BufferLimit::Unlimited,
            loss: crate::loss::LossModel::NONE,
            variation: Default::default(),
        }
    }

    #[test]
    fn routes_follow_smallest_delay() {
        let mut net = Network::default();
        let a = net.add_node("a", NodeKind::Host).unwrap();
        let b = net.add_node("b", NodeKind::Router).unwrap();
        let c = net.add_node("c", NodeKind::Host).unwrap();
        let dq = || Discipline::Fifo(Box::new(DropTail::new(BufferLimit::Unlimited)));
        let direct = net.add_link(spec(a, c, 50), dq(), 1);
        let ab = net.add_link(spec(a, b, 10), dq(), 1);
        let bc = net.add_link(spec(b, c, 10), dq(), 1);
        net.compute_routes();
        assert_eq!(net.path(a, c), Some(vec![ab, bc]));
        assert_eq!(net.path_delay(a, c), Some(millis(20)));
        assert_ne!(net.path(a, c), Some(vec![direct]));
        assert_eq!(net.path(c, a), None);
    }

    #[test]
    fn single_link_nodes_route_without_a_table_and_unreachable_is_detected() {
        // h1 -> r (one link) ; r -> h2, r -> h3 ; h2 -> r ; h3 isolated outbound.
        let mut net = Network::default();
        let h1 = net.add_node("h1", NodeKind::Host).unwrap();
        let r = net.add_node("r", NodeKind::Router).unwrap();
        let h2 = net.add_node("h2", NodeKind::Host).unwrap();
        let h3 = net.add_node("h3", NodeKind::Host).unwrap();
        let island = net.add_node("island", NodeKind::Host).unwrap();
        let dq = || Discipline::Fifo(Box::new(DropTail::new(BufferLimit::Unlimited)));
        let up = net.add_link(spec(h1, r, 1), dq(), 1);
        let down2 = net.add_link(spec(r, h2, 1), dq(), 1);
        net.add_link(spec(r, h3, 1), dq(), 1);
        net.add_link(spec(h2, r, 1), dq(), 1);
        net.compute_routes();
        assert_eq!(net.path(h1, h2), Some(vec![up, down2]));
        assert_eq!(net.path(h1, island), None);
        assert_eq!(net.path(h3, h1), None);
        assert_eq!(net.next_link(h1, h1), None);
    }

    #[test]
    fn duplicate_node_names_are_rejected() {
        let mut net = Network::default();
        net.add_node("a", NodeKind::Host).unwrap();
        assert_eq!(net.add_node("a", NodeKind::Host), Err(NetworkError::DuplicateNode("a".into())));
    }
}
