"""One evaluation (RD-1, CUR-1): candidates → fusion → retrieval graph → usage → solve.

Shared by ``search`` and ``read``. The lexical score of a candidate is its BM25
with the subject's own statistics (``GRAPHSVC_LEXICAL_STATISTICS=subject``,
graphsvc.core.bm25; ``index``: Lucene's score with the statistics of the whole
index), normalised as ``GRAPHSVC_LEXICAL_NORMALISATION`` says: ``max`` divides by
the largest score among the candidates (the best lexical hit has 1, a non-hit 0),
``bound`` by the query's BM25 upper bound (candidate-independent). A candidate
without an embedding has its semantic signal *missing* and is ranked lexically
alone (ACT-1).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar, cast

import numpy as np

from graphsvc.core.acquisition import Acquired, Fusion
from graphsvc.core.activation import (
    ActivationResult,
    PropagationTable,
    RoleWeights,
    build_edges,
    entity_graph,
    entity_inflow,
    head_scores,
    propagate,
    usage_boost,
)
from graphsvc.core.availability import AdaptiveUseModel, checked_value
from graphsvc.core.binding import Binding
from graphsvc.core.entity_keys import query_keys
from graphsvc.core.entity_rules import query_names
from graphsvc.core.head_mirror import HeadMirror
from graphsvc.embed.query_vectors import query_vector
from graphsvc.errors import InvalidInputError
from graphsvc.ops.acquisition import AcquireQuery, acquire, semantic_hits
from graphsvc.settings import RankingSettings
from graphsvc.store.connection import Database, Tx
from graphsvc.store.retrieval import SemanticHits
from graphsvc.telemetry.request_scope import current
from graphsvc.telemetry.stages import stage

if TYPE_CHECKING:
    from graphsvc.embed.sentence import Embedder
    from graphsvc.ops.ranked_rows import RankedRow, ScoreBreakdown

__all__ = ["Evaluation", "evaluate", "evaluate_then", "propagation_table"]

T = TypeVar("T")

# The query embedding runs in a worker thread beside the first database round trips
# (the fulltext query and the purge check do not need it; torch releases the GIL while
# it computes, Neo4j is another process). Two workers: a concurrent request never
# queues behind another's embedding for long.
_EMBED_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="graphsvc-embed")


def embed_soon(embedder: Embedder, text: str) -> Future[list[float]]:
    """Start embedding the query ``text``; ``.result()`` waits for it (and re-raises
    its error)."""
    return _EMBED_POOL.submit(query_vector, embedder, text, current())


@dataclass
class Evaluation:
    """A frozen evaluation: node order, signals, scores and diagnostics."""

    query: str
    evaluated_at: float
    atom_ids: list[str]
    revs: list[int]
    m: list[float]
    semantic: list[float | None]
    lexical: list[float | None]
    usage: list[float]
    b: list[float]
    scores: list[float]
    candidates: int
    result: ActivationResult | None
    diagnostics: dict[str, Any] = field(default_factory=dict)
    # The index generation at evaluation time, bound into this evaluation's cursors.
    generation: str = ""
    # Per node, the activation that came through entities (ENT-4; empty: none).
    entity_inflow: list[float] = field(default_factory=list)
    # The subject's mirror the candidates came from (None: the indexes answered): the
    # hits' views come from it (graphsvc.store.views.load_views).
    mirror: HeadMirror | None = None

    def ranked(self) -> list[int]:
        """Node indexes by score (ties by match, then atom id, for determinism)."""
        return sorted(
            range(len(self.atom_ids)),
            key=lambda i: (-self.scores[i], -self.m[i], self.atom_ids[i]),
        )

    def ranked_rows(self, *, breakdowns: int = 0) -> list[RankedRow]:
        """The atoms with a positive score, ranked: what a cursor's pages come from.

        ``breakdowns``: how many leading rows carry their score breakdown (-1: all).
        An unpaged search shows one page; the breakdowns of the other few hundred rows
        would be CPU spent on nothing (docs/performance.md#where-a-searchs-time-goes).
        """
        total = self._a_total()
        order = [i for i in self.ranked() if self.scores[i] > 0]
        upto = len(order) if breakdowns < 0 else breakdowns
        # mypy reads the conditional ** as a partial row: the cast says what it is.
        return [
            cast(
                "RankedRow",
                {
                    "atomId": self.atom_ids[i],
                    "rev": self.revs[i],
                    "score": self.scores[i],
                    **({"breakdown": self.breakdown(i, total)} if k < upto else {}),
                },
            )
            for k, i in enumerate(order)
        ]

    def _a_total(self) -> float:
        return float(np.sum(self.result.a)) if self.result is not None else 0.0

    def breakdown(self, i: int, a_total: float | None = None) -> ScoreBreakdown:
        """The analysts' view of one node's score (``a_total``: Σa, when the caller
        has it already; every row of a ranking shares it)."""
        if a_total is None:
            a_total = self._a_total()
        own = self.b[i] / a_total if a_total > 0 else 0.0
        return {
            "match": self.m[i],
            "semantic": self.semantic[i],
            "lexical": self.lexical[i],
            "usage": self.usage[i],
            "usageFactor": (self.b[i] / self.m[i]) if self.m[i] > 0 else 1.0,
            "base": self.b[i],
            "propagatedShare": max(0.0, self.scores[i] - own),
            "entityShare": (self.entity_inflow[i] / a_total)
            if self.entity_inflow and a_total > 0
            else 0.0,
            "candidate": self.m[i] > 0 or self.semantic[i] is not None,
        }


@functools.lru_cache(maxsize=16)
def propagation_table(ranking: RankingSettings) -> PropagationTable:
    """The role weights of ``ranking`` (GRAPHSVC_ROLE_WEIGHTS, parsed when the settings
    were read) as the core's table: built once per settings, not per evaluation."""
    return PropagationTable({r: RoleWeights(f, b) for r, (f, b) in ranking.role_table.items()})


def evaluate(
    db: Database,
    embedder: Embedder,
    clock: Callable[[], float],
    ranking: RankingSettings,
    binding: Binding,
    text: str,
    *,
    depth: int,
    include_archived: bool,
) -> Evaluation:
    """Evaluate ``text`` for ``binding`` once; pages and packing reuse the result.

    Raises:
        PurgePendingError: a purge in the subject has not finished (LNK-6).
        InvalidInputError: bad depth.
    """
    ev, _ = evaluate_then(
        db,
        embedder,
        clock,
        ranking,
        binding,
        text,
        depth=depth,
        include_archived=include_archived,
        then=_nothing,
    )
    return ev


def _nothing(tx: Tx, ev: Evaluation) -> None:
    return None


@dataclass(frozen=True)
class _Request:
    """One evaluation's inputs: the store, the ranking settings, the caller and the
    query, and the query embedding and vector hits being computed beside the
    transaction."""

    db: Database
    ranking: RankingSettings
    binding: Binding
    text: str
    depth: int
    include_archived: bool
    now: float
    pending: Future[list[float]] | None
    hits: Future[SemanticHits] | None


def evaluate_then(
    db: Database,
    embedder: Embedder,
    clock: Callable[[], float],
    ranking: RankingSettings,
    binding: Binding,
    text: str,
    *,
    depth: int,
    include_archived: bool,
    then: Callable[[Tx, Evaluation], T],
) -> tuple[Evaluation, T]:
    """Evaluate, then run ``then(tx, evaluation)`` on the same ``tx``.

    The purge check, the acquisition and whatever the caller reads about the
    result (a read's closures and bodies) run on one session, each query an
    auto-commit read (:meth:`Database.read_each`): a read transaction would add a
    BEGIN and a COMMIT round trip to each search (three round trips where its one
    query, ``search/mirror_state``, needs one) and would give no snapshot in
    return, since Neo4j's reads are read-committed. What makes the answer agree
    (RD-1) is the subject's generation, read with the first query and checked
    against what the mirror and the kept statistics were built from.

    Raises:
        PurgePendingError: a purge in the subject has not finished (LNK-6).
        InvalidInputError: bad depth.
    """
    if not 0 <= depth <= ranking.max_depth:
        raise InvalidInputError(f"depth must be in 0..{ranking.max_depth}")
    now = clock()
    # The query embedding, and then the vector query, run beside the first reads.
    pending: Future[list[float]] | None = None
    hits: Future[SemanticHits] | None = None
    if text.strip() and ranking.head_mirror_max > 0:
        # The mirror of the subject's heads answers the vector leg in most searches:
        # the vector query is asked only where it does not (ops.acquisition.acquire).
        pending = embed_soon(embedder, text)
    elif text.strip():
        pending = embed_soon(embedder, text)
        embedded = pending
        hits = db.soon(
            lambda: semantic_hits(
                db, binding.subject, embedded.result(), ranking, include_archived
            ),
            label="vector candidates",
        )
    request = _Request(db, ranking, binding, text, depth, include_archived, now, pending, hits)

    def work(tx: Tx) -> tuple[Evaluation, T]:
        with stage("ranking"):
            ev = _evaluate_in(tx, request, embedder.model_name)
        return ev, then(tx, ev)

    try:
        return db.read_each(work, label="evaluate")
    finally:
        # On an early error (purge pending) nobody waits for these; a started one
        # finishes on its own and its result is dropped.
        for future in (hits, pending):
            if future is not None:
                future.cancel()


def _evaluate_in(tx: Tx, req: _Request, embedding_model: str) -> Evaluation:
    """Acquire in ``tx``, then score: usage boost and propagation over the graph."""
    lim = req.ranking
    model = AdaptiveUseModel()
    query = _acquire_query(req, model.id, embedding_model)
    acq, fusion = acquire(tx, req.db, query, embedding=req.pending, semantic=req.hits)
    fused = fusion.fused
    hidden = {
        a
        for a, f in acq.facts.items()
        if not req.include_archived and (f.get("atomisedInto") or 0) > 0 and f.get("archivedAt")
    }
    atom_ids = [a for a in acq.facts if a not in hidden]
    m = [fused[a][0] if a in fused else 0.0 for a in atom_ids]
    # Most nodes were never used: the model's value of the empty state is computed
    # once (value() is a function of its arguments, AV-1), not once per node.
    never_used = checked_value(model, {}, req.now)
    usage = [
        checked_value(model, _state(raw), req.now)
        if (raw := acq.facts[a].get("usage"))
        else never_used
        for a in atom_ids
    ]
    b = usage_boost(np.array(m, dtype=np.float64), np.array(usage, dtype=np.float64), lim.beta)
    result, inflow, entity_diag = _propagate(lim, acq, atom_ids, b)
    diagnostics = _diagnostics(
        req, acq, fusion, atom_ids, m, len(hidden), req.pending is not None, result, model.id
    )
    if lim.entity_hops:
        diagnostics["evaluation"]["entities"] = entity_diag
    return Evaluation(
        query=req.text,
        evaluated_at=req.now,
        atom_ids=atom_ids,
        revs=[int(acq.facts[a]["rev"]) for a in atom_ids],
        m=m,
        semantic=[fused[a][1] if a in fused else None for a in atom_ids],
        lexical=[fused[a][2] if a in fused else None for a in atom_ids],
        usage=usage,
        b=np.asarray(b, dtype=np.float64).tolist(),
        scores=np.asarray(result.scores, dtype=np.float64).tolist(),
        candidates=len(fused),
        result=result,
        diagnostics=diagnostics,
        entity_inflow=inflow,
        mirror=acq.mirror,
        generation=acq.generation,
    )


def _acquire_query(req: _Request, model_id: str, embedding_model: str) -> AcquireQuery:
    """What ``acquire`` reads for ``req``: its text and walk, and the ranking settings."""
    ranking = req.ranking
    named = ranking.entity_hops and ranking.entity_query_weight > 0 and req.depth > 0
    return AcquireQuery(
        subject=req.binding.subject,
        policy=req.binding.policy,
        model_id=model_id,
        text=req.text,
        depth=req.depth,
        include_archived=req.include_archived,
        ranking=ranking,
        embedding_model=embedding_model,
        query_keys=tuple(query_keys(req.text)) if named else (),
        query_names=query_names(req.text) if named else frozenset(),
    )


def _anchors(b: Any, count: int) -> list[int]:
    """The ``count`` heads of highest base activation (ties by graph order), those
    above 0: the anchors whose entities start with activation of their own."""
    base = np.asarray(b, dtype=np.float64)
    if count <= 0 or base.size == 0:
        return []
    order = np.argsort(-base, kind="stable")[:count]
    return [int(i) for i in order if base[i] > 0.0]


def _with_similar_edges(
    lim: RankingSettings, acq: Acquired, index: dict[str, int], src: Any, dst: Any, w: Any
) -> tuple[Any, Any, Any]:
    """The link edges plus the nearest-neighbour edges: both ways, each of the
    configured weight."""
    near = [(index[a], index[b]) for a, b in acq.similar_edges if a in index and b in index]
    if not near:
        return src, dst, w
    s_src, s_dst = np.array(near, dtype=np.int64).T
    return (
        np.concatenate((src, s_src, s_dst)),
        np.concatenate((dst, s_dst, s_src)),
        np.concatenate((w, np.full(2 * len(near), lim.similar_weight))),
    )


def _propagate(
    lim: RankingSettings, acq: Acquired, atom_ids: list[str], b: Any
) -> tuple[ActivationResult, list[float], dict[str, Any]]:
    """Spread the base activation ``b`` over the retrieval graph's links, and through
    the entities it holds when the entity index takes part (ENT-4); the heads'
    result, each head's activation from entities, and the entity diagnostics."""
    index = {a: i for i, a in enumerate(atom_ids)}
    n = len(atom_ids)
    links = [(index[s], index[d], r) for s, d, r in acq.edges if s in index and d in index]
    src, dst, w = build_edges(n, links, propagation_table(lim), lim.link_weighting)
    if acq.similar_edges and lim.similar_weight > 0:
        src, dst, w = _with_similar_edges(lim, acq, index, src, dst, w)
    # (entity number, head index) pairs, entities numbered in order of first mention.
    key_index: dict[str, int] = {}
    mentions: list[tuple[int, int]] = []
    for key, atom_id in acq.entity_edges:
        i = index.get(atom_id)
        if i is not None:
            mentions.append((key_index.setdefault(key, len(key_index)), i))
    if not lim.entity_hops or not key_index:
        result = propagate(
            n,
            src,
            dst,
            w,
            b,
            propagation=lim.propagation,
            tol=lim.convergence_tol,
            max_work=lim.evaluation_work,
        )
        return result, [], _entity_diagnostics(acq, 0, 0, 0.0)
    named = [key_index[k] for k in acq.query_entities if k in key_index]
    top = float(np.max(b)) if n else 0.0
    graph = entity_graph(
        n,
        src,
        dst,
        w,
        np.asarray(b, dtype=np.float64),
        mentions,
        len(key_index),
        propagation=lim.propagation,
        entity_weight=lim.entity_weight,
        query_entities=named,
        query_base=lim.entity_query_weight * top,
        anchor_heads=_anchors(b, lim.entity_anchors) if lim.entity_anchor_weight > 0 else (),
        anchor_weight=lim.entity_anchor_weight,
    )
    full = propagate(
        graph.n,
        graph.src,
        graph.dst,
        graph.weight,
        graph.b,
        propagation=lim.propagation,
        tol=lim.convergence_tol,
        max_work=lim.evaluation_work,
        row_sums=graph.row_sums,
    )
    a = full.a[:n]
    inflow = entity_inflow(graph, full.a)
    result = ActivationResult(
        a=a,
        scores=head_scores(full.a, n),
        solver=full.solver,
        iterations=full.iterations,
        residual=full.residual,
        converged=full.converged,
        nodes=full.nodes,
        edges=full.edges,
        work=full.work,
    )
    total = float(a.sum())
    share = float(inflow.sum()) / total if total > 0 else 0.0
    return (
        result,
        np.asarray(inflow, dtype=np.float64).tolist(),
        _entity_diagnostics(acq, len(key_index), len(mentions), share, graph.anchored),
    )


def _entity_diagnostics(
    acq: Acquired, entities: int, mentions: int, share: float, anchored: int = 0
) -> dict[str, Any]:
    """How the entity index took part (ENT-2, ENT-5): entity nodes and mention edges
    in the graph, the query's entities, the entities the best matches seeded, the
    seeds the index has not reached yet, and the share of the heads' activation that
    came through entities."""
    return {
        "nodes": entities,
        "mentions": mentions,
        "queryEntities": len(acq.query_entities),
        "anchorEntities": anchored,
        "unindexedSeeds": acq.unindexed,
        "share": share,
    }


def _diagnostics(
    req: _Request,
    acq: Acquired,
    fusion: Fusion,
    atom_ids: list[str],
    m: list[float],
    hidden: int,
    query_embedding: bool,
    result: ActivationResult,
    model_id: str,
) -> dict[str, Any]:
    fused = fusion.fused
    missing = {a: fused[a][3] for a in atom_ids if a in fused and fused[a][3]}
    return {
        "acquisition": {
            "candidates": len(fused),
            "semanticCandidates": len(acq.semantic),
            "lexicalCandidates": len(acq.lexical),
            "seeds": sum(1 for x in m if x > 0),
            "vectorMode": acq.vector_mode,
            "lexicalMode": acq.lexical_mode,
            "queryEmbedding": query_embedding,
            "missingSignals": missing,
            "lexicalNormalisation": fusion.normalisation,
            "lexicalStatistics": (
                "subject" if acq.subject_stats is not None else "index" if acq.lexical else "none"
            ),
            "hiddenArchived": hidden,
            "evaluatedAt": req.now,
        },
        "evaluation": {
            **result.diagnostics(),
            "depth": req.depth,
            "levels": acq.levels,
            "truncated": acq.truncated,
            "similarEdges": len(acq.similar_edges),
            "propagation": req.ranking.propagation,
            "beta": req.ranking.beta,
            "usageModel": model_id,
        },
    }


def _state(raw: str | None) -> dict[str, Any]:
    return json.loads(raw) if raw else {}
