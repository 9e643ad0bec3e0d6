"""Where sweep runs execute: local threads (the default) or a Dask cluster.

Every executor takes the same tasks (scenario TOML, name, seed, memory limit) and yields
``(task, output)`` as runs finish, ``output`` being ``_core.run_toml``'s header and
tables (``result.CoreOutput``). The simulator releases the GIL, so
local threads use every core without process start-up costs; Dask spreads runs
over a ``LocalCluster``, an existing scheduler (``tcp://host:port``), or the
caller's own ``distributed.Client`` or cluster object (a dask-jobqueue
``SLURMCluster``), whose workers have cclab installed.

A Dask sweep never mixes builds: every worker must run the simulator build of
this process (``_core.build_id()`` and the package version). The workers
present are asked before any task is submitted, for a fast and complete
answer; and since workers may join at any time (dask-jobqueue starts them as
the batch system grants jobs), each task compares its worker's build with the
one it was given and refuses to run on another, so no run of another build
ever reaches the sweep's results.

``cancel()`` stops a sweep's runs: local runs through their shared
``CancelToken`` (they stop within milliseconds); Dask runs by cancelling their
futures and, on every worker, the tokens of the runs in progress (through
``Client.run``, which a worker serves while its task thread is inside the
simulator).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import uuid
import warnings
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, CancelledError, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cclab import __version__, _core
from cclab.interrupt import WAIT_S
from cclab.result import CoreOutput

if TYPE_CHECKING:
    from typing import TypeAlias

    from distributed import Client
    from distributed.deploy import Cluster

#: What ``executor=`` takes: "local", "dask", "tcp://HOST:PORT", a Dask client or cluster, or an Executor.
ExecutorLike: TypeAlias = "str | Executor | Client | Cluster"


class ExecutorError(Exception):
    """An executor cannot be created or reached; the message names the argument."""


#: A process's cclab: (package version, simulator build id).
Build = tuple[str, str]


def this_build() -> Build:
    """The cclab this process runs; on a Dask worker, the worker's. Read at each call
    (not at import), so it is the build that will run the simulation."""
    return (__version__, _core.build_id())


def describe_build(build: Build) -> str:
    version, build_id = build
    return f"cclab {version} build {build_id[:12]}"


class BuildMismatch(Exception):
    """Raised by a task on a worker whose cclab build is not the client's."""

    def __init__(self, worker: str, found: Build) -> None:
        # Both in args: Dask pickles the exception back to the client through its args.
        super().__init__(worker, found)
        self.worker, self.found = worker, found


def _worker_address() -> str:
    try:
        from distributed import get_worker

        address: str = get_worker().address
        return address
    except (ImportError, ValueError):  # not on a Dask worker
        return "this process"


@dataclass(frozen=True)
class Task:
    index: int
    text: str
    name: str
    seed: int
    #: The memory limit to check the run against (None: the worker's CCLAB_MEMORY_LIMIT, else the default).
    memory_limit: str | None = None


def run_task(
    text: str, name: str, seed: int, memory_limit: str | None = None, cancel: _core.CancelToken | None = None
) -> CoreOutput:
    """Runs one scenario; module-level so that Dask workers can import it. A sweep's
    runs are not refused for their estimated run time (``allow_long``): the sweep
    shows its progress run by run, and refusing one run would stop it midway."""
    return _core.run_toml(text, name, seed, memory_limit, cancel, allow_long=True)


# On a Dask worker: the tokens of the runs in progress in this process, by the
# id of the executor run (one sweep) they belong to, so that `cancel_worker_runs`
# can stop them; and the ids already cancelled, for tasks that start afterwards.
_worker_lock = threading.Lock()
_worker_tokens: dict[str, list[_core.CancelToken]] = {}
_worker_cancelled: set[str] = set()


