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
    wide = rates.pivot(on="metric", index="time_s", values="rate")
    kinds = pl.sum_horizontal([pl.col(f"departed_bytes.{k}") for k in cclab.availbw.TRAFFIC_KINDS])
    assert ((wide["departed_bytes"] - wide.select(kinds).to_series()).abs() < 1e-6).all()


def test_bad_arguments_name_the_argument() -> None:
    unobserved = cclab.run(scenario(observe=False) | {"run": {"duration": "1s", "warmup": "0s", "seed": 1}})
    with pytest.raises(ValueError, match="^link: 'left->right' has no departed_bytes"):
        cclab.available_bandwidth(unobserved, link="left->right", own="tcp_data")
    with pytest.raises(ValueError, match="^link: no link named 'nowhere'"):
        cclab.available_bandwidth(unobserved, link="nowhere", own="tcp_data")
    with pytest.raises(ValueError, match="^own: "):
        cclab.available_bandwidth(unobserved, link="left->right", own="tcp")
