"""Reads of the entity index for its surfaces (ENT-5): the typed graph, exports, tests.

Every read names the caller's subject: an entity of another subject is not found.
Pages are keyset pages (``after`` a key or an atom id, ``limit`` = ``first + 1`` so
the caller knows whether another page exists).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from graphsvc.core.views import EntityView, MentionView
from graphsvc.store.connection import Database

__all__ = [
    "entities_by_keys",
    "entities_of_atoms",
    "entities_page",
    "mentions_page",
]


def _view(row: dict[str, Any]) -> EntityView:
    return EntityView(
        key=row["key"],
        name=row["name"] or row["key"],
        type=row["type"] or "name",
        aliases=tuple(row["aliases"] or ()),
        mentions=int(row["mentions"] or 0),
        count=int(row.get("count") or 0),
    )


def entities_of_atoms(
    db: Database, subject: str, atom_ids: Sequence[str]
) -> dict[str, list[EntityView]]:
    """atomId → the entities its current head mentions (by key); absent: none."""
    if not atom_ids:
        return {}
    rows = db.read("entities/of_atoms", subject=subject, atomIds=list(dict.fromkeys(atom_ids)))
    return {r["atomId"]: [_view(e) for e in r["entities"]] for r in rows}


def entities_page(
    db: Database,
    subject: str,
    *,
    query: str | None,
    type_: str | None,
    after: str | None,
    limit: int,
) -> list[EntityView]:
    """Up to ``limit`` entities of ``subject`` by key after ``after``; ``query`` is a
    normalised key fragment (None: every entity)."""
    rows = db.read(
        "entities/page", subject=subject, query=query, type=type_, after=after, limit=limit
    )
    return [_view(r) for r in rows]


def mentions_page(
    db: Database, subject: str, key: str, *, after: str | None, limit: int
) -> list[MentionView]:
    """Up to ``limit`` current heads mentioning the entity ``key``, by atomId."""
    rows = db.read("entities/mentions_page", subject=subject, key=key, after=after, limit=limit)
    return [MentionView(r["atomId"], int(r["rev"]), int(r["count"] or 1), r["name"]) for r in rows]


def entities_by_keys(db: Database, subject: str, keys: Sequence[str]) -> dict[str, EntityView]:
    """key → the entity of ``subject`` with that key (absent: none)."""
    if not keys:
        return {}
    rows = db.read("entities/by_keys", subject=subject, keys=list(dict.fromkeys(keys)))
    return {r["key"]: _view(r) for r in rows}
