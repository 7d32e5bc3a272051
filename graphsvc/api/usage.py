"""GraphQL ``recordUse`` (and its typed sibling ``recordUseTyped``) and ``resetUsage``
(AV-4): the caller's usage state of the revisions a read presented; one call into the
Service each, in a worker thread.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, cast

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from graphsvc.api.context import binding_of, service_of
from graphsvc.api.operation_results import UseRecordedInfo, use_recorded_info
from graphsvc.api.types import AtomRefInput
from graphsvc.core.write_models import AtomRef

if TYPE_CHECKING:
    from graphsvc.service import UseRecorded

__all__ = ["UsageMutation"]


@strawberry.type
class UsageMutation:
    @strawberry.mutation(description="Record an accepted model response's use (AV-4).")
    async def record_use(
        self,
        info: Info,
        event_id: strawberry.ID,
        manifest: JSON,
        atoms: list[AtomRefInput] | None = None,
    ) -> JSON:
        recorded = await _record_use(info, event_id, manifest, atoms)
        return cast(JSON, recorded.to_json())

    @strawberry.mutation(
        description="The typed sibling of recordUse: the same event id, repeated and count."
    )
    async def record_use_typed(
        self,
        info: Info,
        event_id: strawberry.ID,
        manifest: JSON,
        atoms: list[AtomRefInput] | None = None,
    ) -> UseRecordedInfo:
        return use_recorded_info(await _record_use(info, event_id, manifest, atoms))

    @strawberry.mutation(description="Delete usage state (one atom or all) of the caller.")
    async def reset_usage(self, info: Info, atom_id: strawberry.ID | None = None) -> bool:
        binding = binding_of(info)
        await asyncio.to_thread(
            service_of(info).reset_usage, binding, str(atom_id) if atom_id else None
        )
        return True


async def _record_use(
    info: Info, event_id: strawberry.ID, manifest: JSON, atoms: list[AtomRefInput] | None
) -> UseRecorded:
    """One ``recordUse`` call into the service, off the event loop."""
    refs = [AtomRef(str(a.atom_id), a.rev) for a in atoms] if atoms else None
    return await asyncio.to_thread(
        service_of(info).record_use, binding_of(info), str(event_id), cast(Any, manifest), refs
    )
