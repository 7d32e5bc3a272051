"""What one acquisition admits: candidates, their fusion into seeds, the retrieval graph
within its caps, and the facts of its nodes (ACT-1, ACT-3, ACT-5, ENT-4, AV-3).

Pure: the reads that bring these rows are :mod:`graphsvc.store.retrieval` (or the
mirror, :mod:`graphsvc.core.head_mirror`); :mod:`graphsvc.ops.acquisition` runs them in
order and hands their rows to the functions here.

**Fusion** (:func:`fuse`, :func:`keep_lexical`): which lexical hits stay, the fused
match of every candidate (ACT-1: semantic and lexical signals, the lexical one the
subject's own BM25 of :mod:`graphsvc.core.bm25`) and the seeds, taken by match alone
(ACT-5).

**The walk** The walk is a BFS over current links
from the seeds; whatever fetches the levels (one or two per round trip, a frontier in
halves), edges are examined here level by level in frontier order, so the node and
edge caps admit the same nodes and edges as a one-level-at-a-time walk.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from graphsvc.core.activation import (
    acquisition_order,
    fuse_matches,
    neo4j_cosines,
    normalise_lexical,
    normalise_lexical_by,
)
from graphsvc.core.bm25 import SubjectStats, query_terms, score_bodies

if TYPE_CHECKING:
    from graphsvc.settings import RankingSettings

__all__ = [
    "Acquired",
    "EdgeRow",
    "EntityHop",
    "FulltextHit",
    "Fused",
    "Fusion",
    "HeadFacts",
    "SimilarRow",
    "Usage",
    "Walk",
    "admit_entities",
    "admit_level",
    "admit_similar",
    "covered_by",
    "fuse",
    "has_word",
    "keep_lexical",
    "lexical_semantic",
    "lexical_signal",
    "node_facts",
    "take_lexical",
]


# atomId -> {rev, atomisedInto, archivedAt} of its current head, gathered from the
# candidate and expansion rows themselves (no per-node lookup afterwards).
HeadFacts = dict[str, dict[str, Any]]
# A row of search/expand_level's edges: [src, dst, role, node, rev, into, arch]
# (node: the end that is not the frontier atom, with its head's facts).
EdgeRow = Sequence[Any]
# A row of search/fulltext_candidates' hits: [atomId, rev, score, into, arch,
# embedding (None: not fetched or none), body].
FulltextHit = Sequence[Any]


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
    # The subject's own BM25 of candidates' bodies and the query's bound, where the
    # source scored them already with those statistics (the head mirror scores every
    # body it holds): what score_bodies would give, bit for bit; None: scored here.
    body_scores: dict[str, float] | None = None
    lexical_bound: float = 0.0
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


@dataclass(frozen=True)
class EntityHop:
    """The answer of search/entity_hop: each seed's (atomId, reached by the index,
    entity keys) and each traversed entity's (key, named by the query, heads as
    [atomId, rev, into, arch])."""

    seeds: list[Sequence[Any]]
    entities: list[Sequence[Any]]


@dataclass(frozen=True)
class SimilarRow:
    """One seed's most similar heads (search/similar_heads), each [atomId, rev, into, arch]."""

    aid: str
    near: list[Sequence[Any]]


@dataclass
class Usage:
    """The caller's usage states (AV-3) gathered with the retrieval graph."""

    policy: str
    model_id: str
    states: dict[tuple[str, int], str] = field(default_factory=dict)  # (atomId, rev) -> state
    covered: set[str] = field(default_factory=set)  # atoms whose states were asked for


@dataclass
class Walk:
    """The retrieval graph as the BFS admitted it so far."""

    nodes: dict[str, None]  # admitted atoms, in admission order
    frontier: list[str]
    edges: set[tuple[str, str, str]] = field(default_factory=set)
    truncated: bool = False
    levels: int = 0

    @classmethod
    def from_seeds(cls, seeds: Sequence[str]) -> Walk:
        return cls(dict.fromkeys(seeds), list(seeds))


def has_word(text: str) -> bool:
    """Whether ``text`` has a letter or digit (else Lucene's analyzer finds no term)."""
    return any(ch.isalnum() for ch in text)


def take_lexical(
    acq: Acquired,
    head_facts: HeadFacts,
    hits: Iterable[FulltextHit],
    limit: int,
    embedded: int,
) -> None:
    """Take the subject's top ``limit`` fulltext hits into ``acq`` (score, then atomId).

    The query fetched the embedding of every hit that can be in Lucene's top
    ``embedded`` (ties at its edge included): those scoring at least the edge. The rest
    of the pool has none yet (the caller fetches what it keeps)."""
    ordered = sorted(hits, key=lambda h: (-float(h[2]), h[0]))
    edge = float(ordered[embedded - 1][2]) if len(ordered) > embedded else None
    for atom_id, rev, score, into, arch, vector, body in ordered[:limit]:
        acq.lexical[atom_id] = float(score)
        head_facts[atom_id] = {"rev": rev, "atomisedInto": into, "archivedAt": arch}
        if edge is None or float(score) >= edge:
            acq.lexical_embeddings[atom_id] = vector
        acq.texts[atom_id] = body


