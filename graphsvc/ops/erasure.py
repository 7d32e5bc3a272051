"""``graphsvc erasure status``: are the bytes of finished purges gone from disk yet?

Every finished purge counts itself in ``GraphsvcMeta {key: 'erasure'}``
(``ops/purge.py``); ``graphsvc compact`` writes a new store without it and resets
the count (``ops/compact.py``). So the answer is exact for the managed Neo4j:
``erased`` is true when no purge finished since the last compact. ``dueBy`` is
the oldest pending purge plus ``GRAPHSVC_ERASURE_MAX_DELAY_S``: the operator's
bound, kept by running ``graphsvc compact`` at least that often (docs/erasure.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from graphsvc.store.connection import Database
from graphsvc.store.meta import erasure_state

__all__ = ["ErasureStatus", "erasure_status"]


@dataclass(frozen=True)
class ErasureStatus:
    """The disk-erasure state of a database; times are ISO-8601 UTC (None: never)."""

    pending_purges: int
    oldest_pending_at: str | None
    due_by: str | None
    overdue: bool
    last_purge_at: str | None
    last_compact_at: str | None
    max_delay_s: float

    @property
    def erased(self) -> bool:
        """No finished purge awaits ``graphsvc compact``."""
        return self.pending_purges == 0

    def to_json(self) -> dict[str, Any]:
        return {
            "erased": self.erased,
            "pendingPurges": self.pending_purges,
            "oldestPendingAt": self.oldest_pending_at,
            "dueBy": self.due_by,
            "overdue": self.overdue,
            "lastPurgeAt": self.last_purge_at,
            "lastCompactAt": self.last_compact_at,
            "maxDelaySeconds": self.max_delay_s,
            "erasedBy": None if self.erased else "the next `graphsvc compact`",
        }


def erasure_status(db: Database, max_delay_s: float, now: float) -> ErasureStatus:
    """The disk-erasure state of the database ``db``.

    Args:
        db: the database.
        max_delay_s: the operator's bound (``GRAPHSVC_ERASURE_MAX_DELAY_S``).
        now: epoch seconds.

    Returns:
        The state (:meth:`ErasureStatus.to_json`: ``{erased, pendingPurges,
        oldestPendingAt, dueBy, overdue, lastPurgeAt, lastCompactAt,
        maxDelaySeconds, erasedBy}``).

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
    return ErasureStatus(
        pending_purges=pending,
        oldest_pending_at=oldest,
        due_by=due,
        overdue=overdue,
        last_purge_at=state.last_purge_at,
        last_compact_at=state.last_compact_at,
        max_delay_s=max_delay_s,
    )
