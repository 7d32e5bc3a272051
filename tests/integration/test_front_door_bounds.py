"""Values from outside that no part below the edge can hold (issue 47, findings 3–5).

Real uvicorn, real Neo4j. Integers outside 64 bits (forged cursors and global ids,
JSON literals and variables, MCP arguments, import rows) and instants outside years
1–9999 once ended in ``OverflowError`` → INTERNAL; each is now a coded refusal. An
unknown id is quoted in a NOT_FOUND message only truncated.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from atomise_support import cli_env
from mcp_support import http_session

from graphsvc.cli.exit_codes import ERROR_EXITS
from graphsvc.core.binding import Binding
from graphsvc.settings import Settings

GUARD_S = 60
WIDE = [2**63, -(2**63) - 1, 10**40]
EDGES = [0, 2**63 - 1, -(2**63)]  # the range's own edges still fit


def forged(*parts: Any) -> str:
    """A cursor or global id in the service's encoding, with any parts."""
    text = json.dumps(list(parts), separators=(",", ":"))
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def gql(url: str, token: str, query: str, variables: dict[str, Any] | None = None) -> Any:
    r = httpx.post(
        f"{url}/graphql",
        json={"query": query, "variables": variables or {}},
        headers={"Authorization": f"Bearer {token}"},
        timeout=GUARD_S,
    )
    assert r.headers["content-type"].startswith("application/json"), r.text
    return r


def codes(r: Any) -> list[str]:
    return [e["extensions"]["code"] for e in r.json().get("errors") or []]


@pytest.fixture()
def written(live_server: Any, human: Binding) -> tuple[str, str]:
    """A token and one atom of the test's subject that cites a source."""
    token = live_server.token_for(human)
    write = "mutation($c: [ChangeInput!]!) { write(changes: $c) { changes { atom { atomId } } } }"
    change = {
        "id": "a",
        "op": "CREATE",
        "content": {"text": "Tides are driven by the moon.", "links": []},
        "sources": [{"uri": "https://example.org/tides"}],
    }
    r = gql(live_server.url, token, write, {"c": [change]})
    assert "errors" not in r.json(), r.text
    return token, r.json()["data"]["write"]["changes"][0]["atom"]["atomId"]


CURSOR_FIELDS = [
    ("changes", "query($a: String) { changes(after: $a) { edges { cursor } } }", ("changes",)),
    (
        "revisions",
        "query($id: ID!, $a: String) { atom(atomId: $id) { revisions(after: $a) "
        "{ edges { cursor } } } }",
        ("revisions",),
    ),
    (
        "incoming",
        "query($id: ID!, $a: String) { atom(atomId: $id) { incoming(after: $a) "
        "{ edges { cursor } } } }",
        ("incoming", "x"),
    ),
    (
        "citedBy",
        "query($id: ID!, $a: String) { atom(atomId: $id) { citedBy(after: $a) "
        "{ edges { cursor } } } }",
        ("citedBy", "x"),
    ),
    (
        "links",
        "query($id: ID!, $a: String) { atom(atomId: $id) { head { links(after: $a) "
        "{ edges { cursor } } } } }",
        ("links",),
    ),
]


@pytest.mark.req("API-3")
@pytest.mark.parametrize("name, query, head", CURSOR_FIELDS, ids=[c[0] for c in CURSOR_FIELDS])
@pytest.mark.parametrize("wide", WIDE)
def test_a_forged_cursor_past_64_bits_is_invalid_input(
    live_server: Any,
    written: tuple[str, str],
    name: str,
    query: str,
    head: tuple[str, ...],
    wide: int,
) -> None:
    token, atom_id = written
    variables = {"a": forged("c", *head, wide)}
    if "$id" in query:
        variables["id"] = atom_id
    r = gql(live_server.url, token, query, variables)
    assert r.status_code == 200
    assert codes(r) == ["INVALID_INPUT"], r.text
    assert "not a cursor" in r.json()["errors"][0]["message"]
    # The same cursor at the range's edge is one the connection reads (no error).
    variables["a"] = forged("c", *head, EDGES[1])
    assert codes(gql(live_server.url, token, query, variables)) == [], name


