"""Plots of runs and sweeps with matplotlib, saved as PNG and SVG.

Every function takes a :class:`~cclab.result.Result` (or the matching polars
table) and returns the matplotlib Figure; :func:`save` writes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cclab.result import Result

if TYPE_CHECKING:
    import polars as pl
    from matplotlib.figure import Figure


def _figure(title: str, xlabel: str, ylabel: str) -> tuple[Figure, Any]:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.0, 4.2), layout="constrained")
    ax = fig.add_subplot()
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    return fig, ax


def _series(source: Result | pl.DataFrame) -> pl.DataFrame:
    frame = source.timeseries if isinstance(source, Result) else source
    if frame.height == 0:
        raise ValueError('no time series: set run.sample (e.g. sample = "100ms") in the scenario')
    return frame


def _label(name: str, index: int) -> str:
    return f"{name}[{index}]"


def _per_flow(frame: pl.DataFrame) -> list[tuple[str, pl.DataFrame]]:
    out = []
    for (name, index), group in frame.sort("time_s").group_by(["name", "index"], maintain_order=True):
        out.append((_label(str(name), int(index)), group))  # type: ignore[call-overload]
    return sorted(out, key=lambda item: item[0])


def goodput(source: Result | pl.DataFrame, title: str = "Goodput per flow") -> Figure:
    """Goodput between consecutive samples (in-order bytes delivered per second)."""
    import polars as pl

    fig, ax = _figure(title, "time (s)", "goodput (Mbit/s)")
    for label, g in _per_flow(_series(source)):
        rate = g.with_columns(
            (pl.col("bytes_delivered").diff() * 8 / pl.col("time_s").diff() / 1e6).alias("mbps")
        ).drop_nulls("mbps")
        ax.plot(rate["time_s"], rate["mbps"], label=label, linewidth=1)
    ax.legend(fontsize="small")
    return fig


def cwnd(source: Result | pl.DataFrame, title: str = "Congestion window") -> Figure:
    fig, ax = _figure(title, "time (s)", "cwnd (segments)")
    for label, g in _per_flow(_series(source)):
        ax.plot(g["time_s"], g["cwnd"], label=label, linewidth=1, drawstyle="steps-post")
    ax.legend(fontsize="small")
    return fig


def sequence(source: Result | pl.DataFrame, segment_bytes: int = 1000,
             title: str = "Sequence number") -> Figure:  # fmt: skip
    """Highest segment sent and highest cumulatively acknowledged, against time."""
    fig, ax = _figure(title, "time (s)", f"sequence number (segments of {segment_bytes} B)")
    for label, g in _per_flow(_series(source)):
        (line,) = ax.plot(g["time_s"], g["seq_sent"] / segment_bytes, label=f"{label} sent", linewidth=1)
        ax.plot(g["time_s"], g["seq_acked"] / segment_bytes, label=f"{label} acked", linewidth=1,
                linestyle="--", color=line.get_color())  # fmt: skip
    ax.legend(fontsize="small")
    return fig


def queue(source: Result | pl.DataFrame, links: Sequence[str] | None = None,
          title: str = "Queue length") -> Figure:  # fmt: skip
    """Waiting packets over time; by default the bottleneck links (or all non-access links)."""
    import polars as pl

    frame = source.queues if isinstance(source, Result) else source
    if frame.height == 0:
        raise ValueError('no time series: set run.sample (e.g. sample = "100ms") in the scenario')
    chosen = list(links) if links else [n for n in frame["link"].unique(maintain_order=True)
                                        if ".snd" not in n and ".rcv" not in n]  # fmt: skip
    fig, ax = _figure(title, "time (s)", "queue (packets)")
    for name in chosen:
        g = frame.filter(pl.col("link") == name).sort("time_s")
        ax.plot(g["time_s"], g["queue_pkts"], label=name, linewidth=1, drawstyle="steps-post")
    ax.legend(fontsize="small")
    return fig


def sweep(summary: pl.DataFrame, x: str, metric: str = "goodput_bps", by: str | None = None,
          scale: float = 1.0, ylabel: str | None = None, title: str | None = None) -> Figure:  # fmt: skip
    """A metric against a grid key with 95 % confidence bars, one line per value of ``by``.

    ``summary`` is an aggregate with ``{metric}_mean`` and ``{metric}_ci95`` columns
    (``SweepResult.aggregate``).
    """
    import polars as pl

    fig, ax = _figure(title or f"{metric} vs {x}", x, ylabel or metric)
    groups = [(None, summary)] if by is None else summary.group_by(by, maintain_order=True)
    xs = summary[x].unique(maintain_order=True).to_list()
    numeric = summary.schema[x].is_numeric()
    for key, g in groups:
        g = (
            g.sort(x)
            if numeric
            else g.with_columns(pl.col(x).replace_strict(xs, list(range(len(xs)))).alias("_pos")).sort("_pos")
        )
        xv = g[x] if numeric else g["_pos"]
        label = None if key is None else str(key[0] if isinstance(key, tuple) else key)
        ax.errorbar(xv, g[f"{metric}_mean"] * scale, yerr=g[f"{metric}_ci95"].fill_null(0) * scale,
                    marker="o", capsize=3, label=label)  # fmt: skip
    if not numeric:
        ax.set_xticks(range(len(xs)), [str(v) for v in xs])
    if by is not None:
        ax.legend(title=by, fontsize="small")
    return fig


def save(fig: Figure, path: str | Path) -> list[Path]:
    """Writes ``path`` with a .png and a .svg suffix; returns both paths.

    The same figure gives the same bytes every time (no date, fixed SVG ids), so
    a regenerated study leaves its committed figures unchanged.
    """
    import matplotlib

    stem = Path(path).with_suffix("")
    stem.parent.mkdir(parents=True, exist_ok=True)
    written = []
    for suffix in (".png", ".svg"):
        target = stem.with_suffix(suffix)
        # SVG ids hash with a random salt and SVG metadata carries the date unless told otherwise.
        with matplotlib.rc_context({"svg.hashsalt": "cclab"}):
            fig.savefig(target, dpi=130, metadata={"Date": None} if suffix == ".svg" else None)
        written.append(target)
    return written
