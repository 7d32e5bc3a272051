"""The read behind the process's kept term statistics
(:mod:`graphsvc.process_state.term_statistics`): a subject's body count, total length
and the document frequencies of a query's terms, with the generation they were read at
(``search/term_statistics``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from graphsvc.core.bm25 import term_query
from graphsvc.store.connection import Database

__all__ = ["term_statistics"]


def term_statistics(
    db: Database,
    subject: str,
    terms: Mapping[str, str],
    stats_max: int,
    kept_at: Sequence[int] | None,
    known: list[str],
) -> dict[str, Any] | None:
    """One ``search/term_statistics`` row for the query's ``terms`` (surface term ->
    analysed word); with ``kept_at``, the generation whose totals the caller keeps, the
    query skips them and the ``known`` terms if it is still current. None while the
    fulltext index is rebuilt or when the subject holds more than ``stats_max`` bodies.
    """
    rows = db.read_rows(
        "search/term_statistics",
        subject=subject,
        terms=[[t, term_query(w, subject)] for t, w in terms.items()],
        statsMax=stats_max,
        keptAt=None if kept_at is None else list(kept_at),
        known=known if kept_at is not None else [],
    )
    return rows[0] if rows else None
