"""One evaluation (RD-1, CUR-1): candidates → fusion → retrieval graph → usage → solve.

Shared by ``search`` and ``read``. Lexical scores are normalised within the
candidate set by dividing by the largest Lucene score among the candidates (so
the best lexical hit has 1, a non-hit has 0); a candidate without an embedding
has its semantic signal *missing* and is ranked lexically alone (ACT-1).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from neo4j import ManagedTransaction

from graphsvc.core.activation import (
    ActivationResult,
    PropagationTable,
    RoleWeights,
    acquisition_order,
    build_edges,
    cosine_from_neo4j,
    fuse_match,
    normalise_lexical,
    propagate,
    usage_boost,
)
from graphsvc.core.availability import AdaptiveUseModel, checked_value
from graphsvc.core.binding import Binding
from graphsvc.embed.background import embed_soon
from graphsvc.errors import InvalidInputError
from graphsvc.ops.cursors import generation_of
from graphsvc.store.retrieval import Acquired, SemanticHits, acquire, semantic_candidates

if TYPE_CHECKING:
    from graphsvc.service import Service

__all__ = ["Evaluation", "evaluate", "evaluate_then", "propagation_table"]

T = TypeVar("T")


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

    def ranked(self) -> list[int]:
        """Node indexes by score (ties by match, then atom id, for determinism)."""
        return sorted(
            range(len(self.atom_ids)),
            key=lambda i: (-self.scores[i], -self.m[i], self.atom_ids[i]),
        )

    def ranked_rows(self, *, breakdown: bool = False) -> list[dict[str, Any]]:
        """The atoms with a positive score, ranked: what a cursor's pages come from."""
        return [
            {
                "atomId": self.atom_ids[i],
                "rev": self.revs[i],
                "score": self.scores[i],
                **({"breakdown": self.breakdown(i)} if breakdown else {}),
            }
            for i in self.ranked()
            if self.scores[i] > 0
        ]

    def breakdown(self, i: int) -> dict[str, Any]:
        """The analysts' view of one node's score."""
        a_total = float(np.sum(self.result.a)) if self.result is not None else 0.0
        own = self.b[i] / a_total if a_total > 0 else 0.0
        return {
            "match": self.m[i],
            "semantic": self.semantic[i],
            "lexical": self.lexical[i],
            "usage": self.usage[i],
            "usageFactor": (self.b[i] / self.m[i]) if self.m[i] > 0 else 1.0,
            "base": self.b[i],
            "propagatedShare": max(0.0, self.scores[i] - own),
            "candidate": self.m[i] > 0 or self.semantic[i] is not None,
        }


def propagation_table(spec: str) -> PropagationTable:
    """Parse ``role=forward:reverse,...`` (GRAPHSVC_ROLE_WEIGHTS).

    Raises:
        InvalidInputError: a malformed entry.
    """
    roles: dict[str, RoleWeights] = {}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        role, _, weights = part.partition("=")
        fwd, _, rev = weights.partition(":")
        try:
            roles[role.strip()] = RoleWeights(float(fwd), float(rev or fwd))
        except ValueError as exc:
            raise InvalidInputError(f"bad GRAPHSVC_ROLE_WEIGHTS entry {part!r}") from exc
    return PropagationTable(roles)


def evaluate(
    service: Service,
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
        service, binding, text, depth=depth, include_archived=include_archived, then=_nothing
    )
    return ev


def _nothing(tx: ManagedTransaction, ev: Evaluation) -> None:
    return None


def evaluate_then(
    service: Service,
    binding: Binding,
    text: str,
    *,
    depth: int,
    include_archived: bool,
    then: Callable[[ManagedTransaction, Evaluation], T],
) -> tuple[Evaluation, T]:
    """Evaluate, then run ``then(tx, evaluation)`` in the same read transaction.

    One transaction holds the purge check, the acquisition and whatever the caller
    reads about the result (a read's closures and bodies), so they agree (RD-1)
    and a read pays for one transaction, not four.

    Raises:
        PurgePendingError: a purge in the subject has not finished (LNK-6).
        InvalidInputError: bad depth.
    """
    st = service.settings
    if not 0 <= depth <= st.max_depth:
        raise InvalidInputError(f"depth must be in 0..{st.max_depth}")
    now = service.clock()
    # The query embedding, and then the vector query, run beside the first reads.
    pending: Future[list[float]] | None = None
    hits: Future[SemanticHits] | None = None
    if text.strip():
        pending = embed_soon(service.embedder, text)
        embedded = pending
        hits = service.db.soon(
            lambda: semantic_candidates(
                service.db,
                subject=binding.subject,
                vector=embedded.result(),
                k=st.max_seeds * st.candidate_oversample,
                limit=st.max_seeds,
                include_archived=include_archived,
            ),
            label="vector candidates",
        )

    def work(tx: ManagedTransaction) -> tuple[Evaluation, T]:
        generations: list[str] = []

        def check_state(state: dict[str, Any]) -> None:
            generations.append(generation_of(state, service.embedder.model_name))  # purge

        ev = _evaluate_in(
            tx, service, binding, text, depth, include_archived, now, pending, hits, check_state
        )
        ev.generation = generations[-1]
        return ev, then(tx, ev)

    try:
        return service.db.read_tx(work, label="evaluate")
    finally:
        # On an early error (purge pending) nobody waits for these; a started one
        # finishes on its own and its result is dropped.
        for future in (hits, pending):
            if future is not None:
                future.cancel()


