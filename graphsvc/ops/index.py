"""``graphsvc index rebuild``: rebuild the vector index in one pass.

**Why.** Every vector query searches each Lucene segment of the index (one HNSW
graph per segment) for the top k. An index that grew by transactions has as many
segments as its flushes happened to leave after merging (merge factor 4): a 111k
bulk load in 5,000-atom transactions left 13, and the k=128 query took 9 ms of
Neo4j time (14 ms at the client). Neo4j Community has no force-merge; an index
*populated* from existing data is written in one pass, and with the population
buffer the managed Neo4j sets (a third of its heap, ``graphsvc.localdb``) that pass
leaves one segment: 3 ms in Neo4j, 6 ms at the client (``bench/read.py`` runs both).
Run it after a bulk load or an import; ordinary writes then add small segments
that merge as before.

**Reads while it runs.** Neo4j has no way to build a second index on the same
label and property, so the index is dropped and created again. A vector query on
a populating index blocks ~30 s and then fails, so the rebuild first sets a
marker (``GraphsvcMeta {key: 'vectorIndex'}``) that ``search/vector_candidates``
reads in the same query: while it exists, vector searches use the exact scan
(correct, but a read of a 100k subject takes ~2 s instead of ~70 ms; the population
of 111k vectors took ~3 minutes here). After ``grace_s`` (queries that read the
marker before it was set have finished), the index is dropped and created in one
transaction; once it is online the marker is removed.

**Failures.** A population that fails, or does not finish within ``timeout_s``,
leaves the marker in place (searches keep the exact scan, never a failed index)
and raises INDEX_REBUILD_FAILED; running the command again waits for a
population still under way, or starts a new one, and removes the marker.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from neo4j import ManagedTransaction

from graphsvc.errors import IndexRebuildError, InvalidInputError
from graphsvc.store.connection import Database, run

__all__ = ["VECTOR_INDEX", "check_durations", "rebuild_vector_index", "vector_index_state"]

VECTOR_INDEX = "current_embedding"


def vector_index_state(db: Database) -> dict[str, Any] | None:
    """``{"state", "populationPercent"}`` of the vector index; None when absent."""
    rows = db.read("index/vector_state")
    return rows[0] if rows else None


def check_durations(grace_s: float, timeout_s: float, poll_s: float = 1.0) -> None:
    """Raise INVALID_INPUT unless grace >= 0 and timeout and poll interval > 0 seconds."""
    if not (grace_s >= 0 and timeout_s > 0 and poll_s > 0):  # NaN fails every test
        raise InvalidInputError(
            "grace must be >= 0 and timeout and poll interval > 0 seconds",
            details={"grace": grace_s, "timeout": timeout_s, "poll": poll_s},
        )


def _drop_and_create(tx: ManagedTransaction) -> None:
    run(tx, "index/drop_vector")
    run(tx, "schema/013_current_embedding")


def rebuild_vector_index(
    db: Database,
    *,
    grace_s: float = 2.0,
    timeout_s: float = 3600.0,
    poll_s: float = 1.0,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Drop and re-populate the vector index; returns what was done.

    The report: ``index``, ``started`` (False when a population already under
    way was only awaited), ``entries`` (current revisions with an embedding),
    ``seconds`` (marker to online) and ``populateSeconds``.
    """
    check_durations(grace_s, timeout_s, poll_s)
    say = progress or (lambda _msg: None)
    t0 = time.monotonic()
    before = vector_index_state(db)
    db.write("index/mark_vector_rebuild", since=datetime.now(UTC).isoformat())
    started = before is None or before["state"] != "POPULATING"
    if started:
        # A vector query that read no marker just before it was set is still
        # allowed to finish against the old index.
        time.sleep(grace_s)
        db.write_tx(_drop_and_create, label="index/drop_vector")
        say(f"graphsvc: vector index {VECTOR_INDEX}: populating (searches use the exact scan)")
    else:
        say(f"graphsvc: vector index {VECTOR_INDEX}: awaiting the population under way")
    t1 = time.monotonic()
    _await_online(db, deadline=t1 + timeout_s, poll_s=poll_s, say=say)
    db.write("index/clear_vector_rebuild")
    entries = int(db.read("index/count_embeddings")[0]["entries"])
    done = time.monotonic()
    say(f"graphsvc: vector index {VECTOR_INDEX}: online ({entries} entries)")
    return {
        "index": VECTOR_INDEX,
        "started": started,
        "entries": entries,
        "seconds": round(done - t0, 3),
        "populateSeconds": round(done - t1, 3),
    }


def _await_online(
    db: Database, *, deadline: float, poll_s: float, say: Callable[[str], None]
) -> None:
    shown = -1
    while True:
        state = vector_index_state(db)
        if state is None or state["state"] == "FAILED":
            raise IndexRebuildError(
                f"vector index {VECTOR_INDEX} is "
                f"{'missing' if state is None else 'FAILED'} after its re-creation; "
                "searches keep the exact scan; see the Neo4j log, then run "
                "`graphsvc index rebuild` again",
                details={"state": None if state is None else state["state"]},
            )
        if state["state"] == "ONLINE":
            return
        percent = float(state["populationPercent"] or 0.0)
        if int(percent) // 10 > shown:  # a line per 10 %
            shown = int(percent) // 10
            say(f"graphsvc: vector index {VECTOR_INDEX}: {percent:.0f}% populated")
        if time.monotonic() >= deadline:
            raise IndexRebuildError(
                f"vector index {VECTOR_INDEX} still populating ({percent:.0f}%) at the "
                "timeout; searches keep the exact scan until `graphsvc index rebuild` "
                "is run again and sees it online",
                details={"state": state["state"], "populationPercent": percent},
            )
        time.sleep(poll_s)
