//! Statistics kept in place while the simulation runs: windowed link counters
//! and optional sampled time series of named metrics ([`cclab_wire::metrics`]).
//! Nothing here allocates per packet.

use cclab_wire::time::{overlap, Time};
use cclab_wire::{EndpointId, FlowId, LinkId, MetricDesc, TrafficKind};
use serde::Serialize;

/// Statistics cover `[start, end)`: the warm-up is excluded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct MeasurementWindow {
    pub start: Time,
    pub end: Time,
}

impl MeasurementWindow {
    #[inline]
    pub fn contains(&self, t: Time) -> bool {
        t >= self.start && t < self.end
    }

    pub fn len(&self) -> Time {
        self.end.saturating_sub(self.start)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Part of `[a, b)` that falls inside the window.
    #[inline]
    pub fn overlap(&self, a: Time, b: Time) -> Time {
        overlap(a, b, self.start, self.end)
    }
}

/// Per link direction. Whole-run counters support conservation checks; the
/// `window_*` fields and integrals cover the measurement window only.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// Packets offered to the queue.
    pub arrivals: u64,
    /// Refused by the queue discipline (buffer overflow or early drop).
    pub drops: u64,
    /// The part of `drops` an active queue management rule refused while the
    /// buffer had room (RED).
    pub early_drops: u64,
    /// Admitted with the CE bit set (RED with ECN, the CW marker).
    pub marks: u64,
    /// Transmitted but discarded by the link's random loss process.
    pub losses: u64,
    /// Handed to the node at the far end.
    pub delivered: u64,
    pub window_arrivals: u64,
    pub window_drops: u64,
    pub window_early_drops: u64,
    pub window_marks: u64,
    pub window_losses: u64,
    /// Time the transmitter was busy inside the window.
    pub window_busy: Time,
    /// Wire bytes whose transmission started inside the window.
    pub window_bytes: u64,
    /// Packets whose transmission started inside the window.
    pub window_departures: u64,
    /// Integral of the number (and bytes) of waiting packets over the window.
    pub queue_packet_time: u128,
    pub queue_byte_time: u128,
    pub queue_max_packets: u64,
    pub queue_max_bytes: u64,
}

impl LinkStats {
    #[inline]
    pub fn count_drop(&mut self, in_window: bool) {
        self.drops += 1;
        self.window_drops += in_window as u64;
    }

    #[inline]
    pub fn count_early_drop(&mut self, in_window: bool) {
        self.early_drops += 1;
        self.window_early_drops += in_window as u64;
    }

    #[inline]
    pub fn count_mark(&mut self, in_window: bool) {
        self.marks += 1;
        self.window_marks += in_window as u64;
    }
}

/// Wire bytes a link transmitted so far (random losses included: they used
/// the link), per [`TrafficKind`] and per flow. Counted when the packet
/// reaches the far end, the event the engine has anyway, so a count at time
/// `t` covers the transmissions that ended by `t - delay`. Kept only by links
/// whose departures are observed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Departures {
    pub by_kind: [u64; TrafficKind::COUNT],
    /// Indexed by flow id; flows beyond its end (none observed) are not counted.
    pub by_flow: Vec<u64>,
}

impl Departures {
    #[inline]
    pub fn count(&mut self, packet: &cclab_wire::Packet) {
        let bytes = packet.wire_bytes as u64;
        self.by_kind[packet.traffic_kind().index()] += bytes;
        if let Some(flow) = self.by_flow.get_mut(packet.flow as usize) {
            *flow += bytes;
        }
    }

    /// All kinds together.
    pub fn total(&self) -> u64 {
        self.by_kind.iter().sum()
    }
}

/// What publishes a series: an endpoint (a flow's sender) or a link direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Endpoint(EndpointId),
    Link(LinkId),
}

/// One source watched by an [`Observation`]: the full metric names wanted
/// (`cwnd`, `cc.estimate`) and the series id each is recorded under.
#[derive(Clone, Debug, PartialEq)]
pub struct Watch {
    pub source: Source,
    pub metrics: Vec<(String, u32)>,
    /// The series of the engine's own `bytes_delivered`, if wanted.
    pub(crate) delivered: Option<u32>,
    /// For a link: the flows whose departures it records, each with its series.
    pub per_flow: Vec<(FlowId, u32)>,
    /// For a link whose discipline keeps flows apart: the flows whose
    /// queue's backlog it records, each with its series.
    pub flow_backlog: Vec<(FlowId, u32)>,
    /// What the source published at each position of its last sample, and
    /// what it was recorded as (see [`Learned`]).
    pub(crate) learned: Vec<Learned>,
}

impl Watch {
    pub fn new(source: Source, metrics: Vec<(String, u32)>) -> Self {
        let delivered = metrics.iter().find(|(n, _)| n == BYTES_DELIVERED.name).map(|&(_, id)| id);
        Self {
            source,
            metrics,
            delivered,
            per_flow: Vec::new(),
            flow_backlog: Vec::new(),
            learned: Vec::new(),
        }
    }
}

/// A source publishes the same names in the same order at every sample, and
/// its names are `&'static str`: so the engine matches a published name
/// against the wanted ones by text once, remembers the result for that
/// position with the name's address, and afterwards compares addresses only.
/// A source whose order changes just costs a text match at the changed positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Learned {
    /// Address and length of the prefix and of the name.
    pub key: (usize, usize, usize, usize),
    pub series: Option<u32>,
}

