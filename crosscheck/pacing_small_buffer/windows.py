"""Why does pacing raise the throughput ratio of two high-speed flows at 25 % BDP? Run by hand, not in CI:

    python crosscheck/pacing_small_buffer/windows.py > crosscheck/pacing_small_buffer/result.txt

The pacing study's Fig. 4 point at RTT ratio 6 (40 and 240 ms, 2.5 Gbit/s, the study's background)
with a 25 % BDP buffer: paced over unpaced, the ratio of mean throughputs rises for every
algorithm (STCP 342.7 -> 1803.5, significantly), where the paper says pacing halves it. The
study's loss-episode runs rule out synchronisation: the long-RTT flow's episodes coincide with
the short-RTT flow's in 98-100 % of cases paced or not, and the episode rates do not change.
So this follows each flow's window through its episodes: for HSTCP and STCP, unpaced and paced,
the study's replications 0 and 1 (their seeds), over the study's measurement window (100-200 s),
it prints each flow's mean window, its episodes, the window each episode starts from, the
lowest window within 1 s after it (the depth of the cut), and the window from the start of the
run to its end (at 5, 10, 20, 50, 100, 150 and 200 s).
"""

from __future__ import annotations

import statistics
import sys
from typing import Any

import cclab
import polars as pl
from cclab.studies.loss_episodes import entries
from cclab.studies.pacing import BUFFER_KEY, CC_PARAMS, HIGH_SPEED, RATE_KEY, RTT2_KEY, STUDY, VARIANTS, with_variant
from cclab.sweep import derive_seed

START, END = 100.0, 200.0
REPLICATIONS = (0, 1)
LABELS = ("HSTCP", "paced HSTCP", "STCP", "paced STCP")
TRAJECTORY_S = (5.0, 10.0, 20.0, 50.0, 100.0, 150.0, 200.0)


def run(label: str, replication: int) -> cclab.Result:
    variant = next(v for v in VARIANTS if v.label == label)
    base = STUDY.scenario("pacing.toml")
    data: dict[str, Any] = (
        with_variant(base, variant).with_(**{RATE_KEY: "2.5Gbps", RTT2_KEY: "240ms", BUFFER_KEY: "25%bdp"}).to_dict()
    )
    data["observe"] = [
        {"flows": list(HIGH_SPEED), "metrics": ["cwnd", "recovery.in_recovery"], "every": "10ms", "on_change": True}
    ]
    return cclab.run(data, seed=derive_seed(int(data["run"]["seed"]), replication), allow_long=True)


def cwnd_series(metrics: pl.DataFrame, flow: str) -> tuple[list[float], list[float]]:
    rows = metrics.filter((pl.col("component") == flow) & (pl.col("metric") == "cwnd")).sort("time_s")
    return rows["time_s"].to_list(), rows["value"].to_list()


def at(times: list[float], values: list[float], t: float) -> float:
    """The last value recorded at or before t."""
    import bisect

    i = bisect.bisect_right(times, t) - 1
    return values[i] if i >= 0 else float("nan")


def lowest(times: list[float], values: list[float], start: float, end: float) -> float:
    import bisect

    i, j = bisect.bisect_left(times, start), bisect.bisect_right(times, end)
    return min(values[i:j], default=at(times, values, start))


def describe(result: cclab.Result, flow: str) -> str:
    times, values = cwnd_series(result.metrics, flow)
    episodes = entries(result.metrics, flow, START, END)
    inside = [v for t, v in zip(times, values, strict=True) if START <= t < END]
    before = [at(times, values, t - 0.05) for t in episodes]
    after = [lowest(times, values, t, t + 1.0) for t in episodes]
    depths = [a / b for a, b in zip(after, before, strict=True) if b > 0]
    mean = statistics.fmean(inside) if inside else float("nan")
    trajectory = " ".join(f"{at(times, values, t - 0.01):.0f}" for t in TRAJECTORY_S)
    return (f"{flow}: mean cwnd {mean:7.0f}, {len(episodes):3d} episodes, window before one: median "
            f"{statistics.median(before) if before else float('nan'):7.0f}; lowest within 1 s over before: median "
            f"{statistics.median(depths) if depths else float('nan'):.3f}; cwnd at "
            f"{'/'.join(f'{t:g}' for t in TRAJECTORY_S)} s: {trajectory}")  # fmt: skip


def main() -> None:
    print(f"cclab {cclab.__version__}, build {cclab._core.build_id()[:12]}; RTTs 40/240 ms, 25 % BDP, 2.5 Gbit/s, "
          f"the study's background, observed every 10 ms, measured over [{START:g}, {END:g}) s")  # fmt: skip
    for label in LABELS:
        for replication in REPLICATIONS:
            result = run(label, replication)
            goodput = {r["name"]: r["goodput_bps"] / 1e6 for r in result.flows.iter_rows(named=True)
                       if r["name"] in HIGH_SPEED}  # fmt: skip
            print(f"\n{label} ({CC_PARAMS[next(v for v in VARIANTS if v.label == label).cc]}), replication "
                  f"{replication}: hs1 {goodput['hs1']:.1f} Mbit/s, hs2 {goodput['hs2']:.2f} Mbit/s, ratio "
                  f"{goodput['hs1'] / goodput['hs2']:.1f}")  # fmt: skip
            for flow in HIGH_SPEED:
                print("  " + describe(result, flow))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
