"""``graphsvc write`` as a subprocess against the session's Neo4j (API-4).

A call that reaches the database loads the embedding model in its own process
(seconds), so only one does; malformed input is refused before any connection
is made and is cheap to test. Errors after connecting leave through the same
``graphsvc.cli.main`` path as these.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from write_support import cypher, subject_counts, write

from graphsvc.core.binding import Binding
from graphsvc.service import Service
from graphsvc.settings import Settings
from graphsvc.store.connection import Database


def _cli(
    settings: Settings, tmp_path: Path, *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "GRAPHSVC_NEO4J_URI": settings.neo4j.uri,
        "GRAPHSVC_NEO4J_USER": settings.neo4j.user,
        "GRAPHSVC_NEO4J_PASSWORD": settings.neo4j.password,
        "GRAPHSVC_NEO4J_DATABASE": settings.neo4j.database,
        "GRAPHSVC_STATE_DIR": str(tmp_path / "state"),
    }
    env.pop("GRAPHSVC_SECRET_FILE", None)
    return subprocess.run(
        [sys.executable, "-m", "graphsvc", "write", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def _create(cid: str, text: str, links: list[Any], sources: list[Any] | None = None) -> Any:
    change: dict[str, Any] = {"id": cid, "op": "create", "content": {"text": text, "links": links}}
    if sources is not None:
        change["sources"] = sources
    return change


def _changes() -> list[dict[str, Any]]:
    cite = {"uri": "https://example.org/cli", "version": "1"}
    b = _create("b", "second", [{"role": "back", "target": {"local": "a", "at": "logical"}}], [])
    b["op"] = "CREATE"
    return [_create("a", "from the CLI", [{"role": "next", "target": {"local": "b"}}], [cite]), b]


_NO_SOURCES = json.dumps([_create("a", "x", [])])
_NO_TOKEN = json.dumps([_create("a", "x", [], [])])
_TOO_MANY = json.dumps([_create(f"c{i}", "x", [], []) for i in range(300)])


@pytest.mark.req("API-4", "WR-8", "IDEM-2")
def test_cli_writes_a_batch_and_replays_it_by_key(
    test_settings: Settings, db: Database, service: Service, human: Binding, tmp_path: Path
) -> None:
    batch = tmp_path / "batch.json"
    batch.write_text(json.dumps(_changes()))
    first = _cli(
        test_settings,
        tmp_path,
        str(batch),
        "--subject",
        human.subject,
        "--actor-id",
        "ops",
        "--idempotency-key",
        "cli-1",
        "--json",
    )
    assert first.returncode == 0, first.stderr
    out = json.loads(first.stdout)
    assert out["repeated"] is False and out["indexing"] == "complete"
    a, b = out["changes"]["a"], out["changes"]["b"]
    assert a["links"][0]["target"] == {"atomId": b["atomId"], "rev": 1}
    assert b["links"][0]["at"] == "logical" and a["sources"][0]["uri"] == "https://example.org/cli"
    stored = cypher(
        db,
        "MATCH (r:Revision {subject: $s}) RETURN r.atomId AS id, r.text AS text, "
        "r.actorKind AS kind, r.actorId AS actor ORDER BY text",
        s=human.subject,
    )
    assert stored == [
        {"id": a["atomId"], "text": "from the CLI", "kind": "human", "actor": "ops"},
        {"id": b["atomId"], "text": "second", "kind": "human", "actor": "ops"},
    ]
    footprint = subject_counts(db, human.subject)
    # The key the CLI used is the service's key: the same plan (keys reordered)
    # from the same binding is replayed, not committed again.
    cli_binding = Binding(human.subject, "default", "human", "ops")
    again = write(
        service, cli_binding, [dict(reversed(list(c.items()))) for c in _changes()], "cli-1"
    )
    assert again.repeated is True and again.operation_id == out["operationId"]
    assert {k: v.atom_id for k, v in again.changes.items()} == {"a": a["atomId"], "b": b["atomId"]}
    assert subject_counts(db, human.subject) == footprint


@pytest.mark.req("API-4", "WR-7", "TOK-2")
@pytest.mark.parametrize(
    ("stdin", "extra", "code"),
    [
        ("not json", [], "INVALID_INPUT"),
        ('{"changes": 5}', [], "INVALID_INPUT"),
        (_NO_SOURCES, [], "INVALID_INPUT"),
        ("[]", [], "INVALID_INPUT"),
        (_NO_TOKEN, ["--actor-kind", "agent"], "TOKEN_INVALID"),
        (_TOO_MANY, [], "BUDGET_EXCEEDED"),
    ],
)
def test_cli_refuses_bad_input_before_connecting(
    test_settings: Settings, human: Binding, tmp_path: Path, stdin: str, extra: list[str], code: str
) -> None:
    unreachable = test_settings.with_(neo4j_uri="bolt://127.0.0.1:9")
    result = _cli(
        unreachable, tmp_path, "-", "--subject", human.subject, "--json", *extra, stdin=stdin
    )
    assert result.returncode == 8, result  # REFUSED (docs/cli.md)
    assert json.loads(result.stdout)["error"] == code


@pytest.mark.req("API-4")
def test_cli_missing_file_is_invalid_input(
    test_settings: Settings, human: Binding, tmp_path: Path
) -> None:
    result = _cli(
        test_settings, tmp_path, str(tmp_path / "absent.json"), "--subject", human.subject
    )
    assert result.returncode == 8
    assert "INVALID_INPUT" in result.stderr and "absent.json" in result.stderr
