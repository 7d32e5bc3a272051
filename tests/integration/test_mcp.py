"""graphsvc over MCP (issue 29, docs/agents.md), against the real Neo4j.

``graphsvc mcp`` runs as a subprocess driven by the SDK's own stdio client, and
``/mcp`` of the served app is driven by the SDK's streamable HTTP client. Most tests
run on both (the ``agent`` fixture is parametrised by transport) with an agent
token of subject A; operator tools and isolation use more tokens over HTTP
(subject A's human, subject B's agent). Outcomes are checked through MCP answers and
with direct Neo4j probes (nothing written by a refused call).
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError
from mcp_support import (
    McpSession,
    http_session,
    initialize_message,
    stdio_env,
    stdio_session,
    write_auth_file,
)
from write_support import subject_counts

from graphsvc.core.binding import Binding
from graphsvc.inputs.models import parse_host_input
from graphsvc.service import Service
from graphsvc.settings import Settings
from graphsvc.store.connection import Database
from graphsvc.tokenizer import get_tokenizer

COMPACT_TOOLS = {"search", "read", "remember", "inspect", "entities", "status"}
AGENT_TOOLS = COMPACT_TOOLS | {
    "lineage",
    "write",
    "record_use",
    "reset_usage",
    "changes",
    "atom",
}
OPERATOR_TOOLS = {"atomise", "set_namespace_policy", "export_forensic_bundle", "purge"}
CORPUS = [
    "The night shift rotates every Tuesday; the on-call engineer hands over at 09:00.",
    "Pager alerts for the payments service go to the on-call engineer first.",
    "Clouds form when water vapour cools and condenses around dust particles.",
]


@dataclass
class World:
    """Subjects, tokens and MCP sessions shared by this module's tests."""

    subject_a: str
    subject_b: str
    tokens: dict[str, str]
    bindings: dict[str, Binding]
    env: dict[str, str]
    sessions: dict[str, McpSession]
    seeded: dict[str, str]  # corpus text -> atomId (subject A, written by its human)


