"""The pacing report's generated discussion states what its tables hold."""

from __future__ import annotations

import math

import polars as pl
from cclab.studies.pacing import (
    KINDS,
    NO_OVERHEAD,
    VARIANTS,
    Plan,
    _discussion,
    _equal_rtt_fairness,
    _friendliness_against_paper,
    _p,
    _pacing_by_buffer,
    _phase_effect,
    _rtt_context,
    _share_cell,
    friendliness_rank_sums,
    overhead,
    pacing_rank_sums,
    rank_sum_p,
)

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
    t2 = t2.with_columns(pl.lit(0.05).alias("high-speed_mean"))
    shares = {f"{kind}_mean": 0.1 for kind in KINDS}
    f5 = pl.DataFrame([{"variant": v.label, "speed": TOP, **shares} for v in VARIANTS])
    return runs, t2, f5


def test_the_timeout_paragraph_counts_the_runs_with_a_timeout_and_compares_their_efficiency() -> None:
    efficiencies = {v.label: [(100.0, 0), (100.0, 0)] for v in VARIANTS}
    efficiencies["paced HSTCP"] = [(94.0, 1), (100.0, 0)]
    efficiencies["STCP"] = [(96.0, 2), (100.0, 0)]
    runs, t2, f5 = _frames(efficiencies)
    text = "\n".join(_discussion(PLAN, runs, t2, {}, {}, {}, f5))
    assert f"In 2 of 16 Table 2 runs at {TOP}" in text
    assert "paced HSTCP 1, STCP 1" in text
    assert "those runs average 95.00 % efficiency against 100.00 % for the others" in text
    assert "with 2 replications, one such run lowers a variant's mean by about 2.50 points" in text


def test_without_timeouts_there_is_no_timeout_paragraph() -> None:
    runs, t2, f5 = _frames({v.label: [(99.0, 0)] for v in VARIANTS})
    assert not any("Timeouts at" in p for p in _discussion(PLAN, runs, t2, {}, {}, {}, f5))


def test_the_rtt_fairness_paragraph_says_whether_the_papers_ratio_lies_within_our_runs() -> None:
    runs, t2, f5 = _frames({v.label: [(100.0, 0)] for v in VARIANTS})
    ratios = {v.label: 50.0 for v in VARIANTS} | {"HSTCP": 100.0, "paced HSTCP": 60.0, "STCP": 250.0}
    singles = {v.label: [40.0, 60.0] for v in VARIANTS} | {"HSTCP": [63.3, 150.0], "STCP": [120.0, 280.0]}
    medians = ratios | {"paced HSTCP": 120.0}
    text = "\n".join(_discussion(PLAN, runs, t2, ratios, medians, singles, f5))
    assert "HSTCP 100.0 against about 140 (0.71x; our single runs 63.3 to 150.0)" in text
    assert "paced HSTCP 60.0 against about 70 (0.86x; our single runs 40.0 to 60.0)" in text
    # HSTCP's 140 lies within 63.3-150, paced HSTCP's 70 above 40-60, STCP's 300 above 120-280.
    assert "the paper's value lies within the range of our single runs for 1 of 3." in text
    # Paced below unpaced by the means for HSTCP (60 < 100) and STCP (50 < 250); by the medians for STCP only
    # (paced HSTCP's median 120 is above HSTCP's 100); BI-TCP and CUBIC are equal, which is not lower.
    assert (
        "advantage for 2 of 4 (HSTCP, STCP) algorithms by the ratio of means, and for 1 of 4 (STCP) by the median"
        in text
    )
    # Two runs each: paced HSTCP's both below HSTCP's is one of the two most extreme of the 6 splits.
    assert "gives p = 0.333 for HSTCP, p = 1.000 for BI-TCP, p = 0.333 for STCP, p = 1.000 for CUBIC; with these " \
           "replications no p can be below 0.333." in text  # fmt: skip
    assert "`crosscheck/pacing_buffer_reading/` reran HSTCP" in text  # at the top speed the cross-check ran at


