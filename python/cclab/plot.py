"""Plots of runs and sweeps with matplotlib, saved as PNG and SVG.

The run plots take a :class:`~cclab.result.Result` (or the matching polars
table), :func:`sweep` a :class:`~cclab.sweep.SweepResult` or an aggregate of
one; each returns the matplotlib Figure, and :func:`save` writes it.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cclab import _core
from cclab.result import Result

if TYPE_CHECKING:
    import polars as pl
    from matplotlib.figure import Figure

    from cclab.sweep import SweepResult


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
    chosen = list(links) if links else _bottleneck_links(frame)
    fig, ax = _figure(title, "time (s)", "queue (packets)")
    for name in chosen:
        g = frame.filter(pl.col("link") == name).sort("time_s")
        ax.plot(g["time_s"], g["queue_pkts"], label=name, linewidth=1, drawstyle="steps-post")
    ax.legend(fontsize="small")
    return fig


def delay(source: Result | pl.DataFrame, links: Sequence[str] | None = None,
          title: str = "Queueing delay") -> Figure:  # fmt: skip
    """Each link's ``queue.sojourn_ms`` over time (observed with ``[[observe]]``), and,
    where it was observed too, the link's rate on a second axis (a trace's or a
    schedule's capacity)."""
    import polars as pl

    frame = source.metrics if isinstance(source, Result) else source
    observed = frame.filter((pl.col("kind") == "link") & (pl.col("metric") == "queue.sojourn_ms"))
    if observed.height == 0:
        raise ValueError('no queue delay series: observe the link\'s "queue.sojourn_ms" '
                         "(an [[observe]] section, see docs/scenario.md)")  # fmt: skip
    names = list(links) if links else observed["component"].unique(maintain_order=True).to_list()
    fig, ax = _figure(title, "time (s)", "sojourn time (ms)")
    rates = frame.filter((pl.col("kind") == "link") & (pl.col("metric") == "rate_bps"))
    twin = ax.twinx() if rates.height else None
    for name in names:
        g = observed.filter(pl.col("component") == name).sort("time_s")
        (line,) = ax.plot(g["time_s"], g["value"], label=f"{name} sojourn", linewidth=1)
        r = rates.filter(pl.col("component") == name).sort("time_s")
        if twin is not None and r.height:
            twin.plot(r["time_s"], r["value"] / 1e6, label=f"{name} rate", linewidth=0.8, alpha=0.45,
                      color=line.get_color(), linestyle="--", drawstyle="steps-post")  # fmt: skip
    handles, labels = ax.get_legend_handles_labels()
    if twin is not None:
        twin.set_ylabel("link rate (Mbit/s)")
        twin.set_ylim(bottom=0)
        more = twin.get_legend_handles_labels()
        handles, labels = handles + more[0], labels + more[1]
    ax.set_ylim(bottom=0)
    ax.legend(handles, labels, fontsize="small", loc="upper right")
    return fig


def _bottleneck_links(frame: pl.DataFrame, links: pl.DataFrame | None = None) -> list[str]:
    """The links whose queue matters: role ``bottleneck`` when the links table says roles,
    else every link that is not a host's access link."""
    if links is not None and "role" in links.columns:
        chosen = [str(n) for n, r in zip(links["name"], links["role"], strict=True) if r == "bottleneck"]
        if chosen:
            return chosen
    return [n for n in frame["link"].unique(maintain_order=True) if ".snd" not in n and ".rcv" not in n]


class PlotError(ValueError):
    """A figure cannot be drawn from these arguments.

    ``option`` is the argument at fault (``metric``, ``link``, ...): the command
    line reports it as ``--option``, Python as the keyword."""

    def __init__(self, option: str, detail: str) -> None:
        super().__init__(f"{option}{detail}")
        self.option, self.detail = option, detail


#: Fewest replications for which a sweep plot draws a 95 % interval. With two the
#: t quantile is 12.7: the bar mostly shows how little two runs say, and easily
#: reaches below zero; the plot says "n = 2: no interval" instead.
MIN_INTERVAL_N = 3
#: One marker and line style per series, so that series stay apart in grey scale
#: and where one lies on top of another.
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
LINESTYLES = ("-", "--", "-.", ":")
#: Suffixes of the statistics columns of an aggregate; every other column names a row.
_STATS = ("_mean", "_std", "_ci95")

