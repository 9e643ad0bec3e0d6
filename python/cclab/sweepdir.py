"""Sweeps read back from disk, whoever wrote them.

``cclab sweep --out DIR`` and ``cclab.sweep(out=DIR)`` write ``sweep.json``
(the plan, and whether it is complete) beside the tidy tables; a sweep that is
not complete is refused. Directories written by earlier versions may hold only
the tables, or only ``runs/<key>/`` (each with ``meta.json``, whose ``point``
holds the run's grid values, and its Parquet tables);
``cclab reproduce`` keeps its sweeps in subdirectories (``OUT/cache/NAME``).
:func:`read_sweep` takes whatever is there, in that order of preference, and
:func:`find_sweeps` finds the sweeps under a directory.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cclab.sweep import RUN_COLUMNS, SweepResult

if TYPE_CHECKING:
    import polars as pl

#: How deep :func:`find_sweeps` looks (``OUT/cache/NAME`` of a study is two levels down).
SEARCH_DEPTH = 3


class SweepDirError(Exception):
    """The directory holds no sweep that can be read; the message says what is there."""


def is_sweep(folder: Path) -> bool:
    """Whether ``folder`` is a sweep's output directory (rather than one holding sweeps)."""
    if (folder / "sweep.json").is_file() or ((folder / "flows.parquet").is_file() and (folder / "runs").is_dir()):
        return True
    return any(_run_dirs(folder))


def find_sweeps(folder: Path) -> list[Path]:
    """``folder`` itself if it is a sweep, else the sweeps below it, in name order."""
    if is_sweep(folder):
        return [folder]
    found: list[Path] = []

    def walk(d: Path, depth: int) -> None:
        for child in sorted(p for p in d.iterdir() if p.is_dir() and not p.name.startswith(".")):
            if is_sweep(child):
                found.append(child)
            elif depth > 1:
                walk(child, depth - 1)

    walk(folder, SEARCH_DEPTH)
    return found


def _run_dirs(folder: Path) -> Iterator[Path]:
    runs = folder / "runs"
    if not runs.is_dir():
        return
    # Names starting with "." are runs still being written (staging directories).
    for d in sorted(runs.iterdir()):
        if not d.name.startswith(".") and (d / "meta.json").is_file() and (d / "flows.parquet").is_file():
            yield d


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def read_sweep(folder: str | Path) -> SweepResult:
    """The sweep in ``folder``: its combined tables if it has them, else its finished runs.

    Runs left by other sweeps in the same directory (another scenario, grid or
    simulator build) are set aside, keeping those of the most recently finished
    run's sweep; ``notes`` of the result says what was set aside."""
    import polars as pl

    folder = Path(folder)
    meta = _json(folder / "sweep.json")
    # A sweep that has not finished has no tables, and its runs so far are not the sweep.
    # (sweep.json without "complete" was written by an earlier cclab once its sweep had finished.)
    if meta.get("complete") is False:
        runs = meta.get("runs")
        planned = len(runs) if isinstance(runs, list) else "?"
        raise SweepDirError(f"{folder}: incomplete sweep ({meta.get('done', '?')} of {planned} runs finished, "
                            "no tables); run the same sweep again to finish it")  # fmt: skip
    grid = meta.get("grid")
    grid = [str(k) for k in grid] if isinstance(grid, list) else None
    notes: list[str] = []
    if (folder / "flows.parquet").is_file() and (folder / "links.parquet").is_file():
        flows = pl.read_parquet(folder / "flows.parquet")
        links = pl.read_parquet(folder / "links.parquet")
        transfers = pl.read_parquet(folder / "transfers.parquet") if (folder / "transfers.parquet").is_file() else None
        if grid is None and "run" in flows.columns:
            # The tidy tables put the grid keys first, then the run columns.
            grid = flows.columns[: flows.columns.index("run")]
    else:
        chosen, run_grid, notes = _choose_runs(folder, grid)
        grid = run_grid if grid is None else grid
        flows = _concat([d / "flows.parquet" for d in chosen], grid)
        links = _concat([d / "links.parquet" for d in chosen], grid)
        transfers = _concat([d / "transfers.parquet" for d in chosen if (d / "transfers.parquet").is_file()], grid)
    if flows.height == 0 or grid is None:
        raise SweepDirError(f"{folder}: no finished runs of a sweep here")
    replications = meta.get("replications")
    if not isinstance(replications, int):
        replications = flows["replication"].n_unique() if "replication" in flows.columns else 1
    return SweepResult(
        flows=flows,
        links=links,
        transfers=transfers if transfers is not None else pl.DataFrame(),
        grid=grid,
        replications=replications,
        out=folder,
        notes=notes,
    )


def _choose_runs(folder: Path, grid: list[str] | None) -> tuple[list[Path], list[str], list[str]]:
    """The finished runs of one sweep, its grid keys, and notes on runs set aside."""
    runs = []
    for d in _run_dirs(folder):
        meta = _json(d / "meta.json")
        point = meta.get("point") if isinstance(meta.get("point"), dict) else {}
        sweep_id = (meta.get("scenario"), tuple(point), meta.get("build_id"))
        runs.append((d, point, meta.get("replication"), sweep_id, (d / "meta.json").stat().st_mtime))
    if not runs:
        raise SweepDirError(f"{folder}: not a sweep directory (write one with `cclab sweep FILE --out DIR`)")
    if grid is not None:
        matching = [r for r in runs if list(r[3][1]) == grid]
        runs = matching or runs
    newest = max(runs, key=lambda r: r[4])[3]
    mine = sorted((r for r in runs if r[3] == newest), key=lambda r: r[4], reverse=True)
    notes = []
    if len(mine) < len(runs):
        notes.append(f"{folder}: set aside {len(runs) - len(mine)} runs of other sweeps (another scenario, grid "
                     f"or simulator build) and read the {len(mine)} of the latest")  # fmt: skip
    # Two sweeps with different base seeds leave two runs per point and replication: keep the newest.
    seen: set[str] = set()
    kept = []
    for d, point, replication, _, _ in mine:
        slot = json.dumps([point, replication], sort_keys=True, default=str)
        if slot not in seen:
            seen.add(slot)
            kept.append(d)
    if len(kept) < len(mine):
        notes.append(f"{folder}: {len(mine) - len(kept)} runs repeat a grid point and replication (another base "
                     "seed?); read the newest of each")  # fmt: skip
    return kept, list(newest[1]), notes


def _concat(paths: list[Path], grid: list[str]) -> pl.DataFrame:
    import polars as pl

    if not paths:
        return pl.DataFrame()
    frame = pl.concat([pl.read_parquet(p) for p in paths], how="diagonal_relaxed")
    front = [c for c in [*grid, *RUN_COLUMNS] if c in frame.columns]
    frame = frame.select(front + [c for c in frame.columns if c not in front])
    # Run directories are named by hash: order the rows as a sweep would, point by point.
    order = [c for c in [*grid, "replication", "name", "index"] if c in frame.columns]
    return frame.sort(order, maintain_order=True) if order else frame