def test_the_rank_sum_test_gives_the_exact_two_sided_p() -> None:
    # Mann-Whitney's tables for three runs a side: U = 0 gives 0.1, U = 1 gives 0.2.
    assert rank_sum_p([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]) == 0.1
    assert rank_sum_p([1.0, 2.0, 4.0], [3.0, 5.0, 6.0]) == 0.2
    assert rank_sum_p([6.0, 5.0, 4.0], [3.0, 2.0, 1.0]) == 0.1  # two-sided: the other direction alike
    assert math.isclose(rank_sum_p([1.0, 2, 3, 4, 5], [6.0, 7, 8, 9, math.inf]), 2 / 252)
    assert rank_sum_p([1.0, 1.0], [1.0, 1.0]) == 1.0  # all tied: no evidence either way
    # Twenty runs a side, every one of a above every one of b: only the two extreme splits of C(40, 20).
    assert rank_sum_p([float(x) for x in range(20, 40)], [float(x) for x in range(20)]) == 2 / math.comb(40, 20)


def test_the_rank_sum_test_counts_the_same_splits_as_listing_them() -> None:
    from itertools import combinations

    a, b = [3.0, 1.0, 4.0, 1.0, 5.0, math.inf], [9.0, 2.0, 6.0, 5.0, 3.0]  # ties, and an infinite ratio
    pooled = sorted(a + b)
    rank = {x: sum(i + 1 for i, y in enumerate(pooled) if y == x) / pooled.count(x) for x in pooled}
    mean = len(a) * (len(pooled) + 1) / 2
    observed = abs(sum(rank[x] for x in a) - mean)
    splits = list(combinations(pooled, len(a)))
    listed = sum(abs(sum(rank[x] for x in split) - mean) >= observed - 1e-9 for split in splits) / len(splits)
    assert math.isclose(rank_sum_p(a, b), listed)


def test_every_run_timing_out_still_reads() -> None:
    runs, t2, f5 = _frames({v.label: [(90.0, 1)] for v in VARIANTS})
    assert "every one of them did, and they average 90.00 % efficiency." in "\n".join(
        _discussion(PLAN, runs, t2, {}, {}, {}, f5)
    )


def _fig4_runs(goodputs: dict[str, list[tuple[float, float]]]) -> pl.DataFrame:
    rows = [
        {"variant": label, "rtt2": rtt, "send_overhead": NO_OVERHEAD, "hs1_mbps": hs1, "hs2_mbps": hs2}
        for label, pairs in goodputs.items()
        for rtt in PLAN.rtts
        for hs1, hs2 in pairs
    ]
    return pl.DataFrame(rows)


def test_the_equal_rtt_paragraph_counts_the_runs_one_flow_dominated() -> None:
    goodputs = {v.label: [(1100.0, 1000.0), (1000.0, 1200.0)] for v in VARIANTS}
    goodputs["paced STCP"] = [(2200.0, 20.0), (60.0, 2140.0), (1200.0, 1000.0)]
    text = _equal_rtt_fairness(PLAN, _fig4_runs(goodputs))
    assert text is not None
    assert "HSTCP 53 %" in text  # the median of 52.4 % and 54.5 %
    assert "paced STCP 97 %" in text  # the median of 99.1 %, 97.3 % and 54.5 %
    assert "One flow took more than 90 % of the pair in 2 of 3 runs of paced STCP." in text
    assert "MIMD" in text


def test_the_equal_rtt_paragraph_says_when_no_flow_dominated_and_does_not_explain_other_algorithms() -> None:
    goodputs = {v.label: [(1100.0, 1000.0)] for v in VARIANTS}
    assert "In no run did one flow take more than 90 % of the pair." in str(
        _equal_rtt_fairness(PLAN, _fig4_runs(goodputs))
    )
    goodputs["paced HSTCP"] = [(2200.0, 20.0)]
    text = str(_equal_rtt_fairness(PLAN, _fig4_runs(goodputs)))
    assert "1 of 1 runs of paced HSTCP" in text
    assert "MIMD" not in text and "We have not established why." in text


