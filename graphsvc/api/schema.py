"""The strawberry schema (SPEC API-6). Resolvers are one call into Service.

Service calls block on Neo4j and the embedding model, so resolvers run them in
a worker thread (``asyncio.to_thread``) and the event loop stays responsive.
"""

from __future__ import annotations

import asyncio
from typing import Any, cast

import strawberry
from strawberry.extensions import MaxAliasesLimiter, MaxTokensLimiter, QueryDepthLimiter
from strawberry.scalars import JSON
from strawberry.types import Info

from graphsvc.api.context import binding_of, service_of
from graphsvc.api.errors import ErrorCodes
from graphsvc.api.types import (
    ChangeInput,
    ChangeResult,
    WriteOptionsInput,
    WriteOutcomeType,
    atom_view,
    input_to_json,
)
from graphsvc.inputs import parse_changes, parse_host_input
from graphsvc.settings import Settings

__all__ = ["build_schema"]


@strawberry.type
class Query:
    @strawberry.field(description="Neo4j server version, schema version, embedding model.")
    async def health(self, info: Info) -> JSON:
        return cast(JSON, await asyncio.to_thread(service_of(info).health))


@strawberry.type
class Mutation:
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


def build_schema(settings: Settings) -> strawberry.Schema:
    """The schema with abuse limits (API-3) and error codes."""
    extensions: list[Any] = [
        ErrorCodes,
        lambda: QueryDepthLimiter(max_depth=settings.max_query_depth),
        lambda: MaxTokensLimiter(max_token_count=200_000),
        lambda: MaxAliasesLimiter(max_alias_count=30),
    ]
    return strawberry.Schema(query=Query, mutation=Mutation, extensions=extensions)
