"""Durable background jobs (``:Job``): the outbox of deferred atomisation and embeddings.

A job is created by the same transaction as the write that causes it
(:func:`create_jobs`), so it exists exactly when that write committed. Workers
claim a job with a lease (:func:`claim`), renew it while they run it
(:func:`renew`) and record its end (:func:`finish`); a job whose worker died is
claimed again once its lease runs out. See :mod:`graphsvc.atomise.worker`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal, TypedDict

from graphsvc.core.jobs import JobRow
from graphsvc.store.connection import Database, Tx, run
from graphsvc.store.write_steps import Provenance

__all__ = [
    "JOB_STATES",
    "ClaimedJob",
    "JobHold",
    "JobKind",
    "JobRow",
    "NewJob",
    "claim",
    "claimable",
    "counts",
    "create_jobs",
    "finish",
    "finish_in",
    "list_jobs",
    "renew",
    "retry",
]

JobKind = Literal["atomise", "embed"]
JobState = Literal["pending", "done", "failed"]
JOB_STATES: tuple[JobState, ...] = ("pending", "done", "failed")


class NewJob(TypedDict):
    """One job to create (the query parameter shape of ``jobs/create``)."""

    jobId: str
    kind: str
    atomId: str
    rev: int
    maxAtomTokens: int | None
    leaseOwner: str | None
    leaseUntil: float | None


@dataclass(frozen=True)
class JobHold:
    """A job a worker holds, whose end a use case records in its own transaction."""

    job_id: str
    owner: str


@dataclass(frozen=True)
class ClaimedJob:
    """A job this worker now holds, with what running it needs."""

    job_id: str
    kind: str
    subject: str
    policy: str
    atom_id: str
    rev: int
    max_atom_tokens: int | None
    actor_kind: str
    actor_id: str
    auth_generation: int
    attempts: int


def _iso(now: float) -> str:
    return datetime.fromtimestamp(now, UTC).isoformat()


def create_jobs(tx: Tx, prov: Provenance, auth_generation: int, jobs: list[NewJob]) -> None:
    """Write ``jobs`` in the caller's transaction (they commit with it), caused by the
    write ``prov`` describes."""
    if jobs:
        run(tx, "jobs/create", jobs=jobs, authGeneration=auth_generation, **prov.params())


def claimable(db: Database, now: float, limit: int) -> list[str]:
    """Ids of pending jobs no live worker holds, oldest first."""
    return [r["jobId"] for r in db.read("jobs/claimable", now=now, limit=limit)]


def claim(db: Database, job_id: str, owner: str, now: float, lease_s: float) -> ClaimedJob | None:
    """Hold ``job_id`` for ``owner`` for ``lease_s`` seconds; None when it is not
    claimable (finished, or held by another live worker)."""
    rows = db.write(
        "jobs/claim", jobId=job_id, owner=owner, now=now, until=now + lease_s, nowIso=_iso(now)
    )
    if not rows:
        return None
    r = rows[0]
    return ClaimedJob(
        job_id=r["jobId"],
        kind=r["kind"],
        subject=r["subject"],
        policy=r["policy"],
        atom_id=r["atomId"],
        rev=r["rev"],
        max_atom_tokens=r["maxAtomTokens"],
        actor_kind=r["actorKind"],
        actor_id=r["actorId"],
        auth_generation=r["authGeneration"],
        attempts=r["attempts"],
    )


def renew(db: Database, job_id: str, owner: str, until: float) -> bool:
    """Extend the lease of a job ``owner`` still holds; False when it lost it."""
    rows = db.write("jobs/renew", jobId=job_id, owner=owner, until=until)
    return bool(rows and rows[0]["renewed"])


def finish(
    db: Database,
    job_id: str,
    owner: str,
    *,
    state: JobState,
    now: float,
    outcome: str | None = None,
    error: str | None = None,
    retry_at: float | None = None,
) -> bool:
    """Record the end of a job ``owner`` holds (see :func:`finish_in`)."""
    return db.write_tx(
        lambda tx: finish_in(
            tx,
            job_id,
            owner,
            state=state,
            now_iso=_iso(now),
            outcome=outcome,
            error=error,
            retry_at=retry_at,
        ),
        label="jobs/finish",
    )


def finish_in(
    tx: Tx,
    job_id: str,
    owner: str,
    *,
    state: JobState,
    now_iso: str,
    outcome: str | None = None,
    error: str | None = None,
    retry_at: float | None = None,
) -> bool:
    """Record a job's end in ``tx``: ``done`` or ``failed``, or ``pending`` again
    (released, claimable from ``retry_at``). False when ``owner`` no longer held it."""
    rows = run(
        tx,
        "jobs/finish",
        jobId=job_id,
        owner=owner,
        state=state,
        outcome=outcome,
        error=error,
        until=retry_at,
        nowIso=now_iso,
    )
    return bool(rows and rows[0]["finished"])


def list_jobs(db: Database, subject: str | None, state: str | None, limit: int) -> list[JobRow]:
    """Jobs of ``subject`` (every subject when None), newest first."""
    rows = db.read("jobs/list", subject=subject, state=state, limit=limit)
    return [
        JobRow(
            job_id=r["jobId"],
            subject=r["subject"],
            kind=r["kind"],
            atom_id=r["atomId"],
            rev=r["rev"],
            state=r["state"],
            attempts=r["attempts"],
            outcome=r["outcome"],
            last_error=r["lastError"],
            created_at=r["createdAt"],
            updated_at=r["updatedAt"],
            lease_owner=r["leaseOwner"],
            lease_until=r["leaseUntil"],
        )
        for r in rows
    ]


def counts(db: Database, subject: str | None) -> dict[str, int]:
    """Jobs per state (every state present, zero when none)."""
    found = {r["state"]: r["jobs"] for r in db.read("jobs/counts", subject=subject)}
    return {state: int(found.get(state, 0)) for state in JOB_STATES}


def retry(db: Database, job_id: str, subject: str | None, owner: str, now: float) -> str:
    """Put a failed job back to pending with a fresh attempt budget.

    Returns:
        ``retried``, ``not_failed`` (it exists in another state) or ``not_found``.
    """
    rows = db.write("jobs/retry", jobId=job_id, subject=subject, owner=owner, nowIso=_iso(now))
    if rows:
        return "retried"
    return "not_failed" if db.read("jobs/get", jobId=job_id, subject=subject) else "not_found"
