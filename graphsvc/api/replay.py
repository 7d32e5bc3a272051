"""GraphQL ``manifest(id)`` (docs/time-travel.md): a read's manifest, typed and replayed.

The resolver is one call into :meth:`graphsvc.service.Service.replay_manifest` in a
worker thread; the types hold no logic.
"""

from __future__ import annotations

import asyncio
from enum import Enum

import strawberry
from strawberry.types import Info

from graphsvc.api.context import binding_of, service_of
from graphsvc.api.graph_types import Actor, ActorKind, AtomState
from graphsvc.api.types import AtomRef
from graphsvc.core.instants import utc_z
from graphsvc.core.views import ManifestReplay, PresentedRevision

__all__ = ["ReplayQuery"]


@strawberry.enum(description="What happened to a presented atom since the read.")
class ChangeSince(Enum):
    UNCHANGED = strawberry.enum_value("unchanged", description="Still the head.")
    HEAD_MOVED = strawberry.enum_value("head_moved", description="A newer revision is the head.")
    RETIRED = strawberry.enum_value("retired", description="Retired since (WR-4).")
    ARCHIVED = strawberry.enum_value("archived", description="Atomised and archived since.")


@strawberry.type(description="A source range a presented revision cites.")
class PresentedCitation:
    uri: str = strawberry.field(description="The source's URI.")
    version: str | None = strawberry.field(description="The cited version.")
    start: int | None = strawberry.field(description="First unit of the range.")
    end: int | None = strawberry.field(description="Unit after the last one.")
    unit: str | None = strawberry.field(description="byte, char or line.")
    verified: bool = strawberry.field(description="The range was checked (atom: sources).")


@strawberry.type(description="A revision the revision's provenance watches (TOK-5).")
class PresentedWatch:
    ref: AtomRef = strawberry.field(description="The watched revision.")
    head_rev: int | None = strawberry.field(description="Its atom's head now.")
    moved: bool = strawberry.field(description="The watched atom moved on since.")


@strawberry.type(description="One revision a read presented, as presented, and what changed.")
class PresentedRevisionType:
    ref: AtomRef = strawberry.field(description="The presented revision.")
    state: AtomState = strawberry.field(description="Its state when presented.")
    text: str = strawberry.field(description="Its text as presented (revisions never change).")
    tokens: int | None = strawberry.field(description="cl100k_base tokens of the text.")
    citations: list[PresentedCitation] = strawberry.field(description="Its citations.")
    watches: list[PresentedWatch] = strawberry.field(description="Watches of its provenance.")
    changed_since: ChangeSince = strawberry.field(description="What happened to its atom since.")
    head_rev: int | None = strawberry.field(description="Its atom's head revision now.")


@strawberry.type(description="A read's manifest (MAN-1), replayed against today's graph.")
class ManifestReplayType:
    manifest_id: strawberry.ID = strawberry.field(description="The id the read answered.")
    created_at: str = strawberry.field(description="When the read ran (ISO-8601 UTC).")
    expires_at: str = strawberry.field(description="End of its lifetime (manifest_lifetime_s).")
    expired: bool = strawberry.field(
        description="Past its lifetime: kept only until a read removes it."
    )
    actor: Actor | None = strawberry.field(description="Who read.")
    policy: str | None = strawberry.field(description="The reader's policy.")
    digest: str | None = strawberry.field(description="Digest over what was presented.")
    acknowledged: bool = strawberry.field(description="A recordUse acknowledged it (AV-4).")
    presented: list[PresentedRevisionType] = strawberry.field(
        description="Every presented revision, by atomId."
    )
    same_set_today: bool | None = strawberry.field(
        description="false: a read today cannot present the same set (a head moved or an "
        "atom left current reads); null: cannot be told (the manifest records no query)."
    )


def _presented(p: PresentedRevision) -> PresentedRevisionType:
    return PresentedRevisionType(
        ref=AtomRef(atom_id=strawberry.ID(p.atom_id), rev=p.rev),
        state=AtomState(p.state),
        text=p.text,
        tokens=p.tokens,
        citations=[
            PresentedCitation(
                uri=c["uri"],
                version=c.get("version"),
                start=c.get("start"),
                end=c.get("end"),
                unit=c.get("unit"),
                verified=bool(c.get("verified")),
            )
            for c in p.citations
        ],
        watches=[
            PresentedWatch(
                ref=AtomRef(atom_id=strawberry.ID(w["atomId"]), rev=int(w["rev"])),
                head_rev=w.get("headRev"),
                moved=bool(w["moved"]),
            )
            for w in p.watches
        ],
        changed_since=ChangeSince(p.change),
        head_rev=p.head_rev,
    )


def _replay(m: ManifestReplay) -> ManifestReplayType:
    return ManifestReplayType(
        manifest_id=strawberry.ID(m.manifest_id),
        created_at=utc_z(m.created_at),
        expires_at=utc_z(m.expires_at),
        expired=m.expired,
        actor=None
        if m.actor_kind is None
        else Actor(kind=ActorKind(m.actor_kind), id=m.actor_id or ""),
        policy=m.policy,
        digest=m.digest,
        acknowledged=m.acknowledged,
        presented=[_presented(p) for p in m.presented],
        same_set_today=m.same_set_today,
    )


@strawberry.type
class ReplayQuery:
    @strawberry.field(
        description="A read's manifest by id, typed and replayed (docs/time-travel.md): "
        "what was presented and what changed since; null for an unknown id, another "
        "subject's, one removed after its lifetime, or one that presented a purged atom "
        "(erased with it)."
    )
    async def manifest(self, info: Info, id: strawberry.ID) -> ManifestReplayType | None:
        found = await asyncio.to_thread(service_of(info).replay_manifest, binding_of(info), str(id))
        return None if found is None else _replay(found)
