"""The MCP server as its model's host (SPEC §17, issue 48), against the real Neo4j.

Each test opens fresh MCP sessions with the SDK's own clients (``graphsvc mcp`` over
stdio, ``/mcp`` over streamable HTTP) with an agent token, so a session's window
holds exactly what the test showed it. A person (a human binding, through the
Service) revises and purges; what the session wrote is checked with ``inspect``
(its watches and ``stale``) and by what purge takes with it.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from mcp_support import (
    McpSession,
    http_session,
    initialize_message,
    stdio_env,
    stdio_session,
    write_auth_file,
)
from neo4j import RoutingControl
from serve_support import serving

from graphsvc.core.binding import Binding
from graphsvc.core.requests import InspectRequest
from graphsvc.core.session_window import Shown
from graphsvc.core.write_models import AtomRef, Change
from graphsvc.http.app import create_app
from graphsvc.keys.auth import AuthTable
from graphsvc.service import Service
from graphsvc.settings import Settings
from graphsvc.store.mcp_sessions import window as store_window
from graphsvc.tokenizer import get_tokenizer

CORPUS = {
    "pager": "Pager alerts for the payments service go to the on-call engineer first.",
    "tides": "Spring tides at the harbour mouth peak two days after the full moon.",
    "bread": "The sourdough starter is fed with rye flour every morning at seven.",
}


@dataclass
class Place:
    subject: str
    agent: Binding
    human: Binding
    token: str
    other_token: str
    url: str
    env: dict[str, str]
    atoms: dict[str, str]  # corpus key -> atomId

    def session(self, transport: str, label: str) -> McpSession:
        if transport == "stdio":
            return stdio_session(self.env, self.token, label)
        return http_session(self.url, self.token, label)


@pytest.fixture(scope="module")
def place(
    live_server: Any,
    service: Service,
    test_settings: Settings,
    tmp_path_factory: pytest.TempPathFactory,
) -> Place:
    subject = f"t-mcp-host-{uuid.uuid4().hex[:8]}"
    agent = Binding(subject, "default", "agent", "bot")
    human = Binding(subject, "default", "human", "alice", may_purge=True)
    other = Binding(subject, "default", "agent", "another-bot")
    token, other_token = f"agent-{uuid.uuid4().hex}", f"other-{uuid.uuid4().hex}"
    live_server.auth.add(token, agent)
    live_server.auth.add(other_token, other)
    folder = tmp_path_factory.mktemp("mcp-host")
    auth_file = write_auth_file(
        folder / "auth.json",
        {token: {"subject": subject, "policy": "default", "actor": {"kind": "agent", "id": "bot"}}},
    )
    outcome = service.write(
        human,
        [
            Change(id=key, op="create", text=text, links=(), sources=())
            for key, text in CORPUS.items()
        ],
        None,
    )
    atoms = {key: view.atom_id for key, view in outcome.changes.items()}
    env = stdio_env(test_settings, auth_file, folder / "state")
    return Place(subject, agent, human, token, other_token, live_server.url, env, atoms)


def _revise(service: Service, place: Place, atom_id: str, text: str) -> None:
    """A person revises the atom's head (no token: a human's change needs none)."""
    head = service.inspect(place.human, InspectRequest(atom_id=atom_id, limit=0)).atom
    change = Change(
        id="r",
        op="revise",
        target=AtomRef(atom_id, head.rev),
        text=text,
        links=(),
        sources=(),
    )
    service.write(place.human, [change], None)


def _watches(session: McpSession, atom_id: str) -> tuple[bool, set[tuple[str, int]]]:
    found = session.ok("inspect", {"atomId": atom_id, "limit": 0})
    watches = found["diagnostics"]["validation"]["watches"]
    return found["stale"], {(w["atomId"], w["rev"]) for w in watches}


@pytest.mark.slow
@pytest.mark.req("MCP-1", "MCP-2", "MCP-3", "MCP-4", "TOK-7", "LNK-1", "LNK-5")
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_search_remember_revise_stale_then_purge_follows(
    place: Place, service: Service, transport: str
) -> None:
    # A fresh atom of this test, so that revising and purging it touches no other test.
    fresh = f"The {transport} relay of the night bus leaves from platform nine at 23:40."
    atom = service.write(
        place.human, [Change(id="n", op="create", text=fresh, links=(), sources=())], None
    ).changes["n"]
    session = place.session(transport, f"{transport}-flow")
    try:
        found = session.ok("search", {"query": "night bus relay platform nine", "limit": 3})
        shown = [(h["atom"]["atomId"], h["atom"]["rev"]) for h in found["hits"]]
        assert (atom.atom_id, 1) in shown, found["hits"]

        remembered = session.ok(
            "remember",
            {
                "text": f"The last night bus ({transport}) leaves at 23:40 from platform nine.",
                "about": [{"atomId": atom.atom_id, "role": "paraphrases"}],
            },
        )
        new = remembered["atom"]
        # Its recorded dependencies are exactly what the session was shown (MCP-2).
        assert [(a["atomId"], a["rev"]) for a in remembered["derivedFrom"]["atoms"]] == shown
        assert remembered["derivedFrom"]["manifests"] == []
        stale, watches = _watches(session, new["atomId"])
        assert (stale, watches) == (False, set(shown))
        assert [(link["role"], link["target"]) for link in new["links"]] == [
            ("paraphrases", {"atomId": atom.atom_id, "rev": 1})
        ]

        # A person revises what the session was shown: what it wrote is stale (MCP-3).
        _revise(service, place, atom.atom_id, fresh.replace("23:40", "23:55"))
        assert _watches(session, new["atomId"])[0] is True

        # Purge of the shown atom follows the token to the remembered one (LNK-5).
        purged = service.purge(place.human, atom.atom_id)
        assert purged, purged
        assert session.error("inspect", {"atomId": new["atomId"]})["code"] == "NOT_FOUND"
        # The session goes on: a window entry that was purged is no longer declared.
        after = session.ok("remember", {"text": f"Buses are reliable ({transport})."})
        assert (atom.atom_id, 1) not in {
            (a["atomId"], a["rev"]) for a in after["derivedFrom"]["atoms"]
        }
    finally:
        session.close()


@pytest.mark.slow
@pytest.mark.req("MCP-1", "MCP-3", "LNK-1")
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_remembered_in_a_session_shown_nothing_never_goes_stale(
    place: Place, service: Service, transport: str
) -> None:
    session = place.session(transport, f"{transport}-blank")
    try:
        new = session.ok("remember", {"text": f"Nothing shown, just noted ({transport})."})
        assert new["derivedFrom"] == {"manifests": [], "atoms": []}
        _revise(service, place, place.atoms["bread"], f"{CORPUS['bread']} ({transport})")
        assert _watches(session, new["atom"]["atomId"]) == (False, set())
    finally:
        session.close()


@pytest.mark.req("MCP-3", "MCP-1", "TOK-5")
def test_two_sessions_of_one_token_are_independent(place: Place, service: Service) -> None:
    one = http_session(place.url, place.token, "one")
    two = http_session(place.url, place.token, "two")
    try:
        a = one.ok("search", {"query": "spring tides harbour full moon", "limit": 1})["hits"]
        b = two.ok("search", {"query": "payments pager on-call", "limit": 1})["hits"]
        assert a[0]["atom"]["atomId"] == place.atoms["tides"]
        assert b[0]["atom"]["atomId"] == place.atoms["pager"]
        first = one.ok("remember", {"text": "Tides peak after the full moon."})["atom"]
        second = two.ok("remember", {"text": "Payments pages on-call first."})["atom"]
        head = a[0]["atom"]["rev"]
        assert _watches(one, first["atomId"]) == (False, {(place.atoms["tides"], head)})
        pager = (place.atoms["pager"], b[0]["atom"]["rev"])
        assert _watches(two, second["atomId"]) == (False, {pager})
        _revise(service, place, place.atoms["tides"], CORPUS["tides"] + " (revised)")
        assert _watches(one, first["atomId"])[0] is True
        assert _watches(two, second["atomId"])[0] is False
        # `about` names only atoms this session was shown (MCP-4).
        refused = two.error("remember", {"text": "x", "about": [{"atomId": place.atoms["tides"]}]})
        assert refused["code"] == "INVALID_INPUT"
    finally:
        one.close()
        two.close()


@pytest.mark.req("MCP-2")
def test_a_read_is_declared_by_its_manifest_and_write_batches_carry_the_token(
    place: Place,
) -> None:
    session = http_session(place.url, place.token, "reader")
    try:
        read = session.ok("read", {"query": "sourdough starter rye", "memoryTokenBudget": 200})
        outcome = session.ok(
            "write",
            {
                "changes": [
                    {
                        "id": "a",
                        "op": "CREATE",
                        "content": {"text": "Feed at seven.", "links": []},
                        "sources": [],
                    },
                    {
                        "id": "b",
                        "op": "create",
                        "content": {
                            "text": "Rye keeps it lively.",
                            "links": [{"role": "follows", "target": {"local": "a"}}],
                        },
                        "sources": [],
                    },
                ]
            },
        )
        remembered = session.ok("remember", {"text": "Starter notes."})
        assert read["manifestId"] in remembered["derivedFrom"]["manifests"]
        for cid in ("a", "b"):
            atom_id = outcome["changes"][cid]["atomId"]
            watched = _watches(session, atom_id)[1]
            presented = {
                (i["ref"]["atomId"], i["ref"]["rev"]) for i in read["items"] if i["role"] == "root"
            }
            assert presented <= watched, (presented, watched)
    finally:
        session.close()


# ------------------------------------------------------------- /mcp over HTTP


def _post(url: str, token: str, body: Any, **headers: str) -> httpx.Response:
    return httpx.post(
        f"{url}/mcp",
        json=body,
        headers={
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
            **headers,
        },
        timeout=60,
    )


_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}


@pytest.fixture(scope="module")
def replica(service: Service, place: Place) -> Iterator[str]:
    """A second app on the same database (as another replica behind a balancer)."""
    auth = AuthTable({})
    auth.add(place.token, place.agent)
    with serving(create_app(service, auth)) as url:
        yield url


@pytest.mark.req("MCP-1", "API-2")
def test_http_sessions_follow_the_transport_rules_on_every_replica(
    place: Place, replica: str
) -> None:
    url, token = place.url, place.token
    # GET offers no event stream: 405 with Allow and a coded JSON error.
    r = httpx.get(
        f"{url}/mcp",
        headers={"Authorization": f"Bearer {token}", "Accept": "text/event-stream"},
        timeout=30,
    )
    assert r.status_code == 405 and r.headers["allow"] == "POST, DELETE"
    assert r.headers["content-type"].startswith("application/json")
    assert r.json()["error"]["data"]["code"] == "METHOD_NOT_ALLOWED"
    # No session, not an initialize: 400.
    r = _post(url, token, _LIST, **{"MCP-Protocol-Version": "2025-06-18"})
    assert (r.status_code, r.json()["error"]["data"]["code"]) == (400, "BAD_REQUEST")
    # The era without sessions is refused with the versions that have them.
    r = _post(url, token, _LIST, **{"MCP-Protocol-Version": "2026-07-28"})
    assert r.status_code == 400 and r.json()["error"]["code"] == -32022
    assert "2025-06-18" in r.json()["error"]["data"]["supported"]

    r = _post(url, token, initialize_message(1))
    assert r.status_code == 200, r.text
    sid = r.headers["mcp-session-id"]
    session = {"MCP-Protocol-Version": "2025-06-18", "Mcp-Session-Id": sid}
    # Another replica answers the same session: it lives in the database.
    r = _post(replica, token, _LIST, **session)
    assert r.status_code == 200, r.text
    assert {t["name"] for t in r.json()["result"]["tools"]} >= {"search", "remember"}
    # Another binding's token cannot use it.
    r = _post(url, place.other_token, _LIST, **session)
    assert (r.status_code, r.json()["error"]["data"]["code"]) == (404, "NOT_FOUND")
    # DELETE ends it everywhere.
    r = httpx.delete(
        f"{replica}/mcp", headers={"Authorization": f"Bearer {token}", **session}, timeout=30
    )
    assert r.status_code == 204
    r = _post(url, token, _LIST, **session)
    assert (r.status_code, r.json()["error"]["data"]["code"]) == (404, "NOT_FOUND")


@pytest.mark.req("MCP-2")
def test_the_compact_tool_list_fits_its_token_budget(place: Place) -> None:
    session = http_session(place.url, place.token, "compact", profile="compact")
    try:
        listed = session.run(lambda c: c.list_tools()).tools
        assert {t.name for t in listed} == {
            "search",
            "read",
            "remember",
            "inspect",
            "entities",
            "status",
        }
        as_listed = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in listed]
        text = json.dumps(as_listed, separators=(",", ":"), ensure_ascii=False)
        count = get_tokenizer().count(text)
        print(f"compact tools/list: {len(listed)} tools, {count} cl100k tokens")
        assert count <= 2500
    finally:
        session.close()


# ------------------------------------------------- the window in one query, purge


def _windows(service: Service, subject: str) -> list[list[str]]:
    """Every stored window of the subject's MCP sessions (straight from Neo4j)."""
    records, _, _ = service.db.driver.execute_query(
        "MATCH (s:McpSession {subject: $s}) RETURN s.shown AS shown",
        {"s": subject},
        database_=service.db.database,
        routing_=RoutingControl.READ,
    )
    return [list(r["shown"] or []) for r in records]


