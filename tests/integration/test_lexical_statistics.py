"""The lexical signal is scored with the subject's own statistics (graphsvc.core.bm25):
another subject's data cannot change a subject's lexical scores (SPEC API-2, ACT-1).

With Lucene's index-wide statistics (``GRAPHSVC_LEXICAL_STATISTICS=index``) the
same writes of another subject do change them: that is what the default removes.
"""

from __future__ import annotations

import math
import uuid

import pytest

from graphsvc.core.binding import Binding
from graphsvc.core.bm25 import SubjectStats, query_terms, score_bodies
from graphsvc.core.requests import SearchRequest
from graphsvc.inputs.models import parse_changes
from graphsvc.process_state.term_statistics import (
    StatisticsCache,
    statistics_cache,
    subject_stats_soon,
)
from graphsvc.runtime import service_for
from graphsvc.service import Service
from graphsvc.settings import Settings

QUERY = "rowing boat harbour keeper"
TEXTS = {
    "boat": "The lighthouse keeper painted the rowing boat blue",
    "club": "A rowing club meets at the harbour every Sunday morning",
    "log": "The keeper's logbook records storms and fog",
    "bread": "Fresh bread from the bakery near the harbour",
    "none": "Quarterly figures were presented to the board",
}


def _write(service: Service, binding: Binding, texts: dict[str, str]) -> dict[str, str]:
    changes = [
        {"id": key, "op": "create", "content": {"text": text, "links": []}, "sources": []}
        for key, text in texts.items()
    ]
    outcome = service.write(binding, parse_changes(changes))
    assert outcome.indexing == "complete"
    return {key: outcome.changes[key].atom_id for key in texts}


def _lexical(service: Service, binding: Binding) -> dict[str, float | None]:
    result = service.search(binding, SearchRequest(QUERY, depth=0, limit=20))
    return {h.atom.atom_id: h.breakdown["lexical"] for h in result.hits}


def _assert_own_bm25(
    service: Service,
    got: dict[str, float | None],
    ids: dict[str, str],
    texts: dict[str, str],
    stats: SubjectStats,
    query: str = QUERY,
) -> None:
    """Each body's lexical signal is its BM25 under ``stats``, normalised by the best."""
    keys = list(texts)
    raw, _ = score_bodies(
        query_terms(query, service.settings.ranking.lexical_proximity),
        [texts[k] for k in keys],
        stats,
        slop=service.settings.ranking.lexical_proximity,
    )
    best = max(raw)
    for key, score in zip(keys, raw, strict=True):
        assert (got.get(ids[key]) or 0.0) == pytest.approx(score / best, rel=1e-12), key


def _binding(name: str) -> Binding:
    return Binding(f"t-lexstats-{name}-{uuid.uuid4().hex[:10]}", "default", "human", "alice")


@pytest.mark.req("ACT-1")
def test_another_subjects_skewed_vocabulary_leaves_the_lexical_scores_unchanged(
    service: Service, test_settings: Settings
) -> None:
    assert service.settings.ranking.lexical_statistics == "subject"
    lucene = service_for(
        test_settings.with_(lexical_statistics="index"),
        service.db,
        service.embedder,
        service.tokenizer,
    )
    mine = _binding("mine")
    ids = _write(service, mine, TEXTS)
    alone = _lexical(service, mine)
    alone_lucene = _lexical(lucene, mine)
    result = service.search(mine, SearchRequest(QUERY, depth=0))
    assert result.diagnostics["acquisition"]["lexicalStatistics"] == "subject"
    # Every body holding a query word has a lexical score, the best 1 (÷ max).
    assert max(v or 0.0 for v in alone.values()) == 1.0
    assert (alone.get(ids["none"]) or 0.0) == 0.0
    assert all((alone[ids[k]] or 0.0) > 0.0 for k in ("boat", "club", "log", "bread"))

    # Another subject, its vocabulary skewed: "rowing" and "harbour" everywhere, in
    # long bodies (other document frequencies, body count and average length).
    theirs = _binding("theirs")
    filler = " ".join(f"w{i}" for i in range(40))
    _write(
        service,
        theirs,
        {f"t{i}": f"rowing harbour rowing harbour {filler} {i}" for i in range(40)},
    )

    assert _lexical(service, mine) == alone  # exactly: nothing of theirs counts
    beside_lucene = _lexical(lucene, mine)
    assert beside_lucene.keys() == alone_lucene.keys()
    assert any(
        not math.isclose(beside_lucene[a] or 0.0, alone_lucene[a] or 0.0, rel_tol=1e-9)
        for a in alone_lucene
    )


