"""The write path end to end over GraphQL/HTTP: create, link, revise, retire, observe."""

from __future__ import annotations

import pytest

from graphsvc.core.binding import Binding

CREATE = """
mutation($changes: [ChangeInput!]!, $options: WriteOptionsInput) {
  write(changes: $changes, options: $options) {
    operationId repeated indexing
    changes { id atom { atomId rev state text head sources
      links { role unavailable required at orderKey target { atomId rev } } } }
  }
}
"""


@pytest.mark.req("WR-5", "WR-6", "WR-8", "API-6")
def test_batch_with_forward_local_refs_and_cycle_over_http(live_server, human: Binding) -> None:  # type: ignore[no-untyped-def]
    token = live_server.token_for(human)
    changes = [
        {
            "id": "a",
            "op": "CREATE",
            "content": {"text": "Alpha", "links": [{"role": "next", "target": {"local": "b"}}]},
            "sources": [],
        },
        {
            "id": "b",
            "op": "CREATE",
            "content": {
                "text": "Beta",
                "links": [
                    {"role": "prev", "target": {"local": "a", "at": "LOGICAL", "required": True}},
                    {"role": "also", "target": {"local": "a", "orderKey": "k1"}},
                ],
            },
            "sources": [],
        },
    ]
    body = live_server.gql(CREATE, {"changes": changes}, token=token)
    assert "errors" not in body, body
    out = body["data"]["write"]
    assert out["repeated"] is False and out["indexing"] == "complete"
    views = {c["id"]: c["atom"] for c in out["changes"]}
    a, b = views["a"], views["b"]
    assert a["rev"] == 1 and b["rev"] == 1 and a["head"] and a["state"] == "active"
    assert a["links"] == [
        {
            "role": "next",
            "unavailable": False,
            "required": False,
            "at": "OBSERVED",
            "orderKey": None,
            "target": {"atomId": b["atomId"], "rev": 1},
        }
    ]
    assert [(lk["role"], lk["at"], lk["required"], lk["orderKey"]) for lk in b["links"]] == [
        ("prev", "LOGICAL", True, None),
        ("also", "OBSERVED", False, "k1"),
    ]
    assert all(lk["target"]["atomId"] == a["atomId"] for lk in b["links"])


@pytest.mark.req("WR-7", "API-1")
def test_missing_sources_is_invalid_input_over_http(live_server, human: Binding) -> None:  # type: ignore[no-untyped-def]
    token = live_server.token_for(human)
    changes = [{"id": "a", "op": "CREATE", "content": {"text": "x", "links": []}}]
    body = live_server.gql(CREATE, {"changes": changes}, token=token)
    assert body["data"] is None
    err = body["errors"][0]
    assert err["extensions"]["code"] == "INVALID_INPUT"
    assert "'a'" in err["message"]


@pytest.mark.req("API-2")
def test_no_token_no_data(live_server) -> None:  # type: ignore[no-untyped-def]
    changes = [{"id": "a", "op": "CREATE", "content": {"text": "x", "links": []}, "sources": []}]
    body = live_server.gql(CREATE, {"changes": changes})
    assert body["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
    body = live_server.gql(CREATE, {"changes": changes}, token="not-a-token")
    assert body["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
