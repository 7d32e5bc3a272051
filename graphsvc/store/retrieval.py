"""Acquisition in Neo4j: candidates from both indexes and the retrieval graph.

:func:`acquire` runs in the caller's read transaction: the fulltext candidates
(asked first, while the query embedding is still being computed in another
thread), the semantic signal of the lexical candidates, the retrieval graph (two
BFS levels per query), and the usage state of the graph's nodes (head facts and,
with two levels per query, usage states ride along with the rows). Two things run
beside it in transactions of their own (:meth:`Database.soon`; Neo4j reads are
read-committed, so nothing is lost by that): the vector query, started by the
caller as soon as the embedding is ready (:func:`semantic_candidates`), and the
second half of a big frontier.
The evaluation that follows is computed once from these facts and frozen (RD-1).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from neo4j import ManagedTransaction

from graphsvc.core.activation import neo4j_cosines
from graphsvc.core.bm25 import ANALYZER, SubjectStats, query_terms
from graphsvc.core.lucene import fulltext_query, term_query
from graphsvc.errors import StoreError
from graphsvc.store.connection import Database, run
from graphsvc.store.indexes import forget_vector_shape, vector_filtered
from graphsvc.store.term_statistics import Generation, StatisticsCache, generation_of

__all__ = ["AcquireQuery", "Acquired", "SemanticHits", "acquire", "semantic_candidates"]

# A BFS level with at least this many frontier atoms is split in two halves that
# Neo4j expands side by side (bench/read.py: the second level of a depth-2 read
# has ~250 atoms at 100k atoms).
SPLIT_LEVEL_AT = 48
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


@dataclass
class Acquired:
    """Raw facts of one acquisition (no scoring yet)."""

    semantic: dict[str, float] = field(default_factory=dict)  # atomId -> neo4j score
    lexical: dict[str, float] = field(default_factory=dict)  # atomId -> lucene score
    lexical_semantic: dict[str, float | None] = field(default_factory=dict)
    # Embeddings that came with the fulltext rows (None: the head has none).
    lexical_embeddings: dict[str, list[float] | None] = field(default_factory=dict)
    edges: list[tuple[str, str, str]] = field(default_factory=list)
    facts: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Bodies of the candidates (lexical and semantic), for scoring them with the
    # subject's own statistics; those statistics (None: Lucene's index-wide score).
    texts: dict[str, str | None] = field(default_factory=dict)
    subject_stats: SubjectStats | None = None
    index_analyzer: str | None = None  # read only when subject statistics are asked for
    vector_mode: str = "index"
    lexical_mode: str = "index"
    truncated: bool = False
    levels: int = 0
    # The entity index's part of the retrieval graph (ENT-4): (entity key, atomId) for
    # every admitted head that mentions a traversed entity; the keys the query names;
    # the seeds whose heads the index has not reached yet (it lags, ENT-2).
    entity_edges: list[tuple[str, str]] = field(default_factory=list)
    # Nearest-neighbour edges (seed atomId, similar head atomId), when asked for.
    similar_edges: list[tuple[str, str]] = field(default_factory=list)
    query_entities: list[str] = field(default_factory=list)
    unindexed: int = 0


def _has_word(text: str) -> bool:
    return any(ch.isalnum() for ch in text)


def _facts(row: dict[str, Any]) -> dict[str, Any]:
    return {"rev": row["rev"], "atomisedInto": row["atomisedInto"], "archivedAt": row["archivedAt"]}


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
class AcquireQuery:
    """What one acquisition reads: the caller's subject, policy and usage model, the
    query text, and the caps (seeds, index oversampling, graph depth and size)."""

    subject: str
    policy: str
    model_id: str
    text: str
    depth: int
    max_seeds: int
    oversample: int
    max_nodes: int
    max_edges: int
    include_archived: bool
    proximity: int = 0
    # How many of the subject's top Lucene hits are read (0: max_seeds); the caller
    # keeps the best max_seeds of them (keep_lexical).
    lexical_pool: int = 0
    # Read the subject's own term statistics (graphsvc.core.bm25) for the lexical score,
    # when the subject holds at most subject_stats_max bodies.
    subject_stats: bool = False
    subject_stats_max: int = 10_000
    # Ask Lucene with the subject clause at once, not after an unscoped top k.
    subject_clause_first: bool = False
    # Traverse the entity index (ENT-4): entities mentioned by at most this many heads
    # (0: not at all), and the keys the query may name.
    entity_max_degree: int = 0
    query_keys: tuple[str, ...] = ()
    # Each seed's this many most similar heads by stored embedding (0: none).
    similar_heads: int = 0


# db.facts[_ANALYZER_FACT]: the fulltext index's analyzer as this process last read
# it, with the index generation it was read at (search/fulltext_candidates returns the
# current one): the index changes only by `graphsvc index rebuild --fulltext`, which
# moves the generation.
_ANALYZER_FACT = "fulltextAnalyzer"
# db.facts[_STATS_FACT]: the subjects' term statistics (graphsvc.store.term_statistics).
_STATS_FACT = "termStatistics"


def acquire(
    tx: ManagedTransaction,
    db: Database,
    q: AcquireQuery,
    *,
    embedding: Callable[[], list[float] | None],
    semantic: Callable[[], SemanticHits | None],
    seeds_from: Callable[[Acquired], list[str]],
    keep_lexical: Callable[[Acquired], list[str]] | None = None,
    check_state: Callable[[dict[str, Any]], None],
) -> Acquired:
    """Read candidates, the retrieval graph and node facts for ``q`` in ``tx``.

    ``check_state(row)`` gets the subject's state (the columns of
    ``search/subject_state``, read with the fulltext candidates) before anything
    else is read, and raises to stop (a purge pending). ``embedding()`` returns the
    query embedding (or None) and ``semantic()`` the vector hits (or None without
    an embedding), each waiting for it if still running; they are called after the
    fulltext query. ``keep_lexical(acquired)`` names the lexical hits to keep as
    candidates (the caller scores the pool of hits). ``seeds_from(acquired)``
    picks the seed atom ids from the fused candidates (the pure core decides; the
    store only reads). ``db`` runs the second half of a big BFS level.
    """
    subject, policy, model_id, text = q.subject, q.policy, q.model_id, q.text
    acq = Acquired()
    # atomId -> {rev, atomisedInto, archivedAt} of its current head, gathered from
    # the candidate and expansion rows themselves (no per-node lookup afterwards).
    head_facts: dict[str, dict[str, Any]] = {}
    statistics = _Statistics(db, q)
    pool = q.lexical_pool or q.max_seeds
    k = max(q.max_seeds * q.oversample, pool)
    # Text without a letter or digit gives Lucene's analyzer no term at all; the
    # query would shrink to nothing and match no atom.
    state = None
    if _has_word(text):
        state = _lexical(
            tx,
            acq,
            head_facts,
            text,
            subject,
            k,
            pool,
            q.include_archived,
            q.proximity,
            scoped_first=q.subject_clause_first,
            embed=q.max_seeds,
        )
    check_state(state or run(tx, "search/subject_state", subject=subject)[0])
    statistics.settle(acq, state)
    _keep_lexical(tx, acq, keep_lexical, subject)
    vector = embedding()
    if vector is not None and acq.lexical:
        _lexical_semantic(acq, vector)
    hits = semantic()
    if hits is not None:
        acq.vector_mode = hits.mode
        for row in hits.rows:
            acq.semantic[row["atomId"]] = float(row["semantic"])
            head_facts[row["atomId"]] = _facts(row)
            acq.texts.setdefault(row["atomId"], row.get("text"))
    seeds = seeds_from(acq)
    usage = _Usage(policy, model_id)
    hop, near = _reads_beside_expansion(db, q, seeds)
    nodes = _expand(
        tx, db, acq, head_facts, seeds, subject, q.depth, q.max_nodes, q.max_edges, usage
    )
    if hop is not None:
        _entity_hop(acq, head_facts, nodes, hop.result()[0], q)
    if near is not None:
        _similar_heads(acq, head_facts, nodes, near.result(), q.max_nodes)
    _node_facts(tx, acq, head_facts, nodes, usage, subject)
    return acq


def _keep_lexical(
    tx: ManagedTransaction,
    acq: Acquired,
    keep_lexical: Callable[[Acquired], list[str]] | None,
    subject: str,
) -> None:
    """Keep the lexical hits the caller keeps, each with its embedding."""
    if keep_lexical is not None and acq.lexical:
        # The caller rescored the pool of Lucene hits and keeps its best; the fulltext
        # rows brought the embeddings of Lucene's best max_seeds only.
        kept = set(keep_lexical(acq))
        for atom_id in [a for a in acq.lexical if a not in kept]:
            del acq.lexical[atom_id]
            acq.lexical_embeddings.pop(atom_id, None)
    missing = [a for a in acq.lexical if a not in acq.lexical_embeddings]
    if missing:
        for row in run(tx, "search/embeddings_of", subject=subject, atomIds=missing):
            acq.lexical_embeddings[row["atomId"]] = row["embedding"]


def _reads_beside_expansion(
    db: Database, q: AcquireQuery, seeds: list[str]
) -> tuple[Future[list[dict[str, Any]]] | None, Future[list[dict[str, Any]]] | None]:
    """The entity hop's and the similar heads' reads (None: not asked for), started.

    Both need the seeds only, so they run beside the link expansion rather than after.
    """
    hop = (
        db.read_soon(
            "search/entity_hop",
            subject=q.subject,
            atomIds=seeds,
            queryKeys=list(q.query_keys),
            maxDegree=q.entity_max_degree,
        )
        if q.entity_max_degree > 0 and (seeds or q.query_keys)
        else None
    )
    near = (
        db.read_soon("search/similar_heads", subject=q.subject, atomIds=seeds, k=q.similar_heads)
        if q.similar_heads > 0 and seeds
        else None
    )
    return hop, near


class _Statistics:
    """The subject's term statistics and the index's analyzer for one evaluation.

    Subject statistics need the index to analyse text as graphsvc.core.bm25 does;
    an index with another analyzer (until `graphsvc index rebuild --fulltext`) is
    scored by Lucene. Both are read beside the fulltext query. The statistics a
    process read earlier are kept per subject until its generation moves
    (graphsvc.store.term_statistics): when every query term is known, no read starts
    at construction; the fulltext row then says (:meth:`settle`) whether they are
    still current.
    """

    def __init__(self, db: Database, q: AcquireQuery) -> None:
        self.db, self.q = db, q
        self.analyzer: Future[list[dict[str, Any]]] | None = None
        self.stats: Callable[[], SubjectStats | None] | None = None
        self.known: tuple[int, str | None] | None = db.facts.get(_ANALYZER_FACT)
        self.cache: StatisticsCache = db.facts.setdefault(_STATS_FACT, StatisticsCache())
        self.terms = query_terms(q.text, q.proximity).surface if q.subject_stats else {}
        self.cached_at: Generation | None = None
        if q.subject_stats and _has_word(q.text):
            if self.known is None:
                self.analyzer = db.read_soon("index/fulltext_state")
            self.cached_at = self.cache.known(q.subject, list(self.terms), q.subject_stats_max)
            if self.cached_at is None:
                self.stats = self._read()

    def _read(self) -> Callable[[], SubjectStats | None]:
        return _subject_stats_soon(self.db, self.q.subject, self.terms, self.q.subject_stats_max)

    def settle(self, acq: Acquired, state: dict[str, Any] | None) -> None:
        """Fill ``acq``'s analyzer and statistics, given the fulltext row's state."""
        if self.stats is None and self.cached_at is not None:
            now = generation_of(state or {})
            hit = (
                self.cache.stats(self.q.subject, list(self.terms), now)
                if now == self.cached_at
                else None
            )
            if hit is not None:
                self.stats = lambda: hit
            else:  # a write (here or on another replica) moved the generation
                self.stats = self._read()
        if self.stats is None:
            return
        generation = int((state or {}).get("fulltextGeneration") or 0)
        if self.known is not None and self.known[0] == generation:
            acq.index_analyzer = self.known[1]
        else:
            # First search of this process, or the index was rebuilt since.
            rows = (self.analyzer or self.db.read_soon("index/fulltext_state")).result()
            acq.index_analyzer = str(rows[0]["analyzer"]) if rows else None
            if rows and state is not None and not state.get("rebuilding"):
                self.db.facts[_ANALYZER_FACT] = (generation, acq.index_analyzer)
        subject_stats = self.stats()
        if acq.lexical and acq.index_analyzer == ANALYZER:
            acq.subject_stats = subject_stats


def _similar_heads(
    acq: Acquired,
    head_facts: dict[str, dict[str, Any]],
    nodes: dict[str, None],
    rows: list[dict[str, Any]],
    max_nodes: int,
) -> None:
    """Add each seed's most similar heads (``search/similar_heads``) to the walk."""
    for row in rows:
        for atom_id, rev, into, arch in row["near"]:
            if atom_id not in nodes:
                if len(nodes) >= max_nodes:
                    acq.truncated = True
                    continue
                nodes[atom_id] = None
                head_facts.setdefault(
                    atom_id, {"rev": rev, "atomisedInto": into, "archivedAt": arch}
                )
            acq.similar_edges.append((row["aid"], atom_id))


