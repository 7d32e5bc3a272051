"""Fulltext queries from user text, with every Lucene special character escaped.

User text never becomes Lucene syntax: each whitespace-separated term is
lower-cased (so AND/OR/NOT are terms, not operators) and escaped; the terms are
OR-ed over the ``text`` field and, when a subject is given, the subject is a
required phrase on the ``subject`` field.
"""

from __future__ import annotations

import itertools

__all__ = ["escape_term", "fulltext_query", "term_query"]

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
