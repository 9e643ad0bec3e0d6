//! Nodes, links and static shortest-path routing.

use crate::link::{Link, LinkSpec};
use crate::packet::{LinkId, NodeId};
use crate::queue::QueueDiscipline;
use crate::rng::RngStream;
use crate::time::Time;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

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

#[derive(Default)]
pub struct Network {
    pub nodes: Vec<Node>,
    pub links: Vec<Link>,
    /// `next_hop[at * n + dst]`: the link to take from `at` towards `dst`.
    next_hop: Vec<u32>,
}

impl Network {
    pub fn add_node(&mut self, name: &str, kind: NodeKind) -> Result<NodeId, NetworkError> {
        if self.node_id(name).is_some() {
            return Err(NetworkError::DuplicateNode(name.to_string()));
        }
        self.nodes.push(Node { name: name.to_string(), kind });
        Ok((self.nodes.len() - 1) as NodeId)
    }

    pub fn node_id(&self, name: &str) -> Option<NodeId> {
        self.nodes.iter().position(|n| n.name == name).map(|i| i as NodeId)
    }

    /// Adds a one-way link. Its loss process draws from the stream named after the
    /// link, so it is independent of every other random component.
    pub fn add_link(&mut self, spec: LinkSpec, discipline: Box<dyn QueueDiscipline>, seed: u64) -> LinkId {
        let rng = (spec.loss > 0.0).then(|| RngStream::new(seed, &format!("link:{}:loss", spec.name)));
        self.links.push(Link::new(spec, discipline, rng));
        (self.links.len() - 1) as LinkId
    }

    /// Computes shortest paths by propagation delay, ties broken by hop count and
    /// then by link order, so routes are deterministic.
    pub fn compute_routes(&mut self) {
        let n = self.nodes.len();
        let mut out_links: Vec<Vec<LinkId>> = vec![Vec::new(); n];
        for (i, l) in self.links.iter().enumerate() {
            out_links[l.spec.from as usize].push(i as LinkId);
        }
        self.next_hop = vec![NO_ROUTE; n * n];
        for src in 0..n {
            // Dijkstra from `src`; `first[v]` is the first link on the best path to v.
            let mut best: Vec<Option<(Time, u32)>> = vec![None; n];
            let mut first = vec![NO_ROUTE; n];
            let mut heap = BinaryHeap::new();
            best[src] = Some((0, 0));
            heap.push(Reverse((0u64, 0u32, src as u32)));
            while let Some(Reverse((d, hops, u))) = heap.pop() {
                if best[u as usize] != Some((d, hops)) {
                    continue;
                }
                for &l in &out_links[u as usize] {
                    let link = &self.links[l as usize];
                    let v = link.spec.to as usize;
                    let cand = (d + link.spec.delay, hops + 1);
                    if best[v].is_none_or(|b| cand < b) {
                        best[v] = Some(cand);
                        first[v] = if u as usize == src { l } else { first[u as usize] };
                        heap.push(Reverse((cand.0, cand.1, v as u32)));
                    }
                }
            }
            self.next_hop[src * n..(src + 1) * n].copy_from_slice(&first);
        }
    }

    pub fn next_link(&self, at: NodeId, dst: NodeId) -> Option<LinkId> {
        let n = self.nodes.len();
        match self.next_hop.get(at as usize * n + dst as usize) {
            Some(&l) if l != NO_ROUTE => Some(l),
            _ => None,
        }
    }

    /// The links from `src` to `dst`, or `None` if unreachable.
    pub fn path(&self, src: NodeId, dst: NodeId) -> Option<Vec<LinkId>> {
        let mut at = src;
        let mut path = Vec::new();
        while at != dst {
            let l = self.next_link(at, dst)?;
            path.push(l);
            at = self.links[l as usize].spec.to;
            if path.len() > self.links.len() {
                return None;
            }
        }
        Some(path)
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
    use crate::time::millis;

    fn spec(from: NodeId, to: NodeId, delay_ms: u64) -> LinkSpec {
        LinkSpec {
            name: format!("{from}->{to}"),
            from,
            to,
            rate_bps: 1_000_000,
            delay: millis(delay_ms),
            buffer: BufferLimit::Unlimited,
            loss: 0.0,
        }
    }

    #[test]
    fn routes_follow_smallest_delay() {
        let mut net = Network::default();
        let a = net.add_node("a", NodeKind::Host).unwrap();
        let b = net.add_node("b", NodeKind::Router).unwrap();
        let c = net.add_node("c", NodeKind::Host).unwrap();
        let dq = || Box::new(DropTail::new(BufferLimit::Unlimited));
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
    fn duplicate_node_names_are_rejected() {
        let mut net = Network::default();
        net.add_node("a", NodeKind::Host).unwrap();
        assert_eq!(net.add_node("a", NodeKind::Host), Err(NetworkError::DuplicateNode("a".into())));
    }
}
