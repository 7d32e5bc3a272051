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

import base64
import json
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
from graphsvc.core.requests import ReadRequest, SearchRequest
from graphsvc.inputs.models import parse_changes, parse_host_input
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
    found = service.search(owner, SearchRequest("leaves and light", limit=1))
    read = service.read(owner, ReadRequest("leaves and light", 300, limit=1))
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


# ------------------------------------------------------------ hostile requests (issue 26)

HOSTILE_EXAMPLES = int(os.environ.get("GRAPHSVC_FUZZ_HOSTILE_EXAMPLES", "2000"))
_ATOM_FIELDS = ["atomId", "state", "head { rev text }", "links(first: 2) { edges { cursor } }"]
_SURROGATES = st.sampled_from(["\ud800", "\udfff", "a\udbffb", "\ud800\ud800", "\udc00x"])


@st.composite
def _fragment_documents(draw: st.DrawFn) -> str:
    """Fragments spreading earlier (or, sometimes, later) fragments, fan-out and nesting."""
    n = draw(st.integers(1, 40))
    parts = []
    for i in range(n):
        # Mostly earlier fragments (a DAG); now and then itself or a later one (a
        # cycle, or a name that does not exist yet).
        top = i + 1 if draw(st.integers(0, 9)) == 0 else max(0, i - 1)
        spreads = draw(st.lists(st.integers(0, top), max_size=4)) if i or top else []
        body = " ".join(f"...F{j}" for j in spreads)
        field = draw(st.sampled_from(_ATOM_FIELDS))
        wrap = draw(st.integers(0, 3))
        inner = f"{field} {body}".strip()
        for _ in range(wrap):
            inner = f"head {{ atom {{ {inner} }} }}"
        parts.append(f"fragment F{i} on Atom {{ {inner} }}")
    root = draw(st.integers(0, n - 1))
    first = draw(st.integers(0, 200))
    return f"{{ atoms(first: {first}) {{ edges {{ node {{ ...F{root} }} }} }} }}\n" + "\n".join(
        parts
    )


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)


@st.composite
def _malformed_bodies(draw: st.DrawFn) -> tuple[bytes, str]:
    kind = draw(st.sampled_from(["value", "bytes", "deep", "batch", "type", "fields"]))
    content_type = "application/json"
    if kind == "value":
        body = json.dumps(draw(_JSON_VALUES.filter(lambda v: not isinstance(v, dict)))).encode()
    elif kind == "bytes":
        body = draw(st.binary(max_size=64))
    elif kind == "deep":
        depth = draw(st.integers(60, 6000))
        opener, closer = draw(st.sampled_from([(b"[", b"]"), (b'{"a":', b"}")]))
        body = (
            b'{"query": "{ health }", "variables": {"v": '
            + opener * depth
            + b"1"
            + closer * depth
            + b"}}"
        )
    elif kind == "batch":
        body = json.dumps([{"query": "{ health }"}] * draw(st.integers(0, 5))).encode()
    elif kind == "type":
        body = b'{"query": "{ health }"}'
        content_type = draw(
            st.sampled_from(
                [
                    "text/plain",
                    "application/graphql",
                    "multipart/form-data; boundary=b",
                    "application/x-www-form-urlencoded",
                    "application/json; charset=utf-16",
                    "",
                ]
            )
        )
    else:
        fields = draw(
            st.dictionaries(
                st.sampled_from(["query", "variables", "operationName", "extensions"]),
                _JSON_VALUES,
                max_size=4,
            )
        )
        body = json.dumps(fields).encode()
    return body, content_type


@st.composite
def _surrogate_arguments(
    draw: st.DrawFn, schema: graphql.GraphQLSchema
) -> tuple[str, dict[str, Any]]:
    """One String or ID argument of a root field, with a lone surrogate, as a variable."""
    candidates = _root_arguments(schema, "String") + _root_arguments(schema, "ID")
    op, name, arg_name, type_str, f = draw(st.sampled_from(candidates))
    args = ", ".join([f"{arg_name}: $v", *_required_others(f, arg_name)])
    selection = _selection_of(f.type)
    value: Any = draw(st.text(max_size=6)) + draw(_SURROGATES) + draw(st.text(max_size=6))
    if graphql.is_list_type(graphql.get_nullable_type(f.args[arg_name].type)):
        value = [value]
    return f"{op}($v: {type_str}) {{ {name}({args}) {selection} }}", {"v": value}


def _selection_of(t: Any) -> str:
    named = graphql.get_named_type(t)
    if isinstance(named, graphql.GraphQLObjectType | graphql.GraphQLInterfaceType):
        return "{ __typename }"
    return ""


@st.composite
def _alias_floods(draw: st.DrawFn) -> str:
    count = draw(st.integers(1, 80))
    field = draw(
        st.sampled_from(
            [
                'read(query: "x", memoryTokenBudget: {b}, limit: {l}, depth: {d}) {{ text }}',
                'search(query: "x", limit: {l}, depth: {d}) {{ hits {{ score }} }}',
                'inspect(atomId: "x", limit: {l}) {{ stale }}',
                "atoms(first: {l}) {{ edges {{ cursor }} }}",
                'lineage(atomId: "x", depth: {d})',
            ]
        )
    )
    b = draw(st.integers(-10, 2_000_000))
    lim = draw(st.integers(-10, 20_000))
    d = draw(st.integers(-2, 40))
    one = field.format(b=b, l=lim, d=d)
    return "{ " + " ".join(f"a{i}: {one}" for i in range(count)) + " }"