def _overhead_runs(pairs: dict[tuple[str, str], list[tuple[float, float]]]) -> pl.DataFrame:
    """Fig. 4 runs at the first buffer: (variant, send overhead) -> each run's two throughputs, at every RTT."""
    rows = [
        {"variant": label, "rtt2": rtt, "buffer": PLAN.buffers[0], "send_overhead": o, "hs1_mbps": hs1,
         "hs2_mbps": hs2, "ratio": hs1 / hs2}
        for (label, o), runs in pairs.items()
        for rtt in PLAN.rtts
        for hs1, hs2 in runs
    ]  # fmt: skip
    return pl.DataFrame(rows)


def test_the_phase_paragraph_counts_ratios_within_the_runs_without_overhead() -> None:
    runs = _overhead_runs(
        {("HSTCP", NO_OVERHEAD): [(100.0, 10.0), (100.0, 20.0)], ("HSTCP", overhead(PLAN.top)): [(70.0, 10.0)]}
    )
    text = _phase_effect(PLAN, runs)
    assert text is not None
    # 7.0 with the overhead, within the single runs' 5.0 to 10.0 without it, at every RTT.
    n = len(PLAN.rtts)
    assert f"of the {n} points run both ways, the ratio of means with the overhead lies within the range of the " \
           f"single runs without it at {n}. That is a coarse test (2 or more runs per point, one buffer): at its " \
           "resolution the overhead changed no ratio" in text  # fmt: skip


def test_the_phase_paragraph_names_the_points_outside_the_spread_and_skips_points_run_one_way() -> None:
    runs = _overhead_runs({("STCP", NO_OVERHEAD): [(300.0, 1.0), (200.0, 1.0)],
                           ("STCP", overhead(PLAN.top)): [(100.0, 1.0)],
                           ("CUBIC", NO_OVERHEAD): [(2.0, 1.0)]})  # fmt: skip
    text = str(_phase_effect(PLAN, runs))
    assert (
        f"of the {len(PLAN.rtts)} points run both ways" in text and "without it at 0. That is a coarse test (1 " in text
    )
    assert f"STCP at RTT {PLAN.rtts[0]} (250.00 without, single runs 200.00 to 300.00; 100.00 with)" in text
    assert ". Outside the range: " in text
    assert "CUBIC" not in text and "changed no ratio" not in text
    assert _phase_effect(PLAN, _overhead_runs({("CUBIC", NO_OVERHEAD): [(2.0, 1.0)]})) is None


def test_the_equal_rtt_explanation_is_given_only_when_paced_stcp_is_the_one_dominated() -> None:
    goodputs = {v.label: [(1100.0, 1000.0)] for v in VARIANTS}
    goodputs["STCP"] = [(2200.0, 20.0)]
    text = str(_equal_rtt_fairness(PLAN, _fig4_runs(goodputs)))
    assert "1 of 1 runs of STCP" in text and "MIMD" not in text and "We have not established why." in text


def test_the_rtt_context_gives_the_buffer_and_the_measured_rtt_ratio() -> None:
    rows = [
        {"variant": "HSTCP", "buffer": "100%bdp", "send_overhead": NO_OVERHEAD, "rtt2": rtt, "buffer_pkts": 37500,
         "hs1_rtt_ms": 100.0, "hs2_rtt_ms": 100.0 + 2 * (int(rtt[:-2]) - 40)}
        for rtt in PLAN.rtts
    ]  # fmt: skip
    text = str(_rtt_context(PLAN, pl.DataFrame(rows)))
    # 37 500 packets of 8000 bits at 2.5 Gbit/s: 120 ms, 3.0 times the 12 500 packets of 40 ms at that rate.
    assert "with both high-speed flows at 40ms, the 100%bdp buffer is 37500 packets over the runs" in text
    assert "the mean base RTT of all flows (120 ms; each run draws its background's RTTs) times the rate" in text
    assert "3.0 times the 40ms flows' own BDP" in text
    frame = pl.DataFrame(rows)
    ranged = str(_rtt_context(PLAN, pl.concat([frame, frame.with_columns(buffer_pkts=pl.lit(36250, dtype=pl.Int64))])))
    assert "buffer is 36250 to 37500 packets over the runs: the mean base RTT of all flows (116 to 120 ms" in ranged
    assert "times the rate, 2.9 to 3.0 times the 40ms flows' own BDP" in ranged
    assert "were 100 and 500 ms, an effective ratio of 5.0 against the nominal 6" in text


