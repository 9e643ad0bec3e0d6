"""Running one scenario from Python."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cclab import _core
from cclab._args import SEEDS, limit_text, whole_number
from cclab.interrupt import call_interruptibly
from cclab.result import CoreOutput, Result
from cclab.scenario import Scenario, ScenarioError, load

ScenarioLike = Scenario | str | Path | Mapping[str, Any]

#: Appended to a missing file's message: a string is a path or TOML text.
EXPECTED = "expected a path, TOML text or a Scenario"


def _is_file(text: str) -> bool:
    try:
        return Path(text).is_file()
    except (OSError, ValueError):  # a name too long for the file system, or with a NUL
        return False


def looks_like_toml(text: str) -> bool:
    """A string is TOML text, not a path, if it has a line break, or a ``[`` or
    ``=`` and no file has that name."""
    return "\n" in text or (not _is_file(text) and ("[" in text or "=" in text))


def as_scenario(scenario: ScenarioLike, memory_limit: str | int | None = None) -> Scenario:
    """A Scenario from a Scenario, a file path, TOML text, or a dict shaped like the TOML."""
    return _scenario(scenario, memory_limit, validate=True)


def estimate_memory(scenario: ScenarioLike) -> dict[str, Any]:
    """The memory a run of ``scenario`` needs, estimated without building it (so
    at once, however big): ``bytes``, ``parts`` (``key``, ``what``, ``bytes``)
    and ``largest`` (the key of the biggest part). The scenario is parsed and
    checked, but not built: errors that need the topology are left to a run."""
    return _scenario(scenario, None, validate=False).estimate_memory()


def _scenario(scenario: ScenarioLike, memory_limit: str | int | None, *, validate: bool) -> Scenario:
    """``scenario`` as a Scenario, validated (which builds it) or only parsed."""
    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, str) and looks_like_toml(scenario):
        return Scenario.from_toml(scenario, memory_limit=memory_limit, validate=validate)
    if isinstance(scenario, str | Path):
        if not Path(scenario).exists():
            raise ScenarioError(f"{scenario}: no such file ({EXPECTED})", "")
        return load(scenario, memory_limit, validate=validate)
    if isinstance(scenario, Mapping):
        return Scenario.from_dict(scenario, memory_limit=memory_limit, validate=validate)
    raise ScenarioError(
        f"scenario: expected a path, TOML text, a dict or a Scenario, not {type(scenario).__name__}", "scenario"
    )


def run_output(
    text: str,
    name: str,
    seed: int | None,
    memory_limit: str | None = None,
    cancel: _core.CancelToken | None = None,
    progress: bool | None = None,
    allow_long: bool = False,
) -> CoreOutput:
    """Runs scenario text and returns its header and tables (refused if its estimated
    run time is above the limit, unless ``allow_long``). From the main thread the
    run goes to a worker thread, so that Ctrl-C stops it within milliseconds
    (raising ``RunCancelled``) instead of waiting for it to end; so does
    ``cancel.cancel()`` from anywhere. ``progress`` (default: when stderr is a
    terminal, or in a Jupyter kernel) shows the simulated time reached once the
    run has taken a second."""
    from cclab.progress import Progress

    token = cancel if cancel is not None else _core.CancelToken()
    bar = Progress(0, label="simulated s", enabled=progress, delay_s=RUN_PROGRESS_DELAY_S,
                   describe=lambda done, total: f"{done:.1f} of {total:g} simulated s")  # fmt: skip

    def show() -> None:
        reached = token.progress
        if reached is not None:
            bar.update(*reached)

    try:
        summary = call_interruptibly(
            lambda: _core.run_toml(text, name, seed, memory_limit, token, allow_long),
            token.cancel,
            show if bar.enabled else None,
        )
        if bar.enabled:
            # The end (drawn only if the line was): a bar left at the last poll reads as
            # a run that stopped short, and a notebook keeps it in the cell's output.
            show()
        return summary
    finally:
        bar.close()


#: A run shorter than this prints no progress line.
RUN_PROGRESS_DELAY_S = 1.0


def run(
    scenario: ScenarioLike,
    seed: int | None = None,
    memory_limit: str | int | None = None,
    cancel: _core.CancelToken | None = None,
    progress: bool | None = False,
    allow_long: bool = False,
) -> Result:
    """Runs a scenario (with ``seed``, or its own ``run.seed``) and returns its Result.

    ``scenario`` is a Scenario, a path, TOML text or a dict. ``memory_limit`` (a
    size such as ``"16GB"``, a number of bytes or ``"unlimited"``; default: the
    scenario's, else ``CCLAB_MEMORY_LIMIT``, else 4 GB or half the machine's memory if less) refuses a scenario whose
    estimated memory is above it, before anything is built. The simulation
    releases the GIL, so runs in several threads use several cores. Ctrl-C, or
    ``cancel.cancel()`` from another thread, stops the run within milliseconds
    and raises :class:`cclab.RunCancelled` (a ``KeyboardInterrupt``); a
    cancelled run leaves no result. ``progress=True`` (or ``None``: when stderr
    is a terminal or in a Jupyter kernel) shows the simulated time reached, and
    the time left, on stderr (in a notebook, in the cell's output) once the run
    has taken a second. A run estimated to need more than
    an hour of CPU (``cclab._core.RUN_TIME_LIMIT_S``; see docs/scenario.md,
    "Run time") is refused before it starts unless ``allow_long=True``.
    """
    if not isinstance(allow_long, bool):
        raise ScenarioError(f"allow_long: expected True or False, not {allow_long!r}", "allow_long")
    if seed is not None:
        seed = whole_number(seed, "seed", SEEDS, lambda m: ScenarioError(m, "seed"))
    # Not validated first, and the resolved scenario read back without a build:
    # the run checks and builds it, once (a build per check cost two fifths of
    # a 20 000-flow run), and refuses it with the same errors.
    scn = _scenario(scenario, memory_limit, validate=False)
    limit = limit_text(scn.memory_limit if memory_limit is None else memory_limit)
    text = scn.to_toml()
    try:
        output = run_output(text, scn.name, seed, limit, cancel, progress, allow_long)
    except ScenarioError as e:
        raise ScenarioError(*e.args) from None
    return Result.from_core(output, json.loads(_core.parse_toml(text, scn.name)))
