"""Schema-driven fuzzing of the MCP tools over streamable HTTP (issue 29).

Every call is drawn from the tools' own JSON Schemas as ``tools/list`` publishes
them: arguments that follow the schema, and the same with one thing broken (a
required argument dropped, an unknown one added, a value of the wrong type, or no
object at all), for every tool and a tool that does not exist. Strings mix random
text with real values: the subject's atom ids, a valid payload digest, and every
atom id, manifest id, cursor, InputToken and operation id an earlier answer carried
(harvested while the run goes on). Calls go to ``/mcp`` of a real uvicorn over the
real Neo4j with the owner's human token, the owner's agent token or another
subject's agent token, eight at a time. The server must never answer INTERNAL, every
tool error must carry a graphsvc code, every protocol error must be an MCP one
(invalid params), and it must still answer at the end.

The run is seeded (derandomised) and bounded: ``GRAPHSVC_MCP_FUZZ_EXAMPLES`` calls
(default 2,000).
"""

from __future__ import annotations

import os
import threading
import uuid
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import Future
from typing import Any

import httpx
import mcp_types as types
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.shared.exceptions import MCPError
from mcp_support import McpSession, http_session

from graphsvc.core.binding import Binding
from graphsvc.inputs.models import parse_changes
from graphsvc.service import Service

EXAMPLES = int(os.environ.get("GRAPHSVC_MCP_FUZZ_EXAMPLES", "2000"))
IN_FLIGHT = 8
DIGEST = "sha256:" + "ab" * 32
JSON_RPC_INVALID_PARAMS = -32602


class Harvest:
    """Values from earlier answers, for later calls (appends are atomic)."""

    KEYS = frozenset({"atomId", "manifestId", "cursor", "inputToken", "operationId", "eventId"})

    def __init__(self, strings: list[str]) -> None:
        self.strings = list(strings)

    def collect(self, value: Any, key: str = "") -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                self.collect(v, k)
        elif isinstance(value, list):
            for v in value[:50]:
                self.collect(v, key)
        elif (
            isinstance(value, str)
            and key in self.KEYS
            and 0 < len(value) <= 512
            and len(self.strings) < 5_000
        ):
            self.strings.append(value)

    def pick(self) -> st.SearchStrategy[str]:
        # Read at draw time: the pool keeps growing while the run goes on.
        return st.integers(0, 2**20).map(lambda i: self.strings[i % len(self.strings)])


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        resolved: dict[str, Any] = root["$defs"][ref.removeprefix("#/$defs/")]
        return resolved
    return schema


def _values(schema: dict[str, Any], root: dict[str, Any], harvest: Harvest) -> Any:
    """A strategy for values that follow ``schema`` (a JSON Schema subset: pydantic's)."""
    schema = _resolve(schema, root)
    if "anyOf" in schema:
        return st.one_of(*[_values(s, root, harvest) for s in schema["anyOf"]])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "string":
        return st.one_of(
            st.text(max_size=12), harvest.pick(), st.just(DIGEST), st.sampled_from(["", "x" * 300])
        )
    if kind == "integer":
        low, high = schema.get("minimum", -(2**31)), schema.get("maximum", 2**31 - 1)
        small = st.integers(max(low, -3), min(high, 300))
        return st.one_of(small, small, small, st.integers(low, high))
    if kind == "number":
        return st.floats(allow_nan=False, allow_infinity=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        return st.lists(_values(schema.get("items", {}), root, harvest), max_size=3)
    if kind == "object" and "properties" in schema:
        props = schema["properties"]
        required = set(schema.get("required", []))
        return st.fixed_dictionaries(
            {k: _values(v, root, harvest) for k, v in props.items() if k in required},
            optional={k: _values(v, root, harvest) for k, v in props.items() if k not in required},
        )
    if kind == "object":
        keys = st.sampled_from(["id", "presentations", "payloadDigest", "auto_atomise", "x"])
        return st.dictionaries(
            keys, st.one_of(_leaf(harvest), st.lists(_leaf(harvest))), max_size=3
        )
    return _leaf(harvest)


def _leaf(harvest: Harvest) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.none(), st.booleans(), st.integers(-5, 5000), st.text(max_size=12), harvest.pick()
    )


