"""Runs and sweeps a user can trust: Ctrl-C, interrupted and killed sweeps (issue 7).

The signal tests send real signals to a real `cclab` process started in its own
session, the way a terminal's Ctrl-C reaches every process of the foreground
group. The machine running them may be shared and slow: the only timing
assertions are "exits within N seconds" with N far above what a run needs.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import cclab
import polars as pl
import pytest
from cclab.executors import Executor, LocalExecutor, Task
from conftest import EXAMPLES, ctrl_c_as_on_a_terminal
from conftest import cclab as cclab_command

TABLES = ("flows.parquet", "links.parquet", "transfers.parquet", "summary.csv")
RUN_FILES = {"summary.json", "meta.json", "flows.parquet", "links.parquet", "transfers.parquet"}
#: Far above what stopping takes (milliseconds), far below the runs' length (hours).
PROMPT_S = 30


def scenario_file(tmp_path: Path, duration: str, warmup: str = "1s") -> Path:
    text = (EXAMPLES / "dumbbell.toml").read_text()
    assert 'duration = "20s"' in text and 'warmup = "5s"' in text
    path = tmp_path / f"dumbbell-{duration}.toml"
    path.write_text(text.replace('duration = "20s"', f'duration = "{duration}"').replace(
        'warmup = "5s"', f'warmup = "{warmup}"'))  # fmt: skip
    return path


@contextmanager
def running(argv: Sequence[str], cwd: Path | None = None) -> Iterator[subprocess.Popen[str]]:
    """A process in its own session (so a signal to its group reaches nothing else); killed if a test fails."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd,
                            start_new_session=True, preexec_fn=ctrl_c_as_on_a_terminal)  # fmt: skip
    try:
        yield proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "cclab", *args]


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting until {what}")
        time.sleep(0.05)


def simulating(proc: subprocess.Popen[str]) -> None:
    """Waits until the process is well into its simulation: start-up takes about 0.2 s of CPU."""
    wait_until(lambda: proc.poll() is not None or cpu_seconds(proc.pid) > 1.5, 120, "the simulation runs")
    assert proc.poll() is None, proc.communicate()


def ctrl_c(proc: subprocess.Popen[str]) -> None:
    os.killpg(proc.pid, signal.SIGINT)


def finish(proc: subprocess.Popen[str], within: float = PROMPT_S) -> tuple[int, str, str]:
    try:
        stdout, stderr = proc.communicate(timeout=within)
    except subprocess.TimeoutExpired:
        pytest.fail(f"still running {within} s after Ctrl-C")
    return proc.returncode, stdout, stderr


def finished_runs(out: Path) -> list[Path]:
    runs = out / "runs"
    return sorted(p for p in runs.iterdir() if not p.name.startswith(".")) if runs.is_dir() else []


def staging_leftovers(out: Path) -> list[Path]:
    """Anything a half-finished run could leave: hidden entries in runs/ and the staging area."""
    hidden = list((out / "runs").glob(".*")) if (out / "runs").is_dir() else []
    staged = list((out / ".staging").iterdir()) if (out / ".staging").is_dir() else []
    return hidden + staged


def one_line(stderr: str) -> str:
    assert stderr.count("\n") == 1 and stderr.endswith("\n"), repr(stderr)
    assert "Traceback" not in stderr and "panicked" not in stderr
    return stderr.strip()


# --- Ctrl-C ------------------------------------------------------------------------------------


def test_ctrl_c_stops_a_long_run_at_once_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with running(command("run", str(scenario_file(tmp_path, "2h")), "--out", str(out))) as proc:
        simulating(proc)
        ctrl_c(proc)
        code, stdout, stderr = finish(proc)
    assert code == 130, stderr
    line = one_line(stderr)
    assert line.startswith("cclab: interrupted") and "of 7200 simulated seconds" in line, line
    assert stdout == ""
    assert not out.exists(), "an interrupted run writes nothing"


def test_ctrl_c_stops_cclab_run_in_python(tmp_path: Path) -> None:
    script = "import sys, cclab\ntry:\n    cclab.run(sys.argv[1])\nexcept KeyboardInterrupt as e:\n" \
             "    print(type(e).__name__, e.args[1] < 7200)\n    sys.exit(3)\n"  # fmt: skip
    with running([sys.executable, "-c", script, str(scenario_file(tmp_path, "2h"))]) as proc:
        simulating(proc)
        ctrl_c(proc)
        code, stdout, stderr = finish(proc)
    assert (code, stdout, stderr) == (3, "RunCancelled True\n", "")