@pytest.mark.req("ACT-1")
def test_the_lexical_score_is_the_subjects_own_bm25_normalised_by_the_best(
    service: Service,
) -> None:
    mine = _binding("exact")
    ids = _write(service, mine, TEXTS)
    got = _lexical(service, mine)
    # The subject's statistics, counted by hand from TEXTS: five bodies; "rowing" in
    # two, "boat" in one, "harbour" in two, "keeper" in two (the possessive counts).
    words = sum(len(t.split(" ")) for t in TEXTS.values())
    stats = SubjectStats(5, words / 5, {"row": 2, "boat": 1, "harbour": 2, "keeper": 2})
    _assert_own_bm25(service, got, ids, TEXTS, stats)


@pytest.mark.req("ACT-1", "ACT-4")
def test_a_small_subjects_whole_ranking_is_its_own(
    service: Service, test_settings: Settings
) -> None:
    # Subject statistics, every candidate scored lexically, and the exact vector scan
    # for a small subject: scores and order are the same beside another subject.
    svc = service_for(
        test_settings.with_(
            lexical_statistics="subject", lexical_scope="candidates", vector_exact_max=2000
        ),
        service.db,
        service.embedder,
        service.tokenizer,
    )
    mine = _binding("whole")
    _write(svc, mine, TEXTS)

    def ranking() -> list[tuple[str, float, float | None]]:
        result = svc.search(mine, SearchRequest(QUERY, limit=20))
        assert result.diagnostics["acquisition"]["vectorMode"] == "exact"
        return [(h.atom.atom_id, h.score, h.breakdown["lexical"]) for h in result.hits]

    alone = ranking()
    assert len(alone) >= 4  # every body holding a query word (the last may score 0)
    theirs = _binding("whole-theirs")
    _write(
        svc,
        theirs,
        {f"t{i}": f"the rowing boat of the harbour keeper, number {i}" for i in range(40)},
    )
    assert ranking() == alone


@pytest.mark.req("ACT-1")
def test_every_candidate_gets_its_bodys_lexical_score_by_default(
    service: Service, test_settings: Settings
) -> None:
    # Three seeds: Lucene's three best hits are the short bodies; the vector leg's
    # three nearest are the long ones, which hold the rare word once.
    assert service.settings.ranking.lexical_scope == "candidates"
    texts = {
        "short1": "zorblax",
        "short2": "zorblax zorblax",
        "short3": "zorblax zorblax zorblax",
        # Near the query's meaning, with none of its words beside "zorblax".
        "long1": "zorblax: a small falcon hangs in the air over the grassland, stalking rodents",
        "long2": "zorblax notes: a bird of prey floats on the wind over fields seeking rodents",
        "long3": "zorblax diary: raptors circled over the pasture, chasing little field creatures",
    }
    mine = _binding("scope")
    ids = _write(service, mine, texts)
    query = "zorblax kestrel hovering above a meadow hunting voles and mice"
    lexical: dict[str, dict[str, float]] = {}
    for scope in ("hits", "candidates"):
        svc = service_for(
            test_settings.with_(max_seeds=3, lexical_scope=scope),
            service.db,
            service.embedder,
            service.tokenizer,
        )
        result = svc.search(mine, SearchRequest(query, depth=0, limit=10))
        assert result.diagnostics["acquisition"]["lexicalCandidates"] == 3
        lexical[scope] = {h.atom.atom_id: h.breakdown["lexical"] or 0.0 for h in result.hits}
    # With only the hits scored, a seed from the vector leg has no lexical score ...
    assert any(v == 0.0 for v in lexical["hits"].values())
    # ... by default every candidate holding the query's words has its own.
    assert set(lexical["candidates"]) <= set(ids.values())
    assert all(v > 0 for v in lexical["candidates"].values())


