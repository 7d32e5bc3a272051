"""``graphsvc search`` / ``read`` / ``inspect`` as real processes: no torch, and what
a new user needs to read their answers (API-4).

Each command runs through ``graphsvc.cli.main`` in a fresh interpreter against the
test session's Neo4j; the harness reports which heavy modules the process imported.
A query is embedded by the query-only ONNX encoder (graphsvc/embed/query_only.py),
so none of torch, transformers or sentence-transformers may appear.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import TORCH, direct_env, run_cli, write_kiln_and_glaze

from graphsvc.cli.exit_codes import ERROR_EXITS
from graphsvc.core.binding import Binding
from graphsvc.embed import get_embedder
from graphsvc.service import Service
from graphsvc.settings import Settings


def _graphsvc(settings: Settings, state: Path, *args: str) -> tuple[int, str, str, list[str]]:
    """The command opening the database; the PyTorch modules the child imported."""
    rc, out, err, heavy = run_cli(direct_env(settings, state), *args)
    return rc, out, err, [m for m in heavy if m in TORCH]


@pytest.fixture(scope="module", autouse=True)
def _cached_graph() -> None:
    """The query-only encoder runs the ONNX graph the full embedder exports once."""
    get_embedder()


@pytest.mark.req("API-4")
def test_search_read_and_inspect_never_import_torch(
    service: Service, human: Binding, test_settings: Settings, tmp_path: Path
) -> None:
    views = write_kiln_and_glaze(service, human)
    kiln = views["kiln"].atom_id
    rc, out, err, heavy = _graphsvc(
        test_settings, tmp_path, "search", "zorblax kiln", "--subject", human.subject, "--json"
    )
    assert rc == 0, err
    assert heavy == []
    assert json.loads(out)["hits"][0]["atom"]["atomId"] == kiln

    rc, out, err, heavy = _graphsvc(
        test_settings, tmp_path, "read", "zorblax kiln", "--subject", human.subject
    )
    assert rc == 0, err
    assert heavy == []
    assert "1280 degrees" in out

    rc, out, err, heavy = _graphsvc(
        test_settings, tmp_path, "inspect", kiln, "--subject", human.subject
    )
    assert rc == 0, err
    assert heavy == []
    # Neighbours are listed with their text, not as bare ids.
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if views["glaze"].atom_id in line)
    assert "see-also" in lines[at]
    assert lines[at + 1].strip() == "The celadon glaze crazed on cooling."


@pytest.mark.req("API-4")
def test_a_subject_without_atoms_is_warned_about(
    test_settings: Settings, tmp_path: Path, subject: str
) -> None:
    rc, out, err, _ = _graphsvc(test_settings, tmp_path, "search", "kiln", "--subject", subject)
    assert rc == 0
    assert f"warning: subject '{subject}' holds no atoms" in err
    assert "no hits" in err
    rc, out, err, _ = _graphsvc(
        test_settings, tmp_path, "read", "kiln", "--subject", subject, "--json"
    )
    assert rc == 0
    assert json.loads(out)["warnings"] == [f"subject '{subject}' holds no atoms (check --subject)"]
    assert "holds no atoms" in err


@pytest.mark.req("API-4", "CUR-2")
def test_a_cursor_that_does_not_parse_is_cursor_invalid(
    service: Service, human: Binding, test_settings: Settings, tmp_path: Path
) -> None:
    write_kiln_and_glaze(service, human)
    for command in ("search", "read"):
        rc, out, err, _ = _graphsvc(
            test_settings,
            tmp_path,
            command,
            "zorblax kiln",
            "--subject",
            human.subject,
            "--cursor",
            "not-a-cursor",
            "--json",
        )
        doc = json.loads(out)
        assert doc["error"] == "CURSOR_INVALID", (command, err)
        assert rc == doc["exitCode"] == ERROR_EXITS["CURSOR_INVALID"] == 8
