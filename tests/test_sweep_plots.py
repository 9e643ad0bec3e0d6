"""Sweep plots a reader can trust (issue 7, items 5, 10 and 11): the bottleneck by
default, one line per series, human units, honest intervals, every kind of sweep
directory; a quiet Dask shutdown; replications that cannot differ said so."""

import importlib
import json
import shutil
import warnings
from pathlib import Path

import cclab
import matplotlib
import polars as pl
import pytest
from cclab import plot
from conftest import EXAMPLES
from conftest import cclab as cli
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.text import Text

matplotlib.use("Agg")

RATE, RECOVERY = "topology.bottleneck.rate", "flows[0].recovery"
SHORT = cclab.load(EXAMPLES / "dumbbell.toml").with_(**{"run.duration": "3s", "run.warmup": "1s"})
GRID = {RECOVERY: ["newreno", "sack"], RATE: ["20Mbps", "50Mbps"]}
#: One flow from a to b over one link: a graph topology has no link with role "bottleneck".
GRAPH = """
[run]
duration = "2s"
[topology]
kind = "graph"
nodes = ["a", "b"]
[[topology.links]]
from = "a"
to = "b"
rate = "10Mbps"
delay = "5ms"
buffer = "50pkts"
[[flows]]
name = "f"
from = "a"
to = "b"
start = "0s..0.5s"
"""


