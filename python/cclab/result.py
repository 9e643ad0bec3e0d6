"""Results of one run as polars DataFrames.

Column names are those of the ``cclab run --json`` summary (``goodput_bps``,
``utilization``, ...). A run from the simulator hands its tables over as Arrow
buffers (``_core.run_toml``), which polars reads without copying; the JSON
summary is built from them only when something asks for it. A run read back
from a summary (a sweep's ``summary.json``) builds the same tables from it.
Polars is imported only when a table is first asked for, so the command line
stays light.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, cast

if TYPE_CHECKING:
    import polars as pl


def _declared_schema(table: str) -> dict[str, Any]:
    """Columns of a table the simulator returns as columns, as it declares them
    (``_core.table_columns``): name and type, in order."""
    import polars as pl

    from cclab import _core

    dtypes = {"f64": pl.Float64, "Option<f64>": pl.Float64, "u32": pl.Int64, "u64": pl.Int64, "String": pl.String}
    return {name: dtypes[rust_type] for name, rust_type in _core.table_columns()[table]}


def wide_series_schema(view: str) -> dict[str, Any]:
    """Columns of a wide time-series view (``"flows"`` or ``"links"``), for an empty table."""
    return _declared_schema(view)


def transfer_schema() -> dict[str, Any]:
    """Columns of the completion-time table, one row per finite transfer: the flow group
    (``name``) and instance (``index``) it belongs to, its connection (``flow_id``),
    ``size_bytes``, ``start_s``, ``end_s`` (null if the run ended first), ``completion_s``
    (``end_s - start_s``, null if unfinished), ``delivered_bytes`` and ``packets_sent``
    (retransmissions included)."""
    return _declared_schema("transfers")


def transfers_frame(summary: dict[str, Any]) -> pl.DataFrame:
    """The completion-time table; the summary holds it as columns."""
    import polars as pl

    schema = transfer_schema()
    columns = summary.get("transfers") or {}
    if not columns.get("flow_id"):
        return pl.DataFrame(schema=schema)
    return pl.DataFrame({name: columns[name] for name in schema}, schema=schema)


#: The tables a run hands over (``_core.run_toml``), by name.
CORE_TABLES = ("flows", "links", "transfers", "metrics", "flow_series", "link_series")

#: A column as the core hands it over: name, Arrow type ("f64", "i64", "bool" or "str"),
#: rows, and Arrow's buffers (validity bitmap or None, string offsets or None, values).
ColumnBuffers = tuple[str, str, int, bytes | None, bytes | None, bytes]

#: What ``_core.run_toml`` returns: the header (JSON) and each table's column buffers.
CoreOutput = tuple[str, list[tuple[str, list[ColumnBuffers]]]]


def core_frame(columns: list[ColumnBuffers]) -> pl.DataFrame:
    """A table from the core as a DataFrame: pyarrow wraps each column's buffers
    as they are (Arrow's layout, see ``cclab_sim::table``) and polars takes them over."""
    import polars as pl
    import pyarrow as pa

    types = {"f64": pa.float64(), "i64": pa.int64(), "bool": pa.bool_(), "str": pa.large_string()}
    arrays = []
    for _, kind, rows, validity, offsets, data in columns:
        buffers = [None if validity is None else pa.py_buffer(validity)]
        if offsets is not None:
            buffers.append(pa.py_buffer(offsets))
        buffers.append(pa.py_buffer(data))
        arrays.append(pa.Array.from_buffers(types[kind], rows, buffers))
    table = pa.Table.from_arrays(arrays, names=[c[0] for c in columns])
    return cast("pl.DataFrame", pl.from_arrow(table))


def column_values(column: ColumnBuffers, start: int = 0, stop: int | None = None) -> list[Any]:
    """Rows ``start`` to ``stop`` (default: all) of a column from the core as a
    Python list, read from its buffers without polars or pyarrow: what the
    command line prints needs neither, and importing them costs more (0.4 s)
    than a small run."""
    _, kind, rows, validity, offsets, data = column
    stop = rows if stop is None else min(stop, rows)
    values: list[Any]
    if kind == "f64":
        values = memoryview(data).cast("d")[start:stop].tolist()
    elif kind == "i64":
        values = memoryview(data).cast("q")[start:stop].tolist()
    elif kind == "bool":
        values = [data[i >> 3] >> (i & 7) & 1 == 1 for i in range(start, stop)]
    else:
        ends = memoryview(offsets or bytes(8)).cast("q")[start : stop + 1].tolist()
        values = [data[a:b].decode() for a, b in zip(ends[:-1], ends[1:], strict=True)]
    if validity is not None:
        values = [
            v if validity[i >> 3] >> (i & 7) & 1 else None for i, v in zip(range(start, stop), values, strict=True)
        ]
    return values


#: Rows read into Python at a time when a table is written out row by row.
ROW_CHUNK = 4096


def row_chunks(columns: list[ColumnBuffers]) -> Iterator[list[dict[str, Any]]]:
    """A table from the core as rows (dicts), :data:`ROW_CHUNK` at a time: at
    100 000 flows its 400 000 link rows as Python objects all at once were
    most of the memory of ``cclab run --json``."""
    names = [c[0] for c in columns]
    rows = columns[0][2] if columns else 0
    for start in range(0, rows, ROW_CHUNK):
        values = [column_values(c, start, start + ROW_CHUNK) for c in columns]
        yield [dict(zip(names, row, strict=True)) for row in zip(*values, strict=True)]


def summary_frame(summary: dict[str, Any], table: str) -> pl.DataFrame:
    """One of :data:`CORE_TABLES` as a run's JSON summary holds it (a list of
    rows, or columns), in the form the core hands it over."""
    import polars as pl

    if table in ("flows", "links"):
        return pl.DataFrame(summary[table], infer_schema_length=None)
    if table == "transfers":
        return transfers_frame(summary)
    series = summary.get("timeseries") or {}
    if table == "metrics":
        columns = series.get("metrics") or {}
        schema = {"time_s": pl.Float64, "series": pl.Int64, "value": pl.Float64}
        return pl.DataFrame({name: columns.get(name) or [] for name in schema}, schema=schema)
    view = {"flow_series": "flows", "link_series": "links"}[table]
    wide = series.get(view)
    if not wide or not wide.get("time_s"):
        return pl.DataFrame(schema=wide_series_schema(view))
    return pl.DataFrame(wide)


def flow_series_frame(series: pl.DataFrame, flows: pl.DataFrame) -> pl.DataFrame:
    """One row per sample and flow, with the flow's name and index joined in."""
    import polars as pl

    if series.is_empty():
        return series.with_columns(pl.lit(None, pl.String).alias("name"), pl.lit(None, pl.Int64).alias("index"))
    return series.join(flows.select("flow_id", "name", "index"), on="flow_id", how="left")


def metrics_schema() -> dict[str, Any]:
    """Columns of the long time-series table: one row per sample of one series."""
    import polars as pl

    return {
        "time_s": pl.Float64,
        "kind": pl.String,  # "flow" or "link"
        "component": pl.String,  # the flow group's name, or the link's ("left->right")
        "instance": pl.Int64,  # the flow instance within its group; null for a link
        "flow_id": pl.Int64,  # the flow; null for a link, except its per-flow series (departed_bytes.flow)
        "metric": pl.String,  # "cwnd", "cc.estimate", "queue_packets", ...
        "unit": pl.String,
        "value": pl.Float64,
        "selection": pl.String,  # what recorded it: "run.sample" or "observe[i]"
    }


def series_frame(series: list[dict[str, Any]] | None) -> pl.DataFrame:
    """The recorded series (one row each), known before the run: the run's metadata."""
    import polars as pl

    schema = metrics_schema()
    columns = {c: schema[c] for c in schema if c not in ("time_s", "value")} | {"every_s": pl.Float64}
    return pl.DataFrame(series or [], schema=columns)


def metrics_frame(values: pl.DataFrame, series: pl.DataFrame) -> pl.DataFrame:
    """Every recorded value in long format (see :func:`metrics_schema`), in the order sampled."""
    import polars as pl

    schema = metrics_schema()
    if values.is_empty():
        return pl.DataFrame(schema=schema)
    # A row names its series by index; the series table holds the names once.
    table = series.drop("every_s").with_row_index("series")
    rows = values.with_columns(pl.col("series").cast(pl.UInt32))
    return rows.join(table, on="series", how="left", maintain_order="left").select(list(schema))


#: Columns of the trace table, in order (see docs/python.md, "Packet traces").
TRACE_COLUMNS = (
    "trace", "time_ns", "time_s", "event", "cause", "link", "node", "flow_id",
    "src", "dst", "ip_src", "ip_dst", "sport", "dport", "protocol", "kind",
    "wire_bytes", "seq", "len", "ack", "window", "ce_bytes", "ts_val_ns",
    "ts_ecr_ns", "sack_left", "sack_right", "fin", "ece", "ect", "ect1", "ce",
)  # fmt: skip


def trace_schema() -> dict[str, Any]:
    """Types of the trace table's columns: one row per traced packet event."""
    import polars as pl

    integer = {"trace", "flow_id", "sport", "dport", "wire_bytes", "len"}
    unsigned = {"time_ns", "seq", "ack", "window", "ce_bytes", "ts_val_ns", "ts_ecr_ns"}
    strings = {"event", "cause", "link", "node", "src", "dst", "ip_src", "ip_dst", "protocol", "kind"}
    schema: dict[str, Any] = {}
    for c in TRACE_COLUMNS:
        if c in integer:
            schema[c] = pl.Int64
        elif c in unsigned:
            schema[c] = pl.UInt64
        elif c in strings:
            schema[c] = pl.String
        elif c == "time_s":
            schema[c] = pl.Float64
        elif c.startswith("sack_"):
            schema[c] = pl.List(pl.UInt64)
        else:
            schema[c] = pl.Boolean
    return schema


def trace_frame(summary: dict[str, Any]) -> pl.DataFrame:
    """The trace table (empty unless the scenario has ``[[trace]]`` entries)."""
    import polars as pl

    schema = trace_schema()
    columns = summary.get("trace") or {}
    if not columns.get("time_ns"):
        return pl.DataFrame(schema=schema)
    lists = {name for name, dtype in schema.items() if isinstance(dtype, pl.List)}
    frame = pl.DataFrame({name: columns[name] for name in schema if name not in lists},
                         schema={n: t for n, t in schema.items() if n not in lists})  # fmt: skip
    return frame.with_columns(_list_column(name, columns[name]) for name in lists).select(list(schema))


def _list_column(name: str, rows: list[list[int]]) -> pl.Series:
    """A List(UInt64) column built through Arrow offsets: polars builds one
    Series per row from nested Python lists, 5 s for 150 000 trace rows."""
    from itertools import accumulate, chain

    import polars as pl
    import pyarrow as pa

    offsets = pa.array([0, *accumulate(len(r) for r in rows)], pa.int64())
    values = pa.array(list(chain.from_iterable(rows)), pa.uint64())
    series = cast("pl.Series", pl.from_arrow(pa.LargeListArray.from_arrays(offsets, values)))
    return series.alias(name)


def write_pcaps(summary: dict[str, Any], directory: str | Path) -> list[Path]:
    """Writes the run's pcap files (one per traced flow instance or link) into ``directory``."""
    import json

    from cclab import _core

    trace = summary.get("trace")
    if not trace or not trace.get("captures"):
        return []
    Path(directory).mkdir(parents=True, exist_ok=True)
    return [Path(p) for p in _core.write_pcaps(json.dumps(trace), str(directory))]


def bottleneck(links: pl.DataFrame) -> pl.DataFrame:
    """The row of the links table whose role is ``bottleneck``: the forward
    direction of the link a topology's flows share (``left->right`` on a
    dumbbell). The role is the topology's data, so the name is never assumed."""
    import polars as pl

    chosen = links.filter(pl.col("role") == "bottleneck")
    if chosen.height != 1:
        raise ValueError(f"{chosen.height} links have the role 'bottleneck', not one: name the link")
    return chosen


def link_shares(flows: pl.DataFrame, links: pl.DataFrame, link: str | None = None,
                groups: dict[str, list[str]] | None = None) -> pl.DataFrame:  # fmt: skip
    """:meth:`Result.shares` of one run's flows and links tables (a sweep's rows of one run)."""
    import polars as pl

    if link is None:
        chosen = bottleneck(links)
        link = str(chosen["name"][0])
    else:
        chosen = links.filter(pl.col("name") == link)
    if chosen.height != 1:
        names = ", ".join(links["name"].unique(maintain_order=True).to_list())
        raise ValueError(f"shares: no link {link!r} (one of {names})")
    role = chosen["role"][0]
    crossing = {"bottleneck": "forward", "bottleneck.reverse": "reverse"}.get(role)
    if crossing is None:
        raise ValueError(
            f"shares: {link!r} is not a bottleneck direction (its role is {role}); shares are defined for "
            "a dumbbell's bottleneck directions (left->right, right->left), whose flows' directions say "
            "what crosses them"
        )
    names = list(dict.fromkeys(flows["name"].to_list()))
    kinds = groups if groups is not None else {name: [name] for name in names}
    rate = float(chosen["rate_bps"][0])
    rows: list[tuple[str, float, float | None]] = []
    for kind, members in kinds.items():
        unknown = [m for m in members if m not in names]
        if unknown:
            known = ", ".join(names)
            raise ValueError(f"shares: kind {kind!r}: unknown flow group {unknown[0]!r} (one of {known})")
        mine = flows.filter(pl.col("name").is_in(members) & (pl.col("direction") == crossing))
        goodput = float(mine["goodput_bps"].sum()) if mine.height else 0.0
        rows.append((kind, goodput / rate, goodput))
    if {"overhead", "unused"} & set(kinds):
        raise ValueError("shares: 'overhead' and 'unused' are the names of the last two rows")
    utilization = float(chosen["utilization"][0])
    rows.append(("overhead", utilization - sum(r[1] for r in rows), None))
    rows.append(("unused", 1.0 - utilization, None))
    return pl.DataFrame(rows, schema={"kind": pl.String, "share": pl.Float64, "goodput_bps": pl.Float64}, orient="row")


def summary_items(
    header: dict[str, Any], columns: Callable[[str], dict[str, list[Any]]], rows: Callable[[str], Any]
) -> Iterator[tuple[str, Any]]:
    """The ``--json`` summary of a run, item by item, from its header and its
    tables (``columns(name)``; flows and links as ``rows(name)``), keys in the
    order the core declares them (flows and links as lists of rows, the other
    tables as columns)."""
    for key in ("scenario", "seed", "sim_time_s", "warmup_s", "wall_s", "events", "packet_hops"):
        yield key, header[key]
    for table in ("flows", "links"):
        yield table, rows(table)
    yield "transfers", columns("transfers")
    yield "connections", header["connections"]
    if "series" in header:
        yield (
            "timeseries",
            {
                "flows": columns("flow_series"),
                "links": columns("link_series"),
                "series": header["series"],
                "metrics": columns("metrics"),
            },
        )
    if "trace" in header:
        yield "trace", header["trace"]
    if header.get("warnings"):
        yield "warnings", header["warnings"]


class Result:
    """One run: its tables, the resolved scenario it ran, and its seed.

    Made by :meth:`from_core` from what the simulator hands over, or from a
    run's JSON summary (``Result(summary, config, seed)``, as a sweep's
    ``summary.json`` holds it); the tables are the same either way."""

    def __init__(
        self,
        summary: dict[str, Any] | None,
        config: dict[str, Any],
        seed: int,
        *,
        header: dict[str, Any] | None = None,
        tables: dict[str, list[ColumnBuffers]] | None = None,
    ) -> None:
        if header is None:
            if summary is None:
                raise ValueError("Result: give a summary, or a header and its tables")
            header = {k: v for k, v in summary.items() if k not in ("flows", "links", "transfers", "timeseries")}
            series = (summary.get("timeseries") or {}).get("series")
            if series is not None:
                header["series"] = series
        elif summary is None and tables is None:
            raise ValueError("Result: a header needs its tables")
        self.config = config
        self.seed = seed
        self._summary = summary
        self._header = header
        # The core's tables as it handed them over; each becomes a DataFrame when first asked for.
        self._buffers: dict[str, list[ColumnBuffers]] = dict(tables or {})
        self._raw: dict[str, pl.DataFrame] = {}
        self._cache: dict[str, pl.DataFrame] = {}

    @classmethod
    def from_core(cls, output: CoreOutput, config: dict[str, Any]) -> Result:
        """The Result of ``_core.run_toml``'s output."""
        import json

        header_json, tables = output
        header: dict[str, Any] = json.loads(header_json)
        return cls(None, config, header["seed"], header=header, tables=dict(tables))

    def __repr__(self) -> str:
        return f"Result(scenario={self.scenario!r}, seed={self.seed}, flows={self.height('flows')})"

    def height(self, table: str) -> int:
        """Rows of one of :data:`CORE_TABLES`, without reading them."""
        if table in self._buffers:
            columns = self._buffers[table]
            return columns[0][2] if columns else 0
        return len(next(iter(self.columns(table).values()), []))

    @property
    def summary(self) -> dict[str, Any]:
        """The ``cclab run --json`` summary; for a run from the simulator, built
        from the tables when first asked for (at 20 000 flows that costs more
        than the tables themselves: prefer the tables)."""
        if self._summary is None:
            self._summary = dict(summary_items(self._header, self.columns, lambda table: list(self.rows(table))))
        return self._summary

    def to_json(self, trace: bool = True) -> str:
        """The ``--json`` summary as text, without the trace table if not ``trace``."""
        import io

        text = io.StringIO()
        self.write_json(text, trace)
        return text.getvalue()

    def write_json(self, out: TextIO, trace: bool = True) -> None:
        """Writes :meth:`to_json`'s text to ``out``. A run from the simulator is
        written a few thousand rows at a time, never whole as Python objects:
        at 100 000 flows the summary as dicts and then as one string took twice
        the memory of the run itself."""
        import json

        if self._summary is not None or not self._buffers:
            out.write(json.dumps({k: v for k, v in self.summary.items() if trace or k != "trace"}))
            return
        items = summary_items(self._header, self.columns, lambda table: row_chunks(self._buffers[table]))
        out.write("{")
        for i, (key, value) in enumerate(items):
            if key == "trace" and not trace:
                continue
            out.write(f"{', ' if i else ''}{json.dumps(key)}: ")
            if key not in ("flows", "links"):
                out.write(json.dumps(value))
                continue
            out.write("[")
            separator = ""
            for chunk in value:
                out.write(separator + json.dumps(chunk)[1:-1])
                separator = ", "
            out.write("]")
        out.write("}")

    def columns(self, table: str) -> dict[str, list[Any]]:
        """One of :data:`CORE_TABLES` as Python lists by column, without polars."""
        if table in self._buffers:
            return {c[0]: column_values(c) for c in self._buffers[table]}
        if table in ("flows", "links") and self._summary is not None:
            rows = self._summary[table]
            names = list(dict.fromkeys(k for row in rows for k in row))
            return {name: [row.get(name) for row in rows] for name in names}
        return self._core_table(table).to_dict(as_series=False)

    def rows(self, table: str) -> Iterator[dict[str, Any]]:
        """One of :data:`CORE_TABLES` row by row (dicts), without polars: what the
        command line prints from. A run from the simulator is read from its
        buffers a few thousand rows at a time (:func:`row_chunks`)."""
        if table in self._buffers:
            for chunk in row_chunks(self._buffers[table]):
                yield from chunk
            return
        named = self.columns(table)
        yield from (dict(zip(named, row, strict=True)) for row in zip(*named.values(), strict=True))

    @property
    def header(self) -> dict[str, Any]:
        """The summary's scalars (``scenario``, ``seed``, ``sim_time_s``,
        ``warmup_s``, ``wall_s``, ``events``, ``packet_hops``), ``connections``,
        and, when recorded, ``series`` and ``trace``: everything but the tables."""
        return self._header

    def _core_table(self, name: str) -> pl.DataFrame:
        if name not in self._raw:
            if name in self._buffers:
                self._raw[name] = core_frame(self._buffers[name])
            elif self._summary is not None:
                self._raw[name] = summary_frame(self._summary, name)
            else:
                raise KeyError(f"Result: no table {name!r}")
        return self._raw[name]

    def _table(self, name: str, build: Any) -> pl.DataFrame:
        if name not in self._cache:
            self._cache[name] = build()
        frame: pl.DataFrame = self._cache[name]
        return frame

    @property
    def flows(self) -> pl.DataFrame:
        """One row per flow instance."""
        return self._core_table("flows")

    @property
    def links(self) -> pl.DataFrame:
        """One row per link direction."""
        return self._core_table("links")

    @property
    def transfers(self) -> pl.DataFrame:
        """One row per finite transfer: its size, start and completion time (see :func:`transfer_schema`)."""
        return self._core_table("transfers")

    @property
    def warnings(self) -> list[str]:
        """What the scenario allows but a researcher should hear about, one line
        each (an L4S flow whose path never marks it)."""
        return list(self._header.get("warnings", []))

    @property
    def connections(self) -> dict[str, int]:
        """Connections opened, closed (reclaimed) and alive at most at once, and orphaned packets."""
        totals: dict[str, int] = self._header["connections"]
        return totals

    @property
    def timeseries(self) -> pl.DataFrame:
        """Sampled sender state per flow (empty unless ``run.sample`` is set)."""
        return self._table("timeseries", lambda: flow_series_frame(self._core_table("flow_series"), self.flows))

    @property
    def queues(self) -> pl.DataFrame:
        """Sampled queue lengths per link (empty unless ``run.sample`` is set)."""
        return self._core_table("link_series")

    @property
    def metrics(self) -> pl.DataFrame:
        """Every recorded time series in long format: one row per (time, component,
        instance, metric) with its value (see :func:`metrics_schema`); empty unless
        ``run.sample`` or an ``[[observe]]`` section is set. ``timeseries`` and
        ``queues`` are wide views of what ``run.sample`` recorded."""
        return self._table("metrics", lambda: metrics_frame(self._core_table("metrics"), self.series))

    @property
    def series(self) -> pl.DataFrame:
        """The recorded series, one row each, with their unit and interval."""
        return self._table("series", lambda: series_frame(self._header.get("series")))

    @property
    def trace(self) -> pl.DataFrame:
        """Traced packet events: one row per enqueue, departure, drop and delivery (``[[trace]]``)."""
        return self._table("trace", lambda: trace_frame(self._header))

    @property
    def captures(self) -> list[dict[str, Any]]:
        """The pcap files the trace makes: ``file``, ``trace`` (entry), ``point`` (where captured), ``rows``."""
        trace = self._header.get("trace") or {}
        captures: list[dict[str, Any]] = trace.get("captures") or []
        return captures

    def write_pcaps(self, directory: str | Path) -> list[Path]:
        """Writes one pcap per capture into ``directory``; returns the paths."""
        return write_pcaps(self._header, directory)

    def shares(self, link: str | None = None, groups: dict[str, list[str]] | None = None) -> pl.DataFrame:
        """How a dumbbell bottleneck direction's capacity was spent over the
        measurement window ``[warmup, duration)``: one row per kind of traffic
        with its goodput as a fraction of the link's rate, then ``overhead``
        and ``unused``. The rows sum to 1.

        ``groups`` maps each kind to the flow groups that make it up
        (``{"web": ["web"], "small": ["small"], "long": ["long", "long-back"]}``);
        by default every group is a kind of its own. A group's goodput counts
        only if its data crosses ``link``: the forward groups' on
        ``"left->right"``, the reverse groups' on ``"right->left"`` (the other
        direction carries only their ACKs, which are overhead there), so
        ``long-back`` above adds nothing on ``"left->right"``. By default
        ``link`` is the forward bottleneck: the link whose ``role`` in the
        links table is ``bottleneck`` (``"left->right"`` on a dumbbell).

        - a kind's ``share``: the in-order payload its groups delivered in the
          window (``goodput_bps`` of the flows table), over the link's rate;
        - ``overhead``: the link's utilisation (busy time over the window) less
          every kind's share: headers, retransmissions, the reverse groups'
          ACKs, and the payload of groups left out of ``groups``;
        - ``unused``: 1 - utilisation, the capacity no packet used.

        Each share lies in [0, 1]. ``overhead`` is non-negative in practice but
        not by construction: goodput counts payload delivered in the window,
        utilisation the link's busy time in it, and payload that crossed the
        link just before the window starts but arrives after counts in the
        first and not the second (at most a window's worth of data in flight).

        Columns: ``kind``, ``share``, ``goodput_bps`` (null for ``overhead``
        and ``unused``).
        """
        return link_shares(self.flows, self.links, link, groups)

    @property
    def scenario(self) -> str:
        name: str = self._header["scenario"]
        return name

    def _repr_html_(self) -> str:
        from cclab import notebook

        return notebook.run_html(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        from cclab import notebook

        printer.text(notebook.run_text(self))

    def to_pandas(self) -> dict[str, Any]:
        """The tables as pandas DataFrames (needs pandas and pyarrow)."""
        return {
            "flows": self.flows.to_pandas(),
            "links": self.links.to_pandas(),
            "transfers": self.transfers.to_pandas(),
            "timeseries": self.timeseries.to_pandas(),
            "queues": self.queues.to_pandas(),
            "metrics": self.metrics.to_pandas(),
            "trace": self.trace.to_pandas(),
        }
