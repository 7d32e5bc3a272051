"""The fulltext index's analyzer as this process last read it, kept with the index
generation it was read at: the index changes only by ``graphsvc index rebuild
--fulltext``, which moves the generation (``search/fulltext_candidates`` returns it)."""

from __future__ import annotations

from graphsvc.store.connection import Database

__all__ = ["keep_analyzer", "kept_analyzer"]

_ANALYZER_FACT = "fulltextAnalyzer"


def kept_analyzer(db: Database) -> tuple[int, str | None] | None:
    """(index generation, analyzer) as this process last read them, if it did."""
    kept: tuple[int, str | None] | None = db.facts.get(_ANALYZER_FACT)
    return kept


def keep_analyzer(db: Database, generation: int, analyzer: str | None) -> None:
    """Keep the analyzer read at index ``generation`` for later evaluations."""
    db.facts[_ANALYZER_FACT] = (generation, analyzer)
