"""Schema-driven fuzzing of the live HTTP surface (issue 18) with hypothesis-graphql.

Every generated query and mutation (valid documents with random arguments) is posted
to a real uvicorn over a real Neo4j, with the caller's token, a token of another
subject, or none. Arguments mix random values with real ones: JSON scalars are
strings, small objects, the subject's read manifest or a host input naming its real
InputToken and manifest; ids are the subject's atom ids or random; strings are
random or a real cursor, InputToken or manifest id. The server must never answer
5xx or ``INTERNAL``, every error must carry a code, and it must still answer at the
end.

The run is seeded (derandomised) and bounded: ``GRAPHSVC_FUZZ_EXAMPLES`` operations
(default 2,000; set it higher for a longer run).
"""

from __future__ import annotations

import os
import uuid
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import graphql
import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_graphql import mutations, nodes, queries

from graphsvc.api.schema import build_schema
from graphsvc.core.binding import Binding
from graphsvc.inputs import parse_changes, parse_host_input
from graphsvc.service import Service

EXAMPLES = int(os.environ.get("GRAPHSVC_FUZZ_EXAMPLES", "2000"))

_json_leaf = st.one_of(
    st.text(max_size=20).map(nodes.String),
    st.integers(-5, 5000).map(nodes.Int),
    st.booleans().map(nodes.Boolean),
)
_JSON = st.one_of(
    _json_leaf,
    st.lists(
        st.tuples(
            st.sampled_from(
                ["presentations", "sources", "payloadDigest", "auto_atomise", "id", "x"]
            ),
            _json_leaf,
        ),
        max_size=3,
        unique_by=lambda kv: kv[0],
    ).map(
        lambda kvs: nodes.Object(
            [graphql.ObjectFieldNode(name=graphql.NameNode(value=k), value=v) for k, v in kvs]
        )
    ),
)


def _ast(value: Any) -> graphql.ValueNode:
    """A GraphQL literal for a JSON value (what a client would inline)."""
    if isinstance(value, dict):
        return nodes.Object(
            [
                graphql.ObjectFieldNode(name=graphql.NameNode(value=k), value=_ast(v))
                for k, v in value.items()
            ]
        )
    if isinstance(value, list):
        return nodes.List([_ast(v) for v in value])
    if isinstance(value, bool):
        return nodes.Boolean(value)
    if isinstance(value, int):
        return nodes.Int(value)
    if isinstance(value, float):
        return nodes.Float(value)
    if value is None:
        return graphql.NullValueNode()
    return nodes.String(value)


@pytest.fixture(scope="module")
def fuzz_target(live_server: Any, service: Service) -> dict[str, Any]:
    subject = f"t-fuzz-{uuid.uuid4().hex[:8]}"
    owner = Binding(subject, "default", "human", "fuzzer", may_purge=True)
    changes = [
        {
            "id": f"c{i}",
            "op": "CREATE",
            "content": {"text": f"fuzz atom {i} about leaves and light", "links": []},
            "sources": [],
        }
        for i in range(5)
    ]
    written = service.write(owner, parse_changes(changes))
    other = Binding(f"t-fuzz-other-{uuid.uuid4().hex[:8]}", "default", "agent", "x")
    found = service.search(owner, "leaves and light", limit=1)
    read = service.read(owner, "leaves and light", 300, limit=1)
    digest = "sha256:" + "0" * 64
    token = service.observe(
        owner, parse_host_input({"presentations": [read.manifest["id"]], "payloadDigest": digest})
    )
    strings = [found.cursor, read.cursor, token, read.manifest["id"]]
    host_input = {
        "presentations": [read.manifest["id"]],
        "inherit": [token],
        "payloadDigest": digest,
    }
    return {
        "sdl": build_schema(service.settings).as_str(),
        "ids": [v.atom_id for v in written.changes.values()],
        "strings": [x for x in strings if x],
        "json": [_ast(read.manifest), _ast(host_input)],
        "tokens": [live_server.token_for(owner), live_server.token_for(other), None],
    }


def _id_nodes(ids: list[str]) -> st.SearchStrategy[graphql.ValueNode]:
    return st.one_of(st.sampled_from(ids), st.text(max_size=12)).map(nodes.String)


def _check(client: httpx.Client, document: str, token: str | None) -> tuple[str, list[str]]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    r = client.post("/graphql", json={"query": document}, headers=headers)
    assert r.status_code < 500, (r.status_code, document, r.text[:500])
    body = r.json()
    codes = []
    for error in body.get("errors") or []:
        code = (error.get("extensions") or {}).get("code")
        assert code and code != "INTERNAL", (document, error)
        codes.append(code)
    return document, codes


def test_fuzzed_operations_never_answer_5xx_or_internal(
    live_server: Any, fuzz_target: dict[str, Any]
) -> None:
    schema = graphql.build_schema(fuzz_target["sdl"])
    scalars = {
        "JSON": st.one_of(_JSON, st.sampled_from(fuzz_target["json"])),
        "ID": _id_nodes(fuzz_target["ids"]),
        "String": st.one_of(
            st.text(max_size=20).map(nodes.String),
            st.sampled_from(fuzz_target["strings"]).map(nodes.String),
        ),
    }
    # One root field per document: small documents, every field drawn as often.
    documents = st.one_of(
        *[
            queries(schema, fields=[f], custom_scalars=scalars, allow_x00=False)
            for f in schema.query_type.fields  # type: ignore[union-attr]
        ],
        *[
            mutations(schema, fields=[f], custom_scalars=scalars, allow_x00=False)
            for f in schema.mutation_type.fields  # type: ignore[union-attr]
        ],
    )
    client = httpx.Client(
        base_url=live_server.url, timeout=60, limits=httpx.Limits(max_connections=8)
    )
    # Hypothesis draws the documents (seeded); eight clients post them meanwhile.
    pool = ThreadPoolExecutor(max_workers=8)
    pending: list[Future[tuple[str, list[str]]]] = []

    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(document=documents, token=st.sampled_from(fuzz_target["tokens"]))
    def run(document: str, token: str | None) -> None:
        pending.append(pool.submit(_check, client, document, token))

    seen: Counter[str] = Counter()
    try:
        run()
        for future in pending:
            _, codes = future.result()  # re-raises the first failed check
            seen.update(codes or ["ok"])
        # Still up, and still answering data requests.
        assert client.get("/healthz").status_code == 200
        assert client.get("/readyz").status_code == 200
    finally:
        pool.shutdown(cancel_futures=True)
        client.close()
    assert len(pending) == EXAMPLES
    assert seen["ok"] > 0, seen
    print(f"fuzz outcomes over {EXAMPLES} operations: {dict(sorted(seen.items()))}")