def _node_facts(
    tx: ManagedTransaction,
    acq: Acquired,
    head_facts: dict[str, dict[str, Any]],
    nodes: dict[str, None],
    usage: _Usage,
    subject: str,
) -> None:
    """The facts of every node of the walk, with its usage state under the policy."""
    # Two-level fetches bring the usage of every atom they name; the rest (a
    # one-level walk, deeper levels, depth 0) is read here.
    rest = [a for a in nodes if a not in usage.covered]
    if rest:
        for row in run(
            tx,
            "search/usage_states",
            subject=subject,
            policy=usage.policy,
            modelId=usage.model_id,
            atomIds=rest,
        ):
            usage.states[(row["atomId"], row["rev"])] = row["state"]
    for atom_id in nodes:
        facts = head_facts.get(atom_id)
        if facts is None:  # a seed always has facts; defensive for odd graphs
            continue
        acq.facts[atom_id] = {
            "atomId": atom_id,
            **facts,
            "usage": usage.states.get((atom_id, facts["rev"])),
        }


def _lexical(
    tx: ManagedTransaction,
    acq: Acquired,
    head_facts: dict[str, dict[str, Any]],
    text: str,
    subject: str,
    k: int,
    limit: int,
    include_archived: bool,
    proximity: int,
    *,
    scoped_first: bool = False,
    embed: int = 0,
) -> dict[str, Any] | None:
    """The subject's top ``limit`` fulltext hits; returns the first query's row
    (with the subject's state), None when the text makes no Lucene query.
    While the fulltext index is being rebuilt there are no hits and
    ``acq.lexical_mode`` is ``"rebuilding"`` (the lexical signal is missing).

    The index is shared by all subjects. Its top ``k`` without a subject clause,
    filtered here, holds exactly the subject's top hits when it holds ``limit`` of
    them or was not full; otherwise ask again with the subject clause (same
    scores: that clause has boost 0). With ``scoped_first`` the subject clause is
    asked at once (one query where a subject holds a minority of the index). The
    caller checks the state before it uses the hits.
    """
    hits: list[list[Any]] = []
    first: dict[str, Any] | None = None
    for scoped in (True,) if scoped_first else (False, True):
        lucene = fulltext_query(text, subject if scoped else None, proximity)
        if lucene is None:
            return first
        if scoped:
            acq.lexical_mode = "subject clause"
        row = run(
            tx,
            "search/fulltext_candidates",
            lucene=lucene,
            k=k,
            limit=embed or limit,
            subject=subject,
            includeArchived=include_archived,
        )[0]
        first = first or row
        if row["rebuilding"]:  # `graphsvc index rebuild --fulltext` under way
            acq.lexical_mode = "rebuilding"
            return first
        hits = [h for h in row["hits"] if h is not None]
        if len(hits) >= limit or row["seen"] < k:
            break
    hits.sort(key=lambda h: (-float(h[2]), h[0]))
    # The query fetched the embedding of every hit that can be in Lucene's top
    # `embed` (ties at its edge included): those scoring at least the edge. The rest
    # of the pool has none yet (the caller fetches what it keeps, search/embeddings_of).
    bound = embed or limit
    edge = float(hits[bound - 1][2]) if len(hits) > bound else None
    for atom_id, rev, score, into, arch, vector, body in hits[:limit]:
        acq.lexical[atom_id] = float(score)
        head_facts[atom_id] = {"rev": rev, "atomisedInto": into, "archivedAt": arch}
        if edge is None or float(score) >= edge:
            acq.lexical_embeddings[atom_id] = vector
        acq.texts[atom_id] = body
    return first


