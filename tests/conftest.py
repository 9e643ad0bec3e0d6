import fcntl
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def _memory_temp_root() -> str | None:
    """A RAM file system for the tests' temporary directories, if there is one with room to spare."""
    try:
        stat = os.statvfs("/dev/shm")
    except OSError:
        return None
    return "/dev/shm" if os.access("/dev/shm", os.W_OK) and stat.f_bavail * stat.f_frsize > 8 << 30 else None


# A session's tmp_path directories hold about 600 MB in 40,000 files (the studies' run caches), and
# pytest deletes the sessions before the last three at the end of each: on a disk mounted with
# `discard` (the 2-core development machine's) that took 20 s for the 6,000 files of one copied
# cache and 87 s for one session's. In memory it takes a moment. PYTEST_DEBUG_TEMPROOT is pytest's
# setting for where they go; one given by the user (or --basetemp) wins.
if "PYTEST_DEBUG_TEMPROOT" not in os.environ and (_root := _memory_temp_root()):
    os.environ["PYTEST_DEBUG_TEMPROOT"] = _root


def cclab(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Runs the installed command line as a user would, capturing its output."""
    return subprocess.run([sys.executable, "-m", "cclab", *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def ctrl_c_as_on_a_terminal() -> None:
    """A `preexec_fn` for a child a test sends SIGINT: the default handling of Ctrl-C. A shell that
    started the tests in the background passes SIGINT on ignored, and Python then installs no
    handler, so the child would go on as if Ctrl-C had never come."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture
def dumbbell() -> Path:
    return EXAMPLES / "dumbbell.toml"


#: What `cargo test` needs for the UDT 4 interoperability tests
#: (crates/cclab-net/build.rs ignores them without it, unless CI is set).
UDT4_HEADER = Path("/usr/include/udt/udt.h")
UDT4_INSTALL = "apt-get install -y g++ libudt-dev"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Says once, at the end of the test command, which tests a missing system
    package kept from running and the line that installs it: the skipped ones
    here, and cargo's ignored UDT 4 interoperability tests before them."""
    needs: dict[str, int] = {}
    for report in terminalreporter.stats.get("skipped", []):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        found = re.search(r"\((apt-get install [^)]+)\)", reason)
        if found:
            needs[found[1]] = needs.get(found[1], 0) + 1
    for install, count in needs.items():
        terminalreporter.write_line(f"{count} tests skipped for a missing system package: `{install}` runs them")
    ci = os.environ.get("CI", "") not in ("", "0", "false")
    if not ci and not (shutil.which("g++") and UDT4_HEADER.exists()):
        terminalreporter.write_line(
            f"cargo ignored the 4 UDT 4 interoperability tests (crates/cclab-net): `{UDT4_INSTALL}` runs them"
        )


# --- Tests that need the machine to themselves ---------------------------------------------------
#
# The suite runs on several pytest-xdist workers (pyproject.toml's addopts), so by default a test
# shares the CPUs with whatever the other workers run. A test marked `alone` measures something the
# CPUs' contention would distort (the rate of a real transfer through the user-space emulator): it
# runs while no other test of the session runs, and the other workers wait. This is a readers-writer
# lock on two files in the session's temporary directory, which every worker of one session shares
# (and no other session): every test holds ROOM shared, an `alone` test holds it exclusive. GATE
# gives the exclusive holder precedence: a waiting `alone` test holds GATE, which stops new tests
# from entering ROOM, so it runs as soon as the running ones end (flock alone lets shared holders
# starve an exclusive one). Whole tests are locked (setup to teardown), so that a module fixture's
# simulations count as the test's that sets it up.


def _session_dir(config: pytest.Config) -> Path:
    base = config._tmp_path_factory.getbasetemp()  # type: ignore[attr-defined]
    # An xdist worker's base is <session>/popen-gwN; a run without workers has nobody to wait for.
    return base.parent if hasattr(config, "workerinput") else base


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    folder = _session_dir(item.config)
    alone = item.get_closest_marker("alone") is not None
    with open(folder / "cclab-gate.lock", "a") as gate, open(folder / "cclab-room.lock", "a") as room:
        fcntl.flock(gate, fcntl.LOCK_EX)
        fcntl.flock(room, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        if not alone:
            fcntl.flock(gate, fcntl.LOCK_UN)
        try:
            yield
        finally:
            fcntl.flock(room, fcntl.LOCK_UN)
            fcntl.flock(gate, fcntl.LOCK_UN)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Hands the workers the `long` tests first and the `alone` ones last. A long test started late
    runs on with the other workers idle; an `alone` test waits for the running tests to end, with
    the other workers idle, and at the end these are short ones. The sort is stable: the rest keep
    their order, and a module's tests stay together with its module-scoped fixtures."""
    items.sort(key=lambda item: 0 if item.get_closest_marker("long") else 2 if item.get_closest_marker("alone") else 1)


# --- One quick run of each study per session -----------------------------------------------------
#
# Several tests run the same `cclab reproduce STUDY --quick` (tests/test_docs.py states each
# committed report's command in its quick form, tests/test_plots_and_studies.py checks each study's
# quick report, and the README's and docs/python.md's examples run the recovery study's): the same
# runs, each 10-60 s of simulation. The session runs each study's quick reproduction once, on
# whichever worker asks first (the others wait on a lock in the session's directory), and the other
# tests start from a copy of its run cache: their commands then run as written, and render their
# tables, figures and report from the cached runs (run keys name the scenario, seed and simulator
# build, so these are the runs the command would make). A test that needs its own simulations (the
# cluster's, the real studies') does not use it.

QUICK_REPLICATIONS = 2


def quick_study_command(study: str, out: Path) -> list[str]:
    """`cclab reproduce STUDY --quick --replications 2 --out OUT`, as tests/test_docs.py derives it
    from a committed report's command; two replications cover a study's default quick ones (1 or 2)."""
    return ["cclab", "reproduce", study, "--quick", "--replications", str(QUICK_REPLICATIONS), "--out", str(out)]


#: The studies whose quick reproduction is simulation only (the real ones time real transfers, which
#: their own tests run).
SIMULATED_STUDIES = ("buffers", "l4s", "pacing", "recovery", "udt", "wireless")


def quick_study_dir(config: pytest.Config, study: str) -> Path:
    """Where this session's quick run of ``study`` writes."""
    return _session_dir(config) / "quick-studies" / study


def shared_quick_study(config: pytest.Config, study: str) -> Path:
    """The output directory of this session's one run of :func:`quick_study_command` (run from the
    repository, as a reader would, by the first test that asks)."""
    assert study in SIMULATED_STUDIES, study
    out = quick_study_dir(config, study)
    folder = out.parent
    folder.mkdir(exist_ok=True)
    done = folder / f"{study}.done"
    with open(folder / f"{study}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(out, ignore_errors=True)  # what a failed attempt left
            env = dict(os.environ, MPLBACKEND="Agg")
            args = quick_study_command(study, out)[1:]
            proc = subprocess.run([sys.executable, "-m", "cclab", *args], cwd=ROOT, env=env,
                                  capture_output=True, text=True, timeout=900)  # fmt: skip
            assert proc.returncode == 0, f"cclab {shlex.join(args)}:\n{proc.stderr}"
            done.touch()
    return out


def seed_study_cache(config: pytest.Config, study: str, out: Path) -> None:
    """Copies the session's quick run cache of ``study`` to OUT/cache, where a reproduction into OUT reads it."""
    shutil.copytree(shared_quick_study(config, study) / "cache", out / "cache", dirs_exist_ok=True)
