"""The l4s study: its own computations, its quick reproduction, and its report rendered again from its cache."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import polars as pl
import pytest
from cclab.studies.l4s import HEIST, quantiles, rfc_balance
from conftest import cclab as cli
from conftest import seed_study_cache


def test_the_rfc_model_of_the_balance_plateaus_below_the_prague_rtt_target() -> None:
    # RFC 9332 Appendix C.2: r_L / r_C ~= (R + 15 ms) / (1.4 max(R, 25 ms)).
    assert rfc_balance(20) == pytest.approx(35 / 35)
    assert rfc_balance(5) == pytest.approx(20 / 35)
    assert rfc_balance(100) == pytest.approx(115 / 140)
    assert rfc_balance(25) == pytest.approx(40 / 35)  # the peak, where the operator's k = 2 was chosen


def test_the_published_testbed_ratios_are_prague_over_cubic() -> None:
    # Heist and Morton's table lists each pair in both orders; every ratio has Prague ahead, as they reported.
    assert all(len(v) == 2 and all(1.5 < x < 3 for x in v) for v in HEIST.values())


def test_quantiles_take_the_samples_after_the_warmup_only() -> None:
    metrics = pl.DataFrame(
        {
            "time_s": [0.5, 1.0, 1.5, 2.0, 2.5, 3.0],
            "metric": ["m", "m", "m", "m", "m", "other"],
            "value": [100.0, 1.0, 2.0, 3.0, 4.0, 50.0],
        }
    )
    p50, p99 = quantiles(SimpleNamespace(metrics=metrics), "m", warmup=1.0)  # type: ignore[arg-type]
    assert p50 == pytest.approx(2.5)
    assert p99 == pytest.approx(3.97)


@pytest.mark.long
def test_reproduce_l4s_quick_and_again_from_its_cache(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    out = tmp_path / "l4s"
    seed_study_cache(request.config, "l4s", out)
    proc = cli("reproduce", "l4s", "--quick", "--replications", "2", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    report = (out / "report.md").read_text()
    for heading in ("| claim | published | ours | verdict |", "## Setup", "## Rate balance", "## Queue delay",
                    "## Why DualPI2 exists", "## Beside the published figures"):  # fmt: skip
        assert heading in report, heading
    for link in (line.split("](")[1].rstrip(")") for line in report.splitlines() if line.startswith("![")):
        assert (out / link).is_file(), link
    balance = pl.read_csv(out / "tables" / "balance.csv")
    assert balance.height == 1 * 2  # the quick plan: 40 Mbit/s, two RTTs
    # Through DualPI2 both flows get a share, the link is full and the L queue stays far below a millisecond.
    assert ((balance["ratio_mean"] > 0.5) & (balance["ratio_mean"] < 3)).all()
    assert (balance["utilisation_mean"] > 0.95).all()
    assert (balance["l_p99_ms_mean"] < 1).all() and (balance["c_p50_ms_mean"] > 5).all()
    step = pl.read_csv(out / "tables" / "step.csv")
    assert sorted(step["pair"].unique().to_list()) == ["dctcp", "prague"]
    # In one step queue CUBIC is starved at these RTTs.
    assert (step["classic_share_mean"] < 0.1).all()

    # --from-cache renders the same report and tables from the cached runs and runs nothing.
    again = tmp_path / "again"
    shutil.copytree(out / "cache", again / "cache")
    proc = cli("reproduce", "l4s", "--quick", "--replications", "2", "--out", str(again), "--from-cache")
    assert proc.returncode == 0, proc.stderr
    assert (again / "report.md").read_text() == report.replace(str(out), str(again))
    for csv in sorted((out / "tables").glob("*.csv")):
        assert pl.read_csv(again / "tables" / csv.name).equals(pl.read_csv(csv)), csv.name
    assert sorted(p.name for p in (again / "figures").iterdir()) == sorted(p.name for p in (out / "figures").iterdir())
