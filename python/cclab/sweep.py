"""Replicated parameter sweeps.

A sweep runs every point of a grid (the cartesian product of values for key
paths) ``replications`` times. Replication ``r`` uses the seed derived from the
base seed and ``r`` alone, so every grid point sees the same random numbers in
replication ``r`` (common random numbers: comparisons between points are
paired, and their differences less noisy). The base seed is ``base_seed`` if
given, else the point's ``run.seed``: sweeping ``run.seed`` gives each value
its own replications.

With an output directory, each finished run is written at once as a directory
``runs/<key>/`` (its summary and Parquet tables): written in ``.staging/``, it
appears under ``runs/`` complete or not at all, and a glob over ``runs/*``
never sees a half-written or abandoned run. The key hashes the resolved
scenario, the cclab version, the simulator build, the base seed and the seed,
so a repeated
sweep skips runs already done, and a sweep stopped half-way keeps every
finished run. The aggregate tables describe exactly the runs of the sweep that
wrote them: ``sweep.json`` says ``"complete": false`` from the sweep's start,
the previous tables are removed then, and the new ones are written (and the
sweep marked complete) only once every run has finished. One sweep at a time
writes a directory (a lock on ``.lock``), so staging left there by a killed
sweep is removed when the next one starts.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import shutil
import tempfile
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from cclab import __version__, _core
from cclab._args import COUNTS, SEEDS, limit_text, whole_number
from cclab.api import ScenarioLike, as_scenario
from cclab.executors import Executor, ExecutorLike, LocalExecutor, Task, make_executor
from cclab.interrupt import Interrupt, cancel_on_sigint
from cclab.progress import Progress
from cclab.result import Result, summary_frame
from cclab.scenario import Scenario, ScenarioError

if TYPE_CHECKING:
    import polars as pl

#: Columns that identify a run in every tidy table.
RUN_COLUMNS = ("run", "replication", "seed")


class SweepError(Exception):
    """A problem with a sweep's arguments; the message names the argument."""


class IdenticalReplicationsWarning(UserWarning):
    """Every replication of a sweep gave the same results: nothing in the scenario is random."""


class SweepInterrupted(Exception):
    """The sweep was stopped; finished runs are kept (with an output directory)."""

    def __init__(self, done: int, total: int, out: Path | None) -> None:
        if out is None:
            kept = "nothing is kept without an output directory"
        else:
            kept = f"they are kept in {out}, and the same sweep resumes from them"
        super().__init__(f"interrupted with {done} of {total} runs finished; {kept}")
        self.done, self.total, self.out = done, total, out


