"""Sweeps: seeds, caching and resume, executors, aggregates."""

import importlib
import json
from collections.abc import Iterator, Sequence
from pathlib import Path

import cclab
import polars as pl
import pytest
from cclab.executors import Executor, LocalExecutor, Task
from conftest import EXAMPLES

SHORT = cclab.load(EXAMPLES / "dumbbell.toml").with_(**{"run.duration": "3s", "run.warmup": "1s"})
GRID = {"flows[0].recovery": ["newreno", "sack"], "topology.bottleneck.rate": ["20Mbps", "50Mbps"]}


class Counting(Executor):
    """Runs tasks locally, counting them, and optionally stops after `stop_after` results."""

    def __init__(self, stop_after: int | None = None) -> None:
        self.inner = LocalExecutor(2)
        self.submitted = 0
        self.stop_after = stop_after

    def run(self, tasks: Sequence[Task]) -> Iterator[tuple[Task, str]]:
        self.submitted += len(tasks)
        for n, item in enumerate(self.inner.run(tasks), start=1):
            yield item
            if self.stop_after is not None and n >= self.stop_after:
                raise KeyboardInterrupt

    def close(self) -> None:
        self.inner.close()


def test_seed_derivation_is_deterministic_and_per_replication() -> None:
    assert cclab.derive_seed(1, 0) == cclab.derive_seed(1, 0)
    seeds = [cclab.derive_seed(1, r) for r in range(20)]
    assert len(set(seeds)) == 20
    assert cclab.derive_seed(2, 0) != cclab.derive_seed(1, 0)
    assert all(0 <= s < 2**63 for s in seeds)
    res = cclab.sweep(SHORT, grid=GRID, replications=2, progress=False)
    # Every grid point uses the same seeds (common random numbers).
    per_point = res.flows.group_by(list(GRID)).agg(pl.col("seed").unique().sort())
    assert all(s.to_list() == sorted(seeds[:2]) for s in per_point["seed"])


def test_tidy_table_and_aggregate_schema() -> None:
    res = cclab.sweep(SHORT, grid=GRID, replications=3, progress=False)
    assert res.flows.height == 2 * 2 * 3 * 2  # points x replications x flows
    assert res.flows.columns[:5] == [*GRID, "run", "replication", "seed"]
    assert res.links.height == 2 * 2 * 3 * 10
    agg = res.summary
    assert agg.height == 4 * 2  # points x flow instances
    for col in ("n", "goodput_bps_mean", "goodput_bps_std", "goodput_bps_ci95"):
        assert col in agg.columns
    assert (agg["n"] == 3).all()
    # The interval is t(0.975, 2) = 4.303 standard errors wide.
    row = agg.row(0, named=True)
    assert row["goodput_bps_ci95"] == pytest.approx(4.303 * row["goodput_bps_std"] / 3**0.5)


def test_cache_hits_and_resume_after_an_interrupted_sweep(tmp_path: Path) -> None:
    out = tmp_path / "sw"
    stopper = Counting(stop_after=3)
    with pytest.raises(cclab.SweepInterrupted) as err:
        cclab.sweep(SHORT, grid=GRID, replications=2, executor=stopper, out=out, progress=False)
    assert err.value.done == 3 and err.value.total == 8
    finished = sorted(p.name for p in (out / "runs").iterdir() if not p.name.startswith("."))
    assert len(finished) == 3
    assert not list((out / "runs").glob(".*")), "no half-written run directories"
    assert not (out / "flows.parquet").exists(), "no combined table for an unfinished sweep"

    resume = Counting()
    full = cclab.sweep(SHORT, grid=GRID, replications=2, executor=resume, out=out, progress=False)
    assert resume.submitted == 5, "only the unfinished runs run again"
    again = Counting()
    cached = cclab.sweep(SHORT, grid=GRID, replications=2, executor=again, out=out, progress=False)
    assert again.submitted == 0, "everything comes from the cache"
    assert cached.flows.equals(full.flows)
    fresh = cclab.sweep(SHORT, grid=GRID, replications=2, progress=False)
    assert fresh.flows.equals(full.flows), "cached and fresh results are identical"
    assert pl.read_parquet(out / "flows.parquet").equals(full.flows)
    assert pl.scan_parquet(out / "runs" / "*" / "flows.parquet").collect().height == full.flows.height


def test_changing_the_scenario_changes_the_cache_key(tmp_path: Path) -> None:
    out = tmp_path / "sw"
    cclab.sweep(SHORT, replications=1, out=out, progress=False)
    counting = Counting()
    cclab.sweep(SHORT.with_(**{"flows[0].mss": 1200}), replications=1, executor=counting, out=out, progress=False)
    assert counting.submitted == 1


