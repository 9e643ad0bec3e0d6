"""Runs the pacing study's missing replications at 2.5 Gbit/s with the build of its committed runs.

Run with commit 41c36c5's package (build afd39b679fb2) installed: ``python drive.py STAGING JOBS``.
See README.md. Each sweep writes to its own directory under STAGING, first seeded with the runs
the repository already has, so only the missing runs are made.
"""

import shutil
import sys
from pathlib import Path

import cclab
from cclab.studies import pacing as p

BUILD = "afd39b679fb2"
REPLICATIONS = 20
COMMITTED = Path(__file__).resolve().parents[2] / "docs" / "studies" / "pacing" / "cache"


def variant_scenario(v: p.Variant, scenario: cclab.Scenario) -> cclab.Scenario:
    # Today's pacing.with_variant; commit 41c36c5, which this runs under, has it only inside PacingStudy.run.
    settings = {}
    for i in range(len(p.HIGH_SPEED)):
        settings |= {f"flows[{i}].cc": v.cc, f"flows[{i}].pacing": v.pacing, f"flows[{i}].cc_params": p.CC_PARAMS[v.cc]}
    return scenario.with_(**settings)


def sweeps() -> list[tuple[str, str, cclab.Scenario, dict]]:
    """(staging name, committed cache directory, scenario, grid), most needed first."""
    base = p.PacingStudy().scenario("pacing.toml").with_(**{"run.duration": "200s", "run.warmup": "100s"})
    fig5_base = p.forward_only(base, long_lived=p.FIG5_LONG_LIVED)
    jobs = [
        (
            f"fig5/{v.slug}/{p.TOP}",
            f"fig5/{v.slug}/{p.TOP}",
            variant_scenario(v, fig5_base).with_(**{p.RATE_KEY: p.TOP}),
            {},
        )
        for v in p.VARIANTS
    ]
    for rtts in (p.RTTS[-1:], p.RTTS[:-1]):
        for buffer in ["100%bdp", "25%bdp", "50%bdp"]:
            for v in p.VARIANTS:
                top = variant_scenario(v, base).with_(**{p.RATE_KEY: p.TOP})
                jobs.append(
                    (f"fig4/{v.slug}@{buffer}", f"fig4/{v.slug}", top, {p.RTT2_KEY: rtts, p.BUFFER_KEY: [buffer]})
                )
    for v in p.VARIANTS:
        top = variant_scenario(v, base).with_(**{p.RATE_KEY: p.TOP, p.OVERHEAD_KEY: p.overhead(p.TOP)})
        jobs.append(
            (f"fig4-overhead/{v.slug}", f"fig4-overhead/{v.slug}", top, {p.RTT2_KEY: p.RTTS, p.BUFFER_KEY: ["100%bdp"]})
        )
    return jobs


def main() -> None:
    if len(sys.argv) != 3:
        print("usage: python drive.py STAGING JOBS", file=sys.stderr)
        raise SystemExit(2)
    staging, jobs = Path(sys.argv[1]), int(sys.argv[2])
    build = cclab._core.build_id()
    if not build.startswith(BUILD):
        print(
            f"drive.py: this is build {build[:12]}; the committed runs are build {BUILD}: install commit 41c36c5",
            file=sys.stderr,
        )
        raise SystemExit(2)
    for name, committed, scenario, grid in sweeps():
        runs = staging / name / "runs"
        if not runs.exists():
            shutil.copytree(COMMITTED / committed / "runs", runs)
        print(f"== {name}", flush=True)
        cclab.sweep(scenario, grid=grid, replications=REPLICATIONS, jobs=jobs, out=staging / name, progress=False)
    print("all done", flush=True)


if __name__ == "__main__":
    main()