def lexical_semantic(acq: Acquired, query: list[float]) -> None:
    """The semantic signal of every lexical candidate (most are not vector hits),
    from the embeddings that came with the fulltext rows. A head without an
    embedding gets no signal (it is ranked lexically, ACT-1).
    """
    known = [a for a in acq.lexical if acq.lexical_embeddings.get(a) is not None]
    scores = neo4j_cosines(query, [acq.lexical_embeddings[a] or [] for a in known])
    for atom_id, score in zip(known, scores, strict=True):
        if score is not None:
            acq.lexical_semantic[atom_id] = score


def admit_level(
    walk: Walk,
    head_facts: HeadFacts,
    edges_of: Mapping[str, Iterable[EdgeRow]],
    max_nodes: int,
    max_edges: int,
) -> None:
    """Examine the edges of the frontier's atoms, in frontier order, within the caps;
    the atoms first admitted become the next frontier."""
    nodes, seen_edges = walk.nodes, walk.edges
    nxt: list[str] = []
    # The hottest loop of a read (~1,000 edges per level at 100k atoms): no
    # per-edge allocation beyond the edge key.
    for atom_id in walk.frontier:
        for src, dst, role, node, rev, into, arch in edges_of.get(atom_id, ()):
            if node not in head_facts:
                head_facts[node] = {"rev": rev, "atomisedInto": into, "archivedAt": arch}
            edge = (src, dst, role)
            if edge in seen_edges:
                continue
            if len(seen_edges) >= max_edges:
                walk.truncated = True
                break
            for end in (src, dst):
                if end not in nodes:
                    if len(nodes) >= max_nodes:
                        walk.truncated = True
                    else:
                        nodes[end] = None
                        nxt.append(end)
            if src in nodes and dst in nodes:
                seen_edges.add(edge)
    walk.frontier = nxt


def covered_by(usage: Usage, *levels: Mapping[str, Iterable[EdgeRow]]) -> None:
    """Note that a two-level fetch brought the usage of every atom its rows name."""
    for edges_of in levels:
        usage.covered.update(edges_of)
        usage.covered.update(row[3] for edges in edges_of.values() for row in edges)


def admit_entities(
    acq: Acquired,
    head_facts: HeadFacts,
    nodes: dict[str, None],
    hop: EntityHop,
    max_nodes: int,
    max_edges: int,
) -> None:
    """Add the entities the seeds mention and the query names, and the heads that
    mention them, to the retrieval graph within the node and edge caps: the query's
    entities first, then each seed's in seed order (so the best seeds' neighbours are
    admitted first)."""
    acq.unindexed = sum(1 for _, indexed, _ in hop.seeds if not indexed)
    heads_of = {key: heads for key, _, heads in hop.entities}
    acq.query_entities = sorted(key for key, named, _ in hop.entities if named)
    order = list(dict.fromkeys([*acq.query_entities, *(k for s in hop.seeds for k in s[2])]))
    edges: list[tuple[str, str]] = []
    room = max_edges - len(acq.edges)
    # A hot loop (a few hundred mentions per search): the edge cap is checked once
    # per entity where the whole entity fits under it.
    for key in order:
        heads = heads_of.get(key, ())
        if len(edges) + len(heads) > room:
            heads = heads[: max(0, room - len(edges))]
            acq.truncated = True
        for atom_id, rev, into, arch in heads:
            if atom_id not in nodes:
                if len(nodes) >= max_nodes:
                    acq.truncated = True
                    continue
                nodes[atom_id] = None
                if atom_id not in head_facts:
                    head_facts[atom_id] = {"rev": rev, "atomisedInto": into, "archivedAt": arch}
            edges.append((key, atom_id))
    acq.entity_edges = edges


def admit_similar(
    acq: Acquired,
    head_facts: HeadFacts,
    nodes: dict[str, None],
    rows: Iterable[SimilarRow],
    max_nodes: int,
) -> None:
    """Add each seed's most similar heads to the retrieval graph within the node cap."""
    for row in rows:
        for atom_id, rev, into, arch in row.near:
            if atom_id not in nodes:
                if len(nodes) >= max_nodes:
                    acq.truncated = True
                    continue
                nodes[atom_id] = None
                head_facts.setdefault(
                    atom_id, {"rev": rev, "atomisedInto": into, "archivedAt": arch}
                )
            acq.similar_edges.append((row.aid, atom_id))


