"""ENT-6's resolution rules (graphsvc.core.entity_resolution): pure and deterministic."""

from __future__ import annotations

import itertools

import pytest

from graphsvc.core.entity_resolution import resolve_forms

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