@pytest.mark.req("ACT-1")
def test_a_subject_over_the_statistics_bound_keeps_lucenes_statistics(
    service: Service, test_settings: Settings
) -> None:
    """Reading a subject's statistics is linear in its size: above the bound the
    lexical score is Lucene's, and the diagnostics say so."""
    binding = _binding("bound")
    _write(service, binding, TEXTS)  # five bodies
    bounded = service_for(
        test_settings.with_(lexical_statistics_max=len(TEXTS) - 1),
        service.db,
        service.embedder,
        service.tokenizer,
    )
    at_bound = service_for(
        test_settings.with_(lexical_statistics_max=len(TEXTS)),
        service.db,
        service.embedder,
        service.tokenizer,
    )
    over = bounded.search(binding, SearchRequest(QUERY, depth=0, limit=20))
    within = at_bound.search(binding, SearchRequest(QUERY, depth=0, limit=20))
    assert over.diagnostics["acquisition"]["lexicalStatistics"] == "index"
    assert within.diagnostics["acquisition"]["lexicalStatistics"] == "subject"
    assert {h.atom.atom_id for h in over.hits} == {h.atom.atom_id for h in within.hits}


def _statistics_reads(query: str = "search/term_statistics") -> float:
    from graphsvc.telemetry.metrics import REGISTRY

    value = REGISTRY.get_sample_value(
        "graphsvc_neo4j_query_duration_seconds_count", {"query": query}
    )
    return value or 0.0


@pytest.fixture(scope="module")
def indexes_only(service: Service, test_settings: Settings) -> Service:
    """Both candidate legs asked of Neo4j (no head mirror): the statistics read here
    are what a subject above the mirror's bound, or a process without it, uses."""
    return service_for(
        test_settings.with_(head_mirror_max=0), service.db, service.embedder, service.tokenizer
    )


@pytest.mark.req("ACT-1")
def test_the_statistics_are_read_once_per_write_generation(indexes_only: Service) -> None:
    """A repeated search reads no statistics; a write (which moves the subject's change
    sequence, read by every search's fulltext query, whoever wrote) makes the next
    search read them again, and its scores are the new statistics' BM25."""
    service = indexes_only
    mine = _binding("generation")
    ids = _write(service, mine, TEXTS)
    first = _lexical(service, mine)
    reads = _statistics_reads()
    assert _lexical(service, mine) == first
    assert _statistics_reads() == reads  # served from the kept statistics

    more = {"quay": "The harbour master walked the quay at dawn"}
    ids |= _write(service, mine, more)
    got = _lexical(service, mine)
    assert _statistics_reads() == reads + 1  # the generation moved: read again
    texts = TEXTS | more
    words = sum(len(t.split(" ")) for t in texts.values())
    stats = SubjectStats(6, words / 6, {"row": 2, "boat": 1, "harbour": 3, "keeper": 2})
    _assert_own_bm25(service, got, ids, texts, stats)
    # A query with a term not seen yet is one more read, even at the same generation.
    fog = service.search(mine, SearchRequest("lighthouse fog", depth=0, limit=10))
    assert _statistics_reads() == reads + 2
    fog_lexical = {h.atom.atom_id: h.breakdown["lexical"] or 0.0 for h in fog.hits}
    _assert_own_bm25(
        service,
        fog_lexical,
        ids,
        texts,
        SubjectStats(6, words / 6, {"lighthous": 1, "fog": 1}),
        query="lighthouse fog",
    )


@pytest.mark.req("ACT-1")
def test_new_terms_at_a_kept_generation_reuse_the_kept_body_count_and_length(
    indexes_only: Service,
) -> None:
    """The read counts only what the process lacks: at the generation whose totals it
    keeps, the (here deliberately false) kept body count is used, not read again; at
    an older generation everything is read."""
    service = indexes_only
    mine = _binding("kept")
    _write(service, mine, TEXTS)
    _lexical(service, mine)  # keeps the totals at the current generation
    db, bound = service.db, service.settings.ranking.lexical_statistics_max
    kept_at = statistics_cache(db).totals(mine.subject, bound)
    assert kept_at is not None
    terms = {"lighthous": "lighthouse", "fog": "fog"}
    real = db.facts["termStatistics"]
    try:
        for at, docs in ((kept_at, 999), ((kept_at[0] - 1, *kept_at[1:]), len(TEXTS))):
            planted = StatisticsCache()
            planted.put(mine.subject, at, bound, 999, 999 * 9, {"row": 2})
            db.facts["termStatistics"] = planted
            got = subject_stats_soon(db, mine.subject, terms, bound)()
            assert got is not None
            assert got.docs == docs
            assert dict(got.df) == {"lighthous": 1, "fog": 1}
    finally:
        db.facts["termStatistics"] = real
