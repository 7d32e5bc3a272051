"""Frozen evaluations behind cursors, and the subject state a cursor binds (CUR-1, CUR-2)."""

from __future__ import annotations

from typing import TypedDict

from graphsvc.store.connection import Database, Tx, run

__all__ = [
    "SavedEvaluation",
    "SubjectState",
    "load_evaluation",
    "save_evaluation",
    "save_evaluations",
    "subject_state",
]


class SubjectState(TypedDict):
    """The columns of ``search/subject_state``: the purge marker and the index generation."""

    pending: bool
    purgeEpoch: int
    schemaVersion: int | None


def subject_state(db: Database, subject: str, tx: Tx | None = None) -> SubjectState:
    """The subject's purge marker and index generation (one round trip; in ``tx`` if given)."""
    if tx is not None:
        row = run(tx, "search/subject_state", subject=subject)[0]
    else:
        row = db.read("search/subject_state", subject=subject)[0]
    return SubjectState(
        pending=row["pending"], purgeEpoch=row["purgeEpoch"], schemaVersion=row["schemaVersion"]
    )


def save_evaluation(
    db: Database,
    *,
    subject: str,
    eval_id: str,
    payload: bytes,
    expires_at: float,
    now: float,
    purge_epoch: int,
) -> bool:
    """Store one frozen evaluation (``payload`` already encoded) as its own transaction;
    False when a purge of the subject is unfinished or has moved its epoch since."""
    row = SavedEvaluation(
        subject=subject,
        evalId=eval_id,
        payload=payload,
        expiresAt=expires_at,
        purgeEpoch=purge_epoch,
    )
    return eval_id in save_evaluations(db, [row], now=now)


class SavedEvaluation(TypedDict):
    """One frozen evaluation to store (a row of ``cursor/save_evaluations``)."""

    subject: str
    evalId: str
    payload: bytes
    expiresAt: float
    purgeEpoch: int


def save_evaluations(db: Database, rows: list[SavedEvaluation], *, now: float) -> set[str]:
    """Store frozen evaluations in one transaction; the ids stored (not those whose
    subject has a purge unfinished, or finished since their evaluation)."""
    out = db.write("cursor/save_evaluations", rows=rows, now=now)
    return set(out[0]["saved"]) if out else set()


def load_evaluation(db: Database, subject: str, eval_id: str) -> str | bytes | None:
    """The encoded payload of a stored evaluation; None when it is gone or never was."""
    rows = db.read("cursor/load_evaluation", subject=subject, evalId=eval_id)
    return rows[0]["payload"] if rows else None
