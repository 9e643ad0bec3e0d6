"""How runs and sweeps show in a Jupyter notebook.

``Result`` and ``SweepResult`` hand their ``_repr_html_`` here: a header, the
tables ``cclab run`` and ``cclab sweep`` print (the first :data:`ROWS` rows of
each), and a small figure where the results have one to draw. Their
``_repr_pretty_`` (IPython's plain text) is the command line's text, so that a
notebook does not store the dataclass repr of a whole summary beside the HTML.

Only the results' public tables are read, so how they are built may change.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence
from html import escape
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from cclab.result import Result
    from cclab.sweep import SweepResult

#: Rows of a table shown; the rest are counted ("... and 480 more flows").
ROWS = 20
#: Flows drawn in a run's cwnd figure: more would be a tangle.
FIGURE_FLOWS = 8
#: Lines drawn in a sweep's figure, at most.
FIGURE_SERIES = 10
#: Size of an inline figure: small beside the tables, and a PNG of bounded size
#: however many samples a run recorded (an SVG grows with them).
FIGURE_INCHES = (6.0, 3.2)
FIGURE_DPI = 80

_STYLE = "font-size: small; margin: 0.4em 0"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[bool]) -> str:
    def row(cells: Sequence[str], tag: str) -> str:
        return "<tr>" + "".join(
            f'<{tag} style="text-align: {"right" if right else "left"}">{escape(c)}</{tag}>'
            for c, right in zip(cells, numeric, strict=True)
        ) + "</tr>"  # fmt: skip

    body = "".join(row(r, "td") for r in rows)
    return f'<table class="cclab-table"><thead>{row(header, "th")}</thead><tbody>{body}</tbody></table>'


def _more(count: int, what: str, where: str) -> str:
    """The line under a truncated table; empty when nothing was left out."""
    if count <= 0:
        return ""
    return f'<p style="{_STYLE}">... and {count:,} more {escape(what)} ({escape(where)} has every row)</p>'


def _paragraphs(lines: Sequence[str]) -> str:
    return "".join(f'<p style="{_STYLE}">{escape(line)}</p>' for line in lines)


def _png(fig: Figure, alt: str) -> str:
    fig.set_size_inches(*FIGURE_INCHES)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=FIGURE_DPI)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return f'<img src="data:image/png;base64,{data}" alt="{escape(alt)}">'


# --- One run ---------------------------------------------------------------------------------


def _stripped(cells: Sequence[str]) -> list[str]:
    """Cells of the command line's tables without their padding."""
    return [cell.strip() for cell in cells]


#: Whether each column of ``cclab run``'s flows and links tables holds numbers (right-aligned).
FLOW_NUMERIC = (False, False, False, True, True, True, True, True, True)
LINK_NUMERIC = (False, False, True, True, True, True, True)


def run_figure(result: Result) -> Figure | None:
    """The congestion windows of the first :data:`FIGURE_FLOWS` flows over time,
    or None if the run sampled none (``run.sample`` unset, or no TCP flow)."""
    import polars as pl

    from cclab import plot

    series = result.timeseries
    if series.height == 0 or "cwnd" not in series.columns:
        return None
    shown = result.flows.head(FIGURE_FLOWS)["flow_id"]
    series = series.filter(pl.col("flow_id").is_in(shown.implode()) & pl.col("cwnd").is_not_null())
    if series.height == 0:
        return None
    drawn = series["flow_id"].n_unique()
    title = "Congestion window" if result.flows.height <= drawn else f"Congestion window, {drawn} flows"
    return plot.cwnd(series, title=title)


