"""``graphsvc search`` as a real process against the test session's Neo4j (API-4).

The command module is driven through a tiny argparse of its own, so these tests
do not depend on how the main parser wires the data commands. One test runs it as
a separate process (the human output and exit code); the JSON shape is checked
in-process, which reuses the loaded embedding model.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from graphsvc.cli import search
from graphsvc.core.binding import Binding
from graphsvc.core.write_models import AtomView
from graphsvc.inputs.models import parse_changes
from graphsvc.service import Service
from graphsvc.settings import Settings

_HARNESS = (
    "import argparse, sys\n"
    "from graphsvc.cli import search\n"
    "from graphsvc.settings import Settings\n"
    "p = argparse.ArgumentParser(prog='graphsvc')\n"
    "sub = p.add_subparsers(dest='command', required=True)\n"
    "search.register(sub)\n"
    "a = p.parse_args(sys.argv[1:])\n"
    "sys.exit(a.handler(a, Settings.from_env()))\n"
)

_LONG = (
    "The zorblax lattice\nwas annealed three times at the foundry before anyone "
    "noticed that its colour shifted from grey to violet under load."
)


def _graphsvc_search(
    settings: Settings, state: Path, *args: str
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "GRAPHSVC_NEO4J_URI": settings.neo4j.uri,
        "GRAPHSVC_NEO4J_USER": settings.neo4j.user,
        "GRAPHSVC_NEO4J_PASSWORD": settings.neo4j.password,
        "GRAPHSVC_NEO4J_DATABASE": settings.neo4j.database,
        "GRAPHSVC_STATE_DIR": str(state),
    }
    return subprocess.run(
        [sys.executable, "-c", _HARNESS, "search", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="graphsvc")
    search.register(p.add_subparsers(dest="command", required=True))
    return p


def _write_pair(service: Service, binding: Binding) -> dict[str, AtomView]:
    """A long two-line atom that links to a short one (which gains by propagation)."""
    out = service.write(
        binding,
        parse_changes(
            [
                {
                    "id": "long",
                    "op": "create",
                    "content": {
                        "text": _LONG,
                        "links": [{"role": "see-also", "target": {"local": "other"}}],
                    },
                    "sources": [],
                },
                {
                    "id": "other",
                    "op": "create",
                    "content": {"text": "Owls hunt mice at night.", "links": []},
                    "sources": [],
                },
            ]
        ),
    )
    views: dict[str, AtomView] = out.changes
    return views


@pytest.mark.req("API-7", "API-4")
def test_search_process_prints_one_line_per_hit(
    service: Service, human: Binding, test_settings: Settings, tmp_path: Path
) -> None:
    views = _write_pair(service, human)
    run = _graphsvc_search(
        test_settings, tmp_path, "zorblax lattice", "--subject", human.subject, "--limit", "1"
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert len(lines) == 1
    score, ref, preview = lines[0].split("  ", 2)
    assert 0.0 < float(score) <= 1.0
    assert ref == f"{views['long'].atom_id}@{views['long'].rev}"
    # One line per hit: the newline inside the body is folded, then cut at 80.
    assert preview == " ".join(_LONG.split())[:80]
    assert "more: --cursor gcu1." in run.stderr


@pytest.mark.req("API-4")
def test_search_command_json_is_the_whole_result(
    service: Service,
    human: Binding,
    test_settings: Settings,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    views = _write_pair(service, human)
    settings = test_settings.with_(state_dir=tmp_path)
    args = _parser().parse_args(
        ["search", "zorblax lattice", "--subject", human.subject, "--depth", "1", "--json"]
    )
    assert args.handler(args, settings) == 0
    payload = json.loads(capsys.readouterr().out)
    hits = {h["atom"]["atomId"]: h for h in payload["hits"]}
    assert payload["hits"][0]["atom"]["atomId"] == views["long"].atom_id
    assert payload["hits"][0]["atom"]["text"] == _LONG
    assert payload["hits"][0]["scoreBreakdown"]["lexical"] == 1.0
    assert hits[views["other"].atom_id]["scoreBreakdown"]["propagatedShare"] > 0.0
    assert payload["diagnostics"]["evaluation"]["depth"] == 1
    assert payload["cursor"] is None
    assert sum(h["score"] for h in payload["hits"]) == pytest.approx(1.0)

    args = _parser().parse_args(
        ["search", "zorblax lattice", "--subject", human.subject, "--depth", "0", "--json"]
    )
    assert args.handler(args, settings) == 0
    shallow = json.loads(capsys.readouterr().out)
    assert shallow["diagnostics"]["evaluation"]["depth"] == 0
    assert shallow["hits"][0]["atom"]["atomId"] == views["long"].atom_id