def run_worker_task(text: str, name: str, seed: int, memory_limit: str | None, run_id: str) -> CoreOutput | None:
    """Runs one scenario on a Dask worker; None if its sweep was cancelled."""
    token = _core.CancelToken()
    with _worker_lock:
        if run_id in _worker_cancelled:
            return None
        _worker_tokens.setdefault(run_id, []).append(token)
    try:
        return run_task(text, name, seed, memory_limit, token)
    except _core.RunCancelled:
        # Not raised: Dask lets a KeyboardInterrupt through, and it would end the worker.
        return None
    finally:
        with _worker_lock:
            tokens = _worker_tokens.get(run_id, [])
            tokens.remove(token)
            if not tokens:
                _worker_tokens.pop(run_id, None)


def run_checked_task(
    build: Build, text: str, name: str, seed: int, memory_limit: str | None, run_id: str
) -> CoreOutput | None:
    """``run_worker_task`` on a worker whose cclab is ``build``; raises :class:`BuildMismatch`
    without running anything on any other (such as one that joined the cluster after
    the sweep checked its workers)."""
    found = this_build()
    if tuple(found) != tuple(build):
        raise BuildMismatch(_worker_address(), found)
    return run_worker_task(text, name, seed, memory_limit, run_id)


def cancel_worker_runs(run_id: str) -> int:
    """Stops this worker's runs of ``run_id`` (now and later); returns how many were running."""
    with _worker_lock:
        _worker_cancelled.add(run_id)
        tokens = list(_worker_tokens.get(run_id, []))
    for token in tokens:
        token.cancel()
    return len(tokens)


class Executor(ABC):
    @abstractmethod
    def run(self, tasks: Sequence[Task]) -> Iterator[tuple[Task, CoreOutput]]:
        """Yields each task with its output (header and tables), in completion order."""

    def cancel(self) -> None:  # noqa: B027 - optional: an executor may be unable to stop its tasks
        """Asks the current ``run`` to stop: it then yields the tasks that had
        finished and ends without the others, which leave no result.

        Called from a signal handler in the main thread, possibly while ``run``
        is suspended inside a wait: it must only set flags and return. The
        default does nothing, and ``run`` goes on until a second Ctrl-C.
        """

    @abstractmethod
    def close(self) -> None:
        """Stops the workers, abandoning unfinished tasks."""


class LocalExecutor(Executor):
    def __init__(self, jobs: int) -> None:
        self.jobs = jobs
        self._pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="cclab-run")
        self._token = _core.CancelToken()

    def run(self, tasks: Sequence[Task]) -> Iterator[tuple[Task, CoreOutput]]:
        # A fresh token per run, taken now rather than when the generator
        # starts, so that a cancel() in between is not lost.
        self._token = _core.CancelToken()
        return self._results(list(tasks), self._token)

    def _results(self, tasks: list[Task], token: _core.CancelToken) -> Iterator[tuple[Task, CoreOutput]]:
        pending: dict[Future[CoreOutput], Task] = {}
        queue = list(reversed(tasks))
        while pending or (queue and not token.cancelled):
            # Keep only a few tasks queued, so an interruption abandons little work.
            while queue and not token.cancelled and len(pending) < 2 * self.jobs:
                task = queue.pop()
                pending[self._pool.submit(run_task, task.text, task.name, task.seed, task.memory_limit, token)] = task
            if token.cancelled:
                for future in pending:
                    future.cancel()  # those not started yet
            # With a timeout, so that the main thread runs signal handlers on
            # every platform; on POSIX a signal interrupts the wait anyway.
            done, _ = wait(pending, timeout=WAIT_S, return_when=FIRST_COMPLETED)
            for future in done:
                task = pending.pop(future)
                try:
                    output = future.result()
                except (_core.RunCancelled, CancelledError):
                    continue  # stopped on request: no result
                yield task, output

    def cancel(self) -> None:
        self._token.cancel()

    def close(self) -> None:
        # Cancel first: shutting down waits for the running threads.
        self._token.cancel()
        self._pool.shutdown(wait=True, cancel_futures=True)


