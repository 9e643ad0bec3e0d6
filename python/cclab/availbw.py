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

    Each series (``kind``, ``component``, ``instance``, ``metric``, ``selection``) is
    differenced between consecutive samples: one row per interval with ``time_s``
    (its end), ``interval_s`` and ``rate`` (the counter's unit per second).
    """
    import polars as pl

    keys = ["kind", "component", "instance", "metric", "selection"]
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


def available_bandwidth(result: Result, link: str, own: str | Sequence[str]) -> pl.DataFrame:
    """The bandwidth of ``link`` left to the traffic of kinds ``own``, per sampling interval.

    Cross traffic is everything the link transmitted except the kinds in ``own``
    (``"tcp_data"`` for a TCP flow's segments): so ``own`` identifies a flow only
    when it is the one flow of its kinds on that link. Returns ``time_s`` (end of
    the interval: sample time minus the link's propagation delay, because
    departures are counted at the far end), ``interval_s``, ``capacity_bps``,
    ``cross_bps`` and ``available_bps`` (capacity minus cross traffic).

    Raises ``ValueError`` naming the argument when the link is unknown, a kind is
    not one of :data:`TRAFFIC_KINDS`, or the link's departures were not observed.
    """
    import polars as pl

    kinds = [own] if isinstance(own, str) else list(own)
    unknown = [k for k in kinds if k not in TRAFFIC_KINDS]
    if unknown or not kinds:
        raise ValueError(f"own: {unknown or kinds!r} is not a list of traffic kinds ({', '.join(TRAFFIC_KINDS)})")
    row = result.links.filter(pl.col("name") == link)
    if row.height != 1:
        names = ", ".join(result.links["name"].to_list())
        raise ValueError(f"link: no link named {link!r} (links: {names})")
    capacity = float(row["rate_bps"][0])
    delay = float(row["delay_s"][0])

    wanted = ["departed_bytes", *(f"departed_bytes.{k}" for k in kinds)]
    rows = result.metrics.filter(
        (pl.col("kind") == "link") & (pl.col("component") == link) & pl.col("metric").is_in(wanted)
    )
    # One selection: the first that recorded every wanted series of this link.
    selection = next(
        (s for s in rows["selection"].unique(maintain_order=True) if set(wanted) <= set(
            rows.filter(pl.col("selection") == s)["metric"].to_list()
        )),
        None,
    )  # fmt: skip
    if selection is None:
        raise ValueError(
            f'link: {link!r} has no departed_bytes series; observe it with links = ["{link}"], '
            'metrics = ["departed_bytes*"]'
        )
    rates = counter_rates(rows.filter(pl.col("selection") == selection))
    wide = rates.pivot(on="metric", index=["time_s", "interval_s"], values="rate").sort("time_s")
    own_bps = pl.sum_horizontal([pl.col(f"departed_bytes.{k}") for k in kinds]) * 8.0
    cross = pl.col("departed_bytes") * 8.0 - own_bps
    return wide.select(
        (pl.col("time_s") - delay).alias("time_s"),
        pl.col("interval_s"),
        pl.lit(capacity).alias("capacity_bps"),
        cross.alias("cross_bps"),
        (pl.lit(capacity) - cross).alias("available_bps"),
    )
