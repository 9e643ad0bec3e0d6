"""The tcptrace-style time-sequence graph and the panels view (issue 8, item 4):
what the figure draws is checked against the trace table it is drawn from, and
the trace's counts against the simulator's own counters."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cclab
import matplotlib
import polars as pl
import pytest
from cclab import plot
from cclab.result import Result
from conftest import EXAMPLES
from conftest import cclab as cli

matplotlib.use("Agg")

#: examples/trace.toml traced over the whole run and sampled, so that the trace's
#: counts can be compared with the flow's and links' totals.
WHOLE = (EXAMPLES / "trace.toml").read_text().replace('from = "1s"\nto = "1.5s"\n', "")
WHOLE = WHOLE.replace("seed = 1\n", 'seed = 1\nsample = "10ms"\n')


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> Result:
    path = tmp_path_factory.mktemp("tseq") / "whole.toml"
    path.write_text(WHOLE)
    return cclab.run(path)


def marks(fig: Any) -> dict[str, list[Any]]:
    """The figure's artists by gid."""
    (ax,) = fig.axes
    found: dict[str, list[Any]] = {}
    for artist in [*ax.collections, *ax.lines]:
        if artist.get_gid():
            found.setdefault(artist.get_gid(), []).append(artist)
    return found


def expected(trace: pl.DataFrame, start: float, end: float) -> dict[str, Any]:
    """What the graph of flow 0 in [start, end] must show, computed from the table row by row."""
    sender = trace.filter(pl.col("kind") == "data")["src"][0]
    sent, retx, seen = 0, 0, set()
    for row in trace.filter((pl.col("kind") == "data") & (pl.col("event") == "enqueue")).iter_rows(named=True):
        if row["node"] != sender or row["time_s"] > end:
            continue
        again = row["seq"] in seen  # a retransmission: this seq was sent before
        seen.add(row["seq"])
        if row["time_s"] >= start:
            sent += 1
            retx += again
    inside = trace.filter((pl.col("time_s") >= start) & (pl.col("time_s") <= end))
    acks = inside.filter((pl.col("kind") == "ack") & (pl.col("event") == "deliver") & (pl.col("node") == sender))
    return {
        "sent": sent,
        "retx": retx,
        "drops": inside.filter(pl.col("event") == "drop").height,
        "last_ack": acks["ack"].max(),
        "sack_blocks": int(acks["sack_left"].list.len().sum()),
    }


def test_whole_run_trace_agrees_with_the_flow_and_link_counters(whole: Result) -> None:
    want = expected(whole.trace, 0.0, 2.0)
    flow = whole.flows.row(0, named=True)
    assert want["sent"] == flow["packets_sent"] and want["retx"] == flow["retransmits"] > 0
    links = whole.links
    assert want["drops"] == int(links["drops"].sum() + links["losses"].sum()) > 0


@pytest.mark.parametrize("window", [(None, None), (1.05, 1.25), (0.3, 0.9)])
def test_time_sequence_draws_what_the_trace_holds(whole: Result, window: tuple[float | None, float | None]) -> None:
    fig = plot.time_sequence(whole, "bulk[0]", *window)
    times = whole.trace["time_s"]
    start, end = window[0] if window[0] is not None else times.min(), window[1] or times.max()
    want = expected(whole.trace, start, end)  # type: ignore[arg-type]
    got = marks(fig)
    (sent,), (retx,), (ack,), (sack,) = got["sent"], got["retransmitted"], got["ack"], got["sack"]
    assert len(sent.get_segments()) + len(retx.get_segments()) == want["sent"]
    assert len(retx.get_segments()) == want["retx"]
    assert sum(len(d.get_xdata()) for d in got.get("drop", [])) == want["drops"]
    assert len(sack.get_segments()) == want["sack_blocks"]
    ys = list(ack.get_ydata())
    assert all(a <= b for a, b in zip(ys, ys[1:], strict=False))
    assert ys[-1] == want["last_ack"] / 1000
    xs = [x for s in sent.get_segments() for x, _ in s]
    assert all(start <= x <= end for x in xs)
    # A bar spans one segment: seq to seq + len, in segments of 1000 B.
    assert all(round(s[1][1] - s[0][1], 9) == 1 for s in sent.get_segments())
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert f"retransmitted ({want['retx']})" in labels


def test_the_example_window_has_a_random_loss_repaired_by_sack() -> None:
    res = cclab.run(EXAMPLES / "trace.toml")
    got = marks(plot.time_sequence(res))
    assert [d.get_label() for d in got["drop"]] == ["dropped: random loss at left->right (1)"]
    assert len(got["retransmitted"][0].get_segments()) == 1 and len(got["sack"][0].get_segments()) > 0


