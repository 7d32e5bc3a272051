"""Running graphsvc for real (issue 18): time limits that reach Neo4j, probes on their
own path, chunked bodies over the limit, HTTP statuses of auth errors, capabilities
per token, ``/metrics`` and structured logs. Real uvicorn, real Neo4j.
"""

from __future__ import annotations

import io
import json
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from neo4j import RoutingControl
from prometheus_client.parser import text_string_to_metric_families
from serve_support import serving

from graphsvc.core.binding import Binding
from graphsvc.errors import GraphsvcError
from graphsvc.http.app import create_app
from graphsvc.inputs.models import parse_changes
from graphsvc.keys.auth import AuthTable
from graphsvc.runtime import service_for
from graphsvc.runtime import serving as serving_process
from graphsvc.service import HEALTH_FACTS_MAX_AGE_S, Service
from graphsvc.settings import Settings
from graphsvc.store.connection import SCHEMA_VERSION, Database
from graphsvc.telemetry.logging_setup import build_handler

WRITE = "mutation($c: [ChangeInput!]!) { write(changes: $c) { changes { atom { atomId rev } } } }"
SEARCH = "query($q: String!) { search(query: $q) { hits { score } } }"
ATOMISE = 'mutation { atomise(atomId: "no-such-atom") }'
EXPORT = 'mutation { exportForensicBundle(atomId: "no-such-atom") }'
# The text of cypher/write/lock_atoms.cypher that a blocked write is waiting in.
LOCK_QUERY_MARK = "SET a.lockedBy = $operationId"


def _post(url: str, query: str, variables: dict[str, Any], token: str | None, **kw: Any) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    headers.update(kw.pop("headers", {}))
    return httpx.post(
        f"{url}/graphql",
        json={"query": query, "variables": variables},
        headers=headers,
        timeout=kw.pop("timeout", 60),
    )


def _create(text: str) -> dict[str, Any]:
    return {"id": "a", "op": "CREATE", "content": {"text": text, "links": []}, "sources": []}


def _code(r: httpx.Response) -> str:
    return str(r.json()["errors"][0]["extensions"]["code"])


