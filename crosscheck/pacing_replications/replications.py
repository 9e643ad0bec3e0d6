"""The paper's RTT-fairness numbers with the paper's twenty replications. Run by hand, not in CI:

    python crosscheck/pacing_replications/replications.py > crosscheck/pacing_replications/result.txt

Seed 000 gives, at RTT ratio 6 (40 and 240 ms) with a 100 % BDP buffer at 2.5 Gbit/s, a throughput
ratio of about 140 for HSTCP, about 70 for paced HSTCP and about 300 for STCP, each the mean of 20
runs. The study runs 5 replications per point at 2.5 Gbit/s; its per-run ratios are heavy-tailed,
so with 5 against 5 HSTCP's ratio of means (80.4 against 54.1 paced) and its medians (80.5 against
119.8) disagree on whether pacing helped, and no rank-sum p can fall below 0.008. This reruns that
point for HSTCP and STCP, each with and without pacing, with 20 replications (the first 5 are the
study's seeds: their throughputs are checked against the study's committed table), and tests the
pacing effect on all 20.
"""

from __future__ import annotations

import statistics
from pathlib import Path

import cclab
import polars as pl
from cclab.studies.pacing import (
    BUFFER_KEY,
    NO_OVERHEAD,
    PAPER_FIG4,
    RATE_KEY,
    RTT2_KEY,
    RTTS,
    STUDY,
    TOP,
    TOP_REPLICATIONS,
    VARIANTS,
    per_run,
    rank_sum_p,
    with_variant,
)

ROOT = Path(__file__).resolve().parents[2]
STUDY_RUNS = ROOT / "docs" / "studies" / "pacing" / "tables" / "fig4_runs.csv"
BUFFER = "100%bdp"
#: The paper's replications per point.
REPLICATIONS = 20
#: Where the runs are kept, so that an interrupted or repeated run of this script resumes.
CACHE = Path("/tmp/cclab-crosscheck-replications")
#: Each algorithm the paper gives a ratio for, unpaced and paced.
PAIRS = (("HSTCP", "paced HSTCP"), ("STCP", "paced STCP"))


def runs_of(label: str) -> list[tuple[int, float, float]]:
    """(replication, 40 ms flow's and 240 ms flow's goodput in Mbit/s) of each of the point's runs."""
    variant = next(v for v in VARIANTS if v.label == label)
    scenario = with_variant(STUDY.scenario("pacing.toml"), variant).with_(
        **{RATE_KEY: TOP, RTT2_KEY: RTTS[-1], BUFFER_KEY: BUFFER}
    )
    result = cclab.sweep(scenario, replications=REPLICATIONS, jobs=2, out=CACHE / variant.slug)
    runs = per_run(result, variant, {}).sort("replication")
    return list(runs.select("replication", "hs1_mbps", "hs2_mbps").iter_rows())


def summary(runs: list[tuple[int, float, float]]) -> tuple[float, float, list[float]]:
    """Ratio of the mean throughputs, median of the per-run ratios, and the per-run ratios."""
    ratios = [hs1 / hs2 if hs2 > 0 else float("inf") for _, hs1, hs2 in runs]
    of_means = statistics.mean(r[1] for r in runs) / statistics.mean(r[2] for r in runs)
    return of_means, statistics.median(ratios), ratios


def main() -> None:
    print(f"cclab {cclab.__version__}, build {cclab._core.build_id()[:12]}; {TOP}, RTTs {RTTS[0]}/{RTTS[-1]}, "
          f"buffer {BUFFER}, {REPLICATIONS} replications")  # fmt: skip
    study = pl.read_csv(STUDY_RUNS).filter(
        (pl.col("rtt2") == RTTS[-1]) & (pl.col("buffer") == BUFFER) & (pl.col("send_overhead") == NO_OVERHEAD)
    )
    ratios = {}
    for label in (label for pair in PAIRS for label in pair):
        runs = runs_of(label)
        committed = {r["replication"]: (r["hs1_mbps"], r["hs2_mbps"]) for r in study.filter(
            pl.col("variant") == label).iter_rows(named=True)}  # fmt: skip
        same = len(committed) == TOP_REPLICATIONS and all(
            abs(hs1 - committed[i][0]) < 1e-6 and abs(hs2 - committed[i][1]) < 1e-6
            for i, hs1, hs2 in runs[:TOP_REPLICATIONS]
        )
        paper = f"about {PAPER_FIG4[label]:.0f}" if label in PAPER_FIG4 else "no value"
        print(f"\n{label} (paper: {paper}); the first {TOP_REPLICATIONS} runs are the study's committed ones: "
              f"{same}")  # fmt: skip
        for n in (TOP_REPLICATIONS, REPLICATIONS):
            of_means, median, per_run = summary(runs[:n])
            print(f"  {n:2d} runs: ratio of means {of_means:6.1f}, median {median:6.1f}, "
                  f"range {min(per_run):.1f} to {max(per_run):.1f}")  # fmt: skip
        ratios[label] = summary(runs)[2]
        print("  per run: " + ", ".join(f"{r:.1f}" for r in ratios[label]))
    for unpaced, paced in PAIRS:
        unpaced_ratios, paced_ratios = ratios[unpaced], ratios[paced]
        below = sum(r < statistics.median(unpaced_ratios) for r in paced_ratios)
        first = rank_sum_p(paced_ratios[:TOP_REPLICATIONS], unpaced_ratios[:TOP_REPLICATIONS])
        print(f"\n{paced} against {unpaced}, exact two-sided Wilcoxon rank-sum test of the per-run ratios: "
              f"p = {rank_sum_p(paced_ratios, unpaced_ratios):.2g} with {REPLICATIONS} runs each "
              f"(p = {first:.3f} with the first "
              f"{TOP_REPLICATIONS}); {below} of {len(paced_ratios)} paced runs below the unpaced median")  # fmt: skip


if __name__ == "__main__":
    main()
