"""The exit-code table on the real Neo4j: NOT_FOUND exits 2 from every command that
looks an atom up, printed once in the one error format (docs/cli.md)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from graphsvc.cli import main
from graphsvc.settings import Settings


@pytest.fixture()
def cli_settings(
    test_settings: Settings, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Settings:
    for name, value in {
        "GRAPHSVC_NEO4J_URI": test_settings.neo4j_uri,
        "GRAPHSVC_NEO4J_USER": test_settings.neo4j_user,
        "GRAPHSVC_NEO4J_PASSWORD": test_settings.neo4j_password,
        "GRAPHSVC_NEO4J_DATABASE": test_settings.neo4j_database,
        "GRAPHSVC_STATE_DIR": str(tmp_path),
        "GRAPHSVC_KEY_FILE": test_settings.key_file,
        "GRAPHSVC_SECRET_FILE": test_settings.secret_file,
        "GRAPHSVC_CURATOR": "rule",
    }.items():
        monkeypatch.setenv(name, value)
    return test_settings


@pytest.mark.req("API-4", "ATM-8")
def test_not_found_exits_2_from_every_command_that_looks_an_atom_up(
    cli_settings: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    subject = f"t-{uuid.uuid4().hex[:12]}"
    missing = f"{subject}-never-written"
    bundle = str(tmp_path / "b.bundle")
    for argv in (
        ["inspect", missing],
        ["purge", missing],
        ["atomise", missing],
        ["export-forensic-bundle", "--memory-id", missing, "-o", bundle],
    ):
        assert main([*argv, "--subject", subject, "--json"]) == 2, argv
        out, err = capsys.readouterr()
        doc = json.loads(out)
        assert (doc["error"], doc["exitCode"]) == ("NOT_FOUND", 2), argv
        assert "NOT_FOUND" not in err, argv
        assert main([*argv, "--subject", subject]) == 2, argv
        out, err = capsys.readouterr()
        assert out == "" and err.count("graphsvc: NOT_FOUND: ") == 1, (argv, err)
    assert not Path(bundle).exists()