@pytest.fixture(scope="module")
def world(
    live_server: Any,
    service: Service,
    test_settings: Settings,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[World]:
    tag = uuid.uuid4().hex[:8]
    a, b = f"t-mcp-a-{tag}", f"t-mcp-b-{tag}"
    entries = {
        "agent_a": {"subject": a, "actor": {"kind": "agent", "id": "bot-a"}},
        "human_a": {"subject": a, "actor": {"kind": "human", "id": "alice"}, "purge": True},
        "agent_b": {"subject": b, "actor": {"kind": "agent", "id": "bot-b"}},
    }
    tokens = {name: f"mcp-{name}-{uuid.uuid4().hex}" for name in entries}
    folder = tmp_path_factory.mktemp("mcp")
    auth_file = write_auth_file(
        folder / "auth.json", {tokens[n]: {**e, "policy": "default"} for n, e in entries.items()}
    )
    bindings = {
        n: Binding(
            e["subject"],  # type: ignore[arg-type]
            "default",
            e["actor"]["kind"],  # type: ignore[index]
            e["actor"]["id"],  # type: ignore[index]
            may_purge=bool(e.get("purge")),
        )
        for n, e in entries.items()
    }
    for name, binding in bindings.items():
        live_server.auth.add(tokens[name], binding)
    env = stdio_env(test_settings, auth_file, folder / "state")
    sessions: dict[str, McpSession] = {}
    try:
        sessions["http"] = http_session(live_server.url, tokens["agent_a"], "http-agent-a")
        sessions["http-human"] = http_session(live_server.url, tokens["human_a"], "http-human-a")
        sessions["http-b"] = http_session(live_server.url, tokens["agent_b"], "http-agent-b")
        sessions["stdio"] = stdio_session(env, tokens["agent_a"], "stdio-agent-a")
        human = sessions["http-human"]
        written = human.ok(
            "write",
            {
                "changes": [
                    {
                        "id": f"c{i}",
                        "op": "create",
                        "content": {"text": text, "links": []},
                        "sources": [],
                    }
                    for i, text in enumerate(CORPUS)
                ]
            },
        )
        seeded = {CORPUS[int(cid[1:])]: v["atomId"] for cid, v in written["changes"].items()}
        yield World(a, b, tokens, bindings, env, sessions, seeded)
    finally:
        for session in sessions.values():
            session.close()


@pytest.fixture(params=["stdio", "http"])
def agent(request: pytest.FixtureRequest, world: World) -> McpSession:
    """Subject A's agent token over one transport."""
    return world.sessions[request.param]


def _create(cid: str, text: str, sources: list[Any] | None = None) -> Any:
    return {
        "id": cid,
        "op": "create",
        "content": {"text": text, "links": []},
        "sources": sources or [],
    }


# ------------------------------------------------------------------------ tools/list


@pytest.mark.req("API-2", "CORE-1")
def test_tools_list_the_public_operations_an_agent_token_may_call(
    agent: McpSession, world: World
) -> None:
    tools = agent.tools()
    assert set(tools) == AGENT_TOOLS
    operator = world.sessions["http-human"].tools()
    assert set(operator) == AGENT_TOOLS | OPERATOR_TOOLS
    read = tools["read"].input_schema
    assert read["type"] == "object" and read["additionalProperties"] is False
    assert set(read["required"]) == {"query", "memoryTokenBudget"}
    assert set(read["properties"]) == {
        "query",
        "memoryTokenBudget",
        "depth",
        "limit",
        "includeArchived",
        "cursor",
    }
    write = tools["write"].input_schema
    change = write["$defs"]["ChangeInput"]
    assert change["properties"]["op"]["enum"] == ["create", "revise", "retire"]
    assert "input" not in change["properties"]  # the server is the host (MCP-2)
    assert set(write["required"]) == {"changes"}
    assert tools["search"].annotations is not None and tools["search"].annotations.read_only_hint
    assert "SPEC" not in (tools["read"].description or "")


# ------------------------------------------------------------------ the agent loop


@pytest.mark.req("TOK-2", "RD-8", "AV-4", "MAN-1")
def test_agent_loop_search_read_write_record_use(agent: McpSession, world: World) -> None:
    found = agent.ok("search", {"query": "who gets the pager alerts", "limit": 3})
    assert world.seeded[CORPUS[1]] in {h["atom"]["atomId"] for h in found["hits"]}, found

    budget = 120
    result = agent.call("read", {"query": "on-call engineer", "memoryTokenBudget": budget})
    assert not result.is_error
    read = result.structured_content
    assert isinstance(read, dict)
    # The model-facing text first, on its own; then the refs and manifest id.
    text_block, meta_block = result.content
    assert isinstance(text_block, types.TextContent) and text_block.text == read["text"]
    assert isinstance(meta_block, types.TextContent)
    assert json.loads(meta_block.text)["manifestId"] == read["manifestId"]
    assert get_tokenizer().count(read["text"]) <= budget
    assert read["selection"]["budget"] == budget
    presented = [i["ref"] for i in read["items"] if not i["blocked"]]
    seeded = [p for p in presented if p["atomId"] in world.seeded.values()]
    assert seeded, read["items"]

    answer = f"The on-call engineer gets the pager alerts first ({agent.label})."
    cited = seeded[0]
    outcome = agent.ok(
        "write",
        {
            "changes": [
                _create(
                    "answer",
                    answer,
                    [{"uri": f"atom:{cited['atomId']}", "version": str(cited["rev"])}],
                )
            ]
        },
    )
    new = outcome["changes"]["answer"]
    assert new["text"] == answer and new["rev"] == 1 and outcome["repeated"] is False

    event = f"accepted-{uuid.uuid4().hex}"
    used = agent.ok("record_use", {"eventId": event, "manifest": {"id": read["manifestId"]}})
    assert used == {"eventId": event, "repeated": False, "updated": len(presented)}
    usage = agent.ok("inspect", {"atomId": cited["atomId"], "limit": 0})["usage"]
    assert usage and usage["value"] > 0, usage
    # A host that resends reuses the eventId: deduplicated, nothing counted twice.
    again = agent.ok("record_use", {"eventId": event, "manifest": {"id": read["manifestId"]}})
    assert again == {"eventId": event, "repeated": True, "updated": 0}
    again_usage = agent.ok("inspect", {"atomId": cited["atomId"], "limit": 0})["usage"]
    assert again_usage["state"] == usage["state"]

    # The written atom is an MCP resource of its subject.
    contents = agent.run(lambda c: c.read_resource(f"graphsvc://atom/{new['atomId']}")).contents
    assert isinstance(contents[0], types.TextResourceContents)
    assert json.loads(contents[0].text)["text"] == answer


# ------------------------------------------------------- InputTokens, idempotency, CAS


@pytest.mark.req("MCP-5", "TOK-1")
def test_a_session_never_accepts_a_token_from_its_caller(
    agent: McpSession, world: World, db: Database, service: Service
) -> None:
    # A token a GraphQL host got from observe is valid for that binding, and still
    # refused over MCP: no change there carries an `input`.
    issued = service.observe(
        world.bindings["agent_a"], parse_host_input({"payloadDigest": "sha256:" + "0" * 64})
    )
    before = subject_counts(db, world.subject_a)
    for token in ("not-a-token", issued):
        error = agent.error("write", {"changes": [{**_create("c", "x"), "input": token}]})
        assert error["code"] == "INVALID_INPUT", error
    with pytest.raises(MCPError):
        agent.call("observe", {"input": {"payloadDigest": "sha256:" + "0" * 64}})
    assert subject_counts(db, world.subject_a) == before


@pytest.mark.req("IDEM-2", "IDEM-3")
def test_idempotent_replay_and_conflict_through_mcp(agent: McpSession) -> None:
    key = f"k-{uuid.uuid4().hex}"
    batch = {"changes": [_create("c", f"once {key}")], "options": {"idempotencyKey": key}}
    first = agent.ok("write", batch)
    replay = agent.ok("write", batch)
    assert replay["repeated"] is True and first["repeated"] is False
    assert replay["operationId"] == first["operationId"]
    assert replay["changes"]["c"]["atomId"] == first["changes"]["c"]["atomId"]
    other = {"changes": [_create("c", f"twice {key}")], "options": {"idempotencyKey": key}}
    assert agent.error("write", other)["code"] == "IDEMPOTENCY_CONFLICT"


@pytest.mark.req("WR-3")
def test_revise_of_a_stale_head_is_cas_conflict(
    agent: McpSession, world: World, db: Database
) -> None:
    v1 = agent.ok("write", {"changes": [_create("c", "draft one")]})["changes"]["c"]
    target = {"atomId": v1["atomId"], "rev": 1}
    revise = {
        "id": "r",
        "op": "revise",
        "target": target,
        "content": {"text": "draft two", "links": []},
        "sources": [],
    }
    assert agent.ok("write", {"changes": [revise]})["changes"]["r"]["rev"] == 2
    before = subject_counts(db, world.subject_a)
    stale = agent.error("write", {"changes": [{**revise, "content": {"text": "x", "links": []}}]})
    assert stale["code"] == "CAS_CONFLICT"
    assert subject_counts(db, world.subject_a) == before


# --------------------------------------------------------- capabilities and subjects


@pytest.mark.req("API-2")
def test_agent_token_cannot_call_operator_tools(
    agent: McpSession, world: World, db: Database
) -> None:
    atom_id = next(iter(world.seeded.values()))
    before = subject_counts(db, world.subject_a)
    for name, args in (
        ("purge", {"atomId": atom_id}),
        ("atomise", {"atomId": atom_id}),
        ("export_forensic_bundle", {"atomId": atom_id}),
        ("set_namespace_policy", {"policy": {"auto_atomise": True}}),
    ):
        error = agent.error(name, args)
        assert error["code"] == "PERMISSION_DENIED", (name, error)
    assert subject_counts(db, world.subject_a) == before
    # The same atom is still there for its subject.
    assert agent.ok("inspect", {"atomId": atom_id, "limit": 0})["atom"]["atomId"] == atom_id


@pytest.mark.req("API-2")
def test_two_subjects_never_see_each_other(agent: McpSession, world: World) -> None:
    other = world.sessions["http-b"]
    b_text = f"subject B's secret plan {uuid.uuid4().hex}"
    b_atom = other.ok("remember", {"text": b_text})["atom"]
    a_atom = next(iter(world.seeded.values()))

    assert not any(
        h["atom"]["atomId"] == b_atom["atomId"]
        for h in agent.ok("search", {"query": b_text, "limit": 10})["hits"]
    )
    assert b_text not in agent.ok("read", {"query": b_text, "memoryTokenBudget": 500})["text"]
    assert agent.error("inspect", {"atomId": b_atom["atomId"]})["code"] == "NOT_FOUND"
    assert agent.error("lineage", {"atomId": b_atom["atomId"]})["code"] == "NOT_FOUND"
    with pytest.raises(MCPError) as info:
        agent.run(lambda c: c.read_resource(f"graphsvc://atom/{b_atom['atomId']}"))
    assert info.value.error.data["code"] == "NOT_FOUND"
    # And the other way round.
    assert other.error("inspect", {"atomId": a_atom})["code"] == "NOT_FOUND"
    hits = other.ok("search", {"query": CORPUS[1], "limit": 10})["hits"]
    assert b_atom["atomId"] in {h["atom"]["atomId"] for h in hits}  # B sees its own
    assert not {h["atom"]["atomId"] for h in hits} & set(world.seeded.values())


# ---------------------------------------------------------------- authentication


@pytest.mark.req("API-2")
@pytest.mark.parametrize("token", [None, "", "not-a-configured-token"])
def test_stdio_without_a_valid_token_refuses_to_start(world: World, token: str | None) -> None:
    env = dict(world.env)
    env.pop("GRAPHSVC_MCP_TOKEN", None)
    if token is not None:
        env["GRAPHSVC_MCP_TOKEN"] = token
    proc = subprocess.run(
        [sys.executable, "-m", "graphsvc", "mcp"],
        env=env,
        input="",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 8, proc.stderr
    assert "UNAUTHENTICATED" in proc.stderr
    assert proc.stdout == ""  # nothing on the protocol stream


@pytest.mark.req("API-2")
@pytest.mark.parametrize("header", [None, "Bearer not-a-configured-token", "Basic abc"])
def test_http_without_a_valid_token_is_401_before_any_mcp(
    live_server: Any, header: str | None
) -> None:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if header:
        headers["Authorization"] = header
    r = httpx.post(
        f"{live_server.url}/mcp", json=initialize_message(1), headers=headers, timeout=30
    )
    assert r.status_code == 401
    assert r.headers["www-authenticate"] == "Bearer"
    assert r.json()["error"]["data"]["code"] == "UNAUTHENTICATED"
    # The SDK's own client sees the refusal as an MCP error with graphsvc's code.
    with pytest.raises(BaseException) as info:
        http_session(live_server.url, None if header is None else header.split()[-1])
    errors = _leaves(info.value)
    assert any(
        isinstance(e, MCPError) and (e.error.data or {}).get("code") == "UNAUTHENTICATED"
        for e in errors
    ), errors


def _leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


# ------------------------------------------------------------------- bad input


@pytest.mark.req("API-3", "WR-7")
def test_bad_arguments_answer_coded_errors_and_write_nothing(
    agent: McpSession, world: World, db: Database, test_settings: Settings
) -> None:
    before = subject_counts(db, world.subject_a)
    cases = [
        ("search", {"query": "x", "limit": "ten"}, "INVALID_INPUT"),
        ("search", {"query": 5}, "INVALID_INPUT"),
        ("search", {}, "INVALID_INPUT"),
        ("search", {"query": "x", "colour": "red"}, "INVALID_INPUT"),
        ("read", {"query": "x", "memoryTokenBudget": 2**40}, "INVALID_INPUT"),
        ("inspect", {"atomId": "a", "direction": "sideways"}, "INVALID_INPUT"),
        ("write", {"changes": "all of them"}, "INVALID_INPUT"),
        ("write", {"changes": [{"id": "c", "op": "explode"}]}, "INVALID_INPUT"),
        ("remember", {"text": ""}, "INVALID_INPUT"),
        ("remember", {"text": "x", "about": [{"atomId": "never-shown"}]}, "INVALID_INPUT"),
        ("remember", {"text": "x", "input": "t"}, "INVALID_INPUT"),
        ("entities", {"first": -1}, "INVALID_INPUT"),
        ("changes", {"since": "yesterday"}, "INVALID_INPUT"),
        ("atom", {"atomId": "a", "asOf": "not a time"}, "INVALID_INPUT"),
        ("status", {"verbose": True}, "INVALID_INPUT"),
        (
            "record_use",
            {"eventId": "e", "manifest": {"id": "no-such-manifest"}},
            "DEPENDENCY_INVALID",
        ),
        (
            "write",
            {
                "changes": [
                    _create(f"c{i}", f"t{i}") for i in range(test_settings.write.max_changes + 1)
                ]
            },
            "BUDGET_EXCEEDED",
        ),
        (
            "write",
            {"changes": [_create("c", "x" * (test_settings.write.max_body_bytes + 1))]},
            "BUDGET_EXCEEDED",
        ),
    ]
    for name, args, code in cases:
        error = agent.error(name, args)
        assert error["code"] == code, (name, args if len(str(args)) < 300 else "...", error)
    with pytest.raises(MCPError) as info:
        agent.call("no_such_tool", {})
    assert info.value.error.code == -32602
    assert subject_counts(db, world.subject_a) == before


@pytest.mark.req("API-3")
def test_oversized_call_is_refused_on_each_transport(
    world: World, db: Database, test_settings: Settings, live_server: Any
) -> None:
    before = subject_counts(db, world.subject_a)
    huge = "y" * (test_settings.http.max_request_bytes + 10)
    stdio = world.sessions["stdio"]
    assert stdio.error("search", {"query": huge})["code"] == "BUDGET_EXCEEDED"
    # Over HTTP the body limit answers before MCP runs.
    headers = {
        "Authorization": f"Bearer {world.tokens['agent_a']}",
        "Accept": "application/json, text/event-stream",
    }
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "search", "arguments": {"query": huge}},
        }
    )
    r = httpx.post(
        f"{live_server.url}/mcp",
        content=body,
        headers={**headers, "Content-Type": "application/json"},
        timeout=60,
    )
    assert r.status_code == 413
    assert subject_counts(db, world.subject_a) == before