# ----------------------------------------------- values no layer below can hold (issue 47)

EDGE_INTEGERS = [
    2**31 - 1,
    2**31,
    -(2**31) - 1,
    2**53 + 1,
    2**63 - 1,
    2**63,
    -(2**63),
    -(2**63) - 1,
    2**64,
    10**30,
]
_EDGE_INTS = st.sampled_from(EDGE_INTEGERS)
# Connections whose cursor carries an integer, and the types of its position.
_INT_CURSORS = {
    "changes": ("{{ changes(after: $c) {{ edges {{ cursor }} }} }}", (int,)),
    "revisions": (
        "{{ atom(atomId: $a) {{ revisions(after: $c) {{ edges {{ cursor }} }} }} }}",
        (int,),
    ),
    "incoming": (
        "{{ atom(atomId: $a) {{ incoming(after: $c) {{ edges {{ cursor }} }} }} }}",
        (str, int),
    ),
    "citedBy": (
        "{{ atom(atomId: $a) {{ citedBy(after: $c) {{ edges {{ cursor }} }} }} }}",
        (str, int),
    ),
    "links": (
        "{{ atom(atomId: $a) {{ head {{ links(after: $c) {{ edges {{ cursor }} }} }} }} }}",
        (int,),
    ),
}


def _forged(*parts: Any) -> str:
    text = json.dumps(list(parts), separators=(",", ":"))
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _root_arguments(
    schema: graphql.GraphQLSchema, type_name: str
) -> list[tuple[str, str, str, str, Any]]:
    """Every (operation, root field, argument, its type, field) whose argument is of
    the named type ``type_name``."""
    out = []
    for op, root in (("query", schema.query_type), ("mutation", schema.mutation_type)):
        assert root is not None
        for name, f in root.fields.items():
            for arg_name, arg in f.args.items():
                if graphql.get_named_type(arg.type).name == type_name:
                    out.append((op, name, arg_name, str(arg.type), f))
    return out


def _required_others(f: Any, arg_name: str) -> list[str]:
    """Literals for the other required arguments of ``f``."""
    others = []
    for other, arg in f.args.items():
        if other != arg_name and isinstance(arg.type, graphql.GraphQLNonNull):
            named = graphql.get_named_type(arg.type)
            literal = {"Int": "1", "Boolean": "true", "JSON": "{}"}.get(named.name, '"x"')
            if isinstance(named, graphql.GraphQLInputObjectType) or graphql.is_list_type(
                graphql.get_nullable_type(arg.type)
            ):
                literal = "[]"
            others.append(f"{other}: {literal}")
    return others


@st.composite
def _edge_integer_arguments(
    draw: st.DrawFn, schema: graphql.GraphQLSchema
) -> tuple[str, dict[str, Any]]:
    """An Int or JSON argument of a root field holding a 64-bit edge integer, as a
    variable or inline."""
    op, name, arg_name, type_str, f = draw(
        st.sampled_from(_root_arguments(schema, "Int") + _root_arguments(schema, "JSON"))
    )
    value: Any = draw(_EDGE_INTS)
    if graphql.get_named_type(f.args[arg_name].type).name == "JSON":
        value = {"payloadDigest": "x", "n": [value]}
    if graphql.is_list_type(graphql.get_nullable_type(f.args[arg_name].type)):
        value = [value]
    others = _required_others(f, arg_name)
    selection = _selection_of(f.type)
    if draw(st.booleans()):  # inline: the lexer sees the digits
        literal = graphql.print_ast(_ast(value))
        return (
            f"{op} {{ {name}({', '.join([f'{arg_name}: {literal}', *others])}) {selection} }}",
            {},
        )
    args = ", ".join([f"{arg_name}: $v", *others])
    return f"{op}($v: {type_str}) {{ {name}({args}) {selection} }}", {"v": value}


@st.composite
def _edge_cursors(draw: st.DrawFn, atom_ids: list[str]) -> tuple[str, dict[str, Any]]:
    """A forged cursor of an integer-keyed connection, or a Revision id, at a 64-bit edge."""
    kind = draw(st.sampled_from([*_INT_CURSORS, "node"]))
    atom_id = draw(st.sampled_from(atom_ids))
    wide = draw(_EDGE_INTS)
    if kind == "node":
        return "query($i: ID!) { node(id: $i) { id } }", {"i": _forged("Revision", atom_id, wide)}
    template, types = _INT_CURSORS[kind]
    position = ["x" if t is str else wide for t in types]
    selection = template.format()
    if "$a" not in selection:
        return "query($c: String) " + selection, {"c": _forged("c", kind, *position)}
    return "query($c: String, $a: ID!) " + selection, {
        "c": _forged("c", kind, *position),
        "a": atom_id,
    }


