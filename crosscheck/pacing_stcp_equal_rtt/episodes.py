"""Why does one of two paced STCP flows with equal RTTs keep nearly the whole
2.5 Gbit/s link, when two unpaced ones share it evenly? Run by hand, not in CI:

    python crosscheck/pacing_stcp_equal_rtt/episodes.py > crosscheck/pacing_stcp_equal_rtt/result.txt

and, to see why the other algorithms even out under the same conditions, with
another of the study's congestion controls (its study parameters):

    cd crosscheck/pacing_stcp_equal_rtt && python episodes.py highspeed > result-highspeed.txt

The pacing study's Fig. 4 point (RTTs 40/40 ms, buffer 100 % of the BDP,
2.5 Gbit/s, the whole background) is run for 60 s with STCP, unpaced and
paced, with the study's replications 1 and 3 (their seeds), observing both
high-speed flows' cwnd and whether they are in loss recovery every 10 ms.
Printed per run: the flows' loss episodes (entries into recovery), how many
of them the other flow shared (it entered recovery within one 100 ms of it),
the window each flow came down from and went to in its episodes, and the
ratio of the two windows every 10 s.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import cclab
import polars as pl
from cclab.studies.loss_episodes import entries
from cclab.studies.pacing import CC_PARAMS, STUDY
from cclab.sweep import derive_seed

DURATION = "60s"
#: A loss episode of the other flow this close counts as shared (about one RTT with the queue).
SHARED_WITHIN_S = 0.1
REPLICATIONS = (1, 3)


def run(cc: str, pacing: str, replication: int) -> pl.DataFrame:
    data: dict[str, Any] = STUDY.scenario("pacing.toml").to_dict()
    data["run"] |= {"duration": DURATION, "warmup": "0s"}
    for flow in data["flows"][:2]:
        flow |= {"cc": cc, "cc_params": CC_PARAMS[cc], "pacing": pacing}
    data["observe"] = [
        {"flows": ["hs1", "hs2"], "metrics": ["cwnd", "recovery.in_recovery"], "every": "10ms", "on_change": True}
    ]
    data["run"]["seed"] = derive_seed(data["run"]["seed"], replication)  # the study's seed for it
    return cclab.run(data).metrics


def cwnd_at(frame: pl.DataFrame, flow: str, t: float) -> float:
    """The flow's last recorded cwnd at or before `t` (segments)."""
    rows = frame.filter((pl.col("component") == flow) & (pl.col("metric") == "cwnd") & (pl.col("time_s") <= t))
    return rows.sort("time_s")["value"][-1] if rows.height else float("nan")


def main() -> None:
    cc = sys.argv[1] if len(sys.argv) > 1 else "scalable"
    if cc not in CC_PARAMS:
        print(
            f"episodes.py: unknown congestion control {cc!r}; the study's are {', '.join(CC_PARAMS)}", file=sys.stderr
        )
        sys.exit(2)
    print(f"cclab {cclab.__version__}, build {cclab._core.build_id()[:12]}; {cc} {CC_PARAMS[cc]}, RTTs 40/40 ms, "
          f"100 % BDP, 2.5 Gbit/s, {DURATION}, observed every 10 ms")  # fmt: skip
    for replication in REPLICATIONS:
        for pacing in ("none", "rtt"):
            frame = run(cc, pacing, replication)
            print(f"\nreplication {replication}, pacing {pacing!r}:")
            episodes = {f: entries(frame, f, 0.0, math.inf) for f in ("hs1", "hs2")}
            for flow, other in (("hs1", "hs2"), ("hs2", "hs1")):
                mine, theirs = episodes[flow], episodes[other]
                shared = sum(any(abs(t - u) <= SHARED_WITHIN_S for u in theirs) for t in mine)
                print(f"  {flow}: {len(mine)} loss episodes, {shared} shared with {other}")
            for t in (10.0, 20.0, 30.0, 40.0, 50.0, 59.99):
                w1, w2 = cwnd_at(frame, "hs1", t), cwnd_at(frame, "hs2", t)
                ratio = w1 / w2 if w2 else float("inf")
                print(f"  t={t:5.1f} s  cwnd hs1 {w1:8.0f}  hs2 {w2:8.0f}  ratio {ratio:7.2f}")
            print("  episodes after 10 s (time: which flows; each flow's cwnd 50 ms before -> 500 ms after):")
            merged = sorted((t, f) for f, ts in episodes.items() for t in ts if t >= 10.0)
            for t, f in merged[:12]:
                w = {g: (cwnd_at(frame, g, t - 0.05), cwnd_at(frame, g, t + 0.5)) for g in ("hs1", "hs2")}
                print(f"    {t:7.3f} {f}: hs1 {w['hs1'][0]:.0f} -> {w['hs1'][1]:.0f}, "
                      f"hs2 {w['hs2'][0]:.0f} -> {w['hs2'][1]:.0f}")  # fmt: skip


if __name__ == "__main__":
    main()
