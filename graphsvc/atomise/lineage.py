"""Reading signed lineage (SPEC API-5, SIG-3): the graph around one atom.

``lineage`` returns nodes and edges for graph exploration: the derives_from lineage
in both directions (parent → atoms, atom → parent) up to ``depth`` hops, plus the
one-hop ordinary link neighbourhood of every lineage node. ``walk_lineage`` returns
the whole connected lineage component (bounded), which the forensic export uses.
Everything is read in one read transaction, filtered by subject.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from neo4j import ManagedTransaction

from graphsvc.core.binding import Binding
from graphsvc.errors import InvalidInputError, NotFoundError
from graphsvc.store.queries import query

if TYPE_CHECKING:
    from graphsvc.service import Service
    from graphsvc.store.connection import Database

__all__ = [
    "DEFAULT_LINEAGE_DEPTH",
    "MAX_LINEAGE_DEPTH",
    "MAX_LINEAGE_NODES",
    "LineageEdge",
    "LineageWalk",
    "lineage",
    "walk_lineage",
]

DEFAULT_LINEAGE_DEPTH: Final = 3
MAX_LINEAGE_DEPTH: Final = 16
# A bound on one walk: 10 atoms per atomisation, 3 levels, and repeated --force runs
# stay far below it; a pathological graph is cut, and the walk says so.
MAX_LINEAGE_NODES: Final = 5_000
_EXCERPT_CHARS: Final = 280


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


@dataclass
class LineageWalk:
    """Atoms reached over derives_from edges, with their head facts."""

    root: str
    depth_of: dict[str, int] = field(default_factory=dict)
    edges: list[LineageEdge] = field(default_factory=list)
    heads: dict[str, dict[str, Any]] = field(default_factory=dict)
    truncated: bool = False

    def children_of(self, atom_id: str) -> list[str]:
        """Atoms derived from any revision of ``atom_id``, oldest atomisation first."""
        found = [e for e in self.edges if e.to_atom_id == atom_id]

        def order(e: LineageEdge) -> tuple[str, int, str]:
            index = self.heads.get(e.from_atom_id, {}).get("atomIndex")
            return (e.signed_at, index if isinstance(index, int) else 0, e.from_atom_id)

        return list(dict.fromkeys(e.from_atom_id for e in sorted(found, key=order)))


def _run(tx: ManagedTransaction, name: str, **params: Any) -> list[dict[str, Any]]:
    return [r.data() for r in tx.run(query(name), params)]


def _walk(tx: ManagedTransaction, subject: str, root: str, depth: int | None) -> LineageWalk:
    rows = _run(tx, "atomise/lineage_nodes", subject=subject, atomIds=[root])
    if not rows:
        raise NotFoundError(f"atom {root} does not exist", details={"atomId": root})
    walk = LineageWalk(root=root, depth_of={root: 0})
    seen: set[tuple[str, int, str, int]] = set()
    frontier = [root]
    level = 0
    while frontier and (depth is None or level < depth):
        level += 1
        nxt: list[str] = []
        for row in _run(tx, "atomise/lineage_edges", subject=subject, atomIds=frontier):
            key = (row["fromAtomId"], row["fromRev"], row["toAtomId"], row["toRev"])
            if key in seen:
                continue
            seen.add(key)
            walk.edges.append(
                LineageEdge(
                    from_atom_id=row["fromAtomId"],
                    from_rev=int(row["fromRev"]),
                    to_atom_id=row["toAtomId"],
                    to_rev=int(row["toRev"]),
                    signature=row["signature"],
                    key_id=row["keyId"],
                    signed_at=row["signedAt"],
                )
            )
            for end in (row["fromAtomId"], row["toAtomId"]):
                if end in walk.depth_of:
                    continue
                if len(walk.depth_of) >= MAX_LINEAGE_NODES:
                    walk.truncated = True
                    continue
                walk.depth_of[end] = level
                nxt.append(end)
        frontier = nxt
    walk.edges = [
        e for e in walk.edges if e.from_atom_id in walk.depth_of and e.to_atom_id in walk.depth_of
    ]
    for row in _run(tx, "atomise/lineage_nodes", subject=subject, atomIds=list(walk.depth_of)):
        walk.heads[row["atomId"]] = row
    return walk


def walk_lineage(
    db: Database, binding: Binding, atom_id: str, *, depth: int | None = None
) -> LineageWalk:
    """The lineage component around ``atom_id`` (``depth=None``: all of it, bounded).

    Raises:
        NotFoundError: no such atom in the caller's subject.
    """
    return db.read_tx(lambda tx: _walk(tx, binding.subject, atom_id, depth), label="lineage")


def lineage(
    service: Service, binding: Binding, atom_id: str, depth: int | None = None
) -> dict[str, Any]:
    """Nodes and edges for graph exploration (API-5).

    Args:
        service: the service.
        binding: the caller (its subject filters everything).
        atom_id: the root atom.
        depth: derives_from hops from the root, in [0, 16]; default 3.

    Returns:
        ``{root, depth, truncated, nodes: [...], edges: [...]}``. A node is
        ``{id, rev, state, text (excerpt), atomOf, atomisedInto, archivedAt, kind,
        level}`` with ``kind`` ``root`` | ``lineage`` | ``neighbour``; an edge is
        ``{source, target, type: derives_from, fromRev, toRev, keyId, signedAt}`` or
        ``{source, target, type: link, role, at}``.

    Raises:
        InvalidInputError: depth out of range.
        NotFoundError: no such atom in the caller's subject.
    """
    depth = DEFAULT_LINEAGE_DEPTH if depth is None else depth
    if isinstance(depth, bool) or not 0 <= depth <= MAX_LINEAGE_DEPTH:
        raise InvalidInputError(f"depth must be in 0..{MAX_LINEAGE_DEPTH}")
    subject = binding.subject

    def work(tx: ManagedTransaction) -> dict[str, Any]:
        walk = _walk(tx, subject, atom_id, depth)
        ids = list(walk.depth_of)
        link_edges: dict[tuple[str, str, str, str], dict[str, Any]] = {}
        for row in _run(tx, "atomise/link_edges", subject=subject, atomIds=ids):
            for e in row["edges"]:
                if e is None or e.get("dst") is None:
                    continue
                key = (e["src"], e["dst"], e["role"], e["at"])
                link_edges[key] = {
                    "source": e["src"],
                    "target": e["dst"],
                    "type": "link",
                    "role": e["role"],
                    "at": e["at"],
                }
        neighbours = sorted(
            {end for (src, dst, _, _) in link_edges for end in (src, dst)} - set(ids)
        )
        heads = dict(walk.heads)
        if neighbours:
            for row in _run(tx, "atomise/lineage_nodes", subject=subject, atomIds=neighbours):
                heads[row["atomId"]] = row
        nodes = [
            _node(heads[aid], "root" if aid == atom_id else "lineage", walk.depth_of[aid])
            for aid in ids
            if aid in heads
        ]
        nodes += [_node(heads[aid], "neighbour", None) for aid in neighbours if aid in heads]
        edges = [
            {
                "source": e.from_atom_id,
                "target": e.to_atom_id,
                "type": "derives_from",
                "fromRev": e.from_rev,
                "toRev": e.to_rev,
                "keyId": e.key_id,
                "signedAt": e.signed_at,
            }
            for e in walk.edges
        ]
        edges += [e for e in link_edges.values() if e["source"] in heads and e["target"] in heads]
        return {
            "root": atom_id,
            "depth": depth,
            "truncated": walk.truncated,
            "nodes": nodes,
            "edges": edges,
        }

    return service.db.read_tx(work, label="lineage")


def _node(row: dict[str, Any], kind: str, level: int | None) -> dict[str, Any]:
    text = row.get("text") or ""
    return {
        "id": row["atomId"],
        "rev": row["rev"],
        "state": row["state"],
        "text": text if len(text) <= _EXCERPT_CHARS else text[: _EXCERPT_CHARS - 1] + "…",
        "atomOf": row.get("atomOf"),
        "atomisedInto": row.get("atomisedInto"),
        "archivedAt": row.get("archivedAt"),
        "kind": kind,
        "level": level,
    }
