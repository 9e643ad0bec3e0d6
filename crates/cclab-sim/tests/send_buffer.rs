//! The modelled send buffer (issue 12, seed paper 004): a fixed buffer limits
//! a flow to buffer / RTT, RTBA lifts the limit, a host's buffers never sum
//! above its cap, and no byte is lost or duplicated when a buffer shrinks
//! under data already sent.

use crate::common;

use cclab_sim::validate_toml;
use cclab_wire::random::SplitMix64;
use common::{finish, series, simulation, tiles};

/// One flow on a 50 Mbit/s dumbbell with a 20 ms RTT and a buffer of 2 BDP.
fn dumbbell(send_buffer: &str) -> String {
    format!(
        r#"
[run]
duration = "20s"
warmup = "5s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "50Mbps"
delay = "5ms"
buffer = "2bdp"
[[flows]]
rtt = "20ms"
mss = 1460
recovery = "sack"
send_buffer = {send_buffer}
"#
    )
}

fn goodput_mbps(text: &str) -> f64 {
    let mut sim = simulation(text, 1);
    let r = finish(&mut sim);
    r.flows[0].goodput_bps / 1e6
}

/// A fixed 64 KB buffer holds 43 whole segments of 1460 bytes; unacknowledged
/// data is the window, so the flow moves 43 x 1460 bytes per round trip:
/// 25.1 Mbit/s on a path of 20 ms plus the serialisation of a window's last
/// packet (0.24 ms at 50 Mbit/s). RTBA, sized from the Padhye rate of a path
/// that never loses before the queue fills, gives the flow what it needs.
#[test]
fn a_fixed_buffer_limits_a_flow_to_buffer_per_rtt_and_rtba_lifts_it() {
    let fixed = goodput_mbps(&dumbbell("{ policy = \"fixed\", size = \"64KB\" }"));
    let expected = 43.0 * 1460.0 * 8.0 / 0.02024 / 1e6;
    assert!((fixed / expected - 1.0).abs() < 0.03, "fixed 64 KB: {fixed:.2} Mbit/s, expected {expected:.2}");
    let rtba = goodput_mbps(&dumbbell("{ policy = \"rtba\" }"));
    assert!(rtba > 0.9 * 50.0 * 1460.0 / 1500.0, "rtba: {rtba:.2} Mbit/s");
    let unlimited = goodput_mbps(&dumbbell("{ policy = \"fixed\", size = \"1GB\" }"));
    assert!((rtba / unlimited - 1.0).abs() < 0.05, "rtba {rtba:.2} vs unlimited {unlimited:.2}");
}

/// A server with a cap on send-buffer memory, `n` clients behind a 20 Mbit/s
/// bottleneck with a 300 KB queue, client RTTs drawn from `draw`.
fn capped_server(n: usize, policy: &str, memory_kb: u64, draw: &mut SplitMix64, app: &str) -> String {
    let mut text = String::from("[run]\nduration = \"8s\"\n[topology]\nkind = \"graph\"\n");
    let clients: Vec<String> = (0..n).map(|i| format!("\"c{i}\"")).collect();
    text += &format!("nodes = [\"server\", \"r1\", \"r2\", {}]\n", clients.join(", "));
    text += "[[topology.links]]\nfrom = \"server\"\nto = \"r1\"\nrate = \"1Gbps\"\ndelay = \"0.1ms\"\nbuffer = \"1000pkts\"\n";
    text += "[[topology.links]]\nfrom = \"r1\"\nto = \"r2\"\nrate = \"20Mbps\"\ndelay = \"2ms\"\nbuffer = \"300KB\"\n";
    for i in 0..n {
        let delay_ms = 1 + draw.next_u64() % 40;
        text += &format!(
            "[[topology.links]]\nfrom = \"r2\"\nto = \"c{i}\"\nrate = \"1Gbps\"\ndelay = \"{delay_ms}ms\"\nbuffer = \"1000pkts\"\n"
        );
    }
    text += &format!("[[topology.hosts]]\nnode = \"server\"\nmemory = \"{memory_kb}KB\"\n");
    for i in 0..n {
        let start_ms = draw.next_u64() % 3000;
        text += &format!(
            "[[flows]]\nname = \"f{i}\"\nfrom = \"server\"\nto = \"c{i}\"\nstart = \"{start_ms}ms\"\n\
             send_buffer = {{ policy = \"{policy}\" }}\napp = {app}\n"
        );
    }
    text += "[[observe]]\nflows = [\"*\"]\nmetrics = [\"send_buffer\"]\nevery = \"1ms\"\n";
    text
}