def derive_seed(base_seed: int, replication: int) -> int:
    """The seed of replication ``replication``: a hash of the base seed and the index."""
    digest = hashlib.sha256(f"cclab/seed/{base_seed}/{replication}".encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1  # below 2^63: fits every integer column


@dataclass(frozen=True)
class RunSpec:
    """One run of a sweep."""

    index: int
    point: tuple[tuple[str, Any], ...]
    replication: int
    seed: int
    scenario: Scenario
    key: str
    build: str
    #: The seed replication ``replication`` derives ``seed`` from.
    base_seed: int = 0
    #: The memory limit the run is checked against (None: the worker's CCLAB_MEMORY_LIMIT or default).
    memory_limit: str | None = None

    def task(self) -> Task:
        return Task(self.index, self.scenario.to_toml(), self.scenario.name, self.seed, self.memory_limit)


def build_id() -> str:
    """The identity of the simulator build that runs in this process."""
    return _core.build_id()


#: Set inside :func:`replaying`: the build whose cached runs stand in for this process's.
_REPLAYED_BUILD: ContextVar[str | None] = ContextVar("cclab_replayed_build", default=None)


@contextmanager
def replaying(build: str) -> Iterator[None]:
    """Within this block, sweeps key their runs on simulator build ``build`` instead of
    this process's and take every run from their cache: a run missing there is a
    :class:`SweepError`, never a run of this simulator filed under another's name.
    For rendering tables, figures and reports again from the runs an earlier build made."""
    token = _REPLAYED_BUILD.set(build)
    try:
        yield
    finally:
        _REPLAYED_BUILD.reset(token)


def keyed_build() -> str:
    """The build that run keys name: the replayed one inside :func:`replaying`, else this process's."""
    return _REPLAYED_BUILD.get() or build_id()


def check_replayable(missing: int, total: int, out: Path | None) -> None:
    """Inside :func:`replaying`, refuses to run the ``missing`` runs the cache at ``out`` lacks."""
    build = _REPLAYED_BUILD.get()
    if build is None or missing == 0:
        return
    where = f"under {out}" if out is not None else "(no cache directory)"
    raise SweepError(
        f"--from-cache: {missing} of {total} runs {where} are not in the cache of build {build[:12]}; "
        "run the study without --from-cache to make them"
    )


def recorded_builds(cache: Path) -> set[str]:
    """The simulator builds that made the runs cached anywhere under ``cache``."""
    builds = set()
    for meta in cache.glob("**/runs/*/meta.json"):
        builds.add(json.loads(meta.read_text())["build_id"])
    return builds


def run_key(resolved: dict[str, Any], seed: int, build: str | None = None, base_seed: int | None = None) -> str:
    """Cache key: the resolved scenario (its own run.seed aside: the base seed
    stands for it), the version, the simulator build (default: this process's),
    the base seed and the seed."""
    config = json.loads(json.dumps(resolved))
    config.get("run", {}).pop("seed", None)
    build = keyed_build() if build is None else build
    material = {"config": config, "version": __version__, "build": build, "base_seed": base_seed, "seed": seed}
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()[:24]


#: The grid key whose values are the base seeds of their points' replications.
SEED_KEY = "run.seed"


def plan(
    scenario: Scenario,
    grid: Mapping[str, Sequence[Any]],
    replications: int,
    base_seed: int | None = None,
    memory_limit: str | None = None,
) -> list[RunSpec]:
    """Every run of the sweep, grid point by grid point. Each point is validated here
    (its memory estimate against ``memory_limit``), so a bad key or value fails
    before anything runs. Replication ``r`` of a point runs with
    ``derive_seed(base, r)``, where ``base`` is ``base_seed`` or else the point's
    ``run.seed`` (so sweeping ``run.seed`` gives every value its own replications)."""
    for key, values in grid.items():
        if isinstance(values, str | bytes) or not isinstance(values, Sequence) or len(values) == 0:
            raise SweepError(f"grid {key}: expected a non-empty list of values")
    if base_seed is not None and SEED_KEY in grid:
        raise SweepError(
            f"grid {SEED_KEY} and base_seed (--seed) both set the base seed of the replications; give one of them"
        )
    keys = list(grid)
    build = keyed_build()
    specs = []
    for values in itertools.product(*(grid[k] for k in keys)):
        point = tuple(zip(keys, values, strict=True))
        try:
            variant = scenario._overridden(dict(point))
            resolved = variant.validate(memory_limit)
        except ScenarioError as e:
            where = ", ".join(f"{k}={v!r}" for k, v in point)
            raise ScenarioError(f"grid point {where}: {e.args[0]}", e.args[1]) from None
        base = resolved["run"]["seed"] if base_seed is None else base_seed
        for r in range(replications):
            seed = derive_seed(base, r)
            key = run_key(resolved, seed, build, base)
            specs.append(RunSpec(len(specs), point, r, seed, variant, key, build, base, memory_limit))
    return specs


def check_parallel_memory(specs: Sequence[RunSpec], parallel: int, memory_limit: str | None) -> None:
    """Refuses a sweep whose runs, ``parallel`` at a time in this process, would
    together need more than the memory limit (each alone was checked by ``plan``)."""
    limit = _core.memory_limit_bytes(memory_limit)
    if limit is None or parallel < 2 or not specs:
        return
    largest = max(spec.scenario.estimate_memory()["bytes"] for spec in specs if spec.replication == 0)
    if largest * parallel > limit:
        raise SweepError(
            f"jobs: {parallel} runs at once of up to {fmt_bytes(largest)} each need about "
            f"{fmt_bytes(largest * parallel)}, above the {fmt_bytes(limit)} memory limit; lower jobs (--jobs) "
            "or raise the limit with memory_limit= (--memory-limit) or CCLAB_MEMORY_LIMIT"
        )


def fmt_bytes(n: int) -> str:
    """A size for messages: "4 GB", "15.6 GB", "12 MB" (powers of 1000, as the simulator writes them)."""
    for scale, unit in ((1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "KB")):
        if n >= scale:
            x = n / scale
            text = f"{x:.0f}" if x >= 100 else f"{x:.1f}"
            return f"{text.removesuffix('.0')} {unit}"
    return f"{n} B"


#: The tables a finished sweep writes beside ``runs/``; absent while it is incomplete.
AGGREGATES = ("flows.parquet", "links.parquet", "transfers.parquet", "summary.csv")


class RunStore:
    """A sweep's output directory.

    - ``runs/<key>/``: finished runs, each written in ``.staging/`` and renamed
      into place (same filesystem, so the rename is atomic);
    - ``sweep.json``: the sweep's plan and whether it is complete;
    - the aggregate tables (:data:`AGGREGATES`), present only when complete;
    - ``.lock``: held (``flock``) by the one sweep writing the directory, so
      anything in ``.staging/`` when a sweep starts was abandoned by a killed one.
    """

    def __init__(self, out: Path) -> None:
        self.out = out
        self.runs = out / "runs"
        self.staging = out / ".staging"
        try:
            self.runs.mkdir(parents=True, exist_ok=True)
            self.staging.mkdir(exist_ok=True)
            lock: IO[str] = open(out / ".lock", "a+")  # held until close()
        except OSError as e:
            raise SweepError(f"--out {out}: not writable ({e.strerror or e})") from None
        self._lock: IO[str] | None = lock
        if not _try_lock(lock):
            lock.seek(0)
            owner = lock.read().strip()
            lock.close()
            self._lock = None
            who = f" (process {owner})" if owner.isdigit() else ""
            raise SweepError(
                f"--out {out}: another sweep{who} is writing there; wait for it or choose another directory"
            )
        lock.truncate(0)
        lock.write(str(os.getpid()))
        lock.flush()
        self._remove_abandoned_staging()

    def _remove_abandoned_staging(self) -> None:
        """What killed sweeps left: anything in ``.staging/``, and hidden entries in
        ``runs/`` (sweeps before ``.staging/`` existed staged runs there)."""
        leftovers = [*self.staging.iterdir(), *self.runs.glob(".*")]
        for path in leftovers:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)

    def close(self) -> None:
        """Releases the directory (and removes the staging area if it is empty)."""
        try:
            self.staging.rmdir()
        except OSError:
            pass  # not empty (a save in progress elsewhere cannot be: we hold the lock) or gone
        if self._lock is not None:
            self._lock.close()  # closing the descriptor releases the flock
            self._lock = None

    def has(self, key: str) -> bool:
        return (self.runs / key / "summary.json").is_file()

    def load(self, key: str) -> dict[str, Any]:
        summary: dict[str, Any] = json.loads((self.runs / key / "summary.json").read_text())
        return summary

    def begin(self, plan: dict[str, Any]) -> None:
        """Marks the directory incomplete, then removes the previous aggregate
        tables: in this order, a crash in between leaves old tables marked
        incomplete, never old tables passing for this sweep's."""
        self.write_plan(plan, done=None, complete=False)
        for name in AGGREGATES:
            (self.out / name).unlink(missing_ok=True)
            (self.out / f".{name}.tmp").unlink(missing_ok=True)  # left by sweeps before .staging/

    def write_plan(self, plan: dict[str, Any], done: int | None, complete: bool) -> None:
        record = {**plan, "done": plan["done"] if done is None else done, "complete": complete}
        self._replace(self.out / "sweep.json", lambda tmp: tmp.write_text(json.dumps(record, indent=1) + "\n"))

    def save(self, spec: RunSpec, result: Result) -> None:
        staging = Path(tempfile.mkdtemp(prefix=f"{spec.key}-", dir=self.staging))
        try:
            (staging / "summary.json").write_text(json.dumps(result.summary))
            meta = {
                "version": __version__,
                "build_id": spec.build,
                "scenario": spec.scenario.name,
                "point": dict(spec.point),
                "replication": spec.replication,
                "base_seed": spec.base_seed,
                "seed": spec.seed,
            }
            (staging / "meta.json").write_text(json.dumps(meta))
            tag = _tags(spec)
            result.flows.with_columns(**tag).write_parquet(staging / "flows.parquet")
            result.links.with_columns(**tag).write_parquet(staging / "links.parquet")
            result.transfers.with_columns(**tag).write_parquet(staging / "transfers.parquet")
            final = self.runs / spec.key
            if final.exists():  # two grid points resolved to the same run (equal keys)
                shutil.rmtree(staging)
                return
            os.rename(staging, final)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise

    def write_table(self, frame: pl.DataFrame, name: str) -> Path:
        """Writes ``name`` (.parquet or .csv) atomically."""
        path = self.out / name
        self._replace(path, frame.write_csv if name.endswith(".csv") else frame.write_parquet)
        return path

    def _replace(self, path: Path, write: Any) -> None:
        """Writes ``path`` through a file in the staging area, then renames it into place."""
        fd, name = tempfile.mkstemp(prefix=f"{path.name}-", dir=self.staging)
        os.close(fd)
        tmp = Path(name)
        try:
            write(tmp)
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise


