"""Reading signed lineage (SPEC API-5, SIG-3): the graph around one atom.

``lineage`` returns nodes and edges for graph exploration: the derives_from lineage
in both directions (parent → atoms, atom → parent) up to ``depth`` hops, plus the
one-hop ordinary link neighbourhood of every lineage node. ``walk_lineage`` returns
the whole connected lineage component (bounded), which the forensic export uses.
Everything is read in one read transaction (:mod:`graphsvc.store.lineage`),
filtered by subject.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from graphsvc.core.binding import Binding
from graphsvc.core.input_bounds import excerpt
from graphsvc.errors import InvalidInputError, NotFoundError
from graphsvc.store import lineage as store
from graphsvc.store.connection import Database, Tx
from graphsvc.store.lineage import LineageEdge, LineageHead, LinkEdge

__all__ = [
    "DEFAULT_LINEAGE_DEPTH",
    "MAX_LINEAGE_DEPTH",
    "MAX_LINEAGE_NODES",
    "Lineage",
    "LineageDerivation",
    "LineageEdge",
    "LineageLink",
    "LineageNode",
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
class LineageNode:
    """An atom of the lineage graph: its head facts, an excerpt of its text, and
    ``kind`` ``root`` | ``lineage`` | ``neighbour`` (``level``: derives_from hops from
    the root; None for a neighbour)."""

    atom_id: str
    rev: int
    state: str
    excerpt: str
    atom_of: str | None
    atomised_into: int | None
    archived_at: str | None
    kind: str
    level: int | None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.atom_id,
            "rev": self.rev,
            "state": self.state,
            "text": self.excerpt,
            "atomOf": self.atom_of,
            "atomisedInto": self.atomised_into,
            "archivedAt": self.archived_at,
            "kind": self.kind,
            "level": self.level,
        }


@dataclass(frozen=True)
class LineageDerivation:
    """A signed derives_from edge: revision ``from_rev`` of ``source`` was derived from
    revision ``to_rev`` of ``target``."""

    source: str
    target: str
    from_rev: int
    to_rev: int
    key_id: str
    signed_at: str

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "target": self.target,
            "type": "derives_from",
            "fromRev": self.from_rev,
            "toRev": self.to_rev,
            "keyId": self.key_id,
            "signedAt": self.signed_at,
        }


@dataclass(frozen=True)
class LineageLink:
    """An ordinary link between two atoms of the graph."""

    source: str
    target: str
    role: str
    at: str

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "target": self.target,
            "type": "link",
            "role": self.role,
            "at": self.at,
        }


@dataclass(frozen=True)
class Lineage:
    """The lineage and link neighbourhood of ``root`` (API-5); ``truncated``: the
    walk stopped at ``MAX_LINEAGE_NODES``."""

    root: str
    depth: int
    truncated: bool
    nodes: tuple[LineageNode, ...]
    edges: tuple[LineageDerivation | LineageLink, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "root": self.root,
            "depth": self.depth,
            "truncated": self.truncated,
            "nodes": [n.to_json() for n in self.nodes],
            "edges": [e.to_json() for e in self.edges],
        }


@dataclass
class LineageWalk:
    """Atoms reached over derives_from edges, with their head facts."""

    root: str
    depth_of: dict[str, int] = field(default_factory=dict)
    edges: list[LineageEdge] = field(default_factory=list)
    heads: dict[str, LineageHead] = field(default_factory=dict)
    truncated: bool = False

    def children_of(self, atom_id: str) -> list[str]:
        """Atoms derived from any revision of ``atom_id``, oldest atomisation first."""
        found = [e for e in self.edges if e.to_atom_id == atom_id]

        def order(e: LineageEdge) -> tuple[str, int, str]:
            head = self.heads.get(e.from_atom_id)
            index = head.get("atomIndex") if head is not None else None
            return (e.signed_at, index if isinstance(index, int) else 0, e.from_atom_id)

        return list(dict.fromkeys(e.from_atom_id for e in sorted(found, key=order)))

    def reach(self, edge: LineageEdge, level: int) -> list[str]:
        """Record ``edge``; the atoms it reaches first (at ``level``), within the bound."""
        self.edges.append(edge)
        reached: list[str] = []
        for end in (edge.from_atom_id, edge.to_atom_id):
            if end in self.depth_of:
                continue
            if len(self.depth_of) >= MAX_LINEAGE_NODES:
                self.truncated = True
                continue
            self.depth_of[end] = level
            reached.append(end)
        return reached


def _walk(
    tx: Tx, subject: str, root: str, depth: int | None, as_of: str | None = None
) -> LineageWalk:
    if not store.heads(tx, subject, [root], as_of):
        raise NotFoundError(
            f"atom {excerpt(root)} does not exist", details={"atomId": excerpt(root)}
        )
    walk = LineageWalk(root=root, depth_of={root: 0})
    seen: set[tuple[str, int, str, int]] = set()
    frontier = [root]
    level = 0
    while frontier and (depth is None or level < depth):
        level += 1
        nxt: list[str] = []
        for edge in store.derives_from_edges(tx, subject, frontier, as_of):
            if edge.key in seen:
                continue
            seen.add(edge.key)
            nxt.extend(walk.reach(edge, level))
        frontier = nxt
    walk.edges = [
        e for e in walk.edges if e.from_atom_id in walk.depth_of and e.to_atom_id in walk.depth_of
    ]
    for head in store.heads(tx, subject, list(walk.depth_of), as_of):
        walk.heads[head["atomId"]] = head
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
    db: Database,
    binding: Binding,
    atom_id: str,
    depth: int | None = None,
    as_of: str | None = None,
) -> Lineage:
    """Nodes and edges for graph exploration (API-5).

    Args:
        db: the store.
        binding: the caller (its subject filters everything).
        atom_id: the root atom.
        depth: derives_from hops from the root, in [0, 16]; default 3.
        as_of: read the graph as of this instant (docs/time-travel.md); None: now.

    Returns:
        The graph; its ``to_json`` is ``{root, depth, truncated, nodes: [...],
        edges: [...]}``, a node ``{id, rev, state, text (excerpt), atomOf,
        atomisedInto, archivedAt, kind, level}``, an edge ``{source, target, type:
        derives_from, fromRev, toRev, keyId, signedAt}`` or ``{source, target, type:
        link, role, at}``.

    Raises:
        InvalidInputError: depth out of range.
        NotFoundError: no such atom in the caller's subject.
    """
    depth = DEFAULT_LINEAGE_DEPTH if depth is None else depth
    if isinstance(depth, bool) or not 0 <= depth <= MAX_LINEAGE_DEPTH:
        raise InvalidInputError(f"depth must be in 0..{MAX_LINEAGE_DEPTH}")
    subject = binding.subject

    def work(tx: Tx) -> Lineage:
        walk = _walk(tx, subject, atom_id, depth, as_of)
        ids = list(walk.depth_of)
        links = _link_edges(store.link_edges(tx, subject, ids, as_of))
        neighbours = sorted({end for (src, dst, _, _) in links for end in (src, dst)} - set(ids))
        heads = dict(walk.heads)
        if neighbours:
            for head in store.heads(tx, subject, neighbours, as_of):
                heads[head["atomId"]] = head
        return _graph(walk, atom_id, depth, heads, neighbours, links)

    return db.read_tx(work, label="lineage")


def _link_edges(found: list[LinkEdge]) -> dict[tuple[str, str, str, str], LineageLink]:
    """The link edges of the graph, one per (source, target, role, at)."""
    return {
        (e["src"], e["dst"], e["role"], e["at"]): LineageLink(
            e["src"], e["dst"], e["role"], e["at"]
        )
        for e in found
    }


def _graph(
    walk: LineageWalk,
    root: str,
    depth: int,
    heads: dict[str, LineageHead],
    neighbours: list[str],
    links: dict[tuple[str, str, str, str], LineageLink],
) -> Lineage:
    ids = list(walk.depth_of)
    nodes = [
        _node(heads[aid], "root" if aid == root else "lineage", walk.depth_of[aid])
        for aid in ids
        if aid in heads
    ]
    nodes += [_node(heads[aid], "neighbour", None) for aid in neighbours if aid in heads]
    edges: list[LineageDerivation | LineageLink] = [
        LineageDerivation(e.from_atom_id, e.to_atom_id, e.from_rev, e.to_rev, e.key_id, e.signed_at)
        for e in walk.edges
    ]
    edges += [e for e in links.values() if e.source in heads and e.target in heads]
    return Lineage(root, depth, walk.truncated, tuple(nodes), tuple(edges))


def _node(row: LineageHead, kind: str, level: int | None) -> LineageNode:
    text = row.get("text") or ""
    return LineageNode(
        atom_id=row["atomId"],
        rev=row["rev"],
        state=row["state"],
        excerpt=text if len(text) <= _EXCERPT_CHARS else text[: _EXCERPT_CHARS - 1] + "…",
        atom_of=row.get("atomOf"),
        atomised_into=row.get("atomisedInto"),
        archived_at=row.get("archivedAt"),
        kind=kind,
        level=level,
    )
