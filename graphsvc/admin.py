"""The operator's facade: commands on the database as a whole, not on one caller's data.

:class:`graphsvc.service.Service` holds the operations of SPEC §1, each under a
caller's Binding. What an operator runs — background jobs across subjects, index
rebuilds, re-embedding, erasure status, compaction — needs no Binding and often no
embedding model (a re-embed brings its own). The CLI and the API reach those use
cases only through this module, as they reach the data operations only through the
Service (tests/unit/test_architecture.py checks both).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from graphsvc.ops import Database
from graphsvc.settings import Settings

if TYPE_CHECKING:
    from graphsvc.core.jobs import JobRow
    from graphsvc.embed import Embedder
    from graphsvc.entities import EntityExtractor
    from graphsvc.ops.compact import CompactReport
    from graphsvc.ops.embedding_model import Reembedding
    from graphsvc.ops.entity_index import EntityRebuild
    from graphsvc.ops.erasure import ErasureStatus
    from graphsvc.ops.index import IndexRebuild

__all__ = ["Admin", "check_durations", "compact"]

Progress = Callable[[str], None]


def check_durations(grace_s: float, timeout_s: float) -> None:
    """Refuse a grace below 0 or a timeout not above 0 (before Neo4j is started).

    Raises:
        InvalidInputError: either is out of range (NaN included).
    """
    from graphsvc.ops.index import check_durations as check

    check(grace_s, timeout_s)


def compact(
    settings: Settings, *, batch: int, index_timeout_s: float, progress: Progress
) -> CompactReport:
    """``graphsvc compact``: rebuild the managed Neo4j's store without deleted records
    (:func:`graphsvc.ops.compact.compact`; it stops and starts the managed Neo4j, so
    it takes the settings, not a connection; the root connects to the instances it
    starts, :func:`graphsvc.runtime.instance_database`)."""
    from functools import partial

    from graphsvc.ops.compact import compact as run
    from graphsvc.runtime import instance_database

    return run(
        settings,
        connect=partial(instance_database, settings),
        batch=batch,
        index_timeout_s=index_timeout_s,
        progress=progress,
    )


class Admin:
    """Operator commands on one connected database.

    Args:
        settings: configuration.
        db: the Neo4j connection (no schema step is implied: an index rebuild must
            not wait for indexes a killed earlier run left populating).
        clock: epoch seconds.
    """

    def __init__(
        self, settings: Settings, db: Database, *, clock: Callable[[], float] = time.time
    ) -> None:
        self.settings = settings
        self.db = db
        self.clock = clock

    def jobs(
        self, subject: str | None, state: str | None, first: int
    ) -> tuple[list[JobRow], dict[str, int]]:
        """Background jobs of ``subject`` (all subjects when None), newest first, and
        the counts per state."""
        from graphsvc.ops.jobs import jobs_page

        return jobs_page(self.db, subject, state, first)

    def retry_job(self, job_id: str, subject: str | None, by: str) -> str:
        """Put a failed job back to pending: ``retried``, ``not_failed`` or ``not_found``."""
        from graphsvc.ops.jobs import retry_job

        return retry_job(self.db, job_id, subject, by, self.clock())

    def rebuild_index(
        self,
        kind: Literal["vector", "fulltext"],
        *,
        grace_s: float,
        timeout_s: float,
        progress: Progress,
    ) -> IndexRebuild:
        """``graphsvc index rebuild [--fulltext]`` (:mod:`graphsvc.ops.index`)."""
        from graphsvc.ops.index import rebuild_fulltext_index, rebuild_vector_index

        rebuild = rebuild_fulltext_index if kind == "fulltext" else rebuild_vector_index
        return rebuild(self.db, grace_s=grace_s, timeout_s=timeout_s, progress=progress)

    def rebuild_entities(
        self,
        extractor: EntityExtractor,
        *,
        subject: str | None,
        batch: int,
        progress: Progress,
    ) -> EntityRebuild:
        """``graphsvc index rebuild --entities`` (ENT-5): the schema first (its entity
        constraints), at the dimension the database records."""
        from graphsvc.ops.entity_index import rebuild_entity_index

        return rebuild_entity_index(
            self.db, extractor, subject=subject, batch=batch, progress=progress
        )

    def reembed(
        self, embedder: Embedder, *, batch: int, timeout_s: float, progress: Progress
    ) -> Reembedding:
        """``graphsvc reembed`` (:mod:`graphsvc.ops.embedding_model`)."""
        from graphsvc.ops.embedding_model import reembed

        return reembed(self.db, embedder, batch=batch, timeout_s=timeout_s, progress=progress)

    def erasure_status(self) -> ErasureStatus:
        """``graphsvc erasure status``: purges awaiting a compact, and which are overdue."""
        from graphsvc.ops.erasure import erasure_status

        return erasure_status(self.db, self.settings.operations.erasure_max_delay_s, self.clock())
