"""The HTTP path of ``search``, ``read`` and ``inspect`` (docs/cli.md, "A running
server"), up to the request: which server and token, refusals before anything is sent,
the translation of answers back into the direct path's JSON, and the error codes.
The answers of a real server: tests/integration/test_cli_http.py."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from graphsvc.cli import main
from graphsvc.cli.remote import _error, atom_json, server_for
from graphsvc.core.write_models import AtomLinkView, AtomRef, AtomView
from graphsvc.errors import CursorInvalidError, GraphsvcError, InvalidInputError
from graphsvc.settings import Settings

NOWHERE = "http://127.0.0.1:9"


def _args(**over: object) -> argparse.Namespace:
    base: dict[str, object] = {
        "server": None,
        "subject": "s1",
        "policy": "default",
        "actor_kind": "human",
        "actor_id": "cli",
        "json": True,
    }
    return argparse.Namespace(**{**base, **over})


def _auth(tmp_path: Path, tokens: dict[str, dict[str, object]]) -> Path:
    path = tmp_path / "auth.json"
    path.write_text(json.dumps({"tokens": tokens}))
    return path


def test_no_url_is_the_direct_path_and_the_flag_overrides_the_setting(tmp_path: Path) -> None:
    settings = Settings().with_(state_dir=tmp_path, server_url=NOWHERE, server_token="t")
    assert server_for(_args(), Settings().with_(state_dir=tmp_path)) is None
    assert server_for(_args(server=""), settings) is None
    server = server_for(_args(), settings)
    assert server is not None and server.endpoint == NOWHERE + "/graphql"
    other = server_for(_args(server="http://10.0.0.1:8000/graphql"), settings)
    assert other is not None and other.endpoint == "http://10.0.0.1:8000/graphql"
    with pytest.raises(InvalidInputError):
        server_for(_args(server="ftp://x"), settings)
    with pytest.raises(InvalidInputError):
        Settings.from_env({"GRAPHSVC_SERVER_URL": "127.0.0.1:8000"})


def test_the_token_is_the_auth_files_entry_for_the_binding_flags(tmp_path: Path) -> None:
    auth = _auth(
        tmp_path,
        {
            "other-subject": {"subject": "s2", "actor": {"kind": "human", "id": "cli"}},
            "agent": {"subject": "s1", "actor": {"kind": "agent", "id": "cli"}},
            "human-bob": {"subject": "s1", "actor": {"kind": "human", "id": "bob"}},
            "human-cli": {"subject": "s1", "actor": {"kind": "human", "id": "cli"}},
        },
    )
    settings = Settings().with_(state_dir=tmp_path, server_url=NOWHERE, auth_file=str(auth))
    chosen = server_for(_args(), settings)
    assert chosen is not None and chosen.token == "human-cli"
    chosen = server_for(_args(actor_id="nobody"), settings)
    assert chosen is not None and chosen.token == "human-bob"
    chosen = server_for(_args(actor_kind="agent"), settings)
    assert chosen is not None and chosen.token == "agent"
    # serve's demo file, when no auth file is set.
    demo = Settings().with_(state_dir=auth.parent, server_url=NOWHERE)
    auth.rename(auth.parent / "demo-auth.json")
    chosen = server_for(_args(subject="s2"), demo)
    assert chosen is not None and chosen.token == "other-subject"


def _main(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *argv: str) -> int:
    monkeypatch.setenv("GRAPHSVC_STATE_DIR", str(tmp_path))
    monkeypatch.setenv("GRAPHSVC_NEO4J_URI", "bolt://127.0.0.1:9")
    monkeypatch.setenv("GRAPHSVC_SERVER_URL", NOWHERE)
    return main(list(argv))


def test_refusals_before_any_request(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # No entry for the flags (and no GRAPHSVC_SERVER_TOKEN): UNAUTHENTICATED, exit 8.
    rc = _main(monkeypatch, tmp_path, "search", "q", "--subject", "s1", "--json")
    doc = json.loads(capsys.readouterr().out)
    assert (rc, doc["error"], doc["exitCode"]) == (8, "UNAUTHENTICATED", 8)
    # A token the auth file gives another subject: INVALID_INPUT, exit 8.
    auth = _auth(tmp_path, {"tok": {"subject": "s2", "actor": {"kind": "human", "id": "a"}}})
    monkeypatch.setenv("GRAPHSVC_AUTH_FILE", str(auth))
    monkeypatch.setenv("GRAPHSVC_SERVER_TOKEN", "tok")
    rc = _main(monkeypatch, tmp_path, "read", "q", "--subject", "s1", "--json")
    doc = json.loads(capsys.readouterr().out)
    assert (rc, doc["error"]) == (8, "INVALID_INPUT")
    assert "'s2'" in doc["message"]


def test_a_server_that_does_not_answer_is_server_unavailable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GRAPHSVC_SERVER_TOKEN", "tok")
    rc = _main(monkeypatch, tmp_path, "inspect", "atm-1", "--subject", "s1")
    err = capsys.readouterr().err
    assert rc == 6
    assert err.startswith(f"graphsvc: SERVER_UNAVAILABLE: graphsvc serve at {NOWHERE}/graphql")


def test_the_http_path_imports_no_heavy_module(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from graphsvc.cli import main\n"
        "rc = main(sys.argv[1:])\n"
        "heavy = ('neo4j', 'tiktoken', 'numpy', 'scipy', 'torch', 'onnxruntime', 'pydantic',"
        " 'strawberry', 'httpx', 'graphsvc.service', 'graphsvc.store')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
        "sys.exit(rc)\n"
    )
    env = {
        "GRAPHSVC_STATE_DIR": str(tmp_path),
        "GRAPHSVC_SERVER_URL": NOWHERE,
        "GRAPHSVC_SERVER_TOKEN": "tok",
        "PATH": "/usr/bin:/bin",
    }
    for argv in (["search", "q"], ["read", "q", "--budget", "9"], ["inspect", "atm-1"]):
        run = subprocess.run(
            [sys.executable, "-c", code, *argv, "--subject", "s1"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert run.returncode == 6, run.stderr
        assert run.stdout.strip() == "[]", argv


def test_graphql_errors_keep_their_code() -> None:
    err = _error({"message": "bad", "extensions": {"code": "CURSOR_INVALID", "requestId": "r"}})
    assert isinstance(err, CursorInvalidError)
    assert (err.message, err.details) == ("bad", {"requestId": "r"})
    other = _error({"message": "too big", "extensions": {"code": "REQUEST_TOO_LARGE"}})
    assert type(other) is GraphsvcError
    assert other.code == "INTERNAL" and other.message == "REQUEST_TOO_LARGE: too big"


def test_a_graphql_atom_view_becomes_the_direct_paths_json() -> None:
    view = AtomView(
        atom_id="atm-1",
        rev=2,
        state="active",
        text="body",
        head=True,
        links=(
            AtomLinkView("see-also", "logical", True, "k1", AtomRef("atm-2", 1)),
            AtomLinkView("cites", "observed", False, None, None, unavailable=True),
        ),
        sources=({"uri": "https://x", "version": None},),
        atom_of="atm-0",
        atomised_into=None,
        archived_at=None,
    )
    graphql = {
        "atomId": "atm-1",
        "rev": 2,
        "state": "active",
        "text": "body",
        "head": True,
        "links": [
            {
                "role": "see-also",
                "unavailable": False,
                "required": True,
                "at": "LOGICAL",
                "orderKey": "k1",
                "target": {"atomId": "atm-2", "rev": 1},
            },
            {
                "role": "cites",
                "unavailable": True,
                "required": False,
                "at": "OBSERVED",
                "orderKey": None,
                "target": None,
            },
        ],
        "sources": [{"uri": "https://x", "version": None}],
        "atomOf": "atm-0",
        "atomisedInto": None,
        "archivedAt": None,
    }
    assert atom_json(graphql) == view.to_json()
