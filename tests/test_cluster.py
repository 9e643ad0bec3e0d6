"""Sweeps on a Dask cluster the caller owns (a Client or a cluster object such as
dask-jobqueue's SLURMCluster), and the refusal of a cluster whose workers run
another cclab build.

A worker "of another build" is a real worker process started with a Dask
preload script that replaces ``cclab._core.build_id`` in that process before
it serves anything: from cclab's side it is exactly a worker whose compiled
core reports another build, and the code under test has no test-only path.
"""

from __future__ import annotations

import pickle
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import cclab
import cclab.sweepdir
import pytest
from cclab.executors import BuildMismatch, DaskExecutor, ExecutorError, Task, run_checked_task, this_build
from conftest import EXAMPLES

distributed = pytest.importorskip("dask.distributed")

ROOT = Path(__file__).resolve().parent.parent
SHORT = cclab.load(EXAMPLES / "dumbbell.toml").with_(**{"run.duration": "3s", "run.warmup": "1s"})
# Hours of CPU: a worker that takes one is busy until the run is cancelled.
ENDLESS = SHORT.with_(**{"run.duration": "2h"})
STALE_BUILD = "0" * 32
PRELOADS = {
    # The worker's compiled core reports another build.
    "stale": f"from cclab import _core\n_core.build_id = lambda: {STALE_BUILD!r}\n",
    # The worker cannot import cclab at all.
    "bare": "import sys\nsys.modules['cclab'] = None\n",
    # The worker's process dies as soon as it runs a run (as one killed for its memory would).
    "dies": "import os\nimport cclab.executors\ncclab.executors.run_worker_task = lambda *args: os._exit(9)\n",
}


@contextmanager
def worker(scheduler: str, kind: str, tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A worker process of ``kind`` (a key of PRELOADS) joining ``scheduler``."""
    preload = tmp_path / f"preload_{kind}.py"
    preload.write_text(PRELOADS[kind])
    argv = [sys.executable, "-m", "distributed.cli.dask_worker", scheduler, "--nthreads", "1", "--name", kind,
            "--preload", str(preload), "--no-dashboard", "--death-timeout", "60"]  # fmt: skip
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def worker_address(client: distributed.Client, name: str, timeout: float = 60) -> str:
    """The address of the worker called ``name``, once it has joined."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for address, info in client.scheduler_info(n_workers=-1)["workers"].items():
            if info["name"] == name:
                return str(address)
        time.sleep(0.2)
    raise AssertionError(f"worker {name} did not join within {timeout:g} s")


@pytest.fixture
def cluster() -> Iterator[distributed.LocalCluster]:
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, dashboard_address=None) as c:
        yield c


def test_a_task_refuses_to_run_on_another_build() -> None:
    mine = this_build()
    assert mine == (cclab.__version__, cclab._core.build_id())
    summary = run_checked_task(mine, SHORT.to_toml(), SHORT.name, 1, None, "run-1")
    assert summary is not None
    with pytest.raises(BuildMismatch) as err:
        run_checked_task((mine[0], STALE_BUILD), SHORT.to_toml(), SHORT.name, 1, None, "run-2")
    assert (err.value.worker, err.value.found) == ("this process", mine)
    # Dask sends it back to the client pickled.
    again = pickle.loads(pickle.dumps(err.value))
    assert (again.worker, again.found) == ("this process", mine)


def test_a_cluster_with_workers_of_another_build_or_none_is_refused_before_anything_runs(
    cluster: distributed.LocalCluster, tmp_path: Path
) -> None:
    address = cluster.scheduler_address
    with distributed.Client(cluster) as client, worker(address, "stale", tmp_path), worker(address, "bare", tmp_path):
        stale, bare = worker_address(client, "stale"), worker_address(client, "bare")
        out = tmp_path / "sw"
        with pytest.raises(ExecutorError) as err:
            cclab.sweep(SHORT, replications=2, executor=client, out=out, progress=False)
        message = str(err.value)
        assert "\n" not in message
        assert f"{stale} (cclab {cclab.__version__} build {STALE_BUILD[:12]})" in message, message
        assert re.search(rf"{re.escape(bare)} \(cannot run cclab: [A-Za-z]*Error", message), message
        assert f"this process runs cclab {cclab.__version__} build {cclab._core.build_id()[:12]}" in message
        # The good worker is not named, and nothing ran.
        good = set(client.scheduler_info(n_workers=-1)["workers"]) - {stale, bare}
        assert len(good) == 1 and good.pop() not in message
        assert list((out / "runs").iterdir()) == []
        # The caller's client is left open, and so is the cluster.
        assert client.status == "running" and client.submit(sum, [1, 2]).result() == 3

        # From the command line, through the scheduler's address: one line, status 2.
        scenario = tmp_path / "short.toml"
        scenario.write_text(SHORT.to_toml())
        proc = subprocess.run([sys.executable, "-m", "cclab", "sweep", str(scenario), "--executor", address],
                              capture_output=True, text=True, timeout=300)  # fmt: skip
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
        assert proc.stderr.startswith("cclab: error: --executor: refusing a cluster that mixes cclab builds")
        assert stale in proc.stderr and bare in proc.stderr
    assert cluster.status.name == "running"


