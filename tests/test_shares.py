"""``Result.shares``: how the bottleneck's capacity was spent, by kind of traffic."""

from __future__ import annotations

import cclab
import pytest

# The seed paper's TCP-friendliness mix (its Fig. 5) at a small scale: two
# high-speed flows, long-lived TCP both ways, 25 small TCP flows with a 64-segment
# window, and web traffic, RTTs and starts drawn per flow.
MIX = """
[run]
duration = "12s"
warmup = "4s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "20Mbps"
delay = "5ms"
[[flows]]
name = "bic"
count = 2
cc = "bic"
recovery = "sack"
rtt = "40ms"
start = "0s..1s"
[[flows]]
name = "long"
count = 2
recovery = "sack"
rtt = "20ms..200ms"
start = "0s..1s"
[[flows]]
name = "long-back"
count = 2
direction = "reverse"
recovery = "sack"
rtt = "20ms..200ms"
start = "0s..1s"
[[flows]]
name = "small"
count = 25
recovery = "sack"
max_window = 64
rtt = "20ms..200ms"
start = "0s..1s"
[[flows]]
name = "web"
recovery = "sack"
rtt = "20ms..200ms"
app = { kind = "web", load = 0.3 }
"""

KINDS = {"high-speed": ["bic"], "long": ["long", "long-back"], "small": ["small"], "web": ["web"]}


@pytest.fixture(scope="module")
def mix() -> cclab.Result:
    return cclab.run(MIX, seed=1)


def test_shares_sum_to_one_and_lie_in_zero_to_one(mix: cclab.Result) -> None:
    for link in ("left->right", "right->left"):
        shares = mix.shares(link, KINDS)
        assert shares["kind"].to_list() == [*KINDS, "overhead", "unused"]
        assert abs(float(shares["share"].sum()) - 1.0) < 1e-9
        assert all(0.0 <= s <= 1.0 for s in shares["share"].to_list()), shares


def test_only_groups_whose_data_crosses_the_link_count(mix: cclab.Result) -> None:
    forward = mix.shares("left->right", KINDS)
    row = dict(zip(forward["kind"].to_list(), forward["goodput_bps"].to_list(), strict=True))
    flows = mix.flows
    long_forward = float(flows.filter(flows["name"] == "long")["goodput_bps"].sum())
    assert row["long"] == pytest.approx(long_forward, rel=0, abs=1e-6)
    back = mix.shares("right->left", KINDS)
    only_back = dict(zip(back["kind"].to_list(), back["goodput_bps"].to_list(), strict=True))
    assert only_back["web"] == 0.0 and only_back["small"] == 0.0 and only_back["long"] > 0.0
    # The default: every group a kind of its own.
    assert mix.shares()["kind"].to_list() == ["bic", "long", "long-back", "small", "web", "overhead", "unused"]


def test_shares_of_a_busy_bottleneck(mix: cclab.Result) -> None:
    shares = dict(zip(*mix.shares("left->right", KINDS)[["kind", "share"]].get_columns(), strict=True))
    utilization = float(mix.links.filter(mix.links["name"] == "left->right")["utilization"][0])
    assert shares["unused"] == pytest.approx(1.0 - utilization)
    # Headers are 4 % of a full segment, so overhead is at least that of the goodput.
    goodput = sum(shares[k] for k in KINDS)
    assert shares["overhead"] >= 0.035 * goodput


def test_bad_links_and_groups_are_named(mix: cclab.Result) -> None:
    with pytest.raises(ValueError, match="no link 'left->middle'"):
        mix.shares("left->middle")
    with pytest.raises(ValueError, match="is not a bottleneck direction"):
        mix.shares("web[0].snd->left")
    with pytest.raises(ValueError, match="unknown flow group 'smal'"):
        mix.shares(groups={"small": ["smal"]})


def test_constant_sizes_counts_and_durations_cross_the_binding() -> None:
    """A constant size, count or duration is a number in the resolved JSON (serde
    could not tag a bare number inside the distribution's object)."""
    scn = cclab.load("examples/dumbbell.toml").to_dict()
    scn["flows"] = [
        {"name": "a", "rtt": "40ms", "app": {"kind": "arrivals", "rate": "5/s", "size": "10KB"}},
        {"name": "w", "rtt": "20ms..60ms", "app": {"kind": "web", "sessions": "1/s", "size": "5KB", "page_gap": "1s"}},
    ]
    resolved = cclab.Scenario.from_dict(scn).validate()
    assert resolved["flows"][0]["app"]["size"] == {"kind": "constant", "bytes": 10000}
    web = resolved["flows"][1]["app"]
    assert web["pages"] == {"kind": "constant", "value": 10.0}
    assert web["page_gap"] == {"kind": "constant", "value": 1.0}
    assert resolved["flows"][1]["rtt"] == {"uniform": [0.02, 0.06]}
