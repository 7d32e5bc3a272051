"""ENT-6's resolution rules (graphsvc.core.entity_resolution): pure and deterministic."""

from __future__ import annotations

import itertools

import pytest

from graphsvc.core.entity_resolution import (
    EntityForms,
    confirm_tentative,
    probe_words,
    resolve_forms,
    resolve_query,
)

NAME = {"name"}


@pytest.mark.req("ENT-6")
def test_a_first_name_or_surname_joins_the_one_full_name_that_fits() -> None:
    forms = {"ingrid vasquez": NAME, "vasquez": NAME, "ingrid": NAME, "kafka": NAME}
    assert resolve_forms(forms) == {
        "ingrid vasquez": "ingrid vasquez",
        "vasquez": "ingrid vasquez",
        "ingrid": "ingrid vasquez",
        "kafka": "kafka",
    }


@pytest.mark.req("ENT-6")
def test_two_full_names_that_fit_leave_the_short_form_alone() -> None:
    forms = {"ingrid vasquez": NAME, "marco vasquez": NAME, "vasquez": NAME, "ingrid": NAME}
    out = resolve_forms(forms)
    assert out["vasquez"] == "vasquez"  # ambiguous
    assert out["ingrid"] == "ingrid vasquez"  # still exactly one


@pytest.mark.req("ENT-6")
def test_acronyms_and_hyphen_variants() -> None:
    forms = {
        "site reliability engineering": NAME,
        "sre": NAME,
        "game of thrones": NAME,
        "got": NAME,
        "payments-api": {"identifier"},
        "payments api": NAME,
        "api": {"identifier"},
    }
    out = resolve_forms(forms)
    assert out["sre"] == "site reliability engineering"
    assert out["got"] == "game of thrones"
    assert out["payments-api"] == out["payments api"] == "payments api"
    assert out["api"] == "api"  # neither a name part of a non-name nor initials


@pytest.mark.req("ENT-6")
def test_a_place_or_identifier_does_not_take_a_name_part() -> None:
    forms = {"lake tahoe": {"place"}, "tahoe": NAME, "new york": {"place"}, "york": {"place"}}
    out = resolve_forms(forms)
    assert out["tahoe"] == "tahoe" and out["york"] == "york"


@pytest.mark.req("ENT-6")
def test_the_result_does_not_depend_on_the_order_forms_come_in() -> None:
    forms = [("ingrid vasquez", NAME), ("vasquez", NAME), ("sre", NAME), ("s r e", NAME)]
    results = {
        tuple(sorted(resolve_forms(dict(order)).items())) for order in itertools.permutations(forms)
    }
    assert len(results) == 1


def _entities(*rows: tuple[str, set[str], set[str]]) -> list[EntityForms]:
    return [EntityForms(k, frozenset(f), frozenset(t)) for k, f, t in rows]


@pytest.mark.req("ENT-6", "ENT-4")
def test_a_query_short_form_names_the_one_full_form_it_fits() -> None:
    entities = _entities(
        ("ingrid vasquez", {"ingrid vasquez"}, NAME),
        ("site reliability engineering", {"site reliability engineering"}, NAME),
        ("payments-api", {"payments-api"}, {"identifier"}),
        ("lake tahoe", {"lake tahoe"}, {"place"}),
    )
    keys = ["what", "did", "vasquez", "sre", "payments api", "tahoe", "ingrid"]
    # Capitalised in the query: names of the one full form they fit; "payments api"
    # is a hyphen variant of a key (any case); "ingrid" is not capitalised here.
    named = resolve_query(keys, {"vasquez", "sre", "tahoe"}, entities)
    assert named == ["ingrid vasquez", "site reliability engineering", "payments-api"]
    # A lower-case word that no mention uses names nothing ("ingrid" is not capitalised).
    assert resolve_query(["ingrid"], set(), entities) == []
    # A place's word is not a name part (as in resolve_forms).
    assert resolve_query(["tahoe"], {"tahoe"}, entities) == []


@pytest.mark.req("ENT-6", "ENT-4")
def test_a_query_uses_aliases_and_an_ambiguous_short_form_names_only_itself() -> None:
    joined = _entities(("ingrid vasquez", {"ingrid vasquez", "vasquez"}, NAME))
    # "vasquez" is a form a text used: the query names its entity in any case.
    assert resolve_query(["vasquez"], set(), joined) == ["ingrid vasquez"]
    split = _entities(
        ("ingrid vasquez", {"ingrid vasquez"}, NAME),
        ("marco vasquez", {"marco vasquez"}, NAME),
    )
    assert resolve_query(["vasquez"], {"vasquez"}, split) == []
    alone = [*split, *_entities(("vasquez", {"vasquez"}, NAME))]
    assert resolve_query(["vasquez"], {"vasquez"}, alone) == ["vasquez"]


@pytest.mark.req("ENT-6")
def test_probe_words_cover_every_way_a_query_may_name_an_entity() -> None:
    assert probe_words("game of thrones") == {"game of thrones", "game", "thrones", "got", "gt"}
    assert probe_words("payments-api") == {"payments api", "payments", "api", "pa"}
    assert probe_words("kafka") == {"kafka"}


@pytest.mark.req("ENT-6")
def test_a_tentative_opening_counts_only_when_the_subject_makes_it_a_name() -> None:
    forms = {"ingrid vasquez": NAME, "kafka": NAME, "lake tahoe": {"place"}}
    forms["site reliability engineering"] = NAME
    got = confirm_tentative(forms, ["ingrid", "great", "kafka", "ingrid vasquez", "tahoe"])
    # A one-word entity of its own ("kafka") confirms nothing; a place's word neither.
    assert got == {"ingrid": "ingrid vasquez", "ingrid vasquez": "ingrid vasquez"}
    # Initials alone do not confirm a sentence's opening word; a joined short form does.
    assert confirm_tentative(forms, ["sre"]) == {}
    joined = {**forms, "sre": NAME}
    assert confirm_tentative(joined, ["sre"]) == {"sre": "site reliability engineering"}
    # Two full names fit "vasquez": it stays out (and "ingrid" still counts).
    both = {**forms, "marco vasquez": NAME}
    assert confirm_tentative(both, ["vasquez", "ingrid"]) == {"ingrid": "ingrid vasquez"}
    # Joined short forms confirm to the entity they belong to.
    joined = {"ingrid vasquez": NAME, "vasquez": NAME}
    assert confirm_tentative(joined, ["vasquez"]) == {"vasquez": "ingrid vasquez"}
