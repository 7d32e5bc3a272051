"""The front door of ``/graphql`` (issue 26): hostile input, with or without a token.

Real uvicorn, real Neo4j. Every request here is one an attacker could send; each must
get GraphQL JSON with a stable code, and none may hold the service: ``/healthz`` keeps
answering from another client while the hostile requests are in flight.
"""

from __future__ import annotations

import json
import threading
import uuid
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from graphsvc.core.binding import Binding

# A client timeout is a guard against a hang (the test fails instead of stalling),
# not an assertion on speed.
GUARD_S = 60
WRITE = "mutation($c: [ChangeInput!]!) { write(changes: $c) { changes { atom { atomId } } } }"


def doubling(n: int) -> str:
    """Fragments that each spread the one before twice: 2ⁿ fields once spread."""
    head = "{ atoms(first: 1) { edges { node { ...B%d } } } }\nfragment B0 on Atom { atomId }\n"
    body = "".join(
        f"fragment B{i} on Atom {{ ...B{i - 1} ...B{i - 1} }}\n" for i in range(1, n + 1)
    )
    return head % n + body


def post_raw(url: str, content: bytes, content_type: str = "application/json", **kw: Any) -> Any:
    headers = {"content-type": content_type, **kw.pop("headers", {})}
    return httpx.post(f"{url}/graphql", content=content, headers=headers, timeout=GUARD_S, **kw)


def post(url: str, body: Any, token: str | None = None) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    # json.dumps escapes a lone surrogate as \\ud800, as a hostile client would send it.
    return post_raw(url, json.dumps(body).encode(), headers=headers)


def error_of(r: Any) -> dict[str, Any]:
    assert r.headers["content-type"].startswith("application/json"), (r.status_code, r.text)
    body = r.json()
    assert body["errors"], body
    ext = body["errors"][0]["extensions"]
    assert ext["requestId"] == r.headers["x-request-id"]
    return dict(ext)


