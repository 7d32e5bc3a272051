"""Document limits (API-3, issue 26): measured once per fragment, refused with codes."""

from __future__ import annotations

from typing import Any

import pytest
from graphql import OperationType, parse

from graphsvc.api.document_limits import (
    DocumentLimits,
    Measure,
    measure,
    parse_document,
    root_field_names,
    root_work,
    select_operation,
)
from graphsvc.api.schema import build_schema
from graphsvc.errors import (
    InvalidInputError,
    OperationNameRequiredError,
    OperationNotFoundError,
    QueryTooComplexError,
    QueryTooDeepError,
)
from graphsvc.settings import Settings

SCHEMA = build_schema(Settings())._schema
LIMITS = DocumentLimits.from_settings(Settings())


def measured(query: str, limits: DocumentLimits = LIMITS, **variables: Any) -> Measure:
    document = parse_document(query, limits)
    return measure(SCHEMA, document, select_operation(document, None), variables, limits)


def doubling(n: int) -> str:
    spreads = "".join(
        f"fragment B{i} on Atom {{ ...B{i - 1} ...B{i - 1} }}\n" for i in range(1, n + 1)
    )
    root = f"{{ atoms(first: 1) {{ edges {{ node {{ ...B{n} }} }} }} }}\n"
    return root + "fragment B0 on Atom { atomId }\n" + spreads


@pytest.mark.req("API-3")
@pytest.mark.parametrize("n", [1, 5, 12])
def test_doubling_fragments_count_two_to_the_n_fields_without_expanding_them(n: int) -> None:
    m = measured(doubling(n), DocumentLimits(max_fields=10**9, max_fragment_depth=64))
    # atoms, edges, node, then 2ⁿ copies of atomId; depth is that of the first copy.
    assert m.fields == 3 + 2**n
    assert m.depth == 3 and m.aliases == 0


@pytest.mark.req("API-3")
def test_doubling_fragments_beyond_the_limits_are_refused_by_depth_or_size() -> None:
    wide = DocumentLimits(max_fragment_depth=64)
    with pytest.raises(QueryTooComplexError) as too_many:
        measured(doubling(40), wide)
    # 3 + 2⁴⁰ fields, counted up to a ceiling that keeps the integers small.
    assert too_many.value.details == {"fields": 10**12, "maxFields": 10_000}
    with pytest.raises(QueryTooDeepError) as chain:
        measured(doubling(40))
    assert chain.value.details == {"fragmentDepth": 41, "maxFragmentDepth": 16}


@pytest.mark.req("API-3")
def test_fragment_cycles_and_unknown_fragments() -> None:
    with pytest.raises(InvalidInputError) as cycle:
        measured(
            '{ atom(atomId: "x") { ...A } } fragment A on Atom { ...B } fragment B on Atom { ...A }'
        )
    assert cycle.value.details == {"fragments": ["A", "B"]}
    # An unknown fragment adds nothing; validation names it afterwards.
    assert measured('{ atom(atomId: "x") { ...Missing atomId } }').fields == 2


@pytest.mark.req("API-3")
def test_depth_counts_fields_as_strawberry_did_and_skips_introspection() -> None:
    assert (
        measured('{ search(query: "x") { hits { atom { links { target { atomId } } } } } }').depth
        == 5
    )
    assert measured("{ __schema { types { fields { type { ofType { name } } } } } }").depth == 0
    with pytest.raises(QueryTooDeepError) as deep:
        measured('{ search(query: "x") { hits { atom { atomId } } } }', DocumentLimits(max_depth=2))
    assert deep.value.details == {"depth": 3, "maxDepth": 2}


@pytest.mark.req("API-3")
def test_text_is_scanned_for_tokens_and_nesting_before_it_is_parsed() -> None:
    with pytest.raises(QueryTooComplexError):
        parse_document("{ " + "a " * 50 + "}", DocumentLimits(max_tokens=40))
    with pytest.raises(QueryTooDeepError):
        parse_document(
            "{ a" + "(x: [" * 40 + "1" + "])" * 40 + " }", DocumentLimits(max_nesting=64)
        )
    # 2,000 levels of braces would overflow the recursive parser: refused by the scan.
    with pytest.raises(QueryTooDeepError):
        parse_document("{ a " * 2000 + "}" * 2000, LIMITS)


@pytest.mark.req("API-3")
def test_operation_choice_follows_the_graphql_spec() -> None:
    two = parse("query A { health } mutation B { resetUsage }")
    with pytest.raises(OperationNameRequiredError):
        select_operation(two, None)
    assert select_operation(two, "B").operation == OperationType.MUTATION
    with pytest.raises(OperationNotFoundError):
        select_operation(two, "C")
    with pytest.raises(InvalidInputError):
        select_operation(parse("fragment F on Query { health }"), None)


@pytest.mark.req("API-3")
def test_root_fields_are_found_through_fragments() -> None:
    doc = parse(
        "query { ...F ... on Query { health } } "
        'fragment F on Query { search(query: "x") { cursor } ...F2 } '
        "fragment F2 on Query { __typename }"
    )
    assert root_field_names(doc, select_operation(doc, None)) == {"search", "health", "__typename"}


@pytest.mark.req("API-3")
def test_root_work_follows_arguments_and_aliases_add_up() -> None:
    def work(query: str, **variables: Any) -> int:
        return measured(query, DocumentLimits(max_cost=10**12), **variables).work

    assert work('{ search(query: "x") { cursor } }') == 50 + 4 * 10 + 200 * 2
    assert (
        work('{ read(query: "x", memoryTokenBudget: 4096) { text } }') == 100 + 4 * 24 + 400 + 204
    )
    big = 'r{i}: read(query: "x", memoryTokenBudget: 1000000, limit: 10000, depth: 32) {{ text }}'
    one = 100 + 40_000 + 6_400 + 50_000
    assert work("{ " + big.format(i=0) + " }") == one
    assert work("{ " + " ".join(big.format(i=i) for i in range(3)) + " }") == 3 * one
    # Variables count; out-of-range values are clamped; wrong types count at defaults.
    q = 'query($l: Int) { search(query: "x", limit: $l) { cursor } }'
    assert work(q, l=100) == 50 + 400 + 400
    assert work(q, l=10**9) == 50 + 4 * 10_000 + 400
    assert work(q, l="many") == 50 + 40 + 400
    assert (
        work(
            'mutation { write(changes: [{id: "a", op: RETIRE}, {id: "b", op: RETIRE}]) '
            "{ repeated } }"
        )
        == 200
    )
    with pytest.raises(QueryTooComplexError) as over:
        measured("{ " + " ".join(big.format(i=i) for i in range(3)) + " }")
    assert over.value.details["work"] == 3 * one
    assert over.value.details["maxCost"] == 250_000


@pytest.mark.req("API-3")
def test_root_work_of_every_root_field_is_defined() -> None:
    for operation, root in (
        (OperationType.QUERY, SCHEMA.query_type),
        (OperationType.MUTATION, SCHEMA.mutation_type),
    ):
        assert root is not None
        for name in root.fields:
            field = parse(f"{{ {name} }}").definitions[0].selection_set.selections[0]  # type: ignore[attr-defined]
            assert root_work(operation, field, {}, LIMITS) > 0, name
