"""The entity index's root fields in the typed graph (SPEC §16, ENT-5): ``entities``
and the ``Entity`` node lookup. The types (Entity, its mentions, ``Atom.entities``)
live with Atom in :mod:`graphsvc.api.graph_types`: they refer to each other.

An entity belongs to the caller's subject (every read names it); its global id is
``Entity`` + key. ``Atom.entities`` is the head's list (bounded by the text);
``Entity.mentions`` and ``entities`` are connections (``first`` ≤ graph_first_max).
"""

from __future__ import annotations

import asyncio

from strawberry.types import Info

from graphsvc.api.graph_ids import decode_cursor, encode_cursor
from graphsvc.api.graph_loaders import loaders_of
from graphsvc.api.graph_types import Connection, Entity, entity_from_view, page

__all__ = ["entities_connection", "entity_by_key"]


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