def _stored(service: Service, binding: Binding, session_id: str) -> list[str]:
    window = store_window(service.db, binding, session_id, service.clock())
    assert window is not None
    return window


@pytest.mark.req("MCP-1")
def test_one_query_merges_the_window_newest_first_bounded_and_under_concurrency(
    place: Place, service: Service
) -> None:
    sid = service.mcp_session_open(place.agent)
    try:
        a1, b2 = Shown("revision", "a", 1, True), Shown("revision", "b", 2, True)
        assert service.mcp_session_present(place.agent, sid, [a1, b2])
        assert _stored(service, place.agent, sid) == ["r:h:1:a", "r:h:2:b"]
        # The newer form of a revision wins and moves to the front; a manifest joins.
        seen = [Shown("manifest", "m1"), Shown("revision", "b", 2, False)]
        assert service.mcp_session_present(place.agent, sid, seen)
        assert _stored(service, place.agent, sid) == ["m:m1", "r:o:2:b", "r:h:1:a"]
        # A call that showed nothing keeps the window (and restarts the idle time).
        assert service.mcp_session_present(place.agent, sid, [])
        assert _stored(service, place.agent, sid) == ["m:m1", "r:o:2:b", "r:h:1:a"]
        # Calls of one session at once: each one's entry is kept (no lost update).
        many = [Shown("revision", f"c{i}", 1, True) for i in range(24)]
        with ThreadPoolExecutor(max_workers=8) as pool:
            done = list(
                pool.map(lambda s: service.mcp_session_present(place.agent, sid, [s]), many)
            )
        assert all(done)
        assert set(_stored(service, place.agent, sid)) == {s.key() for s in many} | {
            "m:m1",
            "r:o:2:b",
            "r:h:1:a",
        }
        # Another binding's call finds no session and changes nothing.
        assert not service.mcp_session_present(place.human, sid, [Shown("revision", "z", 1)])
        assert "r:o:1:z" not in _stored(service, place.agent, sid)
    finally:
        service.mcp_session_close(place.agent, sid)
    assert not service.mcp_session_present(place.agent, sid, [])


