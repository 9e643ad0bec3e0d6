"""Available bandwidth from link departures (issue 8, item 2).

A link observed with ``metrics = ["departed_bytes*"]`` publishes cumulative
counters of the wire bytes it transmitted, in total and per traffic kind
(``departed_bytes.tcp_data``, ``.tcp_ack``, ``.udp``, ``.udt``).
:func:`counter_rates` turns such cumulative series into per-interval rates;
:func:`available_bandwidth` subtracts the cross traffic a link actually
carried from its capacity: the bandwidth a flow could have used, the truth an
estimator is compared with.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

    from cclab.result import Result

#: The traffic kinds a link counts departures by (the suffixes of ``departed_bytes.<kind>``).
TRAFFIC_KINDS = ("tcp_data", "tcp_ack", "udp", "udt")


def counter_rates(metrics: pl.DataFrame) -> pl.DataFrame:
    """Per-interval rates of cumulative counter series (in long format, as ``Result.metrics``).

    Each series (``kind``, ``component``, ``instance``, ``flow_id``, ``metric``,
    ``selection``) is differenced between consecutive samples: one row per
    interval with ``time_s`` (its end), ``interval_s`` and ``rate`` (the
    counter's unit per second).
    """
    import polars as pl

    keys = ["kind", "component", "instance", "flow_id", "metric", "selection"]
    return (
        metrics.sort([*keys, "time_s"], nulls_last=True)
        .with_columns(
            pl.col("time_s").diff().over(keys).alias("interval_s"),
            pl.col("value").diff().over(keys).alias("delta"),
        )
        .filter(pl.col("interval_s").is_not_null() & (pl.col("interval_s") > 0))
        .with_columns((pl.col("delta") / pl.col("interval_s")).alias("rate"))
        .select([*keys, "time_s", "interval_s", "unit", "rate"])
    )


def available_bandwidth(result: Result, link: str, own: str | Sequence[str] | None = None, *,
                        flow: str | None = None) -> pl.DataFrame:  # fmt: skip
    """The bandwidth of ``link`` left to one flow, or to traffic of some kinds, per sampling interval.

    Give ``flow`` (``"name[index]"``, or a group's name when it has one
    instance): cross traffic is everything the link transmitted except that
    flow's packets (the link observed with ``departed_bytes.flow``). Or give
    ``own``, traffic kinds (``"tcp_data"`` for TCP segments): cross traffic is
    everything except those kinds (the link observed with ``departed_bytes*``),
    which stands for a flow only when it is the one flow of its kinds there.
    Returns ``time_s`` (end of the interval: sample time minus the link's
    propagation delay, because departures are counted at the far end),
    ``interval_s``, ``capacity_bps``, ``cross_bps`` and ``available_bps``
    (capacity minus cross traffic).

    Raises ``ValueError`` naming the argument when the link or flow is unknown,
    a kind is not one of :data:`TRAFFIC_KINDS`, both or neither of ``own`` and
    ``flow`` are given, or the link's departures were not observed.
    """
    import polars as pl

    if (own is None) == (flow is None):
        raise ValueError("own: give either own (traffic kinds) or flow (a flow's name), not both or neither")
    row = result.links.filter(pl.col("name") == link)
    if row.height != 1:
        names = ", ".join(result.links["name"].to_list())
        raise ValueError(f"link: no link named {link!r} (links: {names})")
    capacity = float(row["rate_bps"][0])
    delay = float(row["delay_s"][0])
    rows = result.metrics.filter((pl.col("kind") == "link") & (pl.col("component") == link))
    if flow is not None:
        flow_id = _flow_id(result, flow)
        rows = rows.filter(
            (pl.col("metric") == "departed_bytes")
            | ((pl.col("metric") == "departed_bytes.flow") & (pl.col("flow_id") == flow_id))
        )
        own_series, hint = ["departed_bytes.flow"], '"departed_bytes", "departed_bytes.flow"'
    else:
        kinds = [own] if isinstance(own, str) else list(own or [])
        unknown = [k for k in kinds if k not in TRAFFIC_KINDS]
        if unknown or not kinds:
            raise ValueError(f"own: {unknown or kinds!r} is not a list of traffic kinds ({', '.join(TRAFFIC_KINDS)})")
        own_series, hint = [f"departed_bytes.{k}" for k in kinds], '"departed_bytes*"'
        rows = rows.filter(pl.col("metric").is_in(["departed_bytes", *own_series]))
    wanted = {"departed_bytes", *own_series}
    # One selection: the first that recorded every wanted series of this link.
    selection = next(
        (s for s in rows["selection"].unique(maintain_order=True)
         if wanted <= set(rows.filter(pl.col("selection") == s)["metric"].to_list())),
        None,
    )  # fmt: skip
    if selection is None:
        raise ValueError(
            f'link: {link!r} has no departure series for this; observe it with links = ["{link}"], metrics = [{hint}]'
        )
    rates = counter_rates(rows.filter(pl.col("selection") == selection))
    wide = rates.pivot(on="metric", index=["time_s", "interval_s"], values="rate").sort("time_s")
    cross = (pl.col("departed_bytes") - pl.sum_horizontal([pl.col(m) for m in own_series])) * 8.0
    return wide.select(
        (pl.col("time_s") - delay).alias("time_s"),
        pl.col("interval_s"),
        pl.lit(capacity).alias("capacity_bps"),
        cross.alias("cross_bps"),
        (pl.lit(capacity) - cross).alias("available_bps"),
    )


def _flow_id(result: Result, flow: str) -> int:
    """The flow id ``flow`` names (as :func:`cclab.plot.time_sequence`'s ``flow``)."""
    from cclab.plot import PlotError, _choose_flow

    try:
        return _choose_flow(flow, [int(i) for i in result.flows["flow_id"]], result.flows)[0]
    except PlotError as e:
        raise ValueError(str(e)) from None
