"""Where sweep runs execute: local threads (the default) or a Dask cluster.

Every executor takes the same tasks (scenario TOML, name, seed) and yields
``(task, summary JSON)`` as runs finish. The simulator releases the GIL, so
local threads use every core without process start-up costs; Dask spreads runs
over a ``LocalCluster`` or an existing scheduler (``tcp://host:port``) whose
workers have cclab installed.
"""

from __future__ import annotations

import contextlib
import logging
import os
import warnings
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from cclab import _core


class ExecutorError(Exception):
    """An executor cannot be created or reached; the message names the argument."""


@dataclass(frozen=True)
class Task:
    index: int
    text: str
    name: str
    seed: int


def run_task(text: str, name: str, seed: int) -> str:
    """Runs one scenario; module-level so that Dask workers can import it."""
    summary: str = _core.run_toml(text, name, seed)
    return summary


class Executor(ABC):
    @abstractmethod
    def run(self, tasks: Sequence[Task]) -> Iterator[tuple[Task, str]]:
        """Yields each task with its JSON summary, in completion order."""

    @abstractmethod
    def close(self) -> None:
        """Stops the workers, abandoning unfinished tasks."""


class LocalExecutor(Executor):
    def __init__(self, jobs: int) -> None:
        self.jobs = jobs
        self._pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="cclab-run")

    def run(self, tasks: Sequence[Task]) -> Iterator[tuple[Task, str]]:
        pending: dict[Future[str], Task] = {}
        queue = list(reversed(tasks))
        # Keep only a few tasks queued, so an interruption abandons little work.
        while queue or pending:
            while queue and len(pending) < 2 * self.jobs:
                task = queue.pop()
                pending[self._pool.submit(run_task, task.text, task.name, task.seed)] = task
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                yield pending.pop(future), future.result()

    def close(self) -> None:
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


class DaskExecutor(Executor):
    def __init__(self, address: str | None, jobs: int) -> None:
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:  # pragma: no cover
            raise ExecutorError("--executor: Dask is not installed (pip install 'dask[distributed]')") from None
        self._cluster: Any = None
        self._client: Any = None
        try:
            if address is None:
                self._cluster = LocalCluster(
                    n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None
                )
                self._client = Client(self._cluster)
            else:
                self._client = Client(address, timeout="5s")
        except Exception as e:  # noqa: BLE001 - any failure to connect is reported the same way
            self.close()
            where = address or "a local Dask cluster"
            raise ExecutorError(f"--executor: cannot reach {where} ({type(e).__name__}: {e})") from None

    def run(self, tasks: Sequence[Task]) -> Iterator[tuple[Task, str]]:
        from dask.distributed import as_completed

        futures = {self._client.submit(run_task, t.text, t.name, t.seed, pure=False): t for t in tasks}
        for future in as_completed(futures):
            result = future.result()
            # Release the result on the worker at once: keys still held at shutdown
            # make the scheduler copy them between retiring workers, and warn.
            task = futures.pop(future)
            future.release()
            yield task, result

    def close(self) -> None:
        """Client first, then the cluster we started (never a cluster we only
        connected to), each with a bounded wait."""
        with _quiet_shutdown():
            if self._client is not None:
                if self._cluster is not None:
                    # Our own workers only: a shared scheduler's workers are not ours to quiet.
                    with contextlib.suppress(Exception):
                        self._client.run(_quiet_worker)
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


def make_executor(spec: str | None, jobs: int | None) -> Executor:
    """``None`` or ``"local"``: threads; ``"dask"``: a local Dask cluster; ``"tcp://..."``: a scheduler."""
    n = jobs or os.cpu_count() or 1
    if spec is None or spec == "local":
        return LocalExecutor(n)
    if spec == "dask":
        return DaskExecutor(None, n)
    if "://" in spec:
        return DaskExecutor(spec, n)
    raise ExecutorError(f"--executor: unknown executor {spec!r} (use local, dask or tcp://HOST:PORT)")
