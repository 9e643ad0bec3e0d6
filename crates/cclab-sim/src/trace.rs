//! Packet traces (`[[trace]]` sections): which packets to record, the trace
//! table a run reports, and the captures (pcap files, written by `pcap.rs`)
//! built from it.
//!
//! An entry selects packets of flow groups (`flows`, every instance) and/or
//! link directions (`links`, named as in the links table, "left->right"), in
//! the time window `[from, to)`. The engine records them (cclab-core `trace`);
//! this module turns the records into columns and decides which rows each
//! pcap file holds:
//!
//! * an entry with `flows` and no `links` gives one pcap per flow instance,
//!   captured at the sender host's interface: every packet the sender puts on
//!   its access link (enqueued or refused there) and every packet delivered to
//!   it. That point sees both data and ACKs, as tcptrace needs.
//! * an entry with `links` gives one pcap per link, captured at the link's
//!   entrance: every packet offered to it (enqueued or refused).

use crate::error::{suggestion, ScenarioError};
use crate::instance::FlowInstance;
use crate::reader::Section;
pub use crate::scenario::TraceSpec;
use crate::scenario::{FlowGroup, RunConfig, Scenario};
use crate::units::fmt_time;
use cclab_core::{DropCause, Engine, TraceEvent, TraceFilter, TraceRecord, Tracer};
use cclab_wire::time::to_secs_f64;
use cclab_wire::{Ect, FlowId, Header, LinkId, NodeId, TcpKind, UdtHeader};
use serde::{Deserialize, Serialize};

/// Bytes a UDT data packet adds to its payload: IPv4, UDP and the UDT header.
pub const UDT_OVERHEAD: u32 = 20 + 8 + 16;

fn string_list(s: &mut Section, key: &'static str) -> Result<Vec<String>, ScenarioError> {
    match s.get(key) {
        None => Ok(Vec::new()),
        Some(toml::Value::Array(items)) => items
            .iter()
            .map(|v| match v {
                toml::Value::String(x) => Ok(x.clone()),
                _ => Err(s.error(key, "expected an array of names (strings)")),
            })
            .collect(),
        Some(_) => Err(s.error(key, "expected an array of names (strings)")),
    }
}

/// `[[trace]]` entry `s`; flow group names are checked here, link names when
/// the network is built (they depend on the topology and the flow counts).
pub fn parse_trace(mut s: Section, flows: &[FlowGroup], run: &RunConfig) -> Result<TraceSpec, ScenarioError> {
    let names = string_list(&mut s, "flows")?;
    for name in &names {
        let Some(group) = flows.iter().find(|f| &f.name == name) else {
            let hint = suggestion(name, flows.iter().map(|f| f.name.as_str()));
            let list: Vec<&str> = flows.iter().map(|f| f.name.as_str()).collect();
            return Err(s.error(
                "flows",
                format!("unknown flow group \"{name}\"{hint} (one of {})", list.join(", ")),
            ));
        };
        if group.app.opens_connections() {
            return Err(s.error(
                "flows",
                format!(
                    "\"{name}\" opens a connection per transfer; trace its packets through `links` instead"
                ),
            ));
        }
    }
    let links = string_list(&mut s, "links")?;
    if names.is_empty() && links.is_empty() {
        return Err(s.error("flows", "a trace needs `flows`, `links` or both"));
    }
    let from = s.duration("from")?.unwrap_or(0);
    let to = s.duration("to")?.unwrap_or(run.duration);
    if to <= from {
        return Err(s.error("to", format!("must be after `from` ({} <= {})", fmt_time(to), fmt_time(from))));
    }
    let pcap = s.bool("pcap")?.unwrap_or(true);
    s.finish()?;
    Ok(TraceSpec { flows: names, links, from, to, pcap })
}

/// The link ids `spec.links` names in `sim`, or an error naming `trace[i].links`.
pub fn link_ids(i: usize, spec: &TraceSpec, names: &[&str]) -> Result<Vec<LinkId>, ScenarioError> {
    spec.links
        .iter()
        .map(|name| {
            names.iter().position(|n| n == name).map(|l| l as LinkId).ok_or_else(|| {
                // A dumbbell of many flows has four access links per flow: list a few.
                const SHOWN: usize = 12;
                let mut list = names.iter().take(SHOWN).copied().collect::<Vec<_>>().join(", ");
                if names.len() > SHOWN {
                    list.push_str(&format!(", ... ({} in all; see the links table)", names.len()));
                }
                let hint = suggestion(name, names.iter().copied());
                ScenarioError::at(
                    format!("trace[{i}].links"),
                    format!("unknown link \"{name}\"{hint} (one of {list})"),
                )
            })
        })
        .collect()
}

