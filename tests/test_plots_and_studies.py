"""Plots, the sweep and plot commands, and the first study."""

import json
import shutil
from pathlib import Path

import cclab
import matplotlib
import polars as pl
import pytest
from cclab import plot
from conftest import EXAMPLES, ctrl_c_as_on_a_terminal, seed_study_cache
from conftest import cclab as cli

matplotlib.use("Agg")

SAMPLED = cclab.load(EXAMPLES / "dumbbell.toml").with_(**{"run.duration": "3s", "run.warmup": 0, "run.sample": "100ms"})


def _nonempty(paths: list[Path]) -> None:
    assert [p.suffix for p in paths] == [".png", ".svg"]
    for p in paths:
        assert p.stat().st_size > 2000, p


def test_run_plots_are_written(tmp_path: Path) -> None:
    res = cclab.run(SAMPLED, seed=1)
    for name, fig in {
        "goodput": plot.goodput(res),
        "cwnd": plot.cwnd(res),
        "seq": plot.sequence(res),
        "queue": plot.queue(res),
    }.items():
        _nonempty(plot.save(fig, tmp_path / name))


def test_plot_without_time_series_explains_how_to_get_one() -> None:
    res = cclab.run(SAMPLED.with_(**{"run.sample": "3s"}).to_dict() | {"run": {"duration": "1s"}})
    with pytest.raises(ValueError, match="run.sample"):
        plot.cwnd(res)


def test_sweep_plot_has_one_line_per_value_of_by(tmp_path: Path) -> None:
    res = cclab.sweep(SAMPLED, grid={"flows[0].recovery": ["newreno", "sack"],
                                     "topology.bottleneck.rate": ["20Mbps", "40Mbps"]},
                      replications=2, progress=False)  # fmt: skip
    per_run = res.flows.group_by(["flows[0].recovery", "topology.bottleneck.rate", "replication"]).agg(
        pl.col("goodput_bps").sum()
    )
    summary = cclab.sweep.__module__ and __import__("cclab.sweep", fromlist=["aggregate"]).aggregate(
        per_run, ["flows[0].recovery", "topology.bottleneck.rate"], ["goodput_bps"]
    )
    fig = plot.sweep(summary, "topology.bottleneck.rate", "goodput_bps", by="flows[0].recovery")
    assert len(fig.axes[0].containers) == 2
    # The legend names both, then says why there are no bars (two replications).
    texts = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert sorted(texts[:2]) == ["newreno", "sack"] and texts[2:] == ["n = 2: no interval"]
    _nonempty(plot.save(fig, tmp_path / "sweep"))


def test_run_out_then_plot_commands(tmp_path: Path) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(SAMPLED.to_toml())
    out = tmp_path / "run"
    assert cli("run", str(scenario), "--out", str(out)).returncode == 0
    for name in (
        "summary.json",
        "config.json",
        "flows.parquet",
        "links.parquet",
        "timeseries.parquet",
        "metrics.parquet",
    ):
        assert (out / name).is_file(), name
    assert pl.read_parquet(out / "timeseries.parquet").height > 0
    assert pl.read_parquet(out / "metrics.parquet").filter(pl.col("metric") == "cwnd").height > 0
    for kind in ("goodput", "cwnd", "seq", "queue"):
        proc = cli("plot", str(out), "--kind", kind)
        assert proc.returncode == 0, proc.stderr
        _nonempty([Path(line) for line in proc.stdout.split()])


def test_sweep_command_writes_a_dataset_and_plots(tmp_path: Path) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(SAMPLED.to_toml())
    out = tmp_path / "sw"
    proc = cli("sweep", str(scenario), "--grid", "flows[0].recovery=newreno,sack",
               "--grid", "flows[0].count=1,2", "--replications", "2", "--out", str(out))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "goodput Mb/s" in proc.stdout
    flows = pl.read_parquet(out / "flows.parquet")
    assert flows.schema["flows[0].count"] == pl.Int64, "grid values are parsed as TOML literals"
    assert flows.height == 2 * (1 + 2) * 2
    assert json.loads((out / "sweep.json").read_text())["grid"] == ["flows[0].recovery", "flows[0].count"]
    proc = cli("plot", str(out), "--kind", "sweep", "--x", "flows[0].count")
    assert proc.returncode == 0, proc.stderr
    _nonempty([Path(line) for line in proc.stdout.split()])


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("--grid", "topology.bottleneck.rte=1Mbps"), 'did you mean "rate"?'),
        (("--grid", "flows[0].count=two"), "flows[0].count"),
        (("--grid", "nonsense"), "write KEY=V1,V2"),
        (("--executor", "tcp://127.0.0.1:9"), "cannot reach tcp://127.0.0.1:9"),
        (("--executor", "carrier-pigeon"), "unknown executor"),
        (("--out", "/proc/forbidden"), "--out /proc/forbidden: not writable"),
    ],
)
def test_sweep_command_errors(tmp_path: Path, args: tuple[str, ...], fragment: str) -> None:
    proc = cli("sweep", str(EXAMPLES / "dumbbell.toml"), *args)
    assert proc.returncode == 2, proc
    assert fragment in proc.stderr
    assert "Traceback" not in proc.stderr