def _subject_stats_soon(
    db: Database, subject: str, terms: Mapping[str, str], stats_max: int
) -> Callable[[], SubjectStats | None]:
    """Start reading the subject's own statistics for the query's ``terms`` (surface
    term -> analysed word, graphsvc.core.bm25.query_terms) beside the caller's
    transaction (search/term_statistics) and keep them in the process's cache at the
    generation the read saw; returns the wait for them, which gives None when the
    text has no term the analysis keeps, the subject holds more than ``stats_max``
    bodies (the read is linear in its size), or the fulltext index is being rebuilt
    (it is not called then)."""

    def read() -> SubjectStats | None:
        if not terms:
            return None
        cache: StatisticsCache = db.facts.setdefault(_STATS_FACT, StatisticsCache())
        kept = _kept_totals_with_new_terms(db, cache, subject, terms, stats_max)
        if kept is not None:
            return kept
        rows = db.read_rows(
            "search/term_statistics",
            subject=subject,
            terms=[[t, term_query(w, subject)] for t, w in terms.items()],
            statsMax=stats_max,
        )
        if not rows:  # the rebuild marker is set, or the subject is too large
            return None
        row = rows[0]
        docs, words = int(row["docs"]), int(row["words"] or 0)
        df = {t: int(n) for t, n in row["dfs"]}
        cache.put(subject, generation_of(row), stats_max, docs, words, df)
        return SubjectStats(docs, words / docs if docs else 0.0, df)

    return db.soon(read, label="search/term_statistics").result


