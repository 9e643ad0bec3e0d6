"""Where sweep runs execute: local threads (the default) or a Dask cluster.

Every executor takes the same tasks (scenario TOML, name, seed, memory limit) and yields
``(task, summary JSON)`` as runs finish. The simulator releases the GIL, so
local threads use every core without process start-up costs; Dask spreads runs
over a ``LocalCluster`` or an existing scheduler (``tcp://host:port``) whose
workers have cclab installed.
"""

from __future__ import annotations

import os
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
    #: The memory limit to check the run against (None: the worker's CCLAB_MEMORY_LIMIT, else the default).
    memory_limit: str | None = None


def run_task(text: str, name: str, seed: int, memory_limit: str | None = None) -> str:
    """Runs one scenario; module-level so that Dask workers can import it."""
    summary: str = _core.run_toml(text, name, seed, memory_limit)
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
                pending[self._pool.submit(run_task, task.text, task.name, task.seed, task.memory_limit)] = task
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                yield pending.pop(future), future.result()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


class DaskExecutor(Executor):
    def __init__(self, address: str | None, jobs: int) -> None:
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:  # pragma: no cover
            raise ExecutorError("--executor: Dask is not installed (pip install 'dask[distributed]')") from None
        self._cluster: Any = None
        try:
            if address is None:
                self._cluster = LocalCluster(
                    n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None
                )
                self._client = Client(self._cluster)
            else:
                self._client = Client(address, timeout="5s")
        except Exception as e:  # noqa: BLE001 - any failure to connect is reported the same way
            if self._cluster is not None:
                self._cluster.close()
            where = address or "a local Dask cluster"
            raise ExecutorError(f"--executor: cannot reach {where} ({type(e).__name__}: {e})") from None

    def run(self, tasks: Sequence[Task]) -> Iterator[tuple[Task, str]]:
        from dask.distributed import as_completed

        futures = {self._client.submit(run_task, t.text, t.name, t.seed, t.memory_limit, pure=False): t for t in tasks}
        for future in as_completed(futures):
            yield futures[future], future.result()

    def close(self) -> None:
        self._client.close()
        if self._cluster is not None:
            self._cluster.close()


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
