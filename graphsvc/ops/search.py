"""``search`` (SPEC §5, RD-3): ranked atoms with score and breakdown, paged by cursor.

A search never changes bodies, links or usage (CORE-2, AV-4); the only thing it
may store is the frozen evaluation behind a cursor (auxiliary state).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphsvc.core.binding import Binding
from graphsvc.core.match_floor import is_weak_match
from graphsvc.core.requests import SearchRequest
from graphsvc.core.write_models import AtomRef, AtomView
from graphsvc.errors import InvalidInputError
from graphsvc.ops.cursors import CursorLimits, Pager, digest
from graphsvc.ops.evaluate import Evaluation, evaluate_then
from graphsvc.ops.ranked_rows import RankedRow, ScoreBreakdown
from graphsvc.settings import RankingSettings, fill
from graphsvc.store.connection import Database, Tx
from graphsvc.store.views import load_views

if TYPE_CHECKING:
    from graphsvc.embed import Embedder
    from graphsvc.settings import Settings

__all__ = ["SearchHit", "SearchLimits", "SearchResult", "search"]


@dataclass(frozen=True)
class SearchLimits:
    """The settings ``search`` reads."""

    depth: int
    search_limit: int
    max_limit: int
    ranking: RankingSettings
    cursors: CursorLimits

    @classmethod
    @functools.lru_cache(maxsize=16)  # one Settings per process; built once, not per call
    def from_settings(cls, settings: Settings) -> SearchLimits:
        return fill(
            cls,
            settings.read,
            ranking=settings.ranking,
            cursors=CursorLimits.from_settings(settings),
        )


@dataclass(frozen=True)
class SearchHit:
    atom: AtomView
    score: float
    breakdown: ScoreBreakdown

    @property
    def weak(self) -> bool:
        """Its text matches the query far below the best possible match
        (:mod:`graphsvc.core.match_floor`)."""
        return is_weak_match(self.breakdown)


@dataclass(frozen=True)
class SearchResult:
    hits: list[SearchHit]
    diagnostics: dict[str, Any]
    cursor: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "hits": [
                {
                    "atom": h.atom.to_json(),
                    "score": h.score,
                    "scoreBreakdown": h.breakdown,
                    "weak": h.weak,
                }
                for h in self.hits
            ],
            "diagnostics": self.diagnostics,
            "cursor": self.cursor,
        }


def search(
    db: Database,
    embedder: Embedder,
    secret: bytes,
    clock: Callable[[], float],
    limits: SearchLimits,
    binding: Binding,
    request: SearchRequest,
) -> SearchResult:
    """Rank the subject's atoms for ``request.query``.

    Args:
        db: the store.
        embedder: embeds the query.
        secret: the server secret (signs cursors).
        clock: epoch seconds.
        limits: the settings a search reads.
        binding: the caller.
        request: the query and its options.

    Raises:
        InvalidInputError: empty query, or depth/limit out of range.
        PurgePendingError: a purge in the subject has not finished.
        CursorExpiredError: the cursor no longer matches (CUR-2).
    """
    asked = _Asked.of(request, limits)
    qhash = digest(["search", asked.query, asked.depth, asked.limit, asked.include_archived])
    pager = Pager(db, secret, clock, limits.cursors, embedder.model_name)
    if request.cursor:
        found = _later_page(pager, binding, request.cursor, qhash, asked.limit)
    else:
        found = _first_page(db, embedder, clock, limits.ranking, binding, asked)
    hits = [
        SearchHit(found.views[ref], r["score"], r["breakdown"])
        for r in found.ranked[found.offset : found.offset + asked.limit]
        if (ref := AtomRef(r["atomId"], r["rev"])) in found.views
    ]
    return SearchResult(
        hits=hits,
        diagnostics={
            **found.diagnostics,
            "page": {"offset": found.offset, "total": len(found.ranked)},
        },
        cursor=_next_page(pager, binding, qhash, found, asked.limit) if request.paged else None,
    )


@dataclass(frozen=True)
class _Asked:
    """A search request with the settings' defaults filled in and checked."""

    query: str
    depth: int
    limit: int
    include_archived: bool
    paged: bool

    @classmethod
    def of(cls, request: SearchRequest, limits: SearchLimits) -> _Asked:
        limit = limits.search_limit if request.limit is None else request.limit
        if not request.query.strip() or len(request.query) > 10_000:
            raise InvalidInputError("query must be 1..10000 characters of text")
        if not 1 <= limit <= limits.max_limit:
            raise InvalidInputError(f"limit must be in 1..{limits.max_limit}")
        return cls(
            query=request.query,
            depth=limits.depth if request.depth is None else request.depth,
            limit=limit,
            include_archived=request.include_archived,
            paged=request.paged,
        )


@dataclass(frozen=True)
class _Page:
    """One page's evaluation (ranked rows) and the views of its atoms."""

    ranked: list[RankedRow]
    views: dict[AtomRef, AtomView]
    diagnostics: dict[str, Any]
    generation: str
    offset: int = 0
    eval_id: str = ""  # "" on a first page: its evaluation is not stored yet
    expires: float = 0.0


def _later_page(pager: Pager, binding: Binding, cursor: str, qhash: str, limit: int) -> _Page:
    # A later page skips the evaluation and its purge check (LNK-6).
    generation = pager.checked_generation(binding.subject)
    opened = pager.open_cursor(binding, "search", cursor, qhash, generation)
    ranked, offset = opened.payload["ranked"], opened.offset
    page = ranked[offset : offset + limit]
    views = load_views(pager.db, binding.subject, (AtomRef(r["atomId"], r["rev"]) for r in page))
    diagnostics = opened.payload["diagnostics"]
    return _Page(ranked, views, diagnostics, generation, offset, opened.eval_id, opened.expires)


def _first_page(
    db: Database,
    embedder: Embedder,
    clock: Callable[[], float],
    ranking: RankingSettings,
    binding: Binding,
    asked: _Asked,
) -> _Page:
    def then(tx: Tx, ev: Evaluation) -> tuple[list[RankedRow], dict[AtomRef, AtomView]]:
        # A stored evaluation serves every later page: all rows need their breakdown.
        ranked = ev.ranked_rows(breakdowns=-1 if asked.paged else asked.limit)
        refs = (AtomRef(r["atomId"], r["rev"]) for r in ranked[: asked.limit])
        return ranked, load_views(db, binding.subject, refs, tx=tx, mirror=ev.mirror)

    ev, (ranked, views) = evaluate_then(
        db,
        embedder,
        clock,
        ranking,
        binding,
        asked.query,
        depth=asked.depth,
        include_archived=asked.include_archived,
        then=then,
    )
    return _Page(ranked, views, ev.diagnostics, ev.generation)


def _next_page(pager: Pager, binding: Binding, qhash: str, page: _Page, limit: int) -> str | None:
    """The next page's cursor; a first page stores its evaluation for it."""
    next_offset = page.offset + limit
    if next_offset >= len(page.ranked):
        return None
    if page.eval_id:
        return pager.next_cursor(
            binding, "search", qhash, page.eval_id, next_offset, page.expires, page.generation
        )
    return pager.save_and_cursor(
        binding,
        "search",
        qhash,
        {"ranked": page.ranked, "diagnostics": page.diagnostics},
        next_offset,
        page.generation,
    )