def run_html(result: Result) -> str:
    """``Result._repr_html_``: the header, flows and links as ``cclab run`` prints
    them (access links left out, as it does), and the cwnd figure if sampled."""
    from cclab.cli import FLOW_TITLES, LINK_TITLES, add_goodput, fairness_lines, flow_cells, link_cells, run_header

    flows, links = result.flows, result.links
    parts = [f'<div class="cclab-result"><p style="{_STYLE}"><b>{escape(run_header(result))}</b></p>']
    shown = flows.head(ROWS).to_dicts()
    parts.append(_table(_stripped(FLOW_TITLES), [_stripped(flow_cells(f)) for f in shown], FLOW_NUMERIC))
    parts.append(_more(flows.height - len(shown), "flows", ".flows"))
    goodputs: dict[str, list[float]] = {}
    for flow in flows.to_dicts():
        add_goodput(goodputs, flow)
    parts.append(_paragraphs(fairness_lines(goodputs)))
    others = [link for link in links.to_dicts() if link["role"] != "access"]
    parts.append(_table(_stripped(LINK_TITLES), [_stripped(link_cells(link)) for link in others[:ROWS]], LINK_NUMERIC))
    parts.append(_more(len(others) - ROWS, "links", ".links"))
    if len(others) < links.height:
        parts.append(_paragraphs([f"({links.height - len(others)} access links not shown; .links lists them)"]))
    fig = run_figure(result)
    if fig is not None:
        parts.append(_png(fig, f"congestion window over time, {result.scenario}"))
    parts.append("</div>")
    return "".join(parts)


def run_text(result: Result) -> str:
    """The plain text IPython shows for a Result: ``cclab run``'s output."""
    from cclab.cli import format_summary

    return format_summary(result)


# --- A sweep ---------------------------------------------------------------------------------

#: The metrics ``cclab sweep`` prints.
SWEEP_METRICS = ["goodput_bps", "retransmits", "timeouts", "rtt_mean_s"]


def sweep_header(result: SweepResult) -> str:
    runs = result.flows["run"].n_unique() if result.flows.height else 0
    if not result.grid:
        grid = "no grid"
        points = 1
    else:
        values = result.flows.select(result.grid).unique(maintain_order=True)
        points = values.height
        grid = "; ".join(f"{k} = {', '.join(str(v) for v in values[k].unique(maintain_order=True))}"
                         for k in result.grid)  # fmt: skip
    where = f"; cached in {result.out}" if result.out is not None else ""
    return (f"sweep of {grid}: {points} points x {result.replications} replications, "
            f"{runs} runs{where}")  # fmt: skip


def sweep_figure(result: SweepResult) -> Figure | None:
    """Goodput against the first grid key, a line per value of the second (and
    per flow, or summed over each run's flows when that would make too many
    lines); None without a grid, runs, or a figure of few enough lines."""
    from cclab import plot

    if not result.grid or result.flows.height == 0:
        return None
    x, by = result.grid[0], (result.grid[1] if len(result.grid) > 1 else None)
    others = result.grid[1:]
    per_run = "flow"
    if result.flows.select([*others, "name", "index"]).unique().height > FIGURE_SERIES:
        per_run = "sum"
        if others and result.flows.select(others).unique().height > FIGURE_SERIES:
            return None
    return plot.sweep(result, x=x, by=by, per_run=per_run)


def sweep_html(result: SweepResult) -> str:
    """``SweepResult._repr_html_``: the header, ``cclab sweep``'s table (mean and
    95 % interval per grid point and flow), the notes, and goodput against the grid."""
    from cclab.cli import sweep_rows

    parts = [f'<div class="cclab-sweep"><p style="{_STYLE}"><b>{escape(sweep_header(result))}</b></p>']
    table = result.aggregate(metrics=SWEEP_METRICS)
    header, *rows = sweep_rows(table, result.grid)
    numeric = [False] * (len(result.grid) + 1) + [True] * (len(header) - len(result.grid) - 1)
    parts.append(_table(header, rows[:ROWS], numeric))
    parts.append(_more(len(rows) - ROWS, "rows", ".summary"))
    parts.append(_paragraphs([f"note: {note}" for note in result.notes]))
    fig = sweep_figure(result)
    if fig is not None:
        parts.append(_png(fig, f"goodput against {result.grid[0]}"))
    parts.append("</div>")
    return "".join(parts)


def sweep_text(result: SweepResult) -> str:
    """The plain text IPython shows for a SweepResult: ``cclab sweep``'s output."""
    from cclab.cli import format_sweep

    table = format_sweep(result.aggregate(metrics=SWEEP_METRICS), result.grid)
    return "\n".join([sweep_header(result), "", table, *(f"note: {note}" for note in result.notes)])
