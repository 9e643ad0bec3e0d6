"""Every code block in README.md and docs/ runs, so a doc that lies fails CI.

Conventions for writing docs (README.md and docs/**/*.md):

- Every fenced block names its language:
  ``toml``    a scenario; the simulator validates it as ``cclab validate`` does.
  ``sh``, ``bash``  shell commands; each block runs with ``bash -e`` in a fresh
              temporary directory holding a copy of ``examples/``, with the
              installed ``cclab`` on the PATH.
  ``python``  run in order within one file, sharing one namespace, in a
              temporary directory holding a copy of ``examples/``.
  ``text``, ``console``, ``json``  output and listings; not run.
  ``rust``    excerpts of Rust definitions; not run (cargo compiles the real ones).
- A block introduced by a line ending in a backquoted path and a colon
  ("this is `examples/dumbbell.toml`:") must be that file, byte for byte.
- ``<!-- excerpt of PATH -->`` on the line before a block: the block must
  appear in file PATH verbatim (a toml excerpt is not validated on its own).
- ``<!-- fragment: wrap in PATH -->`` before a toml block: the block is merged
  into scenario PATH (its tables merged key by key, its arrays of tables such
  as ``[[flows]]`` replacing PATH's) and the result is validated.
- A command too slow for the test suite gets a fast equivalent in
  SUBSTITUTIONS; a block that cannot run at all is listed in NOT_RUN with the
  reason. Both tables are checked for stale entries.

Generated study reports (``docs/studies/*/report.md``) are data, not docs:
their blocks are not run, but the command that regenerates each is, in its
``--quick`` form (``test_study_report_states_the_command_that_regenerates_it``).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from cclab import _core
from cclab.scenario import tomllib
from conftest import SIMULATED_STUDIES, quick_study_command, quick_study_dir, seed_study_cache, shared_quick_study

ROOT = Path(__file__).resolve().parent.parent
REPORTS = "docs/studies/*/report.md"

RUN_KINDS = {"toml", "sh", "bash", "python"}
#: Languages that are never run, and why.
NOT_RUN_KINDS = {
    "text": "output or a listing",
    "console": "a terminal session (commands with their output)",
    "rust": "an excerpt of Rust definitions; cargo compiles the real code",
    "json": "output or a sample document",
}

#: Blocks that cannot run, as (file, text the block contains) -> why not.
NOT_RUN: dict[tuple[str, str], str] = {
    ("README.md", "cargo test --workspace"): "the test command itself: it runs this test suite (.ci/run runs it)",
    ("docs/cluster.md", "pip install -v \"./cclab[cluster]\""):
        "compiles the simulator into a new environment: minutes; the tests run inside an installation already",
    ("docs/cluster.md", "sbatch --array"):
        "needs SLURM; tests/test_cluster.py runs cclab sweep --executor tcp://... against a local scheduler",
}  # fmt: skip

#: The SLURM cluster of docs/cluster.md; tests/test_cluster.py checks the job script it writes.
SLURM_CLUSTER = """from dask_jobqueue import SLURMCluster

