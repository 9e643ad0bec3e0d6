"""Every hand-written list of algorithm names names exactly what the registry has.

README.md, examples/dumbbell.toml, docs/scenario.md and docs/architecture.md
list the choices of a role (congestion controls, loss recoveries, queue
disciplines, ...) in comments, table rows and the crate map. Nothing else reads
them, so without this test a list goes stale when an algorithm is added. The
registry is ``_core.algorithms()``, what ``cclab algorithms --json`` prints.

A list of choices must name every algorithm of its role and nothing else; the
comment in examples/dumbbell.toml must be the registry's order joined by " | "
(it could be generated; this test says what to write). The crate map of
docs/architecture.md lists files, among them helpers that are no algorithm, so
there every algorithm must have its file and no more is asked.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest
import tomli_w
from cclab import _core
from cclab.scenario import tomllib

ROOT = Path(__file__).resolve().parent.parent
DUMBBELL = ROOT / "examples" / "dumbbell.toml"


@cache
def registry() -> dict[str, list[str]]:
    """Algorithm names by role, in the registry's order."""
    roles: dict[str, list[str]] = {}
    for algorithm in json.loads(_core.algorithms()):
        roles.setdefault(algorithm["role"], []).append(algorithm["name"])
    return roles


def accepted_by(protocol: str, cc: str) -> bool:
    """Whether a flow of `protocol` may name `cc` (TCP's and UDT's share the role `cc`)."""
    scenario = tomllib.loads(DUMBBELL.read_text())
    flow = scenario["flows"][0]
    if protocol != "tcp":
        for key in ("recovery", "delayed_ack", "mss"):
            flow.pop(key, None)
    flow |= {"protocol": protocol, "cc": cc}
    try:
        _core.validate_toml(tomli_w.dumps(scenario), "lists")
    except _core.ScenarioError:
        return False
    return True


@cache
def names(role: str) -> list[str]:
    """A role's names; `tcp_cc` and `udt_cc` split the role `cc` by the protocol that takes them."""
    if role in ("tcp_cc", "udt_cc"):
        protocol = role.removesuffix("_cc")
        return [cc for cc in registry()["cc"] if accepted_by(protocol, cc)]
    return registry()[role]


def text(path: str) -> str:
    return (ROOT / path).read_text()


def line(path: str, start: str) -> str:
    """The one line of `path` that starts with `start` (after indentation)."""
    found = [ln for ln in text(path).splitlines() if ln.lstrip().startswith(start)]
    assert len(found) == 1, f"{path}: {len(found)} lines start with {start!r}"
    return found[0]


def backquoted(fragment: str) -> set[str]:
    """The bare names in backquotes: `reno`, not `"reno"` or `cclab algorithms`."""
    return set(re.findall(r"`([a-z][a-z0-9_]*)`", fragment))


def table_row(path: str, key: str, default: str) -> str:
    """The meaning cell of the row for `key` (default `default`) in a key | default | meaning table."""
    return line(path, f'| `{key}` | `"{default}"` | ').split(" | ")[-1]


def first_column(path: str, header: str) -> set[str]:
    """The backquoted names in the first column of the table under the header row `header`."""
    lines = text(path).splitlines()
    start = lines.index(header) + 2  # the header and its |---| row
    rows = []
    for ln in lines[start:]:
        if not ln.startswith("|"):
            break
        rows.append(ln.split("|")[1])
    return backquoted(" ".join(rows))


def between(path: str, after: str, before: str) -> str:
    body = text(path)
    start = body.index(after) + len(after)
    return body[start : body.index(before, start)]


def crate_map(crate: str) -> list[tuple[str, str]]:
    """docs/architecture.md's map of `crate`: each entry's label (`cc/`, `pacing/`)
    and its description, continuation lines included."""
    lines = text("docs/architecture.md").splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(f"crates/{crate} "))
    entries: list[tuple[str, str]] = []
    indent = None
    for ln in lines[start + 1 :]:
        if not ln.startswith(" ") or not ln.strip():
            break
        depth = len(ln) - len(ln.lstrip())
        if indent is None:
            indent = depth
        if depth == indent:
            label, _, description = ln.strip().partition(" ")
            entries.append((label, description))
        elif entries:
            entries[-1] = (entries[-1][0], entries[-1][1] + " " + ln.strip())
    return entries


def files(entries: list[tuple[str, str]]) -> set[str]:
    """The file stems the entries name: `reno.rs`, `cc/bbr.rs`, `recovery/{tahoe,reno}.rs`."""
    stems: set[str] = set()
    for label, description in entries:
        whole = f"{label} {description}"
        stems.update(re.findall(r"(\w+)\.rs\b", whole))
        for group in re.findall(r"\{([\w,]+)\}\.rs", whole):
            stems.update(group.split(","))
    return stems


def words(fragment: str) -> set[str]:
    return set(re.findall(r"[a-z][a-z0-9_]*", fragment))


def dumbbell_comment(path: str, key: str) -> list[str]:
    return [name.strip() for name in line(path, f"{key} = ").split("#", 1)[1].split("|")]


