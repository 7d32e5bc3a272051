"""The subject's own BM25 statistics, read once per write generation and kept.

A subject's number of bodies, their total length and each term's document frequency
change only when the subject's text changes: a write, an import batch, an
atomisation or a purge, each of which moves the subject's change sequence
(``ChangeSequence {subject}.last``, cypher/changes/record.cypher) or its purge epoch,
or a fulltext rebuild, which moves the index generation. search/term_statistics
returns those three numbers from the same transaction as the counts, and every
search's fulltext query returns them too (search/fulltext_candidates), so a search
whose terms are all known for the current generation reads no statistics at all;
another replica's writes move the numbers it reads as well. A search with terms not
seen yet at a generation whose totals are kept counts only those terms (the same
query, told the kept generation), not the body count and length, which cost a read
of every body of the subject.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from graphsvc.core.bm25 import SubjectStats
from graphsvc.store.connection import Database
from graphsvc.store.term_statistics import term_statistics

__all__ = [
    "Generation",
    "StatisticsCache",
    "generation_of",
    "statistics_cache",
    "subject_stats_soon",
]

# (change sequence, purge epoch, fulltext index generation) of one subject.
Generation = tuple[int, int, int]

# Bounds: subjects kept (least recently used go first) and terms per subject.
_SUBJECTS = 256
_TERMS = 4096


def generation_of(row: Mapping[str, Any]) -> Generation:
    """The generation columns of a search/term_statistics or fulltext_candidates row."""
    return (
        int(row.get("changeSeq") or 0),
        int(row.get("purgeEpoch") or 0),
        int(row.get("fulltextGeneration") or 0),
    )


@dataclass
class _Entry:
    generation: Generation
    stats_max: int
    docs: int
    words: int
    df: dict[str, int] = field(default_factory=dict)


class StatisticsCache:
    """Per process: each subject's statistics at the generation they were read at."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, _Entry] = OrderedDict()

    def known(self, subject: str, terms: list[str], stats_max: int) -> Generation | None:
        """The generation for which every one of ``terms`` is known, if any."""
        with self._lock:
            entry = self._entries.get(subject)
            if entry is None or entry.stats_max != stats_max:
                return None
            if any(t not in entry.df for t in terms):
                return None
            self._entries.move_to_end(subject)
            return entry.generation

    def totals(self, subject: str, stats_max: int) -> Generation | None:
        """The generation whose body count and length are known for ``subject`` (so a
        query with new terms needs only their document frequencies), if any."""
        with self._lock:
            entry = self._entries.get(subject)
            if entry is None or entry.stats_max != stats_max:
                return None
            return entry.generation

    def missing(self, subject: str, terms: list[str]) -> list[str]:
        """Those of ``terms`` whose document frequency is not kept for ``subject``."""
        with self._lock:
            entry = self._entries.get(subject)
            return list(terms) if entry is None else [t for t in terms if t not in entry.df]

    def add_terms(
        self, subject: str, generation: Generation, stats_max: int, df: Mapping[str, int]
    ) -> bool:
        """Keep more document frequencies read at ``generation``; False (nothing kept)
        when the subject's kept totals are not of that generation."""
        with self._lock:
            entry = self._entries.get(subject)
            if entry is None or entry.generation != generation or entry.stats_max != stats_max:
                return False
            if len(entry.df) + len(df) > _TERMS:
                return False
            entry.df.update(df)
            self._entries.move_to_end(subject)
            return True

    def stats(self, subject: str, terms: list[str], generation: Generation) -> SubjectStats | None:
        """The statistics of ``terms`` if they are known at ``generation``."""
        with self._lock:
            entry = self._entries.get(subject)
            if entry is None or entry.generation != generation:
                return None
            if any(t not in entry.df for t in terms):
                return None
            avg = entry.words / entry.docs if entry.docs else 0.0
            return SubjectStats(entry.docs, avg, {t: entry.df[t] for t in terms})

    def put(
        self,
        subject: str,
        generation: Generation,
        stats_max: int,
        docs: int,
        words: int,
        df: Mapping[str, int],
    ) -> None:
        """Keep what one read returned; a newer generation replaces an older one."""
        with self._lock:
            entry = self._entries.get(subject)
            if (
                entry is None
                or entry.generation != generation
                or entry.stats_max != stats_max
                or len(entry.df) + len(df) > _TERMS
            ):
                if entry is not None and entry.generation > generation:
                    return  # a slower read of an older generation: keep the newer
                entry = _Entry(generation, stats_max, docs, words)
                self._entries[subject] = entry
            entry.df.update(df)
            self._entries.move_to_end(subject)
            while len(self._entries) > _SUBJECTS:
                self._entries.popitem(last=False)


# db.facts[_STATS_FACT]: the subjects' term statistics kept by this process.
_STATS_FACT = "termStatistics"


def statistics_cache(db: Database) -> StatisticsCache:
    """The process's kept statistics of the subjects ``db`` serves."""
    cache: StatisticsCache = db.facts.setdefault(_STATS_FACT, StatisticsCache())
    return cache


def subject_stats_soon(
    db: Database, subject: str, terms: Mapping[str, str], stats_max: int
) -> Callable[[], SubjectStats | None]:
    """Start reading the subject's own statistics for the query's ``terms`` (surface
    term -> analysed word, graphsvc.core.bm25.query_terms) beside the caller's
    transaction (search/term_statistics) and keep them in the process's cache at the
    generation the read saw; returns the wait for them, which gives None when the
    text has no term the analysis keeps, the subject holds more than ``stats_max``
    bodies (the read is linear in its size), or the fulltext index is being rebuilt
    (it is not called then). When the cache holds the body count and length of the
    generation the read finds, only the terms it lacks are counted."""

    def read() -> SubjectStats | None:
        if not terms:
            return None
        cache = statistics_cache(db)
        return _read(db, cache, subject, terms, stats_max, cache.totals(subject, stats_max))

    return db.soon(read, label="search/term_statistics").result


def _read(
    db: Database,
    cache: StatisticsCache,
    subject: str,
    terms: Mapping[str, str],
    stats_max: int,
    kept_at: Generation | None,
) -> SubjectStats | None:
    """One search/term_statistics read; with ``kept_at``, the generation whose totals
    the cache holds, the query skips them (and the terms kept) if it is still current."""
    known = [t for t in terms if t not in cache.missing(subject, list(terms))]
    row = term_statistics(db, subject, terms, stats_max, kept_at, known)
    if row is None:  # the rebuild marker is set, or the subject is too large
        return None
    generation = generation_of(row)
    df = {t: int(n) for t, n in row["dfs"]}
    if row["current"]:
        kept = cache.add_terms(subject, generation, stats_max, df)
        stats = cache.stats(subject, list(terms), generation) if kept else None
        # None: another read replaced the kept totals meanwhile, or the subject's
        # terms are at their bound; read everything once more.
        return stats if stats is not None else _read(db, cache, subject, terms, stats_max, None)
    docs, words = int(row["docs"]), int(row["words"] or 0)
    cache.put(subject, generation, stats_max, docs, words, df)
    return SubjectStats(docs, words / docs if docs else 0.0, df)
