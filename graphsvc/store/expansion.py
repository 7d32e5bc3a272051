"""Reads of the retrieval graph: link levels, entity hops, similar heads, usage states.

Plain reads in the caller's read transaction (a big frontier's second half, the
entity hop and the similar heads in transactions of their own beside it:
:meth:`Database.read_soon`; Neo4j reads are read-committed, so nothing is lost by
that). What the walk admits is decided by :mod:`graphsvc.core.acquisition`, the order
of the reads by :mod:`graphsvc.ops.acquisition`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from graphsvc.core.acquisition import EdgeRow, EntityHop, SimilarRow
from graphsvc.store.connection import Database, Tx, run

__all__ = [
    "SPLIT_LEVEL_AT",
    "Edges",
    "TwoLevels",
    "entity_hop_soon",
    "expand_level",
    "expand_two_levels",
    "similar_heads_soon",
    "usage_states",
    "usage_states_all",
]

# A BFS level with at least this many frontier atoms is split in two halves that
# Neo4j expands side by side (bench/read.py: the second level of a depth-2 read
# has ~250 atoms at 100k atoms).
SPLIT_LEVEL_AT = 48

Edges = list[EdgeRow]  # the edges of one atom (search/expand_level's rows)


@dataclass(frozen=True)
class TwoLevels:
    """Edges of each frontier atom, edges of every atom those reach, and the usage
    states ((atomId, rev) -> state) of every atom the rows name."""

    first: dict[str, Edges]
    second: dict[str, Edges]
    usage: dict[tuple[str, int], str]


def _halves(frontier: list[str]) -> tuple[list[str], list[str]]:
    half = len(frontier) // 2 if len(frontier) >= SPLIT_LEVEL_AT else len(frontier)
    return frontier[:half], frontier[half:]


def expand_level(tx: Tx, db: Database, subject: str, frontier: list[str]) -> dict[str, Edges]:
    """Edges of each frontier atom (search/expand_level); a big frontier in two halves
    side by side."""
    name = "search/expand_level"
    first, second = _halves(frontier)
    later = db.read_soon(name, subject=subject, frontier=second) if second else None
    rows = run(tx, name, subject=subject, frontier=first) if first else []
    rows += later.result() if later is not None else []
    return {row["aid"]: row["edges"] for row in rows}


def expand_two_levels(
    tx: Tx, db: Database, subject: str, policy: str, model_id: str, frontier: list[str]
) -> TwoLevels:
    """Two levels from ``frontier`` and the usage states under ``policy`` of every atom
    they name, in one round trip per half (search/expand_two_levels; a big frontier in
    two halves side by side)."""
    name = "search/expand_two_levels"
    params = {"subject": subject, "policy": policy, "modelId": model_id}
    first, second = _halves(frontier)
    later = db.read_soon(name, **params, frontier=second) if second else None
    empty: dict[str, Any] = {"first": [], "second": [], "usage": []}
    a = run(tx, name, **params, frontier=first)[0] if first else empty
    b = later.result()[0] if later is not None else empty
    level2: dict[str, Edges] = {}
    for aid, edges in a["second"] + b["second"]:
        level2.setdefault(aid, edges)
    level1 = {aid: edges for aid, edges in a["first"] + b["first"]}
    usage = {(atom_id, rev): state for atom_id, rev, state in a["usage"] + b["usage"]}
    return TwoLevels(level1, level2, usage)


def entity_hop_soon(
    db: Database, subject: str, seeds: list[str], query_keys: list[str], max_degree: int
) -> Callable[[], EntityHop]:
    """Start search/entity_hop beside the caller's transaction; returns the wait for it."""
    later = db.read_soon(
        "search/entity_hop",
        subject=subject,
        atomIds=seeds,
        queryKeys=query_keys,
        maxDegree=max_degree,
    )

    def wait() -> EntityHop:
        row = later.result()[0]
        return EntityHop(row["seeds"], row["entities"])

    return wait


def similar_heads_soon(
    db: Database, subject: str, seeds: list[str], k: int
) -> Callable[[], list[SimilarRow]]:
    """Start search/similar_heads (each seed's ``k`` most similar heads by stored
    embedding) beside the caller's transaction; returns the wait for it."""
    later = db.read_soon("search/similar_heads", subject=subject, atomIds=seeds, k=k)
    return lambda: [SimilarRow(row["aid"], row["near"]) for row in later.result()]


def usage_states(
    tx: Tx, subject: str, policy: str, model_id: str, atom_ids: list[str]
) -> dict[tuple[str, int], str]:
    """The caller's usage states ((atomId, rev) -> state) of ``atom_ids`` under ``policy``
    (search/usage_states)."""
    rows = run(
        tx,
        "search/usage_states",
        subject=subject,
        policy=policy,
        modelId=model_id,
        atomIds=atom_ids,
    )
    return {(row["atomId"], row["rev"]): row["state"] for row in rows}


def usage_states_all(
    tx: Tx, subject: str, policy: str, model_id: str, *, max_states: int
) -> dict[tuple[str, int], str] | None:
    """Every usage state of the caller's (subject, policy, model): (atomId, rev) ->
    state (search/usage_states_all); None when there are more than ``max_states``."""
    rows = run(
        tx,
        "search/usage_states_all",
        subject=subject,
        policy=policy,
        modelId=model_id,
        max=max_states,
    )
    if len(rows) > max_states:
        return None
    return {(row["atomId"], int(row["rev"])): row["state"] for row in rows}