def test_pacing_by_buffer_divides_paced_by_unpaced_and_skips_infinite_ratios() -> None:
    rows = [
        {"variant": label, "buffer": "100%bdp", "send_overhead": NO_OVERHEAD, "rtt2": PLAN.rtts[-1],
         "ratio_of_means": means, "ratio_median": median}
        for label, means, median in [("HSTCP", 100.0, 80.0), ("paced HSTCP", 50.0, 120.0), ("STCP", 300.0,
                                     math.inf), ("paced STCP", 900.0, 10.0)]
    ]  # fmt: skip
    text = str(_pacing_by_buffer(PLAN, pl.DataFrame(rows)))
    assert "HSTCP 100%bdp 0.50 (1.50); STCP 100%bdp 3.00 (–)." in text
    assert "BI-TCP" not in text


def test_the_background_paragraph_infers_a_lighter_background_only_from_a_narrower_spread() -> None:
    runs, t2, f5 = _frames({v.label: [(100.0, 0)] for v in VARIANTS})
    text = "\n".join(_discussion(PLAN, runs, t2, {}, {}, {}, f5))
    # Ours span 0 points at 2.5 Gbit/s, the paper's 99.94 to 99.99 span 0.05.
    assert f"**The background at {TOP}.** There the high-speed flows carry 5.0 to 5.0 % of the link" in text
    assert "span 0.00 points across the paper's five variants against the paper's 0.05. With that little" in text
    runs, t2, f5 = _frames({v.label: [(100.0 - i, 0)] for i, v in enumerate(VARIANTS)})
    text = "\n".join(_discussion(PLAN, runs, t2, {}, {}, {}, f5))
    assert "against the paper's 0.05." in text and "lighter background" not in text


def test_a_ratio_just_outside_the_spread_gets_the_decimals_that_tell_it_from_the_bound() -> None:
    runs = _overhead_runs(
        {("STCP", NO_OVERHEAD): [(1.207, 1.0), (0.841, 1.0)], ("STCP", overhead(PLAN.top)): [(1.209, 1.0)]}
    )
    assert f"STCP at RTT {PLAN.rtts[0]} (1.024 without, single runs 0.841 to 1.207; 1.209 with)" in str(
        _phase_effect(PLAN, runs)
    )


def _shares(speed: str, standard: dict[str, float]) -> pl.DataFrame:
    """Fig. 5 rows at one speed: each variant's share left to standard TCP, all of it as small TCP."""
    return pl.DataFrame(
        [{"variant": v.label, "speed": speed, "long-lived TCP_mean": 0.0, "small TCP_mean": standard.get(v.label, 0.0),
          "web_mean": 0.0, "high-speed_mean": 0.0} for v in VARIANTS]
    )  # fmt: skip


