"""Batched reads of the typed graph (``cypher/graph/``): one round trip per batch.

Every function takes the caller's subject and a batch of keys and runs one named
query; what does not exist in the subject (never written, purged, another
subject's) is simply missing from the answer. Nothing here writes.

With ``as_of`` (an ISO-8601 UTC instant, docs/time-travel.md) the atom, revision,
page and citation reads run their ``cypher/asof/`` twin instead: the graph as it
stood at that instant.
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


def _named(now: str, then: str, as_of: str | None) -> tuple[str, dict[str, Any]]:
    """The query to run (``now``, or its ``asof/`` twin ``then`` as of an instant) and
    its extra parameters."""
    if as_of is None:
        return now, {}
    return then, {"asOf": as_of}


def atoms(
    db: Database, subject: str, atom_ids: Sequence[str], as_of: str | None = None
) -> dict[str, Row]:
    """``atomId → {atomId, createdAt, head}`` for the atoms that exist in ``subject``."""
    if not atom_ids:
        return {}
    name, extra = _named("graph/atoms", "asof/atoms", as_of)
    rows = db.read_rows(name, subject=subject, atomIds=list(dict.fromkeys(atom_ids)), **extra)
    return {r["atomId"]: r for r in rows}


def atoms_page(
    db: Database,
    subject: str,
    *,
    after: str | None,
    state: str | None,
    text: str | None,
    limit: int,
    as_of: str | None = None,
) -> list[Row]:
    """Up to ``limit`` atoms in atomId order after ``after`` (each with its head row)."""
    name, extra = _named("graph/atoms_page", "asof/atoms_page", as_of)
    return db.read_rows(
        name, subject=subject, after=after, state=state, text=text, limit=limit, **extra
    )


def revisions(
    db: Database, subject: str, refs: Sequence[tuple[str, int]], as_of: str | None = None
) -> dict[tuple[str, int], Row]:
    """``(atomId, rev) → revision row`` for the revisions that exist in ``subject``."""
    if not refs:
        return {}
    params = [{"atomId": a, "rev": r} for a, r in dict.fromkeys(refs)]
    name, extra = _named("graph/revisions", "asof/revisions", as_of)
    rows = db.read_rows(name, subject=subject, refs=params, **extra)
    return {(r["revision"]["atomId"], int(r["revision"]["rev"])): r["revision"] for r in rows}


def _paged(
    db: Database,
    names: tuple[str, str],
    subject: str,
    keys: Sequence[Row],
    field: str,
    as_of: str | None = None,
) -> dict[str, list[Row]]:
    if not keys:
        return {}
    cap = max(int(k["limit"]) for k in keys)
    name, extra = _named(*names, as_of)
    rows = db.read_rows(name, subject=subject, keys=list(keys), cap=cap, **extra)
    return {r["key"]: list(r[field]) for r in rows}


def revision_pages(
    db: Database, subject: str, keys: Sequence[Row], as_of: str | None = None
) -> dict[str, list[Row]]:
    """Per key ``{key, atomId, before, limit}``: revisions newest first."""
    return _paged(
        db, ("graph/revisions_page", "asof/revisions_page"), subject, keys, "revisions", as_of
    )


def link_pages(
    db: Database, subject: str, keys: Sequence[Row], as_of: str | None = None
) -> dict[str, list[Row]]:
    """Per key ``{key, atomId, rev, role, after, limit, withCitations?}``: links in order."""
    return _paged(db, ("graph/links_page", "asof/links_page"), subject, keys, "links", as_of)


def incoming_pages(
    db: Database, subject: str, keys: Sequence[Row], as_of: str | None = None
) -> dict[str, list[Row]]:
    """Per key ``{key, atomId, role, at, afterAtomId, afterOrdinal, limit}``."""
    return _paged(db, ("graph/incoming_page", "asof/incoming_page"), subject, keys, "links", as_of)


def cited_by_pages(db: Database, subject: str, keys: Sequence[Row]) -> dict[str, list[Row]]:
    """Per key ``{key, sourceKey | uri, afterAtomId, afterOrdinal, limit}``."""
    return _paged(db, ("graph/cited_by_page", ""), subject, keys, "citations")


def citations(
    db: Database, subject: str, refs: Sequence[tuple[str, int]], as_of: str | None = None
) -> dict[tuple[str, int], list[Row]]:
    """``(atomId, rev) → citations`` in declared order."""
    if not refs:
        return {}
    params = [{"atomId": a, "rev": r} for a, r in dict.fromkeys(refs)]
    name, extra = _named("graph/citations", "asof/citations", as_of)
    rows = db.read_rows(name, subject=subject, refs=params, **extra)
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