cluster = SLURMCluster(
    cores=8,                                # CPUs per SLURM job
    processes=8,                            # 8 workers of 1 thread each: one run per core
    memory="32GB",                          # per job: 4 GB per worker
    walltime="04:00:00",
    python="$HOME/cclab-env/bin/python",    # the shared environment, on every node
    worker_extra_args=["--lifetime", "3h50m", "--lifetime-stagger", "4m"],   # retire before the walltime
)
"""

#: Fast equivalents, as (file, text in a block, replacement, why). Applied in
#: order, each to every block of that file that contains it.
SUBSTITUTIONS: list[tuple[str, str, str, str]] = [
    ("README.md", "pip install -v . && ", "",
     "the tests run inside that installation; building it again here would take minutes"),
    ("README.md", "--replications 10 --out out/sweep", "--replications 2 --out out/sweep",
     "two replications exercise the same code as ten"),
    ("README.md", "replications=10)", "replications=2)",
     "two replications exercise the same code as ten"),
    ("README.md", "cclab reproduce recovery --replications 20 --out docs/studies/recovery",
     "cclab reproduce recovery --quick --replications 2 --out docs/studies/recovery",
     "the full study takes minutes; --quick runs the same code on fewer points"),
    ("docs/python.md", "cclab.Scenario.from_dict({...})", "cclab.Scenario.from_dict(scn.to_dict())",
     "{...} stands for the reader's own dict"),
    ("docs/python.md", "cclab.Scenario.from_toml(text,", "cclab.Scenario.from_toml(scn.to_toml(),",
     "`text` stands for the reader's own TOML"),
    ("docs/python.md", "replications=10,", "replications=2,",
     "two replications exercise the same code as ten"),
    ("docs/python.md", 'StudyOptions(out=Path("out/recovery"), replications=10)',
     'StudyOptions(out=Path("out/recovery"), replications=2, quick=True)',
     "the full study takes minutes; quick runs the same code on fewer points"),
    ("docs/cluster.md", SLURM_CLUSTER,
     "from dask.distributed import LocalCluster\n\ncluster = LocalCluster(n_workers=2, threads_per_worker=1, "
     "dashboard_address=None)\n",
     "the same recipe on a local cluster: no SLURM here"),
    ("docs/cluster.md", "cluster.scale(jobs=4)", "cluster.scale(2)", "a LocalCluster counts workers, not jobs"),
    ("docs/cluster.md", "replications=20, executor=client)", "replications=2, quick=True, executor=client)",
     "the full study takes minutes; quick runs the same code on fewer points"),
    ("docs/cluster.md", "replications=20,", "replications=2,", "two replications exercise the same code as twenty"),
]  # fmt: skip

#: Examples that run a simulated study's quick reproduction (once SUBSTITUTIONS are applied), as
#: (file, text in a block, study, the directory the block writes it to): the block starts with the
#: session's quick run cache of that study in place (tests/conftest.py), so it renders its report
#: from those runs rather than simulating them once more.
SEEDED: list[tuple[str, str, str, str]] = [
    ("README.md", "cclab reproduce recovery --quick --replications 2 --out docs/studies/recovery",
     "recovery", "docs/studies/recovery"),
    ("docs/python.md", 'StudyOptions(out=Path("out/recovery"), replications=2, quick=True)',
     "recovery", "out/recovery"),
]  # fmt: skip

_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>[^`\n]*)$")
_INTRODUCED_AS_FILE = re.compile(r"`(?P<path>[^`\s]+\.[A-Za-z0-9]+)`:\s*$")
_MARKER = re.compile(r"^<!--\s*(?P<what>excerpt of|fragment: wrap in)\s+(?P<path>\S+)\s*-->$")


@dataclass(frozen=True)
class Block:
    file: str  # relative to the repository, /-separated
    line: int  # of the opening fence
    language: str
    text: str
    before: str  # the last non-blank line before the fence

    @property
    def id(self) -> str:
        return f"{self.file}:{self.line}:{self.language or 'unlabelled'}"


def doc_files() -> list[Path]:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return [f for f in files if f.is_file()]


def is_report(path: Path) -> bool:
    return path.match(REPORTS) or path.relative_to(ROOT).match(REPORTS)


def parse_blocks(path: Path) -> list[Block]:
    return parse_markdown(path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix())


def parse_markdown(text: str, rel: str) -> list[Block]:
    """The fenced code blocks of Markdown text (CommonMark fences, not indented code)."""
    lines = text.splitlines()
    blocks, i = [], 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, start = m["fence"], i
        before = next((ln.strip() for ln in reversed(lines[:start]) if ln.strip()), "")
        body = []
        i += 1
        # A closing fence is at least as long as the opening one, of the same character.
        while i < len(lines) and not re.match(rf"^ {{0,3}}{fence[0]}{{{len(fence)},}}\s*$", lines[i]):
            body.append(lines[i][len(m["indent"]) :] if lines[i].startswith(m["indent"]) else lines[i])
            i += 1
        language = m["info"].strip().split()[0].lower() if m["info"].strip() else ""
        blocks.append(Block(rel, start + 1, language, "\n".join(body) + "\n", before))
        i += 1
    return blocks


def all_blocks() -> list[Block]:
    return [b for f in doc_files() if not is_report(f) for b in parse_blocks(f)]


BLOCKS = all_blocks()


def not_run_reason(block: Block) -> str | None:
    if block.language in NOT_RUN_KINDS:
        return NOT_RUN_KINDS[block.language]
    return next((why for (file, text), why in NOT_RUN.items() if file == block.file and text in block.text), None)


def runnable(block: Block) -> str:
    """The block's text with this file's substitutions applied."""
    text = block.text
    for file, old, new, _why in SUBSTITUTIONS:
        if file == block.file:
            text = text.replace(old, new)
    return text


def seed_caches(block: Block, workdir: Path, config: pytest.Config) -> None:
    """Puts the session's quick run cache in place for a block that reproduces a study (SEEDED)."""
    for file, text, study, out in SEEDED:
        if file == block.file and text in runnable(block):
            seed_study_cache(config, study, workdir / out)