class Hostile:
    """Clients that send one request over and over until stopped, keeping the answers."""

    def __init__(self, send: Any, clients: int = 2) -> None:
        self.send = send
        self.answers: list[Any] = []
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self._run, daemon=True) for _ in range(clients)]

    def _run(self) -> None:
        while not self.stop.is_set():
            self.answers.append(self.send())

    def __enter__(self) -> Hostile:
        for t in self.threads:
            t.start()
        while not self.answers:  # the first answer came back
            self.threads[0].join(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(GUARD_S)


@pytest.mark.req("API-3", "API-2")
@pytest.mark.parametrize("n", [16, 24, 32, 40, 64])
def test_doubling_fragments_are_a_coded_error_and_healthz_keeps_answering(
    live_server: Any, human: Binding, n: int
) -> None:
    token = live_server.token_for(human)
    document = doubling(n)
    url = live_server.url
    senders = {
        "token": lambda: post(url, {"query": document}, token),
        "none": lambda: post(url, {"query": document}),
        "get": lambda: httpx.get(f"{url}/graphql", params={"query": document}, timeout=GUARD_S),
    }
    streams = {name: Hostile(send) for name, send in senders.items()}
    for stream in streams.values():
        stream.__enter__()
    try:
        before = sum(len(s.answers) for s in streams.values())
        with httpx.Client(timeout=GUARD_S) as client:
            probes = [client.get(f"{url}/healthz").status_code for _ in range(10)]
        after = sum(len(s.answers) for s in streams.values())
    finally:
        for stream in streams.values():
            stream.__exit__()
    assert probes == [200] * 10
    assert after > before  # hostile requests were answered while the probes were
    for r in streams["token"].answers:
        assert r.status_code == 200
        assert error_of(r)["code"] in {"QUERY_TOO_DEEP", "QUERY_TOO_COMPLEX"}
    # Without a token: refused before the document is measured.
    for r in streams["none"].answers + streams["get"].answers:
        assert r.status_code == 401 and error_of(r)["code"] == "UNAUTHENTICATED"


@pytest.mark.req("API-3")
def test_doubling_fragments_within_the_limits_still_run(live_server: Any, human: Binding) -> None:
    token = live_server.token_for(human)
    r = post(live_server.url, {"query": doubling(8)}, token)  # 256 fields once spread
    assert r.status_code == 200 and "errors" not in r.json(), r.text
    assert r.json()["data"]["atoms"]["edges"] == []


@pytest.mark.req("API-3")
def test_too_deep_and_too_long_documents_have_their_own_codes(
    live_server: Any, human: Binding
) -> None:
    token = live_server.token_for(human)
    nested = "{ atoms { edges { node { head { links { edges { node { target { ... on Revision {"
    nested += " atom { head { links { edges { node { role } } } } } } } } } } } } } } }"
    r = post(live_server.url, {"query": nested}, token)
    ext = error_of(r)
    assert ext["code"] == "QUERY_TOO_DEEP" and ext["details"]["maxDepth"] == 12, ext
    brackets = "{ health " + "(x: " * 100 + "1" + ")" * 100 + " }"
    assert error_of(post(live_server.url, {"query": brackets}, token))["code"] == "QUERY_TOO_DEEP"
    many = "{ " + " ".join(["__typename"] * 20_001) + " }"
    ext = error_of(post(live_server.url, {"query": many}, token))
    assert ext["code"] == "QUERY_TOO_COMPLEX" and ext["details"] == {"maxTokens": 20_000}
    cyclic = (
        '{ atom(atomId: "x") { ...A } } fragment A on Atom { ...B } fragment B on Atom { ...A }'
    )
    assert error_of(post(live_server.url, {"query": cyclic}, token))["code"] == "INVALID_INPUT"


@pytest.mark.req("API-3")
def test_an_alias_flood_of_heavy_reads_is_refused_by_its_work(
    live_server: Any, human: Binding
) -> None:
    token = live_server.token_for(human)
    heavy = 'r{i}: read(query: "x", memoryTokenBudget: 1000000, limit: 10000, depth: 32) '
    heavy += "{{ text }}"
    flood = "{ " + " ".join(heavy.format(i=i) for i in range(30)) + " }"
    r = post(live_server.url, {"query": flood}, token)
    ext = error_of(r)
    assert r.status_code == 200 and "data" not in r.json()
    assert ext["code"] == "QUERY_TOO_COMPLEX"
    assert ext["details"]["work"] == 30 * (100 + 4 * 10_000 + 200 * 32 + 1_000_000 // 20)
    assert ext["details"]["cost"] > ext["details"]["maxCost"]
    # Two of the largest reads SPEC §15 allows fit in one request's budget; run them.
    two = "{ " + " ".join(heavy.format(i=i) for i in range(2)) + " }"
    ok = post(live_server.url, {"query": two}, token)
    assert ok.status_code == 200 and "errors" not in ok.json(), ok.text
    assert set(ok.json()["data"]) == {"r0", "r1"}


HEALTH_WITH = b'{"query": "{ health }", "variables": '
STRING_ARGUMENTS = [
    ("query($v: String!) { search(query: $v) { hits { score } } }", {}),
    ("query($v: String!) { read(query: $v, memoryTokenBudget: 100) { text } }", {}),
    ('query($v: String) { search(query: "x", cursor: $v) { hits { score } } }', {}),
    ("query($v: ID!) { atom(atomId: $v) { atomId } }", {}),
    ("query($v: ID!) { inspect(atomId: $v) { stale } }", {}),
    ("query($v: String) { atoms(text: $v) { edges { cursor } } }", {}),
    ("query($v: String) { atoms(after: $v) { edges { cursor } } }", {}),
    ("query($v: String!) { source(uri: $v) { uri } }", {}),
    ("query($v: ID!) { node(id: $v) { id } }", {}),
    ("query($v: ID!) { lineage(atomId: $v) }", {}),
    ('query($v: [String!]) { inspect(atomId: "x", roles: $v) { stale } }', {"list": True}),
    ("mutation($v: ID!) { recordUse(eventId: $v, manifest: {}) }", {}),
    ("mutation($v: JSON!) { observe(input: $v) }", {"json": True}),
]


@pytest.mark.req("API-3", "CORE-2")
@pytest.mark.parametrize("query, shape", STRING_ARGUMENTS)
@pytest.mark.parametrize("surrogate", ["\ud800", "ok \udfff", "\udbff\udbff"])
def test_a_lone_surrogate_in_any_string_variable_is_invalid_input_at_the_door(
    live_server: Any, human: Binding, query: str, shape: dict[str, bool], surrogate: str
) -> None:
    token = live_server.token_for(human)
    value: Any = surrogate
    if shape.get("list"):
        value = ["fine", surrogate]
    if shape.get("json"):
        value = {"payloadDigest": surrogate, "nested": {surrogate: 1}}
    r = post(live_server.url, {"query": query, "variables": {"v": value}}, token)
    ext = error_of(r)
    assert r.status_code == 200 and ext["code"] == "INVALID_INPUT", r.text
    assert ext["details"]["path"].startswith("variables.v")
    assert "data" not in r.json()


@pytest.mark.req("API-3")
def test_a_lone_surrogate_in_the_document_or_the_operation_name_is_refused(
    live_server: Any, human: Binding
) -> None:
    token = live_server.token_for(human)
    escaped = '{ search(query: "\\ud800") { hits { score } } }'  # a GraphQL escape
    assert error_of(post(live_server.url, {"query": escaped}, token))["code"] == "INVALID_INPUT"
    raw = '{ search(query: "\ud800") { hits { score } } }'  # the character itself
    assert error_of(post(live_server.url, {"query": raw}, token))["code"] == "INVALID_INPUT"
    named = {"query": "query Q { health }", "operationName": "Q\ud800"}
    assert error_of(post(live_server.url, named, token))["code"] == "INVALID_INPUT"


@pytest.mark.req("API-3")
@pytest.mark.parametrize(
    "content, code",
    [
        (b'"x"', "BAD_REQUEST"),
        (b"5", "BAD_REQUEST"),
        (b"true", "BAD_REQUEST"),
        (b"null", "BAD_REQUEST"),
        (b'[{"query": "{ health }"}]', "BATCH_NOT_SUPPORTED"),
        (b"[]", "BATCH_NOT_SUPPORTED"),
        (b'{"query": "{ he\xffalth }"}', "BAD_REQUEST"),  # not UTF-8
        (
            b'{"query": "{ health }", "variables": ' + b"[" * 5000 + b"]" * 5000 + b"}",
            "BAD_REQUEST",
        ),
        (
            b'{"query": "{ health }", "variables": {"v": ' + b"[" * 900 + b"]" * 900 + b"}}",
            "BAD_REQUEST",
        ),
        (b"{}", "BAD_REQUEST"),
        (b'{"query": 5}', "BAD_REQUEST"),
        (b'{"query": "{ health }", "variables": [1]}', "BAD_REQUEST"),
        (b'{"query": "{ health }", "variables": "{}"}', "BAD_REQUEST"),
        (b'{"query": "{ health }", "operationName": 7}', "BAD_REQUEST"),
        (b'{"query": "{ health }", "extensions": 1}', "BAD_REQUEST"),
        (b"{not json", "BAD_REQUEST"),
        (b"\xef\xbb\xbf{}", "BAD_REQUEST"),
    ],
    ids=lambda v: v[:40] if isinstance(v, bytes) else v,
)
def test_malformed_bodies_get_400_with_a_graphql_json_body(
    live_server: Any, content: bytes, code: str
) -> None:
    r = post_raw(live_server.url, content)
    assert r.status_code == 400, r.text
    assert error_of(r)["code"] == code


@pytest.mark.req("API-3")
@pytest.mark.parametrize(
    "content_type",
    [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/graphql",
        "",
        "application/json; charset=latin-1",
    ],
)
def test_other_content_types_get_415(live_server: Any, content_type: str) -> None:
    r = post_raw(live_server.url, b'{"query": "{ health }"}', content_type)
    assert r.status_code == 415 and error_of(r)["code"] == "UNSUPPORTED_MEDIA_TYPE"


@pytest.mark.req("API-3")
def test_methods_operation_names_and_missing_queries(live_server: Any, human: Binding) -> None:
    token = live_server.token_for(human)
    url = f"{live_server.url}/graphql"
    r = httpx.get(url, params={"query": "mutation { resetUsage }"}, timeout=GUARD_S)
    assert r.status_code == 405 and r.headers["allow"] == "POST"
    assert error_of(r)["code"] == "METHOD_NOT_ALLOWED"
    r = httpx.put(url, content=b"{}", timeout=GUARD_S)
    assert r.status_code == 405 and error_of(r)["code"] == "METHOD_NOT_ALLOWED"
    r = httpx.get(url, headers={"accept": "application/json"}, timeout=GUARD_S)
    assert r.status_code == 400 and error_of(r)["code"] == "BAD_REQUEST"
    r = httpx.get(url, params={"query": "{ health }", "variables": "{nope"}, timeout=GUARD_S)
    assert r.status_code == 400 and error_of(r)["code"] == "BAD_REQUEST"
    assert httpx.get(url, params={"query": "{ __typename }"}, timeout=GUARD_S).json() == {
        "data": {"__typename": "Query"}
    }
    unknown = post(live_server.url, {"query": "query Q { health }", "operationName": "Nope"}, token)
    assert unknown.status_code == 200 and error_of(unknown)["code"] == "OPERATION_NOT_FOUND"
    empty = post(live_server.url, {"query": "fragment F on Query { health }"}, token)
    assert error_of(empty)["code"] == "INVALID_INPUT"
    syntax = post(live_server.url, {"query": "{ health"}, token)
    assert error_of(syntax)["code"] == "INVALID_INPUT"
    assert syntax.json()["errors"][0]["locations"] == [{"line": 1, "column": 9}]


@pytest.mark.req("API-3", "WR-7")
def test_two_operations_without_a_name_run_nothing(live_server: Any, human: Binding) -> None:
    token = live_server.token_for(human)
    marker = f"two operations {uuid.uuid4().hex}"
    write = (
        'mutation M { write(changes: [{id: "a", op: CREATE, content: {text: "'
        + marker
        + '", links: []}, sources: []}]) { operationId } } query Q { health }'
    )
    r = post(live_server.url, {"query": write}, token)
    assert r.status_code == 200 and error_of(r)["code"] == "OPERATION_NAME_REQUIRED"
    assert "data" not in r.json()
    after = post(
        live_server.url,
        {
            "query": "query($t: String) { atoms(text: $t) { edges { cursor } } }",
            "variables": {"t": marker},
        },
        token,
    )
    assert after.json()["data"]["atoms"]["edges"] == []
    named = post(live_server.url, {"query": write, "operationName": "Q"}, token)
    assert named.status_code == 200 and "errors" not in named.json()
    assert set(named.json()["data"]) == {"health"}


def _requests_total(url: str) -> dict[tuple[str, str], float]:
    text = httpx.get(f"{url}/metrics", timeout=GUARD_S).text
    out: dict[tuple[str, str], float] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == "graphsvc_requests_total":
                out[(s.labels["operation"], s.labels["code"])] = s.value
    return out


@pytest.mark.req("API-3")
def test_metrics_count_the_code_each_refusal_carried(live_server: Any, human: Binding) -> None:
    token = live_server.token_for(human)
    before = _requests_total(live_server.url)
    post_raw(live_server.url, b'"x"')
    post_raw(live_server.url, b'{"query": "{ health }"}', "text/plain")
    post(live_server.url, {"query": "query Q { health }", "operationName": "Nope"}, token)
    post(live_server.url, {"query": doubling(40)}, token)
    after = _requests_total(live_server.url)

    def moved(label: tuple[str, str]) -> float:
        return after.get(label, 0.0) - before.get(label, 0.0)

    assert moved(("unknown", "BAD_REQUEST")) == 1
    assert moved(("unknown", "UNSUPPORTED_MEDIA_TYPE")) == 1
    assert moved(("unknown", "OPERATION_NOT_FOUND")) == 1
    assert moved(("atoms", "QUERY_TOO_DEEP")) == 1


@pytest.mark.req("API-3")
@pytest.mark.parametrize("path, accept", [("/graphql", "text/html"), ("/explore", "*/*")])
def test_html_pages_carry_a_content_security_policy(
    live_server: Any, path: str, accept: str
) -> None:
    r = httpx.get(f"{live_server.url}{path}", headers={"accept": accept}, timeout=GUARD_S)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    csp = r.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in csp and "default-src 'none'" in csp
    assert "script-src 'self'" in csp and "unsafe-eval" not in csp
    assert r.headers["x-frame-options"] == "DENY"
    assert r.headers["x-content-type-options"] == "nosniff"