def test_a_different_simulator_build_invalidates_every_cached_run(tmp_path: Path, monkeypatch) -> None:
    # The package re-exports the function `sweep` under the module's name.
    sweep_module = importlib.import_module("cclab.sweep")
    out = tmp_path / "sw"
    first = Counting()
    cclab.sweep(SHORT, grid=GRID, replications=1, executor=first, out=out, progress=False)
    assert first.submitted == 4
    meta = [json.loads(p.read_text()) for p in (out / "runs").glob("*/meta.json")]
    assert [m["build_id"] for m in meta] == [cclab._core.build_id()] * 4

    unchanged = Counting()
    cclab.sweep(SHORT, grid=GRID, replications=1, executor=unchanged, out=out, progress=False)
    assert unchanged.submitted == 0, "the same build reuses every run"

    other = "0123456789abcdef" * 2
    monkeypatch.setattr(sweep_module, "build_id", lambda: other)
    rebuilt = Counting()
    cclab.sweep(SHORT, grid=GRID, replications=1, executor=rebuilt, out=out, progress=False)
    assert rebuilt.submitted == 4, "a different build runs everything again"
    meta = [json.loads(p.read_text()) for p in (out / "runs").glob("*/meta.json")]
    assert sorted(m["build_id"] for m in meta) == sorted([cclab._core.build_id()] * 4 + [other] * 4)


def test_build_info_describes_the_build() -> None:
    from cclab import _core

    info = _core.build_info()
    assert info["build_id"] == _core.build_id()
    assert len(info["build_id"]) == 32 and int(info["build_id"], 16) >= 0
    assert info["version"] == cclab.__version__
    assert info["files"] > 0
    assert info["git_revision"] is None or len(info["git_revision"]) == 40
    assert info["git_dirty"] in (None, True, False)
    assert info["profile"] in ("release", "debug")


def test_local_and_dask_executors_give_identical_tables() -> None:
    distributed = pytest.importorskip("dask.distributed")
    local = cclab.sweep(SHORT, grid=GRID, replications=2, jobs=2, progress=False)
    dask = cclab.sweep(SHORT, grid=GRID, replications=2, jobs=2, executor="dask", progress=False)
    assert dask.flows.equals(local.flows)
    assert dask.links.equals(local.links)
    # An existing scheduler, reached by its tcp:// address.
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster:
        remote = cclab.sweep(SHORT, grid=GRID, replications=2, executor=cluster.scheduler_address, progress=False)
    assert remote.flows.equals(local.flows)


def test_bad_sweep_arguments() -> None:
    with pytest.raises(cclab.ScenarioError) as err:
        cclab.sweep(SHORT, grid={"topology.bottleneck.rte": ["1Mbps"]}, progress=False)
    assert 'topology.bottleneck.rte: unknown key; did you mean "rate"?' in err.value.args[0]
    with pytest.raises(cclab.ScenarioError) as err:
        cclab.sweep(SHORT, grid={"flows[0].count": ["two"]}, progress=False)
    assert "flows[0].count" in err.value.args[0]
    with pytest.raises(cclab.SweepError):
        cclab.sweep(SHORT, replications=0, progress=False)
    with pytest.raises(cclab.SweepError):
        cclab.sweep(SHORT, grid={"run.duration": []}, progress=False)
    from cclab.executors import ExecutorError

    with pytest.raises(ExecutorError) as err:
        cclab.sweep(SHORT, executor="tcp://127.0.0.1:9", progress=False)
    assert "tcp://127.0.0.1:9" in str(err.value)


def test_progress_shows_on_a_terminal_and_is_silent_when_piped() -> None:
    import io

    from cclab.progress import Progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    tty = Terminal()
    bar = Progress(4, done=1, stream=tty)
    for _ in range(3):
        bar.advance()
    text = tty.getvalue()
    assert "1/4 runs" in text and "2/4 runs" in text and "ETA" in text and text.endswith("4/4 runs   \n")
    pipe = io.StringIO()
    bar = Progress(4, stream=pipe)
    bar.advance(4)
    assert pipe.getvalue() == ""