def blocks_of(*languages: str) -> list[Any]:
    return [pytest.param(b, id=b.id) for b in BLOCKS if b.language in languages and not_run_reason(b) is None]


def marker(block: Block) -> tuple[str, Path] | None:
    m = _MARKER.match(block.before)
    return (m["what"], ROOT / m["path"]) if m else None


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A scratch directory with the examples, as a reader's clone has them."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    return tmp_path


def test_every_block_names_a_language_this_test_knows() -> None:
    unknown = [b.id for b in BLOCKS if b.language not in RUN_KINDS | set(NOT_RUN_KINDS)]
    known = ", ".join(sorted(RUN_KINDS | set(NOT_RUN_KINDS)))
    assert not unknown, f"blocks without a known language ({known}; text for output): {unknown}"


def test_the_tables_have_no_stale_entries() -> None:
    # An entry that matches no block means the doc changed: review it rather than let it rot.
    for (file, text), why in NOT_RUN.items():
        assert any(b.file == file and text in b.text for b in BLOCKS), f"NOT_RUN entry matches no block: {text!r}"
        assert why
    for file, old, _new, why in SUBSTITUTIONS:
        assert any(b.file == file and old in b.text for b in BLOCKS), f"SUBSTITUTIONS entry matches nothing: {old!r}"
        assert why
    for file, text, study, _out in SEEDED:
        assert any(b.file == file and text in runnable(b) for b in BLOCKS), f"SEEDED entry matches nothing: {text!r}"
        assert study in SIMULATED_STUDIES


def test_every_block_is_run_or_explained() -> None:
    counts = Counter(b.language if not_run_reason(b) is None else "not run" for b in BLOCKS)
    # The count per kind shows in `pytest -rP` and in a failure message.
    print("doc blocks:", dict(sorted(counts.items())))
    assert counts["toml"] >= 1 and counts["sh"] >= 1 and counts["python"] >= 2, counts


def test_a_block_introduced_as_a_file_is_that_file() -> None:
    # A loop, not a parametrisation: with no such block there is nothing to skip.
    for block in BLOCKS:
        m = _INTRODUCED_AS_FILE.search(block.before)
        if not m:
            continue
        path = ROOT / m["path"]
        assert path.is_file(), f"{block.id}: introduced as {m['path']}, which does not exist"
        assert block.text == path.read_text(encoding="utf-8"), (
            f"{block.id}: introduced as {m['path']} but differs from it; show the file or mark an excerpt"
        )


def test_an_excerpt_or_fragment_names_an_existing_file() -> None:
    for block in BLOCKS:
        found = marker(block)
        if not found:
            continue
        what, path = found
        assert path.is_file(), f"{block.id}: {what} {path} does not exist"
        if what == "excerpt of":
            assert block.text in path.read_text(encoding="utf-8"), f"{block.id}: not found verbatim in {path}"


