"""``graphsvc erasure status``: are the bytes of finished purges gone from disk yet?

Every finished purge counts itself in ``GraphsvcMeta {key: 'erasure'}``
(``ops/purge.py``); ``graphsvc compact`` writes a new store without it and resets
the count (``ops/compact.py``). So the answer is exact for the managed Neo4j:
``erased`` is true when no purge finished since the last compact. ``dueBy`` is
the oldest pending purge plus ``GRAPHSVC_ERASURE_MAX_DELAY_S``: the operator's
bound, kept by running ``graphsvc compact`` at least that often (docs/erasure.md).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from graphsvc.store.connection import Database
from graphsvc.store.meta import erasure_state

__all__ = ["erasure_status"]


def erasure_status(db: Database, max_delay_s: float, now: float) -> dict[str, Any]:
    """The disk-erasure state of the database ``db``.

    Args:
        db: the database.
        max_delay_s: the operator's bound (``GRAPHSVC_ERASURE_MAX_DELAY_S``).
        now: epoch seconds.

    Returns:
        ``{erased, pendingPurges, oldestPendingAt, dueBy, overdue, lastPurgeAt,
        lastCompactAt, maxDelaySeconds, erasedBy}``; times are ISO-8601 UTC.

    Raises:
        StoreError: Neo4j failed.
    """
    state = erasure_state(db)
    pending = state.pending_purges
    oldest = state.oldest_pending_at
    due = None
    overdue = False
    if pending and oldest:
        due_at = datetime.fromisoformat(oldest) + timedelta(seconds=max_delay_s)
        due = due_at.isoformat()
        overdue = datetime.fromtimestamp(now, UTC) > due_at
    return {
        "erased": pending == 0,
        "pendingPurges": pending,
        "oldestPendingAt": oldest,
        "dueBy": due,
        "overdue": overdue,
        "lastPurgeAt": state.last_purge_at,
        "lastCompactAt": state.last_compact_at,
        "maxDelaySeconds": max_delay_s,
        "erasedBy": None if pending == 0 else "the next `graphsvc compact`",
    }
