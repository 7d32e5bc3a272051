"""The entity index's pure parts (SPEC §16): keys, the rule extractor, entity nodes
in the activation solve (ENT-4)."""

from __future__ import annotations

import numpy as np
import pytest

from graphsvc.core.activation import (
    build_edges,
    entity_graph,
    entity_inflow,
    head_scores,
    propagate,
)
from graphsvc.core.entity_keys import entity_key, fold_entity, merge_mentions, query_keys
from graphsvc.core.entity_rules import extract_rules, query_names
from graphsvc.errors import InvalidInputError


def keys(text: str) -> dict[str, str]:
    return {m.key: m.type for m in extract_rules(text)}


@pytest.mark.req("ENT-1")
def test_keys_fold_case_articles_possessives_and_punctuation() -> None:
    assert entity_key("The Payments-API") == "payments-api"
    assert entity_key("Caroline's") == "caroline"
    assert entity_key("Dr. Smith") == entity_key("dr smith") == "dr smith"
    assert entity_key("  “Boston”  ") == "boston"
    assert entity_key("...") == ""


@pytest.mark.req("ENT-1")
def test_rules_find_identifiers_dates_and_names_and_skip_sentence_starts() -> None:
    found = keys(
        "INC-2041 (2026-02-20, payments-api): the follow-up of Dr. Smith's in-flight "
        "fix was noted on 8 May, 2023 and May 9th 2023. Yesterday Melanie met Jon."
    )
    assert found == {
        "inc-2041": "identifier",
        "2026-02-20": "date",
        "payments-api": "identifier",
        "smith": "person",
        "2023-05-08": "date",
        "2023-05-09": "date",
        "melanie": "name",
        "jon": "name",
    }
    assert keys("Wow, that sounds great! Thanks.") == {}
    assert keys("Later Caroline's sister came. Jon and Gina stayed.") == {
        "caroline": "name",
        "jon": "name",
        "gina": "name",
    }
    assert keys("connections_in_use counts PgBouncer slots") == {
        "connections_in_use": "identifier",
        "pgbouncer": "identifier",
    }


@pytest.mark.req("ENT-6", "ENT-1")
def test_a_sentence_opening_the_text_cannot_tell_is_a_tentative_mention() -> None:
    def found(text: str) -> dict[str, bool]:
        return {m.key: m.tentative for m in extract_rules(text, tentative=True)}

    assert found("Ingrid went home. Great news from Jon.") == {
        "ingrid": True,
        "great": True,
        "jon": False,
    }
    # A name opening a sentence: the span is tentative, its rest is found as before.
    assert found("Ingrid Vasquez went home.") == {"vasquez": False, "ingrid vasquez": True}
    # Told by the text itself: not tentative; nothing tentative without the flag.
    assert found("Ingrid went home. Then Ingrid left.") == {"ingrid": False}
    assert keys("Ingrid went home.") == {}
    # Function words, relative days and identifiers never are.
    assert found("Yesterday we met. Wow. Payments-api broke.") == {}


@pytest.mark.req("ENT-6", "ENT-4")
def test_query_names_are_the_words_a_query_capitalises() -> None:
    assert query_names("What did Vasquez say to the SRE team's lead in May?") == {
        "vasquez",
        "sre",
    }
    assert query_names("what did vasquez say") == frozenset()


@pytest.mark.req("ENT-1")
def test_one_text_gives_one_mention_per_key_with_its_aliases() -> None:
    [m] = merge_mentions([("Caroline's", "name"), ("Caroline", "name"), ("CAROLINE", "name")])
    assert (m.key, m.name, m.count) == ("caroline", "Caroline", 3)
    assert m.aliases == ("CAROLINE", "Caroline", "Caroline's")
    assert extract_rules("Melanie and Jon met; later Jon left.") == extract_rules(
        "Melanie and Jon met; later Jon left."
    )


@pytest.mark.req("ENT-3")
def test_an_entity_shows_only_what_its_remaining_mentions_say() -> None:
    facts = fold_entity("caroline", [("Caroline", "name", 2, ["Caroline", "Caroline's"])])
    assert facts.aliases == ("Caroline", "Caroline's") and facts.mentions == 1
    assert fold_entity("x", []).mentions == 0


@pytest.mark.req("ENT-4")
def test_query_keys_cover_the_names_a_lower_case_query_uses() -> None:
    got = query_keys("who owns the payments-api after INC-2041?")
    assert "payments-api" in got and "inc-2041" in got and "payments-api after" in got


def _graph(weight: float, query_base: float = 0.0):  # type: ignore[no-untyped-def]
    # heads 0..3; 0 and 2 mention entity 0; 1 links to 0; head 3 mentions nothing.
    src, dst, w = build_edges(4, [(1, 0, "r")])
    b = np.array([1.0, 0.0, 0.0, 0.5])
    return entity_graph(
        4, src, dst, w, b, [(0, 0), (0, 2)], 1,
        propagation=0.5, entity_weight=weight, query_entities=[0], query_base=query_base,
    )  # fmt: skip