@pytest.fixture(scope="module")
def three() -> cclab.SweepResult:
    return cclab.sweep(SHORT, grid=GRID, replications=3, progress=False)


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Written by `cclab sweep --out`: tables, runs/ and sweep.json."""
    folder = tmp_path_factory.mktemp("cli")
    (folder / "s.toml").write_text(SHORT.to_toml())
    out = folder / "sweep"
    proc = cli("sweep", str(folder / "s.toml"), "--grid", f"{RECOVERY}=newreno,sack", "--grid", f"{RATE}=20Mbps,50Mbps",
               "--replications", "2", "--out", str(out))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.fixture(scope="module")
def two(tmp_path_factory: pytest.TempPathFactory) -> cclab.SweepResult:
    """Written by the Python API: tables and runs/, no sweep.json."""
    out = tmp_path_factory.mktemp("py") / "sweep"
    return cclab.sweep(SHORT, grid=GRID, replications=2, out=out, progress=False)


def _texts(fig: Figure) -> list[str]:
    fig.canvas.draw()
    return [t.get_text() for t in fig.findobj(Text)]


def _series(fig: Figure) -> list[Line2D]:
    """The data line of each series (an errorbar container per series)."""
    return [c.lines[0] for c in fig.axes[0].containers]


def _bar_bottoms(fig: Figure) -> list[float]:
    """The lower ends of every error-bar segment drawn."""
    bottoms = []
    for c in fig.axes[0].containers:
        for collection in c.lines[2]:
            bottoms += [min(seg[0][1], seg[1][1]) for seg in collection.get_segments()]
    return bottoms


def _capture(monkeypatch: pytest.MonkeyPatch) -> list[Figure]:
    """Runs `cclab plot` in-process, keeping the figures it saves."""
    figures: list[Figure] = []
    save = plot.save

    def keep(fig: Figure, path: Path) -> list[Path]:
        figures.append(fig)
        return save(fig, path)

    monkeypatch.setattr(plot, "save", keep)
    return figures


# Item 5: which links, which flows.


def test_a_link_metric_is_read_from_the_bottleneck_by_default(written: Path, tmp_path: Path, monkeypatch) -> None:
    from cclab.cli import main

    figures = _capture(monkeypatch)
    args = ["plot", str(written), "--kind", "sweep", "--x", RATE, "--metric", "utilization"]
    assert main([*args, "--output", str(tmp_path / "util")]) == 0
    (fig,) = figures
    ax = fig.axes[0]
    plotted = sorted(y for line in _series(fig) for y in line.get_ydata())
    links = pl.read_parquet(written / "links.parquet").filter(pl.col("role") == "bottleneck")
    means = links.group_by([RECOVERY, RATE]).agg(pl.col("utilization").mean() * 100)["utilization"]
    assert plotted == pytest.approx(sorted(means.to_list())), "the access links are not added in"
    assert max(plotted) <= 100.0 + 1e-9
    assert "%" in ax.get_ylabel()
    assert "left->right" in ax.get_title()

    # --link and --role choose other links; the Python function takes the same arguments.
    assert main([*args, "--link", "right->left", "--output", str(tmp_path / "reverse")]) == 0
    assert "right->left" in figures[-1].axes[0].get_title()
    assert main([*args, "--role", "access", "--per-run", "mean", "--output", str(tmp_path / "access")]) == 0
    assert "mean over the 8 access links" in figures[-1].axes[0].get_title()
    from cclab.sweepdir import read_sweep

    fig = plot.sweep(read_sweep(written), x=RATE, metric="utilization", by=RECOVERY, role="bottleneck.reverse")
    assert "right->left" in fig.axes[0].get_title()


def test_a_graph_topology_asks_for_a_link_naming_them(tmp_path: Path) -> None:
    scenario = tmp_path / "graph.toml"
    scenario.write_text(GRAPH)
    out = tmp_path / "sw"
    proc = cli("sweep", str(scenario), "--grid", "flows[0].cc=reno", "--grid", "topology.links[0].rate=5Mbps,10Mbps",
               "--out", str(out))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    proc = cli("plot", str(out), "--kind", "sweep", "--x", "topology.links[0].rate", "--metric", "utilization")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert "--link" in proc.stderr and "a->b" in proc.stderr and "b->a" in proc.stderr
    proc = cli("plot", str(out), "--kind", "sweep", "--x", "topology.links[0].rate", "--metric", "utilization",
               "--link", "a->b")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    proc = cli("plot", str(out), "--kind", "sweep", "--metric", "utilization", "--link", "a->c")
    assert proc.returncode == 2 and "--link a->c: not a link" in proc.stderr


def test_an_aggregate_per_flow_draws_one_line_per_flow_and_series(three: cclab.SweepResult) -> None:
    # The docs/python.md example: a by-value has two flows per point.
    fig = plot.sweep(three.aggregate(), x=RATE, metric="goodput_bps", by=RECOVERY)
    lines = _series(fig)
    assert len(lines) == 2 * 2, "newreno and sack, each with bulk[0] and bulk[1]"
    for line in lines:
        xs = list(line.get_xdata())
        assert xs == sorted(set(xs)), "a line visits each x once, left to right"
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "newreno, bulk[0]" in labels and "sack, bulk[1]" in labels
    # A SweepResult: each flow its own series by default (issue 52), or the
    # flows of each run summed, one series per recovery.
    fig = plot.sweep(three, x=RATE, metric="goodput_bps", by=RECOVERY)
    assert len(_series(fig)) == 2 * 2
    assert (
        " ".join(fig.axes[0].get_title().split())
        == "Goodput (per flow) by bottleneck rate and loss recovery of flows[0]"
    )
    assert fig.axes[0].get_legend().get_title().get_text() == "loss recovery of flows[0], flow"
    fig = plot.sweep(three, x=RATE, metric="goodput_bps", by=RECOVERY, per_run="sum")
    assert len(_series(fig)) == 2
    assert "sum over the 2 flows" in fig.axes[0].get_title()


# Item 5: units, intervals, overlaps, categories.


def test_bit_rates_in_mbit_s_without_an_offset(three: cclab.SweepResult) -> None:
    fig = plot.sweep(three.aggregate(), x=RATE, metric="goodput_bps", by=RECOVERY)
    ax = fig.axes[0]
    _texts(fig)
    assert "Mbit/s" in ax.get_ylabel()
    assert ax.yaxis.get_offset_text().get_text() == "", "no 1e7 above the axis"
    assert max(y for line in _series(fig) for y in line.get_ydata()) < 1000
    # Two grid values with a unit are categories named in a display unit: a
    # line between two points would say nothing.
    assert [t.get_text() for t in ax.get_xticklabels()] == ["20 Mbit/s", "50 Mbit/s"]
    assert all(line.get_linestyle() == "None" for line in _series(fig))
    fig = plot.sweep(three, x=RATE, metric="rtt_mean_s", per_run="mean")
    assert fig.axes[0].get_ylabel() == "mean RTT (ms)"
    # Three or more are placed by value, in a unit the axis names.
    summary = pl.DataFrame({RATE: ["10Mbps", "20Mbps", "50Mbps"], "n": [3, 3, 3],
                            "goodput_bps_mean": [9e6, 18e6, 40e6], "goodput_bps_ci95": [1e6, 1e6, 2e6]})  # fmt: skip
    fig = plot.sweep(summary, x=RATE, metric="goodput_bps")
    assert fig.axes[0].get_xlabel() == "bottleneck rate (Mbit/s)"
    assert list(_series(fig)[0].get_xdata()) == [10.0, 20.0, 50.0]


def test_two_replications_draw_no_interval_and_say_so(two: cclab.SweepResult) -> None:
    fig = plot.sweep(two.aggregate(), x=RATE, metric="goodput_bps", by=RECOVERY)
    assert _bar_bottoms(fig) == []
    assert any("n = 2: no interval" in t for t in _texts(fig))


def test_intervals_of_a_non_negative_metric_stop_at_zero(three: cclab.SweepResult) -> None:
    # Wide intervals around small means: a symmetric t interval would reach below zero.
    summary = pl.DataFrame({"x": [1, 2, 3], "n": [3, 3, 3], "retransmits_mean": [1.0, 4.0, 2.0],
                            "retransmits_std": [2.0, 1.0, 3.0], "retransmits_ci95": [5.0, 2.0, 7.0]})  # fmt: skip
    fig = plot.sweep(summary, x="x", metric="retransmits")
    bottoms = _bar_bottoms(fig)
    assert len(bottoms) == 3 and min(bottoms) == 0.0 and sorted(bottoms)[-1] == 2.0
    assert any("clipped at 0" in t for t in _texts(fig))
    fig = plot.sweep(three.aggregate(), x=RATE, metric="goodput_bps", by=RECOVERY)
    assert _bar_bottoms(fig) and min(_bar_bottoms(fig)) >= 0
    assert any("n = 3" in t and "95 %" in t for t in _texts(fig))


def test_a_series_hidden_under_another_is_named_in_the_legend() -> None:
    summary = pl.DataFrame({"x": [1, 2, 1, 2, 1, 2], "v": ["a", "a", "b", "b", "c", "c"],
                            "m_mean": [5.0, 6.0, 5.0, 6.0, 4.0, 7.0], "m_ci95": [None] * 6})  # fmt: skip
    fig = plot.sweep(summary, x="x", metric="m", by="v")
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels == ["a", "b (identical to a)", "c"]
    markers = [line.get_marker() for line in _series(fig)]
    assert len(set(markers)) == 3, "every series has its own marker"


def test_a_categorical_x_is_drawn_as_points_at_its_categories(three: cclab.SweepResult) -> None:
    runs = three.flows.group_by([*GRID, "replication"], maintain_order=True).agg(pl.col("goodput_bps").sum())
    summary = importlib.import_module("cclab.sweep").aggregate(runs, list(GRID), ["goodput_bps"])
    fig = plot.sweep(summary, x=RECOVERY, metric="goodput_bps", by=RATE)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["newreno", "sack"]
    lines = _series(fig)
    assert len(lines) == 2
    assert all(line.get_linestyle() == "None" for line in lines), "no line joins categories"
    # Side by side at each category, so that equal values stay visible.
    assert list(lines[0].get_xdata()) != list(lines[1].get_xdata())


# Item 5: what `cclab plot` reads and writes.


def test_plot_reads_a_python_sweep_directory_and_an_older_runs_only_one(two: cclab.SweepResult, tmp_path: Path) -> None:
    assert two.out is not None and json.loads((two.out / "sweep.json").read_text())["complete"] is True
    proc = cli("plot", str(two.out), "--kind", "sweep", "--output", str(tmp_path / "py"))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "py.png").stat().st_size > 2000
    # Only runs/ (as an earlier cclab left an interrupted sweep): the grid comes from each run's meta.json.
    partial = tmp_path / "partial"
    shutil.copytree(two.out / "runs", partial / "runs")
    proc = cli("plot", str(partial), "--kind", "sweep", "--x", RATE)
    assert proc.returncode == 0, proc.stderr
    assert (partial / "plot-sweep.png").is_file()
    from cclab.sweepdir import read_sweep

    back = read_sweep(partial)
    assert back.grid == list(GRID) and back.replications == 2
    assert back.flows.sort(back.flows.columns).equals(two.flows.sort(two.flows.columns))


def test_plot_reads_every_sweep_of_a_reproduce_directory(tmp_path: Path) -> None:
    # The layout `cclab reproduce` writes: report.md, tables/, figures/ and the sweeps under cache/.
    out = tmp_path / "study"
    for folder in ("tables", "figures"):
        (out / folder).mkdir(parents=True)
    (out / "report.md").write_text("# report\n")
    cclab.sweep(SHORT, grid={RECOVERY: ["newreno", "sack"]}, replications=1, out=out / "cache" / "main",
                progress=False)  # fmt: skip
    cclab.sweep(SHORT, grid={RATE: ["20Mbps", "50Mbps"]}, replications=1, out=out / "cache" / "rates",
                progress=False)  # fmt: skip
    proc = cli("plot", str(out), "--kind", "sweep")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [str(out / "cache" / s / f"plot-sweep.{e}") for s in ("main", "rates")
                                   for e in ("png", "svg")]  # fmt: skip
    # --x picks the sweeps that vary it.
    proc = cli("plot", str(out), "--kind", "sweep", "--x", RATE, "--output", str(tmp_path / "rates"))
    assert proc.returncode == 0, proc.stderr
    proc = cli("plot", str(out), "--kind", "sweep", "--output", str(tmp_path / "both"))
    assert proc.returncode == 2 and "holds 2 sweeps" in proc.stderr
    proc = cli("plot", str(out / "tables"), "--kind", "sweep")
    assert proc.returncode == 2 and "no sweep here" in proc.stderr


def test_plot_output_keeps_its_dots_and_an_unwritable_one_is_one_line(written: Path, tmp_path: Path) -> None:
    proc = cli("plot", str(written), "--kind", "sweep", "--output", str(tmp_path / "rate.1.5Mbps"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [str(tmp_path / "rate.1.5Mbps.png"), str(tmp_path / "rate.1.5Mbps.svg")]
    fig = plot.cwnd(pl.DataFrame({"name": ["f"], "index": [0], "time_s": [0.0], "cwnd": [1]}))
    assert plot.save(fig, tmp_path / "b.png") == [tmp_path / "b.png", tmp_path / "b.svg"]
    proc = cli("plot", str(written), "--kind", "sweep", "--output", "/proc/forbidden/plot")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert "--output /proc/forbidden/plot: not writable" in proc.stderr


# Item 10.


def test_a_dask_sweep_shuts_down_quietly(tmp_path: Path) -> None:
    pytest.importorskip("dask.distributed")
    scenario = tmp_path / "s.toml"
    scenario.write_text(SHORT.to_toml())
    # More workers than cores: on a busy machine they outlive the nanny's 4 s
    # patience and lose their scheduler while winding down, which is what logged.
    proc = cli("sweep", str(scenario), "--grid", "flows[0].recovery=newreno,sack", "--replications", "2",
               "--executor", "dask", "--jobs", "16")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.splitlines()) < 3, proc.stderr


# Item 11.

FIXED = SHORT.with_(**{"flows[0].start": "0s"})


def test_replications_that_cannot_differ_are_said_to_be_identical(tmp_path: Path) -> None:
    scenario = tmp_path / "fixed.toml"
    scenario.write_text(FIXED.to_toml())
    proc = cli("sweep", str(scenario), "--grid", "flows[0].recovery=newreno,sack", "--replications", "3")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("identical") == 1, proc.stdout
    assert "nothing in the scenario is random" in proc.stdout
    assert "random start times" in proc.stdout and "random loss" in proc.stdout
    assert "Warning" not in proc.stderr

    with pytest.warns(cclab.IdenticalReplicationsWarning, match="random start times"):
        res = cclab.sweep(FIXED, grid={RECOVERY: ["newreno", "sack"]}, replications=3, progress=False)
    assert len(res.notes) == 1 and "3 replications at every grid point are identical" in res.notes[0]
    assert len(res.identical_points()) == 2
    # Random loss at one point only: the note names the other.
    with pytest.warns(cclab.IdenticalReplicationsWarning, match="at 1 of 2 grid points"):
        res = cclab.sweep(FIXED, grid={"topology.bottleneck.loss": [0.0, 0.01]}, replications=2, progress=False)
    assert res.identical_points() == [{"topology.bottleneck.loss": 0.0}]


def test_random_replications_carry_no_note(tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", cclab.IdenticalReplicationsWarning)
        res = cclab.sweep(SHORT, grid={RECOVERY: ["newreno", "sack"]}, replications=2, progress=False)
    assert res.notes == [] and res.identical_points() == []
    single = cclab.sweep(FIXED, replications=1, progress=False)
    assert single.notes == [], "one replication has nothing to compare"
    scenario = tmp_path / "s.toml"
    scenario.write_text(SHORT.to_toml())
    proc = cli("sweep", str(scenario), "--grid", "run.duration=2s", "--replications", "2")
    assert proc.returncode == 0, proc.stderr
    assert "identical" not in proc.stdout


def test_sweep_json_grid_is_used_when_present(tmp_path: Path) -> None:
    out = tmp_path / "sw"
    scenario = tmp_path / "s.toml"
    scenario.write_text(SHORT.to_toml())
    proc = cli("sweep", str(scenario), "--grid", "run.duration=2s,3s", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert json.loads((out / "sweep.json").read_text())["grid"] == ["run.duration"]
    from cclab.sweepdir import read_sweep

    assert read_sweep(out).grid == ["run.duration"]
