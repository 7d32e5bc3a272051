"""The CLI on the real Neo4j: NOT_FOUND exits 2 from every command that looks an atom
up, printed once in the one error format (docs/cli.md); commands that never embed
never load the embedding model (the composition root's lazy embedder)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from graphsvc.cli import main
from graphsvc.core.binding import Binding
from graphsvc.inputs.models import parse_changes
from graphsvc.service import Service
from graphsvc.settings import Settings


@pytest.fixture()
def cli_settings(
    test_settings: Settings, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Settings:
    for name, value in {
        "GRAPHSVC_NEO4J_URI": test_settings.neo4j.uri,
        "GRAPHSVC_NEO4J_USER": test_settings.neo4j.user,
        "GRAPHSVC_NEO4J_PASSWORD": test_settings.neo4j.password,
        "GRAPHSVC_NEO4J_DATABASE": test_settings.neo4j.database,
        "GRAPHSVC_STATE_DIR": str(tmp_path),
        "GRAPHSVC_KEY_FILE": test_settings.paths.key_file,
        "GRAPHSVC_SECRET_FILE": test_settings.paths.secret_file,
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


_NO_MODEL = """
import json, sys
from graphsvc.cli import main
codes = [main(argv) for argv in json.loads(sys.argv[1])]
print(json.dumps({"codes": codes, "torch": "torch" in sys.modules,
                  "sentence_transformers": "sentence_transformers" in sys.modules}))
"""


@pytest.mark.req("API-4")
def test_inspect_export_and_purge_never_load_the_embedding_model(
    cli_settings: Settings, service: Service, human: Binding, tmp_path: Path
) -> None:
    change = {"id": "a", "op": "create", "content": {"text": "lazy", "links": []}, "sources": []}
    atom_id = service.write(human, parse_changes([change])).changes["a"].atom_id
    flags = ["--subject", human.subject, "--json"]
    commands = [
        ["inspect", atom_id, *flags],
        ["export", "--format", "node-link", "-o", str(tmp_path / "g.json"), *flags],
        ["purge", atom_id, *flags],
    ]
    proc = subprocess.run(
        [sys.executable, "-c", _NO_MODEL, json.dumps(commands)],
        env=dict(os.environ),  # cli_settings set GRAPHSVC_* for the test Neo4j
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.splitlines()[-1])
    assert report == {"codes": [0, 0, 0], "torch": False, "sentence_transformers": False}
    assert json.loads((tmp_path / "g.json").read_text())["nodes"][0]["id"] == atom_id
