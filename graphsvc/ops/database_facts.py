"""What the database says about itself: whether it answers with the current schema
(``/readyz``, ``{ health }``), kept between reads so that ``{ health }`` never queues
behind data queries, and whether a subject holds atoms (a hint for a misspelt one)."""

from __future__ import annotations

import time

from graphsvc.store.connection import Database
from graphsvc.store.meta import Readiness, readiness, subject_has_atoms

__all__ = ["KeptReadiness", "Readiness", "readiness", "subject_has_atoms"]


class KeptReadiness:
    """The last :func:`readiness` read, and when it was read."""

    def __init__(self) -> None:
        # (time.monotonic() when read, what Neo4j said); None: never, or it failed.
        self.kept: tuple[float, Readiness] | None = None

    def refresh(self, db: Database) -> None:
        """Ask Neo4j now; forget the kept facts when it does not answer.

        Raises:
            StoreError: Neo4j is not reachable.
        """
        try:
            facts = readiness(db)
        except Exception:
            self.kept = None
            raise
        self.kept = (time.monotonic(), facts)

    def young(self, max_age_s: float) -> tuple[Readiness, float] | None:
        """The kept facts and their age in seconds (no I/O); None when there are none
        no older than ``max_age_s``."""
        kept = self.kept
        if kept is None:
            return None
        age = time.monotonic() - kept[0]
        if age > max_age_s:
            return None
        return kept[1], max(0.0, age)
