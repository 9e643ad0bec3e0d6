"""Available bandwidth from link departures (issue 8, item 2)."""

from typing import Any

import cclab
import polars as pl
import pytest


def scenario(observe: bool = True) -> dict[str, Any]:
    """A 5 Mbit/s dumbbell: one TCP bulk flow, one UDP source at 2 Mbit/s."""
    scn: dict[str, Any] = {
        "name": "availbw",
        "run": {"duration": "20s", "warmup": "4s", "seed": 1},
        "topology": {
            "kind": "dumbbell",
            "access": {"rate": "1Gbps"},
            "bottleneck": {"rate": "5Mbps", "delay": "10ms", "buffer": "1bdp"},
        },
        "flows": [
            {"name": "bulk", "recovery": "sack", "rtt": "40ms"},
            # The cbr rate counts the whole datagram (its 28 bytes of UDP/IP
            # headers included), in the wire bytes the link's rate counts.
            {
                "name": "cross",
                "protocol": "udp",
                "rtt": "40ms",
                "app": {"kind": "cbr", "rate": "2Mbps", "size": "1000B"},
            },
        ],
    }
    if observe:
        scn["observe"] = [{"links": ["left->right"], "metrics": ["departed_bytes*"], "every": "200ms"}]
    return scn


def test_udp_taking_2_of_5_mbps_leaves_3_mbps_to_the_tcp_flow() -> None:
    res = cclab.run(scenario())
    table = cclab.available_bandwidth(res, link="left->right", own="tcp_data")
    assert table.columns == ["time_s", "interval_s", "capacity_bps", "cross_bps", "available_bps"]
    window = table.filter(pl.col("time_s") > 4.0)
    mean = window["available_bps"].mean()
    assert isinstance(mean, float)
    assert abs(mean - 3e6) <= 0.02 * 3e6, mean
    assert (window["capacity_bps"] == 5e6).all()


def test_counter_rates_difference_each_series() -> None:
    res = cclab.run(scenario())
    rates = cclab.counter_rates(res.metrics)
    udp = rates.filter(pl.col("metric") == "departed_bytes.udp")
    assert udp["interval_s"].round(9).unique().to_list() == [0.2]
    late = udp.filter(pl.col("time_s") > 4.0)["rate"].mean()
    assert isinstance(late, float)
    assert abs(late * 8 - 2e6) <= 0.02 * 2e6
    # Per kind sums to the total, interval by interval.
    wide = rates.filter(pl.col("flow_id").is_null()).pivot(on="metric", index="time_s", values="rate")
    kinds = pl.sum_horizontal([pl.col(f"departed_bytes.{k}") for k in cclab.availbw.TRAFFIC_KINDS])
    assert ((wide["departed_bytes"] - wide.select(kinds).to_series()).abs() < 1e-6).all()


def test_per_flow_departures_agree_with_the_per_kind_counts() -> None:
    """Two TCP flows and the UDP source: the link counts each flow's bytes, and
    those add up, sample by sample, to its independent per-kind counters."""
    scn = scenario()
    scn["flows"][0]["count"] = 2
    scn["observe"][0]["metrics"] = ["departed_bytes*"]
    res = cclab.run(scn)
    series = res.series.filter(pl.col("metric") == "departed_bytes.flow")
    assert sorted(series["flow_id"].to_list()) == sorted(res.flows["flow_id"].to_list())
    names = res.flows.select("flow_id", "name")
    per_flow = (
        res.metrics.filter(pl.col("metric") == "departed_bytes.flow")
        .join(names, on="flow_id")
        .group_by("time_s", "name")
        .agg(pl.col("value").sum())
        .pivot(on="name", index="time_s", values="value")
    )
    kinds = res.metrics.filter(pl.col("metric").str.starts_with("departed_bytes.") & pl.col("flow_id").is_null())
    # A join need not keep row order (the last row was once an early sample).
    wide = kinds.pivot(on="metric", index="time_s", values="value").join(per_flow, on="time_s").sort("time_s")
    assert wide.height > 50
    assert (wide["bulk"] == wide["departed_bytes.tcp_data"]).all()
    assert (wide["cross"] == wide["departed_bytes.udp"]).all()
    assert wide["bulk"][-1] > 0
    # Left to bulk[0]: capacity minus the UDP source and bulk[1]; and so on. The
    # two flows' cross traffic minus the non-TCP traffic is the link's total.
    by_kind = cclab.available_bandwidth(res, link="left->right", own="tcp_data")
    one = cclab.available_bandwidth(res, link="left->right", flow="bulk[0]")
    other = cclab.available_bandwidth(res, link="left->right", flow="bulk[1]")
    total = cclab.counter_rates(res.metrics.filter(pl.col("metric") == "departed_bytes"))["rate"] * 8
    identity = one["cross_bps"] + other["cross_bps"] - by_kind["cross_bps"] - total
    assert identity.abs().max() < 1e-6 * 5e6  # type: ignore[operator]
    late = one.filter(pl.col("time_s") > 4.0)
    assert (late["cross_bps"] > 2e6 * 0.98).all()  # at least the UDP source


def test_bad_arguments_name_the_argument() -> None:
    unobserved = cclab.run(scenario(observe=False) | {"run": {"duration": "1s", "warmup": "0s", "seed": 1}})
    with pytest.raises(ValueError, match="^link: 'left->right' has no departure series"):
        cclab.available_bandwidth(unobserved, link="left->right", own="tcp_data")
    with pytest.raises(ValueError, match="^link: no link named 'nowhere'"):
        cclab.available_bandwidth(unobserved, link="nowhere", own="tcp_data")
    with pytest.raises(ValueError, match="^own: "):
        cclab.available_bandwidth(unobserved, link="left->right", own="tcp")
    with pytest.raises(ValueError, match="^own: give either"):
        cclab.available_bandwidth(unobserved, link="left->right", own="tcp_data", flow="bulk")
    with pytest.raises(ValueError, match="^flow"):
        cclab.available_bandwidth(unobserved, link="left->right", flow="nobody")
