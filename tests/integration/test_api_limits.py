"""Abuse limits of the HTTP/GraphQL surface (SPEC API-3): coded errors, never a 500."""

from __future__ import annotations

import httpx
import pytest

from graphsvc.api.schema import build_schema
from graphsvc.core.binding import Binding
from graphsvc.settings import Settings


@pytest.mark.req("API-3")
def test_oversized_request_body_is_refused_with_a_code(live_server, human: Binding) -> None:  # type: ignore[no-untyped-def]
    token = live_server.token_for(human)
    big = "x" * (5 * 1024 * 1024)
    r = httpx.post(
        f"{live_server.url}/graphql",
        json={"query": "{ health }", "variables": {"pad": big}},
        headers={"Authorization": f"Bearer {token}"},
        timeout=60,
    )
    assert r.status_code == 413
    assert r.json()["errors"][0]["extensions"]["code"] == "REQUEST_TOO_LARGE"


@pytest.mark.req("API-3")
def test_too_deep_query_is_refused_before_any_resolver(test_settings: Settings) -> None:
    schema = build_schema(test_settings.with_(max_query_depth=3))
    deep = 'query { search(query: "x") { hits { atom { links { target { atomId } } } } } }'
    result = schema.execute_sync(deep, context_value=None)
    assert result.data is None
    assert result.errors and (result.errors[0].extensions or {})["code"] == "QUERY_TOO_DEEP"
    assert (result.errors[0].extensions or {})["details"] == {"depth": 5, "maxDepth": 3}
    shallow = schema.execute_sync("query { __typename }", context_value=None)
    assert shallow.errors is None


@pytest.mark.req("API-3")
def test_alias_flood_is_refused(live_server, human: Binding) -> None:  # type: ignore[no-untyped-def]
    token = live_server.token_for(human)
    query = "{ " + " ".join(f"h{i}: health" for i in range(100)) + " }"
    body = live_server.gql(query, token=token)
    assert body.get("data") is None
    error = body["errors"][0]["extensions"]
    assert error["code"] == "QUERY_TOO_COMPLEX"
    assert error["details"] == {"aliases": 100, "maxAliases": 30}


@pytest.mark.req("API-3")
def test_malformed_json_body_is_a_client_error(live_server) -> None:  # type: ignore[no-untyped-def]
    r = httpx.post(
        f"{live_server.url}/graphql",
        content=b"{not json",
        headers={"content-type": "application/json"},
        timeout=30,
    )
    assert 400 <= r.status_code < 500