def test_time_sequence_errors_name_the_argument(whole: Result) -> None:
    with pytest.raises(plot.PlotError, match=r"bulc: not a flow here \(flows: bulk\[0\]\)") as e:
        plot.time_sequence(whole, "bulc")
    assert e.value.option == "flow"
    with pytest.raises(plot.PlotError, match="not after the start"):
        plot.time_sequence(whole, 0, 1.5, 1.0)
    with pytest.raises(plot.PlotError, match=r"no packet trace: add a \[\[trace\]\] section"):
        plot.time_sequence(whole.trace.clear())


def test_panels_stack_what_the_run_recorded(whole: Result) -> None:
    fig = plot.panels(whole, "bulk", 1.0, 1.5)
    assert [ax.get_ylabel().split(" (")[0] for ax in fig.axes] == ["cwnd", "queue", "throughput"]
    assert all(ax.get_xlim() == (1.0, 1.5) for ax in fig.axes)  # one shared time axis
    # Throughput: the payload delivered in each 10 ms bar adds up to the payload delivered in the window.
    (line,) = fig.axes[2].lines
    delivered = whole.trace.filter(
        (pl.col("event") == "deliver") & (pl.col("kind") == "data") & pl.col("time_s").is_between(1.0, 1.5)
    )["len"].sum()
    assert sum(line.get_ydata()) * 1e6 / 8 * 0.01 == pytest.approx(delivered)


def test_panels_leave_out_what_is_absent() -> None:
    fig = plot.panels(cclab.run(EXAMPLES / "trace.toml"))
    assert len(fig.axes) == 1 and "no cwnd (set run.sample)" in fig.get_suptitle()


def test_cli_plot_tseq(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert cli("run", str(EXAMPLES / "trace.toml"), "--out", str(out)).returncode == 0
    proc = cli("plot", str(out), "--kind", "tseq", "--flow", "bulk[0]", "--from", "1.05", "--to", "1250ms")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [str(out / "plot-tseq.png"), str(out / "plot-tseq.svg")]
    assert (out / "plot-tseq.png").stat().st_size > 10_000 and (out / "plot-tseq.svg").stat().st_size > 10_000
    proc = cli("plot", str(out), "--kind", "panels", "--output", str(tmp_path / "p"))
    assert proc.returncode == 0 and (tmp_path / "p.png").is_file(), proc.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--flow", "bulc"), "cclab: error: --flow bulc: not a flow here (flows: bulk[0])"),
        (("--from", "1.4", "--to", "1.2"), "cclab: error: --to 1.2 s: not after the start (1.4 s)"),
    ],
)
def test_cli_plot_tseq_errors(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    out = tmp_path / "run"
    assert cli("run", str(EXAMPLES / "trace.toml"), "--out", str(out)).returncode == 0
    proc = cli("plot", str(out), "--kind", "tseq", *args)
    assert proc.returncode == 2 and proc.stderr.strip() == message


def test_cli_plot_tseq_without_a_trace(tmp_path: Path) -> None:
    out, scenario = tmp_path / "run", tmp_path / "untraced.toml"
    scenario.write_text((EXAMPLES / "trace.toml").read_text().split("[[trace]]")[0])
    assert cli("run", str(scenario), "--out", str(out)).returncode == 0
    assert not (out / "trace.parquet").exists()
    proc = cli("plot", str(out), "--kind", "tseq")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "no trace.parquet here" in proc.stderr and "[[trace]]" in proc.stderr


def test_time_sequence_picks_one_of_several_flows(tmp_path: Path) -> None:
    path = tmp_path / "two.toml"
    path.write_text(WHOLE.replace('name = "bulk"\n', 'name = "bulk"\ncount = 2\nstart = "0s..0.2s"\n'))
    res = cclab.run(path)
    with pytest.raises(plot.PlotError, match=r"is needed: 2 flows here \(bulk\[0\], bulk\[1\]\)"):
        plot.time_sequence(res)
    with pytest.raises(plot.PlotError, match=r"bulk: 2 instances of this group; name one"):
        plot.time_sequence(res, "bulk")
    for row in res.flows.iter_rows(named=True):
        got = marks(plot.time_sequence(res, f"bulk[{row['index']}]"))
        sent = len(got["sent"][0].get_segments()) + len(got["retransmitted"][0].get_segments())
        assert (sent, len(got["retransmitted"][0].get_segments())) == (row["packets_sent"], row["retransmits"])
        # The same flow by id, from the bare trace table with the flows table for names.
        by_id = marks(plot.time_sequence(res.trace, row["flow_id"], flows=res.flows))
        assert len(by_id["sent"][0].get_segments()) == len(got["sent"][0].get_segments())