def _raw_stdio(env: dict[str, str], lines: list[str], answers: int) -> list[dict[str, Any]]:
    """Send raw lines to a ``graphsvc mcp`` process; the first ``answers`` lines back.

    A thread reads stdout: ``select`` on a buffered text pipe misses lines that an
    earlier ``readline`` already pulled into Python's buffer, so a server that writes
    two answers in one chunk would look silent.
    """
    proc = subprocess.Popen(
        [sys.executable, "-m", "graphsvc", "mcp"],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    received: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            received.put(line)
        received.put("")

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        assert proc.stdin is not None
        proc.stdin.write("\n".join(lines) + "\n")
        proc.stdin.flush()
        out: list[dict[str, Any]] = []
        deadline = time.monotonic() + 180
        while len(out) < answers and time.monotonic() < deadline:
            try:
                line = received.get(timeout=1.0)
            except queue.Empty:
                continue
            assert line, "the stdio server stopped"
            out.append(json.loads(line))
        return out
    finally:
        proc.kill()
        proc.wait(timeout=30)
        reader.join(timeout=30)


@pytest.mark.req("API-3")
def test_malformed_json_rpc_over_stdio_answers_errors_and_the_server_goes_on(
    world: World, db: Database
) -> None:
    before = subject_counts(db, world.subject_a)
    call = {"jsonrpc": "2.0", "method": "tools/call"}
    lines = [
        "{not json",
        json.dumps({**call, "id": 7, "params": 3}),
        json.dumps(initialize_message(8)),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        # A lone surrogate escape is not a Unicode string: refused as unparseable.
        '{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "write", '
        '"arguments": {"changes": [{"id": "c", "op": "create", "content": {"text": '
        '"a\\ud800b", "links": []}, "sources": []}]}}}',
        json.dumps({**call, "id": 10, "params": {"name": "no_such_tool", "arguments": {}}}),
        json.dumps({**call, "id": 11, "params": {"name": "search", "arguments": {"query": 3}}}),
    ]
    env = {**world.env, "GRAPHSVC_MCP_TOKEN": world.tokens["agent_a"]}
    answers = _raw_stdio(env, lines, 6)
    assert len(answers) == 6, answers
    by_id: dict[Any, list[dict[str, Any]]] = {}
    for a in answers:
        by_id.setdefault(a.get("id"), []).append(a)
    assert [a["error"]["code"] for a in by_id[None]] == [-32700, -32700]
    assert all(a["error"]["data"]["code"] == "INVALID_INPUT" for a in by_id[None])
    assert by_id[7][0]["error"]["code"] == -32600
    assert by_id[8][0]["result"]["serverInfo"]["name"] == "graphsvc"
    assert by_id[10][0]["error"]["code"] == -32602
    tool_error = by_id[11][0]["result"]
    assert tool_error["isError"] is True
    assert tool_error["structuredContent"]["code"] == "INVALID_INPUT"
    assert subject_counts(db, world.subject_a) == before


@pytest.mark.req("API-3")
@pytest.mark.parametrize("era", ["2025-06-18", "2026-07-28"])
def test_malformed_json_rpc_over_http_answers_errors_and_writes_nothing(
    world: World, db: Database, live_server: Any, era: str
) -> None:
    before = subject_counts(db, world.subject_a)
    headers = {
        "Authorization": f"Bearer {world.tokens['agent_a']}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": era,
    }
    url = f"{live_server.url}/mcp"
    for body in (b"{not json", b'{"jsonrpc": "2.0", "id": 1}', b"[1, 2]", b"42"):
        r = httpx.post(url, content=body, headers=headers, timeout=30)
        assert 400 <= r.status_code < 500, (body, r.status_code, r.text)
        assert "error" in r.json(), r.text
    # A lone surrogate in an argument: refused however the transport decodes it
    # (as unparseable JSON, or by graphsvc's edge check as INVALID_INPUT).
    surrogate = (
        b'{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "search", '
        b'"arguments": {"query": "a\\ud800b"}}}'
    )
    r = httpx.post(url, content=surrogate, headers=headers, timeout=30)
    answer = r.json()
    if "error" in answer:
        # -32022: the era without sessions is refused whatever it sends (SPEC §17).
        assert answer["error"]["code"] in (-32700, -32600, -32602, -32022), answer
    else:
        assert answer["result"]["isError"] is True
        assert answer["result"]["structuredContent"]["code"] == "INVALID_INPUT"
    assert subject_counts(db, world.subject_a) == before


# ------------------------------------------------------------------- resources


@pytest.mark.req("API-2")
def test_atoms_are_resources_by_uri_head_and_revision(agent: McpSession, world: World) -> None:
    templates = agent.run(lambda c: c.list_resource_templates()).resource_templates
    assert {t.uri_template for t in templates} == {
        "graphsvc://atom/{atomId}",
        "graphsvc://atom/{atomId}@{rev}",
    }
    v1 = agent.ok("write", {"changes": [_create("c", "first wording")]})["changes"]["c"]
    agent.ok(
        "write",
        {
            "changes": [
                {
                    "id": "r",
                    "op": "revise",
                    "target": {"atomId": v1["atomId"], "rev": 1},
                    "content": {"text": "second wording", "links": []},
                    "sources": [],
                }
            ]
        },
    )

    def view(uri: str) -> dict[str, Any]:
        contents = agent.run(lambda c: c.read_resource(uri)).contents
        assert isinstance(contents[0], types.TextResourceContents)
        assert contents[0].mime_type == "application/json"
        parsed: dict[str, Any] = json.loads(contents[0].text)
        return parsed

    head = view(f"graphsvc://atom/{v1['atomId']}")
    assert (head["rev"], head["text"], head["head"]) == (2, "second wording", True)
    first = view(f"graphsvc://atom/{v1['atomId']}@1")
    assert (first["rev"], first["text"], first["head"]) == (1, "first wording", False)
    for uri, code, rpc in (
        (f"graphsvc://atom/{v1['atomId']}@9", "NOT_FOUND", -32002),
        ("graphsvc://atom/no-such-atom", "NOT_FOUND", -32002),
        ("https://example.org/x", "INVALID_INPUT", -32602),
    ):
        with pytest.raises(MCPError) as info:
            view(uri)
        assert info.value.error.code == rpc
        assert info.value.error.data["code"] == code
