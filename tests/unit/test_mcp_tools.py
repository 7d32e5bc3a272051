"""The MCP tools mirror the GraphQL root fields (issue 29), checked without a database.

Names, arguments, nullability, defaults and capabilities come from the GraphQL
schema; every argument reaches a parameter of the facade method the tool calls;
the write schema is graphsvc.inputs.models' model without the InputToken (SPEC
MCP-2); arguments are checked like the front door checks a GraphQL request; the
compact profile lists six tools, described for a model.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
from typing import Any, cast

import pytest
from graphql import GraphQLNonNull, Undefined
from pydantic import ValidationError

from graphsvc.api.schema import build_schema
from graphsvc.core.requests import InspectRequest, ReadRequest, SearchRequest
from graphsvc.errors import BudgetExceededError, GraphsvcError, InvalidInputError
from graphsvc.inputs.models import ChangeIn
from graphsvc.inputs.text_input import check_json_values
from graphsvc.keys.auth import default_capabilities, required_capability
from graphsvc.mcp_api.arguments import ToolSchema
from graphsvc.mcp_api.stdio import _error_for
from graphsvc.mcp_api.tools import TOOLS, Tool, build_tools, listed
from graphsvc.service import Service
from graphsvc.settings import Settings

SETTINGS = Settings()
SCHEMA = build_schema(SETTINGS)._schema
# Service does no I/O when built: the tools only read its settings and limits.
SERVICE = Service(
    SETTINGS,
    cast(Any, None),
    cast(Any, None),
    cast(Any, None),
    secret=b"s" * 32,
    signing_keys=cast(Any, None),
    verification_keys=cast(Any, None),
    worker_of=cast(Any, None),
)
BUILT = build_tools(SCHEMA, SERVICE)
# Arguments the tool converts before the call (graphsvc.inputs.models, as the resolvers do).
CONVERTED = {("write", "changes"), ("write", "options")}
# The facade method's name where it is not the tool's.
METHOD = {"record_use": "record_use"}
# The tools that are a GraphQL root field (the others have argument models of their own).
FIELDS = sorted(n for n, t in BUILT.items() if t.definition.model is None)
# The tools whose arguments reach the facade as one request (graphsvc.core.requests).
REQUESTS: dict[str, type] = {
    "search": SearchRequest,
    "read": ReadRequest,
    "inspect": InspectRequest,
}


def _field(tool: Tool) -> Any:
    d = tool.definition
    root = SCHEMA.mutation_type if d.mutation else SCHEMA.query_type
    assert root is not None
    return root.fields[d.field]


@pytest.mark.req("CORE-1")
def test_every_public_operation_is_a_tool() -> None:
    assert set(BUILT) == {
        "search",
        "read",
        "inspect",
        "lineage",
        "write",
        "record_use",
        "reset_usage",
        "atomise",
        "set_namespace_policy",
        "export_forensic_bundle",
        "purge",
        "remember",
        "entities",
        "changes",
        "atom",
        "status",
    }
    assert len(TOOLS) == len(BUILT)


@pytest.mark.req("MCP-2")
def test_no_tool_is_observe_and_no_input_schema_names_a_token() -> None:
    assert "observe" not in BUILT
    refused = {"input", "token", "inputtoken", "observe", "payloaddigest"}
    for tool in BUILT.values():
        names = _property_names(tool.input_schema())
        assert not {n.lower() for n in names} & refused, (tool.name, names)


def _property_names(schema: Any) -> set[str]:
    """Every property name anywhere in a JSON Schema (its $defs included)."""
    out: set[str] = set()
    if isinstance(schema, dict):
        out |= set(schema.get("properties", {}))
        for value in schema.values():
            out |= _property_names(value)
    elif isinstance(schema, list):
        for value in schema:
            out |= _property_names(value)
    return out


@pytest.mark.req("MCP-4")
def test_the_compact_profile_is_six_tools_described_for_a_model() -> None:
    agent = default_capabilities("agent")
    compact = {n for n, t in BUILT.items() if listed(t, "compact", agent)}
    assert compact == {"search", "read", "remember", "inspect", "entities", "status"}
    full = {n for n, t in BUILT.items() if listed(t, "full", agent)}
    assert compact < full and "write" in full and "changes" in full
    human = default_capabilities("human", purge=True)
    operators = {n for n, t in BUILT.items() if listed(t, "compact", human)} - compact
    assert operators == {"atomise", "set_namespace_policy", "export_forensic_bundle", "purge"}
    for tool in BUILT.values():
        assert "SPEC" not in tool.description and "§" not in tool.description, tool.name
        assert tool.description, tool.name


@pytest.mark.parametrize("name", FIELDS)
def test_a_tools_arguments_are_its_graphql_fields_arguments(name: str) -> None:
    tool = BUILT[name]
    field = _field(tool)
    schema = tool.input_schema()
    assert set(schema["properties"]) == set(field.args)
    required = {a for a, arg in field.args.items() if isinstance(arg.type, GraphQLNonNull)}
    assert set(schema.get("required", [])) == {
        a for a in required if field.args[a].default_value is Undefined
    }
    assert schema["additionalProperties"] is False
    for arg_name, arg in field.args.items():
        if arg.default_value not in (Undefined, None):
            assert schema["properties"][arg_name]["default"] == arg.default_value


@pytest.mark.req("API-2")
@pytest.mark.parametrize("name", FIELDS)
def test_a_tool_needs_the_capability_its_graphql_field_needs(name: str) -> None:
    tool = BUILT[name]
    d = tool.definition
    assert tool.capability == required_capability(d.field, mutation=d.mutation)


def test_an_agent_token_holds_no_operator_tool() -> None:
    agent = default_capabilities("agent")
    visible = {n for n, t in BUILT.items() if t.capability in agent}
    assert visible == {
        "search",
        "read",
        "inspect",
        "lineage",
        "write",
        "record_use",
        "reset_usage",
        "remember",
        "entities",
        "changes",
        "atom",
        "status",
    }


@pytest.mark.parametrize("name", FIELDS)
def test_every_argument_reaches_a_parameter_of_the_facade(name: str) -> None:
    # An argument added to the GraphQL field but not to the facade would be dropped
    # silently by the tool: the snake_case of every argument is a parameter (of the
    # request the facade method takes, for search, read and inspect).
    method = REQUESTS.get(name) or getattr(Service, METHOD.get(name, name))
    params = set(inspect.signature(method).parameters)
    for arg in _field(BUILT[name]).args:
        if (name, arg) in CONVERTED:
            continue
        assert _snake(arg) in params, (name, arg, sorted(params))


@pytest.mark.parametrize("name", sorted(REQUESTS))
def test_a_request_has_a_field_for_each_graphql_argument_and_no_other(name: str) -> None:
    # The CLI sends every field of the request as a GraphQL variable of that name,
    # except those the operation's selection decides (whether `cursor` is selected).
    request = REQUESTS[name]
    fields = {f.name for f in dataclasses.fields(request)} - request.SELECTION_FIELDS
    assert fields == {_snake(arg) for arg in _field(BUILT[name]).args}


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


@pytest.mark.req("MCP-2")
def test_the_write_schema_is_the_edge_model_without_the_token() -> None:
    write = BUILT["write"].input_schema()
    change = ChangeIn.model_json_schema(schema_generator=ToolSchema)
    assert write["properties"]["changes"]["items"] == {"$ref": "#/$defs/ChangeInput"}
    expected = {k: v for k, v in change["properties"].items() if k != "input"}
    assert write["$defs"]["ChangeInput"]["properties"] == expected
    with pytest.raises(InvalidInputError):
        BUILT["write"].parse({"changes": [{"id": "c", "op": "create", "input": "t"}]})
    # No per-field title noise for the model.
    assert '"title"' not in json.dumps(write["properties"])


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("search", {"query": "x", "limit": "3"}),  # GraphQL Int does not take a string
        ("search", {"query": "x", "limit": 2**31}),  # nor more than 32 bits
        ("search", {"query": "x", "includeArchived": "yes"}),
        ("search", {"query": "x", "unknown": 1}),
        ("read", {"query": "x"}),
        ("inspect", {"atomId": "a", "version": "LATEST"}),
        ("record_use", {"eventId": "e", "manifest": []}),
        ("write", {"changes": [{"id": "c", "op": "create", "content": {"text": 1}}]}),
    ],
)
def test_arguments_that_do_not_fit_the_schema_are_invalid_input(
    name: str, arguments: dict[str, Any]
) -> None:
    with pytest.raises(InvalidInputError) as info:
        BUILT[name].parse(arguments)
    assert info.value.message.startswith("invalid arguments: ")
    assert "'3'" not in info.value.message  # never the value itself


def test_a_valid_call_parses_into_the_model() -> None:
    parsed = BUILT["read"].parse({"query": "tides", "memoryTokenBudget": 100, "depth": 1})
    assert parsed.model_dump() == {
        "query": "tides",
        "memoryTokenBudget": 100,
        "depth": 1,
        "limit": None,
        "includeArchived": None,
        "cursor": None,
    }
    inspected = BUILT["inspect"].parse({"atomId": "a", "direction": "incoming"})
    assert getattr(inspected, "direction") == "incoming"  # noqa: B009


@pytest.mark.req("API-3")
def test_an_oversized_write_batch_is_refused_before_validation() -> None:
    changes = [{"id": f"c{i}"} for i in range(SETTINGS.write.max_changes + 1)]
    with pytest.raises(BudgetExceededError):
        BUILT["write"].parse({"changes": changes})


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ({"query": "a\ud800"}, "arguments.query"),
        ({"changes": [{"content": {"text": "\udfff"}}]}, "arguments.changes[0].content.text"),
        ({"bad\ud801key": 1}, "arguments (a key)"),
    ],
)
def test_lone_surrogates_are_invalid_input_with_their_path(value: Any, path: str) -> None:
    with pytest.raises(InvalidInputError) as info:
        check_json_values(value, 64, "arguments")
    assert info.value.details["path"] == path
    # The message names the place, never the text (it could not be encoded).
    info.value.message.encode("utf-8")


def test_json_nested_deeper_than_the_limit_is_invalid_input() -> None:
    deep: Any = "leaf"
    for _ in range(70):
        deep = [deep]
    with pytest.raises(InvalidInputError):
        check_json_values({"x": deep}, 64)
    check_json_values({"x": deep}, 80)
    check_json_values({"ok": ["😀 paired surrogates are one code point", {"k": "v"}]}, 8)


def test_unreadable_stdio_lines_get_json_rpc_errors() -> None:
    import mcp_types as types

    def error(line: str) -> Any:
        try:
            types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        except ValidationError as exc:
            return _error_for(exc)
        raise AssertionError(f"{line!r} parsed")

    parse = error("{not json")
    assert (parse.id, parse.error.code) == (None, -32700)
    assert parse.error.data == {"code": "INVALID_INPUT", "message": parse.error.message}
    invalid = error('{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": 3}')
    assert (invalid.id, invalid.error.code) == (7, -32600)
    nameless = error('{"jsonrpc": "2.0", "id": true, "method": 5}')
    assert (nameless.id, nameless.error.code) == (None, -32600)


def test_tool_errors_carry_the_stable_code() -> None:
    from graphsvc.mcp_api.server import error_result

    result = error_result(InvalidInputError("bad", details={"changeId": "c"}))
    assert result.is_error is True
    assert result.structured_content == {
        "code": "INVALID_INPUT",
        "message": "bad",
        "details": {"changeId": "c"},
    }
    text = result.content[0]
    assert getattr(text, "text", None) == "INVALID_INPUT: bad"
    assert error_result(GraphsvcError("internal error")).structured_content == {
        "code": "INTERNAL",
        "message": "internal error",
    }
