"""Loss episodes: entries into recovery, the window in which two flows' episodes count as one
overflow's, and the sharing chance alone gives."""

from __future__ import annotations

import math

import polars as pl
import pytest
from cclab.studies.loss_episodes import by_chance, entries, shared


def _recovery(flow: str, changes: list[tuple[float, float]]) -> pl.DataFrame:
    return pl.DataFrame(
        [{"component": flow, "metric": "recovery.in_recovery", "time_s": t, "value": v} for t, v in changes]
        + [{"component": flow, "metric": "cwnd", "time_s": 0.5, "value": 1.0}]
    )


def test_an_episode_starts_where_recovery_goes_from_0_to_1_inside_the_window() -> None:
    frame = _recovery("a", [(0.0, 0.0), (1.0, 1.0), (1.2, 0.0), (3.0, 1.0), (3.5, 0.0), (9.0, 1.0)])
    assert entries(frame, "a", 2.0, 9.0) == [3.0]
    assert entries(frame, "a", 0.0, 10.0) == [1.0, 3.0, 9.0]


def test_staying_in_recovery_is_one_episode_and_unsorted_samples_are_ordered_first() -> None:
    frame = _recovery("a", [(2.0, 1.0), (1.0, 0.0), (2.5, 1.0), (4.0, 0.0)])
    assert entries(frame, "a", 0.0, 10.0) == [2.0]
    assert entries(frame, "b", 0.0, 10.0) == []


def test_an_episode_is_shared_when_the_other_flows_lies_within_before_and_after_it_bounds_included() -> None:
    # Flow 2 (rtt2 = 0.3) loses at 10.0: flow 1 (rtt1 = 0.05) shares it from 9.7 to 10.05.
    assert shared([10.0], [9.7], before=0.3, after=0.05) == 1
    assert shared([10.0], [10.05], before=0.3, after=0.05) == 1
    assert shared([10.0], [9.69], before=0.3, after=0.05) == 0
    assert shared([10.0], [10.06], before=0.3, after=0.05) == 0
    assert shared([1.0, 5.0, 9.0], [0.9, 1.05, 8.0], before=0.2, after=0.1) == 1
    assert shared([], [1.0], 1.0, 1.0) == 0
    assert shared([1.0], [], 1.0, 1.0) == 0


def test_sharing_by_chance_is_a_poisson_process_holding_one_episode_in_the_window() -> None:
    # 50 episodes in 100 s, window 0.4 s: 1 - exp(-0.5 x 0.4).
    assert by_chance(50, 100.0, 0.4) == pytest.approx(1 - math.exp(-0.2))
    assert by_chance(0, 100.0, 0.4) == 0.0
    assert by_chance(10_000, 100.0, 1.0) == pytest.approx(1.0)


def test_the_pacing_summary_pools_episodes_over_runs_and_divides_mean_throughputs() -> None:
    from cclab.studies.pacing import episode_summary

    def run(hs1: float, hs2: float, episodes: tuple[int, int], shared: tuple[int, int]) -> dict[str, object]:
        return {
            "background": "the study's", "buffer": "25%bdp", "variant": "HSTCP", "hs1_mbps": hs1, "hs2_mbps": hs2,
            "ratio": hs1 / hs2, "span_s": 100.0, "hs1_rtt_ms": 50.0, "hs2_rtt_ms": 250.0,
            "hs1_episodes": episodes[0], "hs1_shared": shared[0], "hs1_shared_by_chance": episodes[0] * 0.1,
            "hs2_episodes": episodes[1], "hs2_shared": shared[1], "hs2_shared_by_chance": episodes[1] * 0.2,
        }  # fmt: skip

    # A run without an episode of hs2 adds nothing to its fractions (no NaN from 0 / 0).
    summary = episode_summary(pl.DataFrame([run(90, 10, (30, 0), (0, 0)), run(60, 40, (10, 4), (2, 3))]))
    row = summary.row(0, named=True)
    assert row["n"] == 2
    assert row["ratio_of_means"] == pytest.approx(75 / 25)
    assert row["ratio_median"] == pytest.approx((9 + 1.5) / 2)
    assert row["hs1_episodes_per_100s"] == pytest.approx(40 / 200 * 100)
    assert row["hs1_shared"] == pytest.approx(2 / 40)
    assert row["hs1_shared_by_chance"] == pytest.approx(0.1)
    assert row["hs2_shared"] == pytest.approx(3 / 4)
    assert row["hs2_shared_by_chance"] == pytest.approx(0.2)


def test_the_high_speed_flows_buffer_is_one_bdp_at_40_ms_in_1000_byte_packets() -> None:
    from cclab.studies.pacing import hs_flows_buffer

    assert hs_flows_buffer("20Mbps") == "100pkts"
    assert hs_flows_buffer("100Mbps") == "500pkts"