def node_facts(
    nodes: Iterable[str], head_facts: HeadFacts, usage: Usage
) -> dict[str, dict[str, Any]]:
    """The facts of every node of the walk, with its usage state under the policy
    (``head_facts``' own dicts, completed in place: each search makes its own)."""
    out: dict[str, dict[str, Any]] = {}
    states = usage.states
    for atom_id in nodes:
        facts = head_facts.get(atom_id)
        if facts is None:  # a seed always has facts; defensive for odd graphs
            continue
        facts["atomId"] = atom_id
        facts["usage"] = states.get((atom_id, facts["rev"]))
        out[atom_id] = facts
    return out


# atomId -> (match, semantic, lexical, missing signals) of a fused candidate.
Fused = dict[str, tuple[float, float | None, float | None, list[str]]]

LUCENE_MAX = "lucene score / max lucene score among candidates"
SUBJECT_BOUND = "subject BM25 / the query's BM25 upper bound"
SUBJECT_MAX = "subject BM25 / max subject BM25 among candidates"


@dataclass(frozen=True)
class Fusion:
    """The candidates' fused match, the seeds (best match first) and how the lexical
    signal was normalised (for the diagnostics)."""

    fused: Fused
    seeds: list[str]
    normalisation: str


def lexical_signal(
    acq: Acquired, ids: list[str], text: str, ranking: RankingSettings
) -> tuple[dict[str, float], str]:
    """Each candidate's normalised fulltext score (absent: 0), and how it was normalised."""
    stats = acq.subject_stats
    if stats is None:
        return normalise_lexical(acq.lexical), LUCENE_MAX
    # Score the lexical hits (their texts came with them), or every candidate whose
    # body is known (a semantic candidate can match the query's words too).
    scored = [
        a
        for a in (ids if ranking.lexical_scope == "candidates" else acq.lexical)
        if acq.texts.get(a) is not None
    ]
    known = acq.body_scores
    if known is not None and all(a in known for a in scored):
        by_id = {a: known[a] for a in scored}
        bound = acq.lexical_bound
    else:
        raw, bound = score_bodies(
            query_terms(text, ranking.lexical_proximity),
            [acq.texts[a] or "" for a in scored],
            stats,
            slop=ranking.lexical_proximity,
        )
        by_id = dict(zip(scored, raw, strict=True))
    if ranking.lexical_normalisation == "bound" and bound > 0:
        return normalise_lexical_by(by_id, bound), SUBJECT_BOUND
    return normalise_lexical(by_id), SUBJECT_MAX


def keep_lexical(acq: Acquired, text: str, ranking: RankingSettings) -> list[str]:
    """The lexical candidates: the best ``max_seeds`` of the pool of Lucene hits, by the
    subject's own BM25 when its statistics are there (so which hits are kept is the
    subject's own decision too), else in Lucene's order."""
    ids = list(acq.lexical)  # Lucene's order (score, then atomId)
    if acq.subject_stats is None or len(ids) <= ranking.max_seeds:
        return ids[: ranking.max_seeds]
    scored = [a for a in ids if acq.texts.get(a) is not None]
    raw, _ = score_bodies(
        query_terms(text, ranking.lexical_proximity),
        [acq.texts[a] or "" for a in scored],
        acq.subject_stats,
        slop=ranking.lexical_proximity,
    )
    order = sorted(zip(scored, raw, strict=True), key=lambda x: (-x[1], x[0]))
    return [a for a, _ in order[: ranking.max_seeds]]


def fuse(acq: Acquired, text: str, ranking: RankingSettings) -> Fusion:
    """Fuse every candidate's signals; the seeds are the best ``max_seeds`` by match
    (:func:`graphsvc.core.activation.acquisition_order`) with a positive match."""
    ids = sorted(set(acq.semantic) | set(acq.lexical))
    lex_norm, normalisation = lexical_signal(acq, ids, text, ranking)
    # While the fulltext index is rebuilt nobody has a lexical signal: it is
    # missing (ACT-1), not 0, so the semantic signal ranks alone.
    lexical_missing = acq.lexical_mode == "rebuilding"
    scores = [acq.semantic[a] if a in acq.semantic else acq.lexical_semantic.get(a) for a in ids]
    lexical = [None if lexical_missing else lex_norm.get(a, 0.0) for a in ids]
    m, cosines, missing = fuse_matches(scores, lexical)
    fused: Fused = {
        atom_id: (match, None if score is None else cosine, lex, gone)
        for atom_id, match, cosine, score, lex, gone in zip(
            ids, m.tolist(), cosines.tolist(), scores, lexical, missing, strict=True
        )
    }
    order = acquisition_order(m)
    seeds = [ids[int(i)] for i in order[: ranking.max_seeds] if m[int(i)] > 0.0]
    return Fusion(fused, seeds, normalisation)
