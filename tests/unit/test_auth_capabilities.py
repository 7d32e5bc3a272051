"""Capabilities per API token (``can`` in the auth file) and the HTTP status table."""

from __future__ import annotations

from typing import cast

import pytest
from graphql import FieldNode, OperationDefinitionNode, OperationType, parse

from graphsvc.api.document_limits import PUBLIC_ROOT_FIELDS, DocumentLimits, root_work
from graphsvc.api.schema import build_schema
from graphsvc.errors import GraphsvcError, PermissionDeniedError, UnauthenticatedError
from graphsvc.http.app import http_status_for
from graphsvc.keys.auth import AuthTable, required_capability
from graphsvc.settings import Settings


def _entry(kind: str, **extra: object) -> dict[str, object]:
    return {"subject": "s1", "actor": {"kind": kind, "id": f"{kind}-1"}, **extra}


def _table(**entries: dict[str, object]) -> AuthTable:
    return AuthTable.from_dict({"tokens": entries})


@pytest.mark.req("API-2", "CORE-1")
def test_files_without_can_keep_working_and_operators_keep_operator_rights() -> None:
    table = _table(h=_entry("human", purge=True), a=_entry("agent"), i=_entry("input-adapter"))
    assert table.grant_for("Bearer h").can == {"read", "write", "atomise", "export", "purge"}
    assert table.grant_for("Bearer a").can == {"read", "write"}
    assert table.grant_for("Bearer i").can == {"read", "write"}
    assert table.binding_for("Bearer h").may_purge is True
    assert table.binding_for("Bearer a").may_purge is False


@pytest.mark.req("API-2")
def test_can_grants_exactly_what_it_lists_and_purge_true_adds_purge() -> None:
    table = _table(
        a=_entry("agent", can=["read", "atomise"]),
        r=_entry("human", can=["read"]),
        p=_entry("human", can=["read"], purge=True),
    )
    agent = table.grant_for("Bearer a")
    assert agent.can == {"read", "atomise"}
    assert agent.require("atomise") == agent.binding
    with pytest.raises(PermissionDeniedError) as info:
        agent.require("export")
    assert info.value.code == "PERMISSION_DENIED"
    assert info.value.details == {"capability": "export"}
    assert table.grant_for("Bearer r").can == {"read"}
    assert table.binding_for("Bearer r").may_purge is False
    assert table.grant_for("Bearer p").can == {"read", "purge"}
    assert table.binding_for("Bearer p").may_purge is True


@pytest.mark.parametrize("can", [["read", "fly"], "read", [1]])
def test_unknown_or_malformed_capabilities_are_invalid_input(can: object) -> None:
    with pytest.raises(GraphsvcError) as info:
        _table(a=_entry("agent", can=can))
    assert info.value.code == "INVALID_INPUT"


def test_unknown_token_is_unauthenticated() -> None:
    table = _table(a=_entry("agent"))
    for header in (None, "", "Bearer nope", "Basic a"):
        with pytest.raises(UnauthenticatedError):
            table.grant_for(header)


@pytest.mark.req("CORE-1")
def test_operator_fields_need_their_capability_and_new_fields_default_by_kind() -> None:
    assert required_capability("atomise", mutation=True) == "atomise"
    assert required_capability("exportForensicBundle", mutation=True) == "export"
    assert required_capability("exportForensicBundleTyped", mutation=True) == "export"
    assert required_capability("purge", mutation=True) == "purge"
    assert required_capability("search", mutation=False) == "read"
    assert required_capability("somethingNew", mutation=False) == "read"
    assert required_capability("somethingNew", mutation=True) == "write"


def test_http_status_of_coded_graphql_errors() -> None:
    assert http_status_for([]) == 200
    assert http_status_for(["INVALID_INPUT", "PERMISSION_DENIED"]) == 200
    assert http_status_for(["UNAUTHENTICATED"]) == 401
    assert http_status_for(["STORE_UNAVAILABLE"]) == 503
    assert http_status_for(["TIMEOUT"]) == 504


def _root_cost(op: OperationType, name: str, limits: DocumentLimits) -> int:
    """What :func:`root_work` charges for ``name`` asked with no arguments."""
    keyword = "mutation" if op is OperationType.MUTATION else "query"
    operation = cast(OperationDefinitionNode, parse(f"{keyword} {{ {name} }}").definitions[0])
    return root_work(op, cast(FieldNode, operation.selection_set.selections[0]), {}, limits)


@pytest.mark.req("CORE-1", "API-3", "API-6")
def test_each_typed_sibling_needs_and_costs_what_its_json_field_does() -> None:
    """A typed sibling (``purgeTyped`` beside ``purge``, …) is the same operation: the
    same capability, the same cost, and public only where its JSON field is."""
    settings = Settings()
    schema = build_schema(settings)._schema
    limits = DocumentLimits.from_settings(settings)
    roots = [
        (schema.query_type, OperationType.QUERY),
        (schema.mutation_type, OperationType.MUTATION),
    ]
    pairs = [
        (name.removesuffix("Typed"), name, op)
        for root, op in roots
        if root is not None
        for name in root.fields
        if name.endswith("Typed")
    ]
    assert {p[1] for p in pairs} >= {"healthTyped", "purgeTyped", "atomiseTyped", "recordUseTyped"}
    for plain, typed, op in pairs:
        mutation = op is OperationType.MUTATION
        assert required_capability(typed, mutation=mutation) == required_capability(
            plain, mutation=mutation
        ), typed
        assert (typed in PUBLIC_ROOT_FIELDS) == (plain in PUBLIC_ROOT_FIELDS), typed
        assert _root_cost(op, typed, limits) == _root_cost(op, plain, limits), typed
