"""The process's kept term statistics (graphsvc.process_state.term_statistics), without a server."""

from __future__ import annotations

import pytest

from graphsvc.core.bm25 import SubjectStats
from graphsvc.process_state.term_statistics import StatisticsCache

GEN = (3, 0, 1)


def _cache() -> StatisticsCache:
    cache = StatisticsCache()
    cache.put("s", GEN, 2000, docs=4, words=40, df={"boat": 2})
    return cache


@pytest.mark.req("ACT-1")
def test_new_terms_join_the_totals_read_at_the_same_generation() -> None:
    cache = _cache()
    assert cache.totals("s", 2000) == GEN
    assert cache.missing("s", ["boat", "fog"]) == ["fog"]
    assert cache.add_terms("s", GEN, 2000, {"fog": 1})
    assert cache.stats("s", ["boat", "fog"], GEN) == SubjectStats(4, 10.0, {"boat": 2, "fog": 1})


@pytest.mark.req("ACT-1")
def test_terms_read_at_another_generation_or_bound_are_not_kept() -> None:
    cache = _cache()
    assert not cache.add_terms("s", (4, 0, 1), 2000, {"fog": 1})
    assert not cache.add_terms("s", GEN, 500, {"fog": 1})
    assert not cache.add_terms("other", GEN, 2000, {"fog": 1})
    assert cache.missing("s", ["fog"]) == ["fog"]
    assert cache.totals("s", 500) is None
    assert cache.totals("other", 2000) is None
    assert cache.missing("other", ["boat"]) == ["boat"]
