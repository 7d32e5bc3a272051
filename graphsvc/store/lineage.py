"""Signed lineage as stored (SPEC API-5, SIG-3): derives_from edges, heads, link hops.

Every function reads inside the caller's transaction (``Tx``), so one walk over
the lineage graph is one read transaction; everything is filtered by subject.
With ``as_of`` (docs/time-travel.md) each read runs its ``cypher/asof/`` twin: heads
as of that instant, edges that existed then.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypedDict, cast

from graphsvc.store.connection import Tx, run

__all__ = ["LineageEdge", "LineageHead", "LinkEdge", "derives_from_edges", "heads", "link_edges"]


@dataclass(frozen=True)
class LineageEdge:
    """One signed derives_from edge as stored."""

    from_atom_id: str
    from_rev: int
    to_atom_id: str
    to_rev: int
    signature: str
    key_id: str
    signed_at: str

    @property
    def key(self) -> tuple[str, int, str, int]:
        return (self.from_atom_id, self.from_rev, self.to_atom_id, self.to_rev)

    def signable(self, subject: str) -> dict[str, Any]:
        """The SignableLink map plus ``signature`` (the bundle's lineage record)."""
        return {
            "v": 1,
            "subject": subject,
            "from": {"atomId": self.from_atom_id, "rev": self.from_rev},
            "to": {"atomId": self.to_atom_id, "rev": self.to_rev},
            "relation": "derives_from",
            "signedAt": self.signed_at,
            "keyId": self.key_id,
            "signature": self.signature,
        }


class LineageHead(TypedDict):
    """Head facts of one atom (a node of a lineage graph or bundle)."""

    atomId: str
    rev: int
    state: str
    text: str | None
    atomOf: str | None
    atomisedInto: int | None
    archivedAt: str | None
    atomIds: list[str] | None
    atomIndex: int | None
    createdAt: str | None


class LinkEdge(TypedDict):
    """One ordinary link between two heads (``at``: observed | logical)."""

    src: str
    dst: str
    role: str
    at: str


def heads(
    tx: Tx, subject: str, atom_ids: Sequence[str], as_of: str | None = None
) -> list[LineageHead]:
    """Head facts of the atoms of ``subject`` among ``atom_ids`` (missing ones left out)."""
    if as_of is None:
        rows = run(tx, "atomise/lineage_nodes", subject=subject, atomIds=list(atom_ids))
    else:
        rows = run(tx, "asof/lineage_nodes", subject=subject, atomIds=list(atom_ids), asOf=as_of)
    return [cast(LineageHead, row) for row in rows]


def derives_from_edges(
    tx: Tx, subject: str, atom_ids: Sequence[str], as_of: str | None = None
) -> list[LineageEdge]:
    """Signed derives_from edges touching any revision of the atoms, both directions."""
    if as_of is None:
        rows = run(tx, "atomise/lineage_edges", subject=subject, atomIds=list(atom_ids))
    else:
        rows = run(tx, "asof/lineage_edges", subject=subject, atomIds=list(atom_ids), asOf=as_of)
    return [
        LineageEdge(
            from_atom_id=row["fromAtomId"],
            from_rev=int(row["fromRev"]),
            to_atom_id=row["toAtomId"],
            to_rev=int(row["toRev"]),
            signature=row["signature"],
            key_id=row["keyId"],
            signed_at=row["signedAt"],
        )
        for row in rows
    ]


def link_edges(
    tx: Tx, subject: str, atom_ids: Sequence[str], as_of: str | None = None
) -> list[LinkEdge]:
    """One hop of the link graph around the atoms' heads, both directions.

    Unavailable links are left out (they never name their target, LNK-2).
    """
    if as_of is None:
        rows = run(tx, "atomise/link_edges", subject=subject, atomIds=list(atom_ids))
    else:
        rows = run(tx, "asof/link_edges", subject=subject, atomIds=list(atom_ids), asOf=as_of)
    return [
        LinkEdge(src=e["src"], dst=e["dst"], role=e["role"], at=e["at"])
        for row in rows
        for e in row["edges"]
        if e is not None and e.get("dst") is not None
    ]