def _kept_totals_with_new_terms(
    db: Database, cache: StatisticsCache, subject: str, terms: Mapping[str, str], stats_max: int
) -> SubjectStats | None:
    """The statistics of ``terms`` from the subject's kept totals and the document
    frequencies of the terms not kept yet (search/term_frequencies: no read of every
    body); None when no totals are kept, every term is (the caller reads because the
    generation moved), or the generation moved since the totals were read (the caller
    then reads everything, search/term_statistics)."""
    kept_at = cache.totals(subject, stats_max)
    if kept_at is None:
        return None
    new = cache.missing(subject, list(terms))
    if not new:
        # Every term is kept, so the caller reads because the generation moved.
        return None
    rows = db.read_rows(
        "search/term_frequencies",
        subject=subject,
        terms=[[t, term_query(terms[t], subject)] for t in new],
    )
    # The row's generation is what proves the kept totals current.
    if not rows or generation_of(rows[0]) != kept_at:
        return None
    df = {t: int(n) for t, n in rows[0]["dfs"]}
    if not cache.add_terms(subject, kept_at, stats_max, df):
        return None
    return cache.stats(subject, list(terms), kept_at)


def _lexical_semantic(acq: Acquired, query: list[float]) -> None:
    """The semantic signal of every lexical candidate (most are not vector hits),
    from the embeddings that came with the fulltext rows. A head without an
    embedding gets no signal (it is ranked lexically, ACT-1).
    """
    known = [a for a in acq.lexical if acq.lexical_embeddings.get(a) is not None]
    scores = neo4j_cosines(query, [acq.lexical_embeddings[a] or [] for a in known])
    for atom_id, score in zip(known, scores, strict=True):
        if score is not None:
            acq.lexical_semantic[atom_id] = score


