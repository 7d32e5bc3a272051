"""GraphQL ``purge(atomId)`` (SPEC §6, API-6) and its typed sibling ``purgeTyped``: one
call into :meth:`Service.purge` each.

Only a token whose auth entry has ``"purge": true`` and whose actor kind is
``human`` or ``input-adapter`` may purge; agents never (PERMISSION_DENIED).
"""

from __future__ import annotations

import asyncio
from typing import cast

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from graphsvc.api.context import binding_of, service_of
from graphsvc.api.operation_results import PurgeResult, purge_result

__all__ = ["PurgeMutation"]


@strawberry.type
class PurgeMutation:
    @strawberry.mutation(
        description="Erase an atom and what depends on it, or resume an unfinished purge "
        "(operator; returns ids and counts only)."
    )
    async def purge(self, info: Info, atom_id: strawberry.ID) -> JSON:
        binding = binding_of(info)
        outcome = await asyncio.to_thread(service_of(info).purge, binding, str(atom_id))
        return cast(JSON, outcome.to_json())

    @strawberry.mutation(description="The typed sibling of purge: the same ids and counts.")
    async def purge_typed(self, info: Info, atom_id: strawberry.ID) -> PurgeResult:
        binding = binding_of(info)
        outcome = await asyncio.to_thread(service_of(info).purge, binding, str(atom_id))
        return purge_result(outcome)