def test_the_friendliness_order_is_checked_against_each_statement_of_the_paper() -> None:
    papers = {"paced HSTCP": 0.5, "HSTCP": 0.4, "paced BI-TCP": 0.3, "BI-TCP": 0.2, "STCP": 0.1}
    plan = Plan(["100Mbps"], "100Mbps", PLAN.rtts, PLAN.buffers, "200s", "100s")
    assert "agrees on the full order at 100Mbps." in _friendliness_against_paper(plan, _shares("100Mbps", papers))
    swapped = papers | {"HSTCP": 0.25}
    text = _friendliness_against_paper(plan, _shares("100Mbps", swapped))
    assert "agrees on none of its statements, and differs on the full order at 100Mbps." in text
    # At 2.5 Gbit/s the paper names the most friendly variant and says HSTCP is less friendly than BI-TCP.
    top = _friendliness_against_paper(PLAN, _shares(TOP, {"paced BI-TCP": 0.5, "HSTCP": 0.4, "BI-TCP": 0.3}))
    assert top == (f"Against the paper's ordering: ours agrees on paced BI-TCP the most friendly at {TOP}, and "
                   f"differs on HSTCP less friendly than BI-TCP at {TOP}.")  # fmt: skip
    low = Plan(["20Mbps"], TOP, PLAN.rtts, PLAN.buffers, "200s", "100s")
    assert "agrees on BI-TCP the least friendly at 20Mbps." in _friendliness_against_paper(
        low, _shares("20Mbps", {v.label: 0.5 for v in VARIANTS} | {"BI-TCP": 0.1})
    )


def _ratio_runs(ratios: dict[tuple[str, str], list[float]]) -> pl.DataFrame:
    """Fig. 4 runs at PLAN's largest RTT without send overhead: per (variant, buffer), the runs' ratios."""
    return pl.DataFrame(
        [
            {"variant": label, "buffer": buffer, "rtt2": PLAN.rtts[-1], "send_overhead": NO_OVERHEAD, "ratio": r}
            for (label, buffer), values in ratios.items()
            for r in values
        ]
    )


def test_pacing_rank_sums_test_paced_against_unpaced_per_buffer_and_give_the_direction() -> None:
    runs = _ratio_runs(
        {
            ("STCP", "100%bdp"): [1.0, 2.0, 3.0],
            ("paced STCP", "100%bdp"): [4.0, 5.0, 6.0],  # every paced run above: the most extreme split
            ("HSTCP", "100%bdp"): [1.0, 4.0, 5.0],
            ("paced HSTCP", "100%bdp"): [2.0, 3.0, 6.0],
            ("BI-TCP", "100%bdp"): [1.0],  # no paced runs: not tested
        }
    )
    tests = pacing_rank_sums(PLAN, runs)
    assert set(tests) == {("STCP", "100%bdp"), ("HSTCP", "100%bdp")}
    p, up = tests["STCP", "100%bdp"]
    assert math.isclose(p, 2 / math.comb(6, 3)) and up
    p, up = tests["HSTCP", "100%bdp"]
    assert p == 1.0 and not up  # rank sums 10 against 11: the middle; medians 3 against 4


def test_friendliness_rank_sums_compare_the_share_left_to_standard_tcp() -> None:
    rows = [
        {"variant": v, "speed": TOP, "long-lived TCP": share, "small TCP": 0.0, "web": 0.0}
        for v, shares in {"HSTCP": [0.01, 0.02], "paced HSTCP": [0.03, 0.04], "BI-TCP": [0.02, 0.03]}.items()
        for share in shares
    ]
    ps = friendliness_rank_sums(pl.DataFrame(rows), TOP, [("paced HSTCP", "HSTCP"), ("HSTCP", "BI-TCP")])
    assert math.isclose(ps["paced HSTCP", "HSTCP"], 2 / 6)
    assert math.isclose(ps["HSTCP", "BI-TCP"], rank_sum_p([0.01, 0.02], [0.02, 0.03]))
    assert friendliness_rank_sums(pl.DataFrame(rows), "20Mbps", [("HSTCP", "BI-TCP")]) == {}


def test_a_fig5_cell_gives_the_share_in_percent_with_its_half_width() -> None:
    row = {"web_mean": 0.251, "web_std": 0.01, "n": 20, "web_ci95": 0.014}
    assert _share_cell(row, "web") == "25.1 ± 1.4"
    assert _share_cell({"web_mean": 0.251, "web_ci95": math.nan}, "web") == "25.1"  # a single replication


def test_a_small_p_keeps_its_digits() -> None:
    assert _p(0.0555) == "0.056" and _p(6.9e-06) == "6.9e-06" and _p(0.001) == "0.001"
