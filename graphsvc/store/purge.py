"""The purge's reads and writes (SPEC §6, LNK-5, LNK-6), one typed function per step part.

:mod:`graphsvc.ops.purge` decides what runs when (steps, resume, the closure's
fixpoint); every function here is one named query (or, for :func:`erase`, the
fixed sequence of deletes of step ``erase``) in the caller's transaction.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from graphsvc.store import entities
from graphsvc.store.connection import Tx, run

__all__ = [
    "Marker",
    "PurgePlan",
    "advance_marker",
    "atom_exists",
    "bump_epoch",
    "closure_step",
    "count_revisions",
    "create_marker",
    "delete_marker",
    "erase",
    "lock_marker",
    "lock_subject",
    "relink",
    "tombstone_keys",
]


@dataclass(frozen=True)
class PurgePlan:
    """The closure stored in the marker before anything is erased (ids only)."""

    atom_ids: tuple[str, ...]
    token_ids: tuple[str, ...]
    revisions: int

    def to_json(self) -> str:
        return json.dumps(
            {
                "atomIds": list(self.atom_ids),
                "tokenIds": list(self.token_ids),
                "revisions": self.revisions,
            },
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, raw: str) -> PurgePlan:
        doc = json.loads(raw)
        return cls(tuple(doc["atomIds"]), tuple(doc["tokenIds"]), int(doc["revisions"]))


@dataclass(frozen=True)
class Marker:
    """A stop marker (``PurgeMarker``) as its lock found it: the last committed step
    and the stored plan."""

    step: str
    plan: PurgePlan


def lock_subject(tx: Tx, subject: str, now: str) -> list[str]:
    """Serialise purges of ``subject`` (writes its SubjectState); the atom ids of the
    stop markers that stand in it."""
    markers = run(tx, "purge/lock_subject", subject=subject, now=now)[0]["markers"]
    return [m["atomId"] for m in markers]


def lock_marker(tx: Tx, subject: str, atom_id: str, now: str) -> Marker | None:
    """Take the write lock of the marker of ``atom_id``; None when there is none (or it
    holds no plan)."""
    row = run(tx, "purge/lock_marker", subject=subject, atomId=atom_id, now=now)[0]
    if not row["found"] or row["plan"] is None:
        return None
    return Marker(step=row["step"], plan=PurgePlan.from_json(row["plan"]))


def atom_exists(tx: Tx, subject: str, atom_id: str) -> bool:
    return bool(run(tx, "purge/atom_exists", subject=subject, atomId=atom_id)[0]["found"])


def closure_step(
    tx: Tx, subject: str, atom_ids: list[str], token_ids: list[str]
) -> tuple[set[str], set[str]]:
    """One round of the dependency closure (LNK-5): ``(atom ids, token ids)`` that depend
    on the given atoms and Inputs."""
    row = run(tx, "purge/closure_step", subject=subject, atomIds=atom_ids, tokenIds=token_ids)[0]
    return set(row["atoms"]), set(row["inputs"])


def count_revisions(tx: Tx, subject: str, atom_ids: list[str]) -> int:
    return int(run(tx, "purge/count_revisions", subject=subject, atomIds=atom_ids)[0]["revisions"])


def create_marker(tx: Tx, subject: str, atom_id: str, now: str, step: str, plan: PurgePlan) -> None:
    run(
        tx,
        "purge/create_marker",
        subject=subject,
        atomId=atom_id,
        now=now,
        step=step,
        plan=plan.to_json(),
    )


def advance_marker(tx: Tx, subject: str, atom_id: str, step: str, plan: PurgePlan) -> None:
    """Record ``step`` as committed (with the plan as it now stands)."""
    run(
        tx,
        "purge/advance_marker",
        subject=subject,
        atomId=atom_id,
        step=step,
        plan=plan.to_json(),
    )


def delete_marker(tx: Tx, subject: str, atom_id: str) -> bool:
    """Delete the marker; False when another caller already did."""
    rows = run(tx, "purge/delete_marker", subject=subject, atomId=atom_id)
    return bool(rows[0]["deleted"])


def relink(tx: Tx, subject: str, atom_ids: list[str]) -> None:
    """Re-point links of surviving revisions to purged atoms to the subject's
    ``:Unavailable`` node (LNK-2)."""
    run(tx, "purge/relink", subject=subject, atomIds=atom_ids)


def tombstone_keys(tx: Tx, subject: str, atom_ids: list[str]) -> None:
    """Idempotency records naming a purged atom keep only their key and state (IDEM-5)."""
    run(tx, "purge/tombstone_keys", subject=subject, atomIds=atom_ids)


def bump_epoch(tx: Tx, subject: str) -> None:
    """Advance ``SubjectState.purgeEpoch`` so every cursor of the subject expires."""
    run(tx, "purge/bump_epoch", subject=subject)


def erase(tx: Tx, subject: str, plan: PurgePlan) -> None:
    """Delete everything the plan names (one transaction, so all or nothing)."""
    atoms = list(plan.atom_ids)
    tokens = list(plan.token_ids)
    # Late links (a write that raced the marker) get the safe form too.
    relink(tx, subject, atoms)
    # Manifests and sources are found through edges to the records deleted below.
    run(tx, "purge/delete_manifests", subject=subject, atomIds=atoms)
    run(tx, "purge/delete_usage", subject=subject, atomIds=atoms)
    run(tx, "purge/delete_jobs", subject=subject, atomIds=atoms)
    run(tx, "purge/delete_sources", subject=subject, atomIds=atoms, tokenIds=tokens)
    run(tx, "purge/delete_inputs", subject=subject, tokenIds=tokens)
    # The entity index (ENT-3): the purged atoms' mentions go, and every entity they
    # touched is re-derived from the mentions left, or deleted without one.
    entities.lock(tx, [subject], "purge")
    touched = entities.drop_mentions(tx, subject, atoms)
    run(tx, "purge/delete_atoms", subject=subject, atomIds=atoms)
    entities.refresh(tx, subject, touched)
    run(tx, "purge/delete_evaluations", subject=subject)
    # MCP session windows: no later change of a session declares what is gone.
    run(tx, "purge/forget_in_sessions", subject=subject, atomIds=atoms)
