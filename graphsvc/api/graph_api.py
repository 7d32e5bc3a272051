"""Root fields of the typed graph: ``node``, ``nodes``, ``atom``, ``atoms``, ``source``,
``lineageGraph`` (docs/graphql.md).

Every root field checks, once per request, that no purge of the caller's subject
is pending (LNK-6), beside its first load (``GraphLoaders.opened``: nothing it read
is shown unless the check passed), and loads through the request's DataLoaders. Ids of
another subject, purged atoms and ids that never existed all answer null.

``asOf`` (docs/time-travel.md) on ``node``, ``nodes``, ``atom``, ``atoms`` and
``lineageGraph`` reads the graph as it stood at that instant; what is loaded below
an object read at an instant is read at the same instant.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from enum import Enum
from typing import TYPE_CHECKING, Annotated

import strawberry
from strawberry.types import Info

from graphsvc.api.context import binding_of, service_of
from graphsvc.api.enums import LinkAt
from graphsvc.api.graph_entities import entities_connection, entity_by_key
from graphsvc.api.graph_ids import decode_cursor, decode_id, encode_cursor
from graphsvc.api.graph_loaders import loaders_of
from graphsvc.api.graph_types import (
    AS_OF,
    Atom,
    AtomState,
    Connection,
    Entity,
    EntityType,
    Node,
    SignatureStatus,
    Source,
    atom_from_row,
    page,
    revision_from_row,
    source_from_row,
)
from graphsvc.core.instants import as_of_instant, utc_z
from graphsvc.errors import InvalidInputError

if TYPE_CHECKING:
    from graphsvc.core.lineage_views import LineageGraphView

__all__ = ["GraphQuery", "LineageGraph", "LineageGraphEdge", "LineageGraphNode"]


@strawberry.enum(description="How a lineage graph node relates to the root.")
class LineageNodeKind(Enum):
    ROOT = strawberry.enum_value("root", description="The atom asked for.")
    LINEAGE = strawberry.enum_value("lineage", description="Reached over derives_from edges.")
    NEIGHBOUR = strawberry.enum_value(
        "neighbour", description="One ordinary link away from a lineage node."
    )


@strawberry.enum(description="The kind of a lineage graph edge.")
class LineageEdgeKind(Enum):
    DERIVES_FROM = strawberry.enum_value(
        "derives_from", description="Signed lineage (child → parent)."
    )
    LINK = strawberry.enum_value("link", description="An ordinary link between heads.")


@strawberry.type(description="An atom of a lineage graph (its head facts).")
class LineageGraphNode:
    atom_id: strawberry.ID = strawberry.field(description="The atom.")
    rev: int = strawberry.field(description="Its head revision number.")
    state: AtomState = strawberry.field(description="State of the head.")
    excerpt: str = strawberry.field(description="The head's text, cut to 280 characters.")
    kind: LineageNodeKind = strawberry.field(description="Root, lineage or neighbour.")
    level: int | None = strawberry.field(description="derives_from hops from the root.")
    atomised_into: int | None = strawberry.field(description="Atoms it was atomised into.")
    archived_at: str | None = strawberry.field(description="When it was archived.")
    as_of: strawberry.Private[str | None] = None

    @strawberry.field(description="The atom itself, to walk on (at the graph's asOf).")
    async def atom(self, info: Info) -> Atom | None:
        row = await loaders_of(info, self.as_of).atom.load(str(self.atom_id))
        return None if row is None else atom_from_row(row)


@strawberry.type(description="An edge of a lineage graph, with its signature checked.")
class LineageGraphEdge:
    source: strawberry.ID = strawberry.field(description="atomId of the edge's start.")
    target: strawberry.ID = strawberry.field(description="atomId of the edge's end.")
    kind: LineageEdgeKind = strawberry.field(description="derives_from or link.")
    from_rev: int | None = strawberry.field(description="Child revision (derives_from).")
    to_rev: int | None = strawberry.field(description="Parent revision (derives_from).")
    key_id: str | None = strawberry.field(description="Signing key id (derives_from).")
    signed_at: str | None = strawberry.field(description="Signing time (derives_from).")
    signature_status: SignatureStatus | None = strawberry.field(
        description="derives_from: the signature checked now; null for links."
    )
    role: str | None = strawberry.field(description="The link's role (link).")
    at: LinkAt | None = strawberry.field(description="The link's binding (link).")


@strawberry.type(description="Signed lineage and link neighbourhood of an atom (API-5), typed.")
class LineageGraph:
    root: strawberry.ID = strawberry.field(description="The atom asked for.")
    depth: int = strawberry.field(description="derives_from hops walked.")
    truncated: bool = strawberry.field(description="The walk hit its node bound.")
    nodes: list[LineageGraphNode] = strawberry.field(description="Atoms of the graph.")
    edges: list[LineageGraphEdge] = strawberry.field(description="Edges between them.")


def _lineage_graph(view: LineageGraphView, as_of: str | None = None) -> LineageGraph:
    return LineageGraph(
        root=strawberry.ID(view.root),
        depth=view.depth,
        truncated=view.truncated,
        nodes=[
            LineageGraphNode(
                atom_id=strawberry.ID(n.atom_id),
                rev=n.rev,
                state=AtomState(n.state),
                excerpt=n.excerpt,
                kind=LineageNodeKind(n.kind),
                level=n.level,
                atomised_into=n.atomised_into,
                archived_at=utc_z(n.archived_at),
                as_of=as_of,
            )
            for n in view.nodes
        ],
        edges=[
            LineageGraphEdge(
                source=strawberry.ID(e.source),
                target=strawberry.ID(e.target),
                kind=LineageEdgeKind(e.kind),
                from_rev=e.from_rev,
                to_rev=e.to_rev,
                key_id=e.key_id,
                signed_at=utc_z(e.signed_at),
                signature_status=SignatureStatus(e.signature_status)
                if e.signature_status
                else None,
                role=e.role,
                at=LinkAt(e.at) if e.at else None,
            )
            for e in view.edges
        ],
    )


AsOf = Annotated[datetime | None, strawberry.argument(description=AS_OF)]


async def _node(info: Info, global_id: str, as_of: str | None = None) -> Node | None:
    kind, key = decode_id(global_id)
    loaders = loaders_of(info, as_of)
    if kind == "Atom":
        row = await loaders.atom.load(key[0])
        return None if row is None else atom_from_row(row)
    if kind == "Revision":
        rev = await loaders.revision.load((key[0], key[1]))
        return None if rev is None else revision_from_row(rev)
    if kind == "Entity":
        return await entity_by_key(info, key[0])
    src = await loaders.source.load(key[0])
    return None if src is None else source_from_row(src)


@strawberry.type
class GraphQuery:
    @strawberry.field(
        description="Any object by its global id (Relay); null when it does not exist for "
        "the caller (never written, purged, or another subject's; with asOf, also "
        "when created after that instant). Sources and entities are always now."
    )
    async def node(self, info: Info, id: strawberry.ID, as_of: AsOf = None) -> Node | None:
        return await loaders_of(info).opened(_node(info, str(id), as_of_instant(as_of, "asOf")))

    @strawberry.field(
        description="Several objects by global id, in the order asked (at most "
        "graph_first_max); null where one does not exist for the caller."
    )
    async def nodes(
        self, info: Info, ids: list[strawberry.ID], as_of: AsOf = None
    ) -> list[Node | None]:
        loaders = loaders_of(info)
        if len(ids) > service_of(info).settings.graphql.max_first:
            raise InvalidInputError(
                f"ids: at most {service_of(info).settings.graphql.max_first} ids"
            )
        at = as_of_instant(as_of, "asOf")
        return list(await loaders.opened(asyncio.gather(*(_node(info, str(i), at) for i in ids))))

    @strawberry.field(
        description="One atom of the caller's subject by atomId, or null; with asOf, the "
        "atom as it stood then (null when created after it, or purged)."
    )
    async def atom(self, info: Info, atom_id: strawberry.ID, as_of: AsOf = None) -> Atom | None:
        loaders = loaders_of(info, as_of_instant(as_of, "asOf"))
        row = await loaders.opened(loaders.atom.load(str(atom_id)))
        return None if row is None else atom_from_row(row)

    @strawberry.field(
        description="The caller's atoms in atomId order; `state` filters on the head's "
        "state, `text` on a case-insensitive substring of the head's text; with asOf, "
        "the atoms that existed then, each with its head as of then."
    )
    async def atoms(
        self,
        info: Info,
        first: int | None = None,
        after: str | None = None,
        state: AtomState | None = None,
        text: str | None = None,
        as_of: AsOf = None,
    ) -> Connection[Atom]:
        loaders = loaders_of(info, as_of_instant(as_of, "asOf"))
        n = loaders.reader.page_size(first)
        pos = decode_cursor("atoms", after, str)[0] if after is not None else None
        rows = await loaders.opened(
            asyncio.to_thread(
                loaders.reader.atoms_page,
                after=pos,
                state=str(state.value) if state else None,
                text=text,
                limit=n + 1,
            )
        )
        for r in rows:
            loaders.prime_atom(r)
        return page(
            [(encode_cursor("atoms", r["atomId"]), atom_from_row(r)) for r in rows], n, after
        )

    @strawberry.field(
        description="A cited source by uri and version (and digest when several were "
        "declared), or null."
    )
    async def source(
        self,
        info: Info,
        uri: str,
        version: str | None = None,
        digest: str | None = None,
    ) -> Source | None:
        loaders = loaders_of(info)
        row = await loaders.opened(
            asyncio.to_thread(loaders.reader.source_lookup, uri, version, digest)
        )
        return None if row is None else source_from_row(row)

    @strawberry.field(
        description="The caller's entities (the entity index, SPEC §16) by key: `query` "
        "matches a key or alias fragment (any case), `type` one type."
    )
    async def entities(
        self,
        info: Info,
        query: str | None = None,
        type: EntityType | None = None,
        first: int | None = None,
        after: str | None = None,
    ) -> Connection[Entity]:
        return await entities_connection(
            info, query, None if type is None else str(type.value), first, after
        )

    @strawberry.field(
        description="Typed sibling of `lineage` (API-5): derives_from lineage and link "
        "neighbourhood as nodes and edges, each derives_from edge's signature verified "
        "(now, against today's keys); with asOf, heads and edges as of that instant."
    )
    async def lineage_graph(
        self,
        info: Info,
        atom_id: strawberry.ID,
        depth: int | None = None,
        as_of: AsOf = None,
    ) -> LineageGraph:
        binding = binding_of(info)
        service = service_of(info)
        at = as_of_instant(as_of, "asOf")
        view = await asyncio.to_thread(service.lineage_graph, binding, str(atom_id), depth, at)
        return _lineage_graph(view, at)
