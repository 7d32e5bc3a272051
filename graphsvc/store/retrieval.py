"""Candidate reads: the fulltext and vector candidates, the subject's state, stored
embeddings and the fulltext index's analyzer.

Plain reads, each one named query (the vector leg falls back from one index query to
another, :func:`semantic_candidates`); what is kept of them and how they are fused is
decided by :mod:`graphsvc.core.acquisition` and :mod:`graphsvc.core.fusion`, the order
of the reads by :mod:`graphsvc.ops.acquisition`. The reads of the retrieval graph are
:mod:`graphsvc.store.expansion`, the subject's term statistics
:mod:`graphsvc.process_state.term_statistics`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from graphsvc.core.acquisition import FulltextHit
from graphsvc.errors import StoreError
from graphsvc.store.connection import Database, Tx, run
from graphsvc.store.indexes import forget_vector_shape, vector_filtered

__all__ = [
    "FulltextAnswer",
    "SemanticHits",
    "embeddings_of",
    "fulltext_analyzer_soon",
    "fulltext_candidates",
    "semantic_candidates",
    "subject_state",
]

# What a filtered vector search raises when the index in place cannot answer it
# (re-created without the filter property, or dropped, since it was looked at).
_NOT_FILTERED = frozenset(
    {"Neo.ClientError.Statement.PropertyNotFound", "Neo.ClientError.Schema.IndexNotFound"}
)
# Neo4j 2026.08.1 fails a filtered search whose LIMIT exceeds the subject's live
# entries once one of its entries was removed from the index (a revised or retired
# head): "Index N out of bounds for length 1" (an internal error; LIMIT at most the
# live entries works). The small-subject scan keeps such subjects off the index; a
# subject that still meets it (heads without embeddings yet) is post-filtered.
_FILTER_FAILED = "Neo.DatabaseError.Statement.ExecutionFailed"


@dataclass(frozen=True)
class SemanticHits:
    """The subject's top vector hits and how they were found."""

    rows: list[dict[str, Any]]
    mode: str  # "index", "filtered index" or "exact"


def semantic_candidates(
    db: Database,
    *,
    subject: str,
    vector: list[float],
    k: int,
    limit: int,
    include_archived: bool,
    exact_max: int = 0,
) -> SemanticHits:
    """The subject's top ``limit`` vector hits.

    A subject of at most ``exact_max`` current heads is scanned exactly (mode
    ``"exact"``): the answer is its own, independent of other subjects' vectors
    (an approximate index's top k is not). Otherwise: the vector index is shared
    by all subjects and filtered afterwards, so a subject may hold few of the
    global top-k: widen k once, then scan the subject exactly (cheap exactly when
    the subject is small). While the index is being rebuilt (``graphsvc index
    rebuild``) the index query returns no rows without touching the index, so the
    exact scan answers.

    On Neo4j 2026.x with a vector index that has the subject as a filter property
    (:func:`graphsvc.store.indexes.vector_filtered`) the index keeps to the subject
    itself (mode ``"filtered index"``, :func:`_filtered`) for subjects above
    ``exact_max``; an index without the filter property is post-filtered as above.
    """
    if exact_max > 0:
        small = db.read_rows(
            "search/vector_candidates_small",
            embedding=vector,
            subject=subject,
            includeArchived=include_archived,
            limit=limit,
            exactMax=exact_max,
        )[0]
        if int(small["size"]) <= exact_max:
            return SemanticHits(list(small["hits"]), "exact")
    if vector_filtered(db):
        hits = _filtered(
            db, subject=subject, vector=vector, k=k, limit=limit, include_archived=include_archived
        )
        if hits is not None:
            return hits
    rows: list[dict[str, Any]] = []
    for widen in (1, 8):
        rows = db.read_rows(
            "search/vector_candidates",
            k=k * widen,
            embedding=vector,
            subject=subject,
            includeArchived=include_archived,
            limit=limit,
        )
        if len(rows) >= limit:
            return SemanticHits(rows, "index")
    return _exact_scan(
        db, subject=subject, vector=vector, limit=limit, include_archived=include_archived
    )


