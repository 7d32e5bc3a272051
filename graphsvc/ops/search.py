"""``search`` (SPEC §5, RD-3): ranked atoms with score and breakdown, paged by cursor.

A search never changes bodies, links or usage (CORE-2, AV-4); the only thing it
may store is the frozen evaluation behind a cursor (auxiliary state).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphsvc.core.binding import Binding
from graphsvc.core.write_models import AtomRef, AtomView
from graphsvc.errors import InvalidInputError
from graphsvc.ops.cursors import CursorLimits, Pager, digest
from graphsvc.ops.evaluate import Evaluation, EvaluationLimits, evaluate_then
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
    evaluation: EvaluationLimits
    cursors: CursorLimits

    @classmethod
    def from_settings(cls, settings: Settings) -> SearchLimits:
        return cls(
            settings.depth,
            settings.search_limit,
            settings.max_limit,
            EvaluationLimits.from_settings(settings),
            CursorLimits.from_settings(settings),
        )


@dataclass(frozen=True)
class SearchHit:
    atom: AtomView
    score: float
    breakdown: dict[str, Any]


@dataclass(frozen=True)
class SearchResult:
    hits: list[SearchHit]
    diagnostics: dict[str, Any]
    cursor: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "hits": [
                {"atom": h.atom.to_json(), "score": h.score, "scoreBreakdown": h.breakdown}
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
    query: str,
    *,
    depth: int | None = None,
    limit: int | None = None,
    include_archived: bool = False,
    cursor: str | None = None,
) -> SearchResult:
    """Rank the subject's atoms for ``query``.

    Args:
        db: the store.
        embedder: embeds the query.
        secret: the server secret (signs cursors).
        clock: epoch seconds.
        limits: the settings a search reads.

    Raises:
        InvalidInputError: empty query, or depth/limit out of range.
        PurgePendingError: a purge in the subject has not finished.
        CursorExpiredError: the cursor no longer matches (CUR-2).
    """
    depth = limits.depth if depth is None else depth
    limit = limits.search_limit if limit is None else limit
    if not query.strip() or len(query) > 10_000:
        raise InvalidInputError("query must be 1..10000 characters of text")
    if not 1 <= limit <= limits.max_limit:
        raise InvalidInputError(f"limit must be in 1..{limits.max_limit}")
    qhash = digest(["search", query, depth, limit, include_archived])
    pager = Pager(db, secret, clock, limits.cursors, embedder.model_name)
    if cursor:
        # A later page skips the evaluation and its purge check (LNK-6).
        generation = pager.checked_generation(binding.subject)
        payload, eval_id, offset, expires = pager.open_cursor(
            binding, "search", cursor, qhash, generation
        )
        ranked = payload["ranked"]
        diagnostics = payload["diagnostics"]
        page = ranked[offset : offset + limit]
        views = load_views(db, binding.subject, (AtomRef(r["atomId"], r["rev"]) for r in page))
    else:
        offset, eval_id, expires = 0, "", 0.0

        def first_page(
            tx: Tx, ev: Evaluation
        ) -> tuple[list[dict[str, Any]], dict[AtomRef, AtomView]]:
            ranked = ev.ranked_rows(breakdown=True)
            refs = (AtomRef(r["atomId"], r["rev"]) for r in ranked[:limit])
            return ranked, load_views(db, binding.subject, refs, tx=tx)

        ev, (ranked, views) = evaluate_then(
            db,
            embedder,
            clock,
            limits.evaluation,
            binding,
            query,
            depth=depth,
            include_archived=include_archived,
            then=first_page,
        )
        diagnostics = ev.diagnostics
        generation = ev.generation
        page = ranked[:limit]
    hits = [
        SearchHit(views[ref], r["score"], r["breakdown"])
        for r in page
        if (ref := AtomRef(r["atomId"], r["rev"])) in views
    ]
    next_offset = offset + limit
    next_page: str | None = None
    if next_offset < len(ranked):
        if eval_id:
            next_page = pager.next_cursor(
                binding, "search", qhash, eval_id, next_offset, expires, generation
            )
        else:
            next_page = pager.save_and_cursor(
                binding,
                "search",
                qhash,
                {"ranked": ranked, "diagnostics": diagnostics},
                next_offset,
                generation,
            )
    return SearchResult(
        hits=hits,
        diagnostics={**diagnostics, "page": {"offset": offset, "total": len(ranked)}},
        cursor=next_page,
    )
