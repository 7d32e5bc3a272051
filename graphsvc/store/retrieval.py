"""The reads of a search's ranking from Neo4j's indexes and links: the fulltext and
vector candidates, the subject's state, stored embeddings, the fulltext index's
analyzer, and the retrieval graph (link levels, entity hops, similar heads, usage
states).

Plain reads, each one named query (the vector leg falls back from one index query to
another, :func:`semantic_candidates`), in the caller's read transaction (a big
frontier's second half, the entity hop and the similar heads in transactions of their
own beside it: :meth:`Database.read_soon`; Neo4j reads are read-committed, so nothing
is lost by that). What is kept of them, fused and admitted is decided by
:mod:`graphsvc.core.acquisition`, the order of the reads by
:mod:`graphsvc.ops.acquisition`; the subject's term statistics are
:mod:`graphsvc.store.term_statistics`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from graphsvc.core.acquisition import EdgeRow, EntityHop, FulltextHit, SimilarRow
from graphsvc.core.entity_resolution import JOINERS, EntityForms, variant
from graphsvc.errors import StoreError
from graphsvc.store.connection import Database, Tx, run
from graphsvc.store.indexes import forget_vector_shape, vector_filtered

__all__ = [
    "SPLIT_LEVEL_AT",
    "Edges",
    "FulltextAnswer",
    "SemanticHits",
    "TwoLevels",
    "embeddings_of",
    "entity_hop_soon",
    "expand_level",
    "expand_two_levels",
    "fulltext_analyzer_soon",
    "fulltext_candidates",
    "query_entities_soon",
    "semantic_candidates",
    "similar_heads_soon",
    "subject_state",
    "usage_states",
    "usage_states_all",
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


# A BFS level with at least this many frontier atoms is split in two halves that
# Neo4j expands side by side (bench/read.py: the second level of a depth-2 read
# has ~250 atoms at 100k atoms).
SPLIT_LEVEL_AT = 48

Edges = list[EdgeRow]  # the edges of one atom (search/expand_level's rows)


@dataclass(frozen=True)
class TwoLevels:
    """Edges of each frontier atom, edges of every atom those reach, and the usage
    states ((atomId, rev) -> state) of every atom the rows name."""

    first: dict[str, Edges]
    second: dict[str, Edges]
    usage: dict[tuple[str, int], str]


def _halves(frontier: list[str]) -> tuple[list[str], list[str]]:
    half = len(frontier) // 2 if len(frontier) >= SPLIT_LEVEL_AT else len(frontier)
    return frontier[:half], frontier[half:]


def expand_level(tx: Tx, db: Database, subject: str, frontier: list[str]) -> dict[str, Edges]:
    """Edges of each frontier atom (search/expand_level); a big frontier in two halves
    side by side."""
    name = "search/expand_level"
    first, second = _halves(frontier)
    later = db.read_soon(name, subject=subject, frontier=second) if second else None
    rows = run(tx, name, subject=subject, frontier=first) if first else []
    rows += later.result() if later is not None else []
    return {row["aid"]: row["edges"] for row in rows}


def expand_two_levels(
    tx: Tx, db: Database, subject: str, policy: str, model_id: str, frontier: list[str]
) -> TwoLevels:
    """Two levels from ``frontier`` and the usage states under ``policy`` of every atom
    they name, in one round trip per half (search/expand_two_levels; a big frontier in
    two halves side by side)."""
    name = "search/expand_two_levels"
    params = {"subject": subject, "policy": policy, "modelId": model_id}
    first, second = _halves(frontier)
    later = db.read_soon(name, **params, frontier=second) if second else None
    empty: dict[str, Any] = {"first": [], "second": [], "usage": []}
    a = run(tx, name, **params, frontier=first)[0] if first else empty
    b = later.result()[0] if later is not None else empty
    level2: dict[str, Edges] = {}
    for aid, edges in a["second"] + b["second"]:
        level2.setdefault(aid, edges)
    level1 = {aid: edges for aid, edges in a["first"] + b["first"]}
    usage = {(atom_id, rev): state for atom_id, rev, state in a["usage"] + b["usage"]}
    return TwoLevels(level1, level2, usage)


def entity_hop_soon(
    db: Database, subject: str, seeds: list[str], query_keys: list[str], max_degree: int
) -> Callable[[], EntityHop]:
    """Start search/entity_hop beside the caller's transaction; returns the wait for it."""
    later = db.read_soon(
        "search/entity_hop",
        subject=subject,
        atomIds=seeds,
        queryKeys=query_keys,
        maxDegree=max_degree,
    )

    def wait() -> EntityHop:
        row = later.result()[0]
        return EntityHop(row["seeds"], row["entities"])

    return wait


def query_entities_soon(
    db: Database, subject: str, keys: list[str]
) -> Callable[[], list[EntityForms]]:
    """Start search/query_entities beside the caller's transaction (the entities the
    query's ``keys`` may name, ENT-6); returns the wait for it."""
    later = db.read_soon(
        "search/query_entities",
        subject=subject,
        variants=sorted({variant(k) for k in keys}),
        joiners=sorted(JOINERS),
    )

    def wait() -> list[EntityForms]:
        return [
            EntityForms(str(r["key"]), frozenset(r["forms"]), frozenset(r["types"]))
            for r in later.result()
        ]

    return wait


def similar_heads_soon(
    db: Database, subject: str, seeds: list[str], k: int
) -> Callable[[], list[SimilarRow]]:
    """Start search/similar_heads (each seed's ``k`` most similar heads by stored
    embedding) beside the caller's transaction; returns the wait for it."""
    later = db.read_soon("search/similar_heads", subject=subject, atomIds=seeds, k=k)
    return lambda: [SimilarRow(row["aid"], row["near"]) for row in later.result()]


def usage_states(
    tx: Tx, subject: str, policy: str, model_id: str, atom_ids: list[str]
) -> dict[tuple[str, int], str]:
    """The caller's usage states ((atomId, rev) -> state) of ``atom_ids`` under ``policy``
    (search/usage_states)."""
    rows = run(
        tx,
        "search/usage_states",
        subject=subject,
        policy=policy,
        modelId=model_id,
        atomIds=atom_ids,
    )
    return {(row["atomId"], row["rev"]): row["state"] for row in rows}


def usage_states_all(
    tx: Tx, subject: str, policy: str, model_id: str, *, max_states: int
) -> dict[tuple[str, int], str] | None:
    """Every usage state of the caller's (subject, policy, model): (atomId, rev) ->
    state (search/usage_states_all); None when there are more than ``max_states``."""
    rows = run(
        tx,
        "search/usage_states_all",
        subject=subject,
        policy=policy,
        modelId=model_id,
        max=max_states,
    )
    if len(rows) > max_states:
        return None
    return {(row["atomId"], int(row["rev"])): row["state"] for row in rows}