@pytest.mark.req("API-3")
@pytest.mark.parametrize("wide", WIDE)
def test_a_forged_revision_id_past_64_bits_is_invalid_input(
    live_server: Any, written: tuple[str, str], wide: int
) -> None:
    token, atom_id = written
    for query in (
        "query($i: ID!) { node(id: $i) { id } }",
        "query($i: ID!) { nodes(ids: [$i]) { id } }",
    ):
        r = gql(live_server.url, token, query, {"i": forged("Revision", atom_id, wide)})
        assert codes(r) == ["INVALID_INPUT"], r.text
    fits = gql(
        live_server.url,
        token,
        "query($i: ID!) { node(id: $i) { id } }",
        {"i": forged("Revision", atom_id, 2**63 - 1)},
    )
    assert fits.json() == {"data": {"node": None}}  # no such revision, no error


@pytest.mark.req("API-3")
@pytest.mark.parametrize("wide", WIDE)
def test_a_wide_integer_in_a_json_argument_is_refused_at_the_door(
    live_server: Any, human: Binding, wide: int
) -> None:
    token = live_server.token_for(human)
    literal = gql(live_server.url, token, f"mutation {{ observe(input: {{n: {wide}}}) }}")
    assert literal.status_code == 200 and codes(literal) == ["INVALID_INPUT"], literal.text
    assert "data" not in literal.json()
    variable = gql(
        live_server.url,
        token,
        "mutation($v: JSON!) { observe(input: $v) }",
        {"v": {"payloadDigest": "x", "nested": [1, {"n": wide}]}},
    )
    assert codes(variable) == ["INVALID_INPUT"], variable.text
    assert (
        variable.json()["errors"][0]["extensions"]["details"]["path"] == "variables.v.nested[1].n"
    )
    # A thousand-digit literal is refused without being converted.
    huge = gql(live_server.url, token, "mutation { observe(input: {n: " + "9" * 5000 + "}) }")
    assert codes(huge) == ["INVALID_INPUT"] and len(huge.text) < 1000


@pytest.mark.req("MCP-1", "API-3")
def test_mcp_write_with_a_rev_or_a_range_past_64_bits_is_invalid_input(
    live_server: Any, human: Binding
) -> None:
    session = http_session(live_server.url, live_server.token_for(human), "http-bounds")
    try:
        for wide in (2**63, 10**30):
            link = {"role": "cites", "target": {"ref": {"atomId": "a" * 8, "rev": wide}}}
            change = {"id": "c", "op": "create", "content": {"text": "x", "links": [link]}}
            err = session.error("write", {"changes": [change]})
            assert err["code"] == "INVALID_INPUT", err
            source = {
                "uri": "https://example.org",
                "range": {"start": wide, "end": 1, "unit": "byte"},
            }
            change = {"id": "c", "op": "create", "content": {"text": "x", "links": []}}
            err = session.error("write", {"changes": [{**change, "sources": [source]}]})
            assert err["code"] == "INVALID_INPUT", err
            assert "64-bit" in err["message"]
    finally:
        session.close()


INSTANT_QUERIES = [
    "query($t: DateTime, $id: ID!) { atom(atomId: $id, asOf: $t) { atomId } }",
    "query($t: DateTime) { atoms(asOf: $t) { edges { cursor } } }",
    "query($t: DateTime, $id: ID!) { node(id: $id, asOf: $t) { id } }",
    "query($t: DateTime, $id: ID!) { nodes(ids: [$id], asOf: $t) { id } }",
    "query($t: DateTime, $id: ID!) { inspect(atomId: $id, asOf: $t) { stale } }",
    "query($t: DateTime, $id: ID!) { lineageGraph(atomId: $id, asOf: $t) { truncated } }",
    "query($t: DateTime) { changes(since: $t) { edges { cursor } } }",
    "query($t: DateTime) { changes(until: $t) { edges { cursor } } }",
    "query($t: DateTime, $id: ID!) { atom(atomId: $id) { revisions(asOf: $t) "
    "{ edges { cursor } } } }",
]


@pytest.mark.req("API-3")
@pytest.mark.parametrize("query", INSTANT_QUERIES)
@pytest.mark.parametrize(
    "instant",
    ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00", "0001-01-01T09:59:59+10:00"],
)
def test_an_instant_outside_years_1_to_9999_is_invalid_input(
    live_server: Any, written: tuple[str, str], query: str, instant: str
) -> None:
    token, atom_id = written
    variables: dict[str, Any] = {"t": instant}
    if "$id" in query:
        variables["id"] = forged("Atom", atom_id) if "node" in query else atom_id
    r = gql(live_server.url, token, query, variables)
    assert r.status_code == 200
    assert codes(r) == ["INVALID_INPUT"], r.text
    assert "representable range" in r.json()["errors"][0]["message"]
    # The first instant itself is fine (the atom did not exist yet: NOT_FOUND where a
    # field must name one).
    variables["t"] = "0001-01-01T00:00:00+00:00"
    assert set(codes(gql(live_server.url, token, query, variables))) <= {"NOT_FOUND"}, query


