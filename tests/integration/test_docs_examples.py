"""The examples of docs/analysts.md run as written on the demo corpus (DOC-1).

A fenced block right after a ``<!-- run: shell -->`` or ``<!-- run: python -->`` line
is an example that must run: the demo corpus (``graphsvc seed``: subject ``demo``) is
loaded into the test session's Neo4j, shell blocks run in bash in a scratch folder
with the ``graphsvc`` of this interpreter's environment on ``PATH``, and python blocks
run in that folder, one after another, in one namespace (later blocks read the files
earlier ones wrote). pandas is not a dependency (the ``analysts`` extra installs it);
a block that imports it is skipped only when pandas is absent, and says so.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from graphsvc.seed import load_seed
from graphsvc.service import Service
from graphsvc.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
_BLOCK = re.compile(r"^<!-- run: (shell|python) -->\n```[a-z]*\n(.*?)^```", re.M | re.S)


def examples(path: Path) -> list[tuple[str, str]]:
    """(kind, code) of each marked block of ``path``, in order."""
    return [(m.group(1), m.group(2)) for m in _BLOCK.finditer(path.read_text())]


@pytest.mark.req("DOC-1", "API-4")
def test_analysts_examples_run_on_the_demo_corpus(
    service: Service, test_settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocks = examples(ROOT / "docs" / "analysts.md")
    assert [k for k, _ in blocks] == ["shell", "python", "python"], blocks
    load_seed(service)  # subject "demo", as `graphsvc seed` loads it (repeats are no-ops)
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "GRAPHSVC_NEO4J_URI": test_settings.neo4j.uri,
        "GRAPHSVC_NEO4J_USER": test_settings.neo4j.user,
        "GRAPHSVC_NEO4J_PASSWORD": test_settings.neo4j.password,
        "GRAPHSVC_NEO4J_DATABASE": test_settings.neo4j.database,
        "GRAPHSVC_STATE_DIR": str(tmp_path / "state"),
    }
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {}
    skipped: list[str] = []
    for kind, code in blocks:
        if kind == "shell":
            run = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", code],
                cwd=tmp_path,
                env=env,
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
            assert run.returncode == 0, (code, run.stderr[-2000:])
            continue
        if "import pandas" in code and importlib.util.find_spec("pandas") is None:
            skipped.append("pandas block (pandas absent: pip install 'graphsvc[analysts]')")
            continue
        exec(compile(code, "docs/analysts.md", "exec"), namespace)
    for name in ("demo.graphml", "demo.json", "demo-csv/nodes.csv", "demo.graphml.gz"):
        assert (tmp_path / name).stat().st_size > 0, name
    # What the networkx block computed is what the page says it shows.
    assert type(namespace["simple"]).__name__ == "DiGraph"
    assert len(namespace["communities"]) > 5
    if skipped:
        print("skipped:", *skipped, sep="\n  ")


_GRAPHQL_EXAMPLE = re.compile(
    r"```graphql\n(query (\w+)(?:(?!```).)*?)^```\n\nVariables \(demo corpus\): `(\{.*?\})`",
    re.M | re.S,
)


@pytest.mark.req("DOC-1", "API-6")
def test_graphql_examples_with_demo_variables_answer_on_the_demo_corpus(
    service: Service, live_server: Any
) -> None:
    """Each example of docs/graphql.md whose variables the page gives for the demo
    corpus answers something on it, over HTTP, with a demo human's token."""
    import json

    from graphsvc.core.binding import Binding

    found = _GRAPHQL_EXAMPLE.findall((ROOT / "docs" / "graphql.md").read_text())
    assert {name for _, name, _ in found} == {"SearchWalk", "WhoCitesSource"}, found
    load_seed(service)
    token = live_server.token_for(Binding("demo", "default", "human", "docs"))
    for query, name, variables in found:
        body = live_server.gql(query, json.loads(variables), token=token)
        assert "errors" not in body, (name, body)
        data = body["data"]
        if name == "SearchWalk":
            hits = data["search"]["hits"]
            assert hits and "idempotency keys" in hits[0]["revision"]["text"], hits[:1]
            assert any(
                e["node"]["target"] and e["node"]["target"]["__typename"] == "Revision"
                for h in hits
                for e in h["revision"]["links"]["edges"]
            )
        else:
            assert data["source"] is not None, (name, data)
            assert data["source"]["citedBy"]["edges"], data