def _merge(base: dict[str, Any], fragment: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in fragment.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def toml_problem(block: Block) -> str | None:
    """Why a toml block is not a valid scenario (as marked), or None."""
    text = runnable(block)
    found = marker(block)
    if found and found[0] == "excerpt of":
        return None  # checked verbatim against its file, which is validated where it is used
    if found:
        base = tomllib.loads(found[1].read_text(encoding="utf-8"))
        text = tomli_w.dumps(_merge(base, tomllib.loads(text)))
    try:
        _core.validate_toml(text, "doc")
    except _core.ScenarioError as e:
        hint = "" if found else " (a fragment? mark it <!-- fragment: wrap in examples/dumbbell.toml -->)"
        return f"{block.id}: {e.args[0]}{hint}"
    return None


@pytest.mark.parametrize("block", blocks_of("toml"))
def test_toml_block_is_a_valid_scenario(block: Block) -> None:
    problem = toml_problem(block)
    assert problem is None, problem


def test_the_conventions_on_a_sample() -> None:
    # The parser and the markers, on blocks that the docs may not have today.
    sample = (
        "Intro `examples/dumbbell.toml`:\n\n```toml\n[run]\n```\n\n"
        '<!-- fragment: wrap in examples/dumbbell.toml -->\n~~~~toml\n[[flows]]\nname = "one"\nrtt = "50ms"\n~~~~\n'
        '<!-- fragment: wrap in examples/dumbbell.toml -->\n```toml\n[[flows]]\nrtt = "5ms"\n```\n'
        "<!-- excerpt of examples/dumbbell.toml -->\n```toml\n[run]\n```\n"
        "```\nunlabelled\n````\n"
    )
    blocks = parse_markdown(sample, "sample.md")
    assert [(b.language, b.line) for b in blocks] == [("toml", 3), ("toml", 8), ("toml", 14), ("toml", 19), ("", 22)]
    assert _INTRODUCED_AS_FILE.search(blocks[0].before)
    assert toml_problem(blocks[0]) is not None  # alone, [run] is no scenario
    assert toml_problem(blocks[1]) is None  # one [[flows]] entry in the dumbbell
    problem = toml_problem(blocks[2])  # an RTT shorter than twice the bottleneck delay
    assert problem is not None and "rtt" in problem
    assert toml_problem(blocks[3]) is None
    assert blocks[4].text == "unlabelled\n"


def _shell_env() -> dict[str, str]:
    env = dict(os.environ)
    # The `cclab` this interpreter has installed, whether or not its venv is activated,
    # in its scripts directory or (a user install) the user's.
    scripts = [sysconfig.get_path("scripts"), sysconfig.get_path("scripts", f"{os.name}_user")]
    env["PATH"] = os.pathsep.join([*scripts, env.get("PATH", "")])
    env["MPLBACKEND"] = "Agg"
    return env


#: Programs a shell block may call that pip does not install, and how to get them.
#: Outside CI a block calling a missing one is skipped; under CI (.ci/run sets CI
#: and installs them) it must run.
SYSTEM_PROGRAMS = {"tshark": "apt-get install tshark"}


@pytest.mark.parametrize("block", blocks_of("sh", "bash"))
def test_shell_block_runs(block: Block, workdir: Path, request: pytest.FixtureRequest) -> None:
    script = runnable(block)
    seed_caches(block, workdir, request.config)
    for program, install in SYSTEM_PROGRAMS.items():
        if re.search(rf"(^|[|;&]\s*){program}\b", script, re.M) and shutil.which(program) is None:
            assert not os.environ.get("CI"), f"{block.id} needs {program}, which CI installs ({install})"
            pytest.skip(f"{block.id} needs {program} ({install})")
    proc = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=workdir, env=_shell_env(),
                          capture_output=True, text=True, timeout=900)  # fmt: skip
    assert proc.returncode == 0, (
        f"{block.id} failed ({proc.returncode}); too slow or not runnable here? see SUBSTITUTIONS and NOT_RUN in "
        f"tests/test_docs.py\n{script}\n{proc.stdout}\n{proc.stderr}"
    )


def _python_files() -> list[Any]:
    files = sorted({b.file for b in BLOCKS if b.language == "python"})
    return [pytest.param(f, id=f) for f in files]