ECHOES = [
    "query($id: ID!) { lineage(atomId: $id) }",
    "query($id: ID!) { lineageGraph(atomId: $id) { truncated } }",
    "mutation($id: ID!) { exportForensicBundle(atomId: $id) }",
]


@pytest.mark.req("API-3")
@pytest.mark.parametrize("query", ECHOES)
def test_an_unknown_id_is_quoted_truncated_in_not_found(
    live_server: Any, human: Binding, query: str
) -> None:
    token = live_server.token_for(human)
    unknown = "z" * 1_000_000
    r = gql(live_server.url, token, query, {"id": unknown})
    assert codes(r) == ["NOT_FOUND"], r.text[:500]
    assert len(r.content) < 2_000  # was over 2 MB: the id twice
    error = r.json()["errors"][0]
    assert "z" * 64 in error["message"] and "z" * 65 not in error["message"]


@pytest.mark.req("WR-1", "API-4")
def test_import_of_a_row_past_64_bits_exits_8_without_a_traceback(
    test_settings: Settings, human: Binding, tmp_path: Path
) -> None:
    rows = [
        {"id": "m0", "text": "fine row", "links": []},
        {
            "id": "m1",
            "text": "wide rev",
            "links": [{"role": "r", "target": {"ref": {"atomId": "a", "rev": 2**63}}}],
        },
    ]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    for extra in ([], ["--json"]):
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "graphsvc",
                "import",
                str(path),
                "--subject",
                human.subject,
                *extra,
            ],
            capture_output=True,
            text=True,
            env=cli_env(test_settings, tmp_path / "state"),
            timeout=300,
            check=False,
        )
        assert run.returncode == ERROR_EXITS["INVALID_INPUT"] == 8, run.stderr
        assert "Traceback" not in run.stderr and "OverflowError" not in run.stderr
        if extra:
            doc = json.loads(run.stdout)
            assert (doc["error"], doc["row"], doc["exitCode"]) == ("INVALID_INPUT", 2, 8)
            assert "64-bit" in doc["message"]
        else:
            assert "graphsvc: INVALID_INPUT: row 2:" in run.stderr


@pytest.mark.req("API-4")
def test_cli_human_output_escapes_a_terminal_escape_in_stored_text(
    service: Any, human: Binding, test_settings: Settings, tmp_path: Path
) -> None:
    from graphsvc.inputs.models import parse_changes

    text = "title \x1b]0;owned\x07 and \x1b[2J cleared \x9b31m red"
    change = {"id": "a", "op": "create", "content": {"text": text, "links": []}, "sources": []}
    atom_id = service.write(human, parse_changes([change])).changes["a"].atom_id
    env = {**cli_env(test_settings, tmp_path / "state"), "GRAPHSVC_SERVER_URL": ""}
    base = [sys.executable, "-m", "graphsvc", "inspect", atom_id, "--subject", human.subject]
    shown = subprocess.run(base, capture_output=True, text=True, env=env, timeout=300, check=False)
    assert shown.returncode == 0, shown.stderr
    assert "\x1b" not in shown.stdout and "\x07" not in shown.stdout and "\x9b" not in shown.stdout
    assert "title \\x1b]0;owned\\x07 and \\x1b[2J cleared \\x9b31m red" in shown.stdout
    exact = subprocess.run(
        [*base, "--json"], capture_output=True, text=True, env=env, timeout=300, check=False
    )
    assert exact.returncode == 0, exact.stderr
    assert json.loads(exact.stdout)["atom"]["text"] == text


@pytest.mark.req("API-3")
@pytest.mark.parametrize(
    "document",
    [
        '{ atoms(first: "' + "z" * 1_000_000 + '") { edges { cursor } } }',  # validation
        "{ health } " + "z" * 1_000_000,  # syntax: "Unexpected Name 'zzz…'"
    ],
    ids=["literal", "syntax"],
)
def test_a_graphql_error_quotes_a_large_literal_truncated(
    live_server: Any, human: Binding, document: str
) -> None:
    r = gql(live_server.url, live_server.token_for(human), document)
    assert codes(r) == ["INVALID_INPUT"], r.text[:300]
    assert len(r.content) < 2_000  # was the literal again: over 1 MB
