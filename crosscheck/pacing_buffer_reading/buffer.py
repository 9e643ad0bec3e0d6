"""Does our reading of the paper's buffer size explain the gap between our Fig. 4
HSTCP ratios and the paper's? Run by hand, not in CI:

    python crosscheck/pacing_buffer_reading/buffer.py > crosscheck/pacing_buffer_reading/result.txt

The paper sizes the buffer at "100 % of the BDP, the link rate times the mean
RTT of the flows" without saying which flows. The study averages the base RTTs
of every flow instance, background included (`buffer = "1bdp"`). Read as the
mean RTT of the two high-speed flows, the buffer at RTT ratio 6 (40 and 240 ms)
would be 2.5 Gbit/s x 140 ms = 43 750 packets of 1000 bytes, against the
study's 31 700 to 37 600. This reruns the Fig. 4 (a) point at RTT ratio 6 for
HSTCP and paced HSTCP (the two the paper gives numbers for: about 140 and about
70) with that buffer, with the study's seeds, and prints them beside the
study's committed runs of the same point and seeds.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import cclab
from cclab.studies.pacing import (
    BUFFER_KEY,
    PACKET_BYTES,
    PAPER_FIG4,
    RATE_KEY,
    RTT2_KEY,
    SPEEDS,
    STUDY,
    TOP_REPLICATIONS,
    VARIANTS,
    per_run,
    with_variant,
)

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "docs" / "studies" / "pacing" / "cache" / "fig4"
RTTS_S = (0.040, 0.240)
HIGH_SPEED_BUFFER = round(SPEEDS["2.5Gbps"] * statistics.mean(RTTS_S) / (PACKET_BYTES * 8))
#: Where the runs are kept, so that an interrupted or repeated run of this script resumes.
CACHE = Path("/tmp/cclab-crosscheck-buffer-reading")
LABELS = ("HSTCP", "paced HSTCP")


def committed(slug: str) -> tuple[list[tuple[int, float, float, int]], set[int]]:
    """The study's runs of the point, (replication, 40 ms flow's and 240 ms flow's goodput in
    Mbit/s, buffer), and their seeds."""
    runs, seeds = [], set()
    for meta_path in sorted((COMMITTED / slug).glob("runs/*/meta.json")):
        meta = json.loads(meta_path.read_text())
        point = meta["point"]
        if point.get("flows[1].rtt") != "240ms" or point.get("topology.bottleneck.buffer") != "100%bdp":
            continue
        summary = json.loads((meta_path.parent / "summary.json").read_text())
        goodput = {f["name"]: f["goodput_bps"] / 1e6 for f in summary["flows"]}
        runs.append((meta["replication"], goodput["hs1"], goodput["hs2"], summary["links"][0]["buffer_pkts"]))
        seeds.add(meta["seed"])
    return sorted(runs), seeds


def describe(label: str, runs: list[tuple[int, float, float, int]]) -> None:
    ratios = [hs1 / hs2 if hs2 > 0 else float("inf") for _, hs1, hs2, _ in runs]
    of_means = statistics.mean(r[1] for r in runs) / statistics.mean(r[2] for r in runs)
    buffers = sorted({r[3] for r in runs})
    print(f"  {label:34s} ratio of means {of_means:7.1f}  median {statistics.median(ratios):7.1f}  "
          f"runs {', '.join(f'{r:.1f}' for r in ratios)}  buffer {buffers[0]}..{buffers[-1]} packets")  # fmt: skip


def main() -> None:
    base: Any = STUDY.scenario("pacing.toml")
    print(f"cclab {cclab.__version__}, build {cclab._core.build_id()[:12]}; RTTs 40/240 ms at 2.5 Gbit/s, "
          f"{TOP_REPLICATIONS} replications (the study's seeds)")  # fmt: skip
    for variant in (v for v in VARIANTS if v.label in LABELS):
        print(f"\n{variant.label} (paper: about {PAPER_FIG4[variant.label]:.0f})")
        study_runs, study_seeds = committed(variant.slug)
        describe("the study (1bdp of all flows)", study_runs)
        scenario = with_variant(base, variant).with_(**{RATE_KEY: "2.5Gbps", RTT2_KEY: "240ms",
                                                        BUFFER_KEY: f"{HIGH_SPEED_BUFFER}pkts"})  # fmt: skip
        result = cclab.sweep(scenario, replications=TOP_REPLICATIONS, jobs=2, out=CACHE / variant.slug)
        runs = per_run(result, variant, {}).sort("replication")
        describe("high-speed flows' mean RTT (140 ms)",
                 list(runs.select("replication", "hs1_mbps", "hs2_mbps", "buffer_pkts").iter_rows()))  # fmt: skip
        same = set(result.flows["seed"].unique().to_list()) == study_seeds
        print(f"  the same seeds as the study's runs: {same}")


if __name__ == "__main__":
    main()
