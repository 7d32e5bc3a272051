"""The request values of search, read and inspect (graphsvc.core.requests): the CLI's
path to a running server sends one as the variables of its GraphQL operation, so each
operation declares every field and the schema takes the values as they are."""

from __future__ import annotations

from typing import Any

import pytest
from graphql import OperationDefinitionNode, parse, validate
from graphql.execution.values import get_variable_values

from graphsvc.api.schema import build_schema
from graphsvc.cli.remote import INSPECT, READ, SEARCH
from graphsvc.core.requests import InspectRequest, ReadRequest, SearchRequest
from graphsvc.settings import Settings

SCHEMA = build_schema(Settings())._schema

CASES: list[tuple[str, Any]] = [
    (SEARCH, SearchRequest("tide gauge", depth=1, limit=3, include_archived=True, cursor="c")),
    (READ, ReadRequest("tide gauge", 500, depth=0, limit=2, cursor="c")),
    (
        INSPECT,
        InspectRequest(
            "atm-1",
            rev=2,
            version="logical",
            direction="incoming",
            roles=["cites"],
            limit=0,
            cursor="c",
            range_start=0,
            range_end=10,
            as_of="2026-01-02T03:04:05.000000+00:00",
        ),
    ),
    (INSPECT, InspectRequest("atm-1")),
]


@pytest.mark.req("API-4")
@pytest.mark.parametrize(("document", "request_"), CASES)
def test_the_cli_operation_declares_every_field_of_its_request(
    document: str, request_: Any
) -> None:
    doc = parse(document)
    assert validate(SCHEMA, doc) == []
    op = doc.definitions[0]
    assert isinstance(op, OperationDefinitionNode)
    declared = {v.variable.name.value for v in op.variable_definitions}
    variables = request_.graphql_variables()
    assert set(variables) == declared
    coerced = get_variable_values(SCHEMA, op.variable_definitions, variables)
    assert not isinstance(coerced, list), coerced  # a list: the errors


def test_graphql_variables_are_camel_case_with_enums_as_graphql_spells_them() -> None:
    assert ReadRequest("q", 7).graphql_variables() == {
        "query": "q",
        "memoryTokenBudget": 7,
        "depth": None,
        "limit": None,
        "includeArchived": False,
        "cursor": None,
    }
    variables = InspectRequest("a", version="logical", direction="outgoing").graphql_variables()
    assert (variables["atomId"], variables["version"], variables["direction"]) == (
        "a",
        "LOGICAL",
        "OUTGOING",
    )


def test_a_request_is_a_frozen_value_with_the_operations_defaults() -> None:
    request = InspectRequest("a")
    assert (request.version, request.direction, request.limit) == ("observed", "both", None)
    assert SearchRequest("q") == SearchRequest("q", include_archived=False)
    with pytest.raises(AttributeError):
        request.rev = 2  # type: ignore[misc]
