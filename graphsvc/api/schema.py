"""The strawberry schema (SPEC API-6). Resolvers are one call into Service.

Service calls block on Neo4j and the embedding model, so resolvers run them in
a worker thread (``asyncio.to_thread``) and the event loop stays responsive.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
from concurrent.futures import ThreadPoolExecutor
from typing import Any, cast

import strawberry
from strawberry.extensions import MaxTokensLimiter
from strawberry.scalars import JSON
from strawberry.schema.types.scalar import DEFAULT_SCALAR_REGISTRY
from strawberry.types import Info

from graphsvc.api.atomise import AtomiseMutation, AtomiseQuery
from graphsvc.api.changes import ChangesQuery
from graphsvc.api.context import service_of
from graphsvc.api.document_limits import DocumentGate, DocumentLimits
from graphsvc.api.errors import ErrorCodes
from graphsvc.api.graph_api import GraphQuery
from graphsvc.api.inspect import InspectQuery
from graphsvc.api.jobs import JobsQuery
from graphsvc.api.operation_results import HealthInfo, health_info
from graphsvc.api.purge import PurgeMutation
from graphsvc.api.read import ReadQuery
from graphsvc.api.replay import ReplayQuery
from graphsvc.api.search import SearchQuery
from graphsvc.api.usage import UsageMutation
from graphsvc.api.write import WriteMutation
from graphsvc.api.write_limits import WriteBatchGate
from graphsvc.core.instants import with_utc_z
from graphsvc.core.views import Health
from graphsvc.service import Service
from graphsvc.settings import Settings

__all__ = ["HEALTH_THREAD_PREFIX", "Mutation", "Query", "build_schema"]

# `{ health }` runs on two threads of its own, never in the resolvers' pool: under
# load a health check must not wait behind data requests (docs/operations.md).
HEALTH_THREAD_PREFIX = "graphsvc-health"
_HEALTH_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix=HEALTH_THREAD_PREFIX)


@strawberry.type
class HealthQuery:
    @strawberry.field(description="Neo4j server version, schema version, embedding model.")
    async def health(self, info: Info) -> JSON:
        return cast(JSON, (await _health(info)).to_json())

    @strawberry.field(description="The typed sibling of health: the same facts as fields.")
    async def health_typed(self, info: Info) -> HealthInfo:
        return health_info(await _health(info))


async def _health(info: Info) -> Health:
    """The health facts, off the resolvers' pool (see ``HEALTH_THREAD_PREFIX``)."""
    # Young kept facts (a serving process refreshes them every second) answer on
    # the loop: no thread hop to wait for on a busy machine.
    kept = service_of(info).kept_health()
    if kept is not None:
        return kept
    loop = asyncio.get_running_loop()
    # The request's deadline (a context variable) goes along, as with to_thread.
    call = contextvars.copy_context().run
    return await loop.run_in_executor(_HEALTH_POOL, call, service_of(info).health)


@strawberry.type(
    name="Query",
    description="Reads. None of them changes any body, link or usage state (CORE-2).",
)
class Query(
    HealthQuery,
    SearchQuery,
    ReadQuery,
    InspectQuery,
    AtomiseQuery,
    GraphQuery,
    JobsQuery,
    ChangesQuery,
    ReplayQuery,
):
    """Each feature keeps its resolvers in its own module; they merge here."""


@strawberry.type(name="Mutation", description="Writes and operator operations.")
class Mutation(WriteMutation, UsageMutation, PurgeMutation, AtomiseMutation):
    """The feature modules' mutations, merged (like the query types)."""


# The JSON scalar as strawberry defines it (name, description), except that the
# instants a JSON answer holds leave in the Z form (docs/agents.md, "Vocabulary").
_JSON = dataclasses.replace(
    DEFAULT_SCALAR_REGISTRY[JSON], serialize=with_utc_z, implementation=None
)


def build_schema(settings: Settings) -> strawberry.Schema:
    """The schema with abuse limits (API-3) and error codes."""
    limits = DocumentLimits.from_settings(settings)
    # Depth, aliases, fields and cost: graphsvc.api.document_limits, linear in the
    # document (strawberry's depth limiter walks every fragment spread again).
    extensions: list[Any] = [
        ErrorCodes,
        lambda: MaxTokensLimiter(max_token_count=settings.graphql.max_tokens),
        lambda: DocumentGate(limits=limits),
        lambda: WriteBatchGate(limits=Service.write_limits(settings)),
    ]
    return strawberry.Schema(
        query=Query, mutation=Mutation, extensions=extensions, scalar_overrides={JSON: _JSON}
    )
