"""Acquisition in Neo4j: candidates from both indexes and the retrieval graph, one snapshot.

Everything a ranking needs is read in ONE read transaction (one snapshot, RD-1):
vector candidates (falling back to an exact scan of the subject when the shared
index's top-k held too few of its atoms), fulltext candidates, one query per BFS
level of the retrieval graph (``depth`` round trips on the same connection), and
the usage state of the graph's nodes (head facts ride along with the rows).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from neo4j import ManagedTransaction

from graphsvc.core.lucene import fulltext_query
from graphsvc.store.connection import Database
from graphsvc.store.queries import query

__all__ = ["Acquired", "acquire"]


@dataclass
class Acquired:
    """Raw facts of one acquisition (no scoring yet)."""

    semantic: dict[str, float] = field(default_factory=dict)  # atomId -> neo4j score
    lexical: dict[str, float] = field(default_factory=dict)  # atomId -> lucene score
    lexical_semantic: dict[str, float | None] = field(default_factory=dict)
    revs: dict[str, int] = field(default_factory=dict)
    edges: list[tuple[str, str, str]] = field(default_factory=list)
    facts: dict[str, dict[str, Any]] = field(default_factory=dict)
    vector_mode: str = "index"
    truncated: bool = False
    levels: int = 0


def _has_word(text: str) -> bool:
    return any(ch.isalnum() for ch in text)


def _facts(row: dict[str, Any]) -> dict[str, Any]:
    return {"rev": row["rev"], "atomisedInto": row["atomisedInto"], "archivedAt": row["archivedAt"]}


def _run(tx: ManagedTransaction, name: str, **params: Any) -> list[dict[str, Any]]:
    return [r.data() for r in tx.run(query(name), params)]


def acquire(
    db: Database,
    *,
    subject: str,
    policy: str,
    model_id: str,
    text: str,
    embedding: list[float] | None,
    depth: int,
    max_seeds: int,
    oversample: int,
    max_nodes: int,
    max_edges: int,
    include_archived: bool,
    seeds_from: Any,
) -> Acquired:
    """Read candidates, the retrieval graph and node facts in one snapshot.

    ``seeds_from(acquired) -> list[str]`` picks the seed atom ids from the fused
    candidates (the pure core decides; the store only reads).
    """

    def work(tx: ManagedTransaction) -> Acquired:
        acq = Acquired()
        # atomId -> {rev, atomisedInto, archivedAt} of its current head, gathered from
        # the candidate and expansion rows themselves (no per-node lookup afterwards).
        head_facts: dict[str, dict[str, Any]] = {}
        k = max_seeds * oversample
        if embedding is not None:
            # The vector index is shared by all subjects and filtered afterwards, so
            # a subject may hold few of the global top-k: widen k once, then scan the
            # subject exactly (cheap exactly when the subject is small).
            rows = []
            for widen in (1, 8):
                rows = _run(
                    tx,
                    "search/vector_candidates",
                    k=k * widen,
                    embedding=embedding,
                    subject=subject,
                    includeArchived=include_archived,
                    limit=max_seeds,
                )
                if len(rows) >= max_seeds:
                    break
            if len(rows) < max_seeds:
                acq.vector_mode = "exact"
                rows = _run(
                    tx,
                    "search/vector_candidates_exact",
                    embedding=embedding,
                    subject=subject,
                    includeArchived=include_archived,
                    limit=max_seeds,
                )
            for row in rows:
                acq.semantic[row["atomId"]] = float(row["semantic"])
                acq.revs[row["atomId"]] = int(row["rev"])
                head_facts[row["atomId"]] = _facts(row)
        # Text without a letter or digit gives Lucene's analyzer no term at all; the
        # query would shrink to its subject clause and match every atom alike.
        lucene = fulltext_query(text, subject) if _has_word(text) else None
        if lucene is not None:
            rows = _run(
                tx,
                "search/fulltext_candidates",
                lucene=lucene,
                k=k,
                subject=subject,
                includeArchived=include_archived,
                embedding=embedding or [0.0],
                limit=max_seeds,
            )
            for row in rows:
                acq.lexical[row["atomId"]] = float(row["lexical"])
                acq.lexical_semantic[row["atomId"]] = (
                    None if embedding is None or row["semantic"] is None else float(row["semantic"])
                )
                acq.revs[row["atomId"]] = int(row["rev"])
                head_facts[row["atomId"]] = _facts(row)
        seeds: list[str] = seeds_from(acq)
        nodes: dict[str, None] = dict.fromkeys(seeds)
        frontier = list(seeds)
        seen_edges: set[tuple[str, str, str]] = set()
        for _ in range(depth):
            if not frontier:
                break
            acq.levels += 1
            nxt: list[str] = []
            for row in _run(tx, "search/expand_level", subject=subject, frontier=frontier):
                for e in row["edges"]:
                    head_facts.setdefault(
                        e["node"],
                        {"rev": e["rev"], "atomisedInto": e["into"], "archivedAt": e["arch"]},
                    )
                    edge = (e["src"], e["dst"], e["role"])
                    if edge in seen_edges:
                        continue
                    if len(seen_edges) >= max_edges:
                        acq.truncated = True
                        break
                    for end in (edge[0], edge[1]):
                        if end not in nodes:
                            if len(nodes) >= max_nodes:
                                acq.truncated = True
                                break
                            nodes[end] = None
                            nxt.append(end)
                    if edge[0] in nodes and edge[1] in nodes:
                        seen_edges.add(edge)
            frontier = nxt
        acq.edges = sorted(seen_edges)
        usage = {
            (row["atomId"], row["rev"]): row["state"]
            for row in _run(
                tx,
                "search/usage_states",
                subject=subject,
                policy=policy,
                modelId=model_id,
                atomIds=list(nodes),
            )
        }
        for atom_id in nodes:
            facts = head_facts.get(atom_id)
            if facts is None:  # a seed always has facts; defensive for odd graphs
                continue
            acq.facts[atom_id] = {
                "atomId": atom_id,
                **facts,
                "usage": usage.get((atom_id, facts["rev"])),
            }
        return acq

    return db.read_tx(work, label="acquire")