#: Seconds the client and a local cluster get to shut down before we stop waiting:
#: the workers hold nothing worth saving once the sweep has its results.
SHUTDOWN_TIMEOUT_S = 20.0


def _quiet_distributed(level: int) -> dict[str, int]:
    """Raises every ``distributed`` logger to at least ``level``; returns the old levels.

    distributed gives several of its loggers their own level and handler, so
    setting the parent's level alone is not enough."""
    names = ["distributed", *(n for n in logging.root.manager.loggerDict if n.startswith("distributed."))]
    old = {}
    for name in names:
        logger = logging.getLogger(name)
        old[name] = logger.level
        if logger.getEffectiveLevel() < level:
            logger.setLevel(level)
    return old


def _quiet_worker() -> None:
    """Runs in each worker process just before a local cluster closes (``Client.run``).

    The scheduler drops its connections to retiring workers while their
    processes are still winding down, so each worker logs its next heartbeat
    as an ERROR with a traceback; on a busy machine with many workers the
    nanny then logs every worker it has to kill. All of that is expected at
    shutdown, and the sweep's results are already safe; real failures of a run
    reach the caller as exceptions from ``Future.result``, not as log lines."""
    _quiet_distributed(logging.CRITICAL + 1)


@contextlib.contextmanager
def _quiet_shutdown() -> Iterator[None]:
    """In this process, hide distributed's expected shutdown warnings
    ("Worker process still alive after 4.0 seconds, killing", lost-worker
    notices) but keep its errors."""
    old = _quiet_distributed(logging.ERROR)
    try:
        yield
    finally:
        for name, level in old.items():
            logging.getLogger(name).setLevel(level)