def _filtered(
    db: Database, *, subject: str, vector: list[float], k: int, limit: int, include_archived: bool
) -> SemanticHits | None:
    """The subject's top hits from the index filtered inside by subject (Neo4j 2026.x).

    The index's top k of the subject, archived heads dropped afterwards: when that
    leaves fewer than ``limit`` and the index had more to give, k is widened once,
    then the subject is scanned exactly; no rows at all (the rebuild marker is set,
    or the subject has no embedding) go to the exact scan at once. None when the
    index in place turned out to have no filter property, or the server failed the
    search (``_FILTER_FAILED``): the caller post-filters.
    """
    for widen in (1, 8):
        try:
            rows = db.read_rows(
                "search/vector_candidates_filtered",
                k=k * widen,
                embedding=vector,
                subject=subject,
                includeArchived=include_archived,
                limit=limit,
            )
        except StoreError as exc:
            code = getattr(exc.__cause__, "code", None)
            if code == _FILTER_FAILED:
                return None
            if code not in _NOT_FILTERED:
                raise
            forget_vector_shape(db)
            return None
        if not rows:
            break
        if len(rows) >= limit or int(rows[0]["seen"]) < k * widen:
            for row in rows:
                del row["seen"]
            return SemanticHits(rows, "filtered index")
    return _exact_scan(
        db, subject=subject, vector=vector, limit=limit, include_archived=include_archived
    )


def _exact_scan(
    db: Database, *, subject: str, vector: list[float], limit: int, include_archived: bool
) -> SemanticHits:
    """The subject's top hits by an exact scan of its heads (every leg's last resort)."""
    rows = db.read_rows(
        "search/vector_candidates_exact",
        embedding=vector,
        subject=subject,
        includeArchived=include_archived,
        limit=limit,
    )
    return SemanticHits(rows, "exact")


@dataclass(frozen=True)
class FulltextAnswer:
    """One search/fulltext_candidates answer: the row (with the subject's state, the
    columns of search/subject_state, and its generation), the subject's hits among
    Lucene's top k, how many of the top k there were (``seen``), and whether the
    index is being rebuilt (no hits then)."""

    row: dict[str, Any]
    hits: list[FulltextHit]
    seen: int
    rebuilding: bool


def fulltext_candidates(
    tx: Tx,
    *,
    lucene: str,
    k: int,
    limit: int,
    subject: str,
    include_archived: bool,
) -> FulltextAnswer:
    """The subject's hits among Lucene's top ``k`` for ``lucene``, the embeddings of
    those that can be among the best ``limit`` (search/fulltext_candidates)."""
    row = run(
        tx,
        "search/fulltext_candidates",
        lucene=lucene,
        k=k,
        limit=limit,
        subject=subject,
        includeArchived=include_archived,
    )[0]
    hits = [h for h in row["hits"] if h is not None]
    return FulltextAnswer(row, hits, row["seen"], bool(row["rebuilding"]))


def subject_state(tx: Tx, subject: str) -> dict[str, Any]:
    """The subject's state (search/subject_state): a purge pending, its purge epoch and
    the schema version."""
    return run(tx, "search/subject_state", subject=subject)[0]


def embeddings_of(tx: Tx, subject: str, atom_ids: list[str]) -> dict[str, list[float] | None]:
    """The stored embeddings of the current heads of ``atom_ids`` (search/embeddings_of)."""
    rows = run(tx, "search/embeddings_of", subject=subject, atomIds=atom_ids)
    return {row["atomId"]: row["embedding"] for row in rows}


def fulltext_analyzer_soon(db: Database) -> Callable[[], str | None]:
    """Start reading the fulltext index's analyzer (index/fulltext_state) beside the
    caller's transaction; the wait gives None when there is no index."""
    later = db.read_soon("index/fulltext_state")

    def wait() -> str | None:
        rows = later.result()
        return str(rows[0]["analyzer"]) if rows else None

    return wait
