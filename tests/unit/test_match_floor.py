"""The weak-match floor (graphsvc/core/match_floor.py)."""

from __future__ import annotations

import pytest

from graphsvc.core.match_floor import WEAK_MATCH_FLOOR, is_weak_match


@pytest.mark.req("ACT-4")
def test_weak_is_a_match_signal_below_the_floor_of_the_best_possible() -> None:
    assert is_weak_match({"match": 0.0})
    assert is_weak_match({"match": WEAK_MATCH_FLOOR - 1e-9})
    assert not is_weak_match({"match": WEAK_MATCH_FLOOR})
    assert not is_weak_match({"match": 1.0})
    assert is_weak_match({})  # no match signal: reached over links only
    assert is_weak_match({"match": None})
