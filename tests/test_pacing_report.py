"""The pacing report's generated discussion states what its tables hold."""

from __future__ import annotations

import polars as pl
from cclab.studies.pacing import KINDS, VARIANTS, Plan, _discussion

TOP = "2.5Gbps"
PLAN = Plan([TOP], TOP, ["40ms", "240ms"], ["100%bdp"], "200s", "100s")


def _frames(efficiencies: dict[str, list[tuple[float, int]]]) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    runs = pl.DataFrame(
        [
            {"variant": label, "speed": TOP, "efficiency_pct": eff, "hs_timeouts": timeouts}
            for label, rows in efficiencies.items()
            for eff, timeouts in rows
        ]
    )
    t2 = runs.group_by(["variant", "speed"]).agg(efficiency_pct_mean=pl.col("efficiency_pct").mean())
    shares = {f"{kind}_mean": 0.1 for kind in KINDS}
    f5 = pl.DataFrame([{"variant": v.label, "speed": TOP, **shares} for v in VARIANTS])
    return runs, t2, f5


def test_the_timeout_paragraph_counts_the_runs_with_a_timeout_and_compares_their_efficiency() -> None:
    efficiencies = {v.label: [(100.0, 0), (100.0, 0)] for v in VARIANTS}
    efficiencies["paced HSTCP"] = [(94.0, 1), (100.0, 0)]
    efficiencies["STCP"] = [(96.0, 2), (100.0, 0)]
    runs, t2, f5 = _frames(efficiencies)
    text = "\n".join(_discussion(PLAN, runs, t2, {}, f5))
    assert f"In 2 of 16 Table 2 runs at {TOP}" in text
    assert "paced HSTCP 1, STCP 1" in text
    assert "those runs average 95.00 % efficiency against 100.00 % for the others" in text


def test_without_timeouts_there_is_no_timeout_paragraph() -> None:
    runs, t2, f5 = _frames({v.label: [(99.0, 0)] for v in VARIANTS})
    assert not any("Timeouts at" in p for p in _discussion(PLAN, runs, t2, {}, f5))
