"""The platform as a Python user meets it: UDP cross traffic, traffic sources
with a completion-time table, the algorithm registry, pacing."""

import json

import cclab
import polars as pl
from cclab.result import transfer_schema
from conftest import EXAMPLES
from conftest import cclab as run_cli

UDP_CROSS = EXAMPLES / "udp-cross.toml"
ARRIVALS = EXAMPLES / "arrivals.toml"


def test_udp_cross_traffic_takes_its_rate_and_tcp_the_rest() -> None:
    res = cclab.run(UDP_CROSS)
    flows = {r["name"]: r for r in res.flows.iter_rows(named=True)}
    udp, tcp = flows["cross"], flows["tcp"]
    assert udp["protocol"] == "udp" and udp["app"] == "cbr" and udp["cc"] is None
    # 40 Mbit/s of 1000-byte packets on the wire; losses only when the shared queue overflows.
    assert 0.97 * 40e6 <= udp["throughput_bps"] <= 40.01e6
    assert udp["packets_lost"] <= 0.03 * udp["packets_sent"]
    bottleneck = res.links.filter(pl.col("role") == "bottleneck").row(0, named=True)
    # TCP fills what is left of the 100 Mbit/s (wire rate: throughput, not goodput).
    assert bottleneck["utilization"] >= 0.97
    assert 0.55 * 100e6 <= tcp["throughput_bps"] <= 0.61 * 100e6
    assert res.transfers.height == 0 and res.transfers.schema == pl.Schema(transfer_schema())


def test_arrivals_write_a_completion_time_table_with_the_documented_schema(tmp_path) -> None:
    res = cclab.run(cclab.load(ARRIVALS).with_(**{"run.duration": "8s", "run.warmup": "2s"}))
    table = res.transfers
    assert table.schema == pl.Schema(transfer_schema())
    # 50 arrivals per second for 8 s: Poisson(400), so within 4 sd (80).
    assert 320 <= table.height <= 480
    done = table.filter(pl.col("completion_s").is_not_null())
    assert done.height >= 0.9 * table.height
    assert (done["delivered_bytes"] == done["size_bytes"]).all()
    # A transfer cannot finish faster than one base RTT (40 ms).
    assert done["completion_s"].min() >= 0.04
    assert res.connections["closed"] == done.height
    assert res.connections["peak"] < table.height
    # One row in the flows table for the whole source.
    web = res.flows.filter(pl.col("name") == "web")
    assert web.height == 1 and web["app"][0] == "arrivals"

    proc = run_cli("run", str(ARRIVALS), "--out", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    assert "transfers:" in proc.stdout and "completed" in proc.stdout
    written = pl.read_parquet(tmp_path / "out" / "transfers.parquet")
    assert written.schema == pl.Schema(transfer_schema()) and written.height > 1000


def test_algorithms_lists_every_role_with_typed_parameters() -> None:
    proc = run_cli("algorithms", "--json")
    assert proc.returncode == 0, proc.stderr
    algos = json.loads(proc.stdout)
    roles = {a["role"] for a in algos}
    assert {"protocol", "cc", "recovery", "pacing", "queue", "app"} <= roles
    for a in algos:
        assert a["source"], a["name"]
        for p in a["parameters"]:
            assert p["required"] or p["default"] is not None or p["type"], (a["name"], p["name"])
    arrivals = next(a for a in algos if a["name"] == "arrivals")
    assert {p["name"] for p in arrivals["parameters"]} == {"rate", "size"}
    assert all(p["required"] for p in arrivals["parameters"])
    text = run_cli("algorithms").stdout
    assert "pacing: pacing = NAME" in text and "linux" in text and "ss_ratio" in text


def test_pacing_is_a_flow_key_reported_in_the_results() -> None:
    scn = cclab.load(EXAMPLES / "dumbbell.toml").with_(
        **{"flows[0].pacing": "rtt", "run.duration": "5s", "run.warmup": "1s"}
    )
    res = cclab.run(scn)
    assert set(res.flows["pacing"]) == {"rtt"}
    assert res.flows["goodput_bps"].sum() > 50e6


def test_bad_platform_input_is_one_line_naming_the_key(tmp_path) -> None:
    cases = {
        'protocol = "quic"': 'flows[0].protocol: unknown protocol "quic"',
        'app = { kind = "arrivals", rate = "0/s", size = "10KB" }': "flows[0].app.rate:",
        'app = { kind = "arrivals", rate = "5/s", size = "pareto(mean=-1KB, shape=1.2)" }': "flows[0].app.size:",
        'pacing = "linux"\npacing_params = { ss_ratio = 0 }': "flows[0].pacing_params.ss_ratio:",
        'app = { kind = "cbr", rate = "1Mbps" }': "flows[0].app.kind: cbr runs over protocol udp",
    }
    base = (
        '[run]\nduration = "5s"\n[topology]\nkind = "dumbbell"\n'
        '[topology.bottleneck]\nrate = "10Mbps"\ndelay = "10ms"\n'
        '[[flows]]\nrtt = "40ms"\n'
    )
    for line, expected in cases.items():
        path = tmp_path / "bad.toml"
        path.write_text(base + line + "\n")
        proc = run_cli("validate", str(path))
        assert proc.returncode == 2, (line, proc.stdout)
        assert expected in proc.stderr, (line, proc.stderr)
        assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