def test_a_cancel_token_stops_a_run_from_another_thread(tmp_path: Path) -> None:
    scn = cclab.load(scenario_file(tmp_path, "2h"))
    token = cclab.CancelToken()
    timer = threading.Timer(0.5, token.cancel)
    timer.start()
    started = time.monotonic()
    with pytest.raises(cclab.RunCancelled) as err:
        cclab.run(scn, cancel=token)
    assert time.monotonic() - started < PROMPT_S
    message, simulated = err.value.args
    assert 0 < simulated < 7200 and "cancelled" in message
    assert isinstance(err.value, KeyboardInterrupt), "Ctrl-C and a cancelled token raise the same type"
    assert token.cancelled
    # A token cancelled beforehand stops the run before its first event.
    with pytest.raises(cclab.RunCancelled) as err:
        cclab._core.run_toml(scn.to_toml(), scn.name, None, cancel=token)
    assert err.value.args[1] == 0


def sweep_args(scenario: Path, out: Path) -> list[str]:
    # Two runs of 3 s finish at once; two of 600 s simulated take seconds each.
    return command("sweep", str(scenario), "--grid", "run.duration=3s,600s", "--replications", "2",
                   "--jobs", "2", "--out", str(out))  # fmt: skip


def test_ctrl_c_stops_a_sweep_keeps_finished_runs_and_resuming_completes_it(tmp_path: Path) -> None:
    scenario, out = scenario_file(tmp_path, "20s"), tmp_path / "sw"
    with running(sweep_args(scenario, out)) as proc:
        wait_until(lambda: len(finished_runs(out)) >= 2 or proc.poll() is not None, 120, "two runs finished")
        ctrl_c(proc)
        code, stdout, stderr = finish(proc)
    assert code == 130, stderr
    line = one_line(stderr)
    assert "2 of 4 runs" in line and str(out) in line, line
    kept = finished_runs(out)
    assert len(kept) == 2
    for run in kept:
        assert RUN_FILES <= {p.name for p in run.iterdir()}
        assert json.loads((run / "meta.json").read_text())["point"] == {"run.duration": "3s"}
    assert staging_leftovers(out) == []
    assert [t for t in TABLES if (out / t).exists()] == [], "no aggregate table for an unfinished sweep"
    meta = json.loads((out / "sweep.json").read_text())
    assert meta["complete"] is False and len(meta["runs"]) == 4 and meta["done"] == 2

    resumed = subprocess.run(sweep_args(scenario, out), capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    meta = json.loads((out / "sweep.json").read_text())
    assert meta["complete"] is True and meta["done"] == 4
    assert sorted(p.name for p in finished_runs(out)) == sorted(meta["runs"])
    assert pl.read_parquet(out / "flows.parquet").height == 4 * 2
    assert all((out / t).is_file() for t in TABLES)
    assert staging_leftovers(out) == []


STUBBORN = """
import importlib, sys
from cclab import cli
from cclab.executors import LocalExecutor

class Stubborn(LocalExecutor):
    # Ignores cancellation, like a Dask worker that cannot interrupt its task.
    def cancel(self):
        pass

importlib.import_module("cclab.sweep").make_executor = lambda spec, jobs: Stubborn(jobs)
sys.exit(cli.main(sys.argv[1:]))
"""


def test_a_second_ctrl_c_exits_at_once(tmp_path: Path) -> None:
    scenario, out = scenario_file(tmp_path, "2h"), tmp_path / "sw"
    argv = [sys.executable, "-c", STUBBORN, "sweep", str(scenario), "--grid", "flows[0].recovery=newreno,sack",
            "--jobs", "2", "--out", str(out)]  # fmt: skip
    with running(argv) as proc:
        simulating(proc)
        ctrl_c(proc)
        time.sleep(1.0)
        assert proc.poll() is None, "the runs ignore the first Ctrl-C"
        ctrl_c(proc)
        code, _, stderr = finish(proc)
    assert code == 130
    assert "Traceback" not in stderr and "interrupted" in stderr
    assert finished_runs(out) == []
    assert [t for t in TABLES if (out / t).exists()] == []
    assert json.loads((out / "sweep.json").read_text())["complete"] is False


STUBBORN_API = """
import sys, cclab
from cclab.executors import LocalExecutor

class Stubborn(LocalExecutor):
    def cancel(self):
        pass

executor = Stubborn(2)
try:
    cclab.sweep(sys.argv[1], grid={"flows[0].recovery": ["newreno", "sack"]}, executor=executor, out=sys.argv[2],
                progress=False)
except KeyboardInterrupt as e:
    print(type(e).__name__)
    sys.exit(3)
finally:
    executor.close()  # the caller's executor: closing it stops its runs
"""


def test_in_python_a_second_ctrl_c_raises_keyboard_interrupt_at_once(tmp_path: Path) -> None:
    out = tmp_path / "sw"
    with running([sys.executable, "-c", STUBBORN_API, str(scenario_file(tmp_path, "2h")), str(out)]) as proc:
        simulating(proc)
        ctrl_c(proc)
        time.sleep(1.0)
        assert proc.poll() is None, "the runs ignore the first Ctrl-C"
        ctrl_c(proc)
        code, stdout, stderr = finish(proc)
    assert (code, stdout) == (3, "KeyboardInterrupt\n"), stderr
    assert json.loads((out / "sweep.json").read_text())["complete"] is False
    assert finished_runs(out) == [] and staging_leftovers(out) == []


def test_cancelling_a_dask_sweep_stops_the_tasks_on_the_workers(tmp_path: Path) -> None:
    pytest.importorskip("dask.distributed")
    from cclab.executors import DaskExecutor

    long, short = (cclab.load(scenario_file(tmp_path, d)) for d in ("2h", "3s"))
    executor = DaskExecutor(None, 2)
    outcome: dict[str, list] = {}

    def both_runs() -> None:
        outcome["long"] = list(executor.run([Task(i, long.to_toml(), long.name, i) for i in range(2)]))
        # Each worker has one thread: this run waits for the two-hour ones unless they stopped.
        outcome["short"] = list(executor.run([Task(0, short.to_toml(), short.name, 1)]))

    try:
        runner = threading.Thread(target=both_runs)
        runner.start()
        time.sleep(3)
        executor.cancel()
        runner.join(120)
        assert not runner.is_alive(), "the workers are still busy with the cancelled runs"
        assert outcome["long"] == []
        assert len(outcome["short"]) == 1
    finally:
        executor.close()


# --- Aggregate tables ------------------------------------------------------------------------------


class StopAfter(Executor):
    """Runs tasks locally and raises KeyboardInterrupt (a Ctrl-C) after `n` results."""

    def __init__(self, n: int) -> None:
        self.inner, self.n = LocalExecutor(2), n

    def run(self, tasks: Sequence[Task]) -> Iterator[tuple[Task, str]]:
        for done, item in enumerate(self.inner.run(tasks), start=1):
            yield item
            if done >= self.n:
                raise KeyboardInterrupt

    def close(self) -> None:
        self.inner.close()


def test_an_interrupted_resweep_leaves_no_stale_tables_and_plot_refuses_it(tmp_path: Path) -> None:
    scenario, out = scenario_file(tmp_path, "3s"), tmp_path / "sw"
    grid = ["--grid", "flows[0].recovery=newreno,sack"]
    first = cclab_command("sweep", str(scenario), *grid, "--replications", "2", "--out", str(out))
    assert first.returncode == 0, first.stderr
    assert all((out / t).is_file() for t in TABLES)
    plotted = cclab_command("plot", str(out), "--kind", "sweep", "--output", str(tmp_path / "before"))
    assert plotted.returncode == 0, plotted.stderr

    with pytest.raises(cclab.SweepInterrupted):
        cclab.sweep(cclab.load(scenario), grid={"flows[0].recovery": ["newreno", "sack"]}, replications=10,
                    executor=StopAfter(3), out=out, progress=False)  # fmt: skip
    assert [t for t in TABLES if (out / t).exists()] == [], "the 2-replication tables are gone"
    meta = json.loads((out / "sweep.json").read_text())
    assert meta["complete"] is False and meta["replications"] == 10 and len(meta["runs"]) == 20
    assert meta["done"] == 4 + 3
    assert len(finished_runs(out)) == 4 + 3

    refused = cclab_command("plot", str(out), "--kind", "sweep", "--output", str(tmp_path / "after"))
    assert refused.returncode == 2
    line = one_line(refused.stderr)
    assert line.startswith(f"cclab: error: {out}: incomplete sweep (7 of 20 runs finished"), line
    assert not list(tmp_path.glob("after.*"))


def test_python_sweep_writes_the_same_files_as_the_command(tmp_path: Path) -> None:
    scn = cclab.load(scenario_file(tmp_path, "3s"))
    grid = {"flows[0].recovery": ["newreno", "sack"]}
    cclab.sweep(scn, grid=grid, replications=2, out=tmp_path / "py", progress=False)
    made = cclab_command("sweep", str(scenario_file(tmp_path, "3s")), "--grid", "flows[0].recovery=newreno,sack",
                         "--replications", "2", "--out", str(tmp_path / "cli"))  # fmt: skip
    assert made.returncode == 0, made.stderr
    py, cli = (json.loads((tmp_path / d / "sweep.json").read_text()) for d in ("py", "cli"))
    assert py == cli
    assert py["complete"] is True and py["grid"] == ["flows[0].recovery"] and py["replications"] == 2
    for table in TABLES:
        a, b = (tmp_path / "py" / table), (tmp_path / "cli" / table)
        assert a.is_file() and b.is_file()
        if table.endswith(".parquet"):
            assert pl.read_parquet(a).equals(pl.read_parquet(b))


def test_one_sweep_at_a_time_per_directory(tmp_path: Path) -> None:
    out = tmp_path / "sw"
    scn = cclab.load(scenario_file(tmp_path, "3s"))

    class Nested(LocalExecutor):
        """Starts a second sweep into the same directory while the first runs."""

        error: BaseException | None = None

        def run(self, tasks: Sequence[Task]) -> Iterator[tuple[Task, str]]:
            try:
                cclab.sweep(scn, replications=1, out=out, progress=False)
            except cclab.SweepError as e:
                Nested.error = e
            yield from super().run(tasks)

    cclab.sweep(scn, replications=2, executor=Nested(1), out=out, progress=False)
    assert Nested.error is not None and "another sweep" in str(Nested.error)
    assert json.loads((out / "sweep.json").read_text())["replications"] == 2


# --- Staging -------------------------------------------------------------------------------------

KILL_AT_THIRD_RENAME = """
import os, signal, sys
from pathlib import Path
import cclab

real_rename = os.rename
renamed = 0

def rename(src, dst):
    # SIGKILL with the third run fully written, just before it moves into runs/.
    global renamed
    if Path(dst).parent.name == "runs":
        renamed += 1
        if renamed == 3:
            os.kill(os.getpid(), signal.SIGKILL)
    return real_rename(src, dst)

os.rename = rename
scn = cclab.load(sys.argv[1])
cclab.sweep(scn, grid={"flows[0].recovery": ["newreno", "sack"]}, replications=2, jobs=1, out=sys.argv[2],
            progress=False)
"""


def test_a_killed_sweep_leaves_nothing_the_runs_glob_reads_and_the_next_sweep_cleans_up(tmp_path: Path) -> None:
    scenario, out = scenario_file(tmp_path, "3s"), tmp_path / "sw"
    killed = subprocess.run([sys.executable, "-c", KILL_AT_THIRD_RENAME, str(scenario), str(out)],
                            capture_output=True, text=True, timeout=300)  # fmt: skip
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert len(finished_runs(out)) == 2
    glob = str(out / "runs" / "*" / "flows.parquet")
    assert pl.scan_parquet(glob).collect().height == 2 * 2, "the glob reads the finished runs' rows only"

    # What the code before this layout left in such a case: a complete hidden run beside the others.
    shutil.copytree(finished_runs(out)[0], out / "runs" / f".{finished_runs(out)[0].name}-old")
    result = cclab.sweep(cclab.load(scenario), grid={"flows[0].recovery": ["newreno", "sack"]}, replications=2,
                         jobs=1, out=out, progress=False)  # fmt: skip
    assert staging_leftovers(out) == []
    assert pl.scan_parquet(glob).collect().height == result.flows.height == 4 * 2
    assert json.loads((out / "sweep.json").read_text())["complete"] is True
