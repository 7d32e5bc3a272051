"""``graphsvc index rebuild [--fulltext]``: rebuild a search index in one pass.

**Why.** Every vector query searches each Lucene segment of the index (one HNSW
graph per segment) for the top k. An index that grew by transactions has as many
segments as its flushes happened to leave after merging (merge factor 4), a bulk
load a dozen or more. Neo4j Community has no force-merge; an index *populated* from
existing data is written in one pass, and with the population buffer the managed
Neo4j sets (a third of its heap, ``graphsvc.localdb``) that pass leaves one segment,
and vector queries take a fraction of the time (``bench/read.py`` runs both; figures
in docs/performance.md#read-latency-vs-corpus-size).
Run it after a bulk load or an import; ordinary writes then add small segments
that merge as before.

**Reads while it runs.** Neo4j has no way to build a second index on the same
label and property, so the index is dropped and created again. A vector query on
a populating index blocks ~30 s and then fails, so the rebuild first sets a
marker (``GraphsvcMeta {key: 'vectorIndex'}``) that ``search/vector_candidates``
reads in the same query: while it exists, vector searches use the exact scan
(correct, but far slower on a large subject while the population runs:
docs/performance.md#read-latency-vs-corpus-size). After ``grace_s`` (queries that read the
marker before it was set have finished), the index is dropped and created in one
transaction; once it is online the marker is removed.

**The fulltext index** (``--fulltext``) is rebuilt the same way, for another
reason: its analyzer is fixed when it is created, and a database created before
graphsvc switched ``current_text`` to Lucene's English analyzer keeps the old one
(``standard-no-stop-words``) until it is rebuilt. Its marker is
``GraphsvcMeta {key: 'fulltextIndex'}``; while it exists,
``search/fulltext_candidates`` returns no hits without calling the index, so
searches rank by the semantic signal alone (the lexical signal is *missing*,
ACT-1, and the diagnostics say ``lexicalMode: rebuilding``) instead of reading a
half-populated index.

**Failures.** A population that fails, or does not finish within ``timeout_s``,
leaves the marker in place (searches keep the exact scan, never a failed index)
and raises INDEX_REBUILD_FAILED; running the command again waits for a
population still under way, or starts a new one, and removes the marker.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from graphsvc.errors import IndexRebuildError, InvalidInputError
from graphsvc.store import indexes
from graphsvc.store.connection import Database
from graphsvc.store.indexes import FULLTEXT_INDEX, VECTOR_INDEX, IndexName, IndexState

__all__ = [
    "FULLTEXT",
    "FULLTEXT_ANALYZER",
    "FULLTEXT_INDEX",
    "VECTOR",
    "VECTOR_INDEX",
    "IndexKind",
    "IndexRebuild",
    "check_durations",
    "fulltext_index_state",
    "fulltext_needs_rebuild",
    "rebuild_fulltext_index",
    "rebuild_index",
    "rebuild_vector_index",
    "vector_index_state",
]


@dataclass(frozen=True)
class IndexRebuild:
    """What a rebuild did: ``started`` is False when a population already under way
    was only awaited; ``seconds`` runs from the marker to online."""

    index: str
    started: bool
    entries: int
    seconds: float
    populate_seconds: float
    # The fulltext index's analyzer before and after the rebuild (fulltext only).
    analyzer_before: str | None = None
    analyzer: str | None = None

    @property
    def fulltext(self) -> bool:
        return self.index == FULLTEXT_INDEX

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "index": self.index,
            "started": self.started,
            "entries": self.entries,
            "seconds": self.seconds,
            "populateSeconds": self.populate_seconds,
        }
        if self.fulltext:
            out["analyzerBefore"], out["analyzer"] = self.analyzer_before, self.analyzer
        return out


# The analyzer cypher/schema/014_current_text.cypher creates the index with.
FULLTEXT_ANALYZER = "english"


@dataclass(frozen=True)
class IndexKind:
    """One rebuildable index: its name and how messages speak of it."""

    index: IndexName
    label: str  # "vector index" / "fulltext index", for messages
    fallback: str  # what searches do while the marker is set (for messages)


VECTOR = IndexKind(VECTOR_INDEX, "vector index", "vector searches use the exact scan")
FULLTEXT = IndexKind(FULLTEXT_INDEX, "fulltext index", "searches rank by the semantic signal alone")


def vector_index_state(db: Database) -> IndexState | None:
    """``{"state", "populationPercent"}`` of the vector index; None when absent."""
    return indexes.index_state(db, VECTOR_INDEX)


def fulltext_index_state(db: Database) -> IndexState | None:
    """``{"state", "populationPercent", "analyzer"}`` of the fulltext index; None when
    absent."""
    return indexes.index_state(db, FULLTEXT_INDEX)


def check_durations(grace_s: float, timeout_s: float, poll_s: float = 1.0) -> None:
    """Raise INVALID_INPUT unless grace >= 0 and timeout and poll interval > 0 seconds."""
    if not (grace_s >= 0 and timeout_s > 0 and poll_s > 0):  # NaN fails every test
        raise InvalidInputError(
            "grace must be >= 0 and timeout and poll interval > 0 seconds",
            details={"grace": grace_s, "timeout": timeout_s, "poll": poll_s},
        )


def fulltext_needs_rebuild(db: Database) -> str | None:
    """The fulltext index's analyzer when it is not graphsvc's (the database was
    created before the switch: run ``graphsvc index rebuild --fulltext``), else None."""
    state = fulltext_index_state(db)
    if state is None or state.get("analyzer") == FULLTEXT_ANALYZER:
        return None
    return str(state.get("analyzer"))


def rebuild_vector_index(
    db: Database,
    *,
    grace_s: float = 2.0,
    timeout_s: float = 3600.0,
    poll_s: float = 1.0,
    progress: Callable[[str], None] | None = None,
) -> IndexRebuild:
    """Drop and re-populate the vector index; see :func:`rebuild_index`."""
    return rebuild_index(
        db, VECTOR, grace_s=grace_s, timeout_s=timeout_s, poll_s=poll_s, progress=progress
    )


def rebuild_fulltext_index(
    db: Database,
    *,
    grace_s: float = 2.0,
    timeout_s: float = 3600.0,
    poll_s: float = 1.0,
    progress: Callable[[str], None] | None = None,
) -> IndexRebuild:
    """Drop and re-populate the fulltext index with graphsvc's analyzer; see
    :func:`rebuild_index` (the report also names ``analyzer`` before and after)."""
    before = fulltext_index_state(db)
    report = rebuild_index(
        db, FULLTEXT, grace_s=grace_s, timeout_s=timeout_s, poll_s=poll_s, progress=progress
    )
    after = fulltext_index_state(db)
    return dataclasses.replace(
        report,
        analyzer_before=None if before is None else before.get("analyzer"),
        analyzer=None if after is None else after.get("analyzer"),
    )


def rebuild_index(
    db: Database,
    kind: IndexKind,
    *,
    grace_s: float = 2.0,
    timeout_s: float = 3600.0,
    poll_s: float = 1.0,
    progress: Callable[[str], None] | None = None,
) -> IndexRebuild:
    """Drop and re-populate one index; returns what was done (``entries``: the
    current revisions the index holds).
    """
    check_durations(grace_s, timeout_s, poll_s)
    say = progress or (lambda _msg: None)
    t0 = time.monotonic()
    before = indexes.index_state(db, kind.index)
    indexes.mark_rebuild(db, kind.index, datetime.now(UTC).isoformat())
    started = before is None or before["state"] != "POPULATING"
    if started:
        # A query that read no marker just before it was set is still allowed to
        # finish against the old index.
        time.sleep(grace_s)
        indexes.recreate(db, kind.index)
        say(f"graphsvc: {kind.label} {kind.index}: populating ({kind.fallback})")
    else:
        say(f"graphsvc: {kind.label} {kind.index}: awaiting the population under way")
    t1 = time.monotonic()
    _await_online(db, kind, deadline=t1 + timeout_s, poll_s=poll_s, say=say)
    indexes.clear_rebuild(db, kind.index)
    entries = indexes.count_entries(db, kind.index)
    done = time.monotonic()
    say(f"graphsvc: {kind.label} {kind.index}: online ({entries} entries)")
    return IndexRebuild(
        index=kind.index,
        started=started,
        entries=entries,
        seconds=round(done - t0, 3),
        populate_seconds=round(done - t1, 3),
    )


def _await_online(
    db: Database,
    kind: IndexKind,
    *,
    deadline: float,
    poll_s: float,
    say: Callable[[str], None],
) -> None:
    shown = -1
    flag = " --fulltext" if kind is FULLTEXT else ""
    while True:
        state = indexes.index_state(db, kind.index)
        if state is None or state["state"] == "FAILED":
            raise IndexRebuildError(
                f"{kind.label} {kind.index} is "
                f"{'missing' if state is None else 'FAILED'} after its re-creation; "
                f"{kind.fallback} meanwhile; see the Neo4j log, then run "
                f"`graphsvc index rebuild{flag}` again",
                details={"state": None if state is None else state["state"]},
            )
        if state["state"] == "ONLINE":
            return
        percent = float(state["populationPercent"] or 0.0)
        if int(percent) // 10 > shown:  # a line per 10 %
            shown = int(percent) // 10
            say(f"graphsvc: {kind.label} {kind.index}: {percent:.0f}% populated")
        if time.monotonic() >= deadline:
            raise IndexRebuildError(
                f"{kind.label} {kind.index} still populating ({percent:.0f}%) at the "
                f"timeout; {kind.fallback} until `graphsvc index rebuild{flag}` "
                "is run again and sees it online",
                details={"state": state["state"], "populationPercent": percent},
            )
        time.sleep(poll_s)