@pytest.mark.parametrize("path", ["examples/dumbbell.toml", "README.md"])
@pytest.mark.parametrize(("key", "role"), [("recovery", "recovery"), ("cc", "tcp_cc")])
def test_the_example_scenario_comments_list_every_choice_in_registry_order(path: str, key: str, role: str) -> None:
    expected = " | ".join(names(role))
    assert " | ".join(dumbbell_comment(path, key)) == expected, f"{path}: write `{key} = ...  # {expected}`"


# (what the list is, the names it gives, the role it lists)
SCENARIO_LISTS = [
    ("the `protocol` row", lambda: backquoted(table_row("docs/scenario.md", "protocol", "tcp")), "protocol"),
    ("the `queue` row", lambda: backquoted(table_row("docs/scenario.md", "queue", "droptail")), "queue"),
    ("the queue disciplines' table", lambda: first_column("docs/scenario.md", "| `queue` | what it does |"), "queue"),
    ("the traffic sources' table",
     lambda: first_column("docs/scenario.md", "| kind | protocol | parameters | what it does |"), "app"),
    ("the send-buffer policies' table",
     lambda: first_column("docs/scenario.md", "| `policy` | the buffer is | parameters |"), "send_buffer"),
    ("the TCP `cc` row", lambda: backquoted(table_row("docs/scenario.md", "cc", "reno")), "tcp_cc"),
    ("the `recovery` row", lambda: backquoted(table_row("docs/scenario.md", "recovery", "newreno")), "recovery"),
    ("the `pacing` row", lambda: backquoted(table_row("docs/scenario.md", "pacing", "none")), "pacing"),
    ("the UDT congestion controls",
     lambda: backquoted(between("docs/scenario.md", "one of the UDT congestion controls", "`cc_params`")), "udt_cc"),
]  # fmt: skip


@pytest.mark.parametrize(("what", "listed", "role"), SCENARIO_LISTS, ids=[w for w, _, _ in SCENARIO_LISTS])
def test_the_scenario_reference_lists_every_choice_and_no_other(
    what: str, listed: Callable[[], set[str]], role: str
) -> None:
    expected = set(names(role))
    found = listed()
    assert found == expected, (
        f"docs/scenario.md, {what}: missing {sorted(expected - found)}, not in the registry {sorted(found - expected)}"
    )


# (crate, which entries of its map, how to read them, the role)
MAP_LISTS = [
    ("cclab-transport", lambda label: label.startswith("cc/"), files, "tcp_cc"),
    ("cclab-transport", lambda label: label == "tcp/", files, "recovery"),
    ("cclab-transport", lambda label: label == "pacing/", files, "pacing"),
    ("cclab-transport", lambda label: label == "buffer/", files, "send_buffer"),
    ("cclab-core", lambda label: label == "queue/", files, "queue"),
    ("cclab-sim", lambda label: label == "sources/", lambda e: words(e[0][1]), "app"),
    ("cclab-sim", lambda label: label == "protocols.rs", lambda e: words(e[0][1]), "protocol"),
]


@pytest.mark.parametrize(("crate", "chosen", "read", "role"), MAP_LISTS, ids=[f"{c}-{r}" for c, _, _, r in MAP_LISTS])
def test_the_crate_map_has_a_file_or_word_for_every_algorithm(
    crate: str, chosen: Callable[[str], bool], read: Callable[[list[tuple[str, str]]], set[str]], role: str
) -> None:
    entries = [(label, description) for label, description in crate_map(crate) if chosen(label)]
    assert entries, f"docs/architecture.md: no such entry in the map of {crate}"
    missing = set(names(role)) - read(entries)
    assert not missing, f"docs/architecture.md, map of {crate}: no entry names {sorted(missing)} ({role})"


def test_protocols_list_exactly_their_own_in_the_map() -> None:
    """The map's `protocols.rs` entry is a list of names, not of files: exactly the protocols."""
    (entry,) = [d for label, d in crate_map("cclab-sim") if label == "protocols.rs"]
    assert words(entry) == set(names("protocol"))


def test_tcp_and_udt_split_the_congestion_controls() -> None:
    """The split the lists rely on: every `cc` is TCP's or UDT's, none both."""
    tcp, udt = set(names("tcp_cc")), set(names("udt_cc"))
    assert tcp and udt and not tcp & udt and tcp | udt == set(registry()["cc"])


@pytest.mark.parametrize(("protocol", "row"), [("tcp", "TCP flow"), ("udp", "UDP flow"), ("udt", "UDT flow")])
def test_the_metric_table_lists_every_metric_a_protocol_publishes(protocol: str, row: str) -> None:
    """docs/scenario.md's `[[observe]]` table names each protocol's own metrics (the
    engine adds `bytes_delivered` to every flow, which no protocol descriptor lists)."""
    (entry,) = [a for a in json.loads(_core.algorithms()) if a["role"] == "protocol" and a["name"] == protocol]
    missing = {m["name"] for m in entry["metrics"]} - backquoted(line("docs/scenario.md", f"| {row} | "))
    assert not missing, f"docs/scenario.md, the metrics of a {row}: missing {sorted(missing)}"
