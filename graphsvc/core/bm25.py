"""The lexical signal's BM25, scored with one subject's own statistics (ACT-1), and the
fulltext query asked of Lucene for the same text (:func:`fulltext_query`).

Lucene scores a fulltext hit with the statistics of the whole index (every
subject's bodies together): the number of bodies, each term's document frequency
and the average body length. A subject's ranking would then depend on other
subjects' data (an inference channel, SPEC API-2). Here the same BM25 (Lucene 9's
form: ``idf · tf / (tf + k1·(1 − b + b·dl/avgdl))``, ``idf = ln(1 + (N − df + 0.5)
/ (df + 0.5))``) is computed from the subject's statistics, passed in by the caller,
over bodies analysed the way Lucene's English analyzer does (:func:`analyse`:
word tokens, possessive ``'s`` removed, lower case, Lucene's English stop set
dropped with its position kept, Porter stemming).

Neighbouring query terms also count as a sloppy phrase (the proximity clause of
:func:`graphsvc.core.bm25.fulltext_query`): its idf is the sum of its two
terms' idfs (as Lucene's phrase weight) and its frequency the sum of
``1 / (1 + distance)`` over the body's matches within ``slop`` positions.

Body lengths are counted in space-separated words (:func:`body_length`, stop
words included), for the body and for the subject's average alike: the average is
then one aggregate over the subject's stored texts (Cypher's ``split(text, ' ')``
splits the same way), without analysing them.

**The Lucene query.** User text never becomes Lucene syntax: each whitespace-separated
term is lower-cased (so AND/OR/NOT are terms, not operators) and escaped; the terms are
OR-ed over the ``text`` field and, when a subject is given, the subject is a required
phrase on the ``subject`` field.

Pure: no I/O, no clock.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

import Stemmer

from graphsvc.errors import InvalidInputError

__all__ = [
    "ANALYZER",
    "BM25_B",
    "BM25_K1",
    "ENGLISH_STOP_WORDS",
    "Analysed",
    "QueryTerms",
    "SubjectStats",
    "analyse",
    "bm25_idf",
    "body_length",
    "escape_term",
    "fulltext_query",
    "indexed",
    "query_terms",
    "score_bodies",
    "sloppy_freq",
    "term_query",
]


# The Lucene analyzer :func:`analyse` mimics: a fulltext index with another one (a
# database from before graphsvc switched to it) is scored by Lucene instead.
ANALYZER: Final = "english"
BM25_K1: Final = 1.2
BM25_B: Final = 0.75
# Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET.
ENGLISH_STOP_WORDS: Final = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the "  # noqa: SIM905
    "their then there these they this to was will with".split()
)
# Word tokens (letters, digits, underscore), joined by an inner apostrophe or dot
# (don't, caroline's, 3.5) as Lucene's StandardTokenizer keeps them.
_WORD = re.compile(r"\w+(?:['’.]\w+)*")
_POSSESSIVE = ("'s", "’s")
_MAX_QUERY_TERMS = 64


@functools.cache
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("porter")


@functools.lru_cache(maxsize=65_536)
def _stem(word: str) -> str:
    stemmed: str = _stemmer().stemWord(word)
    return stemmed


@dataclass(frozen=True)
class Analysed:
    """One text's analysed terms: ``terms[i]`` at position ``positions[i]``; ``surface``
    the lower-cased word (possessive removed, before stemming) each term came from."""

    terms: tuple[str, ...]
    positions: tuple[int, ...]
    surface: tuple[str, ...]


def analyse(text: str) -> Analysed:
    """Tokens of ``text`` as Lucene's English analyzer makes them (an approximation of
    its StandardTokenizer; stop words leave a gap in the positions)."""
    terms: list[str] = []
    positions: list[int] = []
    surface: list[str] = []
    for pos, match in enumerate(_WORD.finditer(text.lower())):
        word = match.group(0)
        if word.endswith(_POSSESSIVE):
            word = word[:-2]
        if not word or word in ENGLISH_STOP_WORDS:
            continue
        terms.append(_stem(word))
        positions.append(pos)
        surface.append(word)
    return Analysed(tuple(terms), tuple(positions), tuple(surface))


@dataclass(frozen=True)
class QueryTerms:
    """A query's scoring clauses: each analysed term (repeats count again, as repeated
    clauses do in Lucene), the neighbouring pairs ``(a, b, offset)`` asked as sloppy
    phrases, and for each distinct term one surface word to count it with."""

    terms: tuple[str, ...]
    pairs: tuple[tuple[str, str, int], ...]
    surface: Mapping[str, str]


def query_terms(text: str, proximity: int) -> QueryTerms:
    """The clauses of ``text`` (at most 64 terms); pairs only with ``proximity`` > 0."""
    a = analyse(text)
    terms = a.terms[:_MAX_QUERY_TERMS]
    pos = a.positions[:_MAX_QUERY_TERMS]
    surface: dict[str, str] = {}
    for term, word in zip(terms, a.surface, strict=False):
        surface.setdefault(term, word)
    pairs: tuple[tuple[str, str, int], ...] = ()
    if proximity > 0:
        pairs = tuple(
            (terms[i], terms[i + 1], pos[i + 1] - pos[i])
            for i in range(len(terms) - 1)
            if terms[i] != terms[i + 1]
        )
    return QueryTerms(tuple(terms), pairs, surface)


@dataclass(frozen=True)
class SubjectStats:
    """One subject's statistics: its number of bodies, their average length (in
    :func:`body_length` words) and each query term's document frequency among them."""

    docs: int
    avg_length: float
    df: Mapping[str, int]