@contextlib.contextmanager
def _children_ignore_sigint() -> Iterator[None]:
    """Processes started inside the block ignore SIGINT (an ignored signal stays
    ignored across exec). A terminal's Ctrl-C reaches the whole process group:
    a local cluster's processes would die of it, each printing a traceback,
    while this process cancels their runs and shuts them down in order. A
    Ctrl-C inside the block (the cluster's start) is ignored here too."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _is_client(obj: object) -> bool:
    from distributed import Client

    return isinstance(obj, Client)


def _is_cluster(obj: object) -> bool:
    """A Dask cluster object (LocalCluster, dask-jobqueue's SLURMCluster, ...): what
    ``distributed.Client`` itself accepts in place of an address."""
    return isinstance(getattr(obj, "scheduler_address", None), str)


class DaskExecutor(Executor):
    """Runs tasks on Dask workers, all of this process's cclab build.

    ``target``: None starts a ``LocalCluster`` of ``jobs`` single-threaded
    workers; a ``"tcp://HOST:PORT"`` address connects to that scheduler; a
    ``distributed.Client`` is used as it is; a cluster object gets a client of
    its own. Only what this executor started is closed by :meth:`close`: never
    the caller's client or cluster."""

    def __init__(self, target: str | Client | Cluster | None, jobs: int) -> None:
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:  # pragma: no cover
            raise ExecutorError("--executor: Dask is not installed (pip install 'dask[distributed]')") from None
        self._cluster: Any = None  # a cluster we started
        self._client: Any = None
        self._own_client = True
        self._stop = threading.Event()
        self._run_id: str | None = None
        self._build = this_build()
        if isinstance(target, str) or target is None:
            where = target or "a local Dask cluster"
        else:
            where = f"the Dask {'client' if _is_client(target) else 'cluster'} {target!r}"
        try:
            if target is None:
                with _children_ignore_sigint():
                    self._cluster = LocalCluster(
                        n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None
                    )
                self._client = Client(self._cluster)
            elif isinstance(target, str):
                self._client = Client(target, timeout="5s")
            elif _is_client(target):
                self._client, self._own_client = target, False
            else:
                # The cluster object, not its address: the client takes its security (TLS) settings.
                self._client = Client(target, timeout="5s")
            self._check_workers()
        except ExecutorError:
            self.close()
            raise
        except Exception as e:  # noqa: BLE001 - any failure to connect is reported the same way
            self.close()
            raise ExecutorError(f"--executor: cannot reach {where} ({type(e).__name__}: {e})") from None

    def _check_workers(self) -> None:
        """Refuses the cluster if a worker present now runs another cclab build (or none)."""
        wrong = self._wrong_workers(self._client.run(this_build, on_error="return"))
        if wrong:
            raise ExecutorError(self._mismatch_message(wrong))

    def _wrong_workers(self, answers: dict[str, Any]) -> dict[str, Any]:
        """The workers whose answer to ``this_build`` is another build, or shows that they
        cannot run cclab. A worker that could not be reached (busy, leaving) is not
        judged here: its tasks check it."""
        return {
            worker: found
            for worker, found in answers.items()
            if (_cannot_run_cclab(found) if isinstance(found, BaseException) else not _same_build(found, self._build))
        }

    def _mismatch_message(self, wrong: dict[str, Any]) -> str:
        def what(found: Any) -> str:  # noqa: ANN401 - a build, or the exception a worker gave instead
            if isinstance(found, BaseException):
                # The scheduler wraps what a worker could not even unpickle in a bare Exception naming it.
                error = str(found) if type(found) is Exception else f"{type(found).__name__}: {found}"
                return f"cannot run cclab: {error}"
            return describe_build(tuple(found))

        shown = [f"{worker} ({what(found)})" for worker, found in sorted(wrong.items(), key=str)[:3]]
        more = f" and {len(wrong) - 3} more" if len(wrong) > 3 else ""
        workers = "worker" if len(wrong) == 1 else "workers"
        return (
            f"--executor: refusing a cluster that mixes cclab builds: {workers} {', '.join(shown)}{more}, "
            f"but this process runs {describe_build(self._build)}; install this build on every worker "
            "(one shared environment) so that a sweep's runs all come from the same simulator"
        )

    def run(self, tasks: Sequence[Task]) -> Iterator[tuple[Task, CoreOutput]]:
        self._stop = threading.Event()
        self._run_id = run_id = uuid.uuid4().hex
        return self._results(list(tasks), run_id, self._stop)

    def _results(self, tasks: list[Task], run_id: str, stop: threading.Event) -> Iterator[tuple[Task, CoreOutput]]:
        from dask.distributed import KilledWorker, as_completed

        # Workers may have joined since the client connected; those that join later
        # are refused by each task (run_checked_task).
        try:
            self._check_workers()
        except ExecutorError:
            self._run_id = None
            raise
        futures = {
            self._client.submit(run_checked_task, self._build, t.text, t.name, t.seed, t.memory_limit, run_id,
                                pure=False): t
            for t in tasks
        }  # fmt: skip
        remaining = set(futures)
        finished = as_completed(futures)
        while remaining:
            stopping = stop.is_set()
            if stopping:
                self._stop_workers(run_id, list(remaining))
            # After a stop, this batch is what finished before it: kept.
            batch = finished.next_batch(block=False)
            refused: dict[str, Any] = {}
            for future in batch:
                remaining.discard(future)
                if future.status == "cancelled":
                    continue
                if future.status == "error" and isinstance(error := future.exception(), BuildMismatch):
                    refused[error.worker] = error.found
                    future.release()
                    continue
                if future.status == "error" and isinstance(error, KilledWorker):
                    # Dask gives up on a task after its workers died running it a few times (out of
                    # memory, killed by the batch system, or unable to unpickle it): one line, and
                    # the runs that finished before are kept (yielded above).
                    self._stop_workers(run_id, list(remaining))
                    self._run_id = None
                    raise ExecutorError(
                        f"--executor: Dask workers died running the run of seed {futures[future].seed} "
                        f"({type(error).__name__}: {str(error).split('. ')[0]}); the runs that finished are kept. "
                        "A worker dies when it runs out of memory, is killed by the batch system, or cannot "
                        "import this cclab"
                    )
                output = future.result()
                # Release the result on the worker at once: keys still held at shutdown
                # make the scheduler copy them between retiring workers, and warn.
                future.release()
                if output is not None:
                    yield futures[future], output
            if refused:
                # The runs that finished on workers of this build are kept (yielded above).
                self._stop_workers(run_id, list(remaining))
                self._run_id = None
                with contextlib.suppress(Exception):  # name every wrong worker present, not only these
                    refused |= self._wrong_workers(self._client.run(this_build, on_error="return"))
                raise ExecutorError(self._mismatch_message(refused))
            if stopping:
                break
            if not batch:
                stop.wait(WAIT_S)  # returns at once when cancel() sets it
        self._run_id = None

    def _stop_workers(self, run_id: str, futures: list[Any]) -> None:
        self._client.cancel(futures)
        # Cancelling a future does not interrupt its task on the worker; the
        # worker's token does. A worker that cannot be reached keeps running
        # its task until it ends, and the result is dropped.
        self._client.run(cancel_worker_runs, run_id, on_error="ignore")

    def cancel(self) -> None:
        self._stop.set()

    def close(self) -> None:
        """Stops a run abandoned half-way on the workers, then closes the client
        and the cluster we started (never the caller's client or cluster, nor a
        scheduler we only connected to), each with a bounded wait."""
        with _quiet_shutdown():
            if self._client is not None:
                if self._run_id is not None:
                    with contextlib.suppress(Exception):
                        self._client.run(cancel_worker_runs, self._run_id, on_error="ignore")
                    self._run_id = None
                if self._cluster is not None:
                    # Our own workers only: a shared scheduler's workers are not ours to quiet.
                    with contextlib.suppress(Exception):
                        self._client.run(_quiet_worker)
                if self._own_client:
                    with contextlib.suppress(Exception):  # a client that never connected has nothing to close
                        self._client.close(timeout=SHUTDOWN_TIMEOUT_S)
                self._client = None
            if self._cluster is not None:
                cluster, self._cluster = self._cluster, None
                try:
                    cluster.close(timeout=SHUTDOWN_TIMEOUT_S)
                except TimeoutError:
                    # The runs are done and their results kept: say so, but do not fail the sweep.
                    warnings.warn(f"the local Dask cluster did not stop within {SHUTDOWN_TIMEOUT_S:g} s; "
                                  "its worker processes may linger", RuntimeWarning, stacklevel=2)  # fmt: skip


def _cannot_run_cclab(error: BaseException) -> bool:
    """``error``, a worker's answer, shows that it has no cclab, or one without this code."""
    if isinstance(error, ImportError | AttributeError):
        return True
    # What a worker could not even unpickle comes back as a bare Exception naming the error.
    return type(error) is Exception and str(error).startswith(("ModuleNotFoundError", "ImportError", "AttributeError"))


def _same_build(found: object, build: Build) -> bool:
    """``found`` (what a worker answered: a build, or an exception) is ``build``."""
    return isinstance(found, tuple | list) and tuple(found) == tuple(build)


def make_executor(spec: str | Client | Cluster | None, jobs: int | None) -> Executor:
    """``None`` or ``"local"``: threads; ``"dask"``: a local Dask cluster; ``"tcp://..."``: a
    scheduler; a ``distributed.Client`` or a cluster object (``SLURMCluster``): its workers."""
    n = jobs or os.cpu_count() or 1
    if spec is None or spec == "local":
        return LocalExecutor(n)
    if isinstance(spec, str):
        if spec == "dask":
            return DaskExecutor(None, n)
        if "://" in spec:
            return DaskExecutor(spec, n)
        raise ExecutorError(f"--executor: unknown executor {spec!r} (use local, dask or tcp://HOST:PORT)")
    if _is_client(spec) or _is_cluster(spec):
        return DaskExecutor(spec, n)
    raise ExecutorError(
        "executor: expected local, dask, tcp://HOST:PORT, a Dask Client or cluster (such as a SLURMCluster) "
        f"or a cclab.executors.Executor, not {type(spec).__name__}"
    )