def test_a_sweep_that_fails_ends_its_progress_line_before_the_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run's error leaves the sweep with its progress line ended, and only once,
    so the error starts a line of its own (it used to continue the bar's line)."""
    sweeps = importlib.import_module("cclab.sweep")
    real, calls = sweeps.Result.from_core, []

    def second_fails(output: object, config: dict) -> cclab.Result:
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("the second run's result cannot be read")
        return real(output, config)  # type: ignore[arg-type]

    monkeypatch.setattr(sweeps.Result, "from_core", second_fails)
    with pytest.raises(RuntimeError):
        cclab.sweep(SHORT, {"flows[0].recovery": ["newreno", "sack"]}, jobs=1, progress=True)
    err = capsys.readouterr().err
    assert "1/2 runs" in err and err.endswith("\n") and not err.endswith("\n\n"), repr(err)


def test_sweeping_run_seed_gives_each_value_its_own_replications(tmp_path: Path) -> None:
    out = tmp_path / "sw"
    res = cclab.sweep(SHORT, grid={"run.seed": [1, 2, 3]}, replications=2, out=out, progress=False)
    runs = res.flows.select("run.seed", "replication", "seed", "run").unique()
    # Each grid value is the base seed of its replications: six distinct runs.
    expected = {(b, r, cclab.derive_seed(b, r)) for b in (1, 2, 3) for r in range(2)}
    assert {(b, r, s) for b, r, s, _ in runs.iter_rows()} == expected
    assert runs["run"].n_unique() == 6
    assert len([p for p in (out / "runs").iterdir() if not p.name.startswith(".")]) == 6
    per_value = res.flows.group_by("run.seed", maintain_order=True).agg(pl.col("start_s").sort())
    starts = [tuple(s) for s in per_value["start_s"].to_list()]
    assert len(set(starts)) == 3, "different base seeds draw different start times"
    # The base seed given as run.seed or as base_seed is the same sweep.
    two = cclab.sweep(SHORT.with_(**{"run.seed": 2}), replications=2, progress=False)
    assert sorted(two.flows["seed"].unique().to_list()) == sorted(cclab.derive_seed(2, r) for r in range(2))
    assert two.flows.drop("run").equals(res.flows.filter(pl.col("run.seed") == 2).drop("run.seed", "run"))


def test_base_seed_and_a_run_seed_grid_are_not_given_together() -> None:
    with pytest.raises(cclab.SweepError) as err:
        cclab.sweep(SHORT, grid={"run.seed": [1, 2]}, base_seed=5, progress=False)
    assert "run.seed" in str(err.value) and "base_seed" in str(err.value)


@pytest.mark.parametrize(
    ("argument", "value", "fragment"),
    [
        ("base_seed", "abc", "base_seed: 'abc' is not a whole number"),
        ("base_seed", -5, "base_seed: -5 is outside [0, 2^64)"),
        ("base_seed", 2**64, "is outside [0, 2^64)"),
        ("base_seed", 1.5, "base_seed: 1.5 is not a whole number"),
        ("base_seed", True, "base_seed: True is not a whole number"),
        ("replications", 0, "replications: 0 is outside [1, 2^31)"),
        ("replications", 2**31, "replications: 2147483648 is outside [1, 2^31)"),
        ("replications", True, "replications: True is not a whole number"),
        ("replications", "3", "replications: '3' is not a whole number"),
        ("jobs", 0, "jobs: 0 is outside [1, 2^31)"),
        ("jobs", 2.0, "jobs: 2.0 is not a whole number"),
    ],
)
def test_sweep_arguments_follow_the_command_line_rules(argument: str, value: object, fragment: str) -> None:
    with pytest.raises(cclab.SweepError) as err:
        cclab.sweep(SHORT, progress=False, **{argument: value})
    assert fragment in str(err.value)


def test_the_command_line_refuses_the_same_seeds(dumbbell: Path) -> None:
    from conftest import cclab as command

    for seed in ("abc", "-5", str(2**64), "1.5"):
        proc = command("sweep", str(dumbbell), "--seed", seed)
        assert proc.returncode == 2 and "--seed" in proc.stderr and "Traceback" not in proc.stderr


def test_parallel_runs_must_fit_in_the_memory_limit_together() -> None:
    thousand = SHORT.with_(**{"flows[0].count": 1000})  # about 9.5 MB a run
    with pytest.raises(cclab.SweepError) as err:
        cclab.sweep(thousand, replications=2, jobs=2, memory_limit="15MB", progress=False)
    assert str(err.value).startswith("jobs: 2 runs at once of up to 9.5 MB each need about 19 MB, above the 15 MB")
    with pytest.raises(cclab.ScenarioError) as scenario_err:
        cclab.sweep(thousand, grid={"flows[0].count": [10, 2000]}, memory_limit="15MB", progress=False)
    assert "grid point flows[0].count=2000: flows: 2,000 flow instances need about 19 MB" in scenario_err.value.args[0]