def _entity_hop(
    acq: Acquired,
    head_facts: dict[str, dict[str, Any]],
    nodes: dict[str, None],
    row: dict[str, Any],
    q: AcquireQuery,
) -> None:
    """Add the entities the seeds mention and the query names, and the heads that
    mention them (``row``: the answer of ``search/entity_hop``, read beside the link
    expansion; Neo4j reads are read-committed, so its own transaction loses nothing),
    to the retrieval graph within the node and edge caps: the query's entities first,
    then each seed's in seed order (so the best seeds' neighbours are admitted first)."""
    acq.unindexed = sum(1 for _, indexed, _ in row["seeds"] if not indexed)
    heads_of = {key: heads for key, _, heads in row["entities"]}
    acq.query_entities = sorted(key for key, named, _ in row["entities"] if named)
    order = list(dict.fromkeys([*acq.query_entities, *(k for s in row["seeds"] for k in s[2])]))
    edges: list[tuple[str, str]] = []
    room = q.max_edges - len(acq.edges)
    for key in order:
        for atom_id, rev, into, arch in heads_of.get(key, ()):
            if len(edges) >= room:
                acq.truncated = True
                break
            if atom_id not in nodes:
                if len(nodes) >= q.max_nodes:
                    acq.truncated = True
                    continue
                nodes[atom_id] = None
                facts = {"rev": rev, "atomisedInto": into, "archivedAt": arch}
                head_facts.setdefault(atom_id, facts)
            edges.append((key, atom_id))
    acq.entity_edges = edges


Edges = list[list[Any]]  # rows of search/expand_level: [src, dst, role, node, rev, into, arch]


@dataclass
class _Usage:
    """The caller's usage states (AV-3) gathered with the retrieval graph."""

    policy: str
    model_id: str
    states: dict[tuple[str, int], str] = field(default_factory=dict)  # (atomId, rev) -> state
    covered: set[str] = field(default_factory=set)  # atoms whose states were asked for


