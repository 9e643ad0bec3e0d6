"""Scenarios as Python objects: load, copy with overrides by key path, write back to TOML.

A key path names one value in the scenario document: ``run.duration``,
``topology.bottleneck.rate``, ``flows[0].recovery``, or ``flows[*].recovery``
for every flow group. Setting a path creates missing tables on the way; list
indices must exist. Every override is checked by the simulator's own
validator, so a misspelt key or a value of the wrong type fails with the same
message (naming the key path) that ``cclab run`` gives.
"""

from __future__ import annotations

import copy
import json
import os
import re
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import tomli_w

from cclab import _core

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_SEGMENT = re.compile(r"^(?P<key>[A-Za-z_][A-Za-z0-9_]*)(?:\[(?P<index>\d+|\*)\])?$")


#: Raised for a bad scenario or key path; ``args`` is ``(message, key_path)``.
ScenarioError = _core.ScenarioError


def _parse_path(path: str) -> list[tuple[str, str | None]]:
    if not path:
        raise ScenarioError(f"{path!r}: empty key path", path)
    parts = []
    for segment in path.split("."):
        m = _SEGMENT.match(segment)
        if not m:
            raise ScenarioError(
                f"{path}: {segment!r} is not a key (write keys like topology.bottleneck.rate or flows[0].cc)",
                path,
            )
        parts.append((m["key"], m["index"]))
    return parts


def _targets(data: dict[str, Any], path: str, create: bool) -> Iterator[tuple[dict[str, Any], str]]:
    """The (table, key) pairs a key path refers to."""
    tables: list[tuple[dict[str, Any], str]] = [(data, "")]
    parts = _parse_path(path)
    for depth, (key, index) in enumerate(parts):
        last = depth == len(parts) - 1
        following: list[tuple[dict[str, Any], str]] = []
        for table, where in tables:
            here = f"{where}.{key}" if where else key
            if last and index is None:
                following.append((table, key))
                continue
            if key not in table:
                if index is not None or not create:
                    raise ScenarioError(f"{here}: no such key in the scenario", path)
                table[key] = {}
            value = table[key]
            if index is None:
                if not isinstance(value, dict):
                    raise ScenarioError(f"{here}: is a value, not a table", path)
                following.append((value, here))
                continue
            if not isinstance(value, list):
                raise ScenarioError(f"{here}: is not a list of tables, so [{index}] cannot apply", path)
            chosen = range(len(value)) if index == "*" else [int(index)]
            for i in chosen:
                if i >= len(value):
                    raise ScenarioError(f"{here}[{i}]: the scenario has only {len(value)} {key} entries", path)
                if last:
                    raise ScenarioError(f"{path}: a key path must end in a key, not an index", path)
                if not isinstance(value[i], dict):
                    raise ScenarioError(f"{here}[{i}]: is not a table", path)
                following.append((value[i], f"{here}[{i}]"))
        tables = following
    yield from tables


