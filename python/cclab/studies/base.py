"""What every study shares: options, the cached sweep, and where outputs go.

A study module under ``cclab.studies`` defines ``STUDY``, an instance of a
:class:`Study` subclass whose ``run`` declares its scenarios and sweeps through
a :class:`StudyContext`. The context caches every run under ``OUT/cache`` (so a
repeated or interrupted reproduction only runs what is missing) and writes the
tables (CSV and Parquet), figures (PNG and SVG) and ``report.md``.
"""

from __future__ import annotations

import math
import shlex
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cclab.scenario import Scenario, load
from cclab.sweep import SweepResult, sweep

if TYPE_CHECKING:
    import polars as pl
    from matplotlib.figure import Figure

    from cclab.executors import ExecutorLike
    from cclab.result import Result


def percent(fraction: float) -> str:
    """A loss rate or share as reports write it: 0.0001 -> "0.01 %"."""
    return f"{fraction * 100:g} %"


def seconds(text: str) -> float:
    """A scenario's duration in seconds ("60s" -> 60.0, "40ms" -> 0.04)."""
    from cclab.plot import quantity

    parsed = quantity(text)
    if parsed is None or parsed[1] != "duration":
        raise ValueError(f"not a duration: {text!r}")
    return parsed[0]


def half_width(row: Mapping[str, Any], metric: str) -> float | None:
    """The 95 % half-width of ``metric`` in an :func:`cclab.sweep.aggregate` row; None for a single replication."""
    ci = row[f"{metric}_ci95"]
    return None if ci is None or math.isnan(ci) else float(ci)


def jain(values: list[float]) -> float:
    """Jain's fairness index: (sum x)^2 / (n sum x^2), 1 when all are equal (all zero too), 1/n when one takes all."""
    total, squares = sum(values), sum(v * v for v in values)
    return total * total / (len(values) * squares) if squares > 0 else 1.0


def mean_ci(row: Mapping[str, Any], metric: str, digits: int = 1, signed: bool = False) -> str:
    """A report cell: the mean of ``metric`` and, when there is one, its 95 % half-width ("12.3 ± 0.4")."""
    sign = "+" if signed else ""
    text = f"{row[f'{metric}_mean']:{sign}.{digits}f}"
    ci = half_width(row, metric)
    return text if ci is None else f"{text} ± {ci:.{digits}f}"


@dataclass(frozen=True)
class StudyOptions:
    out: Path
    replications: int | None = None
    quick: bool = False
    jobs: int | None = None
    #: As ``sweep(executor=...)``: a name, an address, a Dask client or cluster (left open), an Executor.
    executor: ExecutorLike | None = None
    progress: bool | None = None
    #: Render again from the runs cached under OUT/cache, whatever simulator build made them; run nothing.
    from_cache: bool = False


class Study(ABC):
    #: Short name used by ``cclab reproduce NAME``.
    name: str
    #: One line: what is reproduced.
    title: str
    #: The seed paper (file under shared/seeds) and its citation.
    paper: str
    replications: int = 10
    quick_replications: int = 2
    #: The full study takes too long to run in CI: the test of its committed report renders it
    #: from the committed runs (``--from-cache``), and ``--quick`` checks this simulator runs it.
    replayed_in_ci: bool = False

    @abstractmethod
    def run(self, ctx: StudyContext) -> None:
        """Runs the study's sweeps and writes its tables, figures and report."""

    def scenario(self, filename: str) -> Scenario:
        """A scenario file shipped beside the study module."""
        with resources.as_file(resources.files("cclab.studies") / filename) as path:
            return load(path)


class StudyContext:
    def __init__(self, study: Study, options: StudyOptions) -> None:
        self.study = study
        self.options = options
        self.out = options.out
        self.quick = options.quick
        default = study.quick_replications if options.quick else study.replications
        self.replications = options.replications or default
        self.written: list[Path] = []

    @property
    def command(self) -> str:
        """The `cclab reproduce` command that writes these outputs again, byte for byte.

        Every option that changes a result is spelt out (the replications even
        when they are the default, so that a changed default does not change
        what the command means); ``--jobs`` and ``--executor`` are left out
        because every executor gives identical tables.
        """
        quick = " --quick" if self.quick else ""
        out = shlex.quote(str(self.out))
        return f"cclab reproduce {self.study.name}{quick} --replications {self.replications} --out {out}"

    def sweep(self, name: str, scenario: Scenario, grid: Mapping[str, Sequence[Any]],
              replications: int | None = None) -> SweepResult:  # fmt: skip
        """Runs (or reads from OUT/cache/NAME) a sweep of the study."""
        return sweep(
            scenario,
            grid=grid,
            replications=replications or self.replications,
            jobs=self.options.jobs,
            executor=self.options.executor,
            out=self.out / "cache" / name,
            progress=self.options.progress,
        )

    def runs(self, name: str, jobs: Sequence[tuple[Mapping[str, Any], int]]) -> list[Result]:
        """Runs each (scenario dict, seed): the single runs whose time series a figure needs (a
        sweep keeps only per-run tables). Cached under OUT/cache/NAME like a sweep's runs, so a
        repeated reproduction (or ``--from-cache``) reads them; run on threads; results in order."""
        from concurrent.futures import ThreadPoolExecutor

        # A study's runs are planned, like a sweep's: none is refused for its estimated run time.
        from cclab.api import run
        from cclab.result import Result
        from cclab.sweep import RunSpec, RunStore, check_replayable, keyed_build, run_key

        build = keyed_build()
        specs, configs = [], []
        for index, (data, seed) in enumerate(jobs):
            # Validated (built) once, here: from_dict would build it a second time.
            scenario = Scenario.from_dict(data, str(data.get("name", "scenario")), validate=False)
            configs.append(scenario.validate())
            key = run_key(configs[-1], seed, build, seed)
            specs.append(RunSpec(index, (), 0, seed, scenario, key, build, base_seed=seed))
        store = RunStore(self.out / "cache" / name)
        try:
            summaries = {spec.index: store.load(spec.key) for spec in specs if store.has(spec.key)}
            todo = [spec for spec in specs if spec.index not in summaries]
            check_replayable(len(todo), len(specs), store.out)
            with ThreadPoolExecutor(max_workers=self.options.jobs or 2) as pool:
                results = pool.map(lambda s: run(s.scenario, seed=s.seed, allow_long=True), todo)
                for spec, result in zip(todo, results, strict=True):
                    store.save(spec, result)
                    summaries[spec.index] = result.summary
        finally:
            store.close()
        return [Result(summaries[spec.index], config, spec.seed) for spec, config in zip(specs, configs, strict=True)]

    def table(self, frame: pl.DataFrame, name: str) -> None:
        """Writes tables/NAME.csv and tables/NAME.parquet."""
        folder = self.out / "tables"
        folder.mkdir(parents=True, exist_ok=True)
        frame.write_csv(folder / f"{name}.csv")
        frame.write_parquet(folder / f"{name}.parquet")
        self.written += [folder / f"{name}.csv", folder / f"{name}.parquet"]

    def figure(self, fig: Figure, name: str) -> str:
        """Writes figures/NAME.png and .svg; returns the PNG's path relative to the report."""
        from cclab.plot import save

        self.written += save(fig, self.out / "figures" / name)
        return f"figures/{name}.png"

    def report(self, markdown: str) -> Path:
        path = self.out / "report.md"
        path.write_text(markdown)
        self.written.append(path)
        return path
