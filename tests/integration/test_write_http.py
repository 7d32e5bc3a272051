"""``write`` and ``observe`` over GraphQL/HTTP (uvicorn): main paths and every
error code of WR-7 as ``extensions.code``; bad input never yields a 500 and
never changes anything.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import replace
from typing import Any

import httpx
import pytest
from write_support import cypher, digest_of, subject_counts

from graphsvc.core.binding import Binding
from graphsvc.core.mac import open_sealed, seal
from graphsvc.service import Service
from graphsvc.store.connection import Database

WRITE = """
mutation($changes: [ChangeInput!]!, $options: WriteOptionsInput) {
  write(changes: $changes, options: $options) {
    operationId repeated indexing
    changes { id atom { atomId rev state text head sources
      links { role unavailable required at orderKey target { atomId rev } } } }
  }
}
"""
OBSERVE = "mutation($input: JSON!) { observe(input: $input) }"


def _create(cid: str, text: str, links: list[Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "id": cid,
        "op": "CREATE",
        "content": {"text": text, "links": links or []},
        "sources": [],
        **extra,
    }


def _ok(body: dict[str, Any]) -> dict[str, Any]:
    assert "errors" not in body, body
    out: dict[str, Any] = body["data"]["write"]
    return out


def _atoms(out: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["id"]: c["atom"] for c in out["changes"]}


def _error(body: dict[str, Any], code: str, names: str | None = None) -> dict[str, Any]:
    assert body.get("data") is None, body
    err: dict[str, Any] = body["errors"][0]
    assert err["extensions"]["code"] == code, err
    if names is not None:
        assert names in err["message"], err
    return err


class Http:
    """One caller: a live server token for a binding, plus footprint checks."""

    def __init__(self, live_server: Any, db: Database, binding: Binding) -> None:
        self.server = live_server
        self.db = db
        self.binding = binding
        self.token = live_server.token_for(binding)

    def write(self, changes: Any, key: str | None = None, token: str | None = None) -> Any:
        variables: dict[str, Any] = {"changes": changes}
        if key is not None:
            variables["options"] = {"idempotencyKey": key}
        return self.server.gql(WRITE, variables, token=token or self.token)

    def observe(self, **host_input: Any) -> str:
        host_input.setdefault("payloadDigest", digest_of("payload"))
        body = self.server.gql(OBSERVE, {"input": host_input}, token=self.token)
        assert "errors" not in body, body
        token: str = body["data"]["observe"]
        return token

    def footprint(self) -> tuple[int, int]:
        return subject_counts(self.db, self.binding.subject)


@pytest.fixture()
def http(live_server: Any, db: Database, human: Binding) -> Http:
    return Http(live_server, db, human)


# ------------------------------------------------------------------ main paths


@pytest.mark.req("WR-2", "WR-3", "WR-4", "WR-8", "API-6")
def test_create_revise_retire_over_http(http: Http) -> None:
    cite = {"uri": "https://example.org/a", "version": "1", "digest": digest_of("a")}
    created = _atoms(_ok(http.write([_create("a", "first", sources=[cite])])))["a"]
    assert (created["rev"], created["state"], created["head"]) == (1, "active", True)
    assert created["sources"] == [{**cite, "verified": False}]
    target = {"atomId": created["atomId"], "rev": 1}
    revised = _atoms(
        _ok(
            http.write(
                [
                    {
                        "id": "a",
                        "op": "REVISE",
                        "target": target,
                        "content": {
                            "text": "second",
                            "links": [{"role": "was", "target": {"ref": target}}],
                        },
                        "sources": [],
                    }
                ]
            )
        )
    )["a"]
    assert revised["rev"] == 2 and revised["text"] == "second" and revised["sources"] == []
    assert revised["links"][0]["target"] == target and revised["links"][0]["at"] == "OBSERVED"
    retired = _atoms(
        _ok(
            http.write(
                [{"id": "r", "op": "RETIRE", "target": {"atomId": created["atomId"], "rev": 2}}]
            )
        )
    )["r"]
    assert (retired["rev"], retired["state"], retired["text"]) == (3, "retired", "second")
    assert retired["links"] == revised["links"]


@pytest.mark.req("TOK-2", "TOK-5", "API-2")
def test_agent_observes_then_writes_with_its_token_over_http(
    live_server: Any, db: Database, http: Http, agent: Binding
) -> None:
    basis = _atoms(_ok(http.write([_create("b", "basis")])))["b"]
    bot = Http(live_server, db, agent)
    token = bot.observe(basis=[{"atomId": basis["atomId"], "rev": 1}])
    out = _ok(bot.write([_create("a", "agent wrote this", input=token)]))
    written = _atoms(out)["a"]
    rows = cypher(
        db,
        "MATCH (r:Revision {subject: $s, atomId: $a})-[:GENERATED_FROM]->(i)-[:BASIS]->(b) "
        "RETURN b.atomId AS basis",
        s=agent.subject,
        a=written["atomId"],
    )
    assert rows == [{"basis": basis["atomId"]}]
    _error(bot.write([_create("a", "no token")]), "TOKEN_INVALID", names="'a'")


@pytest.mark.req("IDEM-2", "IDEM-3")
def test_idempotent_replay_over_http(http: Http) -> None:
    changes = [_create("a", "once", links=[{"role": "self", "target": {"local": "a"}}])]
    first = _ok(http.write(changes, key="k-1"))
    footprint = http.footprint()
    again = _ok(http.write(changes, key="k-1"))
    assert again["repeated"] is True and again["operationId"] == first["operationId"]
    assert again["changes"] == first["changes"]
    _error(http.write([_create("a", "twice")], key="k-1"), "IDEMPOTENCY_CONFLICT")
    assert http.footprint() == footprint


# ------------------------------------------------------- every WR-7 error code


def _linked(target: dict[str, Any], role: str = "r") -> list[dict[str, Any]]:
    """One create ``a`` with a single link to ``target``."""
    return [_create("a", "x", links=[{"role": role, "target": target}])]


def _cited(rng: dict[str, Any]) -> list[dict[str, Any]]:
    return [_create("a", "x", sources=[{"uri": "u", "range": rng}])]


_NO_SOURCES = {"id": "a", "op": "CREATE", "content": {"text": "x", "links": []}}
_REF_Z = {"atomId": "z", "rev": 1}


@pytest.mark.req("WR-7", "WR-2", "API-1")
@pytest.mark.parametrize(
    ("changes", "names"),
    [
        ([], None),
        ([_NO_SOURCES], "'a'"),
        ([{"id": "a", "op": "CREATE", "sources": []}], "'a'"),
        ([{**_NO_SOURCES, "op": "REVISE", "sources": []}], "'a'"),
        ([_create("a", "x"), _create("a", "y")], "'a'"),
        (_linked({"local": "a", "ref": _REF_Z}), "'a'"),
        (_linked({}), "'a'"),
        (_linked({"ref": {"atomId": "z", "rev": 0}}), "'a'"),
        (_linked({"local": "nobody"}), "'a'"),
        (_linked({"local": "a"}, role=""), "'a'"),
        (_cited({"start": 3, "end": 1, "unit": "CHAR"}), "'a'"),
        ([{**_NO_SOURCES, "op": "RETIRE", "target": _REF_Z}], "'a'"),
    ],
)
def test_invalid_changes_are_invalid_input_over_http(
    http: Http, changes: list[Any], names: str | None
) -> None:
    _error(http.write(changes), "INVALID_INPUT", names=names)
    assert http.footprint() == (0, 0)


@pytest.mark.req("WR-7", "API-1")
@pytest.mark.parametrize(
    "changes",
    [
        [{**_create("a", "x"), "op": "DELETE"}],
        [{k: v for k, v in _create("a", "x").items() if k != "id"}],
        [{**_create("a", "x"), "content": {"text": 5, "links": []}}],
        [{**_create("a", "x"), "content": {"text": "x"}}],
        [{**_create("a", "x"), "content": {"text": "x", "links": "none"}}],
        _cited({"start": 0, "end": 1, "unit": "WORD"}),
        _linked({"ref": {"atomId": "z", "rev": "one"}}),
        _linked({"local": "a", "at": "SOMETIMES"}),
        [_create("a", "x", unknownField=1)],
        "not a list of changes",
    ],
)
def test_changes_that_do_not_fit_the_schema_are_invalid_input_over_http(
    http: Http, changes: Any
) -> None:
    _error(http.write(changes), "INVALID_INPUT")
    assert http.footprint() == (0, 0)


@pytest.mark.req("WR-7", "IDEM-1", "IDEM-5")
def test_key_replayed_under_another_auth_generation_is_permission_denied_over_http(
    live_server: Any, db: Database, http: Http, human: Binding
) -> None:
    changes = [_create("a", "A")]
    _ok(http.write(changes, key="gen-key"))
    footprint = http.footprint()
    newer = Http(live_server, db, replace(human, auth_generation=2))
    _error(newer.write(changes, key="gen-key"), "PERMISSION_DENIED")
    assert http.footprint() == footprint


@pytest.mark.req("WR-7", "WR-3")
def test_stale_target_is_cas_conflict_over_http(http: Http) -> None:
    a = _atoms(_ok(http.write([_create("a", "A1")])))["a"]
    target = {"atomId": a["atomId"], "rev": 1}
    revise = {
        "op": "REVISE",
        "target": target,
        "content": {"text": "A2", "links": []},
        "sources": [],
    }
    _ok(http.write([{"id": "first", **revise}]))
    footprint = http.footprint()
    err = _error(http.write([{"id": "second", **revise}]), "CAS_CONFLICT", names="'second'")
    assert err["extensions"]["details"]["head"] == {"atomId": a["atomId"], "rev": 2}
    assert http.footprint() == footprint


@pytest.mark.req("WR-7")
def test_limits_are_budget_exceeded_over_http(http: Http) -> None:
    _error(http.write([_create("big", "x" * 70_000)]), "BUDGET_EXCEEDED", names="'big'")
    many = [{"role": "r", "target": {"local": "many"}}] * 129
    _error(http.write([_create("many", "x", links=many)]), "BUDGET_EXCEEDED", names="'many'")
    _error(http.write([_create(f"c{i}", "x") for i in range(257)]), "BUDGET_EXCEEDED", names="257")
    assert http.footprint() == (0, 0)


@pytest.mark.req("WR-7", "API-2")
def test_missing_and_foreign_targets_are_dependency_invalid_alike_over_http(
    live_server: Any, db: Database, http: Http
) -> None:
    stranger = Http(live_server, db, Binding(f"x-{uuid.uuid4().hex[:8]}", "default", "human", "x"))
    theirs = _atoms(_ok(stranger.write([_create("t", "not yours")])))["t"]["atomId"]
    missing = uuid.uuid4().hex
    messages = []
    for atom_id in (theirs, missing):
        link = {"role": "r", "target": {"ref": {"atomId": atom_id, "rev": 1}}}
        err = _error(http.write([_create("a", "A", links=[link])]), "DEPENDENCY_INVALID", "'a'")
        messages.append(err["message"].replace(atom_id, "<id>"))
    assert messages[0] == messages[1]
    assert http.footprint() == (0, 0)


@pytest.mark.req("WR-7", "TOK-3")
def test_bad_tokens_are_token_invalid_over_http(
    live_server: Any, db: Database, service: Service, agent: Binding
) -> None:
    bot = Http(live_server, db, agent)
    good = bot.observe()
    cursor = seal(service.secret, "cursor", open_sealed(service.secret, "input-token", good))
    for bad in ("", "garbage", "gti1.e30.AAAA", good[:-2], cursor, good.replace("gti1", "grc1")):
        body = bot.write([_create("a", "A", input=good), _create("b", "B", input=bad)])
        _error(body, "TOKEN_INVALID", names="'b'")
    assert bot.footprint() == (1, 0)  # the Input record of the good token only


@pytest.mark.req("WR-7", "IDEM-3")
def test_key_reused_for_another_plan_is_idempotency_conflict_over_http(http: Http) -> None:
    _ok(http.write([_create("a", "A")], key="plan"))
    footprint = http.footprint()
    _error(http.write([_create("a", "B")], key="plan"), "IDEMPOTENCY_CONFLICT")
    assert http.footprint() == footprint


@pytest.mark.req("WR-7")
def test_unfinished_purge_is_purge_pending_over_http(http: Http, db: Database) -> None:
    a = _atoms(_ok(http.write([_create("a", "A")])))["a"]
    cypher(
        db, "CREATE (:PurgeMarker {subject: $s, atomId: $a})", s=http.binding.subject, a=a["atomId"]
    )
    footprint = http.footprint()
    _error(http.write([_create("b", "B")]), "PURGE_PENDING")
    assert http.footprint() == footprint


# ------------------------------------------------------------- abusive input


def _post(live_server: Any, token: str, content: bytes, **headers: str) -> httpx.Response:
    return httpx.post(
        f"{live_server.url}/graphql",
        content=content,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json", **headers},
        timeout=120,
    )


@pytest.mark.req("WR-7", "API-3")
def test_ten_megabyte_body_is_refused_with_a_coded_error(live_server: Any, http: Http) -> None:
    payload = json.dumps(
        {"query": WRITE, "variables": {"changes": [_create("a", "x" * 10_000_000)]}}
    )
    r = _post(live_server, http.token, payload.encode())
    assert r.status_code in (200, 413), r.status_code
    code = r.json()["errors"][0]["extensions"]["code"]
    assert code in ("REQUEST_TOO_LARGE", "BUDGET_EXCEEDED")
    assert http.footprint() == (0, 0)


@pytest.mark.req("WR-7", "API-3")
def test_hundred_thousand_links_is_a_coded_error(live_server: Any, http: Http) -> None:
    links = [{"role": "r", "target": {"local": "a"}}] * 100_000
    payload = json.dumps(
        {"query": WRITE, "variables": {"changes": [_create("a", "x", links=links)]}}
    )
    r = _post(live_server, http.token, payload.encode())
    assert r.status_code == 200, r.status_code
    err = _error(r.json(), "BUDGET_EXCEEDED", names="'a'")
    assert err["extensions"]["details"] == {"changeId": "a", "limit": "links", "max": 128}
    assert http.footprint() == (0, 0)


@pytest.mark.req("API-1", "API-3")
@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b"[]",
        b'{"variables": {}}',
        b'{"query": "mutation { write(changes: [{id: \\"a\\"}]) { operationId } }"}',
        b'{"query": "mutation { nope }"}',
        b'{"query": "' + b"{" * 5000 + b'"}',
    ],
)
def test_malformed_requests_never_fail_with_a_server_error(
    live_server: Any, http: Http, content: bytes
) -> None:
    r = _post(live_server, http.token, content)
    assert 400 <= r.status_code < 500 or (r.status_code == 200 and r.json().get("errors")), (
        r.status_code,
        r.text[:300],
    )
    assert http.footprint() == (0, 0)


@pytest.mark.req("API-2")
@pytest.mark.parametrize("authorization", ["", "Bearer", "Basic abc", "Bearer gti1.e30.AAAA"])
def test_malformed_authorization_is_unauthenticated(
    live_server: Any, http: Http, authorization: str
) -> None:
    r = httpx.post(
        f"{live_server.url}/graphql",
        json={"query": WRITE, "variables": {"changes": [_create("a", "x")]}},
        headers={"Authorization": authorization},
        timeout=60,
    )
    assert r.status_code == 401  # GraphQL-over-HTTP: the GraphQL error body, HTTP 401
    assert r.json()["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
    assert http.footprint() == (0, 0)