def body_length(text: str) -> int:
    """A body's length for BM25: its space-separated words (as Cypher's
    ``size(split(text, ' '))``)."""
    return len(text.split(" "))


def bm25_idf(docs: int, df: int) -> float:
    """Lucene's BM25 idf: ``ln(1 + (N − df + 0.5) / (df + 0.5))`` (always > 0)."""
    return math.log(1.0 + (docs - df + 0.5) / (df + 0.5))


def sloppy_freq(
    positions: Mapping[str, Sequence[int]], a: str, b: str, offset: int, slop: int
) -> float:
    """Σ over the occurrences of ``a`` of ``1 / (1 + d)`` for its closest ``b``, where
    ``d = |pos_b − pos_a − offset|`` (reversed order costs distance) and ``d ≤ slop``."""
    freq = 0.0
    bs = positions.get(b)
    if not bs:
        return 0.0
    for pa in positions.get(a, ()):
        best = min(abs(pb - pa - offset) for pb in bs)
        if best <= slop:
            freq += 1.0 / (1.0 + best)
    return freq


# A search scores the same bodies again and again (its pool of Lucene hits, then its
# candidates; the next search of the subject most of them once more), and a body's
# analysis is most of BM25's cost: each distinct text is analysed once while it stays
# among the most recently scored. Revisions are immutable, so a text's entry never
# goes stale. What is kept is derived from text, like the stemmer's cache above:
# process memory only, never stored or queryable.
@functools.lru_cache(maxsize=16_384)
def indexed(text: str) -> tuple[Mapping[str, tuple[int, ...]], int]:
    """``text``'s term positions (term → positions, never mutated by a caller) and
    its :func:`body_length`."""
    a = analyse(text)
    by_term: dict[str, list[int]] = {}
    for term, pos in zip(a.terms, a.positions, strict=True):
        by_term.setdefault(term, []).append(pos)
    return {t: tuple(p) for t, p in by_term.items()}, body_length(text)


