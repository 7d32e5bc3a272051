"""Checks every public operation of a subject shares."""

from __future__ import annotations

from graphsvc.errors import PurgePendingError
from graphsvc.store.connection import Database
from graphsvc.store.write_steps import PURGE_PENDING, purge_pending

__all__ = ["PURGE_PENDING", "refuse_if_purge_pending"]


def refuse_if_purge_pending(db: Database, subject: str) -> None:
    """LNK-6: while a purge's stop marker stands, public reads and writes are refused.

    Raises:
        PurgePendingError: a purge in ``subject`` has not finished; calling purge
            again with the same atomId resumes it.
    """
    if purge_pending(db, subject):
        raise PurgePendingError(PURGE_PENDING)
