"""Fulltext queries built from user text: terms escaped, never Lucene syntax."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphsvc.core.bm25 import escape_term, fulltext_query


def test_terms_are_lower_cased_and_or_ed_over_the_text_field() -> None:
    assert fulltext_query("Kestrel AND Falcon", None) == "text:(kestrel and falcon)"


def test_special_characters_are_escaped() -> None:
    assert escape_term('a+b:"c"?') == 'a\\+b\\:\\"c\\"\\?'
    assert fulltext_query("why? (really)", None) == "text:(why\\? \\(really\\))"


def test_text_without_terms_makes_no_query() -> None:
    assert fulltext_query("   ", None) is None
    assert fulltext_query("\\ \\", "s") is None


def test_the_subject_clause_filters_without_scoring() -> None:
    assert fulltext_query("tide", 'we"ird') == 'text:(tide) AND subject:"we\\"ird"^0'


def test_proximity_adds_a_sloppy_phrase_per_neighbouring_pair() -> None:
    assert fulltext_query("support group meeting", None, proximity=3) == (
        'text:(support group meeting "support group"~3 "group meeting"~3)'
    )
    # One term has no pair; proximity 0 is the plain query.
    assert fulltext_query("tide", None, proximity=3) == "text:(tide)"
    assert fulltext_query("a b", None, proximity=0) == "text:(a b)"


def test_proximity_phrases_keep_quotes_escaped() -> None:
    query = fulltext_query('say "hi" now', "s", proximity=2)
    assert query == ('text:(say \\"hi\\" now "say \\"hi\\""~2 "\\"hi\\" now"~2) AND subject:"s"^0')


@given(st.text(max_size=200), st.integers(min_value=0, max_value=5))
def test_every_quote_and_paren_of_user_text_is_escaped(text: str, proximity: int) -> None:
    query = fulltext_query(text, None, proximity)
    if query is None:
        return
    body = query[len("text:(") : -1]
    # Outside the escapes, the only quotes are the ones proximity phrases add, in
    # pairs, and no unescaped parenthesis is left from the user's text.
    unescaped: list[str] = []
    i = 0
    while i < len(body):
        if body[i] == "\\":
            i += 2
            continue
        unescaped.append(body[i])
        i += 1
    assert "(" not in unescaped and ")" not in unescaped
    assert unescaped.count('"') % 2 == 0


@pytest.mark.parametrize("proximity", [1, 4])
def test_at_most_64_terms_are_asked(proximity: int) -> None:
    query = fulltext_query(" ".join(f"w{i}" for i in range(100)), None, proximity)
    assert query is not None
    assert "w63" in query and "w64" not in query
