"""Spreading activation: the one rule that ranks candidates (SPEC §5, ACT-1..7).

The pipeline, each step a pure function of its arguments (no database, no clock):

1. :func:`fuse_match` turns a candidate's semantic and lexical signals into ``m``
   (ACT-1); :func:`cosine_from_neo4j` and :func:`normalise_lexical` bring the raw
   index scores into the ranges it expects.
2. :func:`usage_boost` turns ``m`` and the availability value ``u`` into the base
   activation ``b`` (ACT-2). Usage never reorders acquisition (ACT-5):
   :func:`acquisition_order` looks at ``m`` only.
3. :func:`build_edges` expands links into forward and reverse edges weighted by a
   :class:`PropagationTable` (ACT-3, ACT-7).
4. :func:`propagate` solves ``a = b + Tᵀa`` with SciPy and returns an
   :class:`ActivationResult` whose ``scores`` sum to 1 (ACT-4) and whose
   diagnostics name the solver, iterations, residual and graph size (ACT-6).

**Entities as intermediate nodes** (SPEC §16, ENT-4; :func:`entity_graph`). With the
entity index, every traversed entity becomes one more node of the graph, after the
heads:

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

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, TypeVar

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from graphsvc.errors import InvalidInputError

__all__ = [
    "DEFAULT_BETA",
    "DEFAULT_DIRECT_MAX_NODES",
    "DEFAULT_MAX_WORK",
    "DEFAULT_PROPAGATION",
    "DEFAULT_TOL",
    "DEFAULT_W_LEX",
    "DEFAULT_W_SEM",
    "LINK_WEIGHTINGS",
    "ActivationResult",
    "EntityGraph",
    "PropagationTable",
    "RoleWeights",
    "acquisition_order",
    "build_edges",
    "cosine_from_neo4j",
    "entity_graph",
    "entity_inflow",
    "fuse_match",
    "fuse_matches",
    "head_scores",
    "neo4j_cosines",
    "normalise_lexical",
    "normalise_lexical_by",
    "propagate",
    "transition_matrix",
    "usage_boost",
]


FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
K = TypeVar("K")

DEFAULT_W_SEM: Final = 0.8
DEFAULT_W_LEX: Final = 0.2
DEFAULT_BETA: Final = 0.3
DEFAULT_PROPAGATION: Final = 0.5
DEFAULT_TOL: Final = 1e-6
DEFAULT_MAX_WORK: Final = 500_000
# SuperLU is exact but its fill-in on retrieval-like (random, expander-ish) graphs
# grows fast (docs/performance.md#activation-solve-vs-networkx). So only tiny graphs,
# where exactness costs well under a millisecond, take the direct path.
DEFAULT_DIRECT_MAX_NODES: Final = 64

SOLVER_DIRECT: Final = "spsolve"
SOLVER_ITERATIVE: Final = "fixed-point"
SOLVER_NONE: Final = "none"

# Cosines come out of float32 embeddings; a hair beyond ±1 is rounding, not input.
_COSINE_SLOP: Final = 1e-6


def _require_finite(name: str, value: float) -> float:
    out = float(value)
    if not math.isfinite(out):
        raise InvalidInputError(f"{name} must be finite, got {value!r}")
    return out


# --------------------------------------------------------------------------- match


def cosine_from_neo4j(score: float) -> float:
    """Convert a Neo4j vector-index score back to the cosine similarity.

    Neo4j's cosine vector index reports ``(1 + cos) / 2`` so that scores lie in
    ``[0, 1]``; ACT-1 is written in terms of the cosine itself.

    Args:
        score: the ``score`` column of ``db.index.vector.queryNodes``.

    Returns:
        ``2·score − 1``, clipped to ``[-1, 1]``.

    Raises:
        InvalidInputError: if ``score`` is not finite or lies outside ``[0, 1]``
            by more than float32 rounding.
    """
    s = _require_finite("vector score", score)
    if s < -_COSINE_SLOP or s > 1.0 + _COSINE_SLOP:
        raise InvalidInputError(f"vector score must lie in [0, 1], got {s}")
    return min(1.0, max(-1.0, 2.0 * s - 1.0))


def neo4j_cosines(query: Sequence[float], vectors: Sequence[Sequence[float]]) -> list[float | None]:
    """Neo4j's ``vector.similarity.cosine(query, v)`` for each ``v``, computed here.

    That is ``(1 + cos) / 2``, the form the vector index scores in (see
    :func:`cosine_from_neo4j`), in float64; None where either vector has no length
    (no direction, so no similarity), as Neo4j gives no score there, and where the
    lengths differ (another model's embedding, while ``graphsvc reembed`` runs).
    """
    out: list[float | None] = [None] * len(vectors)
    same = [i for i, v in enumerate(vectors) if len(v) == len(query)]
    if not same:
        return out
    q = np.asarray(query, dtype=np.float64)
    m = np.asarray([vectors[i] for i in same], dtype=np.float64)
    norms = np.linalg.norm(m, axis=1) * float(np.linalg.norm(q))
    dots = m @ q
    for i, d, n in zip(same, dots.tolist(), norms.tolist(), strict=True):
        out[i] = None if n == 0.0 else min(1.0, max(0.0, (1.0 + d / n) / 2.0))
    return out


def normalise_lexical(raw: Mapping[K, float]) -> dict[K, float]:
    """Bring Lucene fulltext scores into ``[0, 1]`` within one candidate set.

    Lucene (BM25) scores are unbounded and not comparable across queries, so the
    only scale they carry is relative to the other hits of the same query. We divide
    by the largest score of the set: the best lexical hit gets 1, the rest keep their
    ratio to it, and a set without any positive score normalises to all zeros.
    (Min-max scaling was rejected: it would push the weakest real hit to 0, i.e.
    make it look like no lexical match at all.)

    Args:
        raw: candidate key → raw fulltext score (≥ 0).

    Returns:
        A new dict with the same keys and scores in ``[0, 1]``; empty for empty input.

    Raises:
        InvalidInputError: if a score is negative or not finite.
    """
    if not raw:
        return {}
    keys = list(raw)
    values = np.fromiter((float(raw[k]) for k in keys), dtype=np.float64, count=len(keys))
    if not np.all(np.isfinite(values)) or np.any(values < 0.0):
        raise InvalidInputError("lexical scores must be finite and non-negative")
    top = float(values.max())
    if top == 0.0:
        return dict.fromkeys(keys, 0.0)
    scaled = values / top
    return dict(zip(keys, scaled.tolist(), strict=True))  # floats, not numpy scalars


def normalise_lexical_by(raw: Mapping[K, float], scale: float) -> dict[K, float]:
    """Bring fulltext scores into ``[0, 1]`` by a query-dependent scale that does not
    depend on the candidates (e.g. the query's BM25 upper bound): ``min(1, s / scale)``.

    Unlike :func:`normalise_lexical` the best hit gets 1 only when it matches the
    query fully; a weak best match stays weak.

    Raises:
        InvalidInputError: a negative or non-finite score, or a scale that is not positive.
    """
    if not math.isfinite(scale) or scale <= 0.0:
        raise InvalidInputError("lexical scale must be positive and finite")
    out: dict[K, float] = {}
    for k, v in raw.items():
        x = float(v)
        if not math.isfinite(x) or x < 0.0:
            raise InvalidInputError("lexical scores must be finite and non-negative")
        out[k] = min(1.0, x / scale)
    return out


def fuse_match(
    semantic: float | None,
    lexical: float | None,
    w_sem: float = DEFAULT_W_SEM,
    w_lex: float = DEFAULT_W_LEX,
) -> tuple[float, list[str]]:
    """Fuse a candidate's match signals into ``m`` (ACT-1).

    ``m = (w_sem·semantic + w_lex·lexical) / (w_sem + w_lex)`` over the signals that
    are present: a missing signal drops out and the weights renormalise to the
    present one (so with the defaults, a missing embedding leaves lexical alone with
    weight 1). If every present signal has weight 0, or none is present, ``m = 0``.
    A negative cosine can pull the sum below zero; ``m`` is clipped at 0 because the
    solver needs non-negative activation and "dissimilar" carries no more evidence
    than "no match".

    Args:
        semantic: cosine similarity in ``[-1, 1]``, or ``None`` if the query or the
            atom has no embedding.
        lexical: normalised fulltext score in ``[0, 1]`` (see
            :func:`normalise_lexical`), or ``None`` if the atom was no fulltext hit.
        w_sem: weight of the semantic signal (≥ 0).
        w_lex: weight of the lexical signal (≥ 0).

    Returns:
        ``(m, missing)``: ``m`` in ``[0, 1]`` and the names of the missing signals
        (``"semantic"``, ``"lexical"``) for the diagnostics.

    Raises:
        InvalidInputError: if a signal or weight is not finite or out of range.
    """
    ws = _require_finite("w_sem", w_sem)
    wl = _require_finite("w_lex", w_lex)
    if ws < 0.0 or wl < 0.0:
        raise InvalidInputError("match weights must be non-negative")
    missing: list[str] = []
    num = 0.0
    den = 0.0
    if semantic is None:
        missing.append("semantic")
    else:
        s = _require_finite("semantic", semantic)
        if abs(s) > 1.0 + _COSINE_SLOP:
            raise InvalidInputError(f"semantic must lie in [-1, 1], got {s}")
        num += ws * min(1.0, max(-1.0, s))
        den += ws
    if lexical is None:
        missing.append("lexical")
    else:
        lx = _require_finite("lexical", lexical)
        if lx < 0.0 or lx > 1.0 + _COSINE_SLOP:
            raise InvalidInputError(f"lexical must lie in [0, 1], got {lx}")
        num += wl * min(1.0, lx)
        den += wl
    if den == 0.0:
        return 0.0, missing
    return min(1.0, max(0.0, num / den)), missing


def fuse_matches(
    vector_scores: Sequence[float | None],
    lexical: Sequence[float | None],
    w_sem: float = DEFAULT_W_SEM,
    w_lex: float = DEFAULT_W_LEX,
) -> tuple[FloatArray, FloatArray, list[list[str]]]:
    """:func:`cosine_from_neo4j` and :func:`fuse_match` of many candidates at once.

    Each element takes the same IEEE double operations in the same order as the
    scalar functions (``num = 0 + w·s (+ w·l)``, ``den = 0 + w (+ w)``, the same
    clips), so ``m`` and the cosines are the scalar ones bit for bit
    (tests/unit/test_activation.py); only the Python loop per candidate is gone.

    Args:
        vector_scores: Neo4j vector scores ``(1 + cos) / 2`` per candidate, or
            ``None`` where the candidate has no semantic signal.
        lexical: normalised lexical signals in ``[0, 1]``, or ``None`` where missing.
        w_sem: weight of the semantic signal (≥ 0).
        w_lex: weight of the lexical signal (≥ 0).

    Returns:
        ``(m, cosines, missing)``: ``m`` per candidate, the cosines (NaN where
        missing) and the names of each candidate's missing signals.

    Raises:
        InvalidInputError: if a score, signal or weight is not finite or out of
            range (as the scalar functions say).
    """
    ws = _require_finite("w_sem", w_sem)
    wl = _require_finite("w_lex", w_lex)
    if ws < 0.0 or wl < 0.0:
        raise InvalidInputError("match weights must be non-negative")
    raw = np.array([np.nan if v is None else v for v in vector_scores], dtype=np.float64)
    lex = np.array([np.nan if v is None else v for v in lexical], dtype=np.float64)
    has_sem = np.array([v is not None for v in vector_scores], dtype=bool)
    has_lex = np.array([v is not None for v in lexical], dtype=bool)
    if not np.all(np.isfinite(raw[has_sem])):
        raise InvalidInputError("vector score must be finite")
    if not np.all(np.isfinite(lex[has_lex])):
        raise InvalidInputError("lexical must be finite")
    if np.any((raw[has_sem] < -_COSINE_SLOP) | (raw[has_sem] > 1.0 + _COSINE_SLOP)):
        raise InvalidInputError("vector score must lie in [0, 1]")
    if np.any((lex[has_lex] < 0.0) | (lex[has_lex] > 1.0 + _COSINE_SLOP)):
        raise InvalidInputError("lexical must lie in [0, 1]")
    cos = np.minimum(1.0, np.maximum(-1.0, 2.0 * raw - 1.0))
    num = np.zeros(len(raw))
    den = np.zeros(len(raw))
    num = np.where(has_sem, num + ws * np.minimum(1.0, np.maximum(-1.0, cos)), num)
    den = np.where(has_sem, den + ws, den)
    num = np.where(has_lex, num + wl * np.minimum(1.0, lex), num)
    den = np.where(has_lex, den + wl, den)
    live = den != 0.0
    m = np.where(live, np.minimum(1.0, np.maximum(0.0, num / np.where(live, den, 1.0))), 0.0)
    missing = [
        [name for name, absent in (("semantic", not s), ("lexical", not x)) if absent]
        for s, x in zip(has_sem.tolist(), has_lex.tolist(), strict=True)
    ]
    return m, cos, missing


def _as_float_vector(name: str, values: npt.ArrayLike) -> FloatArray:
    out = np.asarray(values, dtype=np.float64)
    if out.ndim != 1:
        raise InvalidInputError(f"{name} must be one-dimensional")
    if not np.all(np.isfinite(out)):
        raise InvalidInputError(f"{name} must be finite")
    return out


def usage_boost(m: npt.ArrayLike, u: npt.ArrayLike, beta: float = DEFAULT_BETA) -> FloatArray:
    """Base activation ``b = m·(1 + beta·u/(1 + u))`` (ACT-2), element-wise.

    ``u/(1+u)`` saturates at 1, so usage can lift a match by at most a factor
    ``1 + beta`` and never turns a non-match (``m = 0``) into activation.

    Args:
        m: match signals (≥ 0).
        u: availability values (≥ 0), same length as ``m``.
        beta: usage weight (≥ 0).

    Returns:
        ``b`` as a new float64 array.

    Raises:
        InvalidInputError: on negative or non-finite input, or mismatched lengths.
    """
    mv = _as_float_vector("m", m)
    uv = _as_float_vector("u", u)
    bt = _require_finite("beta", beta)
    if mv.shape != uv.shape:
        raise InvalidInputError("m and u must have the same length")
    if bt < 0.0 or np.any(mv < 0.0) or np.any(uv < 0.0):
        raise InvalidInputError("m, u and beta must be non-negative")
    return mv * (1.0 + bt * (uv / (1.0 + uv)))


def acquisition_order(m: npt.ArrayLike) -> IntArray:
    """Order in which candidates are acquired: by ``m`` descending, ties by index.

    It takes ``m`` only, so the usage factor cannot change it (ACT-5).

    Args:
        m: match signals, one per candidate.

    Returns:
        Candidate indices, best first (a stable sort, so equal ``m`` keep input order).

    Raises:
        InvalidInputError: if ``m`` is not a finite 1-D array.
    """
    mv = _as_float_vector("m", m)
    return np.argsort(-mv, kind="stable").astype(np.int64, copy=False)


# --------------------------------------------------------------------------- edges


@dataclass(frozen=True)
class RoleWeights:
    """How strongly a link of one role propagates, in each direction (ACT-3)."""

    forward: float = 1.0
    reverse: float = 1.0

    def __post_init__(self) -> None:
        for name in ("forward", "reverse"):
            v = getattr(self, name)
            if not math.isfinite(v) or v < 0.0:
                raise InvalidInputError(f"role weight {name} must be finite and ≥ 0, got {v}")


@dataclass(frozen=True)
class PropagationTable:
    """Role name → :class:`RoleWeights`; roles not listed use ``default`` (ACT-7).

    The core never reads meaning into a role name (CORE-4); this table is
    configuration, and the default treats every role alike.
    """

    roles: Mapping[str, RoleWeights] = field(default_factory=dict)
    default: RoleWeights = field(default_factory=RoleWeights)

    def __post_init__(self) -> None:
        # A private read-only copy: a caller mutating its dict must not change ranking.
        object.__setattr__(self, "roles", MappingProxyType(dict(self.roles)))

    def for_role(self, role: str) -> RoleWeights:
        """The weights of ``role``, or the default for an unlisted role."""
        return self.roles.get(role, self.default)

    def __getitem__(self, role: str) -> RoleWeights:
        return self.for_role(role)


LINK_WEIGHTINGS: Final = ("role", "out", "in", "sym")


def build_edges(
    n_nodes: int,
    links: Sequence[tuple[int, int, str]],
    table: PropagationTable | None = None,
    weighting: str = "role",
) -> tuple[IntArray, IntArray, FloatArray]:
    """Expand links into weighted directed edges of the retrieval graph (ACT-3, ACT-7).

    Link ``i→j`` of role ``r`` yields the forward edge ``i→j`` with weight
    ``table[r].forward`` and the reverse edge ``j→i`` with ``table[r].reverse``.
    Edges of weight 0 are dropped; parallel edges are kept (the matrix sums them).

    ``weighting`` divides each role weight by the fan of that role around the link,
    counted in ``links``: with ``fo`` the links of role ``r`` leaving ``i`` and ``fi``
    those reaching ``j``, ``"out"`` divides the forward edge by ``fo`` and the reverse
    one by ``fi`` (each role counts once in the row of the node that spreads), ``"in"``
    the forward one by ``fi`` and the reverse one by ``fo`` (a node reached by many
    links of one role gets one link's worth through them), ``"sym"`` both by
    ``√(fo·fi)``; ``"role"`` (ACT-7's default) leaves the role weights as they are.

    Args:
        n_nodes: number of nodes; node ids are ``0 … n_nodes-1``.
        links: ``(source, target, role)`` triples.
        table: role weights; ``None`` means every role weighs 1 both ways.
        weighting: ``role``, ``out``, ``in`` or ``sym``.

    Returns:
        ``(src, dst, weight)`` arrays of equal length.

    Raises:
        InvalidInputError: if a node id is out of range, or an unknown weighting.
    """
    if n_nodes < 0:
        raise InvalidInputError("n_nodes must be ≥ 0")
    if weighting not in LINK_WEIGHTINGS:
        raise InvalidInputError(f"link weighting must be one of {', '.join(LINK_WEIGHTINGS)}")
    tbl = table if table is not None else PropagationTable()
    if not links:
        return (np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.float64))
    heads, tails, roles = zip(*links, strict=True)
    src = np.asarray(heads, dtype=np.int64)
    dst = np.asarray(tails, dtype=np.int64)
    if src.min() < 0 or dst.min() < 0 or src.max() >= n_nodes or dst.max() >= n_nodes:
        raise InvalidInputError(f"link endpoint out of range 0..{n_nodes - 1}")
    # Look each distinct role up once; the per-link work stays in NumPy.
    codes: dict[str, int] = {}
    role_idx = np.fromiter(
        (codes.setdefault(r, len(codes)) for r in roles), dtype=np.int64, count=len(roles)
    )
    fwd = np.array([tbl.for_role(r).forward for r in codes], dtype=np.float64)
    rev = np.array([tbl.for_role(r).reverse for r in codes], dtype=np.float64)
    w_fwd, w_rev = fwd[role_idx], rev[role_idx]
    if weighting != "role":
        # Links of each role leaving each source (fo) and reaching each target (fi).
        k = len(codes)
        fo = np.bincount(src * k + role_idx, minlength=n_nodes * k)[src * k + role_idx]
        fi = np.bincount(dst * k + role_idx, minlength=n_nodes * k)[dst * k + role_idx]
        fo_f, fi_f = fo.astype(np.float64), fi.astype(np.float64)
        if weighting == "out":
            w_fwd, w_rev = w_fwd / fo_f, w_rev / fi_f
        elif weighting == "in":
            w_fwd, w_rev = w_fwd / fi_f, w_rev / fo_f
        else:
            both = np.sqrt(fo_f * fi_f)
            w_fwd, w_rev = w_fwd / both, w_rev / both
    all_src = np.concatenate((src, dst))
    all_dst = np.concatenate((dst, src))
    all_w = np.concatenate((w_fwd, w_rev))
    keep = all_w > 0.0
    return all_src[keep], all_dst[keep], all_w[keep]


# --------------------------------------------------------------------------- solve


def _check_graph(
    n: int, src: npt.ArrayLike, dst: npt.ArrayLike, weight: npt.ArrayLike, propagation: float
) -> tuple[IntArray, IntArray, FloatArray, float]:
    if n < 0:
        raise InvalidInputError("n must be ≥ 0")
    p = _require_finite("propagation", propagation)
    if not 0.0 <= p < 1.0:
        raise InvalidInputError(f"propagation must satisfy 0 ≤ p < 1, got {p}")
    s = np.asarray(src, dtype=np.int64).ravel()
    d = np.asarray(dst, dtype=np.int64).ravel()
    w = _as_float_vector("weight", np.asarray(weight).ravel())
    if not s.shape == d.shape == w.shape:
        raise InvalidInputError("src, dst and weight must have the same length")
    if s.size and (min(s.min(), d.min()) < 0 or max(s.max(), d.max()) >= n):
        raise InvalidInputError(f"edge endpoint out of range 0..{n - 1}")
    if np.any(w < 0.0):
        raise InvalidInputError("edge weights must be non-negative")
    return s, d, w, p


def _scaled_weights(
    n: int, s: IntArray, w: FloatArray, p: float, rows: FloatArray | None = None
) -> FloatArray:
    # Row i of T is p · w(i→·) / Σ w(i→·); a row without weight stays zero rather
    # than dividing by zero, so a sink keeps its activation instead of spreading it.
    # ``rows`` gives each row its own sum instead of p (entity nodes, ENT-4).
    out_sum = np.bincount(s, weights=w, minlength=n)
    # Divide once per node, not once per edge: the per-edge work is one gather.
    scale = np.zeros(n, dtype=np.float64)
    np.divide(p if rows is None else rows, out_sum, out=scale, where=out_sum > 0.0)
    scaled: FloatArray = w * scale[s]
    return scaled


def _csr(n: int, rows: IntArray, cols: IntArray, data: FloatArray) -> sp.csr_matrix:
    # COO→CSR is a counting sort in C and already sums parallel edges.
    mat = sp.coo_matrix((data, (rows, cols)), shape=(n, n), dtype=np.float64).tocsr()
    if data.size and not np.all(data > 0.0):
        # Zero entries carry nothing; dropping them keeps the reported edge count honest.
        mat.eliminate_zeros()
    return mat


def transition_matrix(
    n: int,
    src: npt.ArrayLike,
    dst: npt.ArrayLike,
    weight: npt.ArrayLike,
    propagation: float = DEFAULT_PROPAGATION,
) -> sp.csr_matrix:
    """The propagation matrix ``T`` of ACT-3 as an ``n×n`` CSR matrix.

    ``T[i, j] = propagation · w(i→j) / Σ_k w(i→k)``; a node with no out-edges has a
    zero row. Parallel edges are summed.

    Args:
        n: number of nodes.
        src: edge sources.
        dst: edge targets.
        weight: edge weights (≥ 0).
        propagation: row sum of every non-empty row, ``0 ≤ p < 1``.

    Returns:
        ``T`` as ``scipy.sparse.csr_matrix``.

    Raises:
        InvalidInputError: on bad propagation, weights, or node ids.
    """
    s, d, w, p = _check_graph(n, src, dst, weight, propagation)
    return _csr(n, s, d, _scaled_weights(n, s, w, p))


@dataclass(frozen=True, eq=False)
class ActivationResult:
    """Outcome of one evaluation (ACT-4, ACT-6).

    Attributes:
        a: raw activation, the solution of ``a = b + Tᵀa``.
        scores: ``a / Σa`` (all zero when ``Σa = 0``); relative, never a probability.
        solver: ``"spsolve"`` (SuperLU), ``"fixed-point"`` or ``"none"`` (empty graph).
        iterations: fixed-point iterations run (1 for the direct solve).
        residual: ``‖a − b − Tᵀa‖₁ / ‖a‖₁`` of the returned ``a`` (0 when ``a = 0``).
        converged: ``residual ≤ tol``; ``False`` when the work limit stopped the solver.
        nodes: number of nodes.
        edges: stored entries of ``T`` (parallel edges counted once).
        work: multiply-adds charged against the work limit.
    """

    a: FloatArray
    scores: FloatArray
    solver: str
    iterations: int
    residual: float
    converged: bool
    nodes: int
    edges: int
    work: int = 0

    def diagnostics(self) -> dict[str, Any]:
        """JSON-safe diagnostics (ACT-6)."""
        return {
            "solver": self.solver,
            "iterations": self.iterations,
            "residual": self.residual,
            "converged": self.converged,
            "nodes": self.nodes,
            "edges": self.edges,
            "work": self.work,
        }


def _residual(a: FloatArray, b: FloatArray, tt: Any) -> float:
    norm = float(np.abs(a).sum())
    r = float(np.abs(a - b - tt @ a).sum())
    return r / norm if norm > 0.0 else r


def propagate(
    n: int,
    src: npt.ArrayLike,
    dst: npt.ArrayLike,
    weight: npt.ArrayLike,
    b: npt.ArrayLike,
    *,
    propagation: float = DEFAULT_PROPAGATION,
    tol: float = DEFAULT_TOL,
    max_work: int = DEFAULT_MAX_WORK,
    direct_max_nodes: int = DEFAULT_DIRECT_MAX_NODES,
    row_sums: npt.ArrayLike | None = None,
) -> ActivationResult:
    """Solve ``a = b + Tᵀa`` and normalise to scores (ACT-3, ACT-4, ACT-6).

    Graphs of at most ``direct_max_nodes`` nodes, whose direct solve fits in the work
    limit, are solved exactly by SuperLU (``spsolve`` on ``I − Tᵀ``). Others use the
    fixed-point iteration ``a ← b + Tᵀa`` from ``a = b``: every non-empty row of ``T``
    sums to ``p``, so ``‖Tᵀ‖₁ ≤ p < 1`` and the error shrinks by at least ``p`` per
    step. The iteration stops once ``‖a − b − Tᵀa‖₁ / ‖a‖₁ ≤ tol`` (ACT-7) or when
    the next step would exceed ``max_work``; the latter reports ``converged=False``
    with the true residual of the returned iterate.

    Work is counted in multiply-adds: ``nnz(T) + n`` per iteration; the direct solve
    is charged the same amount once, because it is only chosen where SuperLU's
    fill-in is small. Computing the final residual is not charged.

    Args:
        n: number of nodes.
        src: edge sources (node ids).
        dst: edge targets (node ids).
        weight: edge weights (≥ 0), e.g. from :func:`build_edges`.
        b: base activation per node (≥ 0), e.g. from :func:`usage_boost`.
        propagation: ``0 ≤ p < 1``.
        tol: convergence target on the normalised L1 residual, ``1e-14 ≤ tol < 1``.
        max_work: evaluation work limit (multiply-adds), ≥ 0.
        direct_max_nodes: largest graph handed to the direct solver.
        row_sums: each node's row sum instead of ``propagation`` (None: §5 as
            written). The entity index's intermediate nodes pass on what reaches
            them (:mod:`graphsvc.core.activation`); every value lies in [0, 1] and
            the caller keeps every cycle through a row below 1, so the solve converges.

    Returns:
        An :class:`ActivationResult`.

    Raises:
        InvalidInputError: on bad propagation, tolerance, work limit, weights, node
            ids, or a ``b`` that is negative, non-finite, or of the wrong length.
    """
    s, d, w, p = _check_graph(n, src, dst, weight, propagation)
    bv, t, rows = _check_solve(n, b, tol, max_work, row_sums)

    if n == 0:
        empty = np.empty(0, np.float64)
        return ActivationResult(empty, empty.copy(), SOLVER_NONE, 0, 0.0, True, 0, 0, 0)

    if not s.size and n <= direct_max_nodes and n <= max_work:
        # No link: I − Tᵀ is I, and SuperLU's solve of it gives b itself, bit for bit
        # (tests/unit/test_activation.py), with no residual; building the sparse
        # system and solving it was most of the propagation's CPU on such a graph.
        return _result(bv.copy(), SOLVER_DIRECT, 1, 0.0, True, n, 0, n)

    # Build Tᵀ directly (rows = targets): the solve only ever needs Tᵀ·x.
    tt = _csr(n, d, s, _scaled_weights(n, s, w, p, rows))
    nnz = int(tt.nnz)
    step = nnz + n

    if n <= direct_max_nodes and step <= max_work:
        system = (sp.identity(n, dtype=np.float64, format="csc") - tt.tocsc()).tocsc()
        a = np.asarray(spla.spsolve(system, bv), dtype=np.float64).reshape(n)
        res = _residual(a, bv, tt)
        return _result(a, SOLVER_DIRECT, 1, res, res <= t, n, nnz, step)

    return _iterate(tt, bv, t, max_work)


def _check_solve(
    n: int, b: npt.ArrayLike, tol: float, max_work: int, row_sums: npt.ArrayLike | None
) -> tuple[FloatArray, float, FloatArray | None]:
    """``b``, ``tol`` and ``row_sums`` as checked values (see :func:`propagate`).

    Raises:
        InvalidInputError: one of them, or ``max_work``, is out of range.
    """
    bv = _as_float_vector("b", b)
    if bv.shape != (n,):
        raise InvalidInputError(f"b must have length n={n}, got {bv.shape[0]}")
    if np.any(bv < 0.0):
        raise InvalidInputError("b must be non-negative")
    t = _require_finite("tol", tol)
    # Below ~1e-14 float64 rounding can keep the residual above tol forever.
    if not 1e-14 <= t < 1.0:
        raise InvalidInputError(f"tol must satisfy 1e-14 ≤ tol < 1, got {t}")
    if max_work < 0:
        raise InvalidInputError("max_work must be ≥ 0")
    rows: FloatArray | None = None
    if row_sums is not None:
        rows = _as_float_vector("row_sums", row_sums)
        if rows.shape != (n,) or np.any(rows < 0.0) or np.any(rows > 1.0):
            raise InvalidInputError("row_sums must hold n values in [0, 1]")
    return bv, t, rows


def _iterate(tt: sp.csr_matrix, bv: FloatArray, t: float, max_work: int) -> ActivationResult:
    """The fixed-point iteration ``a ← b + Tᵀa`` from ``a = b`` (see :func:`propagate`)."""
    n, nnz = bv.shape[0], int(tt.nnz)
    step = nnz + n
    a = bv.copy()
    work = 0
    iterations = 0
    while work + step <= max_work:
        nxt = tt @ a
        nxt += bv
        work += step
        # ‖(b + Tᵀa) − a‖₁ is exactly the residual of the current iterate, and
        # a ≥ 0 throughout, so its plain sum is ‖a‖₁.
        norm = float(a.sum())
        diff = float(np.abs(nxt - a).sum())
        res = diff / norm if norm > 0.0 else diff
        if res <= t:
            return _result(a, SOLVER_ITERATIVE, iterations, res, True, n, nnz, work)
        a = nxt
        iterations += 1
    # Stopped by the work limit: report the honest residual of what we return.
    res = _residual(a, bv, tt)
    return _result(a, SOLVER_ITERATIVE, iterations, res, False, n, nnz, work)


def _result(
    a: FloatArray,
    solver: str,
    iterations: int,
    residual: float,
    converged: bool,
    nodes: int,
    edges: int,
    work: int,
) -> ActivationResult:
    total = float(a.sum())
    scores = a / total if total > 0.0 else np.zeros_like(a)
    return ActivationResult(
        a=a,
        scores=scores,
        solver=solver,
        iterations=iterations,
        residual=float(residual),
        converged=bool(converged),
        nodes=nodes,
        edges=edges,
        work=work,
    )


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
