"""One acquisition: the candidates, their fusion and the retrieval graph, read in order.

:func:`acquire` runs in the caller's read transaction: the fulltext candidates (asked
first, while the query embedding is still being computed in another thread), the
semantic signal of the lexical candidates, the fusion that picks the seeds, the
retrieval graph (two BFS levels per query), and the usage state of the graph's nodes
(head facts and, with two levels per query, usage states ride along with the rows).
Beside it, in transactions of their own (:meth:`Database.soon`; Neo4j reads are
read-committed, so nothing is lost by that): the vector query, started by the caller
as soon as the embedding is ready, the subject's term statistics and the index's
analyzer, the entity hop and the similar heads, and the second half of a big frontier.

The reads are :mod:`graphsvc.store.retrieval`, :mod:`graphsvc.store.retrieval` and
:mod:`graphsvc.process_state.term_statistics`; what is kept, fused and admitted is decided by
the pure :mod:`graphsvc.core.acquisition` and :mod:`graphsvc.core.acquisition`. The
evaluation that follows is computed once from these facts and frozen (RD-1).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from graphsvc.core.acquisition import (
    Acquired,
    EntityHop,
    Fusion,
    HeadFacts,
    SimilarRow,
    Usage,
    Walk,
    admit_entities,
    admit_level,
    admit_similar,
    covered_by,
    fuse,
    has_word,
    keep_lexical,
    lexical_semantic,
    node_facts,
    take_lexical,
)
from graphsvc.core.bm25 import ANALYZER, SubjectStats, fulltext_query, query_terms
from graphsvc.core.entity_resolution import EntityForms, resolve_query
from graphsvc.core.head_mirror import HeadMirror, MirrorBM25
from graphsvc.errors import PurgePendingError
from graphsvc.ops.guards import PURGE_PENDING
from graphsvc.process_state.head_mirrors import (
    keep_analyzer,
    kept_analyzer,
    mirror_shelf,
    usage_shelf,
)
from graphsvc.process_state.term_statistics import (
    Generation,
    generation_of,
    statistics_cache,
    subject_stats_soon,
)
from graphsvc.settings import RankingSettings
from graphsvc.store.connection import Database, Tx
from graphsvc.store.head_mirror import mirror_state
from graphsvc.store.retrieval import (
    Edges,
    SemanticHits,
    embeddings_of,
    entity_hop_soon,
    expand_level,
    expand_two_levels,
    fulltext_analyzer_soon,
    fulltext_candidates,
    query_entities_soon,
    semantic_candidates,
    similar_heads_soon,
    subject_state,
    usage_states,
)

__all__ = [
    "AcquireQuery",
    "Acquisition",
    "CandidateSource",
    "IndexSource",
    "MirrorSource",
    "acquire",
    "candidate_source",
    "index_generation",
    "semantic_hits",
    "walk",
    "walk_mirror",
]


@dataclass(frozen=True)
class AcquireQuery:
    """What one acquisition reads: the caller's subject, policy and usage model, the
    query text and walk depth, and the ranking settings as they are (the caps on seeds,
    index oversampling and graph size, the lexical signal's rules)."""

    subject: str
    policy: str
    model_id: str
    text: str
    depth: int
    include_archived: bool
    ranking: RankingSettings
    # The embedding model's name, part of the index generation (index_generation).
    embedding_model: str = ""
    # The entity keys the query names (graphsvc.core.entity_keys.query_keys), asked
    # only when the query-entity weight takes part.
    query_keys: tuple[str, ...] = ()
    # Those of its one-word keys the query writes capitalised: short forms of a name
    # that name the one full form they fit (ENT-6, entity_rules.query_names).
    query_names: frozenset[str] = frozenset()

    @property
    def entity_degree(self) -> int:
        """Traverse entities mentioned by at most this many heads (0: no entity hop;
        an entity hop is a step of the walk, so depth 0 takes none)."""
        r = self.ranking
        return r.entity_max_degree if r.entity_hops and self.depth > 0 else 0

    @property
    def similar_count(self) -> int:
        """Each seed's this many most similar heads join the graph (0: none)."""
        return self.ranking.similar_heads if self.depth > 0 else 0

    @property
    def own_statistics(self) -> bool:
        """Score the lexical signal with the subject's own term statistics."""
        return self.ranking.lexical_statistics == "subject"


@dataclass
class Acquisition(Acquired):
    """The facts of one acquisition and where they came from: the subject's mirror
    (None: the indexes answered), whose views the hits then show
    (graphsvc.store.views.load_views). Kept here, not in the pure
    :class:`graphsvc.core.acquisition.Acquired`: the mirror is process state."""

    mirror: HeadMirror | None = None
    # The index generation the subject's state said (index_generation), which the
    # evaluation's cursors are bound to.
    generation: str = ""


def index_generation(state: Mapping[str, Any], model_name: str) -> str:
    """The index generation from a ``search/subject_state`` row: what an evaluation
    was computed at, and what its cursors check (graphsvc.ops.cursors).

    Raises:
        PurgePendingError: the row says a purge of the subject has not finished (LNK-6).
    """
    if state["pending"]:
        raise PurgePendingError(PURGE_PENDING)
    return f"{state['schemaVersion']}:{model_name}:{state['purgeEpoch']}"


def semantic_hits(
    db: Database, subject: str, vector: list[float], ranking: RankingSettings, archived: bool
) -> SemanticHits:
    """The subject's vector candidates for ``vector`` (the vector leg's one read)."""
    return semantic_candidates(
        db,
        subject=subject,
        vector=vector,
        k=ranking.max_seeds * ranking.candidate_oversample,
        limit=ranking.max_seeds,
        include_archived=archived,
        exact_max=ranking.vector_exact_max,
    )


def acquire(
    tx: Tx,
    db: Database,
    q: AcquireQuery,
    *,
    embedding: Future[list[float]] | None,
    semantic: Future[SemanticHits] | None,
) -> tuple[Acquisition, Fusion]:
    """Read candidates, fuse them, and read the retrieval graph and node facts for
    ``q`` in ``tx``: one path, whichever :class:`CandidateSource` answers.

    The subject's state (the columns of ``search/subject_state``, read with the
    fulltext candidates or the mirror's state) is checked before anything else is
    read (:func:`index_generation`). ``embedding`` is the query embedding being computed
    (None: no query text) and ``semantic`` the vector hits started beside the
    transaction (None: asked here when the indexes answer); each is waited for after
    the fulltext query. ``db`` runs the reads beside the transaction.

    Raises:
        PurgePendingError: a purge in the subject has not finished (LNK-6).
    """
    acq = Acquisition()
    head_facts: HeadFacts = {}
    usage = Usage(q.policy, q.model_id)

    def check_state(state: Mapping[str, Any]) -> None:
        acq.generation = index_generation(state, q.embedding_model)

    def vector() -> list[float] | None:
        return None if embedding is None else embedding.result()

    def hits() -> SemanticHits | None:
        if semantic is not None:
            return semantic.result()
        query = vector()
        return (
            None
            if query is None
            else semantic_hits(db, q.subject, query, q.ranking, q.include_archived)
        )

    with candidate_source(tx, db, q, usage, vector, hits, check_state) as source:
        acq.mirror = source.mirror
        source.candidates(acq, head_facts)
        fusion = fuse(acq, q.text, q.ranking)
        # The entity hop and the similar heads need the seeds only: started beside the
        # link expansion rather than after it.
        hop = source.entity_hop(fusion.seeds)
        near = _similar_heads(db, q, fusion.seeds)
        graph = source.walk(fusion.seeds, head_facts)
    acq.levels, acq.truncated, acq.edges = graph.levels, graph.truncated, sorted(graph.edges)
    if hop is not None:
        admit_entities(
            acq, head_facts, graph.nodes, hop(), q.ranking.max_nodes, q.ranking.max_edges
        )
    if near is not None:
        admit_similar(acq, head_facts, graph.nodes, near(), q.ranking.max_nodes)
    usage.states.update(source.usage_states([a for a in graph.nodes if a not in usage.covered]))
    acq.facts = node_facts(graph.nodes, head_facts, usage)
    return acq, fusion


class CandidateSource(Protocol):
    """Where one evaluation's candidates, retrieval graph and usage states come from:
    Neo4j's indexes (:class:`IndexSource`) or the process's mirror of the subject's
    heads (:class:`MirrorSource`), chosen once per evaluation
    (:func:`candidate_source`)."""

    @property
    def mirror(self) -> HeadMirror | None:
        """The mirror that answers (None: Neo4j's indexes)."""

    def candidates(self, acq: Acquired, head_facts: HeadFacts) -> None:
        """Both candidate legs into ``acq`` (the subject's state checked first)."""

    def entity_hop(self, seeds: list[str]) -> Callable[[], EntityHop] | None:
        """The entity hop from ``seeds``, started (None: not asked for)."""

    def walk(self, seeds: list[str], head_facts: HeadFacts) -> Walk:
        """The links from ``seeds``, ``depth`` levels, within the caps."""

    def usage_states(self, atom_ids: list[str]) -> dict[tuple[str, int], str]:
        """The caller's usage states of ``atom_ids`` (the walk did not bring)."""


@contextmanager
def candidate_source(
    tx: Tx,
    db: Database,
    q: AcquireQuery,
    usage: Usage,
    embedding: Callable[[], list[float] | None],
    semantic: Callable[[], SemanticHits | None],
    check_state: Callable[[Mapping[str, Any]], None],
) -> Iterator[CandidateSource]:
    """The subject's mirror where it answers (held until the block ends), else Neo4j's
    indexes."""
    with _mirror_of(tx, db, q, embedding, check_state) as held:
        if held is not None:
            yield MirrorSource(tx, db, q, *held)
            return
    yield IndexSource(tx, db, q, usage, embedding, semantic, check_state)


@dataclass
class IndexSource:
    """Candidates from Neo4j's fulltext and vector indexes, the graph from its links:
    the fulltext query first (while the query embedding is computed), the subject's
    term statistics beside it, the vector hits as they come."""

    tx: Tx
    db: Database
    q: AcquireQuery
    usage: Usage
    embedding: Callable[[], list[float] | None]
    semantic: Callable[[], SemanticHits | None]
    check_state: Callable[[Mapping[str, Any]], None]
    mirror: HeadMirror | None = None
    # The entities the query's keys may name (search/query_entities), asked beside
    # the candidate reads.
    _named: Callable[[], list[EntityForms]] | None = None

    def candidates(self, acq: Acquired, head_facts: HeadFacts) -> None:
        q = self.q
        if q.entity_degree > 0 and q.query_keys:
            self._named = query_entities_soon(self.db, q.subject, list(q.query_keys))
        statistics = _Statistics(self.db, q)
        row = _lexical(self.tx, acq, head_facts, q) if has_word(q.text) else None
        self.check_state(row or subject_state(self.tx, q.subject))
        statistics.settle(acq, row)
        _keep_lexical(self.tx, acq, q)
        vector = self.embedding()
        if vector is not None and acq.lexical:
            lexical_semantic(acq, vector)
        hits = self.semantic()
        if hits is not None:
            acq.vector_mode = hits.mode
            _take_semantic(acq, head_facts, hits.rows)

    def entity_hop(self, seeds: list[str]) -> Callable[[], EntityHop] | None:
        q = self.q
        if q.entity_degree <= 0 or not (seeds or q.query_keys):
            return None
        named = (
            resolve_query(q.query_keys, q.query_names, self._named())
            if self._named is not None
            else []
        )
        return entity_hop_soon(self.db, q.subject, seeds, named, q.entity_degree)

    def walk(self, seeds: list[str], head_facts: HeadFacts) -> Walk:
        q = self.q
        return walk(
            self.tx,
            self.db,
            q.subject,
            seeds,
            q.depth,
            q.ranking.max_nodes,
            q.ranking.max_edges,
            self.usage,
            head_facts,
        )

    def usage_states(self, atom_ids: list[str]) -> dict[tuple[str, int], str]:
        # Two-level fetches brought the usage of every atom they name; the rest (a
        # one-level walk, deeper levels, depth 0) is read here.
        if not atom_ids:
            return {}
        q = self.q
        return usage_states(self.tx, q.subject, q.policy, q.model_id, atom_ids)


@dataclass
class MirrorSource:
    """Candidates, links and entities from the process's mirror of the subject's
    heads (no round trip), held at the subject's generation; usage states kept at its
    usage generation (:mod:`graphsvc.process_state.head_mirrors`)."""

    tx: Tx
    db: Database
    q: AcquireQuery
    mirror: HeadMirror
    state: dict[str, Any]
    vector: list[float] | None

    def candidates(self, acq: Acquired, head_facts: HeadFacts) -> None:
        _from_mirror(acq, head_facts, self.q, self.mirror, self.state, self.vector)

    def entity_hop(self, seeds: list[str]) -> Callable[[], EntityHop] | None:
        q = self.q
        if q.entity_degree <= 0 or not (seeds or q.query_keys):
            return None
        keys = q.query_keys
        # No query keys (the query-entity weight off): nothing to resolve.
        named = resolve_query(keys, q.query_names, self.mirror.query_entities(keys)) if keys else []
        answer = self.mirror.entity_hop(seeds, named, q.entity_degree)
        return lambda: answer

    def walk(self, seeds: list[str], head_facts: HeadFacts) -> Walk:
        q = self.q
        return walk_mirror(
            self.mirror, seeds, q.depth, q.ranking.max_nodes, q.ranking.max_edges, head_facts
        )

    def usage_states(self, atom_ids: list[str]) -> dict[tuple[str, int], str]:
        # Read again only when the subject's usage generation moved.
        key = (self.q.subject, self.q.policy, self.q.model_id)
        return usage_shelf(self.db).states(self.tx, self.state, key, atom_ids)


def _take_semantic(acq: Acquired, head_facts: HeadFacts, rows: list[dict[str, Any]]) -> None:
    """The vector hits (rows of search/vector_candidates_small) into ``acq``."""
    for row in rows:
        atom_id = row["atomId"]
        acq.semantic[atom_id] = float(row["semantic"])
        head_facts[atom_id] = {
            "rev": row["rev"],
            "atomisedInto": row["atomisedInto"],
            "archivedAt": row["archivedAt"],
        }
        acq.texts.setdefault(atom_id, row.get("text"))


@contextmanager
def _mirror_of(
    tx: Tx,
    db: Database,
    q: AcquireQuery,
    embedding: Callable[[], list[float] | None],
    check_state: Callable[[Mapping[str, Any]], None],
) -> Iterator[tuple[HeadMirror, dict[str, Any], list[float] | None] | None]:
    """The process's mirror of the subject's heads (:mod:`graphsvc.process_state.head_mirrors`)
    at the subject's current generation, held (no other search of the subject moves
    it) while the block runs, with the subject's state and the query embedding; None
    where the mirror does not answer: turned off, index statistics asked for, a
    fulltext index with another analyzer than the one the mirror scores like, or a
    subject above the bound. One round trip checks the subject's state (``check_state``
    gets it) and the mirror's generation.
    """
    bound = min(q.ranking.head_mirror_max, q.ranking.lexical_statistics_max)
    if bound <= 0 or not q.own_statistics:
        yield None
        return
    state = mirror_state(tx, q.subject)
    check_state(state)
    generation = int(state.get("fulltextGeneration") or 0)
    known = kept_analyzer(db)
    if known is not None and known[0] == generation:
        analyzer = known[1]
    else:
        analyzer = fulltext_analyzer_soon(db)()
        if analyzer is not None and not state.get("rebuilding"):
            keep_analyzer(db, generation, analyzer)
    if analyzer != ANALYZER:
        yield None
        return
    # The query embedding is waited for before the mirror is held: other searches of
    # the subject wait for the holder, and only for its work on the mirror.
    vector = embedding()
    with mirror_shelf(db, 4 * bound).current(tx, q.subject, state, bound) as mirror:
        yield None if mirror is None else (mirror, state, vector)


def _from_mirror(
    acq: Acquired,
    head_facts: HeadFacts,
    q: AcquireQuery,
    mirror: HeadMirror,
    state: dict[str, Any],
    vector: list[float] | None,
) -> None:
    """Both candidate legs from ``mirror``: the lexical one the subject's own BM25 over
    every body holding a query term (the pool Lucene's top hits would give, without
    Lucene's index-wide statistics choosing it), the vector one an exact scan, as
    ``search/vector_candidates_small``."""
    acq.index_analyzer = ANALYZER
    terms = query_terms(q.text, q.ranking.lexical_proximity)
    scored: MirrorBM25 | None = None
    if state.get("rebuilding"):  # as the fulltext leg: no lexical signal meanwhile
        acq.lexical_mode = "rebuilding"
    elif terms.terms:
        # The best max_seeds by the subject's own BM25: what keep_lexical keeps of any
        # pool holding them all.
        acq.lexical_mode = "mirror"
        scored = mirror.bm25(terms, slop=q.ranking.lexical_proximity)
        rows = mirror.lexical(
            terms,
            slop=q.ranking.lexical_proximity,
            limit=q.ranking.max_seeds,
            include_archived=q.include_archived,
            scored=scored,
        )
        take_lexical(acq, head_facts, rows, q.ranking.max_seeds, q.ranking.max_seeds)
        acq.subject_stats = scored.stats
    acq.lexical_embeddings.clear()
    if vector is not None:
        acq.lexical_semantic.update(mirror.cosines(vector, acq.lexical))
        acq.vector_mode = "exact"
        hits = mirror.semantic(
            vector, limit=q.ranking.max_seeds, include_archived=q.include_archived
        )
        _take_semantic(acq, head_facts, hits)
    if scored is not None:
        # Every candidate's BM25 is in the mirror's scores already: the fusion takes
        # them instead of analysing and scoring the bodies again.
        acq.body_scores = mirror.scores_of(scored, acq.texts)
        acq.lexical_bound = scored.bound


def walk_mirror(
    mirror: HeadMirror,
    seeds: list[str],
    depth: int,
    max_nodes: int,
    max_edges: int,
    head_facts: HeadFacts,
) -> Walk:
    """:func:`walk` over the links the mirror holds (no round trip); the caller reads
    the usage states of the nodes afterwards."""
    graph = Walk.from_seeds(seeds)
    for _ in range(depth):
        if not graph.frontier:
            break
        graph.levels += 1
        edges_of = {a: mirror.edges(a) for a in graph.frontier}
        admit_level(graph, head_facts, edges_of, max_nodes, max_edges)
    return graph


def _lexical(
    tx: Tx, acq: Acquired, head_facts: HeadFacts, q: AcquireQuery
) -> dict[str, Any] | None:
    """The subject's top ``pool`` fulltext hits into ``acq``; returns the first query's
    row (with the subject's state), None when the text makes no Lucene query. While
    the fulltext index is being rebuilt there are no hits and ``acq.lexical_mode`` is
    ``"rebuilding"`` (the lexical signal is missing).

    The index is shared by all subjects. Its top ``k`` without a subject clause,
    filtered by the read, holds exactly the subject's top hits when it holds ``pool``
    of them or was not full; otherwise ask again with the subject clause (same
    scores: that clause has boost 0). With ``subject_clause_first`` the subject clause
    is asked at once (one query where a subject holds a minority of the index). The
    caller checks the state before it uses the hits.
    """
    pool = q.ranking.lexical_pool or q.ranking.max_seeds
    k = max(q.ranking.max_seeds * q.ranking.candidate_oversample, pool)
    embedded = q.ranking.max_seeds or pool
    hits: list[Any] = []
    first: dict[str, Any] | None = None
    for scoped in (True,) if q.ranking.fulltext_subject_clause == "first" else (False, True):
        lucene = fulltext_query(q.text, q.subject if scoped else None, q.ranking.lexical_proximity)
        if lucene is None:
            return first
        if scoped:
            acq.lexical_mode = "subject clause"
        answer = fulltext_candidates(
            tx,
            lucene=lucene,
            k=k,
            limit=embedded,
            subject=q.subject,
            include_archived=q.include_archived,
        )
        first = first or answer.row
        if answer.rebuilding:  # `graphsvc index rebuild --fulltext` under way
            acq.lexical_mode = "rebuilding"
            return first
        hits = answer.hits
        if len(hits) >= pool or answer.seen < k:
            break
    take_lexical(acq, head_facts, hits, pool, embedded)
    return first


def _keep_lexical(tx: Tx, acq: Acquired, q: AcquireQuery) -> None:
    """Keep the lexical hits the fusion keeps, each with its embedding."""
    if acq.lexical:
        # The fusion rescored the pool of Lucene hits and keeps its best; the fulltext
        # rows brought the embeddings of Lucene's best max_seeds only.
        kept = set(keep_lexical(acq, q.text, q.ranking))
        for atom_id in [a for a in acq.lexical if a not in kept]:
            del acq.lexical[atom_id]
            acq.lexical_embeddings.pop(atom_id, None)
    missing = [a for a in acq.lexical if a not in acq.lexical_embeddings]
    if missing:
        acq.lexical_embeddings.update(embeddings_of(tx, q.subject, missing))


def _similar_heads(
    db: Database, q: AcquireQuery, seeds: list[str]
) -> Callable[[], list[SimilarRow]] | None:
    """Each seed's most similar heads by stored embedding, started (None: not asked)."""
    if q.similar_count <= 0 or not seeds:
        return None
    return similar_heads_soon(db, q.subject, seeds, q.similar_count)


def walk(
    tx: Tx,
    db: Database,
    subject: str,
    seeds: list[str],
    depth: int,
    max_nodes: int,
    max_edges: int,
    usage: Usage,
    head_facts: HeadFacts,
) -> Walk:
    """BFS over current links from the seeds, ``depth`` levels, within the caps.

    Levels are fetched two at a time where two remain (one round trip instead of
    two; the usage states of every atom they name come along into ``usage``); the
    edges are examined level by level in frontier order
    (:func:`graphsvc.core.acquisition.admit_level`), so the caps admit the same nodes
    and edges as a one-level-at-a-time walk. ``head_facts`` gets the facts of every
    atom the rows name.
    """
    graph = Walk.from_seeds(seeds)
    ahead: dict[str, Edges] | None = None
    for level in range(depth):
        if not graph.frontier:
            break
        graph.levels += 1
        if ahead is not None:
            edges_of = ahead
            missing = [a for a in graph.frontier if a not in ahead]  # not expected; safe
            if missing:
                edges_of = {**ahead, **expand_level(tx, db, subject, missing)}
            ahead = None
        elif depth - level >= 2:
            two = expand_two_levels(tx, db, subject, usage.policy, usage.model_id, graph.frontier)
            covered_by(usage, two.first, two.second)
            usage.states.update(two.usage)
            edges_of, ahead = two.first, two.second
        else:
            edges_of = expand_level(tx, db, subject, graph.frontier)
        admit_level(graph, head_facts, edges_of, max_nodes, max_edges)
    return graph


class _Statistics:
    """The subject's term statistics and the index's analyzer for one evaluation.

    Subject statistics need the index to analyse text as graphsvc.core.bm25 does;
    an index with another analyzer (until `graphsvc index rebuild --fulltext`) is
    scored by Lucene. Both are read beside the fulltext query. The statistics a
    process read earlier are kept per subject until its generation moves
    (graphsvc.process_state.term_statistics): when every query term is known, no read starts
    at construction; the fulltext row then says (:meth:`settle`) whether they are
    still current.
    """

    def __init__(self, db: Database, q: AcquireQuery) -> None:
        self.db, self.q = db, q
        self.analyzer: Callable[[], str | None] | None = None
        self.stats: Callable[[], SubjectStats | None] | None = None
        self.known = kept_analyzer(db)
        self.cache = statistics_cache(db)
        self.terms = (
            query_terms(q.text, q.ranking.lexical_proximity).surface if q.own_statistics else {}
        )
        self.cached_at: Generation | None = None
        if q.own_statistics and has_word(q.text):
            if self.known is None:
                self.analyzer = fulltext_analyzer_soon(db)
            self.cached_at = self.cache.known(
                q.subject, list(self.terms), q.ranking.lexical_statistics_max
            )
            if self.cached_at is None:
                self.stats = self._read()

    def _read(self) -> Callable[[], SubjectStats | None]:
        return subject_stats_soon(
            self.db, self.q.subject, self.terms, self.q.ranking.lexical_statistics_max
        )

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
            analyzer = (self.analyzer or fulltext_analyzer_soon(self.db))()
            acq.index_analyzer = analyzer
            if analyzer is not None and state is not None and not state.get("rebuilding"):
                keep_analyzer(self.db, generation, analyzer)
        subject_stats = self.stats()
        if acq.lexical and acq.index_analyzer == ANALYZER:
            acq.subject_stats = subject_stats