def _evaluate_in(
    tx: ManagedTransaction,
    service: Service,
    binding: Binding,
    text: str,
    depth: int,
    include_archived: bool,
    now: float,
    pending: Future[list[float]] | None,
    hits: Future[SemanticHits] | None,
    check_state: Callable[[dict[str, Any]], None],
) -> Evaluation:
    st = service.settings
    model = AdaptiveUseModel()
    fused: dict[str, tuple[float, float | None, float | None, list[str]]] = {}
    embedded: list[list[float] | None] = []

    def embedding() -> list[float] | None:
        if not embedded:
            embedded.append(None if pending is None else pending.result())
        return embedded[0]

    def seeds_from(acq: Acquired) -> list[str]:
        lex_norm = normalise_lexical(acq.lexical)
        lexical_missing = acq.lexical_mode == "rebuilding"
        ids = sorted(set(acq.semantic) | set(acq.lexical))
        for atom_id in ids:
            if atom_id in acq.semantic:
                sem: float | None = cosine_from_neo4j(acq.semantic[atom_id])
            else:
                raw = acq.lexical_semantic.get(atom_id)
                sem = None if raw is None else cosine_from_neo4j(raw)
            # While the fulltext index is rebuilt nobody has a lexical signal: it is
            # missing (ACT-1), not 0, so the semantic signal ranks alone.
            lex = None if lexical_missing else lex_norm.get(atom_id, 0.0)
            m, missing = fuse_match(sem, lex)
            fused[atom_id] = (m, sem, lex, missing)
        order = acquisition_order(np.array([fused[a][0] for a in ids], dtype=np.float64))
        return [ids[int(i)] for i in order[: st.max_seeds] if fused[ids[int(i)]][0] > 0.0]

    acq = acquire(
        tx,
        service.db,
        subject=binding.subject,
        policy=binding.policy,
        model_id=model.id,
        text=text,
        embedding=embedding,
        semantic=lambda: None if hits is None else hits.result(),
        depth=depth,
        max_seeds=st.max_seeds,
        oversample=st.candidate_oversample,
        max_nodes=st.max_nodes,
        max_edges=st.max_edges,
        include_archived=include_archived,
        seeds_from=seeds_from,
        check_state=check_state,
        proximity=st.lexical_proximity,
    )
    hidden = {
        a
        for a, f in acq.facts.items()
        if not include_archived and (f.get("atomisedInto") or 0) > 0 and f.get("archivedAt")
    }
    atom_ids = [a for a in acq.facts if a not in hidden]
    index = {a: i for i, a in enumerate(atom_ids)}
    n = len(atom_ids)
    m = [fused[a][0] if a in fused else 0.0 for a in atom_ids]
    # Most nodes were never used: the model's value of the empty state is computed
    # once (value() is a function of its arguments, AV-1), not once per node.
    never_used = checked_value(model, {}, now)
    usage = [
        checked_value(model, _state(raw), now) if (raw := acq.facts[a].get("usage")) else never_used
        for a in atom_ids
    ]
    b = usage_boost(np.array(m, dtype=np.float64), np.array(usage, dtype=np.float64), st.beta)
    links = [(index[s], index[d], r) for s, d, r in acq.edges if s in index and d in index]
    src, dst, w = build_edges(n, links, propagation_table(st.role_weights))
    result = propagate(
        n,
        src,
        dst,
        w,
        b,
        propagation=st.propagation,
        tol=st.convergence_tol,
        max_work=st.evaluation_work,
    )
    missing = {a: fused[a][3] for a in atom_ids if a in fused and fused[a][3]}
    diagnostics = {
        "acquisition": {
            "candidates": len(fused),
            "semanticCandidates": len(acq.semantic),
            "lexicalCandidates": len(acq.lexical),
            "seeds": sum(1 for x in m if x > 0),
            "vectorMode": acq.vector_mode,
            "lexicalMode": acq.lexical_mode,
            "queryEmbedding": embedding() is not None,
            "missingSignals": missing,
            "lexicalNormalisation": "lucene score / max lucene score among candidates",
            "hiddenArchived": len(hidden),
            "evaluatedAt": now,
        },
        "evaluation": {
            **result.diagnostics(),
            "depth": depth,
            "levels": acq.levels,
            "truncated": acq.truncated,
            "propagation": st.propagation,
            "beta": st.beta,
            "usageModel": model.id,
        },
    }
    return Evaluation(
        query=text,
        evaluated_at=now,
        atom_ids=atom_ids,
        revs=[int(acq.facts[a]["rev"]) for a in atom_ids],
        m=m,
        semantic=[fused[a][1] if a in fused else None for a in atom_ids],
        lexical=[fused[a][2] if a in fused else None for a in atom_ids],
        usage=usage,
        b=[float(x) for x in b],
        scores=[float(x) for x in result.scores],
        candidates=len(fused),
        result=result,
        diagnostics=diagnostics,
    )


def _state(raw: str | None) -> dict[str, Any]:
    return json.loads(raw) if raw else {}
