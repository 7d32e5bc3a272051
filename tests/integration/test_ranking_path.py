"""One search's ranking passes through the modules docs/architecture.md lists, top to
bottom, each entered once, fewer than ten (issue 51).

A profile hook records every graphsvc module whose code runs during one search's
evaluation (``ops.evaluate.evaluate_then`` and everything it calls, in the search's own
thread), on the mirror's path and on the indexes' path, and every call from one such
module into another. The set must equal the table "One search's ranking, top to
bottom" of docs/architecture.md (so the table cannot drift from the code), and every
call must go down the table: no module is entered again from below (a callback into a
module above is a climb back up). The plumbing every request passes through (the
connection and its threads, the metrics, the settings' properties) is named in the
same section and left out of the count.
"""

from __future__ import annotations

import re
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from write_support import new, write

from graphsvc.core.binding import Binding
from graphsvc.core.requests import SearchRequest
from graphsvc.runtime import service_for
from graphsvc.service import Service
from graphsvc.settings import Settings

ARCHITECTURE = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"
SECTION = "## One search's ranking, top to bottom"
# Turns of a conversation that name people and places (entities: ENT-4 takes part)
# and follow one another (the walk has links to follow).
TURNS = [
    "Alice Moreau painted the rowing boat blue at Portsmouth harbour",
    "Alice Moreau rows with the Portsmouth club every Sunday morning",
    "Bernard Okafor keeps the logbook of storms and fog over the harbour",
    "The ferry to the Isle of Wight leaves Portsmouth harbour at noon",
    "Bernard Okafor and Alice Moreau repaired the rowing boat together",
]
QUERY = "Who painted the rowing boat at Portsmouth harbour?"


@dataclass
class Trace:
    """The graphsvc modules entered below ``evaluate_then``, in order of first entry,
    and each call from one such module into another (caller, callee)."""

    entered: list[str] = field(default_factory=list)
    calls: set[tuple[str, str]] = field(default_factory=set)


def _module(frame: FrameType | None) -> str:
    return str(frame.f_globals.get("__name__", "")) if frame is not None else ""


@dataclass(frozen=True)
class Table:
    """The section's table: each path's modules top to bottom, each module's row, and
    the plumbing the section names."""

    mirror: list[str]
    indexes: list[str]
    row: dict[str, int]
    plumbing: set[str]


def _as_module(cell: str) -> list[str]:
    return ["graphsvc." + p.replace("/", ".") for p in re.findall(r"`([\w/]+)\.py`", cell)]


@pytest.fixture(scope="module")
def documented() -> Table:
    section = ARCHITECTURE.read_text().split(SECTION, 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|") for line in section.splitlines() if re.match(r"\| \d+ \|", line)]
    mirror = [m for cells in rows for m in _as_module(cells[2])]
    indexes = [m for cells in rows for m in _as_module(cells[3])]
    row = {m: int(cells[1]) for cells in rows for m in _as_module(cells[2] + cells[3])}
    plumbing = next(line for line in section.splitlines() if line.startswith("Nine modules"))
    return Table(mirror, indexes, row, set(_as_module(plumbing)))


@pytest.fixture(scope="module")
def corpus(service: Service) -> Binding:
    binding = Binding(f"t-path-{uuid.uuid4().hex[:10]}", "default", "human", "alice")
    changes = [new("c0", TURNS[0])]
    for i, text in enumerate(TURNS[1:], 1):
        changes.append(new(f"c{i}", text, [{"role": "follows", "target": {"local": f"c{i - 1}"}}]))
    write(service, binding, changes)
    return binding


def _trace(service: Service, binding: Binding) -> Trace:
    """One search of ``QUERY``, traced from ``evaluate_then`` down, leaving out what its
    caller's ``then`` does with the evaluation (the page's views)."""
    trace = Trace()
    inside: list[FrameType] = []  # evaluate_then's frame while it runs
    paused: list[FrameType] = []  # the caller's `then` while it runs

    def hook(frame: FrameType, event: str, _arg: Any) -> None:
        name = _module(frame)
        if event == "return":
            if inside and frame is inside[-1]:
                inside.pop()
            if paused and frame is paused[-1]:
                paused.pop()
            return
        if event != "call":
            return
        if name == "graphsvc.ops.evaluate" and frame.f_code.co_name == "evaluate_then":
            inside.append(frame)
        caller = frame.f_back
        if caller is not None and caller.f_code.co_name == "work" and name != _module(caller):
            paused.append(frame)
        if not inside or paused or not name.startswith("graphsvc."):
            return
        if name not in trace.entered:
            trace.entered.append(name)
        if _module(caller).startswith("graphsvc.") and _module(caller) != name:
            trace.calls.add((_module(caller), name))

    sys.setprofile(hook)
    try:
        service.search(binding, SearchRequest(QUERY, limit=5, depth=2))
    finally:
        sys.setprofile(None)
    return trace


@pytest.fixture(scope="module")
def indexes_only(service: Service, test_settings: Settings) -> Iterator[Service]:
    yield service_for(
        test_settings.with_(head_mirror_max=0), service.db, service.embedder, service.tokenizer
    )


def _check(trace: Trace, table: Table, listed: list[str], path: str) -> None:
    ranking = [m for m in trace.entered if m not in table.plumbing]
    assert sorted(ranking) == sorted(listed), f"{path}: entered {ranking}"
    assert len(ranking) < 10
    upward = sorted(
        (a, b)
        for a, b in trace.calls
        if a in table.row and b in table.row and table.row[b] < table.row[a]
    )
    assert upward == [], f"{path}: calls back up the table"


@pytest.mark.req("ACT-1", "ACT-4")
def test_one_search_passes_the_documented_modules_top_to_bottom(
    service: Service, indexes_only: Service, corpus: Binding, documented: Table
) -> None:
    # The first search of a process reads what later ones keep (the index's analyzer,
    # the subject's statistics, the mirror): the path traced is a warm search's.
    for svc in (service, indexes_only):
        svc.search(corpus, SearchRequest(QUERY, limit=5, depth=2))
    mirror, indexes = _trace(service, corpus), _trace(indexes_only, corpus)
    assert "graphsvc.core.head_mirror" in mirror.entered  # the mirror answered
    assert "graphsvc.core.head_mirror" not in indexes.entered
    _check(mirror, documented, documented.mirror, "mirror")
    _check(indexes, documented, documented.indexes, "indexes")