def _broken(args: st.SearchStrategy[Any], schema: dict[str, Any], harvest: Harvest) -> Any:
    """``args`` with one thing wrong (or not an object at all)."""
    props = sorted(schema.get("properties", {}))

    def drop(a: dict[str, Any], k: str) -> dict[str, Any]:
        return {x: v for x, v in a.items() if x != k}

    wrong = st.one_of(st.integers(), st.text(max_size=5), st.lists(st.integers(), max_size=2))
    mutations = [
        st.tuples(args, st.sampled_from(props or ["x"])).map(lambda p: drop(p[0], p[1])),
        st.tuples(args, st.text(min_size=1, max_size=8), _leaf(harvest)).map(
            lambda p: {**p[0], f"unknown_{p[1]}": p[2]}
        ),
        st.tuples(args, st.sampled_from(props or ["x"]), wrong).map(lambda p: {**p[0], p[1]: p[2]}),
        st.dictionaries(st.text(max_size=5), _leaf(harvest), max_size=2),
    ]
    return st.one_of(*mutations)


@pytest.fixture(scope="module")
def fuzz_world(live_server: Any, service: Service) -> Iterator[dict[str, Any]]:
    subject = f"t-mcpfuzz-{uuid.uuid4().hex[:8]}"
    human = Binding(subject, "default", "human", "fuzzer", may_purge=True)
    agent = Binding(subject, "default", "agent", "fuzz-bot")
    other = Binding(f"t-mcpfuzz-other-{uuid.uuid4().hex[:8]}", "default", "agent", "x")
    written = service.write(
        human,
        parse_changes(
            [
                {
                    "id": f"c{i}",
                    "op": "create",
                    "content": {"text": f"fuzz atom {i} about tides and moons", "links": []},
                    "sources": [],
                }
                for i in range(5)
            ]
        ),
    )
    sessions: list[McpSession] = []
    try:
        for name, binding in (("human", human), ("agent", agent), ("other", other)):
            token = uuid.uuid4().hex
            live_server.auth.add(token, binding)
            sessions.append(http_session(live_server.url, token, f"fuzz-{name}"))
        yield {"ids": [v.atom_id for v in written.changes.values()], "sessions": sessions}
    finally:
        for s in sessions:
            s.close()


def _check(result: types.CallToolResult | BaseException, harvest: Harvest) -> str:
    """The outcome's label; fails on an internal or uncoded error."""
    if isinstance(result, MCPError):
        assert result.error.code == JSON_RPC_INVALID_PARAMS, result.error
        return f"rpc:{result.error.code}"
    assert isinstance(result, types.CallToolResult), repr(result)
    if not result.is_error:
        harvest.collect(result.structured_content)
        return "ok"
    error = result.structured_content
    assert isinstance(error, dict) and isinstance(error.get("code"), str), result
    assert error["code"] != "INTERNAL", result
    return str(error["code"])


@pytest.mark.req("API-3")
def test_fuzzed_tool_calls_never_answer_internal(
    live_server: Any, fuzz_world: dict[str, Any]
) -> None:
    sessions: list[McpSession] = fuzz_world["sessions"]
    harvest = Harvest([*fuzz_world["ids"], DIGEST])
    # The operator token lists every tool: the schemas fuzzed are the published ones.
    tools = sessions[0].tools()
    calls = []
    for name, tool in sorted(tools.items()):
        schema = tool.input_schema
        args = _values(schema, schema, harvest)
        # Three in four follow the schema, so the operations themselves run.
        drawn = st.one_of(args, args, args, _broken(args, schema, harvest))
        calls.append(st.tuples(st.just(name), drawn))
    calls.append(st.tuples(st.just("no_such_tool"), st.just({})))
    gate = threading.BoundedSemaphore(IN_FLIGHT)
    pending: list[Future[types.CallToolResult]] = []

    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(call=st.one_of(*calls), who=st.sampled_from(range(len(sessions))))
    def run(call: tuple[str, Any], who: int) -> None:
        name, arguments = call
        gate.acquire()
        future = sessions[who].submit(lambda c: c.call_tool(name, arguments))
        future.add_done_callback(lambda _: gate.release())
        pending.append(future)

    run()
    seen: Counter[str] = Counter()
    for future in pending:
        try:
            outcome: types.CallToolResult | BaseException = future.result(timeout=300)
        except MCPError as exc:
            outcome = exc
        seen[_check(outcome, harvest)] += 1
    assert len(pending) == EXAMPLES
    assert seen["ok"] > 0, seen
    assert len(harvest.strings) > len(fuzz_world["ids"]) + 1, "no answer fed a later call"
    # Still up, and still answering tool calls.
    assert httpx.get(f"{live_server.url}/healthz", timeout=30).status_code == 200
    assert not sessions[0].call("search", {"query": "tides"}).is_error
    print(f"MCP fuzz outcomes over {EXAMPLES} calls: {dict(sorted(seen.items()))}")
