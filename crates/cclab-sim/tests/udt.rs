//! UDT flows (`protocol = "udt"`) in scenarios: native UDT fills a clean
//! 1 Gbit/s, 100 ms path within 10 s; transfers arrive whole under loss with
//! every congestion control; UDT-only and TCP-only keys are refused by name.

use cclab_sim::{parse, run_toml};
use common::{finish, simulation};

use crate::common;

/// A 1 Gbit/s dumbbell with 100 ms RTT and a one-BDP buffer; one UDT flow.
fn long_fat_path(flow_keys: &str, seconds: u32, warmup: u32) -> String {
    format!(
        r#"
[run]
duration = "{seconds}s"
warmup = "{warmup}s"
[topology]
kind = "dumbbell"
access = {{ rate = "10Gbps" }}
[topology.bottleneck]
rate = "1Gbps"
delay = "40ms"
buffer = "1bdp"
[[flows]]
name = "u"
protocol = "udt"
rtt = "100ms"
{flow_keys}
"#
    )
}

/// The issue's bar: at least 90 % of the link within 10 s. UDT's flow window
/// must cover the BDP (8333 packets) plus the up-to-SYN staleness of its
/// right edge, so the flow uses UDT_FC's 25 600 packets as receive and send
/// buffers; with 4.11's defaults of 8192 packets it cannot (below).
#[test]
fn native_udt_uses_90_percent_of_a_clean_1_gbit_100_ms_path_within_10_s() {
    let text = long_fat_path("receive_buffer = 25600\nsend_buffer = 25600", 10, 9);
    let r = run_toml(&text, "t", Some(1)).unwrap_or_else(|e| panic!("{e}"));
    let f = &r.flows[0];
    // Goodput counts payload (1456 of every 1500 bytes on the wire).
    let utilisation = f.goodput_bps * 1500.0 / 1456.0 / 1e9;
    assert!(utilisation >= 0.90, "link use in 9-10 s: {utilisation:.3}");
    assert_eq!(f.cc.as_deref(), Some("udt"));
}

/// 4.11's default buffers of 8192 packets, under the 8333-packet BDP plus a
/// SYN of staleness, cannot fill the same path (measured: 0.826 of the link),
/// and raising the receive buffer alone leaves the send buffer in the way (0.895).
#[test]
fn udt_4_11_default_buffers_cannot_fill_a_1_gbit_100_ms_path() {
    for keys in ["", "receive_buffer = 25600"] {
        let r = run_toml(&long_fat_path(keys, 10, 9), "t", Some(1)).unwrap_or_else(|e| panic!("{e}"));
        let utilisation = r.flows[0].goodput_bps * 1500.0 / 1456.0 / 1e9;
        assert!((0.75..0.9).contains(&utilisation), "{keys:?}: link use in 9-10 s {utilisation:.3}");
    }
}

#[test]
fn transfers_arrive_whole_under_loss_with_every_udt_congestion_control() {
    for cc in ["udt", "udt_rtt_banded", "udt_prediction", "udt_combined"] {
        for seed in 1..=3u64 {
            let size = 3_000_000u64 + 77;
            let text = format!(
                r#"
[run]
duration = "60s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "20Mbps"
delay = "10ms"
buffer = "50pkts"
loss = 0.03
reverse_loss = 0.01
[[flows]]
count = 2
protocol = "udt"
cc = "{cc}"
rtt = "40ms"
start = "0s..1s"
app = {{ kind = "transfer", size = "{size}B" }}
"#
            );
            let mut sim = simulation(&text, seed);
            let r = finish(&mut sim);
            for f in &r.flows {
                assert!(f.completion_s.is_some(), "{cc} seed {seed}: {f:?}");
            }
            for f in &sim.flows {
                let receiver = f.receiver.and_then(|id| sim.engine.endpoint(id)).expect("receiver");
                assert_eq!(receiver.counters().bytes_delivered, size, "{cc} seed {seed}");
            }
        }
    }
}

#[test]
fn udt_flows_refuse_tcp_keys_and_tcp_congestion_controls_by_name() {
    let base = |keys: &str| long_fat_path(keys, 10, 0);
    let err = |keys: &str| parse(&base(keys), "t").err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err("recovery = \"sack\"").contains("flows[0].recovery: only applies to protocol tcp, not udt"));
    let e = err("cc = \"reno\"");
    assert!(e.contains("flows[0].cc") && e.contains("udt_rtt_banded"), "{e}");
    let e = err("cc = \"udt\"\ncc_params = { alpha = 4.0, window = \"prediction\" }");
    assert!(e.contains("flows[0].cc_params.alpha") && e.contains("beta"), "{e}");
    let e = err("mss = 40");
    assert!(e.contains("flows[0].mss"), "{e}");
    let e = err("receive_buffer = 0");
    assert!(e.contains("flows[0].receive_buffer"), "{e}");
    let e = err("send_buffer = 100000000");
    assert!(e.contains("flows[0].send_buffer: 100000000 is out of range [32, 16777216]"), "{e}");
    let e = err("send_buffer = \"big\"");
    assert!(e.contains("flows[0].send_buffer: expected a whole number"), "{e}");
    let e = err("cc_params = { alhpa = 1.0 }");
    assert!(e.contains("flows[0].cc_params") && e.contains("alpha"), "{e}");
    let e = err("app = { kind = \"arrivals\", rate = \"5/s\", size = \"10KB\" }");
    assert!(e.contains("arrivals runs over protocol tcp, not udt (use one of bulk, transfer)"), "{e}");
    let e = err("stop = \"5s\"");
    assert!(e.contains("flows[0].stop: only applies to protocol udp; a UDT flow ends"), "{e}");
    let udp = base("")
        .replace("protocol = \"udt\"", "protocol = \"udp\"\napp = { kind = \"cbr\", rate = \"1Mbps\" }");
    let e = parse(&(udp + "receive_buffer = 100\n"), "t").err().map(|e| e.to_string()).unwrap_or_default();
    assert!(e.contains("flows[0].receive_buffer: only applies to protocol tcp or udt, not udp"), "{e}");
}

#[test]
fn same_seed_same_run_other_seed_other_run() {
    let text = r#"
[run]
duration = "5s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "50Mbps"
delay = "10ms"
buffer = "1bdp"
loss = 0.001
[[flows]]
count = 2
protocol = "udt"
rtt = "30ms..60ms"
"#;
    let run = |seed| {
        let r = run_toml(text, "t", Some(seed)).unwrap_or_else(|e| panic!("{e}"));
        r.flows.iter().map(|f| f.bytes_delivered).collect::<Vec<_>>()
    };
    assert_eq!(run(1), run(1));
    assert_ne!(run(1), run(2));
}
