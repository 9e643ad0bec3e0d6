"""Running one scenario from Python."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cclab import _core
from cclab.interrupt import call_interruptibly
from cclab.result import Result
from cclab.scenario import Scenario, ScenarioError, load

ScenarioLike = Scenario | str | Path | Mapping[str, Any]


def as_scenario(scenario: ScenarioLike) -> Scenario:
    """A Scenario from a Scenario, a file path, or a dict shaped like the TOML."""
    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, str | Path):
        return load(scenario)
    if isinstance(scenario, Mapping):
        return Scenario.from_dict(scenario)
    raise TypeError(f"expected a Scenario, a path or a dict, not {type(scenario).__name__}")


def run_json(text: str, name: str, seed: int | None, cancel: _core.CancelToken | None = None) -> str:
    """Runs scenario text and returns its JSON summary. From the main thread the
    run goes to a worker thread, so that Ctrl-C stops it within milliseconds
    (raising ``RunCancelled``) instead of waiting for it to end; so does
    ``cancel.cancel()`` from anywhere."""
    token = cancel if cancel is not None else _core.CancelToken()
    return call_interruptibly(lambda: _core.run_toml(text, name, seed, token), token.cancel)


def run(scenario: ScenarioLike, seed: int | None = None, cancel: _core.CancelToken | None = None) -> Result:
    """Runs a scenario (with ``seed``, or its own ``run.seed``) and returns its Result.

    The simulation releases the GIL, so runs in several threads use several
    cores. Ctrl-C, or ``cancel.cancel()`` from another thread, stops the run
    within milliseconds and raises :class:`cclab.RunCancelled` (a
    ``KeyboardInterrupt``); a cancelled run leaves no result.
    """
    scn = as_scenario(scenario)
    if seed is not None and not 0 <= seed < 2**64:
        raise ScenarioError(f"seed: {seed} is outside [0, 2^64)", "seed")
    text = scn.to_toml()
    try:
        summary: dict[str, Any] = json.loads(run_json(text, scn.name, seed, cancel))
    except ScenarioError as e:
        raise ScenarioError(*e.args) from None
    return Result(summary=summary, config=scn.validate(), seed=summary["seed"])
