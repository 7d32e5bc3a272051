"""GraphQL ``read`` (SPEC §8): the types ``ReadResult``, ``ReadItem`` and ``Selection``,
and the resolver, one call into :meth:`graphsvc.service.Service.read` with the request
it builds from the arguments, run in a worker thread because it blocks on Neo4j.
"""

from __future__ import annotations

import asyncio
from typing import cast

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from graphsvc.api.context import binding_of, service_of
from graphsvc.api.graph_lookahead import NEXT_PAGE_CURSOR, selects
from graphsvc.api.graph_siblings import (
    DiagnosticEntry,
    ManifestInfo,
    diagnostics_list,
    manifest_info,
)
from graphsvc.api.types import AtomRef
from graphsvc.core.requests import ReadRequest

__all__ = ["ReadItem", "ReadQuery", "ReadResult", "Selection"]


@strawberry.type(description="What a read selected under its budget.")
class Selection:
    baseline_complete: bool = strawberry.field(
        description="Every root's required closure was presented."
    )
    coverage_certified: bool = strawberry.field(
        description="The selection is certified against the candidates."
    )
    tokens: int = strawberry.field(description="Tokens of the read text.")
    budget: int = strawberry.field(description="The token budget asked for.")


@strawberry.type(description="One presented revision of a read.")
class ReadItem:
    ref: AtomRef = strawberry.field(description="The presented revision.")
    role: str = strawberry.field(description="root or required.")
    score: float | None = strawberry.field(
        description="The root's score; null for required bodies."
    )
    blocked: bool = strawberry.field(description="The root is blocked (RD-2).")


@strawberry.type(description="A token-budgeted, dependency-complete read (SPEC §8).")
class ReadResult:
    text: str = strawberry.field(description="The read text (formatVersion 2 JSON).")
    format_version: int = strawberry.field(description="The text's format version.")
    items: list[ReadItem] = strawberry.field(description="The presented revisions in order.")
    selection: Selection = strawberry.field(description="What was selected under the budget.")
    manifest: JSON = strawberry.field(
        description="The observation record as JSON (typed: manifestInfo)."
    )
    diagnostics: JSON = strawberry.field(
        description="acquisition, validation, evaluation, selection (CUR-3)."
    )
    cursor: str | None = strawberry.field(description=NEXT_PAGE_CURSOR)

    @strawberry.field(description="Typed sibling of manifest (same values).")
    def manifest_info(self) -> ManifestInfo:
        return manifest_info(self.manifest)

    @strawberry.field(description="Typed sibling of diagnostics: one entry per part and key.")
    def diagnostics_list(self) -> list[DiagnosticEntry]:
        return diagnostics_list(self.diagnostics)


@strawberry.type
class ReadQuery:
    @strawberry.field(description="A token-budgeted, dependency-complete read (SPEC §8).")
    async def read(
        self,
        info: Info,
        query: str,
        memory_token_budget: int,
        depth: int | None = None,
        limit: int | None = None,
        include_archived: bool | None = None,
        cursor: str | None = None,
    ) -> ReadResult:
        request = ReadRequest(  # no `cursor` selected: nothing stored for a next page
            query,
            memory_token_budget,
            depth,
            limit,
            bool(include_archived),
            cursor,
            selects(info, "cursor"),
        )
        r = await asyncio.to_thread(service_of(info).read, binding_of(info), request)
        return ReadResult(
            text=r.text,
            format_version=r.format_version,
            items=[
                ReadItem(
                    ref=AtomRef(atom_id=strawberry.ID(i.ref.atom_id), rev=i.ref.rev),
                    role=i.role,
                    score=i.score,
                    blocked=i.blocked,
                )
                for i in r.items
            ],
            selection=Selection(
                baseline_complete=r.selection.baseline_complete,
                coverage_certified=r.selection.coverage_certified,
                tokens=r.selection.tokens,
                budget=r.selection.budget,
            ),
            manifest=cast(JSON, r.manifest),
            diagnostics=cast(JSON, r.diagnostics),
            cursor=r.cursor,
        )