/// Sources sampled together every `every` (one `[[observe]]` section, or `run.sample`).
#[derive(Clone, Debug, PartialEq)]
pub struct Observation {
    pub every: Time,
    pub watches: Vec<Watch>,
    /// Record a value only when it differs from the last one recorded of its
    /// series (the first is always recorded): a step-like metric such as
    /// cwnd then costs a row per change, not per sample.
    pub on_change: bool,
    /// The bits of the last value recorded of each series (by series id), when on change.
    pub(crate) last: Vec<Option<u64>>,
}

impl Observation {
    pub fn new(every: Time, watches: Vec<Watch>) -> Self {
        Self { every, watches, on_change: false, last: Vec::new() }
    }
}

/// Where an observation's values go: all of them, or (`last` given) those
/// that differ from the last value recorded of their series.
pub(crate) struct RowWriter<'a> {
    pub rows: &'a mut Vec<MetricRow>,
    pub last: Option<&'a mut Vec<Option<u64>>>,
}

impl RowWriter<'_> {
    #[inline]
    pub fn push(&mut self, row: MetricRow) {
        if let Some(last) = self.last.as_deref_mut() {
            let at = row.series as usize;
            if last.len() <= at {
                last.resize(at + 1, None);
            }
            let bits = Some(row.value.to_bits());
            if last[at] == bits {
                return;
            }
            last[at] = bits;
        }
        self.rows.push(row);
    }
}

/// One value of one series: the long format every time series is kept in.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct MetricRow {
    pub time: Time,
    /// Index into the caller's table of series (see [`Watch`]).
    pub series: u32,
    pub value: f64,
}

/// Every sampled value, in the order taken.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TimeSeries {
    pub rows: Vec<MetricRow>,
}

/// What the engine publishes for a flow's sender besides the sender's own
/// metrics: it reads it from the peer receiver, which the sender cannot see.
pub const FLOW_METRICS: &[MetricDesc] = &[BYTES_DELIVERED];

pub const BYTES_DELIVERED: MetricDesc = MetricDesc {
    name: "bytes_delivered",
    unit: "bytes",
    meaning: "payload the receiver delivered in order so far",
};
pub const QUEUE_PACKETS: MetricDesc =
    MetricDesc { name: "queue_packets", unit: "packets", meaning: "packets waiting in the queue" };
pub const QUEUE_BYTES: MetricDesc =
    MetricDesc { name: "queue_bytes", unit: "bytes", meaning: "bytes waiting in the queue" };

/// What a link direction publishes: its queue now, and its whole-run counters so far.
pub const LINK_METRICS: &[MetricDesc] = &[
    QUEUE_PACKETS,
    QUEUE_BYTES,
    MetricDesc { name: "arrivals", unit: "packets", meaning: "packets offered to the queue so far" },
    MetricDesc { name: "drops", unit: "packets", meaning: "packets the queue refused so far" },
    MetricDesc {
        name: "early_drops",
        unit: "packets",
        meaning: "the drops an active queue management rule made while the buffer had room (red) so far",
    },
    MetricDesc {
        name: "marks",
        unit: "packets",
        meaning: "packets the queue admitted with CE set (red, cw) so far",
    },
    crate::queue::red::AVG_QUEUE,
    MetricDesc {
        name: "losses",
        unit: "packets",
        meaning: "packets the random loss process discarded so far",
    },
    MetricDesc { name: "delivered", unit: "packets", meaning: "packets handed to the far end so far" },
    MetricDesc {
        name: "queue.sojourn_ms",
        unit: "ms",
        meaning: "a link that dequeues: the sojourn time of the packet that left the queue last; a FIFO link of constant rate: the wait of a packet arriving now (the sojourn of the next to leave)",
    },
    MetricDesc {
        name: "rate_bps",
        unit: "bit/s",
        meaning: "the link's rate now (a trace's: its capacity over the last 100 ms)",
    },
    MetricDesc { name: "capacity_bytes", unit: "bytes", meaning: "bytes the link could have sent so far" },
    MetricDesc {
        name: "departed_bytes",
        unit: "bytes",
        meaning: "wire bytes transmitted so far (counted at the far end: as of one propagation delay ago)",
    },
    MetricDesc { name: "departed_bytes.tcp_data", unit: "bytes", meaning: "departed_bytes of TCP segments" },
    MetricDesc { name: "departed_bytes.tcp_ack", unit: "bytes", meaning: "departed_bytes of pure TCP ACKs" },
    MetricDesc { name: "departed_bytes.udp", unit: "bytes", meaning: "departed_bytes of UDP datagrams" },
    MetricDesc { name: "departed_bytes.udt", unit: "bytes", meaning: "departed_bytes of UDT packets" },
    MetricDesc {
        name: DEPARTED_PER_FLOW,
        unit: "bytes",
        meaning: "departed_bytes of each flow: one series per long-lived flow, named by its flow_id",
    },
];

/// The name of the per-kind departure metric of each [`TrafficKind`], by its index.
pub const DEPARTED_BY_KIND: [&str; TrafficKind::COUNT] =
    ["departed_bytes.tcp_data", "departed_bytes.tcp_ack", "departed_bytes.udp", "departed_bytes.udt"];

/// The link metric recorded once per flow (its series carry the flow's id).
pub const DEPARTED_PER_FLOW: &str = "departed_bytes.flow";

/// The link metrics `run.sample` records (the queue; the counters are opt-in).
pub const LINK_DEFAULT_METRICS: &[&str] = &[QUEUE_PACKETS.name, QUEUE_BYTES.name];
