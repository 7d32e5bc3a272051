"""The typed graph's GraphQL types: Node, Atom, Revision, Link, Citation, Source, Entity.

Types hold the row they were loaded from (``strawberry.Private``) and resolve
their relations through the request's DataLoaders (:mod:`graphsvc.api.graph_loaders`),
so a level of a query is one round trip per kind of thing.

``asOf`` (docs/time-travel.md): a type read at an instant keeps it in its row
(``asOf``), and its fields load through that instant's loaders unless a field's own
``asOf`` argument names another one. Every list whose size
has no bound is a connection (``edges { cursor node }``, ``pageInfo``) whose
``first`` is at most ``graph_first_max`` (default 100).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from datetime import datetime
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any, Generic, TypeVar, cast

import strawberry
from strawberry.types import Info

from graphsvc.api.enums import LinkAt, RangeUnit
from graphsvc.api.graph_ids import decode_cursor, encode_cursor, encode_id
from graphsvc.api.graph_loaders import MISSING, GraphLoaders, cached, loaders_for, loaders_of, then
from graphsvc.api.graph_lookahead import wants_target_citations
from graphsvc.core.entity_keys import ENTITY_TYPES
from graphsvc.core.instants import as_of_instant, utc_z
from graphsvc.core.signing import signature_status
from graphsvc.errors import NotFoundError

if TYPE_CHECKING:
    from graphsvc.core.views import EntityView

__all__ = [
    "Actor",
    "ActorKind",
    "Atom",
    "AtomState",
    "Citation",
    "CitationRange",
    "Connection",
    "Derivation",
    "Edge",
    "Entity",
    "EntityMention",
    "EntityType",
    "Link",
    "LinkTarget",
    "Node",
    "PageInfo",
    "Revision",
    "SignatureStatus",
    "Source",
    "atom_entities",
    "atom_from_row",
    "entity_from_view",
    "page",
    "revision_from_row",
    "revision_of",
    "source_from_row",
]

Row = dict[str, Any]
T = TypeVar("T")

AS_OF = (
    "Read as of this instant (docs/time-travel.md): the head is the newest revision "
    "created at or before it, atoms created later do not exist, purged atoms never "
    "appear. Default: the instant the parent was read at (now at the root)."
)


def _at(info: Info, row: Row, as_of: datetime | None = None) -> GraphLoaders:
    """The loaders for the fields below ``row`` (its instant, or ``as_of``)."""
    return loaders_for(info, row, as_of_instant(as_of, "asOf"))


@strawberry.enum(description="The stored state of a revision (SPEC §1).")
class AtomState(Enum):
    ACTIVE = strawberry.enum_value("active", description="In current reads.")
    RETIRED = strawberry.enum_value("retired", description="Left current reads (WR-4).")
    ARCHIVED = strawberry.enum_value(
        "archived", description="An atomised parent, archived by a new revision (§11)."
    )


@strawberry.enum(description="Who wrote a revision (the Binding's actor kind).")
class ActorKind(Enum):
    AGENT = strawberry.enum_value("agent", description="A model-driven agent.")
    HUMAN = strawberry.enum_value("human", description="A person.")
    INPUT_ADAPTER = strawberry.enum_value(
        "input-adapter", description="An adapter importing inputs."
    )


@strawberry.enum(description="The outcome of checking a derives_from edge's signature.")
class SignatureStatus(Enum):
    VERIFIED = strawberry.enum_value(
        "verified", description="Valid Ed25519 signature by a known key (SIG-1)."
    )
    INVALID = strawberry.enum_value(
        "invalid", description="The signature does not match the stored edge."
    )
    UNKNOWN_KEY = strawberry.enum_value(
        "unknown_key", description="Signed by a key this deployment does not know."
    )


@strawberry.interface(description="Relay Global Object Identification: anything with a global id.")
class Node:
    id: strawberry.ID = strawberry.field(
        description="Opaque global id; resolve it with node(id). Do not parse it."
    )


@strawberry.type(description="Relay page information of a connection.")
class PageInfo:
    has_next_page: bool = strawberry.field(description="More edges follow this page.")
    has_previous_page: bool = strawberry.field(
        description="This page was asked for after a cursor."
    )
    start_cursor: str | None = strawberry.field(description="Cursor of the first edge.")
    end_cursor: str | None = strawberry.field(
        description="Cursor of the last edge: pass it as `after` for the next page."
    )


@strawberry.type(description="One item of a connection with its cursor.")
class Edge(Generic[T]):
    cursor: str = strawberry.field(description="Opaque position of this edge.")
    node: T = strawberry.field(description="The item.")


@strawberry.type(description="A page of a list (Relay connection); `first` ≤ graph_first_max.")
class Connection(Generic[T]):
    edges: list[Edge[T]] = strawberry.field(description="The items of this page, in order.")
    page_info: PageInfo = strawberry.field(description="Where this page is in the list.")


def page(items: list[tuple[str, T]], first: int, after: str | None) -> Connection[T]:
    """A connection from up to ``first + 1`` loaded ``(cursor, item)`` pairs."""
    shown = items[:first]
    return Connection(
        edges=[Edge(cursor=c, node=n) for c, n in shown],
        page_info=PageInfo(
            has_next_page=len(items) > first,
            has_previous_page=after is not None,
            start_cursor=shown[0][0] if shown else None,
            end_cursor=shown[-1][0] if shown else None,
        ),
    )


@strawberry.type(description="Who wrote a revision.")
class Actor:
    kind: ActorKind = strawberry.field(description="Agent, human or input adapter.")
    id: str = strawberry.field(description="The actor's id from its API token.")


@strawberry.type(description="A byte, character or line range of a cited source.")
class CitationRange:
    start: int = strawberry.field(description="First unit of the range.")
    end: int = strawberry.field(description="Unit after the last one.")
    unit: RangeUnit = strawberry.field(description="What start and end count.")


@strawberry.type(description="A source a revision cites (one uri, version and digest).")
class Source(Node):
    uri: str = strawberry.field(description="The source's URI (`atom:<atomId>` for an atom).")
    version: str | None = strawberry.field(description="The cited version, if declared.")
    digest: str | None = strawberry.field(description="The declared digest, if any.")
    source_key: strawberry.Private[str]

    @strawberry.field(
        description="Citations of this source held by current (head) revisions, by citing atom."
    )
    async def cited_by(
        self, info: Info, first: int | None = None, after: str | None = None
    ) -> Connection[Citation]:
        return await _cited_by(info, self.source_key, None, first, after)


@strawberry.type(description="One source citation of a revision (SPEC §2 SourceCitation).")
class Citation:
    ordinal: int = strawberry.field(description="Position in the revision's sources.")
    range: CitationRange | None = strawberry.field(description="The cited range, if declared.")
    verified: bool = strawberry.field(
        description="The range was checked against a stored atom's text (atom: sources)."
    )
    # Built with the citation (a plain field costs less than a resolver per field).
    source: Source = strawberry.field(description="The cited source.")
    row: strawberry.Private[Row]

    @strawberry.field(description="The revision that holds this citation.")
    async def citing(self, info: Info) -> Revision:
        return await _revision_or_gone(
            info, self.row["citingAtomId"], self.row["citingRev"], self.row
        )


@strawberry.type(
    description="A signed derives_from lineage edge (SIG-1): child derived from parent."
)
class Derivation:
    signed_at: str = strawberry.field(description="When the edge was signed (ISO-8601 UTC).")
    key_id: str = strawberry.field(description="Id of the signing key.")
    signature: str = strawberry.field(description="Ed25519 signature, hex.")
    signature_status: SignatureStatus = strawberry.field(
        description="The signature checked against the deployment's keys now."
    )
    row: strawberry.Private[Row]

    @strawberry.field(description="The derived (child) revision.")
    async def child(self, info: Info) -> Revision:
        return await _revision_or_gone(info, self.row["fromAtomId"], int(self.row["fromRev"]))

    @strawberry.field(description="The revision it was derived from (the atomised parent).")
    async def parent(self, info: Info) -> Revision:
        return await _revision_or_gone(info, self.row["toAtomId"], int(self.row["toRev"]))


@strawberry.type(description="An immutable version of an atom (SPEC §1).")
class Revision(Node):
    atom_id: strawberry.ID = strawberry.field(description="The atom this is a version of.")
    rev: int = strawberry.field(description="Revision number, 1, 2, …")
    state: AtomState = strawberry.field(description="Stored state of this revision.")
    text: str = strawberry.field(description="The body.")
    tokens: int | None = strawberry.field(description="cl100k_base tokens of the body.")
    digest: str | None = strawberry.field(description="sha256 of the UTF-8 body.")
    created_at: str | None = strawberry.field(description="Commit time (ISO-8601 UTC).")
    actor: Actor | None = strawberry.field(description="Who wrote it.")
    operation_id: strawberry.ID | None = strawberry.field(description="The write that made it.")
    head: bool = strawberry.field(
        description="This is the atom's current head (read with asOf: its head as of then)."
    )
    atomised_into: int | None = strawberry.field(
        description="Number of atoms this revision was atomised into (§11)."
    )
    archived_at: str | None = strawberry.field(description="When it was archived (§11).")
    row: strawberry.Private[Row]

    @strawberry.field(description="The atom this is a version of.")
    async def atom(self, info: Info) -> Atom:
        return await _atom_or_gone(info, str(self.atom_id), self.row)

    @strawberry.field(description="The atom this one was atomised from (structural atomOf).")
    async def atom_of(self, info: Info) -> Atom | None:
        parent = self.row.get("atomOf")
        if not parent:
            return None
        row = await _at(info, self.row).atom.load(str(parent))
        return None if row is None else atom_from_row(row)

    @strawberry.field(
        description="Outgoing links in stored order. A purged or unpermitted target has the "
        "safe form of LNK-2 (unavailable, no target). With asOf an observed target is its "
        "pinned revision and a logical one the target atom with its head as of then."
    )
    def links(
        self,
        info: Info,
        role: str | None = None,
        first: int | None = None,
        after: str | None = None,
        as_of: Annotated[datetime | None, strawberry.argument(description=AS_OF)] = None,
    ) -> Connection[Link]:
        loaders = _at(info, self.row, as_of)
        n = loaders.reader.page_size(first)
        pos = decode_cursor("links", after, int)[0] if after is not None else None
        atom_id, rev = str(self.atom_id), self.rev
        # Asked for the targets' citations: they come with the page (no round trip).
        with_citations = wants_target_citations(info)

        def shown(found: list[Row] | None) -> Connection[Link]:
            rows = found or []
            for r in rows[:n]:
                target = r.get("targetRevision")
                if target:
                    loaders.prime_revision(target)
                if r.get("targetAtom"):
                    loaders.prime_atom(r["targetAtom"])
                    target = r["targetAtom"]["head"]
                if target and r.get("targetCitations") is not None:
                    loaders.prime_citations(target, r["targetCitations"])
            items = [
                (encode_cursor("links", int(r["ordinal"])), _link(r, atom_id, rev)) for r in rows
            ]
            return page(items, n, after)

        key = (atom_id, rev, role, pos, n + 1, with_citations)
        return then(loaders.link_page.load(key), shown)

    @strawberry.field(
        description="Source citations in declared order (at most 128); with asOf, none "
        "when this revision was created after it."
    )
    def citations(
        self,
        info: Info,
        as_of: Annotated[datetime | None, strawberry.argument(description=AS_OF)] = None,
    ) -> list[Citation]:
        atom_id, rev = str(self.atom_id), self.rev
        loaders = _at(info, self.row, as_of)
        instant = loaders.reader.as_of

        def shown(rows: list[Row] | None) -> list[Citation]:
            return [
                _citation({**c, "citingAtomId": atom_id, "citingRev": rev, "asOf": instant})
                for c in rows or []
            ]

        return then(loaders.citations.load((atom_id, rev)), shown)

    @strawberry.field(description="Signed lineage: the parent revisions this one derives from.")
    async def derives_from(self, info: Info) -> list[Derivation]:
        return await _derivations(info, self, "derivesFrom")

    @strawberry.field(description="Signed lineage: the revisions derived from this one.")
    async def derived_into(self, info: Info) -> list[Derivation]:
        return await _derivations(info, self, "derivedInto")


@strawberry.type(description="An addressable unit of knowledge; its versions are revisions.")
class Atom(Node):
    atom_id: strawberry.ID = strawberry.field(description="The library-issued atom id.")
    state: AtomState = strawberry.field(description="State of the head revision.")
    created_at: str | None = strawberry.field(description="When the atom was created.")
    # Built with the atom: its row holds the head (a plain field costs less than a
    # resolver per field).
    head: Revision = strawberry.field(description="The current head revision.")
    row: strawberry.Private[Row]

    @strawberry.field(
        description="One revision by number (null when there is none; read at an "
        "instant, also when it was created after it)."
    )
    async def revision(self, info: Info, rev: int) -> Revision | None:
        row = await _at(info, self.row).revision.load((str(self.atom_id), rev))
        return None if row is None else revision_from_row(row)

    @strawberry.field(
        description="The revision history, newest first; with asOf only the revisions "
        "created at or before it."
    )
    async def revisions(
        self,
        info: Info,
        first: int | None = None,
        after: str | None = None,
        as_of: Annotated[datetime | None, strawberry.argument(description=AS_OF)] = None,
    ) -> Connection[Revision]:
        loaders = _at(info, self.row, as_of)
        n = loaders.reader.page_size(first)
        before = decode_cursor("revisions", after, int)[0] if after is not None else None
        rows = await loaders.revision_page.load((str(self.atom_id), before, n + 1)) or []
        for r in rows:
            loaders.prime_revision(r)
        items = [(encode_cursor("revisions", int(r["rev"])), revision_from_row(r)) for r in rows]
        return page(items, n, after)

    @strawberry.field(
        description="Links pointing at this atom (logical) or at one of its revisions "
        "(observed), held by the head revision of each linking atom (with asOf: its "
        "head as of then); ordered by linking atom, then link order."
    )
    async def incoming(
        self,
        info: Info,
        role: str | None = None,
        at: LinkAt | None = None,
        first: int | None = None,
        after: str | None = None,
        as_of: Annotated[datetime | None, strawberry.argument(description=AS_OF)] = None,
    ) -> Connection[Link]:
        loaders = _at(info, self.row, as_of)
        n = loaders.reader.page_size(first)
        pos: tuple[Any, ...] = (
            decode_cursor("incoming", after, str, int) if after is not None else (None, None)
        )
        rows = (
            await loaders.incoming_page.load(
                (str(self.atom_id), role, str(at.value) if at else None, pos[0], pos[1], n + 1)
            )
            or []
        )
        items = [
            (
                encode_cursor("incoming", r["fromAtomId"], int(r["ordinal"])),
                _link(r, r["fromAtomId"], int(r["fromRev"])),
            )
            for r in rows
        ]
        return page(items, n, after)

    @strawberry.field(
        description="Citations of this atom (sources `atom:<atomId>`, any version) held by "
        "current (head) revisions; always now, whatever asOf the atom was read at."
    )
    async def cited_by(
        self, info: Info, first: int | None = None, after: str | None = None
    ) -> Connection[Citation]:
        return await _cited_by(info, None, f"atom:{self.atom_id}", first, after)

    @strawberry.field(
        description="The entities the head's text names, by key (the entity index, SPEC "
        "§16; empty for a retired or archived head, or with the index off). Always the "
        "current head's, whatever asOf the atom was read at."
    )
    async def entities(self, info: Info) -> list[Entity]:
        return await atom_entities(info, str(self.atom_id))


@strawberry.type(description="A typed link of a revision (SPEC §2 Link), seen from its holder.")
class Link:
    role: str = strawberry.field(description="The role (user data; never implies meaning).")
    at: LinkAt = strawberry.field(description="LOGICAL follows the head; OBSERVED is pinned.")
    required: bool = strawberry.field(description="The target must be presented with it.")
    order_key: str | None = strawberry.field(description="Caller-given order key.")
    unavailable: bool = strawberry.field(
        description="The target is purged or not permitted (LNK-2): no target is shown."
    )
    row: strawberry.Private[Row]

    @strawberry.field(name="from", description="The revision that holds this link.")
    async def from_(self, info: Info) -> Revision:
        return await _revision_or_gone(
            info, self.row["holderAtomId"], self.row["holderRev"], self.row
        )

    @strawberry.field(
        description="The target: a Revision for an observed link, an Atom for a logical one "
        "(read its head); null when unavailable."
    )
    def target(self, info: Info) -> LinkTarget | None:
        # Synchronous when the target's row is in the request's loaders already (the
        # links page primes it): most targets of a walk then cost no coroutine. Else
        # the awaitable of the load, which graphql-core awaits.
        if self.unavailable or self.row.get("atomId") is None:
            return None
        loaders = _at(info, self.row)
        atom_id = self.row["atomId"]
        if self.row.get("rev") is None:
            atom = cached(loaders.atom, atom_id)
            if atom is MISSING:
                return _later(_atom_target(loaders, atom_id))
            return None if atom is None else atom_from_row(cast(Row, atom))
        key = (atom_id, int(self.row["rev"]))
        rev = cached(loaders.revision, key)
        if rev is MISSING:
            return _later(_revision_target(loaders, key))
        return None if rev is None else revision_from_row(cast(Row, rev))


def _later(load: Awaitable[Revision | Atom | None]) -> Revision | Atom | None:
    """The awaitable, typed as its value: graphql-core awaits what a resolver returns."""
    return cast("Revision | Atom | None", load)


async def _atom_target(loaders: GraphLoaders, atom_id: str) -> Atom | None:
    row = await loaders.atom.load(atom_id)
    return None if row is None else atom_from_row(row)


async def _revision_target(loaders: GraphLoaders, key: tuple[str, int]) -> Revision | None:
    row = await loaders.revision.load(key)
    return None if row is None else revision_from_row(row)


LinkTarget = Annotated[
    Revision | Atom,
    strawberry.union("LinkTarget", description="What a link points at: a Revision or an Atom."),
]


def revision_from_row(row: Row) -> Revision:
    kind = row.get("actorKind")
    return Revision(
        id=strawberry.ID(encode_id("Revision", row["atomId"], int(row["rev"]))),
        atom_id=strawberry.ID(row["atomId"]),
        rev=int(row["rev"]),
        state=AtomState(row["state"]),
        text=row.get("text") or "",
        tokens=row.get("tokens"),
        digest=row.get("digest"),
        created_at=utc_z(row.get("createdAt")),
        actor=None if kind is None else Actor(kind=ActorKind(kind), id=row.get("actorId") or ""),
        operation_id=strawberry.ID(row["operationId"]) if row.get("operationId") else None,
        head=bool(row.get("head")),
        atomised_into=row.get("atomisedInto"),
        archived_at=utc_z(row.get("archivedAt")),
        row=row,
    )


def atom_from_row(row: Row) -> Atom:
    return Atom(
        id=strawberry.ID(encode_id("Atom", row["atomId"])),
        atom_id=strawberry.ID(row["atomId"]),
        state=AtomState(row["head"]["state"]),
        created_at=utc_z(row.get("createdAt")),
        head=revision_from_row(row["head"]),
        row=row,
    )


def source_from_row(row: Row) -> Source:
    return Source(
        id=strawberry.ID(encode_id("Source", row["sourceKey"])),
        uri=row["uri"],
        version=row.get("version"),
        digest=row.get("digest"),
        source_key=row["sourceKey"],
    )


def _link(row: Row, holder_atom_id: str, holder_rev: int) -> Link:
    return Link(
        role=row["role"],
        at=LinkAt(row["at"]),
        required=bool(row["required"]),
        order_key=row.get("orderKey"),
        unavailable=bool(row["unavailable"]),
        row={**row, "holderAtomId": holder_atom_id, "holderRev": holder_rev},
    )


def _citation(row: Row) -> Citation:
    rng = (
        None
        if row.get("start") is None or row.get("unit") is None
        else CitationRange(
            start=int(row["start"]), end=int(row["end"]), unit=RangeUnit(row["unit"])
        )
    )
    return Citation(
        ordinal=int(row.get("ordinal") or 0),
        range=rng,
        verified=bool(row.get("verified")),
        source=source_from_row(row),
        row=row,
    )


async def revision_of(info: Info, atom_id: str, rev: int) -> Revision | None:
    """A revision of the caller's subject through the request's loader, or None."""
    row = await loaders_of(info).revision.load((atom_id, int(rev)))
    return None if row is None else revision_from_row(row)


async def _revision_or_gone(
    info: Info, atom_id: str, rev: int, parent: Row | None = None
) -> Revision:
    loaders = loaders_of(info) if parent is None else _at(info, parent)
    row = await loaders.revision.load((atom_id, int(rev)))
    if row is None:
        # Read-committed: it was there when its parent was loaded, and is purged now.
        raise NotFoundError("no such atom or revision")
    return revision_from_row(row)


async def _atom_or_gone(info: Info, atom_id: str, parent: Row | None = None) -> Atom:
    loaders = loaders_of(info) if parent is None else _at(info, parent)
    row = await loaders.atom.load(atom_id)
    if row is None:
        raise NotFoundError("no such atom or revision")
    return atom_from_row(row)


async def _cited_by(
    info: Info, source_key: str | None, uri: str | None, first: int | None, after: str | None
) -> Connection[Citation]:
    loaders = loaders_of(info)
    n = loaders.reader.page_size(first)
    pos: tuple[Any, ...] = (
        decode_cursor("citedBy", after, str, int) if after is not None else (None, None)
    )
    rows = await loaders.cited_by_page.load((source_key, uri, pos[0], pos[1], n + 1)) or []
    items = [
        (
            encode_cursor("citedBy", r["atomId"], int(r["ordinal"])),
            _citation({**r, "citingAtomId": r["atomId"], "citingRev": int(r["rev"])}),
        )
        for r in rows
    ]
    return page(items, n, after)


async def _derivations(info: Info, revision: Revision, side: str) -> list[Derivation]:
    loaders = loaders_of(info)
    found = await loaders.lineage.load((str(revision.atom_id), revision.rev)) or {}
    out = []
    for edge in found.get(side, []):
        status = await _status(info, edge)
        out.append(
            Derivation(
                signed_at=utc_z(edge["signedAt"]),
                key_id=edge["keyId"],
                signature=edge.get("signature") or "",
                signature_status=status,
                row=edge,
            )
        )
    return out


async def _status(info: Info, edge: Row) -> SignatureStatus:
    loaders = loaders_of(info)
    keys = await loaders.public_keys()
    return SignatureStatus(signature_status(loaders.reader.subject, edge, keys))


# ------------------------------------------------------------ the entity index (§16)


@strawberry.enum(description="What kind of thing an entity is (the extractor's types).")
class EntityType(Enum):
    PERSON = strawberry.enum_value("person", description="A person (after a title).")
    ORGANISATION = strawberry.enum_value("organisation", description="A company, team, …")
    PLACE = strawberry.enum_value("place", description="A place.")
    PRODUCT = strawberry.enum_value("product", description="A product or service.")
    EVENT = strawberry.enum_value("event", description="A named event.")
    DATE = strawberry.enum_value("date", description="A date; its key is the ISO form.")
    IDENTIFIER = strawberry.enum_value(
        "identifier", description="A code-like name: INC-2041, payments-api, snake_case."
    )
    NAME = strawberry.enum_value(
        "name", description="A capitalised name the rules cannot place (person, band, …)."
    )


@strawberry.type(description="A current head that mentions an entity.")
class EntityMention:
    count: int = strawberry.field(description="How often the head's text names it.")
    name: str = strawberry.field(description="The form this text uses most.")
    atom_id: strawberry.Private[str]

    @strawberry.field(description="The atom whose head mentions the entity (null: gone).")
    async def atom(self, info: Info) -> Atom | None:
        row = await loaders_of(info).atom.load(self.atom_id)
        return None if row is None else atom_from_row(row)


@strawberry.type(
    description="Something the subject's texts name (a person, place, service, date, …), "
    "derived by the entity index from current heads (SPEC §16); never a body."
)
class Entity(Node):
    key: str = strawberry.field(description="Normalised key, unique in the subject.")
    name: str = strawberry.field(description="Display name: the form its mentions use most.")
    type: EntityType = strawberry.field(description="Its type.")
    aliases: list[str] = strawberry.field(description="Every form its mentions use.")
    mention_count: int = strawberry.field(description="Current heads that mention it.")

    @strawberry.field(description="The current heads that mention it, by atomId.")
    async def mentions(
        self, info: Info, first: int | None = None, after: str | None = None
    ) -> Connection[EntityMention]:
        loaders = loaders_of(info)
        n = loaders.reader.page_size(first)
        pos = decode_cursor("mentions", after, str)[0] if after is not None else None
        rows = await asyncio.to_thread(
            loaders.reader.mentions_page, self.key, after=pos, limit=n + 1
        )
        items = [
            (
                encode_cursor("mentions", m.atom_id),
                EntityMention(count=m.count, name=m.name, atom_id=m.atom_id),
            )
            for m in rows
        ]
        return page(items, n, after)


def entity_from_view(view: EntityView) -> Entity:
    kind = view.type if view.type in ENTITY_TYPES else "name"
    return Entity(
        id=strawberry.ID(encode_id("Entity", view.key)),
        key=view.key,
        name=view.name,
        type=EntityType(kind),
        aliases=list(view.aliases),
        mention_count=view.mentions,
    )


async def atom_entities(info: Info, atom_id: str) -> list[Entity]:
    """The entities the atom's current head mentions (by key)."""
    views = await loaders_of(info).entities.load(atom_id) or []
    return [entity_from_view(v) for v in views]
