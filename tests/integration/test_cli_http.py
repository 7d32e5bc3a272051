"""``graphsvc search`` / ``read`` / ``inspect`` through a running server (docs/cli.md,
"A running server"; issue 30).

Each command runs as a real process with ``GRAPHSVC_SERVER_URL`` pointing at the test
session's live server (real uvicorn, real Neo4j) and ``GRAPHSVC_NEO4J_URI`` at a port
where nothing listens: an answer can only have come over HTTP. The harness reports
which heavy modules the child imported; the HTTP path imports none of them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_support import direct_env, run_cli, write_kiln_and_glaze
from conftest import LiveServer

from graphsvc.cli.exit_codes import ERROR_EXITS
from graphsvc.core.binding import Binding
from graphsvc.core.requests import InspectRequest, ReadRequest, SearchRequest
from graphsvc.embed import get_embedder
from graphsvc.service import Service
from graphsvc.settings import Settings

NOWHERE = "bolt://127.0.0.1:9"


def _over_http(
    server: LiveServer, state: Path, *args: str, token: str = "", auth_file: Path | None = None
) -> tuple[int, str, str, list[str]]:
    env = {
        "GRAPHSVC_NEO4J_URI": NOWHERE,
        "GRAPHSVC_STATE_DIR": str(state),
        "GRAPHSVC_SERVER_URL": server.url,
        "GRAPHSVC_SERVER_TOKEN": token,
        "GRAPHSVC_AUTH_FILE": str(auth_file or state / "no-auth.json"),
    }
    return run_cli(env, *args)


def _direct(settings: Settings, state: Path, *args: str) -> tuple[int, str, str, list[str]]:
    return run_cli(direct_env(settings, state), *args)


@pytest.fixture(scope="module", autouse=True)
def _cached_graph() -> None:
    """The direct path's query-only encoder runs the ONNX graph the full embedder
    exports once."""
    get_embedder()


def _hits(doc: dict[str, Any]) -> list[tuple[str, int]]:
    return [(h["atom"]["atomId"], h["atom"]["rev"]) for h in doc["hits"]]


@pytest.mark.req("API-4")
def test_search_over_http_gives_the_direct_paths_hits_without_heavy_imports(
    service: Service,
    human: Binding,
    live_server: LiveServer,
    test_settings: Settings,
    tmp_path: Path,
) -> None:
    views = write_kiln_and_glaze(service, human)
    token = live_server.token_for(human)
    args = ("search", "zorblax kiln glaze", "--subject", human.subject, "--json")
    rc, out, err, heavy = _over_http(live_server, tmp_path, *args, token=token)
    assert rc == 0, err
    assert heavy == []
    remote = json.loads(out)
    # The answer is SearchResult.to_json, the form the direct path prints.
    local = service.search(human, SearchRequest("zorblax kiln glaze")).to_json()
    assert remote["hits"] == local["hits"]
    assert set(remote) == set(local)
    assert _hits(remote)[0] == (views["kiln"].atom_id, views["kiln"].rev)

    rc, out, err, heavy = _direct(test_settings, tmp_path, *args)
    assert rc == 0, err
    assert "neo4j" in heavy  # the direct path opened the database itself
    assert _hits(json.loads(out)) == _hits(remote)

    # Human output too: one line per hit, the same lines as the direct path's.
    rc, http_text, err, _ = _over_http(live_server, tmp_path, *args[:-1], token=token)
    assert rc == 0, err
    rc, direct_text, _, _ = _direct(test_settings, tmp_path, *args[:-1])
    assert [line.split()[1:] for line in http_text.splitlines()] == [
        line.split()[1:] for line in direct_text.splitlines()
    ]


@pytest.mark.req("API-4")
def test_read_and_inspect_over_http_match_the_direct_path(
    service: Service,
    human: Binding,
    live_server: LiveServer,
    test_settings: Settings,
    tmp_path: Path,
) -> None:
    views = write_kiln_and_glaze(service, human)
    kiln = views["kiln"].atom_id
    # No GRAPHSVC_SERVER_TOKEN: the token is the auth file's entry for the flags.
    token = live_server.token_for(human)
    auth = tmp_path / "auth.json"
    auth.write_text(
        json.dumps(
            {
                "tokens": {
                    "not-this-one": {"subject": "other", "actor": {"kind": "human", "id": "x"}},
                    token: {"subject": human.subject, "actor": {"kind": "human", "id": "alice"}},
                }
            }
        )
    )
    args = ("read", "zorblax kiln", "--subject", human.subject, "--budget", "800")
    rc, out, err, heavy = _over_http(live_server, tmp_path, *args, "--json", auth_file=auth)
    assert rc == 0, err
    assert heavy == []
    remote = json.loads(out)
    local = service.read(human, ReadRequest("zorblax kiln", 800)).to_json()
    assert set(remote) == set(local)
    assert remote["items"] == local["items"]
    assert remote["selection"] == local["selection"]
    assert "1280 degrees" in remote["text"]

    rc, text, summary, _ = _over_http(live_server, tmp_path, *args, auth_file=auth)
    assert rc == 0, summary
    assert "1280 degrees" in text
    assert summary.startswith("read: ") and "800 tokens" in summary

    rc, out, err, heavy = _over_http(
        live_server, tmp_path, "inspect", kiln, "--subject", human.subject, "--json", token=token
    )
    assert rc == 0, err
    assert heavy == []
    remote = json.loads(out)
    local = service.inspect(human, InspectRequest(kiln)).to_json()
    assert set(remote) == set(local)
    for key in ("atom", "neighbors", "readEligibility", "stale", "usage", "cursor"):
        assert remote[key] == local[key], key

    inspect = ("inspect", kiln, "--subject", human.subject, "--direction", "outgoing")
    rc, http_text, err, _ = _over_http(live_server, tmp_path, *inspect, token=token)
    assert rc == 0, err
    rc, direct_text, err, _ = _direct(test_settings, tmp_path, *inspect)
    assert rc == 0, err
    assert http_text == direct_text
    assert "The celadon glaze crazed on cooling." in http_text


@pytest.mark.req("API-4", "CUR-2")
def test_a_cursor_that_does_not_parse_is_cursor_invalid_over_http(
    service: Service, human: Binding, live_server: LiveServer, tmp_path: Path
) -> None:
    write_kiln_and_glaze(service, human)
    token = live_server.token_for(human)
    for command in ("search", "read"):
        rc, out, err, heavy = _over_http(
            live_server,
            tmp_path,
            command,
            "zorblax kiln",
            "--subject",
            human.subject,
            "--cursor",
            "not-a-cursor",
            "--json",
            token=token,
        )
        doc = json.loads(out)
        assert doc["error"] == "CURSOR_INVALID", (command, err)
        assert rc == doc["exitCode"] == ERROR_EXITS["CURSOR_INVALID"] == 8
        assert heavy == []


@pytest.mark.req("API-4")
def test_a_subject_without_atoms_is_warned_about_over_http(
    live_server: LiveServer, subject: str, tmp_path: Path
) -> None:
    token = live_server.token_for(Binding(subject, "default", "human", "cli"))
    rc, out, err, _ = _over_http(
        live_server, tmp_path, "search", "kiln", "--subject", subject, token=token
    )
    assert rc == 0, err
    assert f"warning: subject '{subject}' holds no atoms" in err
    assert "no hits" in err
    rc, out, err, _ = _over_http(
        live_server, tmp_path, "read", "kiln", "--subject", subject, "--json", token=token
    )
    assert rc == 0, err
    assert json.loads(out)["warnings"] == [f"subject '{subject}' holds no atoms (check --subject)"]


@pytest.mark.req("API-2", "API-4")
def test_a_wrong_token_is_unauthenticated_over_http(
    live_server: LiveServer, human: Binding, tmp_path: Path
) -> None:
    for command, arg in (("search", "kiln"), ("inspect", "atm-nothing")):
        rc, out, err, heavy = _over_http(
            live_server,
            tmp_path,
            command,
            arg,
            "--subject",
            human.subject,
            "--json",
            token="not-a-token-of-the-server",
        )
        doc = json.loads(out)
        assert doc["error"] == "UNAUTHENTICATED", (command, err)
        assert rc == doc["exitCode"] == ERROR_EXITS["UNAUTHENTICATED"] == 8
        assert heavy == []
    rc, out, err, _ = _over_http(
        live_server, tmp_path, "search", "kiln", "--subject", human.subject, token="wrong"
    )
    assert rc == 8
    assert "graphsvc: UNAUTHENTICATED: unknown API token" in err


@pytest.mark.req("API-4")
def test_an_unreachable_server_is_server_unavailable_and_never_falls_back(
    live_server: LiveServer, human: Binding, tmp_path: Path
) -> None:
    rc, out, err, heavy = _over_http(
        live_server,
        tmp_path,
        "search",
        "kiln",
        "--subject",
        human.subject,
        "--server",
        "http://127.0.0.1:9",
        "--json",
        token="t",
    )
    doc = json.loads(out)
    assert doc["error"] == "SERVER_UNAVAILABLE", err
    assert rc == doc["exitCode"] == ERROR_EXITS["SERVER_UNAVAILABLE"] == 6
    assert heavy == []