@pytest.mark.parametrize("file", _python_files())
def test_python_blocks_run_in_order(
    file: str, workdir: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    monkeypatch.chdir(workdir)
    namespace: dict[str, Any] = {"__name__": "__doc_example__"}
    for block in (b for b in BLOCKS if b.file == file and b.language == "python"):
        if not_run_reason(block) is not None:
            continue
        code = runnable(block)
        seed_caches(block, workdir, request.config)
        try:
            exec(compile(code, block.id, "exec"), namespace)  # running the docs is the point
        except Exception as e:
            pytest.fail(f"{block.id}: {type(e).__name__}: {e}\n{code}")


# --- Generated study reports: the command that regenerates each ---------------------------------

_GENERATED_BY = re.compile(r"Generated by `(?P<command>cclab reproduce [^`]+)`")


def _reports() -> list[Any]:
    return [pytest.param(p, id=p.relative_to(ROOT).as_posix()) for p in sorted(ROOT.glob(REPORTS))]


def _report_command(report: Path) -> list[str]:
    """The `cclab reproduce` command a committed report states, checked for what it must name."""
    text = report.read_text(encoding="utf-8")
    m = _GENERATED_BY.search(text)
    assert m, f"{report}: no 'Generated by `cclab reproduce ...`' line"
    args = shlex.split(m["command"])
    assert "--quick" not in args, f"{report}: a committed report is the full study"
    # The command names every option that changes the result, and writes where the report is.
    out = args[args.index("--out") + 1] if "--out" in args else None
    assert out == report.parent.relative_to(ROOT).as_posix(), f"{report}: the command must write --out {out}"
    assert "--replications" in args, f"{report}: the command must state --replications"
    assert f"with {args[args.index('--replications') + 1]} replications per point" in text
    return args


def _reproduce(args: list[str], cwd: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "cclab", *args[1:]], cwd=cwd, env=_shell_env(),
                          capture_output=True, text=True, timeout=900)  # fmt: skip
    assert proc.returncode == 0, proc.stderr


@pytest.mark.long
@pytest.mark.parametrize("report", _reports())
def test_study_report_regenerates_byte_for_byte(report: Path, tmp_path: Path) -> None:
    import polars as pl
    from cclab.studies import get_study

    args = _report_command(report)
    # Run from a scratch directory: the relative --out then writes there, not over the committed files.
    out = tmp_path / args[args.index("--out") + 1]
    if get_study(args[2]).replayed_in_ci:
        # Too long to run here: rendered from the committed runs (whichever build made them).
        shutil.copytree(report.parent / "cache", out / "cache")
        args = [*args, "--from-cache"]
    _reproduce(args, tmp_path)
    assert (out / "report.md").read_bytes() == report.read_bytes()
    committed = report.parent
    for csv in sorted((committed / "tables").glob("*.csv")):
        # Values, not bytes: a polars release may print a float another way.
        assert pl.read_csv(out / "tables" / csv.name).equals(pl.read_csv(csv)), csv.name
    figures = sorted(p.name for p in (committed / "figures").iterdir())
    assert sorted(p.name for p in (out / "figures").iterdir()) == figures


@pytest.mark.long
@pytest.mark.parametrize("report", _reports())
def test_study_report_command_runs_quick(report: Path, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    args = _report_command(report)
    study = args[2]
    # The --quick variant, into a temporary directory: it states its own command.
    quick = [*args[:3], "--quick", *args[3:]]
    quick[quick.index("--replications") + 1] = "2"
    quick[quick.index("--out") + 1] = str(quick_study_dir(request.config, study))
    if study in SIMULATED_STUDIES and quick == quick_study_command(study, quick_study_dir(request.config, study)):
        # This very command is the session's one quick run of the study (tests/conftest.py), which other tests share.
        out = shared_quick_study(request.config, study)
    else:
        out = tmp_path / "report"
        quick[quick.index("--out") + 1] = str(out)
        _reproduce(quick, ROOT)
    written = (out / "report.md").read_text(encoding="utf-8")
    assert f"Generated by `{shlex.join(quick)}`" in written


# --- `cclab validate --toml`: the resolved scenario, in a form `cclab run` reads back ------------


@pytest.mark.parametrize("example", sorted(p.name for p in (ROOT / "examples").glob("*.toml")))
def test_validate_toml_output_runs_exactly_as_the_original(
    example: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from cclab.cli import main

    def cclab(*args: str) -> str:
        # In-process: a subprocess per call would spend more time importing than simulating.
        capsys.readouterr()
        assert main(list(args)) == 0
        return capsys.readouterr().out

    path = ROOT / "examples" / example
    resolved = tmp_path / "resolved.toml"
    resolved.write_text(cclab("validate", str(path), "--toml"))
    assert cclab("validate", str(resolved), "--toml") == resolved.read_text()  # a fixed point
    if example.startswith("bench-"):
        return  # long runs for timing; the Rust tests compare runs of resolved files
    original, again = (json.loads(cclab("run", str(p), "--json")) for p in (path, resolved))
    for summary in (original, again):
        del summary["wall_s"]
    assert again == original
