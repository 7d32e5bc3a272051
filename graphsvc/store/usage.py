"""Usage state in Neo4j (AV-3): the events claimed, the states read and written, reset."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

from graphsvc.core.write_models import AtomRef
from graphsvc.store.connection import Database, Tx, run

__all__ = [
    "StoredUsage",
    "UsageUpdate",
    "claim_event",
    "read_states",
    "reset_usage",
    "write_states",
]


@dataclass(frozen=True)
class StoredUsage:
    """The stored usage state of one revision (``found``: the revision exists)."""

    atom_id: str
    rev: int
    found: bool
    state: str | None  # JSON, None when never used


class UsageUpdate(TypedDict):
    """A new usage state of one revision (``state`` as canonical JSON)."""

    atomId: str
    rev: int
    state: str


def claim_event(tx: Tx, *, subject: str, event_id: str, policy: str, now: float) -> bool:
    """Claim ``event_id`` in ``tx``; False when it was claimed before (a resent event)."""
    rows = run(tx, "usage/claim_event", subject=subject, eventId=event_id, now=now, policy=policy)
    return bool(rows[0]["fresh"])


def read_states(
    tx: Tx, *, subject: str, policy: str, model_id: str, refs: list[AtomRef]
) -> list[StoredUsage]:
    """The usage state of each of ``refs`` (in order), read in ``tx``."""
    rows = run(
        tx,
        "usage/read_states",
        subject=subject,
        policy=policy,
        modelId=model_id,
        refs=[r.to_json() for r in refs],
    )
    return [StoredUsage(r["atomId"], r["rev"], bool(r["found"]), r["state"]) for r in rows]


def write_states(
    tx: Tx, *, subject: str, policy: str, model_id: str, updates: list[UsageUpdate], now: float
) -> None:
    """Write new usage states in ``tx``."""
    run(
        tx,
        "usage/write_states",
        subject=subject,
        policy=policy,
        modelId=model_id,
        updates=updates,
        now=now,
    )


def reset_usage(db: Database, *, subject: str, policy: str, atom_id: str | None) -> int:
    """Delete the usage states of one policy (one atom's or all) as one transaction."""
    rows = db.write("usage/reset", subject=subject, policy=policy, atomId=atom_id)
    return int(rows[0]["reset"]) if rows else 0