/// Property over random flow mixes: at every millisecond the buffers of the
/// server's connections sum to at most its cap. (They are also bounded at
/// every instant in between: each buffer is at most its limit, and the limits
/// a host sends sum to at most the cap; see `buffer::share`.)
#[test]
fn a_hosts_buffers_never_sum_above_its_cap() {
    let mut draw = SplitMix64::new(12);
    for case in 0..12 {
        let n = 1 + (draw.next_u64() % 10) as usize;
        let policy = ["fixed", "atbt", "rtba"][case % 3];
        let memory_kb = 20 + draw.next_u64() % 300;
        let text = capped_server(n, policy, memory_kb, &mut draw, "\"bulk\"");
        let mut sim = simulation(&text, case as u64);
        let r = finish(&mut sim);
        let mut total_at: std::collections::BTreeMap<u64, f64> = Default::default();
        for i in 0..n {
            for (t, v) in series(r.timeseries.as_ref().expect("observed"), &format!("f{i}"), "send_buffer") {
                *total_at.entry((t * 1e6).round() as u64).or_default() += v;
            }
        }
        assert!(!total_at.is_empty(), "case {case}: no samples");
        let cap = (memory_kb * 1000) as f64;
        let (t, worst) = total_at.iter().fold((0, 0.0f64), |a, (&t, &v)| if v > a.1 { (t, v) } else { a });
        assert!(worst <= cap, "case {case} ({n} x {policy}, cap {cap}): {worst} bytes at {t} us");
        let moved: u64 = r.flows.iter().map(|f| f.bytes_delivered).sum();
        assert!(moved > 0, "case {case}: nothing delivered");
    }
}

/// When a connection starts, the others' limits shrink below what they already
/// hold; every byte of every transfer still arrives once and in order.
#[test]
fn shrinking_buffers_lose_and_duplicate_nothing() {
    let mut draw = SplitMix64::new(5);
    for policy in ["fixed", "atbt", "rtba"] {
        let text = capped_server(6, policy, 60, &mut draw, "{ kind = \"transfer\", size = \"300KB\" }");
        let mut sim = simulation(&text, 3);
        sim.record_deliveries();
        finish(&mut sim);
        for f in &sim.flows {
            assert!(tiles(sim.deliveries(f).unwrap(), 300_000), "{policy}: flow {}", f.flow_id);
        }
    }
}

fn graph(host: &str, flows: &str) -> String {
    format!(
        r#"
[run]
duration = "1s"
[topology]
kind = "graph"
nodes = ["s", "r", "c"]
[[topology.links]]
from = "s"
to = "r"
rate = "10Mbps"
delay = "1ms"
buffer = "100pkts"
[[topology.links]]
from = "r"
to = "c"
rate = "10Mbps"
delay = "1ms"
buffer = "100pkts"
{host}
{flows}
"#
    )
}

fn error(text: &str) -> String {
    validate_toml(text, "t").err().map(|e| e.to_string()).unwrap_or_else(|| "accepted".into())
}

#[test]
fn bad_send_buffer_input_names_the_key() {
    let host = "[[topology.hosts]]\nnode = \"s\"\nmemory = \"100KB\"";
    let flow = |extra: &str| format!("[[flows]]\nfrom = \"s\"\nto = \"c\"\n{extra}");
    let cases = [
        (graph("", &flow("send_buffer = 65536")), "flows[0].send_buffer: expected a table like"),
        (graph("", &flow("send_buffer = { size = \"64KB\" }")), "flows[0].send_buffer.policy: is required"),
        (graph("", &flow("send_buffer = { policy = \"rtbba\" }")), "did you mean \"rtba\""),
        (
            graph("", &flow("send_buffer = { policy = \"fixed\", sise = \"1KB\" }")),
            "flows[0].send_buffer.sise",
        ),
        (graph("", &flow("send_buffer = { policy = \"rtba\", w = 2.0 }")), "flows[0].send_buffer.w"),
        (
            graph("", &flow("protocol = \"udp\"\napp = { kind = \"cbr\", rate = \"1Mbps\" }\nsend_buffer = { policy = \"fixed\" }")),
            "flows[0].send_buffer: only applies to protocol tcp or udt, not udp",
        ),
        (graph(host, &flow("")), "flows[0].send_buffer: is required: the flow sends from \"s\""),
        (
            graph(
                host,
                &(flow("send_buffer = { policy = \"rtba\" }")
                    + "\n"
                    + &flow("name = \"b\"\nsend_buffer = { policy = \"atbt\" }")),
            ),
            "flows[1].send_buffer.policy: \"atbt\" shares a host's memory max-min fairly, but flows[0]",
        ),
        (
            graph(host, &flow("protocol = \"udp\"\napp = { kind = \"cbr\", rate = \"1Mbps\" }")),
            "flows[0].protocol: must be tcp",
        ),
        (
            graph("[[topology.hosts]]\nnode = \"x\"\nmemory = \"1KB\"", &flow("")),
            "topology.hosts[0].node: unknown node \"x\"",
        ),
        (graph("[[topology.hosts]]\nnode = \"s\"", &flow("")), "topology.hosts[0].memory: is required"),
        (
            graph("[[topology.hosts]]\nnode = \"s\"\nmemory = 100", &flow("")),
            "topology.hosts[0].memory: 100 has no unit",
        ),
        (
            graph("[[topology.hosts]]\nnode = \"s\"\nmemory = \"1KB\"\nshare_every = \"0s\"", &flow("")),
            "topology.hosts[0].share_every: must be greater than zero",
        ),
        (
            graph("[[topology.hosts]]\nnode = \"s\"\nmemory = \"1KB\"\nmemroy = 1", &flow("")),
            "topology.hosts[0].memroy: unknown key",
        ),
    ];
    for (text, want) in cases {
        let got = error(&text);
        assert!(got.contains(want), "want {want:?}, got {got:?}\n{text}");
    }
}
