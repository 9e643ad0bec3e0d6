//! The resolved scenario written back as a scenario file (`cclab validate --toml`).
//!
//! [`to_toml`] writes a validated [`Scenario`] in the input schema with every
//! default filled in, so that `cclab_sim::parse` reads it back to the very
//! same scenario: `parse(&to_toml(&s), ..) == s`. The JSON form
//! (`cclab validate --json`) is a report in base units (seconds, bit/s) and
//! cannot be read back; this is its runnable counterpart.
//!
//! Values are written exactly: a duration, rate or size in the largest unit
//! that divides it (`"10ms"`, `"100Mbps"`, `"64KB"`), a float in Rust's
//! shortest round-trip form. Structs are destructured field by field, so a new
//! scenario field does not compile until it is written here too.

use crate::capacity::Capacity;
use crate::scenario::{
    Direction, Dumbbell, FlowGroup, Graph, GraphLink, HostSpec, LinkParams, Observe, RunConfig, Scenario,
    SendBufferSpec, Start, TcpAlgorithms, TcpOptions, Topology, TraceSpec, UdtOptions,
};
use crate::sources::AppSpec;
use crate::units::BufferSpec;
use cclab_core::loss::LossModel;
use cclab_core::schedule::Schedule;
use cclab_transport::tcp::EcnFeedback;
use cclab_wire::{Law, ParamValue, Params, SizeDistribution, Time};
use toml::Value;

/// `value` in the largest of `units` (name, factor; largest first) that divides
/// it exactly; the last unit must have factor 1.
fn exact(value: u64, units: &[(&str, u64)]) -> String {
    let (name, factor) =
        units.iter().find(|(_, f)| value.is_multiple_of(*f)).expect("the last unit has factor 1");
    format!("{}{name}", value / factor)
}

