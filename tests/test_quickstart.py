"""The README's quick start (issue 7, item 9): one build, visible progress, and
a test command that installs what the tests need.

The build times themselves are measured, not asserted (README, Quick start);
these tests pin the settings that make the test command reuse the install's
build, and keep CI running exactly the README's commands.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from cclab.scenario import tomllib

ROOT = Path(__file__).resolve().parent.parent


def readme_commands() -> tuple[str, str]:
    """The quick start's install command and the test command, as the README gives them."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    quick_start = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```(?:sh|bash)\n(.*?)```", quick_start, re.S)
    assert len(blocks) == 2, "the quick start has an install command and a test command"
    install, test = (b.strip() for b in blocks)
    assert "\n" not in install and "\n" not in test, "each is one line, to be copied as a whole"
    return install, test


def pip_installs(command: str) -> list[list[str]]:
    """The arguments of every `pip install` in a shell command line."""
    runs = []
    for part in re.split(r"&&|\|\||;", command):
        words = shlex.split(part)
        if words[:1] in (["pip"], ["pip3"]) and words[1:2] == ["install"]:
            runs.append(words[2:])
        elif words[:3] in (["python3", "-m", "pip"], ["python", "-m", "pip"]) and words[3:4] == ["install"]:
            runs.append(words[4:])
    return runs


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_install_shows_the_build_progress() -> None:
    # pip hides a build backend's output; without -v the 3-minute compile looks hung.
    install, _ = readme_commands()
    (args,) = pip_installs(install)
    assert "-v" in args or "--verbose" in args, install


def _requirement_names(requirements: list[str]) -> set[str]:
    # As an import name: a distribution's dashes are underscores there (dask-jobqueue, dask_jobqueue).
    return {re.split(r"[\s\[<>=!~;]", r, maxsplit=1)[0].lower().replace("-", "_") for r in requirements}


def test_the_test_command_installs_what_the_tests_import() -> None:
    _, test = readme_commands()
    (args,) = pip_installs(test)
    # The project with its test extra: one list of test requirements, in pyproject.toml.
    assert ".[test]" in args, test
    project = pyproject()["project"]
    available = _requirement_names(project["dependencies"]) | _requirement_names(
        project["optional-dependencies"]["test"]
    )
    assert "pytest" in available
    # Every module a test would skip without must be installed, so that no test is skipped.
    skipped_without = set()
    for path in (ROOT / "tests").glob("*.py"):
        skipped_without |= set(re.findall(r"importorskip\(\s*[\"']([\w.]+)", path.read_text(encoding="utf-8")))
    missing = {m for m in skipped_without if m.split(".")[0].lower() not in available}
    assert not missing, f"tests skip without {missing}; add them to the test extra"


def test_cargo_test_does_not_rebuild_what_pip_built() -> None:
    cargo = tomllib.loads((ROOT / "Cargo.toml").read_text(encoding="utf-8"))
    maturin = pyproject()["tool"]["maturin"]
    # maturin builds the release profile, as `cargo test --release` does: no other profile, no extra flags.
    assert maturin.get("profile", "release") == "release"
    for key in ("rustc-args", "cargo-extra-args", "args"):
        assert key not in maturin, key
    # Its features are already those of the workspace's pyo3, so every crate is built with the same features.
    pyo3_features = set(cargo["workspace"]["dependencies"]["pyo3"]["features"])
    assert {f.removeprefix("pyo3/") for f in maturin.get("features", [])} <= pyo3_features
    # The binding crate has no Rust tests: `cargo test --workspace` leaves it (and pyo3) to maturin,
    # which builds them in the environment of pip's build (another PYO3_PYTHON and PATH).
    lib = tomllib.loads((ROOT / "crates/cclab-py/Cargo.toml").read_text(encoding="utf-8"))["lib"]
    assert lib.get("test") is False and lib.get("doctest") is False


def test_ci_runs_the_readme_commands_verbatim() -> None:
    install, test = readme_commands()
    lines = [line.strip() for line in (ROOT / ".ci/run").read_text(encoding="utf-8").splitlines()]
    assert install in lines, "CI must run the README's quick start as written"
    assert test in lines, "CI must run the README's test command as written"


def test_every_rust_test_file_is_in_its_crates_test_binary() -> None:
    # cclab-sim's and cclab-net's tests/*.rs are modules of one test binary each (tests/main.rs,
    # `autotests = false`: one link instead of one per file), so a file not declared there never runs.
    for crate in ("cclab-sim", "cclab-net"):
        tests = ROOT / "crates" / crate / "tests"
        manifest = tomllib.loads((ROOT / "crates" / crate / "Cargo.toml").read_text(encoding="utf-8"))
        assert manifest["package"]["autotests"] is False
        assert manifest["test"] == [{"name": "integration", "path": "tests/main.rs"}]
        declared = re.findall(r"^mod (\w+);$", (tests / "main.rs").read_text(encoding="utf-8"), re.M)
        files = sorted(p.stem for p in tests.glob("*.rs") if p.name != "main.rs")
        assert sorted(declared) == sorted([*files, "common"]), crate