def score_bodies(
    query: QueryTerms,
    bodies: Sequence[str],
    stats: SubjectStats,
    *,
    slop: int = 0,
    k1: float = BM25_K1,
    b: float = BM25_B,
) -> tuple[list[float], float]:
    """BM25 of each body for ``query`` with the subject's ``stats``, and the query's
    upper bound (``Σ idf`` over its clauses: a clause's ``tf / (tf + K)`` is below 1).

    A term missing from ``stats.df`` or counted below the bodies here that hold it
    (the two analyses disagree on a rare word) takes the larger count, and the body
    count is at least every document frequency, so idf stays finite and positive.

    Raises:
        InvalidInputError: negative statistics or parameters.
    """
    if stats.docs < 0 or not stats.avg_length >= 0 or k1 < 0 or not 0.0 <= b <= 1.0:
        raise InvalidInputError("BM25 statistics and parameters must be non-negative")
    bodies_indexed = [indexed(text) for text in bodies]
    positions = [by_term for by_term, _ in bodies_indexed]
    distinct = set(query.terms)
    df = {t: max(int(stats.df.get(t, 0)), sum(1 for p in positions if t in p)) for t in distinct}
    docs = max([stats.docs, len(bodies), *df.values()])
    idf = {t: bm25_idf(docs, df[t]) for t in distinct}
    avg = stats.avg_length if stats.avg_length > 0 else 1.0
    bound = sum(idf[t] for t in query.terms) + sum(idf[x] + idf[y] for x, y, _ in query.pairs)
    scores: list[float] = []
    for by_term, length in bodies_indexed:
        norm = k1 * (1.0 - b + b * length / avg)
        score = 0.0
        for t in query.terms:
            tf = len(by_term.get(t, ()))
            if tf:
                score += idf[t] * tf / (tf + norm)
        for x, y, offset in query.pairs:
            freq = sloppy_freq(by_term, x, y, offset, slop)
            if freq:
                score += (idf[x] + idf[y]) * freq / (freq + norm)
        scores.append(score)
    return scores, bound


_SPECIAL = set('+-&|!(){}[]^"~*?:\\/')
_MAX_TERMS = 64


def escape_term(term: str) -> str:
    """Backslash-escape Lucene's special characters in one term."""
    return "".join("\\" + c if c in _SPECIAL else c for c in term)


def fulltext_query(text: str, subject: str | None, proximity: int = 0) -> str | None:
    """The Lucene query for ``text`` (within ``subject`` unless None), or None when no term remains.

    Scores are the same with or without the subject clause (its boost is 0 and
    Lucene's statistics are index-wide), so a caller may filter a subject-free
    top-k by subject afterwards and get the subject's own top hits.

    With ``proximity`` > 0 every pair of neighbouring query terms is also asked as a
    sloppy phrase (``"a b"~proximity``): a body holding both terms within that many
    positions scores higher than one holding them far apart (still one BM25 score
    of the body, ACT-1).
    """
    terms = [escape_term(t) for t in text.lower().split() if t.strip()][:_MAX_TERMS]
    terms = [t for t in terms if t.strip("\\")]
    if not terms:
        return None
    clause = " ".join(terms)
    if proximity > 0 and len(terms) > 1:
        # Inside a phrase only the quote needs escaping beyond what escape_term did.
        pairs = [f'"{a} {b}"~{int(proximity)}' for a, b in itertools.pairwise(terms)]
        clause = f"{clause} {' '.join(pairs)}"
    if subject is None:
        return f"text:({clause})"
    quoted_subject = subject.replace("\\", "\\\\").replace('"', '\\"')
    # The subject clause filters only: boost 0 keeps it out of the score.
    return f'text:({clause}) AND subject:"{quoted_subject}"^0'


def term_query(word: str, subject: str) -> str:
    """The Lucene query for the bodies of ``subject`` holding ``word`` (one analysed
    word, e.g. :attr:`graphsvc.core.bm25.QueryTerms.surface`): counts a document
    frequency within the subject."""
    quoted_subject = subject.replace("\\", "\\\\").replace('"', '\\"')
    return f'text:({escape_term(word)}) AND subject:"{quoted_subject}"'