@pytest.mark.slow
@pytest.mark.req("MCP-1", "MCP-3", "LNK-5", "LNK-6")
def test_purge_takes_the_purged_atoms_out_of_every_session_window(
    place: Place, service: Service
) -> None:
    texts = {
        "gone": "The ferry to the lighthouse island is cancelled in autumn gales.",
        "kept": "The lighthouse island ferry runs hourly in summer from pier four.",
    }
    outcome = service.write(
        place.human,
        [Change(id=k, op="create", text=t, links=(), sources=()) for k, t in texts.items()],
        None,
    )
    gone, kept = (outcome.changes[k].atom_id for k in ("gone", "kept"))
    session = http_session(place.url, place.token, "purged-window")
    try:
        hits = session.ok("search", {"query": "lighthouse island ferry", "limit": 5})["hits"]
        assert {gone, kept} <= {h["atom"]["atomId"] for h in hits}
        read = session.ok(
            "read", {"query": "lighthouse island ferry gales", "memoryTokenBudget": 300}
        )
        assert gone in {i["ref"]["atomId"] for i in read["items"]}
        mine = [w for w in _windows(service, place.subject) if f"m:{read['manifestId']}" in w]
        assert len(mine) == 1 and any(k.endswith(f":{gone}") for k in mine[0])

        service.purge(place.human, gone)

        windows = _windows(service, place.subject)
        assert not [k for w in windows for k in w if k.endswith(f":{gone}")]
        # The read presented the purged atom: its manifest is deleted, and its entry.
        assert not [w for w in windows if f"m:{read['manifestId']}" in w]
        assert [w for w in windows if f"r:h:1:{kept}" in w], windows
        # A later change of the session declares what is left, nothing purged.
        after = session.ok("remember", {"text": "Take the summer ferry instead."})
        declared = {a["atomId"] for a in after["derivedFrom"]["atoms"]}
        assert kept in declared and gone not in declared
        assert read["manifestId"] not in after["derivedFrom"]["manifests"]
    finally:
        session.close()


# ------------------------------------------------------------------- instants

UTC_Z = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")


def test_mcp_answers_instants_in_z_and_takes_either_spelling(place: Place) -> None:
    session = http_session(place.url, place.token, "instants")
    try:
        result = session.call("changes", {"first": 50})
        feed = result.structured_content["changes"]
        times = [c["committedAt"] for c in feed]
        assert times and all(UTC_Z.fullmatch(t) for t in times), times
        # The text the model reads says the same as the structured answer.
        assert json.loads(result.content[0].text)["changes"][0]["committedAt"] == times[0]
        # `since` takes Z and an offset alike (the first record is at or after it).
        for since in (times[0], times[0].replace("Z", "+00:00")):
            again = session.ok("changes", {"since": since, "first": 1})["changes"]
            assert again[0]["sequence"] == feed[0]["sequence"], (since, again)
    finally:
        session.close()
