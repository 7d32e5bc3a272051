"""The strawberry schema (SPEC API-6). Resolvers are one call into Service.

Service calls block on Neo4j and the embedding model, so resolvers run them in
a worker thread (``asyncio.to_thread``) and the event loop stays responsive.
"""

from __future__ import annotations

import asyncio
import contextvars
from concurrent.futures import ThreadPoolExecutor
from typing import Any, cast

import strawberry
from strawberry.extensions import MaxTokensLimiter
from strawberry.scalars import JSON
from strawberry.types import Info

from graphsvc.api.atomise_api import AtomiseMutation, AtomiseQuery
from graphsvc.api.changes_api import ChangesQuery
from graphsvc.api.context import binding_of, service_of
from graphsvc.api.document_limits import DocumentGate, DocumentLimits
from graphsvc.api.errors import ErrorCodes
from graphsvc.api.graph_api import GraphQuery
from graphsvc.api.inspect_api import InspectQuery
from graphsvc.api.jobs_api import JobsQuery
from graphsvc.api.purge_api import PurgeMutation
from graphsvc.api.replay_api import ReplayQuery
from graphsvc.api.types import (
    AtomRef,
    AtomRefInput,
    ChangeInput,
    ChangeResult,
    ReadItem,
    ReadResult,
    SearchHit,
    SearchResult,
    Selection,
    WriteOptionsInput,
    WriteOutcomeType,
    atom_view,
    input_to_json,
)
from graphsvc.api.write_limits import WriteBatchGate
from graphsvc.core.requests import ReadRequest, SearchRequest
from graphsvc.inputs.models import parse_changes, parse_host_input
from graphsvc.service import Service
from graphsvc.settings import Settings

__all__ = ["HEALTH_THREAD_PREFIX", "Mutation", "Query", "build_schema"]

# `{ health }` runs on two threads of its own, never in the resolvers' pool: under
# load a health check must not wait behind data requests (docs/operations.md).
HEALTH_THREAD_PREFIX = "graphsvc-health"
_HEALTH_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix=HEALTH_THREAD_PREFIX)


@strawberry.type
class CoreQuery:
    @strawberry.field(description="Neo4j server version, schema version, embedding model.")
    async def health(self, info: Info) -> JSON:
        loop = asyncio.get_running_loop()
        # The request's deadline (a context variable) goes along, as with to_thread.
        call = contextvars.copy_context().run
        health = await loop.run_in_executor(_HEALTH_POOL, call, service_of(info).health)
        return cast(JSON, health)

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
        request = SearchRequest(query, depth, limit, bool(include_archived), cursor)
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
        request = ReadRequest(
            query, memory_token_budget, depth, limit, bool(include_archived), cursor
        )
        r = await asyncio.to_thread(service_of(info).read, binding_of(info), request)
        return ReadResult(
            text=r.text,
            format_version=r.format_version,
            items=[
                ReadItem(
                    ref=AtomRef(
                        atom_id=strawberry.ID(i["ref"]["atomId"]), rev=int(i["ref"]["rev"])
                    ),
                    role=i["role"],
                    score=i["score"],
                    blocked=i["blocked"],
                )
                for i in r.items
            ],
            selection=Selection(
                baseline_complete=r.selection["baselineComplete"],
                coverage_certified=r.selection["coverageCertified"],
                tokens=r.selection["tokens"],
                budget=r.selection["budget"],
            ),
            manifest=cast(JSON, r.manifest),
            diagnostics=cast(JSON, r.diagnostics),
            cursor=r.cursor,
        )


@strawberry.type
class CoreMutation:
    @strawberry.mutation(description="Commit a batch of changes atomically (SPEC §2).")
    async def write(
        self, info: Info, changes: list[ChangeInput], options: WriteOptionsInput | None = None
    ) -> WriteOutcomeType:
        binding = binding_of(info)
        parsed = parse_changes(input_to_json(changes))
        key = options.idempotency_key if options else None
        outcome = await asyncio.to_thread(service_of(info).write, binding, parsed, key)
        return WriteOutcomeType(
            operation_id=strawberry.ID(outcome.operation_id),
            repeated=outcome.repeated,
            indexing=outcome.indexing,
            changes=[
                ChangeResult(id=cid, atom=atom_view(view)) for cid, view in outcome.changes.items()
            ],
            atomise_mode=(outcome.extra or {}).get("atomiseMode"),
            atomise_outcome=(outcome.extra or {}).get("atomiseOutcome"),
        )

    @strawberry.mutation(description="Record a host's inputs; returns an opaque InputToken.")
    async def observe(self, info: Info, input: JSON) -> str:
        binding = binding_of(info)
        host_input = parse_host_input(input)
        return await asyncio.to_thread(service_of(info).observe, binding, host_input)

    @strawberry.mutation(description="Record an accepted model response's use (AV-4).")
    async def record_use(
        self,
        info: Info,
        event_id: strawberry.ID,
        manifest: JSON,
        atoms: list[AtomRefInput] | None = None,
    ) -> JSON:
        from graphsvc.core.write_models import AtomRef

        binding = binding_of(info)
        refs = [AtomRef(str(a.atom_id), a.rev) for a in atoms] if atoms else None
        return cast(
            JSON,
            await asyncio.to_thread(
                service_of(info).record_use, binding, str(event_id), cast(Any, manifest), refs
            ),
        )

    @strawberry.mutation(description="Delete usage state (one atom or all) of the caller.")
    async def reset_usage(self, info: Info, atom_id: strawberry.ID | None = None) -> bool:
        binding = binding_of(info)
        await asyncio.to_thread(
            service_of(info).reset_usage, binding, str(atom_id) if atom_id else None
        )
        return True


@strawberry.type(
    name="Query",
    description="Reads. None of them changes any body, link or usage state (CORE-2).",
)
class Query(
    CoreQuery, InspectQuery, AtomiseQuery, GraphQuery, JobsQuery, ChangesQuery, ReplayQuery
):
    """Each feature keeps its resolvers in its own module; they merge here."""


@strawberry.type(name="Mutation", description="Writes and operator operations.")
class Mutation(CoreMutation, PurgeMutation, AtomiseMutation):
    """The feature modules' mutations, merged (like the query types)."""


def build_schema(settings: Settings) -> strawberry.Schema:
    """The schema with abuse limits (API-3) and error codes."""
    limits = DocumentLimits.from_settings(settings)
    # Depth, aliases, fields and cost: graphsvc.api.document_limits, linear in the
    # document (strawberry's depth limiter walks every fragment spread again).
    extensions: list[Any] = [
        ErrorCodes,
        lambda: MaxTokensLimiter(max_token_count=settings.max_query_tokens),
        lambda: DocumentGate(limits=limits),
        lambda: WriteBatchGate(limits=Service.write_limits(settings)),
    ]
    return strawberry.Schema(query=Query, mutation=Mutation, extensions=extensions)
