"""Schema-driven fuzzing of the live HTTP surface (issue 18) with hypothesis-graphql.

Every generated query and mutation (valid documents with random arguments) is posted
to a real uvicorn over a real Neo4j, with the caller's token, a token of another
subject, or none. Arguments mix random values with real ones: JSON scalars are
strings, small objects, the subject's read manifest or a host input naming its real
InputToken and manifest; ids are the subject's atom ids or random; strings are
random or a real cursor, InputToken or manifest id. Values answered by earlier
requests are fed into later ones: every atom id, global id, cursor, InputToken and
manifest id an answer carries joins the pools the strategies draw from. The server
must never answer 5xx or ``INTERNAL``, every error must carry a code, and it must
still answer at the end.

The run is seeded (derandomised) and bounded: ``GRAPHSVC_FUZZ_EXAMPLES`` operations
(default 2,000; set it higher for a longer run). Eight clients post concurrently,
so which harvested value a draw picks depends on timing: the documents are seeded,
the harvested values not.
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


class Harvest:
    """Values from earlier answers, for later requests (appends are atomic)."""

    ID_KEYS = frozenset({"atomId", "sourceId", "id", "jobId"})
    STRING_KEYS = frozenset({"cursor", "endCursor", "startCursor", "observe", "id"})

    def __init__(self, ids: list[str], strings: list[str]) -> None:
        self.ids = list(ids)
        self.strings = list(strings)

    def collect(self, value: Any, key: str = "") -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                self.collect(v, k)
        elif isinstance(value, list):
            for v in value[:50]:
                self.collect(v, key)
        elif isinstance(value, str) and 0 < len(value) <= 512:
            if key in self.ID_KEYS and len(self.ids) < 5_000:
                self.ids.append(value)
            if key in self.STRING_KEYS and len(self.strings) < 5_000:
                self.strings.append(value)

    @staticmethod
    def pick(pool: list[str]) -> st.SearchStrategy[str]:
        # Read at draw time: the pool keeps growing while the run goes on.
        return st.integers(0, 2**20).map(lambda i: pool[i % len(pool)])


def _id_nodes(harvest: Harvest) -> st.SearchStrategy[graphql.ValueNode]:
    return st.one_of(Harvest.pick(harvest.ids), st.text(max_size=12)).map(nodes.String)


def _check(
    client: httpx.Client, document: str, token: str | None, harvest: Harvest
) -> tuple[str, list[str]]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    r = client.post("/graphql", json={"query": document}, headers=headers)
    assert r.status_code < 500, (r.status_code, document, r.text[:500])
    body = r.json()
    harvest.collect(body.get("data"))
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
    harvest = Harvest(fuzz_target["ids"], fuzz_target["strings"])
    scalars = {
        "JSON": st.one_of(_JSON, st.sampled_from(fuzz_target["json"])),
        "ID": _id_nodes(harvest),
        "String": st.one_of(
            st.text(max_size=20).map(nodes.String),
            Harvest.pick(harvest.strings).map(nodes.String),
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
        pending.append(pool.submit(_check, client, document, token, harvest))

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
    # Answers fed later requests: the pools grew beyond the values made up front.
    assert len(harvest.ids) > len(fuzz_target["ids"]), len(harvest.ids)
    assert len(harvest.strings) > len(fuzz_target["strings"]), len(harvest.strings)
    print(f"fuzz outcomes over {EXAMPLES} operations: {dict(sorted(seen.items()))}")
