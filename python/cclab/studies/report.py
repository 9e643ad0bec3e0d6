"""The vocabulary a study's report is written in: sections of blocks, tables, claims and figure links.

A report is Markdown: blocks (paragraphs, tables, lists, figure links) separated by blank lines. A
study's ``_report`` lists its sections with these functions, each section a function of its own
that names what it shows, and computes the numbers they state elsewhere. Every function returns
text exactly as written, without rewrapping or escaping, because the committed reports are
rendered again byte for byte from their cached runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from cclab.studies.base import mean_ci

if TYPE_CHECKING:
    import polars as pl

    from cclab.studies.base import Study

#: A piece of a report: a block of text, nothing (left out), or a sequence of pieces (in order).
Block = str | None | Sequence["Block"]

Row = TypeVar("Row")


def blocks(*parts: Block) -> list[str]:
    """The blocks of ``parts`` in order, nested sequences flattened and None left out."""
    out: list[str] = []
    for part in parts:
        if part is None:
            continue
        if isinstance(part, str):
            out.append(part)
        else:
            out += blocks(*part)
    return out


def document(*parts: Block) -> str:
    """A whole report: its blocks separated by blank lines, ending with a newline."""
    return "\n\n".join(blocks(*parts)) + "\n"


def heading(text: str, level: int = 2) -> str:
    return f"{'#' * level} {text}"


def section(title: str, *parts: Block, level: int = 2) -> list[str]:
    """A heading and the blocks under it."""
    return [heading(title, level), *blocks(*parts)]


def lines(*parts: Block) -> str:
    """One block of the given lines, without blank lines between them (a list, a paragraph and its list)."""
    return "\n".join(blocks(*parts))


def bullets(items: Iterable[str]) -> str:
    """A list, one item a line."""
    return "\n".join(f"- {item}" for item in items)


def figure(alt: str, path: str) -> str:
    """A link to a figure the study wrote (the path :meth:`StudyContext.figure` returns)."""
    return f"![{alt}]({path})"


@dataclass(frozen=True)
class Column(Generic[Row]):
    """A table column: its label and how a row becomes its cell."""

    label: str
    cell: Callable[[Row], str]


def value(label: str, key: str, spec: str = "") -> Column[Mapping[str, Any]]:
    """A column of ``row[key]`` formatted with ``spec`` (as in ``format(value, spec)``)."""
    return Column(label, lambda row: format(row[key], spec))


def estimate(label: str, metric: str, digits: int = 1, signed: bool = False) -> Column[Mapping[str, Any]]:
    """A column of an :func:`cclab.sweep.aggregate` metric: its mean and 95 % half-width (:func:`mean_ci`)."""
    return Column(label, lambda row: mean_ci(row, metric, digits, signed))


def row(cells: Iterable[str]) -> str:
    """One table row."""
    return "| " + " | ".join(cells) + " |"


def table(rows: pl.DataFrame | Iterable[Row], columns: Sequence[Column[Any]]) -> str:
    """A table: a column's label heads it (an empty label leaves the corner blank) and its cell
    function fills it from each row; a data frame's rows are dicts of its columns."""
    import polars as pl

    items: Iterable[Any] = rows.iter_rows(named=True) if isinstance(rows, pl.DataFrame) else rows
    head = "|" + "".join(f" {c.label} |" if c.label else " |" for c in columns)
    rule = "|" + "---|" * len(columns)
    return "\n".join([head, rule, *(row(c.cell(item) for c in columns) for item in items)])


@dataclass(frozen=True)
class Claim:
    """One of the paper's statements against ours: what is claimed, the paper's value or words, ours,
    and whether they agree (:func:`verdict`); a field a report does not show may stay empty."""

    claim: str
    ours: str = ""
    paper: str = ""
    verdict: str | None = None


def verdict(agrees: bool) -> str:
    return "agrees" if agrees else "differs"


def claim_table(claims: Sequence[Claim], labels: Mapping[str, str]) -> str:
    """The claims as a table: ``labels`` maps each field shown (``claim``, ``paper``, ``ours``,
    ``verdict``) to its column's label, in the columns' order."""
    columns = [Column(label, lambda c, field=field: getattr(c, field) or "") for field, label in labels.items()]
    return table(claims, columns)


def claim_list(claims: Sequence[Claim]) -> str:
    """The claims as a list: the claim in bold, the verdict in brackets, then what ours shows."""
    return bullets(f"**{c.claim}**" + (f" ({c.verdict})" if c.verdict else "") + f". {c.ours}" for c in claims)


def opening(study: Study, generated: str) -> list[str]:
    """A reproduction's first blocks: its title, the paper, and how it was generated (``generated``)."""
    return [heading(f"Reproduction: {study.title}", 1), f"Paper: {study.paper}.", generated]
