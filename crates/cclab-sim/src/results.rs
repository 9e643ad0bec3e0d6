//! What a run reports: per-flow and per-link statistics over the measurement
//! window, run totals, and optional time series. Serialised as the `--json`
//! summary; field names are part of the interface (DESIGN.md).

use crate::build::Simulation;
use crate::observe::SeriesInfo;
use crate::table::Table;
use cclab_core::stats::{BYTES_DELIVERED, QUEUE_BYTES, QUEUE_PACKETS};
use cclab_core::BufferLimit;
use cclab_core::MetricRow;
use cclab_transport::tcp::sender;
use cclab_wire::time::to_secs_f64;
use cclab_wire::Time;
use cclab_wire::{Counters, Measure, MetricDesc};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FlowResult {
    pub name: String,
    /// Instance number within its `[[flows]]` entry.
    pub index: u32,
    /// Position among all flow instances of the run.
    pub flow_id: u32,
    pub direction: &'static str,
    pub protocol: String,
    /// Congestion control, loss recovery and pacing (TCP; null otherwise).
    pub cc: Option<String>,
    pub recovery: Option<String>,
    pub pacing: Option<String>,
    /// The traffic source (`app` kind).
    pub app: &'static str,
    pub start_s: f64,
    pub rtt_base_s: f64,
    /// In-order payload delivered to the receiving application.
    pub goodput_bps: f64,
    /// Data packets put on the wire, headers and retransmissions included.
    pub throughput_bps: f64,
    /// What the receiver put on the wire (ACKs), headers included.
    pub ack_throughput_bps: f64,
    pub bytes_delivered: u64,
    pub packets_sent: u64,
    /// Packets the receiving endpoint got.
    pub packets_received: u64,
    /// Time from start until a finite transfer was fully acknowledged.
    pub completion_s: Option<f64>,
    /// The protocol's own counters (TCP: retransmits, timeouts, recoveries,
    /// rtt_mean_s, rtt_min_s, payload_bytes_sent; UDP: packets_lost, delay_mean_s).
    #[serde(flatten)]
    pub extra: BTreeMap<&'static str, serde_json::Value>,
}

impl FlowResult {
    /// A protocol counter that is a count (`retransmits`), if this flow has it.
    pub fn count(&self, name: &str) -> Option<u64> {
        self.extra.get(name)?.as_u64()
    }

    /// A protocol measure in seconds (`rtt_mean_s`), if this flow has it and it has a value.
    pub fn seconds(&self, name: &str) -> Option<f64> {
        self.extra.get(name)?.as_f64()
    }
}

