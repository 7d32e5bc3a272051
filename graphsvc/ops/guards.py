"""Checks every public operation of a subject shares."""

from __future__ import annotations

from graphsvc.errors import PurgePendingError
from graphsvc.store.connection import Database

__all__ = ["PURGE_PENDING", "refuse_if_purge_pending"]

PURGE_PENDING = "a purge in this subject has not finished; call purge again to resume it"


def refuse_if_purge_pending(db: Database, subject: str) -> None:
    """LNK-6: while a purge's stop marker stands, public reads and writes are refused.

    Raises:
        PurgePendingError: a purge in ``subject`` has not finished; calling purge
            again with the same atomId resumes it.
    """
    if db.read("write/purge_pending", subject=subject)[0]["pending"]:
        raise PurgePendingError(PURGE_PENDING)