@pytest.mark.req("ENT-4")
def test_a_head_reaches_another_through_an_entity_they_both_mention() -> None:
    g = _graph(1.0)
    r = propagate(g.n, g.src, g.dst, g.weight, g.b, propagation=0.5, row_sums=g.row_sums)
    scores = head_scores(r.a, g.n_heads)
    assert scores.shape == (4,) and abs(scores.sum() - 1.0) < 1e-12
    assert scores[2] > 0  # only reachable through the entity
    inflow = entity_inflow(g, r.a)
    assert inflow[2] == pytest.approx(r.a[2])  # all of head 2 came through it
    assert inflow[3] == 0.0


@pytest.mark.req("ENT-4")
def test_an_entity_spreads_by_its_degree_so_a_common_one_cannot_flood() -> None:
    src, dst, w = build_edges(1, [])
    many = entity_graph(
        11, src, dst, w, np.r_[1.0, np.zeros(10)], [(0, i) for i in range(11)], 1,
        propagation=0.5, entity_weight=1.0,
    )  # fmt: skip
    r = propagate(many.n, many.src, many.dst, many.weight, many.b, propagation=0.5,
                  row_sums=many.row_sums)  # fmt: skip
    # Every head spreads 0.5 of its activation to the entity, which shares what it
    # gets among its 11 heads: each unmatched head holds 1/11 of it, no more.
    entity = r.a[11]
    assert entity == pytest.approx(0.5 * r.a[:11].sum(), rel=1e-9)
    assert r.a[1] == pytest.approx(entity / 11, rel=1e-9)
    assert head_scores(r.a, 11)[1] < head_scores(r.a, 11)[0] / 10


@pytest.mark.req("ENT-4")
def test_with_entity_weights_zero_ranking_is_exactly_section_5() -> None:
    src, dst, w = build_edges(4, [(1, 0, "r")])
    b = np.array([1.0, 0.0, 0.0, 0.5])
    plain = propagate(4, src, dst, w, b, propagation=0.5)
    g = _graph(0.0, query_base=0.0)
    r = propagate(g.n, g.src, g.dst, g.weight, g.b, propagation=0.5, row_sums=g.row_sums)
    assert np.array_equal(head_scores(r.a, 4), plain.scores)


def _anchored(anchors: list[int], weight: float):  # type: ignore[no-untyped-def]
    # heads 0..4, no links; entity 0: heads 0 and 1; entity 1: head 0 alone;
    # entity 2: heads 2 and 3; entity 3: heads 1 and 4.
    src, dst, w = build_edges(5, [])
    b = np.array([0.8, 0.6, 0.1, 0.0, 0.0])
    return entity_graph(
        5, src, dst, w, b, [(0, 0), (0, 1), (1, 0), (2, 2), (2, 3), (3, 1), (3, 4)], 4,
        propagation=0.5, entity_weight=1.0, anchor_heads=anchors, anchor_weight=weight,
    )  # fmt: skip


@pytest.mark.req("ENT-4")
def test_an_anchor_seeds_the_entities_it_shares_with_other_heads() -> None:
    g = _anchored([0, 1], 0.5)
    # Entity 0 is named by both anchors: the better one's activation counts. Entity 1
    # leads only back to its anchor: nothing. Entity 2 has no anchor: nothing.
    assert list(g.b[5:]) == pytest.approx([0.5 * 0.8, 0.0, 0.0, 0.5 * 0.6])
    assert list(g.b[:5]) == [0.8, 0.6, 0.1, 0.0, 0.0]  # the heads' own base stays
    r = propagate(g.n, g.src, g.dst, g.weight, g.b, propagation=0.5, row_sums=g.row_sums)
    plain = _anchored([0, 1], 0.0)
    p = propagate(plain.n, plain.src, plain.dst, plain.weight, plain.b, propagation=0.5,
                  row_sums=plain.row_sums)  # fmt: skip
    # Head 4, named only with anchor 1, gains; head 3, behind no anchor, does not.
    assert head_scores(r.a, 5)[4] > head_scores(p.a, 5)[4] > 0.0
    assert r.a[3] == pytest.approx(p.a[3])


@pytest.mark.req("ENT-4")
def test_without_anchors_or_anchor_weight_the_graph_is_unchanged() -> None:
    base = _anchored([], 0.0)
    for g in (_anchored([], 1.0), _anchored([0], 0.0)):
        assert np.array_equal(g.b, base.b) and np.array_equal(g.weight, base.weight)


def test_entity_graph_refuses_bad_input() -> None:
    src, dst, w = build_edges(1, [])
    with pytest.raises(InvalidInputError):
        entity_graph(1, src, dst, w, np.ones(1), [(1, 0)], 1, propagation=0.5, entity_weight=1)
    with pytest.raises(InvalidInputError):
        entity_graph(1, src, dst, w, np.ones(1), [], 0, propagation=0.5, entity_weight=-1)
    with pytest.raises(InvalidInputError):
        entity_graph(1, src, dst, w, np.ones(1), [(0, 0)], 1, propagation=0.5,
                     entity_weight=1, anchor_heads=[1], anchor_weight=1)  # fmt: skip
    with pytest.raises(InvalidInputError):
        entity_graph(1, src, dst, w, np.ones(1), [], 0, propagation=0.5, entity_weight=1,
                     anchor_weight=-0.5)  # fmt: skip
    with pytest.raises(InvalidInputError):
        propagate(1, src, dst, w, np.ones(1), row_sums=[2.0])
