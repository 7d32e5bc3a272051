"""The entity index in the typed graph (SPEC §16, ENT-5): Entity, its mentions, the
``entities`` root field and ``Atom.entities``.

An entity belongs to the caller's subject (every read names it); its global id is
``Entity`` + key. ``Atom.entities`` is the head's list (bounded by the text);
``Entity.mentions`` and ``entities`` are connections (``first`` ≤ graph_first_max).
"""

from __future__ import annotations

import asyncio
from enum import Enum
from typing import TYPE_CHECKING

import strawberry
from strawberry.types import Info

from graphsvc.api.graph_ids import decode_cursor, encode_cursor, encode_id
from graphsvc.api.graph_loaders import loaders_of
from graphsvc.api.graph_types import Atom, Connection, Node, atom_from_row, page
from graphsvc.core.entity_keys import ENTITY_TYPES

if TYPE_CHECKING:
    from graphsvc.core.views import EntityView

__all__ = [
    "Entity",
    "EntityMention",
    "EntityType",
    "atom_entities",
    "entities_connection",
    "entity_by_key",
    "entity_from_view",
]


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


async def entity_by_key(info: Info, key: str) -> Entity | None:
    loaders = loaders_of(info)
    found = await asyncio.to_thread(loaders.reader.entities_by_keys, [key])
    view = found.get(key)
    return None if view is None else entity_from_view(view)


async def entities_connection(
    info: Info,
    query: str | None,
    type_: str | None,
    first: int | None,
    after: str | None,
) -> Connection[Entity]:
    """The caller's entities by key; ``query`` matches keys and aliases (any case)."""
    loaders = loaders_of(info)
    n = loaders.reader.page_size(first)
    pos = decode_cursor("entities", after, str)[0] if after is not None else None
    views = await loaders.opened(
        asyncio.to_thread(
            loaders.reader.entities_page, query=query, type_=type_, after=pos, limit=n + 1
        )
    )
    items = [(encode_cursor("entities", v.key), entity_from_view(v)) for v in views]
    return page(items, n, after)