/// The engine's filter for entry `spec`: `flow_ids` are the flow ids of the
/// instances of its groups.
pub fn filter(spec: &TraceSpec, flow_ids: Vec<FlowId>, links: Vec<LinkId>) -> TraceFilter {
    TraceFilter { flows: flow_ids, links, from: spec.from, to: spec.to }
}

/// The tracer for `scenario` built into `engine` with `flows`, if the
/// scenario has `[[trace]]` entries.
pub fn tracer(
    scenario: &Scenario,
    flows: &[FlowInstance],
    engine: &Engine,
) -> Result<Option<Tracer>, ScenarioError> {
    let traces = &scenario.traces;
    if traces.is_empty() {
        return Ok(None);
    }
    let names: Vec<&str> = engine.net.links.iter().map(|l| l.spec.name.as_str()).collect();
    let mut filters = Vec::with_capacity(traces.len());
    for (i, spec) in traces.iter().enumerate() {
        let links = link_ids(i, spec, &names)?;
        let flow_ids = flows
            .iter()
            .filter(|f| spec.flows.iter().any(|n| n == &scenario.flows[f.group].name))
            .map(|f| f.flow_id)
            .collect();
        filters.push(filter(spec, flow_ids, links));
    }
    Ok(Some(Tracer::new(filters)))
}

/// The synthesized IPv4 address of node `n`: 10.0.0.0 + n + 1 (so node 0 is
/// 10.0.0.1); node ids above 2^24 - 2 wrap within 10.0.0.0/8.
pub fn ipv4(node: NodeId) -> [u8; 4] {
    let n = (node.wrapping_add(1)) & 0x00ff_ffff;
    [10, (n >> 16) as u8, (n >> 8) as u8, n as u8]
}

/// The synthesized Ethernet address of node `n`: 02:00 (locally administered) and the node id.
pub fn mac(node: NodeId) -> [u8; 6] {
    let b = node.to_be_bytes();
    [0x02, 0x00, b[0], b[1], b[2], b[3]]
}

/// The port of flow `flow`'s endpoint at `node`, whose peer is at `peer`:
/// 1024 + 2 (flow mod 32256), plus one for the endpoint on the higher node id,
/// so both ends of a connection get distinct ports and no two connections
/// among the first 32 256 share a port pair.
pub fn port(flow: FlowId, node: NodeId, peer: NodeId) -> u16 {
    let base = 1024 + 2 * (flow % 32_256);
    (base + u32::from(node > peer)) as u16
}

fn dotted(a: [u8; 4]) -> String {
    format!("{}.{}.{}.{}", a[0], a[1], a[2], a[3])
}

/// One pcap file: which rows of the trace table it holds, and where they were "captured".
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Capture {
    /// File name (no directory).
    pub file: String,
    /// The `[[trace]]` entry it belongs to.
    pub trace: u32,
    /// What it is captured at, for people.
    pub point: String,
    /// Row indices into the trace table, in time order.
    pub rows: Vec<u32>,
}