#: Display units per kind, largest first: the first whose factor the largest value reaches.
_DISPLAY = {
    "rate": ((1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "kbit/s"), (1, "bit/s")),
    "duration": ((1, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")),
    "size": ((1e9, "GB"), (1e6, "MB"), (1e3, "KB"), (1, "B")),
    "packets": ((1, "packets"),),
    "bdp": ((1, "BDP"),),
}


#: How a result column reads in a title or on an axis.
_COLUMN_WORDS = {
    "goodput_bps": "goodput",
    "throughput_bps": "throughput",
    "ack_throughput_bps": "ACK throughput",
    "rtt_mean_s": "mean RTT",
    "rtt_min_s": "smallest RTT",
    "retransmits": "retransmissions",
    "timeouts": "retransmission timeouts",
    "recoveries": "loss recoveries",
    "bytes_delivered": "bytes delivered",
    "utilization": "utilisation",
    "drops": "drops",
    "early_drops": "AQM drops",
    "marks": "ECN marks",
    "losses": "random losses",
    "queue_mean_pkts": "mean queue",
    "queue_max_pkts": "largest queue",
    "queue_delay_mean_s": "mean queueing delay",
    "completion_s": "completion time",
}
#: How the last part of a scenario key path reads.
_KEY_WORDS = {
    "rate": "rate",
    "delay": "delay",
    "buffer": "buffer",
    "queue": "queue discipline",
    "loss": "loss rate",
    "reverse_loss": "reverse loss rate",
    "recovery": "loss recovery",
    "cc": "congestion control",
    "pacing": "pacing",
    "rtt": "RTT",
    "count": "flows",
    "mss": "MSS",
}


def words(name: str) -> str:
    """A result column or a scenario key path as a reader says it: `goodput_bps` is
    "goodput", `topology.bottleneck.rate` "bottleneck rate", `flows[0].recovery`
    "loss recovery of flows[0]"; anything else as it is."""
    if name in _COLUMN_WORDS:
        return _COLUMN_WORDS[name]
    parts = name.split(".")
    if len(parts) < 2:
        return name
    leaf = _KEY_WORDS.get(parts[-1], parts[-1].replace("_", " "))
    if parts[0] == "topology":
        return " ".join([*parts[1:-1], leaf])
    if parts[0].startswith("flows"):
        return f"{leaf} of {'.'.join(parts[:-1])}"
    return f"{leaf} ({'.'.join(parts[:-1])})"


def value_unit(metric: str, values: Iterable[float | None]) -> tuple[float, str]:
    """Scale and unit to show a result column in, from its name and the size of its values:
    bit/s in Mbit/s (Gbit/s from 1 Gbit/s), seconds in ms below 1 s, utilisation
    in %, anything else (counts, packets) as it is."""
    peak = max((abs(v) for v in values if v is not None and math.isfinite(v)), default=0.0)
    if metric.endswith("_bps"):
        return (1e-9, "Gbit/s") if peak >= 1e9 else (1e-6, "Mbit/s")
    if metric.endswith("_s"):
        return (1e3, "ms") if peak < 1 else (1.0, "s")
    if metric == "utilization":
        return (100.0, "%")
    return (1.0, "")


def quantity(text: Any) -> tuple[float, str] | None:
    """A value written with a unit ("20Mbps", "10ms", "1bdp") as its number in the base
    unit (bit/s, s, B, /s, packets, BDP) and its kind ("rate", "duration", ...), or None.
    The simulator's own parser reads it, so a grid value means here what it means to a run."""
    if not isinstance(text, str):
        return None
    try:
        value, kind = _core.quantity(text)
    except ValueError:
        return None
    return value, kind


def quantities(values: Sequence[Any]) -> tuple[list[float], str] | None:
    """Grid values written with a unit as numbers in one display unit, or None unless
    every value is a quantity of the same kind, one with display units."""
    kind, base = None, []
    for value in values:
        parsed = quantity(value)
        if parsed is None or parsed[1] not in _DISPLAY or kind not in (None, parsed[1]):
            return None
        kind = parsed[1]
        base.append(parsed[0])
    if kind is None:
        return None
    peak = max(base)
    factor, unit = next(((f, u) for f, u in _DISPLAY[kind] if peak >= f), _DISPLAY[kind][-1])
    return [b / factor for b in base], unit


def _flow_label(name: Any, index: Any) -> str:
    return f"{name}[{index}]"


def sweep_summary(result: SweepResult, x: str, metric: str = "goodput_bps", by: str | None = None, *,
                  link: str | None = None, role: str | None = None,
                  per_run: str = "flow") -> tuple[pl.DataFrame, str]:  # fmt: skip
    """The aggregate a sweep plot draws, and a phrase saying what it is.

    Each flow's value (``per_run="flow"``, a series per flow), or each run's
    ``metric`` summed (``per_run="sum"``) or averaged over the run's flows (a
    flow column), or over the chosen links (a link column, summed unless
    ``"mean"``:
    ``link`` by name, else ``role``, else the link with role ``bottleneck``);
    then mean, n and 95 % interval across replications per grid point (and
    value of ``by``). A column that is both (``throughput_bps``) is the flows'
    unless ``link`` or ``role`` is given."""
    import polars as pl

    from cclab.sweep import aggregate

    if x not in result.grid:
        raise PlotError("x", f" {x}: not a grid key of this sweep (grid keys: {', '.join(result.grid) or 'none'})")
    if per_run not in ("flow", "sum", "mean"):
        raise PlotError("per_run", f" {per_run!r}: use flow, sum or mean")
    flows, links = result.flows, result.links
    on_links = link is not None or role is not None or (metric not in flows.columns and metric in links.columns)
    table = links if on_links else flows
    if metric not in table.columns or not table.schema[metric].is_numeric():
        skip = {*result.grid, "replication", "seed"}
        numeric = sorted({c for t in (flows, links) for c in t.columns if t.schema[c].is_numeric() and c not in skip})
        raise PlotError("metric", f" {metric}: not a numeric flow or link column (choose from {', '.join(numeric)})")
    if by is not None and by not in table.columns:
        raise PlotError("by", f" {by}: not a column of the {'links' if on_links else 'flows'} table")
    flow_keys: list[str] = []
    if on_links:
        combine_links = "sum" if per_run == "flow" else per_run
        table, what = _choose_links(table, metric, link, role, combine_links)
        per_run = combine_links
    elif per_run == "flow":
        # Each flow (name and index) its own series, its value in each run as it is.
        flow_keys = ["name", "index"]
        counts = table.group_by("run").len()["len"]
        what = "" if counts.max() == 1 else "per flow"
    else:
        counts = table.group_by("run").len()["len"]
        n = str(counts.max()) if counts.min() == counts.max() else "varying number of"
        what = "" if counts.max() == 1 else f"{per_run} over the {n} flows of each run"
        if by is not None and by not in result.grid:
            what = f"{per_run} per {by} in each run"
    keys = list(dict.fromkeys([*result.grid, *([by] if by else []), *flow_keys, "replication"]))
    combine = pl.col(metric).sum() if per_run == "sum" else pl.col(metric).mean()
    runs = table.group_by(keys, maintain_order=True).agg(combine)
    return aggregate(runs, [k for k in keys if k != "replication"], [metric]), what


def _choose_links(links: pl.DataFrame, metric: str, link: str | None, role: str | None,
                  per_run: str) -> tuple[pl.DataFrame, str]:  # fmt: skip
    """The links a link metric is read from: by name, by role, or the bottleneck."""
    import polars as pl

    names = links["name"].unique(maintain_order=True).to_list()
    roles = links["role"].unique(maintain_order=True).to_list() if "role" in links.columns else []
    if link is not None:
        if link not in names:
            raise PlotError("link", f" {link}: not a link of this sweep (links: {', '.join(names)})")
        chosen = links.filter(pl.col("name") == link)
        return chosen, f"link {link}"
    if role is None:
        if "bottleneck" not in roles:
            raise PlotError("link", f" is needed: {metric} is a link column and no link has the role bottleneck "
                                    f"here (a graph topology?); name one of {', '.join(names)}")  # fmt: skip
        role = "bottleneck"
    if role not in roles:
        raise PlotError("role", f" {role}: no link has this role (roles: {', '.join(roles)})")
    chosen = links.filter(pl.col("role") == role)
    members = chosen["name"].unique(maintain_order=True).to_list()
    if len(members) == 1:
        return chosen, f"link {members[0]}, the {role}"
    return chosen, f"{per_run} over the {len(members)} {role} links"


def sweep(data: SweepResult | pl.DataFrame, x: str, metric: str = "goodput_bps", by: str | None = None,
          scale: float | None = None, ylabel: str | None = None, title: str | None = None, *,
          link: str | None = None, role: str | None = None, per_run: str = "flow",
          nonnegative: bool | None = None) -> Figure:  # fmt: skip
    """A metric against a grid key: one line (one marker and style) per series,
    95 % confidence bars where there are at least three replications.

    ``data`` is a :class:`~cclab.sweep.SweepResult` (each flow its own series,
    or with ``per_run`` each run's flows summed or averaged, a link column read
    from the bottleneck unless
    ``link`` or ``role`` says otherwise: see :func:`sweep_summary`) or an
    aggregate with ``{metric}_mean``, ``{metric}_ci95`` and ``n`` columns
    (``SweepResult.aggregate``). Every combination of the other columns that
    vary (``by``, other grid keys, a flow's ``name`` and ``index``) is its own
    series, so lines never jump between flows. bit/s are shown in Mbit/s
    (Gbit/s when large) and seconds in ms unless ``scale`` is given; grid values
    with a unit ("20Mbps") are placed by value when there are three or more
    (two points joined by a line say nothing a line can), other values as
    categories. Titles and axes name columns and keys in words (:func:`words`).
    Intervals of a non-negative metric (``nonnegative``; by default, when no
    mean is negative) are clipped at 0."""
    from cclab.sweep import SweepResult

    what = None
    if isinstance(data, SweepResult):
        summary, what = sweep_summary(data, x, metric, by, link=link, role=role, per_run=per_run)
    else:
        summary = _filter_links(data, metric, link, role)
    mean_col, ci_col, std_col = f"{metric}_mean", f"{metric}_ci95", f"{metric}_std"
    if mean_col not in summary.columns:
        have = sorted(c.removesuffix("_mean") for c in summary.columns if c.endswith("_mean"))
        raise PlotError("metric", f" {metric}: no column {mean_col} in this table (metrics: {', '.join(have)})")
    if x not in summary.columns:
        raise PlotError("x", f" {x}: not a column of this table")
    ident = [c for c in summary.columns if c not in (x, "n") and not c.endswith(_STATS)]
    if by is not None and by not in ident:
        raise PlotError("by", f" {by}: not a column of this table (columns: {', '.join(ident)})")
    keys = list(dict.fromkeys([*([by] if by else []), *(c for c in ident if summary[c].n_unique() > 1)]))
    if "index" in keys and "name" in ident and "name" not in keys:
        # A flow is name[index]: an index alone ("0", "1") does not say which flow.
        keys.insert(keys.index("index"), "name")
    if summary.select([*keys, x]).is_duplicated().any():
        raise PlotError("x", f" {x}: several rows per point and series; aggregate the table first")

    xs = summary[x].unique(maintain_order=True).to_list()
    xkind, positions, xunit = _x_axis(summary.schema[x], xs)
    means = summary[mean_col].to_list()
    cis = summary[ci_col].to_list() if ci_col in summary.columns else [None] * len(means)
    if scale is None:
        scale, unit = value_unit(metric, [m + (c or 0) for m, c in zip(means, cis, strict=True) if m is not None])
    else:
        unit = ""
    if nonnegative is None:
        nonnegative = all(m is None or m >= 0 for m in means)

    xlabel = f"{words(x)} ({xunit})" if xunit else words(x)
    # Wrapped: a grid key and what was summed easily outgrow the figure's width.
    against = f"{words(x)} and {words(by)}" if by and by != x and by not in ("name", "index") else words(x)
    said = f"{words(metric)}{f' ({what})' if what else ''} by {against}"
    heading = textwrap.fill(title or said[:1].upper() + said[1:], width=64)
    fig, ax = _figure(heading, xlabel, ylabel or (f"{words(metric)} ({unit})" if unit else words(metric)))
    groups: list[tuple[tuple[Any, ...], pl.DataFrame]] = (
        [((), summary)] if not keys else list(summary.group_by(keys, maintain_order=True))
    )
    intervals = Intervals(nonnegative)
    series = []
    for i, (key, g) in enumerate(groups):
        rows = sorted(g.iter_rows(named=True), key=lambda r: positions[xs.index(r[x])])
        px = [positions[xs.index(r[x])] for r in rows]
        if xkind == "category" and len(groups) > 1:
            # Side by side at each category, so that equal values do not hide each other.
            step = min(0.6 / len(groups), 0.15)
            px = [p + (i - (len(groups) - 1) / 2) * step for p in px]
        py = [r[mean_col] * scale if r[mean_col] is not None else math.nan for r in rows]
        yerr = intervals.bars(py, [r.get(ci_col) for r in rows], [r.get("n") for r in rows],
                              [r.get(std_col) for r in rows], scale)  # fmt: skip
        series.append((_series_label(keys, key), px, py, yerr))
    finite = [y for _, _, py, _ in series for y in py if math.isfinite(y)]
    # Closer than half a percent of the axis: one line covers the other at any print size.
    near = 0.005 * ((max(finite) - min(finite)) if finite else 0.0)
    for i, (label, px, py, yerr) in enumerate(series):
        hidden_by = None
        for other, ox, oy, _ in series[:i]:
            if ox == px and len(oy) == len(py):
                gaps = [abs(a - b) for a, b in zip(py, oy, strict=True) if math.isfinite(a) and math.isfinite(b)]
                if gaps and max(gaps) == 0:
                    hidden_by = f"identical to {other}"
                    break
                if gaps and max(gaps) <= near:
                    hidden_by = f"overlaps {other}"
        style: dict[str, Any] = {
            "marker": MARKERS[i % len(MARKERS)],
            "linestyle": "none" if xkind == "category" else LINESTYLES[i % len(LINESTYLES)],
            "capsize": 3,
            "label": label if hidden_by is None else f"{label} ({hidden_by})",
        }
        if hidden_by is not None:
            # Drawn over an earlier series: hollow and larger, so that both stay visible.
            style.update(fillstyle="none", markersize=11, markeredgewidth=1.5)
        ax.errorbar(px, py, yerr=yerr, **style)

    if xkind == "category":
        parsed = quantities(xs)
        labels = [f"{v:g} {parsed[1]}" for v in parsed[0]] if parsed else [str(v) for v in xs]
        ax.set_xticks(range(len(xs)), labels)
        ax.set_xlim(-0.5, len(xs) - 0.5)
    else:
        ordered = sorted(set(positions))
        if ordered[0] > 0 and ordered[-1] / ordered[0] >= 20:
            # Sweeps often span decades (1, 10, 100 Mbit/s): linear spacing would pile up the low end.
            ax.set_xscale("log")
        ax.set_xticks(ordered, [f"{p:g}" for p in ordered])
        ax.minorticks_off()
    ax.ticklabel_format(axis="y", useOffset=False)
    if nonnegative:
        # From zero: a difference between two series reads at its true proportion.
        ax.set_ylim(bottom=0)

    _legend(ax, keys, by, intervals.notes(), len(series))
    return fig


def _x_axis(dtype: Any, xs: list[Any]) -> tuple[str, list[float], str]:
    """How the x values are placed: by number, by quantity in a display unit, or as categories."""
    import polars as pl

    if dtype.is_numeric() and dtype != pl.Boolean:
        return "number", [float(v) for v in xs], ""
    parsed = quantities(xs)
    if parsed is not None and len(set(parsed[0])) >= 3:
        return "number", parsed[0], parsed[1]
    return "category", [float(i) for i in range(len(xs))], ""


def _filter_links(summary: pl.DataFrame, metric: str, link: str | None, role: str | None) -> pl.DataFrame:
    """An aggregate of links: the chosen link or role, by default the bottleneck if the table says roles."""
    import polars as pl

    if link is not None:
        if "name" not in summary.columns:
            raise PlotError("link", f" {link}: this table has no link names")
        names = summary["name"].unique(maintain_order=True).to_list()
        if link not in names:
            raise PlotError("link", f" {link}: not a link of this table (links: {', '.join(map(str, names))})")
        return summary.filter(pl.col("name") == link)
    if "role" not in summary.columns:
        if role is not None:
            raise PlotError("role", f" {role}: this table has no role column (aggregate by name and role)")
        return summary
    roles = summary["role"].unique(maintain_order=True).to_list()
    if role is None:
        if "bottleneck" not in roles:
            return summary
        role = "bottleneck"
    if role not in roles:
        raise PlotError("role", f" {role}: no link has this role (roles: {', '.join(map(str, roles))})")
    return summary.filter(pl.col("role") == role)


def _series_label(keys: list[str], key: tuple[Any, ...]) -> str:
    values = dict(zip(keys, key, strict=True))
    parts = []
    for k, v in values.items():
        if k == "index" and "name" in values:
            continue
        parts.append(_flow_label(v, values["index"]) if k == "name" and "index" in values else str(v))
    return ", ".join(parts)


class Intervals:
    """Error bars for means with a 95 % half-width, and what a reader must be told about them.

    No bar where n < :data:`MIN_INTERVAL_N`; for a non-negative metric the
    lower end stops at 0. Student's t interval is symmetric because it assumes
    normal errors; a goodput or a count cannot go below zero, so the part below
    zero says nothing about the metric and only misleads. Clipping keeps the
    upper end (and so the comparison of means) as computed."""

    def __init__(self, nonnegative: bool = True) -> None:
        self.nonnegative = nonnegative
        self.small_n: set[int] = set()
        self.widths_n: set[int] = set()
        self.clipped = False
        self.spread = False

    def bars(self, means: Sequence[float | None], halves: Sequence[float | None], ns: Sequence[int | None],
             stds: Sequence[float | None] | None = None, scale: float = 1.0) -> list[list[float]] | None:  # fmt: skip
        """``yerr`` for ``errorbar`` or ``bar`` (lower and upper lengths; NaN: no bar), or
        None if no point has one. ``means`` are already scaled, ``halves`` not."""
        lower, upper = [], []
        for i, (y, half, n) in enumerate(zip(means, halves, ns, strict=True)):
            if n is not None and n < MIN_INTERVAL_N:
                self.small_n.add(int(n))
                half = None
            if y is None or half is None or not math.isfinite(half) or not math.isfinite(y):
                lower.append(math.nan)
                upper.append(math.nan)
                continue
            if n is not None:
                self.widths_n.add(int(n))
            if stds is None or (stds[i] or 0) > 0:
                self.spread = True
            h = half * scale
            if self.nonnegative and h > y:
                self.clipped = True
                lower.append(max(y, 0.0))
            else:
                lower.append(h)
            upper.append(h)
        return [lower, upper] if any(math.isfinite(u) for u in upper) else None

    def notes(self) -> list[str]:
        notes = []
        if self.small_n:
            if not self.widths_n and len(self.small_n) == 1:
                notes.append(f"n = {next(iter(self.small_n))}: no interval")
            else:
                notes.append(f"n < {MIN_INTERVAL_N} at some points: no interval there")
        if self.widths_n:
            low, high = min(self.widths_n), max(self.widths_n)
            n = f"n = {low}" if low == high else f"n = {low}-{high}"
            notes.append(f"{n}; bars: 95 % CI{', clipped at 0' if self.clipped else ''}")
            if not self.spread:
                notes.append("no spread across replications")
        return notes


def _legend(ax: Any, keys: list[str], by: str | None, notes: list[str], series: int) -> None:
    from matplotlib.lines import Line2D

    handles, labels = ax.get_legend_handles_labels()
    if series <= 1 and keys == []:
        handles, labels = [], []
    # The notes go in the legend, which matplotlib places where it hides least.
    for note in notes:
        handles.append(Line2D([], [], linestyle="none"))
        labels.append(note)
    if not handles:
        return
    shown = [k for k in keys if not (k == "index" and "name" in keys)]
    title = ", ".join("flow" if k == "name" and "index" in keys else words(k) for k in shown)
    ax.legend(handles, labels, title=title or None, fontsize="small")


def save(fig: Figure, path: str | Path) -> list[Path]:
    """Writes ``path`` with a .png and a .svg suffix; returns both paths.

    A final ``.png`` or ``.svg`` is replaced; any other dot stays part of the
    name (``rate.1.5Mbps`` writes ``rate.1.5Mbps.png``). The same figure gives
    the same bytes every time (no date, fixed SVG ids), so a regenerated study
    leaves its committed figures unchanged.
    """
    import matplotlib

    path = Path(path)
    stem = path.with_suffix("") if path.suffix.lower() in (".png", ".svg") else path
    stem.parent.mkdir(parents=True, exist_ok=True)
    written = []
    for suffix in (".png", ".svg"):
        target = stem.with_name(stem.name + suffix)
        # SVG ids hash with a random salt and SVG metadata carries the date unless told otherwise.
        with matplotlib.rc_context({"svg.hashsalt": "cclab"}):
            fig.savefig(target, dpi=130, metadata={"Date": None} if suffix == ".svg" else None)
        written.append(target)
    return written


# Packet traces: the tcptrace-style time-sequence graph and the panels beside it.

#: Colours of the time-sequence graph's marks (tcptrace's, where they stay apart in print).
_TSEQ_COLOURS = {"sent": "black", "retransmitted": "tab:red", "ack": "tab:green", "sack": "tab:purple"}
_DROP_COLOURS = {
    "random_loss": "tab:orange",
    "buffer_full": "tab:red",
    "early_drop": "tab:purple",
    "orphan": "tab:gray",
}


def _trace_of(source: Result | pl.DataFrame) -> pl.DataFrame:
    frame = source.trace if isinstance(source, Result) else source
    if frame.height == 0:
        raise PlotError("flow", ": no packet trace: add a [[trace]] section to the scenario "
                                '(docs/scenario.md, "[[trace]]")')  # fmt: skip
    return frame


def _choose_flow(flow: str | int | None, ids: list[int], flows: pl.DataFrame | None) -> tuple[int, str]:
    """The flow id and label that ``flow`` names among the flows ``ids``: ``"name[index]"``,
    a group's name (when one of its instances is there), a flow id, or None when there is one flow."""
    names: dict[int, str] = {}
    if flows is not None and flows.height:
        names = {int(i): _label(str(n), int(x)) for i, n, x in flows.select("flow_id", "name", "index").iter_rows()}
    labels = {i: names.get(i, f"flow {i}") for i in ids}
    valid = ", ".join(labels[i] for i in sorted(ids)) or "none"
    if flow is None:
        if len(ids) == 1:
            return ids[0], labels[ids[0]]
        raise PlotError("flow", f" is needed: {len(ids)} flows here ({valid})")
    if isinstance(flow, int):
        if flow in labels:
            return flow, labels[flow]
    else:
        exact = [i for i in ids if labels[i] == flow]
        group = [i for i in ids if labels[i].split("[")[0] == flow]
        if exact or len(group) == 1:
            chosen = (exact or group)[0]
            return chosen, labels[chosen]
        if len(group) > 1:
            raise PlotError("flow", f" {flow}: {len(group)} instances of this group; name one ({valid})")
    raise PlotError("flow", f" {flow}: not a flow here (flows: {valid})")


def _window(times: pl.Series, start: float | None, end: float | None) -> tuple[float, float]:
    lo = float(times.min()) if start is None else start  # type: ignore[arg-type]
    hi = float(times.max()) if end is None else end  # type: ignore[arg-type]
    if hi <= lo:
        raise PlotError("end", f" {hi:g} s: not after the start ({lo:g} s)")
    return lo, hi


def segments_sent(flow_trace: pl.DataFrame) -> pl.DataFrame:
    """The data segments one TCP flow's sender sent (their enqueue on its first link),
    with ``end`` (seq + len) and ``retx``: the segment starts below the highest
    sequence number sent before it in the trace."""
    import polars as pl

    data = flow_trace.filter(pl.col("kind") == "data")
    sender = data["src"][0] if data.height else None
    return (
        data.filter((pl.col("event") == "enqueue") & (pl.col("node") == sender))
        .with_columns(end=pl.col("seq") + pl.col("len"))
        .with_columns(retx=pl.col("seq") < pl.col("end").cum_max().shift(1, fill_value=0))
    )


def acks_received(flow_trace: pl.DataFrame) -> pl.DataFrame:
    """The ACKs one TCP flow's sender received, with ``cum``: the highest cumulative ACK so far."""
    import polars as pl

    data = flow_trace.filter(pl.col("kind") == "data")
    sender = data["src"][0] if data.height else None
    acks = flow_trace.filter((pl.col("kind") == "ack") & (pl.col("event") == "deliver") & (pl.col("node") == sender))
    return acks.with_columns(pl.col("ack").cum_max().alias("cum"))


def time_sequence(source: Result | pl.DataFrame, flow: str | int | None = None, start: float | None = None,
                  end: float | None = None, *, flows: pl.DataFrame | None = None,
                  title: str | None = None) -> Figure:  # fmt: skip
    """The tcptrace time-sequence graph of one TCP flow, from the packet trace.

    ``source`` is a :class:`~cclab.result.Result` of a scenario with a
    ``[[trace]]`` section or its trace table (then ``flows``, the flows table,
    gives the flows' names). ``flow`` is ``"name[index]"``, a group's name, a
    flow id, or None when the trace holds one flow; ``start`` and ``end`` (s)
    bound the time axis (default: the flow's traced events).

    Against time, in segments (the flow's largest payload): each segment the
    sender sends (its enqueue on the sender's first link) as a bar from seq to
    seq + len; a retransmission (a segment starting below the highest sequence
    number sent before it in the trace) in red with a diamond; the highest
    cumulative ACK the sender has received (a step line); the SACK blocks of
    those ACKs as bars above it; every packet of the flow dropped anywhere (an
    X at the data segment's seq, or at an ACK's ack number), coloured by cause
    and named with the link. A segment whose first sending came before the
    trace starts counts as sent, not retransmitted. Each set of marks has a
    ``gid`` (``sent``, ``retransmitted``, ``ack``, ``sack``, ``drop``) for tests."""
    import polars as pl

    trace = _trace_of(source)
    table = source.flows if isinstance(source, Result) else flows
    ids = sorted(int(i) for i in trace["flow_id"].drop_nulls().unique())
    flow_id, label = _choose_flow(flow, ids, table)
    rows = trace.filter(pl.col("flow_id") == flow_id)
    data = rows.filter(pl.col("kind") == "data")
    if data.height == 0 or rows["protocol"][0] != "tcp":
        raise PlotError("flow", f" {label}: no TCP data segments in the trace")
    mss = int(data["len"].max())  # type: ignore[arg-type]
    lo, hi = _window(rows["time_s"], start, end)
    inside = (pl.col("time_s") >= lo) & (pl.col("time_s") <= hi)

    sent = segments_sent(rows).filter(inside)
    acks = acks_received(rows)
    before, acks = acks.filter(pl.col("time_s") < lo), acks.filter(inside)
    sacks = acks.select("time_s", "sack_left", "sack_right").explode("sack_left", "sack_right").drop_nulls()
    drops = rows.filter((pl.col("event") == "drop") & inside)

    fig, ax = _figure(title or f"Time-sequence graph of {label}", "time (s)",
                      f"sequence number (segments of {mss} B)")  # fmt: skip
    new, again = sent.filter(~pl.col("retx")), sent.filter(pl.col("retx"))
    ax.vlines(new["time_s"], new["seq"] / mss, new["end"] / mss, colors=_TSEQ_COLOURS["sent"], linewidth=1.0,
              label=f"new data sent ({new.height})").set_gid("sent")  # fmt: skip
    colour = _TSEQ_COLOURS["retransmitted"]
    ax.vlines(again["time_s"], again["seq"] / mss, again["end"] / mss, colors=colour,
              linewidth=1.6).set_gid("retransmitted")  # fmt: skip
    # A bar one segment high is short: a diamond on each retransmission keeps it in sight.
    ax.plot(again["time_s"], (again["seq"] + again["len"] / 2) / mss, "D", color=colour, markersize=6,
            fillstyle="none", markeredgewidth=1.5, label=f"retransmitted ({again.height})")  # fmt: skip
    xs, ys = acks["time_s"].to_list(), (acks["cum"] / mss).to_list()
    if before.height:
        # The ACK line starts at the window's edge, at the last ACK before it.
        xs, ys = [lo, *xs], [float(before["cum"][-1]) / mss, *ys]
    if xs:
        xs, ys = [*xs, hi], [*ys, ys[-1]]  # held to the end of the window
    (line,) = ax.plot(xs, ys, drawstyle="steps-post", color=_TSEQ_COLOURS["ack"], linewidth=1.2,
                      label="cumulative ACK received")  # fmt: skip
    line.set_gid("ack")
    blocks = ax.vlines(sacks["time_s"], sacks["sack_left"] / mss, sacks["sack_right"] / mss,
                       colors=_TSEQ_COLOURS["sack"], linewidth=2.5, alpha=0.6,
                       label=f"SACK blocks in the ACKs ({sacks.height})")  # fmt: skip
    blocks.set_gid("sack")
    for (cause, link, kind), part in drops.group_by("cause", "link", "kind", maintain_order=True):
        where = f"at {link}" if link is not None else f"at node {part['node'][0]}"
        y = (part["seq"] if kind == "data" else part["ack"]) / mss
        what = "" if kind == "data" else "ACK "
        (marks,) = ax.plot(part["time_s"], y, "X", linestyle="none", markersize=9,
                           color=_DROP_COLOURS.get(str(cause), "tab:brown"), markeredgecolor="black",
                           label=f"{what}dropped: {str(cause).replace('_', ' ')} {where} ({part.height})")  # fmt: skip
        marks.set_gid("drop")
    ax.set_xlim(lo, hi)
    ax.ticklabel_format(axis="y", useOffset=False)
    ax.legend(fontsize="small", loc="upper left")
    return fig


def panels(result: Result, flow: str | int | None = None, start: float | None = None, end: float | None = None,
           interval: float | None = None, title: str | None = None) -> Figure:  # fmt: skip
    """One flow's congestion window, the bottleneck queue and the flow's throughput,
    stacked on one time axis.

    cwnd comes from ``Result.timeseries`` and the queue from ``Result.queues``
    (both need ``run.sample``); throughput is the payload delivered to the
    receiver per ``interval`` seconds (default: about a fiftieth of the window), from
    the packet trace (``[[trace]]``). A panel without data is left out and
    the title says why; with none, :class:`PlotError`."""
    import polars as pl

    series, queues, trace = result.timeseries, result.queues, result.trace
    ids = sorted({int(i) for frame in (series, trace) for i in frame["flow_id"].drop_nulls().unique()})
    if not ids:
        raise PlotError("flow", ': nothing to plot: set run.sample (e.g. sample = "100ms") or add a [[trace]] '
                                "section to the scenario")  # fmt: skip
    flow_id, label = _choose_flow(flow, ids, result.flows)
    series = series.filter(pl.col("flow_id") == flow_id)
    data = trace.filter(pl.col("flow_id") == flow_id)
    delivered = data.filter((pl.col("kind") == "data") & (pl.col("event") == "deliver"))
    times = pl.concat([series["time_s"], queues["time_s"], data["time_s"]])
    lo, hi = _window(times, start, end)
    # By default about fifty bars: the window / 50, rounded down to 1, 2 or 5 times a power of ten.
    rough = (hi - lo) / 50
    power = 10 ** math.floor(math.log10(rough))
    step = interval if interval is not None else max(m * power for m in (1, 2, 5) if m * power <= rough)
    if step <= 0:
        raise PlotError("interval", f" {step:g} s: must be positive")

    style: dict[str, Any] = {"drawstyle": "steps-post", "linewidth": 1}
    drawn: list[tuple[str, Any]] = []
    notes = []
    inside = (pl.col("time_s") >= lo) & (pl.col("time_s") <= hi)
    if series.height:
        cwnd = series.filter(inside)
        drawn.append(("cwnd (segments)", lambda ax: ax.plot(cwnd["time_s"], cwnd["cwnd"], label=label, **style)))
    else:
        notes.append("no cwnd (set run.sample)")
    chosen = _bottleneck_links(queues, result.links) if queues.height else []
    if chosen:

        def draw_queue(ax: Any) -> None:
            for name in chosen:
                g = queues.filter((pl.col("link") == name) & inside).sort("time_s")
                ax.plot(g["time_s"], g["queue_pkts"], label=name, **style)

        drawn.append(("queue (packets)", draw_queue))
    else:
        notes.append("no queue (set run.sample)")
    if delivered.height:
        bins = (
            delivered.filter(inside)
            .with_columns(((pl.col("time_s") - lo) // step).cast(pl.Int64).alias("bin"))
            .group_by("bin").agg(pl.col("len").sum())
        )  # fmt: skip
        full = pl.DataFrame({"bin": range(math.ceil((hi - lo) / step))}).join(bins, on="bin", how="left")
        rate = full.fill_null(0).with_columns(
            (lo + pl.col("bin") * step).alias("time_s"), (pl.col("len") * 8 / step / 1e6).alias("mbps")
        )
        ylabel = f"throughput (Mbit/s\nper {step * 1e3:.3g} ms)"
        drawn.append((ylabel, lambda ax: ax.plot(rate["time_s"], rate["mbps"], label=f"{label} delivered", **style)))
    else:
        notes.append("no throughput (add a [[trace]] section)")
    if not drawn:
        raise PlotError("flow", f" {label}: nothing to plot: {'; '.join(notes)}")

    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.0, 1.3 + 1.9 * len(drawn)), layout="constrained")
    axes = fig.subplots(len(drawn), 1, sharex=True, squeeze=False)[:, 0]
    heading = title or f"{label}: {', '.join(name.split(' (')[0] for name, _ in drawn)}"
    fig.suptitle(heading + (f"\n{'; '.join(notes)}" if notes else ""))
    for ax, (ylabel, draw) in zip(axes, drawn, strict=True):
        draw(ax)
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small", loc="upper left")
    axes[-1].set_xlabel("time (s)")
    axes[-1].set_xlim(lo, hi)
    return fig
