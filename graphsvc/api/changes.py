"""GraphQL ``changes`` (docs/time-travel.md): the caller's change feed as a connection.

The resolver is one call into :meth:`graphsvc.service.Service.changes` in a worker
thread; a cursor holds the sequence number of its record, so a page after it is the
same whenever it is asked for.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from enum import Enum
from typing import Annotated

import strawberry
from strawberry.types import Info

from graphsvc.api.context import binding_of, service_of
from graphsvc.api.graph_ids import decode_cursor, encode_cursor
from graphsvc.api.graph_types import Actor, ActorKind, Connection, Edge, PageInfo
from graphsvc.api.types import AtomRef
from graphsvc.core.instants import as_of_instant, utc_z
from graphsvc.core.views import ChangeRecord
from graphsvc.core.write_models import AtomRef as StoredRef

__all__ = ["Change", "ChangesQuery"]


@strawberry.enum(description="What kind of operation a change record is.")
class ChangeKind(Enum):
    WRITE = strawberry.enum_value(
        "write", description="A write batch (create, revise, retire; an import batch too)."
    )
    ATOMISE = strawberry.enum_value(
        "atomise", description="An atomisation: new atoms and the archived parent (§11)."
    )
    PURGE = strawberry.enum_value(
        "purge", description="A purge: how many atoms were erased, never which."
    )


@strawberry.type(description="One write operation of the caller's subject, in commit order.")
class Change:
    sequence: int = strawberry.field(
        description="Its number in the subject's feed: 1, 2, … in commit order, no gaps."
    )
    operation_id: strawberry.ID = strawberry.field(description="The operation's id.")
    kind: ChangeKind = strawberry.field(description="Write, atomise or purge.")
    actor: Actor | None = strawberry.field(description="Who did it.")
    committed_at: str = strawberry.field(description="Commit time (ISO-8601 UTC).")
    created: list[AtomRef] = strawberry.field(description="Atoms it created (their rev 1).")
    revised: list[AtomRef] = strawberry.field(description="New revisions of existing atoms.")
    retired: list[AtomRef] = strawberry.field(description="Retiring revisions it wrote (WR-4).")
    archived: list[AtomRef] = strawberry.field(
        description="Archiving revisions of atomised parents (§11)."
    )
    purged: int = strawberry.field(description="A purge: how many atoms it erased.")
    redacted: int = strawberry.field(
        description="Refs taken out of this record by later purges (purge is erasure)."
    )


def _refs(refs: tuple[StoredRef, ...]) -> list[AtomRef]:
    return [AtomRef(atom_id=strawberry.ID(r.atom_id), rev=r.rev) for r in refs]


def _change(r: ChangeRecord) -> Change:
    return Change(
        sequence=r.seq,
        operation_id=strawberry.ID(r.operation_id),
        kind=ChangeKind(r.kind),
        actor=None
        if r.actor_kind is None
        else Actor(kind=ActorKind(r.actor_kind), id=r.actor_id or ""),
        committed_at=utc_z(r.at),
        created=_refs(r.created),
        revised=_refs(r.revised),
        retired=_refs(r.retired),
        archived=_refs(r.archived),
        purged=r.purged,
        redacted=r.redacted,
    )


Moment = Annotated[datetime | None, strawberry.argument(description="An instant (ISO-8601).")]


@strawberry.type
class ChangesQuery:
    @strawberry.field(
        description="The caller's write operations in commit order (docs/time-travel.md): "
        "committed at or after `since` and before `until` (either may be left out), after "
        "the cursor `after`. Every operation appears once; pages are stable."
    )
    async def changes(
        self,
        info: Info,
        since: Moment = None,
        until: Moment = None,
        first: int | None = None,
        after: str | None = None,
    ) -> Connection[Change]:
        pos = decode_cursor("changes", after, int)[0] if after is not None else None
        found = await asyncio.to_thread(
            service_of(info).changes,
            binding_of(info),
            since=as_of_instant(since, "since"),
            until=as_of_instant(until, "until"),
            after=pos,
            first=first,
        )
        edges = [
            Edge(cursor=encode_cursor("changes", r.seq), node=_change(r)) for r in found.records
        ]
        return Connection(
            edges=edges,
            page_info=PageInfo(
                has_next_page=found.has_next,
                has_previous_page=after is not None,
                start_cursor=edges[0].cursor if edges else None,
                end_cursor=edges[-1].cursor if edges else None,
            ),
        )