/// Every traced packet event, one entry per row in each column. Times are
/// exact nanoseconds (`time_ns`) as well as seconds; TCP sequence numbers are
/// the simulator's 64-bit byte offsets (the pcap carries them modulo 2^32).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceTable {
    pub trace: Vec<u32>,
    pub time_ns: Vec<u64>,
    pub time_s: Vec<f64>,
    /// "enqueue", "depart", "drop" or "deliver".
    pub event: Vec<String>,
    /// For drops: "buffer_full", "random_loss" or "orphan".
    pub cause: Vec<Option<String>>,
    /// The link it happened at (null at an endpoint).
    pub link: Vec<Option<String>>,
    /// The node it happened at.
    pub node: Vec<String>,
    pub flow_id: Vec<u32>,
    /// The packet's source and destination nodes, and their synthesized addresses and ports.
    pub src: Vec<String>,
    pub dst: Vec<String>,
    pub ip_src: Vec<String>,
    pub ip_dst: Vec<String>,
    pub sport: Vec<u16>,
    pub dport: Vec<u16>,
    /// "tcp", "udp" or "udt".
    pub protocol: Vec<String>,
    /// TCP: "data" or "ack"; UDT: "data" or "control".
    pub kind: Vec<Option<String>>,
    pub wire_bytes: Vec<u32>,
    /// First payload byte (TCP) or packet number (UDP, UDT data).
    pub seq: Vec<Option<u64>>,
    /// Payload bytes.
    pub len: Vec<u32>,
    pub ack: Vec<Option<u64>>,
    pub window: Vec<Option<u64>>,
    /// AccECN's count of CE-marked payload bytes the receiver saw (ACKs; 0
    /// unless the connection uses AccECN).
    pub ce_bytes: Vec<Option<u64>>,
    pub ts_val_ns: Vec<Option<u64>>,
    pub ts_ecr_ns: Vec<Option<u64>>,
    /// SACK blocks `[left, right)`, most recent first.
    pub sack_left: Vec<Vec<u64>>,
    pub sack_right: Vec<Vec<u64>>,
    pub fin: Vec<bool>,
    pub ece: Vec<bool>,
    /// ECN-capable: ECT(0) or ECT(1).
    pub ect: Vec<bool>,
    /// ECT(1), the L4S identifier (RFC 9331).
    pub ect1: Vec<bool>,
    pub ce: Vec<bool>,
    /// The pcap files made of these rows.
    pub captures: Vec<Capture>,
}

impl TraceTable {
    pub fn len(&self) -> usize {
        self.time_ns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.time_ns.is_empty()
    }

    /// Room for `n` more rows in every column: a trace can be most of a
    /// run's memory, and doubling growth would leave up to half of it unused.
    fn reserve(&mut self, n: usize) {
        macro_rules! reserve {
            ($($c:ident),*) => { $(self.$c.reserve_exact(n);)* };
        }
        reserve!(
            trace, time_ns, time_s, event, cause, link, node, flow_id, src, dst, ip_src, ip_dst, sport,
            dport, protocol, kind, wire_bytes, seq, len, ack, window, ce_bytes, ts_val_ns, ts_ecr_ns,
            sack_left, sack_right, fin, ece, ect, ect1, ce
        );
    }

    fn push(
        &mut self,
        r: &TraceRecord,
        node_name: &dyn Fn(NodeId) -> String,
        link_name: &dyn Fn(LinkId) -> String,
    ) {
        let p = &r.packet;
        self.trace.push(r.trace);
        self.time_ns.push(r.time);
        self.time_s.push(to_secs_f64(r.time));
        self.event.push(r.event.as_str().to_string());
        self.cause.push(r.event.cause().map(|c| c.as_str().to_string()));
        self.link.push(r.link.map(link_name));
        self.node.push(node_name(r.node));
        self.flow_id.push(p.flow);
        self.src.push(node_name(r.src));
        self.dst.push(node_name(r.dst));
        self.ip_src.push(dotted(ipv4(r.src)));
        self.ip_dst.push(dotted(ipv4(r.dst)));
        self.sport.push(port(p.flow, r.src, r.dst));
        self.dport.push(port(p.flow, r.dst, r.src));
        self.wire_bytes.push(p.wire_bytes);
        self.ect.push(p.ect.capable());
        self.ect1.push(p.ect == Ect::Ect1);
        self.ce.push(p.ce);
        let (protocol, kind, seq, len) = match &p.header {
            Header::Tcp(h) => {
                let kind = match h.kind {
                    TcpKind::Data => "data",
                    TcpKind::Ack => "ack",
                };
                ("tcp", Some(kind), Some(h.seq), h.len)
            }
            Header::Udp(h) => ("udp", None, Some(h.seq), h.payload),
            Header::Udt(UdtHeader::Data { seq, .. }) => {
                ("udt", Some("data"), Some(u64::from(*seq)), p.wire_bytes.saturating_sub(UDT_OVERHEAD))
            }
            Header::Udt(UdtHeader::Control { .. }) => ("udt", Some("control"), None, 0),
        };
        self.protocol.push(protocol.to_string());
        self.kind.push(kind.map(str::to_string));
        self.seq.push(seq);
        self.len.push(len);
        let tcp = p.tcp();
        self.ack.push(tcp.filter(|h| h.kind == TcpKind::Ack).map(|h| h.ack));
        self.window.push(tcp.filter(|h| h.kind == TcpKind::Ack).map(|h| u64::from(h.window)));
        self.ce_bytes.push(tcp.filter(|h| h.kind == TcpKind::Ack).map(|h| u64::from(h.ce_bytes)));
        self.ts_val_ns.push(tcp.map(|h| h.ts_val));
        self.ts_ecr_ns.push(tcp.map(|h| h.ts_ecr));
        let sack = tcp.map(|h| h.sack()).unwrap_or(&[]);
        self.sack_left.push(sack.iter().map(|b| b.0).collect());
        self.sack_right.push(sack.iter().map(|b| b.1).collect());
        self.fin.push(tcp.is_some_and(|h| h.fin));
        self.ece.push(tcp.is_some_and(|h| h.ece));
    }
}