def _try_lock(file: IO[str]) -> bool:
    """An exclusive lock on ``file`` without waiting; the kernel releases it when
    the process ends, however it ends. True without ``fcntl`` (not POSIX)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no lock, one sweep per directory is up to the user
        return True
    try:
        fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _tags(spec: RunSpec) -> dict[str, Any]:
    import polars as pl

    tags: dict[str, Any] = {
        "run": pl.lit(spec.key),
        "replication": pl.lit(spec.replication, pl.Int64),
        "seed": pl.lit(spec.seed, pl.Int64),
    }
    for key, value in spec.point:
        dtype = {bool: pl.Boolean, int: pl.Int64, float: pl.Float64, str: pl.String}.get(type(value))
        tags[key] = pl.lit(value, dtype) if dtype is not None else pl.lit(str(value))
    return tags


#: The tables a sweep gathers from every run.
TABLES = ("flows", "links", "transfers")


def _tidy(specs: Sequence[RunSpec], summaries: Mapping[int, dict[str, Any]], table: str) -> pl.DataFrame:
    import polars as pl

    frames = []
    for spec in specs:
        if spec.index not in summaries:
            continue
        frames.append(summary_frame(summaries[spec.index], table).with_columns(**_tags(spec)))
    if not frames:
        return pl.DataFrame()
    frame = pl.concat(frames, how="diagonal_relaxed")
    grid = [k for k, _ in specs[0].point]
    front = [*grid, *RUN_COLUMNS]
    return frame.select(front + [c for c in frame.columns if c not in front])


# Two-sided 95 % Student t quantiles t(0.975, df) for df = 1..30.
_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip


def t975(df: int) -> float:
    """t(0.975, df); beyond the table, the Cornish-Fisher expansion about z = 1.96."""
    if df < 1:
        return math.nan
    if df <= len(_T975):
        return _T975[df - 1]
    z = 1.959964
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


def aggregate(frame: pl.DataFrame, by: Sequence[str], metrics: Sequence[str]) -> pl.DataFrame:
    """Mean, standard deviation, count and 95 % confidence half-width of each metric
    across the rows of each group (replications, when ``by`` holds everything else)."""
    import polars as pl

    aggs = [pl.len().alias("n")]
    for m in metrics:
        aggs += [pl.col(m).mean().alias(f"{m}_mean"), pl.col(m).std().alias(f"{m}_std")]
    out = frame.group_by(list(by), maintain_order=True).agg(aggs)
    # Student's t with n - 1 degrees of freedom (NaN for a single replication).
    t = (pl.col("n").cast(pl.Int64) - 1).map_elements(t975, return_dtype=pl.Float64)
    return out.with_columns([(t * pl.col(f"{m}_std") / pl.col("n").sqrt()).alias(f"{m}_ci95") for m in metrics])


FLOW_METRICS = (
    "goodput_bps", "throughput_bps", "ack_throughput_bps", "retransmits", "timeouts",
    "recoveries", "rtt_mean_s",
)  # fmt: skip
LINK_METRICS = ("utilization", "throughput_bps", "drops", "losses", "queue_mean_pkts", "queue_max_pkts")


#: What to tell a user whose replications cannot differ: how to make them differ.
RANDOMNESS_HINT = (
    'so every seed gives the same run; add randomness with random start times (start = "0s..1s" on a flow '
    "group) or random loss (loss = 0.001 on a link), or run 1 replication"
)


@dataclass
class SweepResult:
    """Tidy tables (one row per flow, or link, per run) and their aggregates."""

    flows: pl.DataFrame
    links: pl.DataFrame
    #: One row per finite transfer per run (empty unless the scenario has finite transfers).
    transfers: pl.DataFrame
    grid: list[str]
    replications: int
    out: Path | None = None
    #: What a reader of these results should know, one sentence each (such as
    #: replications that cannot differ); ``cclab sweep`` prints them.
    notes: list[str] = field(default_factory=list)

    def aggregate(self, table: str = "flows", by: Sequence[str] | None = None,
                  metrics: Sequence[str] | None = None) -> pl.DataFrame:  # fmt: skip
        """Across replications, per grid point and flow (or link, with its role) by default."""
        frame = self.flows if table == "flows" else self.links
        # A link's role never changes within a sweep: keeping it costs no rows and lets plots pick the bottleneck.
        default_by = ["name", "index"] if table == "flows" else [c for c in ("name", "role") if c in frame.columns]
        # A metric of one protocol (retransmits) is absent from a sweep of another (UDP alone).
        chosen = [m for m in (metrics or (FLOW_METRICS if table == "flows" else LINK_METRICS)) if m in frame.columns]
        return aggregate(frame, [*self.grid, *(by if by is not None else default_by)], chosen)

    @property
    def summary(self) -> pl.DataFrame:
        return self.aggregate()

    def _repr_html_(self) -> str:
        from cclab import notebook

        return notebook.sweep_html(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        from cclab import notebook

        printer.text(notebook.sweep_text(self))

    def identical_points(self) -> list[dict[str, Any]]:
        """The grid points at which every replication gave exactly the same flows and
        links tables (none with a single replication): the scenario draws no random
        number there, so the replications add nothing and their interval is 0."""
        import polars as pl

        if self.replications < 2 or self.flows.height == 0:
            return []
        point = [*self.grid, "_point"]  # "_point": something to group by when the grid is empty
        same: pl.DataFrame | None = None
        for frame in (self.flows, self.links):
            if frame.height == 0:
                continue
            values = [c for c in frame.columns if c not in (*self.grid, *RUN_COLUMNS)]
            # Identical replications have identical rows: as many distinct rows as one replication has.
            identical = (pl.col("reps") > 1) & (pl.col("distinct") * pl.col("reps") == pl.col("rows"))
            per_point = (
                frame.with_columns(pl.lit(0).alias("_point"))
                .group_by(point, maintain_order=True)
                .agg(
                    pl.struct(values).n_unique().alias("distinct"),
                    pl.len().alias("rows"),
                    pl.col("replication").n_unique().alias("reps"),
                )
                .select(*point, identical.alias("same"))
            )
            if same is not None:
                both = pl.col("same") & pl.col("same_right")
                per_point = same.join(per_point, on=point).select(*point, both.alias("same"))
            same = per_point
        assert same is not None
        return [{k: row[k] for k in self.grid} for row in same.iter_rows(named=True) if row["same"]]


def identical_replications_note(result: SweepResult) -> str | None:
    """One sentence if some or all grid points' replications are identical, else None."""
    points = result.identical_points()
    if not points:
        return None
    total = result.flows.select(result.grid).unique().height if result.grid else 1
    if len(points) == total:
        where = " at every grid point" if result.grid else ""
        return (f"the {result.replications} replications{where} are identical: nothing in the scenario is "
                f"random, {RANDOMNESS_HINT}")  # fmt: skip
    shown = "; ".join(", ".join(f"{k}={v}" for k, v in p.items()) for p in points[:3])
    more = f" and {len(points) - 3} more" if len(points) > 3 else ""
    return (f"replications are identical at {len(points)} of {total} grid points ({shown}{more}): nothing "
            f"is random there, {RANDOMNESS_HINT}")  # fmt: skip


