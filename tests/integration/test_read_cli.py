"""``graphsvc read`` as a real subprocess against the session Neo4j (API-4).

The command is mounted on a tiny argparse parser through its own ``register``, the
way ``graphsvc.cli.commands`` mounts it, so the test does not depend on the wiring of
the other commands.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from graphsvc.core.binding import Binding
from graphsvc.inputs.models import parse_changes
from graphsvc.service import Service
from graphsvc.settings import Settings
from graphsvc.tokenizer import count_tokens

RUNNER = """
import argparse, sys
from graphsvc.cli.read import register
from graphsvc.errors import GraphsvcError
from graphsvc.settings import Settings

parser = argparse.ArgumentParser(prog="graphsvc")
register(parser.add_subparsers(dest="command", required=True))
args = parser.parse_args(sys.argv[1:])
try:
    sys.exit(args.handler(args, Settings.from_env()))
except GraphsvcError as exc:
    print(f"graphsvc: {exc.code}: {exc.message}", file=sys.stderr)
    sys.exit(2)
"""


def _run_cli(settings: Settings, state: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "GRAPHSVC_NEO4J_URI": settings.neo4j.uri,
        "GRAPHSVC_NEO4J_USER": settings.neo4j.user,
        "GRAPHSVC_NEO4J_PASSWORD": settings.neo4j.password,
        "GRAPHSVC_STATE_DIR": str(state),
    }
    return subprocess.run(
        [sys.executable, "-c", RUNNER, *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


@pytest.mark.req("API-4", "RD-5", "RD-8")
def test_read_cli_prints_text_json_and_errors(
    service: Service, human: Binding, test_settings: Settings, tmp_path: Path
) -> None:
    changes: list[dict[str, Any]] = [
        {
            "id": "a",
            "op": "create",
            "content": {
                "text": "Lichens are a symbiosis of fungi and algae.",
                "links": [{"role": "needs", "target": {"local": "b", "required": True}}],
            },
            "sources": [],
        },
        {
            "id": "b",
            "op": "create",
            "content": {"text": "Algae photosynthesise inside the lichen.", "links": []},
            "sources": [],
        },
    ]
    views = service.write(human, parse_changes(changes)).changes
    base = ["read", "lichen symbiosis", "--subject", human.subject]

    human_out = _run_cli(test_settings, tmp_path, *base, "--budget", "300", "--limit", "1")
    assert human_out.returncode == 0, human_out.stderr
    doc = json.loads(human_out.stdout)  # stdout is the model-facing text alone
    assert doc["formatVersion"] == 2
    refs = [v["ref"] for v in doc["memory"]]
    assert refs == [f"{views['a'].atom_id}@1", f"{views['b'].atom_id}@1"]
    assert count_tokens(human_out.stdout.rstrip("\n")) <= 300
    summary = [ln for ln in human_out.stderr.splitlines() if ln.startswith("read:")]
    assert len(summary) == 1
    assert "2 presented" in summary[0] and "/300 tokens" in summary[0]

    json_out = _run_cli(test_settings, tmp_path, *base, "--json", "--budget", "30", "--depth", "0")
    assert json_out.returncode == 0, json_out.stderr
    payload = json.loads(json_out.stdout)
    assert {"text", "formatVersion", "items", "selection", "manifest", "diagnostics"} <= set(
        payload
    )
    assert payload["selection"]["budget"] == 30
    assert count_tokens(payload["text"]) == payload["selection"]["tokens"] <= 30
    assert payload["manifest"]["contractVersion"] == 2
    assert payload["diagnostics"]["evaluation"]["depth"] == 0

    # Out-of-range values the parser can see are refused before anything loads.
    bad = _run_cli(test_settings, tmp_path, *base, "--budget", "-1")
    assert bad.returncode == 2
    assert "--budget" in bad.stderr and "negative" in bad.stderr
