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
from graphsvc.api.enums import Direction, LinkAt
from graphsvc.api.graph_siblings import (
    DiagnosticEntry,
    InspectReceipt,
    ReadEligibility,
    UsageInfo,
    diagnostics_list,
    inspect_receipt,
    read_eligibility,
    usage_info,
)
from graphsvc.api.types import AtomViewType, atom_view
from graphsvc.core.instants import as_of_instant
from graphsvc.core.requests import InspectRequest

if TYPE_CHECKING:
    from graphsvc import service as facade

__all__ = ["InspectQuery", "InspectResult", "Neighbor", "Via"]


@strawberry.type(description="One link between inspect's root and a neighbour, seen from the root.")
class Via:
    direction: Direction = strawberry.field(description="INCOMING or OUTGOING.")
    role: str = strawberry.field(description="The link's role.")
    at: LinkAt = strawberry.field(description="The link's binding.")
    required: bool = strawberry.field(description="The link is required.")
    order_key: str | None = strawberry.field(description="Caller-given order key.")


@strawberry.type(description="A neighbour revision and every link joining it to the root (INS-4).")
class Neighbor:
    atom: AtomViewType = strawberry.field(description="The neighbour revision.")
    via: list[Via] = strawberry.field(description="The links joining it to the root.")


@strawberry.type(description="One revision and its one-hop neighbourhood (SPEC §7).")
class InspectResult:
    atom: AtomViewType = strawberry.field(description="The inspected revision.")
    neighbors: list[Neighbor] = strawberry.field(description="One page of neighbours.")
    receipt: JSON = strawberry.field(description="A sealed receipt of what was shown.")
    read_eligibility: JSON = strawberry.field(
        description="What showing the body does not prove (LNK-3)."
    )
    stale: bool = strawberry.field(description="A declared watch no longer holds (LNK-1).")
    diagnostics: JSON = strawberry.field(
        description="acquisition, validation, evaluation, selection (CUR-3)."
    )
    usage: JSON | None = strawberry.field(description="The caller's usage state of this revision.")
    cursor: str | None = strawberry.field(
        description="The next page's cursor; null on the last page."
    )

    @strawberry.field(description="Typed sibling of diagnostics: one entry per part and key.")
    def diagnostics_list(self) -> list[DiagnosticEntry]:
        return diagnostics_list(self.diagnostics)

    @strawberry.field(description="Typed sibling of receipt (same values).")
    def receipt_info(self) -> InspectReceipt:
        return inspect_receipt(self.receipt)

    @strawberry.field(description="Typed sibling of readEligibility (same values).")
    def read_eligibility_info(self) -> ReadEligibility:
        return read_eligibility(self.read_eligibility)

    @strawberry.field(description="Typed sibling of usage (same values); null when usage is null.")
    def usage_info(self) -> UsageInfo | None:
        return usage_info(self.usage)


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
        request = InspectRequest(
            str(atom_id),
            rev=rev,
            version=str((version or LinkAt.OBSERVED).value),
            direction=str((direction or Direction.BOTH).value),
            roles=roles,
            limit=limit,
            cursor=cursor,
            range_start=range_start,
            range_end=range_end,
            as_of=as_of_instant(as_of, "asOf"),
        )
        result = await asyncio.to_thread(service_of(info).inspect, binding_of(info), request)
        return _result(result)
