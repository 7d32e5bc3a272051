"""The strawberry schema (SPEC API-6). Resolvers are one call into Service."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import strawberry
from strawberry.extensions import MaxAliasesLimiter, MaxTokensLimiter, QueryDepthLimiter
from strawberry.scalars import JSON
from strawberry.types import Info

from graphsvc.api.context import service_of
from graphsvc.api.errors import ErrorCodes
from graphsvc.settings import Settings

__all__ = ["build_schema"]


@strawberry.type
class Query:
    @strawberry.field(description="Neo4j server version, schema version, embedding model.")
    async def health(self, info: Info) -> JSON:
        return cast(JSON, await asyncio.to_thread(service_of(info).health))


def build_schema(settings: Settings) -> strawberry.Schema:
    """The schema with abuse limits (API-3) and error codes."""
    extensions: list[Any] = [
        ErrorCodes,
        lambda: QueryDepthLimiter(max_depth=settings.max_query_depth),
        lambda: MaxTokensLimiter(max_token_count=20_000),
        lambda: MaxAliasesLimiter(max_alias_count=30),
    ]
    return strawberry.Schema(query=Query, extensions=extensions)