/// File-name-safe text: "bulk[0].snd->left" becomes "bulk-0-.snd-left" minus the noise.
fn file_part(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '_' || c == '.' { c } else { '-' };
        if !(c == '-' && out.ends_with('-')) {
            out.push(c);
        }
    }
    out.trim_matches('-').to_string()
}

/// The trace table of a finished run of `scenario` (its `engine` and `flows`)
/// and its captures; `None` without `[[trace]]` entries.
pub fn collect(scenario: &Scenario, flows: &[FlowInstance], engine: &Engine) -> Option<TraceTable> {
    let tracer = engine.tracer()?;
    let records: Vec<&TraceRecord> =
        tracer.time_order().iter().map(|&i| &tracer.records[i as usize]).collect();
    let nodes = &engine.net.nodes;
    let links = &engine.net.links;
    let node_name = |n: NodeId| nodes.get(n as usize).map_or_else(|| format!("#{n}"), |x| x.name.clone());
    let link_name =
        |l: LinkId| links.get(l as usize).map_or_else(|| format!("#{l}"), |x| x.spec.name.clone());
    let mut table = TraceTable::default();
    table.reserve(records.len());
    for &r in &records {
        table.push(r, &node_name, &link_name);
    }
    for (i, spec) in scenario.traces.iter().enumerate() {
        if !spec.pcap {
            continue;
        }
        let i = i as u32;
        let offered = |r: &TraceRecord| {
            matches!(r.event, TraceEvent::Enqueue | TraceEvent::Drop(DropCause::BufferFull))
        };
        if spec.links.is_empty() {
            for f in flows.iter().filter(|f| spec.flows.contains(&scenario.flows[f.group].name)) {
                let Some(host) = engine.flow_sender_node(f.flow_id) else { continue };
                let first_hop = |r: &TraceRecord| {
                    r.link.is_some_and(|l| links[l as usize].spec.from == host) && r.src == host && offered(r)
                };
                let delivered = |r: &TraceRecord| r.event == TraceEvent::Deliver && r.node == host;
                let rows = rows_where(&records, |r| {
                    r.trace == i && r.packet.flow == f.flow_id && (first_hop(r) || delivered(r))
                });
                let name = format!("{}[{}]", scenario.flows[f.group].name, f.index);
                table.captures.push(Capture {
                    file: format!("trace{i}-{}.pcap", file_part(&name)),
                    trace: i,
                    point: format!("the interface of {name}'s sender host \"{}\"", node_name(host)),
                    rows,
                });
            }
        } else {
            for name in &spec.links {
                let Some(l) = links.iter().position(|x| &x.spec.name == name) else { continue };
                let rows =
                    rows_where(&records, |r| r.trace == i && r.link == Some(l as LinkId) && offered(r));
                table.captures.push(Capture {
                    file: format!("trace{i}-{}.pcap", file_part(name)),
                    trace: i,
                    point: format!("the entrance of link \"{name}\""),
                    rows,
                });
            }
        }
    }
    Some(table)
}

fn rows_where(records: &[&TraceRecord], keep: impl Fn(&TraceRecord) -> bool) -> Vec<u32> {
    records.iter().enumerate().filter(|(_, r)| keep(r)).map(|(k, _)| k as u32).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_and_ports_are_deterministic_and_distinct() {
        assert_eq!(ipv4(0), [10, 0, 0, 1]);
        assert_eq!(ipv4(256), [10, 0, 1, 1]);
        assert_eq!(mac(3), [2, 0, 0, 0, 0, 3]);
        assert_eq!((port(0, 4, 7), port(0, 7, 4)), (1024, 1025));
        assert_eq!(port(5, 1, 0), 1035);
    }

    #[test]
    fn file_names_keep_only_safe_characters() {
        assert_eq!(file_part("bulk[0].snd->left"), "bulk-0-.snd-left");
        assert_eq!(file_part("left->right"), "left-right");
    }
}
