"""The two rebuildable search indexes: their state, rebuild markers and re-creation.

:mod:`graphsvc.ops.index` runs a rebuild (grace, progress, time limit); each
function here is one step of it for the index it names. A marker
(``GraphsvcMeta {key: 'vectorIndex' | 'fulltextIndex'}``) tells searches to keep
off the index while it is rebuilt (``search/vector_candidates``,
``search/fulltext_candidates``).
"""

from __future__ import annotations

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
    "index_state",
    "mark_rebuild",
    "recreate",
]

VECTOR_INDEX: Final = "current_embedding"
FULLTEXT_INDEX: Final = "current_text"
IndexName = Literal["current_embedding", "current_text"]


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

    Args:
        dimension: the vector index's dimension (default: the recorded embedding
            model's, :func:`graphsvc.store.embedding_model.recorded_dimension`).
    """
    queries = _QUERIES[index]
    if index == VECTOR_INDEX and dimension is None:
        from graphsvc.store.embedding_model import recorded_dimension

        dimension = recorded_dimension(db)

    def drop_and_create(tx: Tx) -> None:
        run(tx, queries.drop)
        run(tx, queries.create, dimension=dimension)

    db.write_tx(drop_and_create, label=queries.drop)


def drop(db: Database, index: IndexName) -> None:
    """Drop the index (if it exists)."""
    db.write(_QUERIES[index].drop)


def count_entries(db: Database, index: IndexName) -> int:
    """How many current revisions the index holds."""
    return int(db.read(_QUERIES[index].count)[0]["entries"])