class Scenario:
    """A scenario document (the TOML as nested dicts) and its name.

    ``memory_limit`` (a size such as ``"16GB"``, a number of bytes, or
    ``"unlimited"``; default ``CCLAB_MEMORY_LIMIT``, else 4 GB) is the limit its
    validations, its copies' and its runs check the memory estimate against.
    """

    def __init__(
        self,
        data: Mapping[str, Any],
        name: str = "scenario",
        path: Path | None = None,
        memory_limit: str | int | None = None,
    ) -> None:
        self._data = copy.deepcopy(dict(data))
        if path is not None:
            _anchor_trace_paths(self._data, Path(path).parent)
        self.name = str(data.get("name", name))
        self.path = path
        self.memory_limit = memory_limit

    @classmethod
    def from_dict(
        cls,
        data: Mapping[str, Any],
        name: str = "scenario",
        memory_limit: str | int | None = None,
        *,
        validate: bool = True,
    ) -> Scenario:
        """A scenario from nested dicts shaped like the TOML file, validated unless ``validate=False``."""
        if not isinstance(data, Mapping):
            raise ScenarioError(f"data: expected a dict shaped like the TOML file, not {type(data).__name__}", "data")
        scenario = cls(data, name, memory_limit=memory_limit)
        if validate:
            scenario.validate()
        return scenario

    @classmethod
    def from_toml(
        cls,
        text: str,
        name: str = "scenario",
        path: Path | None = None,
        memory_limit: str | int | None = None,
        *,
        validate: bool = True,
    ) -> Scenario:
        """A scenario from TOML text, validated unless ``validate=False`` (then only parsed)."""
        if not isinstance(text, str):
            raise ScenarioError(f"text: expected TOML text (a str), not {type(text).__name__}", "text")
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ScenarioError(f"invalid TOML: {e}", "") from None
        scenario = cls(data, name, path, memory_limit)
        if validate:
            scenario.validate()
        return scenario

    def to_dict(self) -> dict[str, Any]:
        return copy.deepcopy(self._data)

    def to_toml(self) -> str:
        """The TOML text, or a ScenarioError if a value cannot be written as TOML."""
        try:
            return tomli_w.dumps(self._data)
        except (TypeError, ValueError) as e:
            raise ScenarioError(f"cannot be written as TOML: {e}", "") from None

    def get(self, key: str) -> Any:
        """The value at a key path (a list for ``[*]`` paths); KeyError if absent."""
        values = []
        for table, leaf in _targets(self._data, key, create=False):
            if leaf not in table:
                raise KeyError(key)
            values.append(table[leaf])
        return values if "[*]" in key else values[0]

    def with_(self, **overrides: Any) -> Scenario:
        """A copy with the given key paths set, validated.

        ``scn.with_(**{"topology.bottleneck.rate": "1Gbps", "flows[0].cc": "reno"})``
        """
        scenario = self._overridden(overrides)
        scenario.validate()
        return scenario

    def _overridden(self, overrides: Mapping[str, Any]) -> Scenario:
        """Like :meth:`with_`, but not validated yet (for callers that validate it themselves)."""
        data = copy.deepcopy(self._data)
        for key, value in overrides.items():
            for table, leaf in _targets(data, key, create=True):
                table[leaf] = value
        return Scenario(data, self.name, self.path, self.memory_limit)

    def validate(self, memory_limit: str | int | None = None) -> dict[str, Any]:
        """Checks the scenario as `cclab validate` does, its memory estimate against
        ``memory_limit`` (default: the scenario's own); returns it with all defaults resolved."""
        from cclab._args import limit_text

        limit = limit_text(self.memory_limit if memory_limit is None else memory_limit)
        try:
            resolved: dict[str, Any] = json.loads(_core.validate_toml(self.to_toml(), self.name, limit))
        except ScenarioError as e:
            raise ScenarioError(*e.args) from None
        return resolved

    def estimate_memory(self) -> dict[str, Any]:
        """The memory a run needs, estimated without building it: ``bytes``, ``parts``
        (each ``key``, ``what``, ``bytes``) and ``largest`` (the key of the biggest part)."""
        try:
            estimate: dict[str, Any] = json.loads(_core.estimate_memory(self.to_toml(), self.name))
        except ScenarioError as e:
            raise ScenarioError(*e.args) from None
        estimate["largest"] = max(estimate["parts"], key=lambda p: p["bytes"])["key"]
        return estimate

    def __repr__(self) -> str:
        return f"Scenario({self.name!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Scenario) and self._data == other._data and self.name == other.name


TRACE_KEYS = ("trace", "reverse_trace")


def _anchor_trace_paths(data: dict[str, Any], base: Path) -> bool:
    """Makes the relative trace paths of a scenario read from a file absolute,
    relative to that file as a reader expects (the core reads them relative to
    the working directory, which a sweep's workers may not share); whether
    any changed."""
    topology = data.get("topology")
    if not isinstance(topology, dict):
        return False
    links = [topology.get("bottleneck")]
    if isinstance(topology.get("links"), list):
        links.extend(topology["links"])
    changed = False
    for link in links:
        if not isinstance(link, dict):
            continue
        for key in TRACE_KEYS:
            value = link.get(key)
            if isinstance(value, str) and value and not Path(value).is_absolute():
                link[key] = str((base / value).resolve())
                changed = True
    return changed


def anchor_trace_paths(text: str, base: Path) -> str:
    """Scenario text with its relative trace paths made relative to `base`
    (the scenario file's directory); the text itself when it has none."""
    if "trace" not in text:
        return text
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return text  # the core reports the syntax error, with its place
    return tomli_w.dumps(data) if _anchor_trace_paths(data, base) else text


def read_scenario_file(path: str | Path) -> str:
    """The text of a scenario file (its relative trace paths made relative to
    it); a ScenarioError naming the file if it cannot be read."""
    p = Path(path)
    try:
        return anchor_trace_paths(p.read_text(encoding="utf-8"), p.parent)
    except FileNotFoundError:
        problem = "no such file"
    except IsADirectoryError:
        problem = "is a directory, not a scenario file"
    except PermissionError:
        problem = "permission denied"
    except UnicodeDecodeError:
        problem = "not UTF-8 text"
    except OSError as e:
        problem = str(e.strerror or e)
    raise ScenarioError(f"{p}: {problem}", "")


def load(path: str | Path, memory_limit: str | int | None = None, *, validate: bool = True) -> Scenario:
    """Reads and validates a scenario file (its memory estimate against ``memory_limit``);
    with ``validate=False`` only reads and parses it."""
    if not isinstance(path, str | os.PathLike):
        raise ScenarioError(f"path: expected a scenario file's path (a str or Path), not {type(path).__name__}", "path")
    p = Path(path)
    text = read_scenario_file(p)
    try:
        return Scenario.from_toml(text, p.stem, p, memory_limit, validate=validate)
    except ScenarioError as e:
        message, key = e.args
        raise ScenarioError(f"{p}: {message}", key) from None
