"""Plots of runs and sweeps with matplotlib, saved as PNG and SVG.

The run plots take a :class:`~cclab.result.Result` (or the matching polars
table), :func:`sweep` a :class:`~cclab.sweep.SweepResult` or an aggregate of
one; each returns the matplotlib Figure, and :func:`save` writes it.
"""

from __future__ import annotations

import math
import re
import textwrap
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
    chosen = list(links) if links else [n for n in frame["link"].unique(maintain_order=True)
                                        if ".snd" not in n and ".rcv" not in n]  # fmt: skip
    fig, ax = _figure(title, "time (s)", "queue (packets)")
    for name in chosen:
        g = frame.filter(pl.col("link") == name).sort("time_s")
        ax.plot(g["time_s"], g["queue_pkts"], label=name, linewidth=1, drawstyle="steps-post")
    ax.legend(fontsize="small")
    return fig


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

#: Units a scenario writes quantities in (docs/scenario.md): kind and factor to the base unit.
_UNITS: dict[str, tuple[str, float]] = {
    **{u: ("rate", f) for u, f in (("bps", 1), ("kbps", 1e3), ("Kbps", 1e3), ("Mbps", 1e6), ("Gbps", 1e9),
                                   ("Tbps", 1e12), ("bit/s", 1), ("kbit/s", 1e3), ("Mbit/s", 1e6),
                                   ("Gbit/s", 1e9))},
    **{u: ("duration", f) for u, f in (("ns", 1e-9), ("us", 1e-6), ("µs", 1e-6), ("ms", 1e-3), ("s", 1),
                                       ("min", 60), ("h", 3600))},
    **{u: ("size", f) for u, f in (("B", 1), ("KB", 1e3), ("kB", 1e3), ("MB", 1e6), ("GB", 1e9), ("TB", 1e12),
                                   ("KiB", 1024), ("MiB", 1024**2), ("GiB", 1024**3))},
    **{u: ("packets", 1) for u in ("pkts", "pkt", "packets")},
    "bdp": ("bdp", 1),
    "%bdp": ("bdp", 0.01),
}  # fmt: skip
#: Display units per kind, largest first: the first whose factor the largest value reaches.
_DISPLAY = {
    "rate": ((1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "kbit/s"), (1, "bit/s")),
    "duration": ((1, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")),
    "size": ((1e9, "GB"), (1e6, "MB"), (1e3, "KB"), (1, "B")),
    "packets": ((1, "packets"),),
    "bdp": ((1, "BDP"),),
}
_QUANTITY = re.compile(r"\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(%bdp|[A-Za-zµ/]+)\s*")


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


def quantities(values: Sequence[Any]) -> tuple[list[float], str] | None:
    """Grid values written with a unit ("20Mbps", "10ms", "1bdp") as numbers in one
    display unit, or None unless every value is a quantity of the same kind."""
    kind, base = None, []
    for value in values:
        match = _QUANTITY.fullmatch(value) if isinstance(value, str) else None
        if match is None or match[2] not in _UNITS:
            return None
        k, factor = _UNITS[match[2]]
        if kind not in (None, k):
            return None
        kind = k
        base.append(float(match[1]) * factor)
    if kind is None:
        return None
    peak = max(base)
    factor, unit = next(((f, u) for f, u in _DISPLAY[kind] if peak >= f), _DISPLAY[kind][-1])
    return [b / factor for b in base], unit


def _flow_label(name: Any, index: Any) -> str:
    return f"{name}[{index}]"


def sweep_summary(result: SweepResult, x: str, metric: str = "goodput_bps", by: str | None = None, *,
                  link: str | None = None, role: str | None = None,
                  per_run: str = "sum") -> tuple[pl.DataFrame, str]:  # fmt: skip
    """The aggregate a sweep plot draws, and a phrase saying what it is.

    Each run's value is ``metric`` summed (``per_run="sum"``) or averaged over
    the run's flows (a flow column), or over the chosen links (a link column:
    ``link`` by name, else ``role``, else the link with role ``bottleneck``);
    then mean, n and 95 % interval across replications per grid point (and
    value of ``by``). A column that is both (``throughput_bps``) is the flows'
    unless ``link`` or ``role`` is given."""
    import polars as pl

    from cclab.sweep import aggregate

    if x not in result.grid:
        raise PlotError("x", f" {x}: not a grid key of this sweep (grid keys: {', '.join(result.grid) or 'none'})")
    if per_run not in ("sum", "mean"):
        raise PlotError("per_run", f" {per_run!r}: use sum or mean")
    flows, links = result.flows, result.links
    on_links = link is not None or role is not None or (metric not in flows.columns and metric in links.columns)
    table = links if on_links else flows
    if metric not in table.columns or not table.schema[metric].is_numeric():
        skip = {*result.grid, "replication", "seed"}
        numeric = sorted({c for t in (flows, links) for c in t.columns if t.schema[c].is_numeric() and c not in skip})
        raise PlotError("metric", f" {metric}: not a numeric flow or link column (choose from {', '.join(numeric)})")
    if by is not None and by not in table.columns:
        raise PlotError("by", f" {by}: not a column of the {'links' if on_links else 'flows'} table")
    if on_links:
        table, what = _choose_links(table, metric, link, role, per_run)
    else:
        counts = table.group_by("run").len()["len"]
        n = str(counts.max()) if counts.min() == counts.max() else "varying number of"
        what = "" if counts.max() == 1 else f"{per_run} over the {n} flows of each run"
        if by is not None and by not in result.grid:
            what = f"{per_run} per {by} in each run"
    keys = list(dict.fromkeys([*result.grid, *([by] if by else []), "replication"]))
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
          link: str | None = None, role: str | None = None, per_run: str = "sum",
          nonnegative: bool | None = None) -> Figure:  # fmt: skip
    """A metric against a grid key: one line (one marker and style) per series,
    95 % confidence bars where there are at least three replications.

    ``data`` is a :class:`~cclab.sweep.SweepResult` (each run's flows summed or
    averaged by ``per_run``, a link column read from the bottleneck unless
    ``link`` or ``role`` says otherwise: see :func:`sweep_summary`) or an
    aggregate with ``{metric}_mean``, ``{metric}_ci95`` and ``n`` columns
    (``SweepResult.aggregate``). Every combination of the other columns that
    vary (``by``, other grid keys, a flow's ``name`` and ``index``) is its own
    series, so lines never jump between flows. bit/s are shown in Mbit/s
    (Gbit/s when large) and seconds in ms unless ``scale`` is given; grid values
    with a unit ("20Mbps") are placed by value, other strings as categories.
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

    xlabel = f"{x} ({xunit})" if xunit else x
    # Wrapped: a grid key and what was summed easily outgrow the figure's width.
    heading = textwrap.fill(title or f"{metric}{f' ({what})' if what else ''} vs {x}", width=64)
    fig, ax = _figure(heading, xlabel, ylabel or (f"{metric} ({unit})" if unit else metric))
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
        ax.set_xticks(range(len(xs)), [str(v) for v in xs])
        ax.set_xlim(-0.5, len(xs) - 0.5)
    else:
        ordered = sorted(set(positions))
        if ordered[0] > 0 and ordered[-1] / ordered[0] >= 20:
            # Sweeps often span decades (1, 10, 100 Mbit/s): linear spacing would pile up the low end.
            ax.set_xscale("log")
        ax.set_xticks(ordered, [f"{p:g}" for p in ordered])
        ax.minorticks_off()
    ax.ticklabel_format(axis="y", useOffset=False)

    _legend(ax, keys, by, intervals.notes(), len(series))
    return fig


def _x_axis(dtype: Any, xs: list[Any]) -> tuple[str, list[float], str]:
    """How the x values are placed: by number, by quantity in a display unit, or as categories."""
    import polars as pl

    if dtype.is_numeric() and dtype != pl.Boolean:
        return "number", [float(v) for v in xs], ""
    parsed = quantities(xs)
    if parsed is not None:
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
    title = by if shown == [by] else ", ".join("flow" if k == "name" and "index" in keys else k for k in shown)
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