def _wait_for(check: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting: {what}")
        time.sleep(0.1)


def _blocked_writes(db: Database) -> int:
    records, _, _ = db.driver.execute_query(
        "SHOW TRANSACTIONS YIELD currentQuery RETURN currentQuery",
        database_=db.database,
        routing_=RoutingControl.WRITE,
    )
    return sum(LOCK_QUERY_MARK in (r["currentQuery"] or "") for r in records)


# --------------------------------------------------------------- time limits, probes


@pytest.mark.req("API-3")
def test_request_over_its_limit_is_504_and_cancelled_in_neo4j_while_probes_answer(
    service: Service, db: Database, human: Binding
) -> None:
    # One worker thread: the blocked write holds it, so the probes can only answer
    # if they do not need it.
    settings = service.settings.with_(request_timeout_s=4.0, worker_threads=1)
    svc = service_for(settings, db, service.embedder, service.tokenizer)
    auth = AuthTable({})
    token = uuid.uuid4().hex
    auth.add(token, human)
    with serving(create_app(svc, auth)) as url:
        # Written without a deadline (and the model warmed): only the revise is timed.
        created = svc.write(human, parse_changes([_create("a lock is held on me")]))
        atom_id = created.changes["a"].atom_id
        revise = {
            "id": "a",
            "op": "REVISE",
            "target": {"atomId": atom_id, "rev": 1},
            "content": {"text": "revised while locked", "links": []},
            "sources": [],
        }
        with db.driver.session(database=db.database) as holder:
            tx = holder.begin_transaction()
            tx.run(
                "MATCH (a:Atom {subject: $s, atomId: $a}) SET a.lockedBy = $h",
                s=human.subject,
                a=atom_id,
                h="test-holder",
            ).consume()
            answers: dict[str, httpx.Response] = {}
            writer = threading.Thread(
                target=lambda: answers.update(r=_post(url, WRITE, {"c": [revise]}, token))
            )
            writer.start()
            try:
                _wait_for(lambda: _blocked_writes(db) > 0, 60, "the write waits for the lock")
                live = httpx.get(f"{url}/healthz", timeout=10)
                ready = httpx.get(f"{url}/readyz", timeout=10)
                writer.join(timeout=60)
                # Neo4j's transaction timeout (the request's time left) ended it in the
                # database: nothing waits for the lock any more.
                _wait_for(lambda: _blocked_writes(db) == 0, 60, "Neo4j ends the transaction")
            finally:
                tx.rollback()
        writer.join(timeout=60)
        assert (live.status_code, live.json()) == (200, {"status": "ok"})
        assert ready.status_code == 200, ready.text
        assert ready.json()["status"] == "ready" and ready.json()["schemaCurrent"] is True
        r = answers["r"]
        assert r.status_code == 504 and _code(r) == "TIMEOUT", r.text
        assert r.json()["errors"][0]["extensions"]["requestId"] == r.headers["x-request-id"]
    # Released now; had the worker's transaction lived on, the revision would commit.
    time.sleep(0.5)
    records, _, _ = db.driver.execute_query(
        "MATCH (:Atom {subject: $s, atomId: $a})-[:HEAD]->(h:Revision) RETURN h.rev AS rev",
        s=human.subject,
        a=atom_id,
        database_=db.database,
        routing_=RoutingControl.READ,
    )
    assert [r["rev"] for r in records] == [1]


@pytest.mark.req("API-1")
def test_health_answers_from_facts_a_serving_process_keeps_fresh(
    service: Service, test_settings: Settings
) -> None:
    # A Service of its own (its own kept facts) on the session Neo4j.
    own = service.with_settings(test_settings)
    first = own.health().to_json()
    assert first["neo4j"]["name"] and first["schemaVersion"] == SCHEMA_VERSION
    # While kept facts are young, { health } asks Neo4j nothing: it answers from them
    # even with Neo4j out of reach ...
    reachable = own.db
    own.db = Database("bolt://127.0.0.1:9", "neo4j", "x", "neo4j", max_retry_time_s=0.0)
    try:
        kept = own.health().to_json()
        assert kept["neo4j"] == first["neo4j"] and kept["neo4jAgeS"] >= first["neo4jAgeS"]
        # ... and once they are older than HEALTH_FACTS_MAX_AGE_S it asks again, so an
        # unreachable Neo4j is an error as before, and nothing stale is kept.
        assert own._neo4j_facts.kept is not None
        read_at, facts = own._neo4j_facts.kept
        own._neo4j_facts.kept = (read_at - HEALTH_FACTS_MAX_AGE_S - 1, facts)
        assert own.kept_health() is None  # what the resolver answers on the loop
        with pytest.raises(GraphsvcError):
            own.health()
        assert own._neo4j_facts.kept is None
    finally:
        own.db.close()
        own.db = reachable
    # A serving process refreshes them on a thread of its own.
    own.refresh_neo4j_facts()
    before = own._neo4j_facts.kept
    with serving_process(own):
        deadline = time.monotonic() + 60
        while own._neo4j_facts.kept is before and time.monotonic() < deadline:
            time.sleep(0.1)
    assert own._neo4j_facts.kept is not before and own._neo4j_facts.kept is not None
    assert own.health().schema_version == SCHEMA_VERSION


@pytest.mark.req("API-3")
def test_chunked_body_over_the_limit_is_one_413(live_server: Any, human: Binding) -> None:
    token = live_server.token_for(human)
    chunk = b" " * (1024 * 1024)

    def body() -> Iterator[bytes]:
        yield b'{"query": "{ health }", "variables": {"pad": "'
        for _ in range(6):  # 6 MiB > the 4 MiB limit, no Content-Length
            yield chunk
        yield b'"}}'

    r = httpx.post(
        f"{live_server.url}/graphql",
        content=body(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        timeout=60,
    )
    assert r.request.headers.get("transfer-encoding") == "chunked"
    assert r.status_code == 413, r.text
    assert r.headers["content-type"] == "application/json"
    assert _code(r) == "REQUEST_TOO_LARGE"
    # A chunked body under the limit is served as usual.
    small = httpx.post(
        f"{live_server.url}/graphql",
        content=iter([b'{"query": "{ __typename }"}']),
        headers={"Content-Type": "application/json"},
        timeout=60,
    )
    assert small.status_code == 200 and small.json()["data"] == {"__typename": "Query"}


# --------------------------------------------------------------- auth


@pytest.mark.req("API-2")
@pytest.mark.parametrize("token", [None, "not-a-token"])
def test_missing_or_unknown_token_is_http_401_with_a_graphql_body(
    live_server: Any, token: str | None
) -> None:
    r = _post(live_server.url, SEARCH, {"q": "x"}, token)
    assert r.status_code == 401
    assert r.headers["www-authenticate"] == "Bearer"
    assert "data" not in r.json() and _code(r) == "UNAUTHENTICATED"  # refused before it ran


@pytest.mark.req("API-2", "CORE-1")
def test_agent_token_may_not_atomise_or_export_unless_granted(
    live_server: Any, agent: Binding, service: Service
) -> None:
    default = live_server.token_for(agent)
    for query, capability in ((ATOMISE, "atomise"), (EXPORT, "export")):
        r = _post(live_server.url, query, {}, default)
        assert r.status_code == 200 and _code(r) == "PERMISSION_DENIED", r.text
        assert r.json()["errors"][0]["extensions"]["details"] == {"capability": capability}
    granted = uuid.uuid4().hex
    live_server.auth.add(granted, agent, frozenset({"read", "write", "atomise", "export"}))
    atomised = _post(live_server.url, ATOMISE, {}, granted)
    tier_locked = service.settings.atomise.curator == "none"
    assert _code(atomised) == ("TIER_LOCKED" if tier_locked else "NOT_FOUND"), atomised.text
    exported = _post(live_server.url, EXPORT, {}, granted)
    assert _code(exported) == "NOT_FOUND", exported.text


@pytest.mark.req("API-2")
def test_read_only_token_searches_but_may_not_write(live_server: Any, human: Binding) -> None:
    token = uuid.uuid4().hex
    live_server.auth.add(token, human, frozenset({"read"}))
    searched = _post(live_server.url, SEARCH, {"q": "anything"}, token)
    assert searched.status_code == 200 and "errors" not in searched.json(), searched.text
    wrote = _post(live_server.url, WRITE, {"c": [_create("refused")]}, token)
    assert _code(wrote) == "PERMISSION_DENIED"
    assert wrote.json()["errors"][0]["extensions"]["details"] == {"capability": "write"}


# --------------------------------------------------------------- observability


def _samples(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    r = httpx.get(f"{url}/metrics", timeout=30)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    out: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for family in text_string_to_metric_families(r.text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def test_metrics_parse_and_move_after_requests(live_server: Any, human: Binding) -> None:
    token = live_server.token_for(human)
    ok_search = ("graphsvc_requests_total", (("code", "ok"), ("operation", "search")))
    unauth = ("graphsvc_requests_total", (("code", "UNAUTHENTICATED"), ("operation", "search")))
    embeds = ("graphsvc_embedding_duration_seconds_count", ())
    before = _samples(live_server.url)
    for _ in range(2):
        r = _post(live_server.url, SEARCH, {"q": "photosynthesis in leaves"}, token)
        assert r.status_code == 200 and "errors" not in r.json(), r.text
    assert _post(live_server.url, SEARCH, {"q": "x"}, None).status_code == 401
    after = _samples(live_server.url)
    assert after[ok_search] - before.get(ok_search, 0.0) == 2
    assert after[unauth] - before.get(unauth, 0.0) == 1
    assert after[embeds] > before.get(embeds, 0.0)
    assert after[("graphsvc_jobs_pending", ())] >= 0  # background jobs in the database
    assert ("graphsvc_jobs_failed", ()) in after
    queries = {
        labels
        for (name, labels), value in after.items()
        if name == "graphsvc_neo4j_query_duration_seconds_count"
        and value > before.get((name, labels), 0.0)
    }
    assert queries, "no named Cypher query was timed"
    assert all(dict(labels)["query"].count("/") == 1 for labels in queries), queries
    latency = [
        v
        for (name, labels), v in after.items()
        if name == "graphsvc_request_duration_seconds_count"
        and dict(labels) == {"operation": "search", "code": "ok"}
    ]
    assert latency and latency[0] >= 2


@pytest.fixture()
def json_log() -> Iterator[io.StringIO]:
    """What ``serve`` would write: the production handler, INFO, for this test."""
    stream = io.StringIO()
    handler = build_handler("json", stream)
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        yield stream
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def test_client_errors_log_one_json_line_with_the_request_id_and_no_text(
    live_server: Any, human: Binding, json_log: io.StringIO
) -> None:
    token = live_server.token_for(human)
    secret_text = f"private words {uuid.uuid4().hex}"
    bad = {
        "id": "a",
        "op": "CREATE",
        "content": {
            "text": secret_text,
            "links": [{"role": "r", "target": {"local": "no-such-change"}}],
        },
        "sources": [],
    }
    rid = f"req-{uuid.uuid4().hex[:8]}"
    r = _post(live_server.url, WRITE, {"c": [bad]}, token, headers={"X-Request-Id": rid})
    assert r.headers["x-request-id"] == rid
    assert _code(r) == "INVALID_INPUT"
    assert r.json()["errors"][0]["extensions"]["requestId"] == rid
    unknown = _post(live_server.url, SEARCH, {"q": secret_text}, "wrong-token-value")
    assert unknown.status_code == 401
    text = json_log.getvalue()
    lines = [json.loads(line) for line in text.splitlines()]
    ours = [line for line in lines if line["requestId"] == rid]
    errors = [line for line in ours if line["msg"] == "client error"]
    assert [(e["code"], e["path"]) for e in errors] == [("INVALID_INPUT", ["write"])]
    assert not any("exc" in line for line in ours)
    access = [line for line in ours if line["logger"] == "graphsvc.access"]
    assert [(a["status"], a["operation"], a["code"]) for a in access] == [
        (200, "write", "INVALID_INPUT")
    ]
    assert secret_text not in text and token not in text and "wrong-token-value" not in text
    assert "Traceback" not in text