fn duration(t: Time) -> String {
    if t == 0 {
        return "0s".into();
    }
    exact(t, &[("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000), ("ns", 1)])
}

/// "100Mbps", "1bps": a rate in the largest unit that writes it exactly.
pub(crate) fn rate(bps: u64) -> String {
    exact(
        bps,
        &[
            ("Tbps", 1_000_000_000_000),
            ("Gbps", 1_000_000_000),
            ("Mbps", 1_000_000),
            ("kbps", 1_000),
            ("bps", 1),
        ],
    )
}

fn size(bytes: u64) -> String {
    if bytes == 0 {
        return "0B".into();
    }
    exact(
        bytes,
        &[("TB", 1_000_000_000_000), ("GB", 1_000_000_000), ("MB", 1_000_000), ("KB", 1_000), ("B", 1)],
    )
}

/// "1bdp", "100pkts", "300KB", "unlimited": a buffer as a scenario writes it.
pub(crate) fn buffer(b: BufferSpec) -> String {
    match b {
        BufferSpec::Packets(n) => format!("{n}pkts"),
        BufferSpec::Bytes(n) => size(n),
        // Display is the shortest text that parses back to the same f64.
        BufferSpec::Bdp(x) => format!("{x}bdp"),
        BufferSpec::Unlimited => "unlimited".into(),
    }
}

fn distribution(d: SizeDistribution) -> String {
    match d {
        SizeDistribution::Constant(bytes) => size(bytes),
        // Means need not be whole bytes: written in B so that no scaling rounds them.
        SizeDistribution::Exponential { mean } => format!("exponential(mean={mean}B)"),
        SizeDistribution::Pareto { mean, shape } => format!("pareto(mean={mean}B, shape={shape})"),
        SizeDistribution::Pareto2 { mean, shape } => format!("pareto2(mean={mean}B, shape={shape})"),
    }
}

/// A law written with `unit` after each value ("s" for durations, "" for counts).
fn law(l: Law, unit: &str) -> String {
    match l {
        Law::Constant { value: x } => format!("{x}{unit}"),
        Law::Exponential { mean } => format!("exponential(mean={mean}{unit})"),
        Law::Pareto { mean, shape } => format!("pareto(mean={mean}{unit}, shape={shape})"),
        Law::Pareto2 { mean, shape } => format!("pareto2(mean={mean}{unit}, shape={shape})"),
    }
}

/// A start or an RTT: one duration, or a range as "from..to".
fn range(r: Start) -> String {
    match r {
        Start::At(t) => duration(t),
        Start::Uniform(lo, hi) => format!("{}..{}", duration(lo), duration(hi)),
    }
}

fn string(s: impl Into<String>) -> Value {
    Value::String(s.into())
}

/// A whole number as a TOML integer (so that it reads back into integer
/// parameters), anything else as a float.
fn number(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        Value::Integer(x as i64)
    } else {
        Value::Float(x)
    }
}

fn param(v: &ParamValue) -> Value {
    match v {
        ParamValue::Bool(b) => Value::Boolean(*b),
        ParamValue::Number(x) => number(*x),
        ParamValue::Text(t) => string(t.as_str()),
        ParamValue::Rate(r) => string(rate(*r)),
        ParamValue::Size(b) => string(size(*b)),
        ParamValue::Duration(t) => string(duration(*t)),
        ParamValue::PerSecond(x) => string(format!("{x}/s")),
        ParamValue::Distribution(d) => string(distribution(*d)),
        ParamValue::Durations(l) => string(law(*l, "s")),
        ParamValue::Counts(Law::Constant { value: x }) => number(*x),
        ParamValue::Counts(l) => string(law(*l, "")),
    }
}

fn inline(entries: &[(String, Value)]) -> String {
    if entries.is_empty() {
        return "{}".into();
    }
    let items: Vec<String> = entries.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    format!("{{ {} }}", items.join(", "))
}

fn params(p: &Params) -> String {
    inline(&p.iter().map(|(k, v)| (k.clone(), param(v))).collect::<Vec<_>>())
}

/// Lines of `key = value` under a table header.
struct Writer {
    out: String,
}

impl Writer {
    fn header(&mut self, header: &str) {
        self.out.push('\n');
        self.out.push_str(header);
        self.out.push('\n');
    }

    fn value(&mut self, key: &str, value: Value) {
        self.out.push_str(&format!("{key} = {value}\n"));
    }

    fn raw(&mut self, key: &str, text: &str) {
        self.out.push_str(&format!("{key} = {text}\n"));
    }

    fn string(&mut self, key: &str, s: impl Into<String>) {
        self.value(key, string(s));
    }

    fn link(&mut self, p: &LinkParams) {
        let LinkParams {
            rate_bps: _, // derived from the capacities and buffer_rate
            delay,
            buffer: b,
            queue,
            queue_params,
            loss,
            reverse_loss,
            capacity,
            reverse_capacity,
            delay_schedule,
            buffer_rate,
        } = p;
        // `rate` is what the directions without a trace carry (see capacity.rs).
        let reverse_capacity = reverse_capacity.as_ref().unwrap_or(capacity);
        match (capacity, reverse_capacity) {
            (Capacity::Trace(f), Capacity::Trace(r)) => {
                self.string("trace", f.path.as_str());
                if r != f {
                    self.string("reverse_trace", r.path.as_str());
                }
            }
            (Capacity::Trace(f), r) => {
                self.string("trace", f.path.as_str());
                self.raw("rate", &capacity_text(r));
            }
            (f, Capacity::Trace(r)) => {
                self.raw("rate", &capacity_text(f));
                self.string("reverse_trace", r.path.as_str());
            }
            (f, r) => {
                self.raw("rate", &capacity_text(f));
                if r != f {
                    self.raw("reverse_rate", &capacity_text(r));
                }
            }
        }
        match delay_schedule {
            Some(s) => self.raw("delay", &schedule_text(s, duration)),
            None => self.string("delay", duration(*delay)),
        }
        if let Some(r) = buffer_rate {
            self.string("buffer_rate", rate(*r));
        }
        self.string("buffer", buffer(*b));
        self.string("queue", queue.as_str());
        self.raw("queue_params", &params(queue_params));
        self.raw("loss", &loss_model(loss));
        self.raw("reverse_loss", &loss_model(reverse_loss));
    }
}

/// A rate or rate schedule as `rate = ...` takes it (never a trace).
fn capacity_text(c: &Capacity) -> String {
    match c {
        Capacity::Rate(r) => string(rate(*r)).to_string(),
        Capacity::Schedule(s) => schedule_text(s, |r| if r == 0 { "0bps".into() } else { rate(r) }),
        Capacity::Trace(t) => string(t.path.as_str()).to_string(),
    }
}

/// Steps as `[["0s", v], ...]`, a cycle as `{ cycle = [[duration, v], ...] }`.
fn schedule_text(s: &Schedule, value: impl Fn(u64) -> String) -> String {
    let pair = |t: Time, v: u64| format!("[{}, {}]", string(duration(t)), string(value(v)));
    match s {
        Schedule::Steps(steps) => {
            let items: Vec<String> = steps.iter().map(|&(t, v)| pair(t, v)).collect();
            format!("[{}]", items.join(", "))
        }
        Schedule::Cycle { steps, period } => {
            let ends = steps.iter().skip(1).map(|&(t, _)| t).chain([*period]);
            let items: Vec<String> = steps.iter().zip(ends).map(|(&(t, v), end)| pair(end - t, v)).collect();
            format!("{{ cycle = [{}] }}", items.join(", "))
        }
    }
}

fn loss_model(m: &LossModel) -> String {
    match *m {
        LossModel::Bernoulli { p } => Value::Float(p).to_string(),
        LossModel::GilbertElliott { good_to_bad, bad_to_good, loss_good, loss_bad } => inline(&[
            ("model".into(), string("gilbert_elliott")),
            ("good_to_bad".into(), Value::Float(good_to_bad)),
            ("bad_to_good".into(), Value::Float(bad_to_good)),
            ("loss_good".into(), Value::Float(loss_good)),
            ("loss_bad".into(), Value::Float(loss_bad)),
        ]),
    }
}

fn app(a: &AppSpec) -> String {
    let mut entries = vec![("kind".to_string(), string(a.kind()))];
    match *a {
        AppSpec::Bulk => return string(a.kind()).to_string(),
        AppSpec::Transfer { size: bytes } => entries.push(("size".into(), string(size(bytes)))),
        AppSpec::Arrivals { rate: per_second, size: d } => {
            entries.push(("rate".into(), string(format!("{per_second}/s"))));
            entries.push(("size".into(), string(distribution(d))));
        }
        AppSpec::Web(w) => {
            // The load as asked, when it was: the session rate follows from it again.
            match w.load {
                Some(l) => {
                    entries.push(("load".into(), Value::Float(l.load)));
                    entries.push(("load_of".into(), string(rate(l.of_bps))));
                }
                None => entries.push(("sessions".into(), string(format!("{}/s", w.sessions)))),
            }
            entries.push(("pages".into(), param(&ParamValue::Counts(w.pages))));
            entries.push(("objects".into(), param(&ParamValue::Counts(w.objects))));
            entries.push(("page_gap".into(), param(&ParamValue::Durations(w.page_gap))));
            entries.push(("object_gap".into(), param(&ParamValue::Durations(w.object_gap))));
            entries.push(("size".into(), string(distribution(w.size))));
            if let Some(d) = w.request_delay {
                entries.push(("request_delay".into(), string(duration(d))));
            }
        }
        AppSpec::Cbr { rate: bps, size: bytes, on, off } => {
            entries.push(("rate".into(), string(rate(bps))));
            entries.push(("size".into(), string(size(bytes))));
            if let Some(on) = on {
                entries.push(("on".into(), string(duration(on))));
            }
            if let Some(off) = off {
                entries.push(("off".into(), string(duration(off))));
            }
        }
    }
    inline(&entries)
}

fn flow(w: &mut Writer, f: &FlowGroup) {
    let FlowGroup {
        name,
        count,
        direction,
        protocol,
        algorithms,
        rtt,
        from,
        to,
        ends,
        start,
        stop,
        app: a,
        tcp,
        udt,
    } = f;
    w.header("[[flows]]");
    w.string("name", name.as_str());
    w.value("count", Value::Integer(i64::from(*count)));
    w.string("protocol", protocol.as_str());
    // A flow on hosts of its own (a dumbbell's) has a direction and an RTT;
    // one between two nodes of a graph refuses them.
    if ends.own_hosts {
        w.string(
            "direction",
            match direction {
                Direction::Forward => "forward",
                Direction::Reverse => "reverse",
            },
        );
    }
    if let Some(rtt) = rtt {
        w.string("rtt", range(*rtt));
    }
    if let Some(from) = from {
        w.string("from", from.as_str());
    }
    if let Some(to) = to {
        w.string("to", to.as_str());
    }
    w.string("start", range(*start));
    if let Some(stop) = stop {
        w.string("stop", duration(*stop));
    }
    w.raw("app", &app(a));
    if let Some(a) = algorithms {
        tcp_algorithms(w, a);
    }
    if let Some(u) = udt {
        udt_options(w, u);
    }
    if let Some(t) = tcp {
        tcp_options(w, t);
    }
}

fn tcp_algorithms(w: &mut Writer, a: &TcpAlgorithms) {
    let TcpAlgorithms { cc, cc_params, recovery, recovery_params, pacing, pacing_params, send_buffer } = a;
    w.string("cc", cc.as_str());
    w.raw("cc_params", &params(cc_params));
    w.string("recovery", recovery.as_str());
    w.raw("recovery_params", &params(recovery_params));
    w.string("pacing", pacing.as_str());
    w.raw("pacing_params", &params(pacing_params));
    if let Some(SendBufferSpec { policy, params: p, .. }) = send_buffer {
        let mut entries = vec![("policy".to_string(), string(policy.as_str()))];
        entries.extend(p.iter().map(|(k, v)| (k.clone(), param(v))));
        w.raw("send_buffer", &inline(&entries));
    }
}

fn udt_options(w: &mut Writer, u: &UdtOptions) {
    let UdtOptions { cc, cc_params, mss, receive_buffer, send_buffer, max_flow_window } = u;
    w.string("cc", cc.as_str());
    w.raw("cc_params", &params(cc_params));
    w.value("mss", Value::Integer(i64::from(*mss)));
    w.value("receive_buffer", Value::Integer(i64::from(*receive_buffer)));
    w.value("send_buffer", Value::Integer(i64::from(*send_buffer)));
    w.value("max_flow_window", Value::Integer(i64::from(*max_flow_window)));
}

fn tcp_options(w: &mut Writer, t: &TcpOptions) {
    let TcpOptions {
        mss,
        header,
        initial_window,
        initial_ssthresh,
        max_window,
        delayed_ack,
        delack_timeout,
        min_rto,
        initial_rto,
        max_rto,
        clock_granularity,
        dupthresh,
        limited_transmit,
        timestamps,
        ecn,
        ssthresh_basis,
        cwnd_growth,
        send_overhead,
    } = t;
    w.value("mss", Value::Integer(i64::from(*mss)));
    w.value("header", Value::Integer(i64::from(*header)));
    w.value("initial_window", Value::Integer(i64::from(*initial_window)));
    // Absent means unlimited: the default has no written form.
    if let Some(x) = initial_ssthresh {
        w.value("initial_ssthresh", Value::Float(*x));
    }
    if let Some(m) = max_window {
        w.value("max_window", Value::Integer(*m as i64));
    }
    w.value("delayed_ack", Value::Boolean(*delayed_ack));
    w.string("delack_timeout", duration(*delack_timeout));
    w.string("min_rto", duration(*min_rto));
    w.string("initial_rto", duration(*initial_rto));
    w.string("max_rto", duration(*max_rto));
    w.string("clock_granularity", duration(*clock_granularity));
    w.value("dupthresh", Value::Integer(i64::from(*dupthresh)));
    w.value("limited_transmit", Value::Boolean(*limited_transmit));
    w.value("timestamps", Value::Boolean(*timestamps));
    // Off and classic keep their written form from before AccECN.
    match ecn {
        EcnFeedback::Off => w.value("ecn", Value::Boolean(false)),
        EcnFeedback::Classic => w.value("ecn", Value::Boolean(true)),
        EcnFeedback::Accurate => w.string("ecn", ecn.name()),
    }
    w.string("ssthresh_basis", ssthresh_basis.name());
    w.string("cwnd_growth", cwnd_growth.name());
    w.string("send_overhead", duration(*send_overhead));
}

/// The `[topology]` section as the file described it: a named shape as that
/// shape, a graph as its nodes, links and hosts.
fn topology_section(w: &mut Writer, topology: &Topology) {
    w.header("[topology]");
    match topology {
        Topology::Dumbbell(Dumbbell { access_rate_bps, access_buffer, bottleneck }) => {
            w.string("kind", "dumbbell");
            let access = [
                ("rate".to_string(), string(rate(*access_rate_bps))),
                ("buffer".to_string(), string(buffer(*access_buffer))),
            ];
            w.raw("access", &inline(&access));
            w.header("[topology.bottleneck]");
            w.link(bottleneck);
        }
        Topology::Graph(Graph { nodes, links, hosts, .. }) => {
            w.string("kind", "graph");
            w.value("nodes", Value::Array(nodes.iter().map(|n| string(n.as_str())).collect()));
            for GraphLink { from, to, params, .. } in links {
                w.header("[[topology.links]]");
                w.string("from", from.as_str());
                w.string("to", to.as_str());
                w.link(params);
            }
            for HostSpec { node, memory, share_every } in hosts {
                w.header("[[topology.hosts]]");
                w.string("node", node.as_str());
                w.string("memory", size(*memory));
                w.string("share_every", duration(*share_every));
            }
        }
    }
}

/// The scenario as a scenario file with every default written out; reads back
/// to an equal [`Scenario`].
pub fn to_toml(s: &Scenario) -> String {
    let Scenario { name, run, topology, graph: _, flows, observe, traces } = s;
    let mut w = Writer {
        out:
            "# Resolved by `cclab validate --toml`: every default filled in; `cclab run` accepts this file.\n"
                .into(),
    };
    w.string("name", name.as_str());

    let RunConfig { duration: d, warmup, seed, sample } = run;
    w.header("[run]");
    w.string("duration", duration(*d));
    w.string("warmup", duration(*warmup));
    // The parser reads seeds up to i64::MAX, so this conversion cannot wrap.
    w.value("seed", Value::Integer(*seed as i64));
    if let Some(sample) = sample {
        w.string("sample", duration(*sample));
    }

    topology_section(&mut w, topology);
    for f in flows {
        flow(&mut w, f);
    }
    observe_sections(&mut w, observe);
    trace_sections(&mut w, traces);
    w.out
}

fn observe_sections(w: &mut Writer, observe: &[Observe]) {
    for Observe { flows, links, metrics, every, on_change } in observe {
        let list = |names: &[String]| Value::Array(names.iter().map(|n| string(n.as_str())).collect());
        w.header("[[observe]]");
        if !flows.is_empty() {
            w.value("flows", list(flows));
        }
        if !links.is_empty() {
            w.value("links", list(links));
        }
        w.value("metrics", list(metrics));
        w.string("every", duration(*every));
        if *on_change {
            w.value("on_change", Value::Boolean(true));
        }
    }
}

fn trace_sections(w: &mut Writer, traces: &[TraceSpec]) {
    for t in traces {
        w.header("[[trace]]");
        let names = |list: &[String]| Value::Array(list.iter().map(|n| string(n.as_str())).collect());
        if !t.flows.is_empty() {
            w.value("flows", names(&t.flows));
        }
        if !t.links.is_empty() {
            w.value("links", names(&t.links));
        }
        w.string("from", duration(t.from));
        w.string("to", duration(t.to));
        w.value("pcap", Value::Boolean(t.pcap));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_written_in_the_largest_exact_unit() {
        assert_eq!(duration(0), "0s");
        assert_eq!(duration(20_000_000_000), "20s");
        assert_eq!(duration(1_500_000_000), "1500ms");
        assert_eq!(duration(250_000), "250us");
        assert_eq!(duration(7), "7ns");
        assert_eq!(rate(100_000_000), "100Mbps");
        assert_eq!(rate(2_500_000_000), "2500Mbps");
        assert_eq!(rate(64_001), "64001bps");
        assert_eq!(size(750_000), "750KB");
        assert_eq!(size(1_048_576), "1048576B");
        assert_eq!(buffer(BufferSpec::Bdp(0.25)), "0.25bdp");
        assert_eq!(buffer(BufferSpec::Packets(50)), "50pkts");
        assert_eq!(
            distribution(SizeDistribution::Pareto { mean: 100_000.0, shape: 1.2 }),
            "pareto(mean=100000B, shape=1.2)"
        );
    }

    #[test]
    fn numbers_that_are_whole_are_integers() {
        assert_eq!(number(14.0), Value::Integer(14));
        assert_eq!(number(0.125), Value::Float(0.125));
    }
}
