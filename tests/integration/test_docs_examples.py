"""The examples of the user docs run as written on the demo corpus (DOC-1).

A fenced block right after a ``<!-- run: KIND -->`` line is an example that must run,
on the demo corpus (``graphsvc seed``: subject ``demo``) loaded once per module into
the test session's Neo4j:

- ``shell`` (docs/analysts.md): the block runs in bash in a scratch folder with the
  ``graphsvc`` of this interpreter's environment on ``PATH``;
- ``python`` (docs/analysts.md): run in that folder, one after another, in one
  namespace (later blocks read the files earlier ones wrote). pandas is not a
  dependency (the ``analysts`` extra installs it); a block that imports it is skipped
  only when pandas is absent, and says so;
- ``console`` (docs/cli.md): ``$ COMMAND`` lines, each run by bash as its own real
  ``graphsvc`` process (one scratch folder for the file, so later commands read what
  earlier ones wrote; ``NAME=$(…)`` keeps its output for the later lines as ``$NAME``);
  the exit code is 0 or the line's ``# exits N``, and each line shown under a command
  appears in what it printed (stdout or stderr; ``…`` matches anything).

docs/graphql.md's queries whose variables the page gives for the demo corpus run over
HTTP; docs/explorer.md's addresses (GraphiQL, ``/explore``, ``/lineage``'s redirect)
and its ``{ health }`` answer over HTTP, and the ``window.graphsvcExplorer`` /
``window.graphsvcTime`` functions it names exist in the page
(``tests/integration/test_browser_time.py``, which has the page open already).

Left unmarked, with the reason:

- docs/cli.md's ``graphsvc serve`` lines (``serve.json``, the ``export
  GRAPHSVC_SERVER_URL=…`` hint): they need a long-running server
  (``tests/integration/test_cli_discovery.py`` covers them);
- ``serve``, ``mcp``, ``neo4j start|stop``, ``jobs run`` (long-running processes) and
  ``purge``, ``compact``, ``reembed``, ``index rebuild``, ``atomise`` (operator
  commands that erase, rebuild or re-embed the shared database) have no example
  block: their own tests run them;
- docs/explorer.md's gestures and panels are what a person does in the page
  (``tests/integration/test_browser.py`` and ``test_browser_session.py`` drive them).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from cli_support import direct_env

from graphsvc.core.binding import Binding
from graphsvc.seed import load_seed
from graphsvc.service import Service
from graphsvc.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
_BLOCK = re.compile(r"^<!-- run: (shell|python|console) -->\n```[a-z]*\n(.*?)^```", re.M | re.S)
_EXITS = re.compile(r"\s#\s*exits (\d+)\s*$")
_ASSIGN = re.compile(r"^([A-Z_][A-Z0-9_]*)=\$\((.*)\)$")


def examples(path: Path) -> list[tuple[str, str]]:
    """(kind, code) of each marked block of ``path``, in order."""
    return [(m.group(1), m.group(2)) for m in _BLOCK.finditer(path.read_text())]


@dataclass
class Step:
    """One ``$ COMMAND`` line of a console block and what the page says it does."""

    command: str
    exits: int = 0
    shown: list[str] = field(default_factory=list)


def console_steps(block: str) -> list[Step]:
    """The commands of a ``console`` block, each with its exit code and shown lines."""
    steps: list[Step] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            exits = _EXITS.search(line)
            steps.append(Step(line[2:].strip(), int(exits.group(1)) if exits else 0))
        elif line.strip():
            assert steps, f"output before any command: {line!r}"
            steps[-1].shown.append(line)
    return steps


def shown_in(shown: str, printed: str) -> bool:
    """Whether a line the page shows is a line of ``printed`` (``…``: anything)."""
    pattern = ".*?".join(re.escape(piece) for piece in shown.split("…"))
    return any(re.fullmatch(pattern, line.rstrip()) for line in printed.splitlines())


@dataclass
class Demo:
    """The seeded demo corpus and how a ``graphsvc`` process reaches it."""

    env: dict[str, str]
    folder: Path


@pytest.fixture(scope="module")
def demo(
    service: Service, test_settings: Settings, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Demo]:
    """The demo corpus loaded once for the module, as `graphsvc seed` loads it
    (repeats are no-ops), and the environment of a CLI process that opens it."""
    load_seed(service)
    folder = tmp_path_factory.mktemp("docs-examples")
    env = {
        **os.environ,
        **direct_env(test_settings, folder / "state"),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    yield Demo(env=env, folder=folder)


def _bash(command: str, demo: Demo, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-o", "pipefail", "-c", command],
        cwd=demo.folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.mark.req("DOC-1", "API-4")
def test_analysts_examples_run_on_the_demo_corpus(
    demo: Demo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocks = examples(ROOT / "docs" / "analysts.md")
    assert [k for k, _ in blocks] == ["shell", "python", "python"], blocks
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {}
    skipped: list[str] = []
    for kind, code in blocks:
        if kind == "shell":
            run = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", code],
                cwd=tmp_path,
                env=demo.env,
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


@pytest.mark.req("DOC-1", "API-4")
def test_cli_examples_run_as_shown_on_the_demo_corpus(demo: Demo) -> None:
    """Every ``$ graphsvc …`` line of docs/cli.md's examples is a real CLI process
    that exits as the page says and prints the lines the page shows."""
    blocks = examples(ROOT / "docs" / "cli.md")
    assert blocks and {k for k, _ in blocks} == {"console"}, blocks
    steps = [step for _, code in blocks for step in console_steps(code)]
    commands = {shlex.split(s.command)[0] for s in steps if not _ASSIGN.match(s.command)}
    assert "graphsvc" in commands, steps
    ran = {s.command.split()[1] for s in steps if s.command.startswith("graphsvc ")}
    assert {"search", "inspect", "read", "write", "import", "changes", "export", "jobs"} <= ran
    env = dict(demo.env)
    for step in steps:
        assign = _ASSIGN.match(step.command)
        run = _bash(assign.group(2) if assign else step.command, demo, env)
        printed = run.stdout + run.stderr
        report = f"$ {step.command}\nexit {run.returncode}\n{printed[-3000:]}"
        assert run.returncode == step.exits, report
        if assign:
            env[assign.group(1)] = run.stdout.strip()
            assert env[assign.group(1)], report
        for line in step.shown:
            assert shown_in(line, printed), f"not printed: {line!r}\n{report}"
    # What the redirections wrote is the document the page says they write.
    assert json.loads((demo.folder / "hits.json").read_text())["hits"]
    assert (demo.folder / "memory.txt").read_text().strip()
    assert "<graphml" in (demo.folder / "march.graphml").read_text()[:2000]


_GRAPHQL_EXAMPLE = re.compile(
    r"```graphql\n(query (\w+)(?:(?!```).)*?)^```\n\nVariables \(demo corpus\): `(\{.*?\})`",
    re.M | re.S,
)


@pytest.mark.req("DOC-1", "API-6")
def test_graphql_examples_with_demo_variables_answer_on_the_demo_corpus(
    demo: Demo, live_server: Any
) -> None:
    """Each example of docs/graphql.md whose variables the page gives for the demo
    corpus answers something on it, over HTTP, with a demo human's token."""
    found = _GRAPHQL_EXAMPLE.findall((ROOT / "docs" / "graphql.md").read_text())
    assert {name for _, name, _ in found} == {"SearchWalk", "WhoCitesSource"}, found
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


