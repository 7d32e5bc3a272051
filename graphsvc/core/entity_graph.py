"""Entities as intermediate nodes of the retrieval graph (SPEC §16, ENT-4): pure.

The retrieval graph of §5 has one node per candidate head. With the entity index,
every traversed entity becomes one more node, after the heads:

- a head that mentions entity ``e`` has an edge to ``e`` of weight ``entity_weight``
  (a declared link weighs its role's weight, 1 by default), so the head's row of
  ``T`` — normalised over its links *and* its entities, times ``propagation`` —
  gives its entities their share of what it spreads;
- ``e`` has an edge of weight 1 to each head in the graph that mentions it, and its
  row sums to ``entity_pass`` (default 1: an entity is a junction, not a document,
  so it passes on what reaches it rather than keeping it). Its row is normalised
  by its degree, so a head reaches another through ``e`` with ``1 / degree(e)`` of
  what ``e`` received: a common entity spreads thinly, and one mentioned by more
  than the configured maximum is not traversed at all (the store leaves it out);
- an entity the query names starts with base activation ``query_base``;
- an entity that one of the ``anchor_heads`` (the best-matching candidates) names,
  and another head of the graph names too, starts with ``anchor_weight`` × that
  anchor's base activation: pseudo-relevance feedback, so the heads that share a
  name with the best matches start level with a share of them, not only with what
  the matches pass on through their rows (an anchor's row is divided among all its
  links and entities, then by the entity's degree).

Every cycle of the graph passes through a head row (entities link only to heads),
whose sum is ``propagation < 1``, so ``a = b + Tᵀa`` still has one solution and the
fixed-point iteration converges. Entities are never hits: scores are normalised
over the heads alone (:func:`head_scores`), and :func:`entity_inflow` says how much
of each head's activation came through entities (the diagnostics' entity share).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from graphsvc.errors import InvalidInputError

__all__ = ["EntityGraph", "entity_graph", "entity_inflow", "head_scores"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class EntityGraph:
    """The retrieval graph with entity nodes: ``n`` nodes (heads first, then
    entities), edges, each row's sum, and the base activation of every node."""

    n: int
    n_heads: int
    src: IntArray
    dst: IntArray
    weight: FloatArray
    row_sums: FloatArray
    b: FloatArray
    # Entities seeded by an anchor (``anchor_heads``).
    anchored: int = 0


def entity_graph(
    n_heads: int,
    src: IntArray,
    dst: IntArray,
    weight: FloatArray,
    b: FloatArray,
    mentions: Sequence[tuple[int, int]],
    n_entities: int,
    *,
    propagation: float,
    entity_weight: float,
    entity_pass: float = 1.0,
    query_entities: Sequence[int] = (),
    query_base: float = 0.0,
    anchor_heads: Sequence[int] = (),
    anchor_weight: float = 0.0,
) -> EntityGraph:
    """Add ``n_entities`` entity nodes to a head graph (see the module's notes).

    Args:
        n_heads: head nodes ``0 … n_heads-1``; entity ``k`` becomes node ``n_heads + k``.
        src, dst, weight: the heads' link edges (:func:`graphsvc.core.activation.build_edges`).
        b: the heads' base activation.
        mentions: ``(entity k, head i)`` pairs: head ``i`` mentions entity ``k``.
        n_entities: number of entities.
        propagation: the heads' row sum (ACT-3).
        entity_weight: weight of a head's edge to an entity it mentions (≥ 0).
        entity_pass: an entity row's sum, in [0, 1].
        query_entities: the entities the query names.
        query_base: their base activation (≥ 0).
        anchor_heads: heads whose entities start with activation: each entity one of
            them mentions, and at least one other head does, starts with
            ``anchor_weight`` × the largest base activation among its anchors.
        anchor_weight: that factor (≥ 0; 0: no anchor seeds).

    Raises:
        InvalidInputError: a weight out of range or an index out of range.
    """
    for name, value in (
        ("entity_weight", entity_weight),
        ("query_base", query_base),
        ("anchor_weight", anchor_weight),
    ):
        if not np.isfinite(value) or value < 0.0:
            raise InvalidInputError(f"{name} must be finite and ≥ 0")
    if not 0.0 <= entity_pass <= 1.0:
        raise InvalidInputError("entity_pass must lie in [0, 1]")
    n = n_heads + n_entities
    pairs = _mention_pairs(mentions, n_heads, n_entities)
    ent = pairs[:, 0] + n_heads
    head = pairs[:, 1]
    keep = entity_weight > 0.0
    e_src = np.concatenate((head, ent)) if keep else ent
    e_dst = np.concatenate((ent, head)) if keep else head
    e_w = np.concatenate(
        (np.full(len(head), entity_weight), np.ones(len(ent))) if keep else (np.ones(len(ent)),)
    )
    rows = np.concatenate(
        (np.full(n_heads, propagation, dtype=np.float64), np.full(n_entities, entity_pass))
    )
    base = np.concatenate((np.asarray(b, dtype=np.float64), np.zeros(n_entities)))
    for k in query_entities:
        if not 0 <= k < n_entities:
            raise InvalidInputError("query entity index out of range")
        base[n_heads + k] = query_base
    anchored = _seed_anchor_entities(base, n_heads, pairs, anchor_heads, anchor_weight)
    return EntityGraph(
        n=n,
        n_heads=n_heads,
        src=np.concatenate((np.asarray(src, dtype=np.int64), e_src)),
        dst=np.concatenate((np.asarray(dst, dtype=np.int64), e_dst)),
        weight=np.concatenate((np.asarray(weight, dtype=np.float64), e_w)),
        row_sums=rows,
        b=base,
        anchored=anchored,
    )