def sweep(
    scenario: ScenarioLike,
    grid: Mapping[str, Sequence[Any]] | None = None,
    replications: int = 1,
    jobs: int | None = None,
    executor: ExecutorLike | None = None,
    out: str | Path | None = None,
    base_seed: int | None = None,
    progress: bool | None = None,
    memory_limit: str | int | None = None,
) -> SweepResult:
    """Runs ``scenario`` at every grid point, ``replications`` times each.

    ``executor``: ``None``/``"local"`` (threads on this machine), ``"dask"`` (a
    local Dask cluster), ``"tcp://HOST:PORT"`` (an existing Dask scheduler), a
    ``distributed.Client`` or Dask cluster object (such as dask-jobqueue's
    ``SLURMCluster``; left open), or an :class:`~cclab.executors.Executor`. A
    Dask cluster whose workers run another cclab build is refused
    (:class:`~cclab.executors.ExecutorError`). ``out`` enables the on-disk cache and resume.
    ``base_seed`` (default: each point's ``run.seed``) seeds the replications; it
    and ``replications`` and ``jobs`` follow the rules of ``cclab sweep``'s
    ``--seed``, ``--replications`` and ``--jobs``. ``memory_limit`` (default: the
    scenario's, else ``CCLAB_MEMORY_LIMIT``, else 4 GB) bounds each run, and the
    runs local threads hold at once.
    """
    replications = whole_number(replications, "replications", COUNTS, SweepError)
    if jobs is not None:
        jobs = whole_number(jobs, "jobs", COUNTS, SweepError)
    if base_seed is not None:
        base_seed = whole_number(base_seed, "base_seed", SEEDS, SweepError)
    scn = as_scenario(scenario, memory_limit)
    # Resolved here, so that workers in other processes apply this process's limit.
    limit = limit_text(scn.memory_limit if memory_limit is None else memory_limit)
    _core.memory_limit_bytes(limit)  # a bad limit (or CCLAB_MEMORY_LIMIT) fails here, named
    if limit is None:
        limit = os.environ.get("CCLAB_MEMORY_LIMIT") or None
    grid = dict(grid or {})
    specs = plan(scn, grid, replications, base_seed, limit)
    if executor is None or executor == "local" or isinstance(executor, LocalExecutor):
        parallel = executor.jobs if isinstance(executor, LocalExecutor) else jobs or os.cpu_count() or 1
        check_parallel_memory(specs, min(parallel, len(specs)), limit)
    store = RunStore(Path(out)) if out is not None else None
    try:
        return _sweep(scn, grid, specs, replications, jobs, executor, store, progress)
    finally:
        if store is not None:
            store.close()