@pytest.mark.req("DOC-1", "API-5")
def test_explorer_addresses_answer_as_the_page_says(demo: Demo, live_server: Any) -> None:
    """docs/explorer.md's addresses: GraphiQL and the explorer are pages, ``{ health }``
    needs no token, and ``/lineage?atom=`` redirects (307) to the explorer."""
    text = (ROOT / "docs" / "explorer.md").read_text()
    pages = re.findall(r"<http://127\.0\.0\.1:8000(/\w+)>", text)
    assert pages == ["/graphql", "/explore"], pages
    for page in pages:
        r = httpx.get(live_server.url + page, headers={"Accept": "text/html"}, timeout=30)
        assert r.status_code == 200 and "<html" in r.text.lower()[:500], (page, r.status_code)
    assert "starts with `{ health }` (no token\nneeded)" in text
    body = live_server.gql("{ health }")
    assert "errors" not in body and body["data"], body
    redirect = re.search(r"`(/lineage\?atom=<atomId>)` redirects \((\d+)\) to\n`([^`]+)`", text)
    assert redirect, "the /lineage sentence moved"
    token = live_server.token_for(Binding("demo", "default", "human", "docs"))
    hit = live_server.gql(
        'query { search(query: "retry storm", limit: 1) { hits { atom { atomId } } } }',
        token=token,
    )
    atom = hit["data"]["search"]["hits"][0]["atom"]["atomId"]  # type: ignore[index]
    r = httpx.get(
        live_server.url + redirect.group(1).replace("<atomId>", atom),
        follow_redirects=False,
        timeout=30,
    )
    assert r.status_code == int(redirect.group(2)), r.status_code
    assert r.headers["location"] == redirect.group(3).replace("<atomId>", atom)
    explore = httpx.get(f"{live_server.url}/explore?atom={atom}", timeout=30)
    assert explore.status_code == 200
