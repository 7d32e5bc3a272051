"""GraphQL surface of the atomisation host layer (SPEC API-1, API-5, ATM-8, SIG-3).

Queries: ``lineage``. Mutations: ``atomise``, ``setNamespacePolicy`` and
``exportForensicBundle``, each with its typed sibling (``atomiseTyped``,
``setNamespacePolicyTyped``, ``exportForensicBundleTyped``). Each resolver is one call
into the service.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, cast

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from graphsvc.api.context import binding_of, service_of
from graphsvc.api.graph_siblings import ForensicBundle
from graphsvc.api.operation_results import (
    AtomiseResult,
    NamespacePolicyInfo,
    atomise_result,
    namespace_policy_info,
)

if TYPE_CHECKING:
    from graphsvc.service import AtomiseOutcome, ForensicExport, NamespacePolicy

__all__ = ["AtomiseMutation", "AtomiseQuery"]

# ATM-7: the mutation, like the CLI, always allows 3 curator retries.
_OPERATOR_RETRIES = 3


@strawberry.type
class AtomiseQuery:
    @strawberry.field(
        description="Lineage (derives_from, both directions) and one-hop link "
        "neighbourhood of an atom as {nodes, edges} (API-5)."
    )
    async def lineage(self, info: Info, atom_id: strawberry.ID, depth: int | None = None) -> JSON:
        binding = binding_of(info)
        service = service_of(info)
        found = await asyncio.to_thread(service.lineage, binding, str(atom_id), depth)
        return cast(JSON, found.to_json())


@strawberry.type
class AtomiseMutation:
    @strawberry.mutation(
        description="Split an atom into 2-10 atoms with signed lineage and archive it "
        "(ATM-8). Returns {sourceId, atomIds, atomCount, archivedAt} or "
        "{alreadyAtomised: true, atomIds}."
    )
    async def atomise(
        self,
        info: Info,
        atom_id: strawberry.ID,
        force: bool | None = None,
        max_atom_tokens: int | None = None,
    ) -> JSON:
        outcome = await _atomise(info, atom_id, force, max_atom_tokens)
        return cast(JSON, outcome.to_json())

    @strawberry.mutation(
        description="The typed sibling of atomise: the same facts as fields, null where "
        "the JSON leaves a key out."
    )
    async def atomise_typed(
        self,
        info: Info,
        atom_id: strawberry.ID,
        force: bool | None = None,
        max_atom_tokens: int | None = None,
    ) -> AtomiseResult:
        return atomise_result(await _atomise(info, atom_id, force, max_atom_tokens))

    @strawberry.mutation(
        description="Set the caller's namespace auto-atomise policy (ATM-8); returns "
        "the stored policy with defaults and resolvedMode."
    )
    async def set_namespace_policy(self, info: Info, policy: JSON) -> JSON:
        return cast(JSON, (await _set_policy(info, policy)).to_json())

    @strawberry.mutation(
        description="The typed sibling of setNamespacePolicy: the same stored policy."
    )
    async def set_namespace_policy_typed(self, info: Info, policy: JSON) -> NamespacePolicyInfo:
        return namespace_policy_info(await _set_policy(info, policy))

    @strawberry.mutation(
        description="Export the forensic bundle of a memory (SIG-3) as base64 with its sha256."
    )
    async def export_forensic_bundle(
        self,
        info: Info,
        atom_id: strawberry.ID,
        include_atomisation_chain: bool = True,
    ) -> JSON:
        export = await _export(info, atom_id, include_atomisation_chain)
        return cast(JSON, export.to_json())

    @strawberry.mutation(
        description="The typed sibling of exportForensicBundle: the same bundle and counts."
    )
    async def export_forensic_bundle_typed(
        self,
        info: Info,
        atom_id: strawberry.ID,
        include_atomisation_chain: bool = True,
    ) -> ForensicBundle:
        export = await _export(info, atom_id, include_atomisation_chain)
        return ForensicBundle(
            bundle=export.data_base64,
            sha256=export.sha256,
            size=len(export.data),
            memories=export.memories,
            revisions=export.revisions,
            events=export.events,
            lineage=export.lineage,
            keys=export.keys,
        )


async def _export(info: Info, atom_id: strawberry.ID, include_chain: bool) -> ForensicExport:
    """One ``exportForensicBundle`` call into the service, off the event loop."""
    return await asyncio.to_thread(
        service_of(info).export_forensic_bundle,
        binding_of(info),
        str(atom_id),
        include_atomisation_chain=include_chain,
    )


async def _atomise(
    info: Info, atom_id: strawberry.ID, force: bool | None, max_atom_tokens: int | None
) -> AtomiseOutcome:
    """One operator ``atomise`` call into the service, off the event loop."""
    return await asyncio.to_thread(
        service_of(info).atomise,
        binding_of(info),
        str(atom_id),
        force=bool(force),
        max_atom_tokens=max_atom_tokens,
        retries=_OPERATOR_RETRIES,
    )


async def _set_policy(info: Info, policy: JSON) -> NamespacePolicy:
    """One ``setNamespacePolicy`` call into the service, off the event loop."""
    return await asyncio.to_thread(
        service_of(info).set_namespace_policy, binding_of(info), cast(Any, policy)
    )