/// Declares a table of columns (a struct of `Vec`s, serialised as one array
/// per field), its schema, `COLUMNS` (each column's name and element type, in
/// order), and `table()`, the columns as they cross to Python. The Python
/// package builds an empty table from the schema (`_core.table_columns`), so
/// a column is named only here.
macro_rules! columns {
    ($(#[$meta:meta])* pub struct $name:ident { $($(#[$field_meta:meta])* pub $field:ident: Vec<$ty:ty>,)* }) => {
        $(#[$meta])*
        pub struct $name {
            $($(#[$field_meta])* pub $field: Vec<$ty>,)*
        }

        impl $name {
            pub const COLUMNS: &'static [(&'static str, &'static str)] =
                &[$((stringify!($field), stringify!($ty))),*];

            pub fn table(&self) -> Table {
                let rows = [$(self.$field.len()),*][0];
                let mut table = Table::new(rows);
                $(table.column(stringify!($field), self.$field.iter());)*
                table
            }
        }
    };
}

columns! {
    /// Finite transfers (`transfer` flows, and every transfer of a traffic
    /// source), one entry per transfer in each column: a run can have 100 000 of
    /// them, and columns keep the table compact on both sides of the binding.
    #[derive(Clone, Debug, Default, PartialEq, Serialize)]
    pub struct TransferTable {
        /// The flow group and instance each belongs to.
        pub name: Vec<String>,
        pub index: Vec<u32>,
        /// Its connection's flow id.
        pub flow_id: Vec<u32>,
        pub size_bytes: Vec<u64>,
        pub start_s: Vec<f64>,
        /// When its last byte was acknowledged; null if the run ended first.
        pub end_s: Vec<Option<f64>>,
        pub completion_s: Vec<Option<f64>>,
        pub delivered_bytes: Vec<u64>,
        pub packets_sent: Vec<u64>,
    }
}

/// One transfer, read across the columns of a [`TransferTable`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TransferRow<'a> {
    pub name: &'a str,
    pub index: u32,
    pub flow_id: u32,
    pub size_bytes: u64,
    pub start_s: f64,
    pub end_s: Option<f64>,
    pub completion_s: Option<f64>,
    pub delivered_bytes: u64,
    pub packets_sent: u64,
}

impl TransferTable {
    /// The transfers as rows, in table order.
    pub fn iter(&self) -> impl Iterator<Item = TransferRow<'_>> {
        (0..self.len()).map(move |i| TransferRow {
            name: &self.name[i],
            index: self.index[i],
            flow_id: self.flow_id[i],
            size_bytes: self.size_bytes[i],
            start_s: self.start_s[i],
            end_s: self.end_s[i],
            completion_s: self.completion_s[i],
            delivered_bytes: self.delivered_bytes[i],
            packets_sent: self.packets_sent[i],
        })
    }

    pub fn len(&self) -> usize {
        self.flow_id.len()
    }

    pub fn is_empty(&self) -> bool {
        self.flow_id.is_empty()
    }
}

/// How many connections the run opened and reclaimed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ConnectionTotals {
    pub opened: u64,
    pub closed: u64,
    /// Most alive at once.
    pub peak: u64,
    /// Packets that arrived after their connection was reclaimed.
    pub orphaned_packets: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkResult {
    pub name: String,
    pub role: &'static str,
    pub from: String,
    pub to: String,
    pub rate_bps: u64,
    pub delay_s: f64,
    pub buffer_pkts: Option<u64>,
    pub buffer_bytes: Option<u64>,
    pub utilization: f64,
    pub throughput_bps: f64,
    pub arrivals: u64,
    pub drops: u64,
    /// The part of `drops` an AQM rule made while the buffer had room (RED).
    pub early_drops: u64,
    /// Packets admitted with CE set (RED with ECN, the CW marker).
    pub marks: u64,
    pub losses: u64,
    pub queue_mean_pkts: f64,
    pub queue_mean_bytes: f64,
    pub queue_max_pkts: u64,
    pub queue_max_bytes: u64,
    /// The queue discipline (`droptail`, `codel`, ...).
    pub queue: &'static str,
    /// The mean time a packet waited in the queue, by Little's law: the
    /// queue's time integral over the packets that left it in the window.
    pub queue_delay_mean_s: f64,
}

columns! {
    /// Time series as columns (one entry per sample and flow or link).
    #[derive(Clone, Debug, Default, PartialEq, Serialize)]
    pub struct FlowSeries {
        pub time_s: Vec<f64>,
        pub flow_id: Vec<u32>,
        pub cwnd: Vec<f64>,
        pub ssthresh: Vec<f64>,
        pub srtt_s: Vec<f64>,
        pub rtt_s: Vec<f64>,
        pub seq_sent: Vec<u64>,
        pub seq_acked: Vec<u64>,
        pub in_flight: Vec<u64>,
        pub bytes_delivered: Vec<u64>,
    }
}

columns! {
    #[derive(Clone, Debug, Default, PartialEq, Serialize)]
    pub struct LinkSeries {
        pub time_s: Vec<f64>,
        pub link: Vec<String>,
        pub queue_pkts: Vec<u64>,
        pub queue_bytes: Vec<u64>,
    }
}

columns! {
    /// Every recorded value in long format, as columns: one entry per sample of
    /// one series; `series` indexes [`TimeSeries::series`].
    #[derive(Clone, Debug, Default, PartialEq, Serialize)]
    pub struct MetricColumns {
        pub time_s: Vec<f64>,
        pub series: Vec<u32>,
        pub value: Vec<f64>,
    }
}

/// Time series. `series` and `metrics` hold everything recorded (`run.sample`
/// and `[[observe]]`); `flows` and `links` are the wide view of what
/// `run.sample` recorded (one row per sample and flow or link, the columns of
/// the fixed sampler this replaced), kept for existing readers.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TimeSeries {
    pub flows: FlowSeries,
    pub links: LinkSeries,
    pub series: Vec<SeriesInfo>,
    pub metrics: MetricColumns,
}

/// Where a series goes in the wide views.
#[derive(Clone, Copy)]
enum Column {
    /// Not a `run.sample` series, or not a column of the wide views.
    None,
    /// This flow's row, this column.
    Flow(u32, usize),
    /// The row of the link whose first series is this one, this column.
    Link(u32, usize),
}

/// A count as a wide view holds it: 0 where the source published nothing.
fn count_or_zero(x: f64) -> u64 {
    if x.is_nan() {
        0
    } else {
        x as u64
    }
}

/// A number as a wide view holds it: 0 where the source published nothing.
fn number_or_zero(x: f64) -> f64 {
    if x.is_nan() {
        0.0
    } else {
        x
    }
}

/// A column of a wide view: the metric it shows, and how a sampled value goes into it.
type WideColumn<View> = (&'static MetricDesc, fn(&mut View, f64));

/// The wide flow view's columns after `time_s` and `flow_id`: each the
/// `run.sample` metric it shows (the TCP sender's, the engine's
/// `bytes_delivered`) and how a sampled value goes into it. The
/// columns keep the names readers have always used, which differ from the
/// metrics' where a column carries its unit (`srtt` is `srtt_s`, `rtt` is
/// `rtt_s`). The first, `cwnd`, decides whether a flow has a row.
const FLOW_COLUMNS: [WideColumn<FlowSeries>; 8] = [
    (&sender::CWND, |f, v| f.cwnd.push(v)),
    (&sender::SSTHRESH, |f, v| f.ssthresh.push(number_or_zero(v).min(1e12))),
    (&sender::SRTT, |f, v| f.srtt_s.push(number_or_zero(v))),
    (&sender::RTT, |f, v| f.rtt_s.push(number_or_zero(v))),
    (&sender::SEQ_SENT, |f, v| f.seq_sent.push(count_or_zero(v))),
    (&sender::SEQ_ACKED, |f, v| f.seq_acked.push(count_or_zero(v))),
    (&sender::IN_FLIGHT, |f, v| f.in_flight.push(count_or_zero(v))),
    (&BYTES_DELIVERED, |f, v| f.bytes_delivered.push(count_or_zero(v))),
];

/// The wide link view's columns after `time_s` and `link`, as [`FLOW_COLUMNS`]:
/// `queue_packets` is `queue_pkts`, as in the links' summary (`queue_mean_pkts`).
const LINK_COLUMNS: [WideColumn<LinkSeries>; 2] = [
    (&QUEUE_PACKETS, |l, v| l.queue_pkts.push(count_or_zero(v))),
    (&QUEUE_BYTES, |l, v| l.queue_bytes.push(count_or_zero(v))),
];

/// The wide views, from the rows `run.sample` recorded. A flow row is written
/// when its sender published `cwnd` (TCP), as the fixed sampler did; a
/// watch's values of one sample are consecutive rows. Each series' column is
/// worked out once, so a row costs no string comparison.
fn wide(ts: &mut TimeSeries, rows: &[MetricRow]) {
    const FLOWS: usize = FLOW_COLUMNS.len();
    const LINKS: usize = LINK_COLUMNS.len();
    let mut first_of_link: BTreeMap<&str, u32> = BTreeMap::new();
    let columns: Vec<Column> = ts
        .series
        .iter()
        .enumerate()
        .map(|(id, s)| {
            if s.selection != "run.sample" {
                return Column::None;
            }
            match s.flow_id.filter(|_| s.kind == "flow") {
                Some(flow) => {
                    FLOW_COLUMNS.iter().position(|(m, _)| m.name == s.metric).map(|c| Column::Flow(flow, c))
                }
                None => {
                    let link = *first_of_link.entry(s.component.as_str()).or_insert(id as u32);
                    LINK_COLUMNS.iter().position(|(m, _)| m.name == s.metric).map(|c| Column::Link(link, c))
                }
            }
            .unwrap_or(Column::None)
        })
        .collect();

    let flush_flow = |f: &mut FlowSeries, row: Option<(Time, u32, [f64; FLOWS])>| {
        let Some((time, flow_id, v)) = row else { return };
        if v[0].is_nan() {
            return;
        }
        f.time_s.push(to_secs_f64(time));
        f.flow_id.push(flow_id);
        for ((_, push), value) in FLOW_COLUMNS.iter().zip(v) {
            push(f, value);
        }
    };
    let flush_link = |l: &mut LinkSeries, series: &[SeriesInfo], row: Option<(Time, u32, [f64; LINKS])>| {
        let Some((time, first, v)) = row else { return };
        l.time_s.push(to_secs_f64(time));
        l.link.push(series[first as usize].component.clone());
        for ((_, push), value) in LINK_COLUMNS.iter().zip(v) {
            push(l, value);
        }
    };
    let mut flow: Option<(Time, u32, [f64; FLOWS])> = None;
    let mut link: Option<(Time, u32, [f64; LINKS])> = None;
    for r in rows {
        match columns.get(r.series as usize).copied().unwrap_or(Column::None) {
            Column::None => {}
            Column::Flow(id, col) => {
                if flow.is_none_or(|(t, f, _)| t != r.time || f != id) {
                    flush_flow(&mut ts.flows, flow.take());
                    flow = Some((r.time, id, [f64::NAN; FLOWS]));
                }
                if let Some((_, _, v)) = flow.as_mut() {
                    v[col] = r.value;
                }
            }
            Column::Link(first, col) => {
                if link.is_none_or(|(t, l, _)| t != r.time || l != first) {
                    flush_link(&mut ts.links, &ts.series, link.take());
                    link = Some((r.time, first, [f64::NAN; LINKS]));
                }
                if let Some((_, _, v)) = link.as_mut() {
                    v[col] = r.value;
                }
            }
        }
    }
    flush_flow(&mut ts.flows, flow);
    flush_link(&mut ts.links, &ts.series, link);
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunResult {
    pub scenario: String,
    pub seed: u64,
    pub sim_time_s: f64,
    pub warmup_s: f64,
    pub wall_s: f64,
    pub events: u64,
    pub packet_hops: u64,
    pub flows: Vec<FlowResult>,
    pub links: Vec<LinkResult>,
    pub transfers: TransferTable,
    pub connections: ConnectionTotals,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeseries: Option<TimeSeries>,
    /// Traced packet events and the pcap files made of them (`[[trace]]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<crate::trace::TraceTable>,
    /// The build's warnings ([`crate::build::Simulation::warnings`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// A protocol counter as a report shows it.
fn report(measure: Measure) -> serde_json::Value {
    match measure {
        Measure::Count(n) => n.into(),
        Measure::MeanSeconds { sum, samples } if samples > 0 => (to_secs_f64(sum) / samples as f64).into(),
        Measure::MinSeconds(Some(t)) => to_secs_f64(t).into(),
        Measure::MeanSeconds { .. } | Measure::MinSeconds(None) => serde_json::Value::Null,
    }
}

fn extras(sides: [&Counters; 2]) -> BTreeMap<&'static str, serde_json::Value> {
    sides.iter().flat_map(|c| c.extra.iter()).map(|(name, m)| (name, report(m))).collect()
}

fn rate(bytes: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        bytes as f64 * 8.0 / seconds
    } else {
        0.0
    }
}

impl RunResult {
    /// Collects the results of a finished simulation.
    pub fn collect(sim: &Simulation, wall_s: f64) -> Self {
        let totals = sim.engine.totals();
        RunResult {
            scenario: sim.scenario.name.clone(),
            seed: sim.seed,
            sim_time_s: to_secs_f64(sim.scenario.run.duration),
            warmup_s: to_secs_f64(sim.scenario.run.warmup),
            wall_s,
            events: totals.events,
            packet_hops: totals.packet_hops,
            flows: flow_results(sim),
            links: link_results(sim),
            transfers: transfer_table(sim),
            connections: ConnectionTotals {
                opened: totals.connections_opened,
                closed: totals.connections_closed,
                peak: totals.connections_peak,
                orphaned_packets: totals.orphaned,
            },
            timeseries: time_series(sim),
            trace: crate::trace::collect(&sim.scenario, &sim.flows, &sim.engine),
            warnings: sim.warnings.clone(),
        }
    }
}

/// One row per flow instance (or traffic source), counted over the statistics window.
fn flow_results(sim: &Simulation) -> Vec<FlowResult> {
    let engine = &sim.engine;
    let secs = to_secs_f64(engine.window().len());
    let windows = engine.bucket_windows();
    sim.flows
        .iter()
        .map(|f| {
            let group = &sim.scenario.flows[f.group];
            let window = windows.get(f.bucket as usize).copied().unwrap_or_default();
            let (snd, rcv) = (&window.sender, &window.receiver);
            let algorithms = group.algorithms.as_ref();
            let finished = f.sender.and_then(|id| engine.endpoint(id)).and_then(|e| e.finished_at());
            FlowResult {
                name: group.name.clone(),
                index: f.index,
                flow_id: f.flow_id,
                direction: group.direction.as_str(),
                protocol: group.protocol.clone(),
                cc: group.cc().map(str::to_string),
                recovery: algorithms.map(|a| a.recovery.clone()),
                pacing: algorithms.map(|a| a.pacing.clone()),
                app: group.app.kind(),
                start_s: to_secs_f64(f.start),
                rtt_base_s: to_secs_f64(f.base_rtt),
                goodput_bps: rate(rcv.bytes_delivered, secs),
                throughput_bps: rate(snd.bytes_sent, secs),
                ack_throughput_bps: rate(rcv.bytes_sent, secs),
                bytes_delivered: rcv.bytes_delivered,
                packets_sent: snd.packets_sent,
                packets_received: rcv.packets_received,
                completion_s: finished.map(|t| to_secs_f64(t.saturating_sub(f.start))),
                extra: extras([snd, rcv]),
            }
        })
        .collect()
}

/// Every finite transfer, named by the flow row it was counted in.
fn transfer_table(sim: &Simulation) -> TransferTable {
    let row_of_bucket: BTreeMap<_, _> = sim.flows.iter().map(|f| (f.bucket, f)).collect();
    let mut transfers = TransferTable::default();
    for t in sim.engine.transfers() {
        let Some(f) = row_of_bucket.get(&t.bucket) else { continue };
        transfers.name.push(sim.scenario.flows[f.group].name.clone());
        transfers.index.push(f.index);
        transfers.flow_id.push(t.flow);
        transfers.size_bytes.push(t.size);
        transfers.start_s.push(to_secs_f64(t.start));
        transfers.end_s.push(t.finished.map(to_secs_f64));
        transfers.completion_s.push(t.finished.map(|end| to_secs_f64(end.saturating_sub(t.start))));
        transfers.delivered_bytes.push(t.delivered);
        transfers.packets_sent.push(t.packets_sent);
    }
    transfers
}

/// One row per link direction, counted over the statistics window.
fn link_results(sim: &Simulation) -> Vec<LinkResult> {
    let engine = &sim.engine;
    let window = engine.window();
    let secs = to_secs_f64(window.len());
    let nodes = &engine.net.nodes;
    engine
        .net
        .links
        .iter()
        .zip(&sim.link_roles)
        .map(|(l, &role)| {
            let (q_pkts, q_bytes) = l.queue_means(&window);
            let (buffer_pkts, buffer_bytes) = match l.spec.buffer {
                BufferLimit::Packets(p) => (Some(p), None),
                BufferLimit::Bytes(b) => (None, Some(b)),
                BufferLimit::Unlimited => (None, None),
            };
            LinkResult {
                name: l.spec.name.clone(),
                role,
                from: nodes[l.spec.from as usize].name.clone(),
                to: nodes[l.spec.to as usize].name.clone(),
                rate_bps: l.spec.rate_bps,
                delay_s: to_secs_f64(l.spec.delay),
                buffer_pkts,
                buffer_bytes,
                utilization: l.utilization(&window),
                throughput_bps: rate(l.stats.window_bytes, secs),
                arrivals: l.stats.window_arrivals,
                drops: l.stats.window_drops,
                early_drops: l.stats.window_early_drops,
                marks: l.stats.window_marks,
                losses: l.stats.window_losses,
                queue_mean_pkts: q_pkts,
                queue_mean_bytes: q_bytes,
                queue_max_pkts: l.stats.queue_max_packets,
                queue_max_bytes: l.stats.queue_max_bytes,
                queue: l.discipline_name(),
                queue_delay_mean_s: l.queue_delay_mean() / 1e9,
            }
        })
        .collect()
}

/// The recorded series, long and wide, when the scenario asked for any.
fn time_series(sim: &Simulation) -> Option<TimeSeries> {
    let recorded = sim.scenario.run.sample.is_some() || !sim.scenario.observe.is_empty();
    recorded.then(|| {
        let mut ts = TimeSeries { series: sim.series.clone(), ..TimeSeries::default() };
        let rows = &sim.engine.series.rows;
        let m = &mut ts.metrics;
        m.time_s.extend(rows.iter().map(|r| to_secs_f64(r.time)));
        m.series.extend(rows.iter().map(|r| r.series));
        m.value.extend(rows.iter().map(|r| r.value));
        wide(&mut ts, rows);
        ts
    })
}

/// What a run reports besides its tables: the `--json` summary's scalars,
/// connection totals, the recorded series' descriptions and the packet trace.
#[derive(Clone, Debug, Serialize)]
pub struct Header<'a> {
    pub scenario: &'a str,
    pub seed: u64,
    pub sim_time_s: f64,
    pub warmup_s: f64,
    pub wall_s: f64,
    pub events: u64,
    pub packet_hops: u64,
    pub connections: ConnectionTotals,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub series: Option<&'a [SeriesInfo]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<&'a crate::trace::TraceTable>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub warnings: &'a [String],
}

impl RunResult {
    pub fn header(&self) -> Header<'_> {
        Header {
            scenario: &self.scenario,
            seed: self.seed,
            sim_time_s: self.sim_time_s,
            warmup_s: self.warmup_s,
            wall_s: self.wall_s,
            events: self.events,
            packet_hops: self.packet_hops,
            connections: self.connections,
            series: self.timeseries.as_ref().map(|ts| ts.series.as_slice()),
            trace: self.trace.as_ref(),
            warnings: &self.warnings,
        }
    }

    /// The run's tables as columns, by name: `flows`, `links`, `transfers`,
    /// `metrics`, and `flow_series` and `link_series` (the wide views of
    /// `run.sample`), the last three empty without recorded series. Column
    /// names are the `--json` summary's.
    pub fn tables(&self) -> Vec<(&'static str, Table)> {
        let none = TimeSeries::default();
        let ts = self.timeseries.as_ref().unwrap_or(&none);
        vec![
            ("flows", self.flow_table()),
            ("links", self.link_table()),
            ("transfers", self.transfers.table()),
            ("metrics", ts.metrics.table()),
            ("flow_series", ts.flows.table()),
            ("link_series", ts.links.table()),
        ]
    }

    fn flow_table(&self) -> Table {
        let f = &self.flows;
        let mut t = Table::new(f.len());
        t.column("name", f.iter().map(|r| r.name.as_str()))
            .column("index", f.iter().map(|r| r.index))
            .column("flow_id", f.iter().map(|r| r.flow_id))
            .column("direction", f.iter().map(|r| r.direction))
            .column("protocol", f.iter().map(|r| r.protocol.as_str()))
            .column("cc", f.iter().map(|r| r.cc.as_deref()))
            .column("recovery", f.iter().map(|r| r.recovery.as_deref()))
            .column("pacing", f.iter().map(|r| r.pacing.as_deref()))
            .column("app", f.iter().map(|r| r.app))
            .column("start_s", f.iter().map(|r| r.start_s))
            .column("rtt_base_s", f.iter().map(|r| r.rtt_base_s))
            .column("goodput_bps", f.iter().map(|r| r.goodput_bps))
            .column("throughput_bps", f.iter().map(|r| r.throughput_bps))
            .column("ack_throughput_bps", f.iter().map(|r| r.ack_throughput_bps))
            .column("bytes_delivered", f.iter().map(|r| r.bytes_delivered))
            .column("packets_sent", f.iter().map(|r| r.packets_sent))
            .column("packets_received", f.iter().map(|r| r.packets_received))
            .column("completion_s", f.iter().map(|r| r.completion_s));
        // The protocols' own counters, in the order the rows first name them
        // (each row's in name order), as polars orders a union of JSON rows' keys.
        let mut extras: Vec<&str> = Vec::new();
        for name in f.iter().flat_map(|r| r.extra.keys()) {
            if !extras.contains(name) {
                extras.push(name);
            }
        }
        for name in extras {
            t.json_column(name, f.iter().map(move |r| r.extra.get(name)));
        }
        t
    }

    fn link_table(&self) -> Table {
        let l = &self.links;
        let mut t = Table::new(l.len());
        t.column("name", l.iter().map(|r| r.name.as_str()))
            .column("role", l.iter().map(|r| r.role))
            .column("from", l.iter().map(|r| r.from.as_str()))
            .column("to", l.iter().map(|r| r.to.as_str()))
            .column("rate_bps", l.iter().map(|r| r.rate_bps))
            .column("delay_s", l.iter().map(|r| r.delay_s))
            .column("buffer_pkts", l.iter().map(|r| r.buffer_pkts))
            .column("buffer_bytes", l.iter().map(|r| r.buffer_bytes))
            .column("utilization", l.iter().map(|r| r.utilization))
            .column("throughput_bps", l.iter().map(|r| r.throughput_bps))
            .column("arrivals", l.iter().map(|r| r.arrivals))
            .column("drops", l.iter().map(|r| r.drops))
            .column("early_drops", l.iter().map(|r| r.early_drops))
            .column("marks", l.iter().map(|r| r.marks))
            .column("losses", l.iter().map(|r| r.losses))
            .column("queue_mean_pkts", l.iter().map(|r| r.queue_mean_pkts))
            .column("queue_mean_bytes", l.iter().map(|r| r.queue_mean_bytes))
            .column("queue_max_pkts", l.iter().map(|r| r.queue_max_pkts))
            .column("queue_max_bytes", l.iter().map(|r| r.queue_max_bytes))
            .column("queue", l.iter().map(|r| r.queue))
            .column("queue_delay_mean_s", l.iter().map(|r| r.queue_delay_mean_s));
        t
    }
}