def _sweep(
    scn: Scenario,
    grid: dict[str, Sequence[Any]],
    specs: list[RunSpec],
    replications: int,
    jobs: int | None,
    executor: ExecutorLike | None,
    store: RunStore | None,
    progress: bool | None,
) -> SweepResult:
    summaries: dict[int, dict[str, Any]] = {}
    todo = []
    for spec in specs:
        if store is not None and store.has(spec.key):
            summaries[spec.index] = store.load(spec.key)
        else:
            todo.append(spec)
    check_replayable(len(todo), len(specs), store.out if store else None)
    # sweep.json: what `cclab plot` and readers of the directory rely on (docs/cli.md).
    meta = {
        "scenario": scn.name,
        "grid": list(grid),
        "replications": replications,
        # One base seed for every point, or null when each point's run.seed is its own (a grid over run.seed).
        "base_seed": bases.pop() if len(bases := {spec.base_seed for spec in specs}) == 1 else None,
        "runs": [spec.key for spec in specs],
        "done": len(summaries),
    }
    if store is not None:
        store.begin(meta)
    bar = Progress(len(specs), done=len(summaries), enabled=progress)
    complete = False
    try:
        if todo:
            _run_todo(todo, summaries, jobs, executor, store, bar)
        if len(summaries) < len(specs):
            raise SweepInterrupted(len(summaries), len(specs), store.out if store else None)
        result = _finish(specs, summaries, replications, store)
        if store is not None:
            # Last: the tables are this sweep's only once it says so.
            store.write_plan(meta, done=len(summaries), complete=True)
        complete = True
        return result
    finally:
        # On any way out, a run's error included: the error then starts a line of its own.
        bar.close()
        if store is not None and not complete:
            _record_progress(store, meta, len(summaries))


