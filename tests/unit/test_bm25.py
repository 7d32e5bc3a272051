"""The lexical signal's BM25 with one subject's own statistics (graphsvc.core.bm25)."""

from __future__ import annotations

import math

import pytest

from graphsvc.core.activation import normalise_lexical_by
from graphsvc.core.bm25 import (
    ANALYZER,
    ENGLISH_STOP_WORDS,
    SubjectStats,
    analyse,
    bm25_idf,
    body_length,
    indexed,
    query_terms,
    score_bodies,
    term_query,
)
from graphsvc.errors import InvalidInputError


def test_analysis_follows_lucenes_english_analyzer() -> None:
    a = analyse("The painter's Paintings: she PAINTED it, and then painting again.")
    # Stop words (the, it, and, then) dropped with their positions kept; possessive
    # removed; lower case; Porter stems (painted/painting/paintings alike).
    assert a.terms == ("painter", "paint", "she", "paint", "paint", "again")
    assert a.positions == (1, 2, 3, 4, 8, 9)
    assert a.surface == ("painter", "paintings", "she", "painted", "painting", "again")
    assert ANALYZER == "english"
    assert {"the", "a", "is", "with"} <= ENGLISH_STOP_WORDS
    assert "what" not in ENGLISH_STOP_WORDS  # Lucene's set is short
    assert analyse("don't 3.5 self-care").terms == ("don't", "3.5", "self", "care")


def test_query_terms_pairs_neighbours_and_keeps_one_surface_word_per_term() -> None:
    q = query_terms("Paint the lake, painting lakes", proximity=3)
    assert q.terms == ("paint", "lake", "paint", "lake")
    # Offsets count the dropped stop word ("the") as a position.
    assert q.pairs == (("paint", "lake", 2), ("lake", "paint", 1), ("paint", "lake", 1))
    assert q.surface == {"paint": "paint", "lake": "lake"}
    assert query_terms("Paint the lake", proximity=0).pairs == ()
    assert query_terms("the and of", proximity=3).terms == ()


def test_idf_is_lucenes() -> None:
    assert bm25_idf(4, 2) == pytest.approx(math.log(2.0))
    assert bm25_idf(10, 10) > 0.0


def test_scores_against_a_hand_computed_bm25() -> None:
    query = query_terms("red fox", proximity=0)
    bodies = ["red fox", "red red dog jumps", "blue bird"]
    stats = SubjectStats(docs=4, avg_length=3.0, df={"red": 2, "fox": 1})
    scores, bound = score_bodies(query, bodies, stats)
    idf_red = math.log(1 + (4 - 2 + 0.5) / (2 + 0.5))  # ln 2
    idf_fox = math.log(1 + (4 - 1 + 0.5) / (1 + 0.5))  # ln 10/3
    k_short = 1.2 * (1 - 0.75 + 0.75 * 2 / 3.0)  # 0.9: two words of an average three
    k_long = 1.2 * (1 - 0.75 + 0.75 * 4 / 3.0)  # 1.5
    assert scores[0] == pytest.approx(idf_red / (1 + k_short) + idf_fox / (1 + k_short))
    assert scores[1] == pytest.approx(idf_red * 2 / (2 + k_long))
    assert scores[2] == 0.0
    # The bound: every clause's tf / (tf + K) is below 1.
    assert bound == pytest.approx(idf_red + idf_fox)
    assert all(s < bound for s in scores)


def test_a_sloppy_pair_adds_its_two_idfs_times_its_frequency() -> None:
    query = query_terms("support group", proximity=3)
    bodies = ["support group met", "support came at noon group", "group support x"]
    stats = SubjectStats(docs=3, avg_length=4.0, df={"support": 3, "group": 3})
    scores, bound = score_bodies(query, bodies, stats, slop=3)
    idf = bm25_idf(3, 3)
    term_only = [2 * idf / (1 + 1.2 * (0.25 + 0.75 * n / 4.0)) for n in (3, 5, 3)]
    # "support group": distance 0 → freq 1; "support came at noon group": 4 words
    # apart, offset 1 → distance 3 ("at" is a stop word but keeps its position) →
    # freq 1/4; reversed "group support": distance 2 → freq 1/3.
    for i, (n, freq) in enumerate([(3, 1.0), (5, 0.25), (3, 1 / 3)]):
        k = 1.2 * (0.25 + 0.75 * n / 4.0)
        assert scores[i] == pytest.approx(term_only[i] + 2 * idf * freq / (freq + k))
    assert bound == pytest.approx(4 * idf)
    farther, _ = score_bodies(query, ["support a b c d e group"], stats, slop=3)
    assert farther[0] == pytest.approx(2 * idf / (1 + 1.2 * (0.25 + 0.75 * 7 / 4.0)))


def test_a_term_the_statistics_missed_still_counts_its_bodies() -> None:
    # The index's analysis and this one may disagree on a rare word: df is at least
    # the bodies here that hold the term, and N at least every df.
    query = query_terms("zyx", proximity=0)
    scores, bound = score_bodies(query, ["zyx", "zyx zyx"], SubjectStats(1, 1.0, {}))
    assert bound == pytest.approx(bm25_idf(2, 2))
    assert all(s > 0 for s in scores)


def test_bad_statistics_are_rejected() -> None:
    with pytest.raises(InvalidInputError):
        score_bodies(query_terms("a b", 0), ["x"], SubjectStats(-1, 1.0, {}))
    with pytest.raises(InvalidInputError):
        score_bodies(query_terms("a b", 0), ["x"], SubjectStats(1, 1.0, {}), b=2.0)


def test_body_length_splits_like_cyphers_split() -> None:
    assert body_length("a b  c") == 4  # split(text, ' ') keeps the empty word
    assert body_length("") == 1


def test_normalising_by_a_bound_keeps_a_weak_best_hit_weak() -> None:
    assert normalise_lexical_by({"a": 1.0, "b": 0.5}, 4.0) == {"a": 0.25, "b": 0.125}
    assert normalise_lexical_by({"a": 5.0}, 4.0) == {"a": 1.0}
    for bad in (0.0, -1.0, math.nan):
        with pytest.raises(InvalidInputError):
            normalise_lexical_by({"a": 1.0}, bad)
    with pytest.raises(InvalidInputError):
        normalise_lexical_by({"a": -1.0}, 1.0)


def test_term_query_names_one_word_and_the_subject() -> None:
    assert term_query("caroline", 's"1') == 'text:(caroline) AND subject:"s\\"1"'
    assert term_query("a:b", "s") == 'text:(a\\:b) AND subject:"s"'


@pytest.mark.req("ACT-1")
def test_a_body_scored_again_is_not_analysed_again_and_scores_the_same() -> None:
    bodies = [f"The keeper rowed boat number {i} to the harbour" for i in range(5)]
    q = query_terms("keeper boat harbour", 3)
    stats = SubjectStats(5, 9.0, {"keeper": 5, "boat": 5, "harbour": 5})
    first, _ = score_bodies(q, bodies, stats, slop=3)
    before = indexed.cache_info()
    again, _ = score_bodies(q, list(reversed(bodies)), stats, slop=3)
    after = indexed.cache_info()
    assert again == list(reversed(first))
    assert after.hits - before.hits == len(bodies)
    assert after.misses == before.misses
