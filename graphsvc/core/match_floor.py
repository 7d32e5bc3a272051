"""Weak matches: hits whose own text matches the query far below the best possible.

A search's ``score`` is relative (ACT-4: the hits of one evaluation share 1), so a
gibberish query (``qzxvvq wplkjh``) ranks 20 hits like any other. The match signal
``m = 0.8·semantic + 0.2·lexical`` (ScoreBreakdown.match) is absolute in its semantic
part: a body identical to the query has cosine 1 and the top lexical score, so
``m = 1`` is the best possible match. A hit with ``m`` below :data:`WEAK_MATCH_FLOOR`
of that is marked weak. On the demo corpus gibberish and unrelated queries give
``m`` ≤ 0.16 for every hit, topical ones ≥ 0.25 for their top hits
(docs/graphql.md). A weak hit may still be useful: one reached over links keeps its
score; ``weak`` only says its own text does not match.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = ["BEST_MATCH", "WEAK_MATCH_FLOOR", "is_weak_match"]

BEST_MATCH: Final = 1.0
WEAK_MATCH_FLOOR: Final = 0.2


def is_weak_match(breakdown: Mapping[str, Any]) -> bool:
    """Whether a hit's match signal is below the floor (a missing one counts as 0)."""
    match = breakdown.get("match")
    value = float(match) if isinstance(match, int | float) else 0.0
    return value < WEAK_MATCH_FLOOR * BEST_MATCH