def _mention_pairs(mentions: Sequence[tuple[int, int]], n_heads: int, n_entities: int) -> IntArray:
    """``(entity, head)`` pairs as an array, each index checked."""
    pairs = np.asarray(mentions, dtype=np.int64).reshape(-1, 2)
    if pairs.size and (
        pairs[:, 0].min() < 0
        or pairs[:, 0].max() >= n_entities
        or pairs[:, 1].min() < 0
        or pairs[:, 1].max() >= n_heads
    ):
        raise InvalidInputError("mention index out of range")
    return pairs


def _seed_anchor_entities(
    base: FloatArray, n_heads: int, pairs: IntArray, anchor_heads: Sequence[int], weight: float
) -> int:
    """Add ``weight`` × the best anchor's base activation to each entity an anchor
    mentions and another head does too (``base``: heads, then entities), and say how
    many. An entity only the anchor mentions would hand the anchor its own activation
    back: it leads nowhere, so it gets none."""
    if any(not 0 <= i < n_heads for i in anchor_heads):
        raise InvalidInputError("anchor head index out of range")
    n_entities = len(base) - n_heads
    if weight <= 0.0 or not len(anchor_heads) or not pairs.size:
        return 0
    anchors = np.asarray(anchor_heads, dtype=np.int64)
    degree = np.bincount(pairs[:, 0], minlength=n_entities)
    by_anchor = np.isin(pairs[:, 1], anchors) & (degree[pairs[:, 0]] >= 2)
    best = np.zeros(n_entities)
    np.maximum.at(best, pairs[by_anchor, 0], base[pairs[by_anchor, 1]])
    base[n_heads:] += weight * best
    return int(np.count_nonzero(best))


def head_scores(a: FloatArray, n_heads: int) -> FloatArray:
    """``a_i / Σ_heads a`` for the heads (entities are never hits, ENT-4)."""
    heads = np.asarray(a[:n_heads], dtype=np.float64)
    total = float(heads.sum())
    return heads / total if total > 0.0 else np.zeros_like(heads)


def entity_inflow(graph: EntityGraph, a: FloatArray) -> FloatArray:
    """Per head, the activation that reached it from entity nodes (``Σ_e T[e,i]·a_e``)."""
    n_heads = graph.n_heads
    from_entity = graph.src >= n_heads
    out_sum = np.bincount(graph.src, weights=graph.weight, minlength=graph.n)
    s = graph.src[from_entity]
    d = graph.dst[from_entity]
    t = graph.row_sums[s] * graph.weight[from_entity] / out_sum[s]
    inflow = np.bincount(d, weights=t * a[s], minlength=graph.n)[:n_heads]
    out: FloatArray = inflow.astype(np.float64)
    return out
