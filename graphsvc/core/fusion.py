"""Fusion of the two candidate signals (ACT-1, ACT-5): which lexical hits stay
candidates, each candidate's fused match, and the seeds of the retrieval graph.

Pure: it scores what the acquisition read (:class:`graphsvc.core.acquisition.Acquired`)
with the ranking settings as they are (:class:`graphsvc.settings.RankingSettings`)
and decides; the pipeline that reads is :mod:`graphsvc.ops.acquisition`. The lexical
score of a candidate is its BM25 with the subject's own statistics when the acquisition
brought them (:mod:`graphsvc.core.bm25`), else Lucene's score; normalised by the
largest among the candidates (``max``) or by the query's BM25 upper bound (``bound``).
A candidate without an embedding has its semantic signal *missing* and is ranked
lexically alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from graphsvc.core.acquisition import Acquired
from graphsvc.core.activation import (
    acquisition_order,
    cosine_from_neo4j,
    fuse_match,
    normalise_lexical,
    normalise_lexical_by,
)
from graphsvc.core.bm25 import query_terms, score_bodies

if TYPE_CHECKING:
    from graphsvc.settings import RankingSettings

__all__ = ["Fused", "Fusion", "fuse", "keep_lexical", "lexical_signal"]

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
    terms = query_terms(text, ranking.lexical_proximity)
    # Score the lexical hits (their texts came with them), or every candidate whose
    # body is known (a semantic candidate can match the query's words too).
    scored = [
        a
        for a in (ids if ranking.lexical_scope == "candidates" else acq.lexical)
        if acq.texts.get(a) is not None
    ]
    raw, bound = score_bodies(
        terms, [acq.texts[a] or "" for a in scored], stats, slop=ranking.lexical_proximity
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
    fused: Fused = {}
    ids = sorted(set(acq.semantic) | set(acq.lexical))
    lex_norm, normalisation = lexical_signal(acq, ids, text, ranking)
    lexical_missing = acq.lexical_mode == "rebuilding"
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
    seeds = [ids[int(i)] for i in order[: ranking.max_seeds] if fused[ids[int(i)]][0] > 0.0]
    return Fusion(fused, seeds, normalisation)
