"""GraphQL ``search`` (SPEC §5): the types ``SearchHit`` and ``SearchResult``, and the
resolver, one call into :meth:`graphsvc.service.Service.search` with the request it
builds from the arguments, run in a worker thread because it blocks on Neo4j.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Annotated, Any, cast

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from graphsvc.api.context import binding_of, service_of
from graphsvc.api.graph_lookahead import NEXT_PAGE_CURSOR, selects
from graphsvc.api.graph_siblings import (
    DiagnosticEntry,
    ScoreBreakdown,
    diagnostics_list,
    score_breakdown,
)
from graphsvc.api.types import AtomViewType, atom_view
from graphsvc.core.requests import SearchRequest

if TYPE_CHECKING:
    from graphsvc.api.graph_types import Revision

__all__ = ["SearchHit", "SearchQuery", "SearchResult"]


@strawberry.type(description="One ranked atom of a search.")
class SearchHit:
    atom: AtomViewType = strawberry.field(description="The atom's head.")
    score: float = strawberry.field(description="Relative score within this evaluation (ACT-4).")
    score_breakdown: JSON = strawberry.field(
        description="How the score was made, as JSON (typed: breakdown)."
    )

    @strawberry.field(
        description="The hit's own text matches the query weakly: its match signal is "
        "below 0.2 of the best possible match (1.0). Scores are relative, so a "
        "gibberish query still ranks hits; this says they hardly match."
    )
    def weak(self) -> bool:
        from graphsvc.core.match_floor import is_weak_match

        return is_weak_match(cast(dict[str, Any], self.score_breakdown))

    @strawberry.field(description="Typed sibling of scoreBreakdown (same values).")
    def breakdown(self) -> ScoreBreakdown:
        return score_breakdown(self.score_breakdown)

    @strawberry.field(
        description="The hit's revision in the typed graph: walk on to its links, "
        "their targets and citations."
    )
    async def revision(
        self, info: Info
    ) -> Annotated[Revision, strawberry.lazy("graphsvc.api.graph_types")] | None:
        from graphsvc.api.graph_types import revision_of

        return await revision_of(info, str(self.atom.atom_id), self.atom.rev)


@strawberry.type(description="A page of a search.")
class SearchResult:
    hits: list[SearchHit] = strawberry.field(description="The ranked hits of this page.")
    diagnostics: JSON = strawberry.field(
        description="acquisition, validation, evaluation, selection (CUR-3)."
    )
    cursor: str | None = strawberry.field(description=NEXT_PAGE_CURSOR)

    @strawberry.field(description="Typed sibling of diagnostics: one entry per part and key.")
    def diagnostics_list(self) -> list[DiagnosticEntry]:
        return diagnostics_list(self.diagnostics)


@strawberry.type
class SearchQuery:
    @strawberry.field(description="Ranked atoms with score and breakdown (SPEC §5).")
    async def search(
        self,
        info: Info,
        query: str,
        depth: int | None = None,
        limit: int | None = None,
        include_archived: bool | None = None,
        cursor: str | None = None,
    ) -> SearchResult:
        # A selection without `cursor` can never ask for the next page: nothing is
        # stored for it.
        paged = selects(info, "cursor")
        request = SearchRequest(query, depth, limit, bool(include_archived), cursor, paged)
        result = await asyncio.to_thread(service_of(info).search, binding_of(info), request)
        return SearchResult(
            hits=[
                SearchHit(
                    atom=atom_view(h.atom), score=h.score, score_breakdown=cast(JSON, h.breakdown)
                )
                for h in result.hits
            ],
            diagnostics=cast(JSON, result.diagnostics),
            cursor=result.cursor,
        )
