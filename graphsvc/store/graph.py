"""Batched reads of the typed graph (``cypher/graph/``): one round trip per batch.

Every function takes the caller's subject and a batch of keys and runs one named
query; what does not exist in the subject (never written, purged, another
subject's) is simply missing from the answer. Nothing here writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from graphsvc.store.connection import Database

__all__ = [
    "atoms",
    "atoms_page",
    "citations",
    "cited_by_pages",
    "incoming_pages",
    "lineage_of",
    "link_pages",
    "revision_pages",
    "revisions",
    "source_lookup",
    "sources",
]

Row = dict[str, Any]


def atoms(db: Database, subject: str, atom_ids: Sequence[str]) -> dict[str, Row]:
    """``atomId → {atomId, createdAt, head}`` for the atoms that exist in ``subject``."""
    if not atom_ids:
        return {}
    rows = db.read_rows("graph/atoms", subject=subject, atomIds=list(dict.fromkeys(atom_ids)))
    return {r["atomId"]: r for r in rows}


def atoms_page(
    db: Database,
    subject: str,
    *,
    after: str | None,
    state: str | None,
    text: str | None,
    limit: int,
) -> list[Row]:
    """Up to ``limit`` atoms in atomId order after ``after`` (each with its head row)."""
    return db.read_rows(
        "graph/atoms_page", subject=subject, after=after, state=state, text=text, limit=limit
    )


def revisions(
    db: Database, subject: str, refs: Sequence[tuple[str, int]]
) -> dict[tuple[str, int], Row]:
    """``(atomId, rev) → revision row`` for the revisions that exist in ``subject``."""
    if not refs:
        return {}
    params = [{"atomId": a, "rev": r} for a, r in dict.fromkeys(refs)]
    rows = db.read_rows("graph/revisions", subject=subject, refs=params)
    return {(r["revision"]["atomId"], int(r["revision"]["rev"])): r["revision"] for r in rows}


def _paged(
    db: Database, name: str, subject: str, keys: Sequence[Row], field: str
) -> dict[str, list[Row]]:
    if not keys:
        return {}
    cap = max(int(k["limit"]) for k in keys)
    rows = db.read_rows(name, subject=subject, keys=list(keys), cap=cap)
    return {r["key"]: list(r[field]) for r in rows}


def revision_pages(db: Database, subject: str, keys: Sequence[Row]) -> dict[str, list[Row]]:
    """Per key ``{key, atomId, before, limit}``: revisions newest first."""
    return _paged(db, "graph/revisions_page", subject, keys, "revisions")


def link_pages(db: Database, subject: str, keys: Sequence[Row]) -> dict[str, list[Row]]:
    """Per key ``{key, atomId, rev, role, after, limit, withCitations?}``: links in order."""
    return _paged(db, "graph/links_page", subject, keys, "links")


def incoming_pages(db: Database, subject: str, keys: Sequence[Row]) -> dict[str, list[Row]]:
    """Per key ``{key, atomId, role, at, afterAtomId, afterOrdinal, limit}``."""
    return _paged(db, "graph/incoming_page", subject, keys, "links")


def cited_by_pages(db: Database, subject: str, keys: Sequence[Row]) -> dict[str, list[Row]]:
    """Per key ``{key, sourceKey | uri, afterAtomId, afterOrdinal, limit}``."""
    return _paged(db, "graph/cited_by_page", subject, keys, "citations")


def citations(
    db: Database, subject: str, refs: Sequence[tuple[str, int]]
) -> dict[tuple[str, int], list[Row]]:
    """``(atomId, rev) → citations`` in declared order."""
    if not refs:
        return {}
    params = [{"atomId": a, "rev": r} for a, r in dict.fromkeys(refs)]
    rows = db.read_rows("graph/citations", subject=subject, refs=params)
    return {(r["atomId"], int(r["rev"])): [c for c in r["citations"] if c] for r in rows}


def lineage_of(
    db: Database, subject: str, refs: Sequence[tuple[str, int]]
) -> dict[tuple[str, int], Row]:
    """``(atomId, rev) → {derivesFrom: [...], derivedInto: [...]}`` (signed edges)."""
    if not refs:
        return {}
    params = [{"atomId": a, "rev": r} for a, r in dict.fromkeys(refs)]
    rows = db.read_rows("graph/lineage_of", subject=subject, refs=params)
    return {
        (r["atomId"], int(r["rev"])): {
            "derivesFrom": [e for e in r["derivesFrom"] if e],
            "derivedInto": [e for e in r["derivedInto"] if e],
        }
        for r in rows
    }


def sources(db: Database, subject: str, keys: Sequence[str]) -> dict[str, Row]:
    """``sourceKey → {sourceKey, uri, version, digest}``."""
    if not keys:
        return {}
    rows = db.read_rows("graph/sources", subject=subject, keys=list(dict.fromkeys(keys)))
    return {r["sourceKey"]: r for r in rows}


def source_lookup(
    db: Database, subject: str, uri: str, version: str | None, digest: str | None
) -> Row | None:
    """The source with this uri and version (and digest, when given), or None."""
    rows = db.read_rows(
        "graph/source_lookup", subject=subject, uri=uri, version=version, digest=digest
    )
    return rows[0] if rows else None