def _run_todo(
    todo: list[RunSpec],
    summaries: dict[int, dict[str, Any]],
    jobs: int | None,
    executor: ExecutorLike | None,
    store: RunStore | None,
    bar: Progress,
) -> None:
    """Runs what is not in the store yet, saving each run as it finishes."""
    engine = executor if isinstance(executor, Executor) else make_executor(executor, jobs)
    by_index = {spec.index: spec for spec in todo}
    interrupt = Interrupt()
    try:
        # The first Ctrl-C cancels the runs; the executor then hands over
        # those that had finished and stops, and they are saved below.
        with cancel_on_sigint(engine.cancel) as interrupt:
            for task, output in engine.run([spec.task() for spec in todo]):
                result = Result.from_core(output, {})
                if store is not None:
                    store.save(by_index[task.index], result)
                summaries[task.index] = result.summary
                bar.advance()
    except KeyboardInterrupt:
        engine.cancel()
        if interrupt.count >= 2:
            raise  # a second Ctrl-C: no more waiting; the caller sees KeyboardInterrupt
        # Otherwise raised by the executor itself: reported as an interrupted sweep.
    finally:
        if not isinstance(executor, Executor):
            engine.close()


def _record_progress(store: RunStore, meta: dict[str, Any], done: int) -> None:
    """Updates an unfinished sweep's count of finished runs, if the disk lets it:
    the directory is marked incomplete already, which is what matters."""
    try:
        store.write_plan(meta, done=done, complete=False)
    except OSError:
        pass


def _finish(
    specs: list[RunSpec], summaries: dict[int, dict[str, Any]], replications: int, store: RunStore | None
) -> SweepResult:
    result = SweepResult(
        flows=_tidy(specs, summaries, "flows"),
        links=_tidy(specs, summaries, "links"),
        transfers=_tidy(specs, summaries, "transfers"),
        grid=[k for k, _ in specs[0].point] if specs else [],
        replications=replications,
        out=store.out if store else None,
    )
    note = identical_replications_note(result)
    if note is not None:
        result.notes.append(note)
        warnings.warn(note, IdenticalReplicationsWarning, stacklevel=2)
    if store is not None:
        store.write_table(result.flows, "flows.parquet")
        store.write_table(result.links, "links.parquet")
        store.write_table(result.transfers, "transfers.parquet")
        store.write_table(result.summary, "summary.csv")
    return result
