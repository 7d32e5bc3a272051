"""The two rebuildable search indexes: their state, rebuild markers and re-creation.

:mod:`graphsvc.ops.index` runs a rebuild (grace, progress, time limit); each
function here is one step of it for the index it names. A marker
(``GraphsvcMeta {key: 'vectorIndex' | 'fulltextIndex'}``) tells searches to keep
off the index while it is rebuilt (``search/vector_candidates``,
``search/fulltext_candidates``).

On Neo4j 2026.x (:meth:`Database.filters_vectors`) the vector index is created with
the subject as a filter property (``index/create_vector_filtered``), and
:func:`vector_filtered` says whether the index in place has it: a database whose
index was created without it (by 5.26, or before graphsvc declared it) keeps the
post-filter leg until ``graphsvc index rebuild`` re-creates the index.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Final, Literal, NotRequired, TypedDict, cast

from graphsvc.store.connection import Database, Tx, run

__all__ = [
    "FULLTEXT_INDEX",
    "VECTOR_INDEX",
    "IndexName",
    "IndexState",
    "clear_rebuild",
    "count_entries",
    "drop",
    "forget_vector_shape",
    "index_state",
    "mark_rebuild",
    "recreate",
    "vector_filtered",
]

VECTOR_INDEX: Final = "current_embedding"
FULLTEXT_INDEX: Final = "current_text"
IndexName = Literal["current_embedding", "current_text"]
# How long an answer "the vector index has no subject filter" is kept before the
# index is looked at again (another process may have rebuilt it meanwhile).
FILTER_RECHECK_S: Final = 60.0
_SHAPE: Final = "vectorIndexFiltered"


class IndexState(TypedDict):
    """An index's ``state`` (ONLINE, POPULATING, FAILED) and ``populationPercent``;
    the fulltext index also names its ``analyzer``."""

    state: str
    populationPercent: float | None
    analyzer: NotRequired[str | None]


@dataclass(frozen=True)
class _Queries:
    mark: str
    clear: str
    drop: str
    create: str
    state: str
    count: str


_QUERIES: Final[dict[str, _Queries]] = {
    VECTOR_INDEX: _Queries(
        "index/mark_vector_rebuild",
        "index/clear_vector_rebuild",
        "index/drop_vector",
        "schema/013_current_embedding",
        "index/vector_state",
        "index/count_embeddings",
    ),
    FULLTEXT_INDEX: _Queries(
        "index/mark_fulltext_rebuild",
        "index/clear_fulltext_rebuild",
        "index/drop_fulltext",
        "schema/014_current_text",
        "index/fulltext_state",
        "index/count_texts",
    ),
}


def index_state(db: Database, index: IndexName) -> IndexState | None:
    """The index's state; None when it does not exist."""
    rows = db.read(_QUERIES[index].state)
    return cast(IndexState, rows[0]) if rows else None


def mark_rebuild(db: Database, index: IndexName, since: str) -> None:
    """Set the index's rebuild marker (searches keep off the index from now on)."""
    db.write(_QUERIES[index].mark, since=since)


def clear_rebuild(db: Database, index: IndexName) -> None:
    """Remove the rebuild marker (searches use the index again)."""
    db.write(_QUERIES[index].clear)


def recreate(db: Database, index: IndexName, dimension: int | None = None) -> None:
    """Drop the index and create it again in one transaction (it then populates).

    On a server that filters vector searches inside the index (Neo4j 2026.x) the
    vector index is created with the subject as a filter property.

    Args:
        dimension: the vector index's dimension (default: the recorded embedding
            model's, :func:`graphsvc.store.embedding_model.recorded_dimension`).
    """
    queries = _QUERIES[index]
    create = queries.create
    if index == VECTOR_INDEX and dimension is None:
        from graphsvc.store.embedding_model import recorded_dimension

        dimension = recorded_dimension(db)
    if index == VECTOR_INDEX and db.filters_vectors():
        create = "index/create_vector_filtered"

    def drop_and_create(tx: Tx) -> None:
        run(tx, queries.drop)
        run(tx, create, dimension=dimension)

    db.write_tx(drop_and_create, label=queries.drop)
    if index == VECTOR_INDEX:
        forget_vector_shape(db)


def vector_filtered(db: Database) -> bool:
    """Whether vector searches can filter by subject inside the index: the server
    can (:meth:`Database.filters_vectors`, read once per Database) and the vector
    index has ``subject`` as a filter property. A yes is kept for the Database (until
    :func:`forget_vector_shape`); a no is looked at again after ``FILTER_RECHECK_S``.
    """
    if not db.filters_vectors():
        return False
    known = db.facts.get(_SHAPE)
    now = time.monotonic()
    if known is not None and (known[0] or now - known[1] < FILTER_RECHECK_S):
        return bool(known[0])
    rows = db.read("index/vector_properties")
    filtered = bool(rows) and "subject" in (rows[0]["properties"] or [])
    db.facts[_SHAPE] = (filtered, now)
    return filtered


def forget_vector_shape(db: Database) -> None:
    """Look at the vector index again on the next :func:`vector_filtered` (it was
    re-created, or a filtered search found it without the filter property)."""
    db.facts.pop(_SHAPE, None)


def drop(db: Database, index: IndexName) -> None:
    """Drop the index (if it exists)."""
    db.write(_QUERIES[index].drop)


def count_entries(db: Database, index: IndexName) -> int:
    """How many current revisions the index holds."""
    return int(db.read(_QUERIES[index].count)[0]["entries"])