def test_reproduce_errors() -> None:
    proc = cli("reproduce", "recvoery")
    assert proc.returncode == 2 and 'did you mean "recovery"?' in proc.stderr
    proc = cli("reproduce", "recovery", "--quick", "--out", "/proc/forbidden")
    assert proc.returncode == 2 and "not writable" in proc.stderr


def reproduce_quick(
    tmp_path: Path, study: str, headings: tuple[str, ...], seed_from: pytest.Config | None = None
) -> tuple[Path, str]:
    """Runs `cclab reproduce STUDY --quick`; checks the report's headings and that every figure it links exists.
    With ``seed_from`` (a simulated study), it starts from the session's quick run cache (tests/conftest.py)."""
    out = tmp_path / study
    if seed_from is not None:
        seed_study_cache(seed_from, study, out)
    proc = cli("reproduce", study, "--quick", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    report = (out / "report.md").read_text()
    for heading in headings:
        assert heading in report, heading
    for link in (line.split("](")[1].rstrip(")") for line in report.splitlines() if line.startswith("![")):
        assert (out / link).is_file(), link
    return out, report


@pytest.mark.long
def test_reproduce_recovery_quick(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    out, report = reproduce_quick(
        tmp_path,
        "recovery",
        ("Setup and reconstruction", "Fig. 6", "Fig. 7", "Fig. 8", "Table 3", "differ"),
        seed_from=request.config,
    )
    for table in ("summary", "runs", "per_flow"):
        assert (out / "tables" / f"{table}.csv").is_file()
    figures = sorted((out / "figures").glob("*.png"))
    assert len(figures) >= 7
    for fig in figures:
        assert fig.stat().st_size > 2000
    summary = pl.read_csv(out / "tables" / "summary.csv")
    assert summary.height == 4 * 2
    # Figs. 9-11 are time-sequence graphs of one loss episode each, from a packet trace.
    for number, variant in ((9, "newreno"), (10, "sack"), ("10b", "sack1"), (11, "tahoe")):
        assert (out / "figures" / f"fig{number}_{variant}_time_sequence.png").is_file()
    episodes = pl.read_csv(out / "tables" / "loss_episodes.csv")
    assert episodes["recovery"].to_list() == ["newreno", "sack", "sack1", "tahoe"]
    assert (episodes["drops"] >= 1).all() and (episodes["retransmissions"] >= 1).all()
    assert (episodes["first_drop_s"] >= 2.0).all()
    assert (episodes["recovered_after_s"] > episodes["retransmitted_after_s"]).all()
    # Six flows share the bottleneck: every variant keeps it busy.
    assert summary["util_mean"].min() > 0.9
    # `cclab plot` finds the study's sweeps (under cache/) and plots each where it lies.
    proc = cli("plot", str(out), "--kind", "sweep")
    assert proc.returncode == 0, proc.stderr
    sweeps = ["equal_link_speeds", "large_buffer", "main", "trace_counts"]
    assert sorted({Path(p).parent.name for p in proc.stdout.split()}) == sweeps
    # The trace counts are of the main sweep's runs (the study checks it), one row per run.
    counted = pl.read_csv(out / "tables" / "trace_counts.csv")
    assert counted.height == pl.read_csv(out / "tables" / "runs.csv").height
    assert (counted["trace_ack_packets"] <= counted["trace_data_packets"]).all()
    assert (counted["multi_loss_episodes"] <= counted["loss_episodes"]).all()
    for heading in ("Verdicts", "Counted from a packet trace", "How often one seeded run", "Why Tahoe falls behind"):
        assert heading in report, heading


@pytest.mark.long
def test_reproduce_pacing_quick(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    out, report = reproduce_quick(
        tmp_path,
        "pacing",
        ("Setup and reconstruction", "Table 2", "Fig. 4", "Fig. 5", "Phase effects"),
        seed_from=request.config,
    )
    table2 = pl.read_csv(out / "tables" / "table2.csv")
    assert table2.height == 8 * 2  # eight variants at the quick plan's two speeds
    assert table2["efficiency_pct_mean"].min() > 80
    # The kinds' shares and the overhead and idle parts make up the whole link.
    fig5 = pl.read_csv(out / "tables" / "fig5_runs.csv")
    parts = ["high-speed", "long-lived TCP", "small TCP", "web", "overhead", "unused"]
    total = fig5.select(pl.sum_horizontal(parts)).to_series()
    assert ((total - 1).abs() < 1e-9).all(), total
    # Every variant has Fig. 4's ratio at both RTTs and both buffers, and with the send overhead.
    fig4 = pl.read_csv(out / "tables" / "fig4.csv")
    assert fig4.height == 8 * (2 * 2 + 2)
    assert (fig4["ratio_of_means"] > 0).all()


@pytest.mark.long
def test_reproduce_wireless_quick(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    out, report = reproduce_quick(
        tmp_path,
        "wireless",
        ("Setup and reconstruction", "Fig. 1", "Fig. 4", "Fig. 5", "Fig. 6", "Fig. 7", "claims"),
        seed_from=request.config,
    )
    fig6 = pl.read_csv(out / "tables" / "fig6.csv")
    assert fig6.height == 9 * 3  # nine variants at the quick plan's three loss rates
    # Ten flows share 5 Mbit/s: no variant's mean exceeds a tenth of the link by much.
    assert fig6["goodput_mbps_mean"].max() < 0.6
    # Without loss, Reno fills the link; at 10 % it nearly stops.
    reno = {r["loss"]: r["goodput_mbps_mean"] for r in fig6.filter(pl.col("variant") == "reno").iter_rows(named=True)}
    assert reno[0.0] > 0.45 and reno[0.1] < 0.2
    error = pl.read_csv(out / "tables" / "abe_error.csv")
    assert sorted(error["estimator"].unique().to_list()) == ["bbr", "decoupled", "jersey", "westwood", "westwood_plus"]
    assert (error["mape_pct_mean"] >= 0).all()
    fig7 = pl.read_csv(out / "tables" / "fig7.csv")
    assert fig7.height == 9 * 2 and (fig7["ratio_mean"] > 0).all()
    # Every estimator's ten flows are summed; each sum is a positive rate.
    sums = pl.read_csv(out / "tables" / "estimate_sum_runs.csv")
    assert (sums["flows"] == 10).all() and (sums["sum_mbps"] > 0).all()
    assert "How Decoupled TCP gets its throughput" in report


@pytest.mark.long
def test_reproduce_buffers_quick(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    headings = ("Setup and reconstruction", "Fig. 3", "Fig. 4", "Extension")
    out, report = reproduce_quick(tmp_path, "buffers", headings, seed_from=request.config)
    fig3 = {r["policy"] + "/" + r["receive_window"]: r for r in pl.read_csv(out / "tables" / "fig3.csv").to_dicts()}
    rtba, small = fig3["RTBA/64 KB"], fig3["fixed 2920B/64 KB"]
    # Two 1460-byte segments per round trip of about 1.27 ms (1 ms of propagation, transmission and queueing).
    assert 16 < small["throughput_mbps"] < 19.5
    # RTBA fills the 50 Mbit/s link up to its headers (1460 of 1500 bytes).
    assert rtba["throughput_mbps"] > 0.95 * 50 * 1460 / 1500
    assert rtba["buffer_mean_kb"] < fig3["fixed 320KB/64 KB"]["buffer_mean_kb"]
    # Growing cwnd on every ACK inflates the 2 x cwnd buffers by more than an order of magnitude.
    assert fig3["RTBA, cwnd grows on every ACK/64 KB"]["buffer_mean_kb"] > 10 * rtba["buffer_mean_kb"]
    fig4 = pl.read_csv(out / "tables" / "fig4_runs.csv")
    capped = fig4.filter(pl.col("cap") == "128KB")
    # Under the cap the two allocations never sum above it, and they end equal.
    assert ((capped["flow1_kb"] + capped["flow2_kb"]) <= 128.0 + 1e-6).all()
    assert capped["converge_s"].is_not_null().all()
    ext = pl.read_csv(out / "tables" / "extension_runs.csv")
    assert ext.height == 2 * 3  # the quick plan's 8 and 32 flows, three policies, one replication
    # A connection can hold more than its allocation right after the host cuts it (what is in
    # flight stays until acknowledged); a sample goes before the host's reallocation at the
    # same instant, so each sample finds the connection a sampling period (many RTTs) after the cut.
    assert (ext["allocated_kb"] <= 512.0 + 1e-6).all() and (ext["used_kb"] <= ext["allocated_kb"] + 1e-6).all()
    assert ((ext["jain"] > 0) & (ext["jain"] <= 1)).all()
    assert "Where we differ from the paper" in report
    # The cause runs: without a cap no buffer binds, so every variant carries the same flows; RTBA's
    # allocation is its 2 x cwnd term, so ATBT with its band closed to 2 x cwnd swings as RTBA does.
    cause = {r["variant"]: r for r in pl.read_csv(out / "tables" / "fig4_cause.csv").to_dicts()}
    assert len(cause) == 7 and len({round(r["flow1_mbps_mean"], 9) for r in cause.values()}) == 1
    rtba, closed = cause["RTBA, w = 0.125 (default)"], cause["ATBT, band 2-2 x cwnd (no band)"]
    assert rtba["flow1_cwnd_term"] > 0.9
    assert closed["flow1_cv_mean"] == pytest.approx(rtba["flow1_cv_mean"], abs=0.01)
    assert cause["ATBT, band 2-4 x cwnd (default)"]["flow1_cv_mean"] < rtba["flow1_cv_mean"]
    assert report.index("## Verdicts") < report.index("## Setup and reconstruction")


@pytest.mark.alone  # its bounds on real goodput assume no other test's load
def test_reproduce_buffers_real_quick(tmp_path: Path) -> None:
    out, report = reproduce_quick(
        tmp_path,
        "buffers-real",
        ("Setup", "The machine during the real runs", "Fig. 3", "Fig. 4", "Several connections"),
    )
    fig3 = {r["policy"]: r for r in pl.read_csv(out / "tables" / "fig3.csv").to_dicts()}
    # A buffer big enough for the path takes the rate's time, real as simulated; two segments per round
    # trip take longer over the real path, whose round trip the machine lengthens (loose bounds: CI's machine).
    assert 0.7 < fig3["RTBA"]["ratio"] < 1.5
    assert 0.7 < fig3["fixed 2 segments (lwIP)"]["ratio"] < 3.0
    for table in ("fig4", "several"):
        for row in pl.read_csv(out / "tables" / f"{table}.csv").to_dicts():
            # The real host never gives out more than its 128 KB cap, and its connections carry the link.
            assert row["real_max_sum_kb"] <= 128.0 + 1e-6, row
            assert 0.5 * row["sim_goodput_mbps"] < row["real_goodput_mbps"] < 1.1 * 20, row
    allocations = pl.read_csv(out / "tables" / "real_allocations.csv")
    assert allocations["connection"].n_unique() == 3  # the quick plan's several connections all got a share
    records = list((out / "cache" / "real").glob("*.json"))
    assert len(records) == 2 + 1 + 1  # Fig. 3's two policies, Fig. 4's RTBA, the several connections


@pytest.mark.long
def test_reproduce_udt_quick_and_again_from_its_cache(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    out, report = reproduce_quick(
        tmp_path,
        "udt",
        ("Setup and reconstruction", "Fig. 4", "Fig. 5", "Figs. 9-13", "Fig. 10", "Discussion"),
        seed_from=request.config,
    )
    factors = pl.read_csv(out / "tables" / "factors.csv")
    assert factors.height == 2 * 2 * 2  # two loss rates, the quick plan's two RTTs and two factors
    # A gentler decrease never loses to UDT's 1.125 at 0.01 % loss (random loss is not congestion).
    gentle = factors.filter((pl.col("loss") == 1e-4) & (pl.col("factor") == 1.120))
    assert (gentle["gain_mbps_mean"] >= 0).all(), gentle
    testbed = pl.read_csv(out / "tables" / "testbed.csv")
    assert testbed.filter(pl.col("variant") == "native")["gain_mbps_mean"].to_list() == [0.0, 0.0, 0.0]
    assert testbed["goodput_mbps_mean"].max() < 1000  # a 1 Gbit/s link
    decisions = pl.read_csv(out / "tables" / "prediction_decisions.csv")
    assert (decisions["decreases"] + decisions["keeps"] + decisions["increases"] > 0).all()
    # Issue 47's runs: the forced branches, the banded decrease resolved, the competing flows.
    for heading in ("Verdicts", "Where the prediction's gain comes from", "Where the prediction acts",
                    "The banded decrease at 25 and 200 ms, resolved"):  # fmt: skip
        assert f"## {heading}" in report, heading
    assert report.index("## Verdicts") < report.index("## Setup and reconstruction")
    forced = pl.read_csv(out / "tables" / "forced_branches.csv")
    assert forced["variant"].to_list() == ["native", "prediction-1.5-3.5", "prediction-always-increase",
                                           "prediction-always-decrease"]  # fmt: skip
    competing = pl.read_csv(out / "tables" / "competing_runs.csv")
    assert competing.height == 3 * 3  # native, prediction and forced increase at three RTTs, one replication
    prediction = competing.filter(pl.col("variant") == "prediction-1.5-3.5")
    assert (prediction["decreases"] + prediction["keeps"] + prediction["increases"] > 0).all()
    assert competing.filter(pl.col("variant") == "native")["keeps"].null_count() == 3

    # --from-cache renders the same report from the cached runs, and runs nothing.
    again = tmp_path / "again"
    shutil.copytree(out / "cache", again / "cache")
    proc = cli("reproduce", "udt", "--quick", "--out", str(again), "--from-cache")
    assert proc.returncode == 0, proc.stderr
    assert (again / "report.md").read_text() == report.replace(str(out), str(again))
    for table in ("factors", "testbed", "prediction_decisions", "forced_branches", "competing", "banded_resolve"):
        assert pl.read_csv(again / "tables" / f"{table}.csv").equals(pl.read_csv(out / "tables" / f"{table}.csv"))
    # A run missing from the cache is an error naming the sweep, not a run of this simulator.
    # (One of this plan's runs: the cache the test started from also holds the second replication's.)
    planned = json.loads((again / "cache" / "fig5" / "sweep.json").read_text())["runs"]
    shutil.rmtree(again / "cache" / "fig5" / "runs" / planned[0])
    proc = cli("reproduce", "udt", "--quick", "--out", str(again), "--from-cache")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"cclab: error: --from-cache: 1 of 4 runs under {again / 'cache' / 'fig5'} are not in the cache of build "
        + proc.stderr.split("cache of build ")[1].split(";")[0]
        + "; run the study without --from-cache to make them"
    ]
    proc = cli("reproduce", "udt", "--quick", "--out", str(tmp_path / "empty"), "--from-cache")
    assert proc.returncode == 2 and "holds no cached runs" in proc.stderr


@pytest.mark.alone  # its bounds on real goodput assume no other test's load
def test_reproduce_udt_real_quick_resumes_and_renders_from_its_cache(tmp_path: Path) -> None:
    # Real transfers from `cclab send` to `cclab recv` through `cclab emulate` on loopback, beside the simulator.
    out, report = reproduce_quick(
        tmp_path, "udt-real", ("Setup", "The machine during the real runs", "Goodput, real and simulated", "Gains",
                               "What happened in the runs", "Discussion")
    )  # fmt: skip
    table = pl.read_csv(out / "tables" / "comparison.csv")
    assert table["variant"].to_list() == ["native", "combined"]  # the quick plan: two variants at RTT 25 ms
    assert (table["real_goodput_mbps_mean"] > 0).all()
    # Loose on purpose: the real runs share the machine with whatever else runs (CI's other tests); a
    # broken path, pacing or goodput count is off by far more. On a quiet machine the ratio is 0.8-1.1.
    assert ((table["ratio_mean"] > 0.3) & (table["ratio_mean"] < 3)).all(), table
    assert table.filter(pl.col("variant") == "native")["real_gain_mbps_mean"].to_list() == [0.0]
    runs = pl.read_csv(out / "tables" / "real_runs.csv")
    assert runs.height == 2 and (runs["packets_sent"] > 0).all() and (runs["late_p99_us"] > 0).all()
    # The emulator's queue drops UDT's slow-start overshoot, as the simulated link's does.
    assert (runs["queue_drops"] > 0).all()
    diagnostics = pl.read_csv(out / "tables" / "diagnostics.csv")
    assert (diagnostics["sim_queue_drops"] > 0).all()
    cached = sorted((out / "cache" / "real").glob("*.json"))
    assert [p.name for p in cached] == ["combined-rtt25ms-r0.json", "native-rtt25ms-r0.json"]

    # --from-cache renders the same report from the cached real and simulated runs, and runs nothing.
    again = tmp_path / "again"
    shutil.copytree(out / "cache", again / "cache")
    proc = cli("reproduce", "udt-real", "--quick", "--out", str(again), "--from-cache")
    assert proc.returncode == 0, proc.stderr
    assert (again / "report.md").read_text() == report.replace(str(out), str(again))
    # A real run missing from the cache is one line and exit 2, not a real run.
    (again / "cache" / "real" / "native-rtt25ms-r0.json").unlink()
    proc = cli("reproduce", "udt-real", "--quick", "--out", str(again), "--from-cache")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"cclab: error: --from-cache: 1 of 2 real runs under {again / 'cache' / 'real'} are not in the cache; "
        "run the study without --from-cache to make them"
    ]


def test_reproduce_udt_real_stops_at_ctrl_c_and_resumes(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "udt-real"
    args = [sys.executable, "-m", "cclab", "reproduce", "udt-real", "--quick", "--replications", "2", "--out", str(out)]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=ctrl_c_as_on_a_terminal)  # fmt: skip
    real = out / "cache" / "real"
    deadline = time.monotonic() + 120
    while not list(real.glob("*.json")) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    first = sorted(real.glob("*.json"))
    assert first, "no real run finished"
    kept = {p.name: p.read_bytes() for p in first}
    time.sleep(1.5)  # into the next real run's test
    interrupted = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=30)
    assert time.monotonic() - interrupted < 5, "Ctrl-C did not stop the real runs promptly"
    assert proc.returncode == 130, stderr
    assert "interrupted with" in stderr and "Traceback" not in stderr, stderr
    # What finished is kept whole; nothing half-written is left.
    assert {p.name: p.read_bytes() for p in sorted(real.glob("*.json")) if p.name in kept} == kept
    assert not list(real.glob(".*"))
    # The same command resumes: the finished runs are taken from the cache, the rest run.
    proc2 = cli("reproduce", "udt-real", "--quick", "--replications", "2", "--out", str(out))
    assert proc2.returncode == 0, proc2.stderr
    assert len(list(real.glob("*.json"))) == 4
    assert all((real / name).read_bytes() == data for name, data in kept.items())


def test_udt_replications_needed_matches_the_t_test_power_rule() -> None:
    from cclab.studies.udt import replications_needed

    # Mean 1, sd sqrt(10/9) = 1.054: (t(0.975, n - 1) + 0.8416) x 1.054 / sqrt(n) <= 1 first holds at
    # n = 11 ((2.228 + 0.842) x 1.054 / 3.317 = 0.975), not at n = 10 ((2.262 + 0.842) x 1.054 / 3.162 = 1.035).
    diffs = [0.0, 2.0] * 5
    assert replications_needed(diffs) == 11
    assert replications_needed([x / 2 for x in diffs]) == 11  # the ratio of mean to sd decides
    # Half the difference at the same spread needs about four times the pairs; the sign does not matter.
    assert replications_needed([x - 0.5 for x in diffs]) == replications_needed([0.5 - x for x in diffs]) == 37
    assert replications_needed([1.0, 1.0, 1.0]) is None  # no spread
    assert replications_needed([-1.0, 1.0]) is None  # no difference
    assert replications_needed([3.0]) is None


def test_udt_decision_counts_take_each_flows_last_count() -> None:
    from cclab.studies.udt import decision_counts

    rows = [(t, f, m, v) for f, scale in ((0, 1), (1, 10)) for t in (1.0, 2.0)
            for m, v in (("cc.window_decreases", 1 * t), ("cc.window_keeps", 2 * t), ("cc.window_increases", 5 * t))
            for v in [v * scale]]  # fmt: skip
    rows.append((0.5, 0, "cc.n_diff", 99.0))
    metrics = pl.DataFrame(rows, schema=["time_s", "flow_id", "metric", "value"], orient="row")
    assert decision_counts(metrics) == {"decreases": 2 + 20, "keeps": 4 + 40, "increases": 10 + 100}
