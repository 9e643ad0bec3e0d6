"""Loss episodes of two flows sharing a bottleneck: how often they lose together.

A flow's loss episode starts when it enters loss recovery (its
``recovery.in_recovery`` goes from 0 to 1). One overflow of the bottleneck's
queue reaches the two senders at different times: a drop there is noticed by
flow i within one of its round trips, so an episode of flow 2 at t2 and one of
flow 1 at t1 can come from the same overflow only if t1 lies in
[t2 - rtt2, t2 + rtt1]. We call flow 2's episode *shared* when flow 1 has an
episode in that window, and compare the shared fraction with what chance alone
would give: were flow 1's episodes a Poisson process of its measured rate
(lambda1, unrelated to flow 2's), a window of rtt1 + rtt2 would hold one of them
with probability 1 - exp(-lambda1 (rtt1 + rtt2)). A shared fraction well above
that is synchronisation: the flows lose together.

Synchronised losses are what make high-speed TCP unfair between RTTs (Xu, Harfoush
and Rhee, "Binary increase congestion control for fast, long distance networks",
INFOCOM 2004, Section 3): when both flows cut their windows at the same events, the
shorter-RTT flow regrows faster between them, and the throughput ratio grows as a
power of the RTT ratio; with losses that fall on each flow independently, in
proportion to its rate, the ratio stays near the RTT ratio's own.
"""

from __future__ import annotations

import bisect
import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import polars as pl

    from cclab.result import Result


def observe(flows: list[str]) -> dict[str, Any]:
    """The ``observe`` entry that records ``flows``' entries into and exits from loss recovery (each
    flow's recovery state every 10 ms, kept only where it changes: a few hundred rows a run)."""
    return {"flows": flows, "metrics": ["recovery.in_recovery"], "every": "10ms", "on_change": True}


def entries(metrics: pl.DataFrame, flow: str, start: float, end: float) -> list[float]:
    """Times in [start, end) at which ``flow`` entered loss recovery, in order."""
    import polars as pl

    rows = metrics.filter((pl.col("component") == flow) & (pl.col("metric") == "recovery.in_recovery"))
    times, previous = [], 0.0
    for t, v in rows.sort("time_s").select("time_s", "value").iter_rows():
        if v == 1.0 and previous == 0.0 and start <= t < end:
            times.append(t)
        previous = v
    return times


def shared(mine: list[float], other: list[float], before: float, after: float) -> int:
    """How many of ``mine`` have an episode of ``other`` (sorted) in [t - before, t + after]."""
    count = 0
    for t in mine:
        i = bisect.bisect_left(other, t - before)
        count += i < len(other) and other[i] <= t + after
    return count


def by_chance(other_count: int, span: float, window: float) -> float:
    """The probability that a window of ``window`` s holds one of ``other_count`` episodes spread
    over ``span`` s as a Poisson process: what sharing would be without synchronisation."""
    return 1.0 - math.exp(-other_count / span * window)


def episode_row(result: Result, pair: tuple[str, str], start: float, end: float) -> dict[str, Any]:
    """One run's two flows (``pair``: the shorter-RTT one first): goodputs, their ratio, mean RTTs,
    and for each flow its episodes in [start, end), how many of them the other flow shared, and how
    many chance alone would have shared (:func:`by_chance` times the episodes)."""
    import polars as pl

    flows = {r["name"]: r for r in result.flows.filter(pl.col("name").is_in(pair)).iter_rows(named=True)}
    rtt = {f: flows[f]["rtt_mean_s"] or math.nan for f in pair}
    times = {f: entries(result.metrics, f, start, end) for f in pair}
    goodput = {f: flows[f]["goodput_bps"] / 1e6 for f in pair}
    row: dict[str, Any] = {
        **{f"{f}_mbps": goodput[f] for f in pair},
        "ratio": goodput[pair[0]] / goodput[pair[1]] if goodput[pair[1]] > 0 else math.inf,
        **{f"{f}_rtt_ms": rtt[f] * 1e3 for f in pair},
        "span_s": end - start,
    }
    for mine, other in (pair, pair[::-1]):
        chance = by_chance(len(times[other]), end - start, rtt[mine] + rtt[other])
        row |= {
            f"{mine}_episodes": len(times[mine]),
            f"{mine}_shared": shared(times[mine], times[other], rtt[mine], rtt[other]),
            f"{mine}_shared_by_chance": len(times[mine]) * chance,
        }
    return row
