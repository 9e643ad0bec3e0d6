"""The wireless study's own computations, on small hand-made tables."""

from __future__ import annotations

import math

import polars as pl
import pytest
from cclab.studies.wireless import loss_responses, mape_and_ratio, rewindow


def _frame(truth: list[float], est: list[float]) -> pl.DataFrame:
    return pl.DataFrame({"time_s": [0.5 * (i + 1) for i in range(len(truth))], "truth_bps": truth, "est_bps": est})


def test_mape_and_ratio_are_the_mean_error_and_the_mean_ratio() -> None:
    mape, ratio = mape_and_ratio(_frame([4.0, 2.0], [5.0, 1.0]))
    assert mape == pytest.approx(100 * (0.25 + 0.5) / 2)
    assert ratio == pytest.approx((1.25 + 0.5) / 2)


def test_rewindow_merges_equal_intervals_and_drops_an_incomplete_last_group() -> None:
    merged = rewindow(_frame([1.0, 3.0, 5.0, 7.0, 9.0], [2.0, 2.0, 6.0, 6.0, 100.0]), 2)
    assert merged["time_s"].to_list() == [1.0, 2.0]
    assert merged["truth_bps"].to_list() == [2.0, 6.0]
    assert merged["est_bps"].to_list() == [2.0, 6.0]
    # A bias survives the merging; errors of opposite sign within a window cancel.
    assert mape_and_ratio(rewindow(_frame([1.0, 1.0], [0.5, 1.5]), 2))[0] == 0.0
    assert rewindow(_frame([1.0], [1.0]), 2).height == 0
    assert rewindow(_frame([1.0, 2.0], [1.0, 2.0]), 1).equals(_frame([1.0, 2.0], [1.0, 2.0]))


def _samples(flow: int, rows: list[tuple[float, float, float]]) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for t, cwnd, ssthresh in rows:
        out += [{"time_s": t, "flow_id": flow, "metric": "cwnd", "value": cwnd},
                {"time_s": t, "flow_id": flow, "metric": "ssthresh", "value": ssthresh}]  # fmt: skip
    return out


def test_loss_responses_pair_the_window_before_with_the_new_ssthresh_per_flow() -> None:
    rows = _samples(0, [(0.0, 4, 1e9), (1.0, 20, 1e9), (1.01, 11, 10), (1.02, 12, 10), (2.0, 30, 10), (2.01, 1, 15)])
    rows += _samples(1, [(0.0, 4, 1e9), (0.5, 8, 1e9), (0.51, 4, 4), (3.0, 40, 4), (3.01, 20, 20)])
    rows += [{"time_s": 1.0, "flow_id": 0, "metric": "srtt", "value": 0.1}]  # other metrics are ignored
    frame = pl.DataFrame(rows).sample(fraction=1.0, shuffle=True, seed=3)  # any row order
    ev = loss_responses(frame, warmup=0.9)
    assert ev.rows() == [(0, 1.01, 20.0, 10.0), (0, 2.01, 30.0, 15.0), (1, 3.01, 40.0, 20.0)]
    # Flow 1's response at 0.51 s is inside the warm-up: left out.
    assert loss_responses(frame, warmup=10.0).height == 0
    assert math.isclose(ev["ssthresh_after"].sum() / ev["cwnd_before"].sum(), 45 / 90)