@st.composite
def _extreme_instants(draw: st.DrawFn, schema: graphql.GraphQLSchema) -> tuple[str, dict[str, Any]]:
    """A DateTime argument of a root field whose offset puts it near or past years 1
    and 9999."""
    op, name, arg_name, type_str, f = draw(st.sampled_from(_root_arguments(schema, "DateTime")))
    year, month, day, hour = draw(
        st.sampled_from([(1, 1, 1, 0), (1, 1, 1, 13), (9999, 12, 31, 23), (9999, 12, 31, 10)])
    )
    sign = draw(st.sampled_from("+-"))
    offset = draw(st.sampled_from(["14:00", "13:59", "00:01", "00:00", "23:59"]))
    value = f"{year:04d}-{month:02d}-{day:02d}T{hour:02d}:00:00{sign}{offset}"
    others = _required_others(f, arg_name)
    args = ", ".join([f"{arg_name}: $v", *others])
    return f"{op}($v: {type_str}) {{ {name}({args}) {_selection_of(f.type)} }}", {"v": value}


# {health} and a 3.9 MB comment: seconds of lexing, a public operation (issue 47).
_LARGE_PUBLIC = json.dumps({"query": "{ health }\n#" + "x" * 3_900_000}).encode()


def _check_hostile(
    client: httpx.Client, request: tuple[bytes, str, dict[str, str]]
) -> tuple[int, str]:
    body, content_type, headers = request
    r = client.post("/graphql", content=body, headers={"content-type": content_type, **headers})
    assert r.status_code < 500 or r.status_code in {503, 504}, (
        r.status_code,
        body[:300],
        r.text[:300],
    )
    assert r.headers["content-type"].startswith("application/json"), (body[:300], r.text[:300])
    answer = r.json()
    codes = [(e.get("extensions") or {}).get("code") for e in answer.get("errors") or []]
    assert all(c and c != "INTERNAL" for c in codes), (body[:300], answer)
    return r.status_code, codes[0] if codes else "ok"


def test_hostile_request_classes_never_answer_5xx_internal_or_non_json(
    live_server: Any, fuzz_target: dict[str, Any]
) -> None:
    schema = graphql.build_schema(fuzz_target["sdl"])
    tokens = fuzz_target["tokens"]

    def as_request(document: str, variables: dict[str, Any] | None = None) -> bytes:
        # json.dumps escapes lone surrogates (\\ud800), as a hostile client sends them.
        return json.dumps({"query": document, "variables": variables or {}}).encode()

    requests = st.one_of(
        _fragment_documents().map(lambda d: (as_request(d), "application/json")),
        _malformed_bodies(),
        _surrogate_arguments(schema).map(lambda dv: (as_request(*dv), "application/json")),
        _alias_floods().map(lambda d: (as_request(d), "application/json")),
        # Issue 47: 64-bit edges in Int and JSON arguments and in cursors and ids,
        # instants at the ends of the calendar, large documents without a known token
        # (their own Authorization, not the drawn token).
        _edge_integer_arguments(schema).map(lambda dv: (as_request(*dv), "application/json")),
        _edge_cursors(fuzz_target["ids"]).map(lambda dv: (as_request(*dv), "application/json")),
        _extreme_instants(schema).map(lambda dv: (as_request(*dv), "application/json")),
        st.sampled_from([{}, {"Authorization": "Bearer not-a-token"}]).map(
            lambda h: (_LARGE_PUBLIC, "application/json", h)
        ),
    )
    client = httpx.Client(
        base_url=live_server.url, timeout=60, limits=httpx.Limits(max_connections=8)
    )
    pool = ThreadPoolExecutor(max_workers=8)
    pending: list[Future[tuple[int, str]]] = []

    @settings(
        max_examples=HOSTILE_EXAMPLES,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(request=requests, token=st.sampled_from(tokens))
    def run(request: tuple[Any, ...], token: str | None) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        if len(request) == 3:  # a request that brings its own Authorization
            headers = request[2]
        pending.append(pool.submit(_check_hostile, client, (request[0], request[1], headers)))

    seen: Counter[str] = Counter()
    try:
        run()
        for future in pending:
            status, code = future.result()
            seen[f"{status} {code}"] += 1
        assert client.get("/healthz").status_code == 200
    finally:
        pool.shutdown(cancel_futures=True)
        client.close()
    assert len(pending) == HOSTILE_EXAMPLES
    # Every class was refused for its own reason somewhere in the run.
    for expected in (
        "QUERY_TOO_DEEP",
        "BAD_REQUEST",
        "UNSUPPORTED_MEDIA_TYPE",
        "INVALID_INPUT",
        "QUERY_TOO_COMPLEX",
        "BATCH_NOT_SUPPORTED",
        "UNAUTHENTICATED",
    ):
        assert any(key.endswith(expected) for key in seen), (expected, seen)
    statuses = Counter(key.split()[0] for key in seen.elements())
    print(f"hostile outcomes over {HOSTILE_EXAMPLES} requests: {dict(sorted(seen.items()))}")
    print(f"hostile statuses: {dict(sorted(statuses.items()))}")
