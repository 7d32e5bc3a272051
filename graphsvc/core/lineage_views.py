"""The typed lineage graph (``lineageGraph``, API-5): what the use case returns and the
GraphQL types wrap, field for field.

Built from :func:`graphsvc.atomise.lineage.lineage`'s camelCase document once, here,
so no resolver unpacks a dict.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["LineageEdgeView", "LineageGraphView", "LineageNodeView", "lineage_graph_view"]


@dataclass(frozen=True, slots=True)
class LineageNodeView:
    """An atom of the graph: its head facts and how it relates to the root."""

    atom_id: str
    rev: int
    state: str
    excerpt: str
    kind: str
    level: int | None
    atomised_into: int | None
    archived_at: str | None


@dataclass(frozen=True, slots=True)
class LineageEdgeView:
    """A derives_from edge (revisions, key, signature checked) or an ordinary link."""

    source: str
    target: str
    kind: str
    from_rev: int | None
    to_rev: int | None
    key_id: str | None
    signed_at: str | None
    signature_status: str | None
    role: str | None
    at: str | None


@dataclass(frozen=True, slots=True)
class LineageGraphView:
    root: str
    depth: int
    truncated: bool
    nodes: tuple[LineageNodeView, ...]
    edges: tuple[LineageEdgeView, ...]


def lineage_graph_view(doc: dict[str, Any]) -> LineageGraphView:
    """The view of a lineage document whose derives_from edges carry their checked
    ``signatureStatus``."""
    return LineageGraphView(
        root=str(doc["root"]),
        depth=int(doc["depth"]),
        truncated=bool(doc["truncated"]),
        nodes=tuple(
            LineageNodeView(
                atom_id=str(n["id"]),
                rev=int(n["rev"]),
                state=str(n["state"]),
                excerpt=n["text"],
                kind=str(n["kind"]),
                level=n["level"],
                atomised_into=n.get("atomisedInto"),
                archived_at=n.get("archivedAt"),
            )
            for n in doc["nodes"]
        ),
        edges=tuple(
            LineageEdgeView(
                source=str(e["source"]),
                target=str(e["target"]),
                kind=str(e["type"]),
                from_rev=e.get("fromRev"),
                to_rev=e.get("toRev"),
                key_id=e.get("keyId"),
                signed_at=e.get("signedAt"),
                signature_status=e.get("signatureStatus") or None,
                role=e.get("role"),
                at=e.get("at") or None,
            )
            for e in doc["edges"]
        ),
    )
