"""What the exports read: the analysts' pages (issue 17) and the forensic bundle's records.

Every function reads one named query for one subject. The analysts' pages are keyset
pages (``after`` the last key of the previous page, at most ``limit`` rows); values
stay as the driver decoded them (temporal values included), so the writer decides
how they are printed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypedDict, cast

from graphsvc.store.connection import Database

__all__ = [
    "AtomPageRow",
    "BundleLink",
    "BundleRevisionRow",
    "CiteRow",
    "EventRow",
    "LineageRow",
    "LinkRow",
    "RevisionRow",
    "SourceRow",
    "Window",
    "atoms_page",
    "bundle_revisions",
    "lineage_of",
    "revisions_of",
    "sources_page",
    "subject_events",
]


class LinkRow(TypedDict):
    """A head's link; an unavailable target (e.g. purged) names no atom and no rev."""

    role: str
    at: str
    required: bool
    orderKey: str | None
    unavailable: bool
    atomId: str | None
    rev: int | None


class CiteRow(TypedDict):
    sourceKey: str
    start: int | None
    end: int | None
    unit: str | None
    verified: bool


class AtomPageRow(TypedDict):
    """An atom at its head, with the head's links and citations in their order."""

    atomId: str
    rev: int
    state: str
    text: str | None
    tokens: int | None
    createdAt: Any
    revisedAt: Any
    atomOf: str | None
    atomisedInto: int | None
    archivedAt: Any
    actorKind: str
    actorId: str
    links: list[LinkRow]
    cites: list[CiteRow]


class LineageRow(TypedDict):
    """A signed derives_from edge (child → parent)."""

    fromAtomId: str
    fromRev: int
    toAtomId: str
    toRev: int
    signature: str | None
    keyId: str | None
    signedAt: Any


class RevisionRow(TypedDict):
    """A superseded revision."""

    atomId: str
    rev: int
    state: str
    text: str | None
    tokens: int | None
    createdAt: Any
    actorKind: str
    actorId: str


class SourceRow(TypedDict):
    sourceKey: str
    uri: str
    version: str | None
    digest: str | None


class BundleLink(TypedDict):
    role: str
    at: str
    required: bool
    orderKey: str | None
    unavailable: bool
    atomId: str | None
    rev: int | None


class BundleRevisionRow(TypedDict):
    """A stored revision as a forensic bundle holds it (``sources`` is its JSON text)."""

    atomId: str
    rev: int
    state: str
    text: str | None
    digest: str | None
    tokens: int | None
    sources: str | None
    createdAt: Any
    actorKind: str
    actorId: str
    policy: Any
    operationId: str | None
    atomOf: str | None
    atomisedInto: int | None
    archivedAt: Any
    atomIds: list[str] | None
    links: list[BundleLink]


class EventRow(TypedDict):
    """A stored ``(:SignedEvent)`` (``payload`` is its JSON text)."""

    sequence: int
    prevHash: str
    type: str
    payload: str
    signedAt: str
    keyId: str
    signature: str
    hash: str


# The as-of bound of an incremental export without --as-of: after any stored time.
_END_OF_TIME = "9999-12-31T23:59:59.999999+00:00"


@dataclass(frozen=True)
class Window:
    """What an export covers (docs/time-travel.md): the graph as of ``as_of`` (None:
    now) and, with ``since``, only atoms with a revision created since then."""

    as_of: str | None = None
    since: str | None = None

    @property
    def now(self) -> bool:
        return self.as_of is None and self.since is None

    def params(self) -> dict[str, Any]:
        return {"asOf": self.as_of or _END_OF_TIME, "since": self.since}


NOW = Window()


def atoms_page(
    db: Database, subject: str, after: str, limit: int, window: Window = NOW
) -> list[AtomPageRow]:
    """Up to ``limit`` atoms at their heads with ``atomId > after``, in atomId order."""
    if window.now:
        rows = db.read_rows("export/atoms_page", subject=subject, after=after, limit=limit)
    else:
        rows = db.read_rows(
            "asof/export_atoms_page", subject=subject, after=after, limit=limit, **window.params()
        )
    return cast(list[AtomPageRow], rows)


def lineage_of(
    db: Database, subject: str, atom_ids: list[str], window: Window = NOW
) -> list[LineageRow]:
    """The derives_from edges whose child is one of ``atom_ids``."""
    if window.as_of is None:
        rows = db.read_rows("export/lineage_page", subject=subject, atomIds=atom_ids)
    else:
        rows = db.read_rows(
            "asof/export_lineage", subject=subject, atomIds=atom_ids, asOf=window.as_of
        )
    return cast(list[LineageRow], rows)


def revisions_of(
    db: Database, subject: str, atom_ids: list[str], window: Window = NOW
) -> list[RevisionRow]:
    """The superseded revisions of ``atom_ids``."""
    if window.now:
        rows = db.read_rows("export/revisions_page", subject=subject, atomIds=atom_ids)
    else:
        rows = db.read_rows(
            "asof/export_revisions", subject=subject, atomIds=atom_ids, **window.params()
        )
    return cast(list[RevisionRow], rows)


def sources_page(db: Database, subject: str, after: str, limit: int) -> list[SourceRow]:
    """Up to ``limit`` cited sources with ``sourceKey > after``, in sourceKey order."""
    rows = db.read_rows("export/sources_page", subject=subject, after=after, limit=limit)
    return cast(list[SourceRow], rows)


def bundle_revisions(db: Database, subject: str, atom_ids: list[str]) -> list[BundleRevisionRow]:
    """Every revision of ``atom_ids``, in (atomId, rev) order."""
    rows = db.read("atomise/bundle_revisions", subject=subject, atomIds=atom_ids)
    return cast(list[BundleRevisionRow], rows)


def subject_events(db: Database, subject: str) -> list[EventRow]:
    """The subject's whole signed-event chain, in sequence order."""
    return cast(list[EventRow], db.read("atomise/subject_events", subject=subject))
