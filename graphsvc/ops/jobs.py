"""Background jobs as their callers see them (ATM-7): a page with the counts per
state, and an operator's retry of a failed one. The jobs themselves are written by
the transaction that causes them and run by :mod:`graphsvc.atomise.worker`."""

from __future__ import annotations

from graphsvc.core.jobs import JobRow
from graphsvc.store import jobs as job_store
from graphsvc.store.connection import Database

__all__ = ["jobs_page", "retry_job"]


def jobs_page(
    db: Database, subject: str | None, state: str | None, first: int
) -> tuple[list[JobRow], dict[str, int]]:
    """The jobs of ``subject`` (every subject when None) in ``state`` (any when None),
    newest first, at most ``first``; and the counts per state.

    Raises:
        StoreError: Neo4j is not reachable.
    """
    return job_store.list_jobs(db, subject, state, first), job_store.counts(db, subject)


def retry_job(db: Database, job_id: str, subject: str | None, by: str, now: float) -> str:
    """Put a failed job back to pending: ``retried``, ``not_failed`` or ``not_found``.

    Raises:
        StoreError: Neo4j is not reachable.
    """
    return job_store.retry(db, job_id, subject, by, now)
