"""GraphQL ``inspect`` (SPEC §7, API-6): the types ``Via``, ``Neighbor``, ``InspectResult``.

The resolver is one call into :meth:`graphsvc.service.Service.inspect`, run in a
worker thread because it blocks on Neo4j.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, cast

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from graphsvc.api.context import binding_of, service_of
from graphsvc.api.graph_siblings import DiagnosticEntry, diagnostics_list
from graphsvc.api.types import AtomViewType, Direction, LinkAt, atom_view
from graphsvc.core.instants import as_of_instant

if TYPE_CHECKING:
    from graphsvc import service as facade

__all__ = ["InspectQuery", "InspectResult", "Neighbor", "Via"]


@strawberry.type
class Via:
    direction: Direction
    role: str
    at: LinkAt
    required: bool
    order_key: str | None


@strawberry.type
class Neighbor:
    atom: AtomViewType
    via: list[Via]


@strawberry.type
class InspectResult:
    atom: AtomViewType
    neighbors: list[Neighbor]
    receipt: JSON
    read_eligibility: JSON
    stale: bool
    diagnostics: JSON
    usage: JSON | None
    cursor: str | None

    @strawberry.field(description="Typed sibling of diagnostics: one entry per part and key.")
    def diagnostics_list(self) -> list[DiagnosticEntry]:
        return diagnostics_list(self.diagnostics)


def _via(v: facade.Via) -> Via:
    return Via(
        direction=Direction(v.direction),
        role=v.role,
        at=LinkAt(v.at),
        required=v.required,
        order_key=v.order_key,
    )


def _result(r: facade.InspectResult) -> InspectResult:
    return InspectResult(
        atom=atom_view(r.atom),
        neighbors=[
            Neighbor(atom=atom_view(n.atom), via=[_via(v) for v in n.via]) for n in r.neighbors
        ],
        receipt=cast(JSON, r.receipt),
        read_eligibility=cast(JSON, r.read_eligibility),
        stale=r.stale,
        diagnostics=cast(JSON, r.diagnostics),
        usage=cast(JSON, r.usage),
        cursor=r.cursor,
    )


@strawberry.type
class InspectQuery:
    @strawberry.field(
        description="One revision and its one-hop neighbours (SPEC §7); with asOf, as "
        "the graph stood then (docs/time-travel.md): the default revision is the head as "
        "of then, neighbours bind as of then. Watches, usage and entities stay now."
    )
    async def inspect(
        self,
        info: Info,
        atom_id: strawberry.ID,
        rev: int | None = None,
        version: LinkAt | None = None,
        direction: Direction | None = None,
        roles: list[str] | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        range_start: int | None = None,
        range_end: int | None = None,
        as_of: Annotated[
            datetime | None,
            strawberry.argument(
                description="Inspect the graph as of this instant (docs/time-travel.md)."
            ),
        ] = None,
    ) -> InspectResult:
        binding = binding_of(info)
        result = await asyncio.to_thread(
            service_of(info).inspect,
            binding,
            str(atom_id),
            rev=rev,
            version=(version or LinkAt.OBSERVED).value,
            direction=(direction or Direction.BOTH).value,
            roles=roles,
            limit=limit,
            cursor=cursor,
            range_start=range_start,
            range_end=range_end,
            as_of=as_of_instant(as_of),
        )
        return _result(result)