def _halves(frontier: list[str]) -> tuple[list[str], list[str]]:
    half = len(frontier) // 2 if len(frontier) >= SPLIT_LEVEL_AT else len(frontier)
    return frontier[:half], frontier[half:]


def _one_level(
    tx: ManagedTransaction, db: Database, subject: str, frontier: list[str]
) -> dict[str, Edges]:
    """Edges of each frontier atom; a big frontier in two halves side by side."""

    name = "search/expand_level"
    first, second = _halves(frontier)
    later = db.read_soon(name, subject=subject, frontier=second) if second else None
    rows = run(tx, name, subject=subject, frontier=first) if first else []
    rows += later.result() if later is not None else []
    return {row["aid"]: row["edges"] for row in rows}


def _two_levels(
    tx: ManagedTransaction, db: Database, subject: str, frontier: list[str], usage: _Usage
) -> tuple[dict[str, Edges], dict[str, Edges]]:
    """Edges of each frontier atom, and edges of every atom those reach, in one round
    trip per half (a big frontier in two halves side by side); adds the usage states
    of every atom the rows name to ``usage``."""

    name = "search/expand_two_levels"
    params = {"subject": subject, "policy": usage.policy, "modelId": usage.model_id}
    first, second = _halves(frontier)
    later = db.read_soon(name, **params, frontier=second) if second else None
    empty: dict[str, Any] = {"first": [], "second": [], "usage": []}
    a = run(tx, name, **params, frontier=first)[0] if first else empty
    b = later.result()[0] if later is not None else empty
    a1, a2, b1, b2 = a["first"], a["second"], b["first"], b["second"]
    level2: dict[str, Edges] = {}
    for aid, edges in a2 + b2:
        level2.setdefault(aid, edges)
    level1 = {aid: edges for aid, edges in a1 + b1}
    for edges_of in (level1, level2):
        usage.covered.update(edges_of)
        usage.covered.update(row[3] for edges in edges_of.values() for row in edges)
    for atom_id, rev, state in a["usage"] + b["usage"]:
        usage.states[(atom_id, rev)] = state
    return level1, level2


def _expand(
    tx: ManagedTransaction,
    db: Database,
    acq: Acquired,
    head_facts: dict[str, dict[str, Any]],
    seeds: list[str],
    subject: str,
    depth: int,
    max_nodes: int,
    max_edges: int,
    usage: _Usage,
) -> dict[str, None]:
    """BFS over current links from the seeds, ``depth`` levels, within the caps.

    Levels are fetched two at a time where two remain (one round trip instead of
    two); edges are always examined level by level in frontier order, so the caps
    admit the same nodes and edges as a one-level-at-a-time walk.
    """
    nodes: dict[str, None] = dict.fromkeys(seeds)
    frontier = list(seeds)
    seen_edges: set[tuple[str, str, str]] = set()
    ahead: dict[str, Edges] | None = None
    for level in range(depth):
        if not frontier:
            break
        acq.levels += 1
        if ahead is not None:
            edges_of = ahead
            missing = [a for a in frontier if a not in ahead]  # not expected; safe
            if missing:
                edges_of = {**ahead, **_one_level(tx, db, subject, missing)}
            ahead = None
        elif depth - level >= 2:
            edges_of, ahead = _two_levels(tx, db, subject, frontier, usage)
        else:
            edges_of = _one_level(tx, db, subject, frontier)
        nxt: list[str] = []
        # The hottest loop of a read (~1,000 edges per level at 100k atoms): no
        # per-edge allocation beyond the edge key.
        for atom_id in frontier:
            for src, dst, role, node, rev, into, arch in edges_of.get(atom_id, ()):
                if node not in head_facts:
                    head_facts[node] = {"rev": rev, "atomisedInto": into, "archivedAt": arch}
                edge = (src, dst, role)
                if edge in seen_edges:
                    continue
                if len(seen_edges) >= max_edges:
                    acq.truncated = True
                    break
                for end in (src, dst):
                    if end not in nodes:
                        if len(nodes) >= max_nodes:
                            acq.truncated = True
                        else:
                            nodes[end] = None
                            nxt.append(end)
                if src in nodes and dst in nodes:
                    seen_edges.add(edge)
        frontier = nxt
    acq.edges = sorted(seen_edges)
    return nodes
