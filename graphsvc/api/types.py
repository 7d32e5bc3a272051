"""The atom types every feature's results show: ``AtomView`` with its links, ``AtomRef``,
and ``AtomRefInput`` (SPEC API-6; names and shapes fixed, extras allowed). No logic.

Each feature's own types sit in its module: search (:mod:`graphsvc.api.search`), read
(:mod:`graphsvc.api.read`), write (:mod:`graphsvc.api.write`), inspect
(:mod:`graphsvc.api.inspect`), ...
"""

from __future__ import annotations

from typing import Any, cast

import strawberry
from strawberry.scalars import JSON

from graphsvc.api.enums import LinkAt, RangeUnit
from graphsvc.api.graph_types import CitationRange
from graphsvc.core.instants import utc_z
from graphsvc.core.write_models import AtomView

__all__ = [
    "AtomLink",
    "AtomRef",
    "AtomRefInput",
    "AtomViewType",
    "SourceCitation",
    "atom_view",
]


@strawberry.input(description="An issued revision: atomId and rev.")
class AtomRefInput:
    atom_id: strawberry.ID
    rev: int


@strawberry.type(description="An issued revision: atomId and rev.")
class AtomRef:
    atom_id: strawberry.ID = strawberry.field(description="The atom.")
    rev: int = strawberry.field(description="The revision number.")


@strawberry.type(description="A link of an AtomView; the safe form of LNK-2 when unavailable.")
class AtomLink:
    role: str = strawberry.field(description="The role (user data; never implies meaning, CORE-4).")
    unavailable: bool = strawberry.field(
        description="The target is purged or not permitted: no target is shown."
    )
    required: bool = strawberry.field(
        description="The target must be presented with this revision (RD-2)."
    )
    at: LinkAt = strawberry.field(description="LOGICAL follows the head; OBSERVED is pinned.")
    order_key: str | None = strawberry.field(description="Caller-given order key.")
    target: AtomRef | None = strawberry.field(
        description="The target revision; null when unavailable. (Typed walk: `atom`.)"
    )


@strawberry.type(name="AtomView", description="The public form of one revision (SPEC §2).")
class AtomViewType:
    atom_id: strawberry.ID = strawberry.field(description="The atom.")
    rev: int = strawberry.field(description="The revision number.")
    state: str = strawberry.field(description="active, retired or archived.")
    text: str = strawberry.field(description="The body.")
    head: bool = strawberry.field(description="This revision is the atom's head.")
    links: list[AtomLink] = strawberry.field(description="The links, in stored order.")
    sources: JSON = strawberry.field(
        description="The source citations as JSON (typed: citations, Revision.citations)."
    )
    atom_of: strawberry.ID | None = strawberry.field(
        description="The atom this one was atomised from (§11)."
    )
    atomised_into: int | None = strawberry.field(
        description="How many atoms this revision was atomised into."
    )
    archived_at: str | None = strawberry.field(description="When this revision was archived (§11).")

    @strawberry.field(description="Typed sibling of sources: the same citations, in order.")
    def citations(self) -> list[SourceCitation]:
        return [_citation(c) for c in cast(list[dict[str, Any]], self.sources)]


@strawberry.type(description="A source citation as written (uri, version, digest, range).")
class SourceCitation:
    uri: str = strawberry.field(description="The source's URI (`atom:<atomId>` for an atom).")
    version: str | None = strawberry.field(description="The cited version, if declared.")
    digest: str | None = strawberry.field(description="The declared digest, if any.")
    range: CitationRange | None = strawberry.field(description="The cited range, if declared.")
    verified: bool | None = strawberry.field(
        description="The range was checked against the cited atom's text (an `atom:` "
        "source); null where the JSON has no verified key."
    )


def _citation(doc: dict[str, Any]) -> SourceCitation:
    r = doc.get("range")
    return SourceCitation(
        uri=str(doc["uri"]),
        version=doc.get("version"),
        digest=doc.get("digest"),
        range=None
        if r is None
        else CitationRange(start=int(r["start"]), end=int(r["end"]), unit=RangeUnit(r["unit"])),
        verified=doc.get("verified"),
    )


def atom_view(view: AtomView) -> AtomViewType:
    """Core AtomView → GraphQL AtomView."""
    return AtomViewType(
        atom_id=strawberry.ID(view.atom_id),
        rev=view.rev,
        state=view.state,
        text=view.text,
        head=view.head,
        links=[
            AtomLink(
                role=link.role,
                unavailable=link.unavailable,
                required=link.required,
                at=LinkAt(link.at),
                order_key=link.order_key,
                target=None
                if link.unavailable or link.target is None
                else AtomRef(atom_id=strawberry.ID(link.target.atom_id), rev=link.target.rev),
            )
            for link in view.links
        ],
        sources=cast(JSON, list(view.sources)),
        atom_of=strawberry.ID(view.atom_of) if view.atom_of else None,
        atomised_into=view.atomised_into,
        archived_at=utc_z(view.archived_at),
    )