def test_a_worker_of_another_build_that_joins_during_a_sweep_runs_nothing(
    cluster: distributed.LocalCluster, tmp_path: Path
) -> None:
    with distributed.Client(cluster) as client:
        executor = DaskExecutor(client, 1)  # the check of the workers present passes: one, of this build
        outcome: dict[str, object] = {}

        def sweep() -> None:
            try:
                outcome["results"] = list(executor.run([Task(i, ENDLESS.to_toml(), ENDLESS.name, i) for i in range(6)]))
            except ExecutorError as e:
                outcome["error"] = str(e)

        runner = threading.Thread(target=sweep)
        runner.start()
        try:
            # The one worker is inside an endless run; the other tasks wait on the scheduler.
            deadline = time.monotonic() + 60
            while not any(client.processing().values()):
                assert time.monotonic() < deadline, "no task started"
                time.sleep(0.1)
            with worker(cluster.scheduler_address, "stale", tmp_path):
                stale = worker_address(client, "stale")
                runner.join(120)
                assert not runner.is_alive(), "a task ran on the stale worker, or its refusal was not reported"
        finally:
            executor.cancel()
            runner.join(60)
            executor.close()
        assert "results" not in outcome
        message = str(outcome["error"])
        assert f"worker {stale} (cclab {cclab.__version__} build {STALE_BUILD[:12]})" in message, message
        # The refusal stopped the endless run on the good worker: it is free for the next task at once.
        assert client.submit(sum, [1, 2]).result(timeout=30) == 3
        # Closing the executor left the caller's client open.
        assert client.status == "running"


def test_executor_takes_a_client_or_a_cluster_and_refuses_anything_else(
    cluster: distributed.LocalCluster, tmp_path: Path
) -> None:
    local = cclab.sweep(SHORT, replications=2, progress=False)
    with distributed.Client(cluster) as client:
        on_client = cclab.sweep(SHORT, replications=2, executor=client, progress=False)
        assert client.status == "running"
    on_cluster = cclab.sweep(SHORT, replications=2, executor=cluster, progress=False)
    assert cluster.status.name == "running"
    assert on_client.flows.equals(local.flows) and on_cluster.flows.equals(local.flows)
    # The command line reaches the same workers through the scheduler's address.
    scenario = tmp_path / "short.toml"
    scenario.write_text(SHORT.to_toml())
    proc = subprocess.run([sys.executable, "-m", "cclab", "sweep", str(scenario), "--replications", "2",
                           "--executor", cluster.scheduler_address, "--out", str(tmp_path / "sw")],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert cclab.sweepdir.read_sweep(tmp_path / "sw").flows.equals(local.flows)
    with pytest.raises(ExecutorError) as err:
        cclab.sweep(SHORT, executor=42, progress=False)  # type: ignore[arg-type]
    assert str(err.value).startswith("executor: expected local, dask, tcp://HOST:PORT, a Dask Client or cluster")
    assert str(err.value).endswith("not int")


def recipe_block(marker: str) -> str:
    from test_docs import parse_blocks

    blocks = [b for b in parse_blocks(ROOT / "docs" / "cluster.md") if b.language == "python" and marker in b.text]
    assert len(blocks) == 1, f"docs/cluster.md: expected one python block with {marker!r}"
    return blocks[0].text


def test_the_recipe_s_slurm_cluster_writes_the_job_script_it_describes() -> None:
    # The part of the recipe that needs SLURM only to submit jobs: the cluster object
    # and its job script (tests/test_docs.py runs the rest on a LocalCluster).
    pytest.importorskip("dask_jobqueue")
    namespace: dict[str, object] = {}
    exec(compile(recipe_block("SLURMCluster("), "docs/cluster.md", "exec"), namespace)
    cluster = namespace["cluster"]
    try:
        script = cluster.job_script()  # type: ignore[attr-defined]
    finally:
        cluster.close()  # type: ignore[attr-defined]
    assert "#SBATCH --cpus-per-task=8" in script and "#SBATCH -t 04:00:00" in script, script
    # Single-threaded workers, one per core: a run uses one core.
    assert "--nthreads 1" in script and "--nworkers 8" in script, script
    assert script.splitlines()[-1].startswith("$HOME/cclab-env/bin/python -m distributed.cli.dask_worker"), script


def test_a_sweep_whose_workers_die_running_it_stops_with_one_line(tmp_path: Path) -> None:
    import dask

    # The scheduler gives up on a task after the first worker death it causes, not the third.
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        with distributed.LocalCluster(n_workers=0, dashboard_address=None) as empty:
            with distributed.Client(empty) as client, worker(empty.scheduler_address, "dies", tmp_path):
                worker_address(client, "dies")
                with pytest.raises(ExecutorError) as err:
                    cclab.sweep(SHORT, replications=1, executor=client, progress=False)
                message = str(err.value)
                assert "\n" not in message
                assert message.startswith("--executor: Dask workers died running the run of seed"), message
                assert "KilledWorker" in message or "died" in message
