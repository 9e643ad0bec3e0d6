"""The buffers study's measures of an allocation over time, on small hand-made series."""

from __future__ import annotations

import math

import polars as pl
import pytest
from cclab.studies.buffers import (
    FIG4_START,
    SHARP_FALL,
    BuffersStudy,
    converged_at,
    first_within,
    share_at_least,
    sharp_falls,
)


def test_sharp_falls_counts_only_falls_beyond_the_fraction() -> None:
    # 100 -> 50 (a halving) and 80 -> 59 (26 %) count; 100 -> 76 (24 %), rises and a flat step do not.
    assert sharp_falls([100, 50, 80, 59, 59, 100, 76], 0.25) == 2
    # A series that starts at 0 never counts a fall from 0, and a fall to 0 counts.
    assert sharp_falls([0, 0, 10, 0], 0.25) == 1
    assert sharp_falls([], 0.25) == 0
    assert sharp_falls([5.0], 0.25) == 0


def test_first_within_is_the_first_meeting_converged_at_the_last_lasting_one() -> None:
    times = [1.0, 2.0, 3.0, 4.0, 5.0]
    a = [100, 90, 50, 80, 85]
    b = [50, 80, 100, 78, 84]
    # 90 and 80 are within 20 % of 90 at t = 2; they part at t = 3 and stay together from t = 4.
    assert first_within(times, a, b, 0.2) == 2.0
    assert converged_at(times, a, b, 0.2) == 4.0
    assert first_within(times[:2], [10, 10], [1, 1], 0.2) is None


def test_share_at_least() -> None:
    assert share_at_least([2, 1, 3, 0], [1, 1, 4, 1]) == 0.5
    assert math.isnan(share_at_least([], []))
    with pytest.raises(ValueError):
        share_at_least([1], [1, 2])


def test_allocation_measures_on_a_hand_made_pair() -> None:
    # 100 ms samples from 0 to 20 s; flow 2 starts at 3 s.
    times = [i / 10 for i in range(201)]
    # Flow 1: 200 KB, halving to 100 KB at 6 s and at 12 s (regrowing at once after each), then 100 KB from 14 s.
    flow1 = [100e3 if t >= 14 else (100e3 if round(t * 10) in (60, 120) else 200e3) for t in times]
    # Flow 2: 100 KB throughout.
    flow2 = [100e3 for _ in times]
    alloc = pl.DataFrame({"time_s": times, "flow1": flow1, "flow2": flow2})
    m = BuffersStudy._allocation_measures(alloc, 3.0)
    # Falls at 6.0, 12.0 and 14.0 s (the rises after them are not falls); flow 2 never falls.
    assert (m["flow1_falls"], m["flow2_falls"]) == (3, 0)
    # The one-second mean ending at 14.0 + k / 10 s holds k + 1 samples of 100 KB and 9 - k of 200 KB:
    # 100 + 10 (9 - k) KB, within 20 % of 100 KB (at most 125 KB) from k = 7, t = 14.7 s, to the end.
    assert m["converge_s"] == pytest.approx(14.7 - 3.0)
    # They first meet there too: before 14 s flow 1's one-second mean is never below 190 KB.
    assert m["first_within_s"] == pytest.approx(14.7 - 3.0)
    # Means and swings from FIG4_START + 1 s on.
    after = [x for t, x in zip(times, flow1, strict=True) if t >= FIG4_START + 1.0]
    mean = sum(after) / len(after)
    assert m["flow1_kb"] == pytest.approx(mean / 1e3)
    assert m["flow2_cv"] == 0.0 and m["flow1_cv"] > 0.0
    assert SHARP_FALL == 0.25
