"""Architecture rules that are cheap to check and easy to break (STYLE rules 1-2)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "graphsvc" / "core"
ALLOWED_GRAPHSVC = {"graphsvc.core", "graphsvc.errors"}
FORBIDDEN_THIRD_PARTY = {"neo4j", "strawberry", "starlette", "uvicorn", "httpx", "torch"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_core_imports_no_adapter_and_no_io_library() -> None:
    offenders = []
    for path in sorted(CORE.glob("*.py")):
        for name in _imports(path):
            top = name.split(".")[0]
            if top in FORBIDDEN_THIRD_PARTY:
                offenders.append(f"{path.name}: {name}")
            if name.startswith("graphsvc") and not any(
                name == a or name.startswith(a + ".") for a in ALLOWED_GRAPHSVC
            ):
                offenders.append(f"{path.name}: {name}")
    assert offenders == []


def test_core_reads_no_clock() -> None:
    clock = re.compile(r"\b(time\.time|datetime\.now|datetime\.utcnow|time\.monotonic)\(")
    offenders = [p.name for p in CORE.glob("*.py") if clock.search(p.read_text(encoding="utf-8"))]
    assert offenders == []


def test_cypher_is_only_loaded_from_files_with_parameters() -> None:
    # No Python module outside the store builds Cypher text: .run()/execute_query()
    # get query(name) or a schema statement, never an f-string.
    offenders = []
    for path in (ROOT / "graphsvc").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"\.(run|execute_query)\(\s*f[\"']", text):
            offenders.append(f"{path.relative_to(ROOT)}:{m.start()}")
    assert offenders == []


def test_every_cypher_file_is_one_statement() -> None:
    for path in (ROOT / "graphsvc" / "cypher").rglob("*.cypher"):
        body = "\n".join(
            line for line in path.read_text().splitlines() if not line.strip().startswith("//")
        ).strip()
        assert body, path
        assert ";" not in body.rstrip(";"), f"{path} holds more than one statement"


@pytest.mark.req("CORE-3")
def test_core_and_operations_run_no_model_loop_or_scheduler() -> None:
    # CORE-3: no automatic read, model loop or scheduler in the core. Background
    # work and model calls live only in the host layer (graphsvc/atomise).
    forbidden = {"threading", "sched", "asyncio", "concurrent", "httpx", "graphsvc.atomise"}
    # The one exception: a request may run independent reads and writes of its own
    # side by side and waits for every one of them before it answers
    # (Database.soon / read_soon, awaited in ops/evaluate,
    # store/retrieval and ops/read) — nothing outlives the request.
    request_scoped = {
        ("store", "connection.py"): {"concurrent.futures"},
        ("ops", "evaluate.py"): {"concurrent.futures"},
        ("ops", "read.py"): {"concurrent.futures"},
    }
    offenders = []
    for folder in ("core", "ops", "store"):
        for path in sorted((ROOT / "graphsvc" / folder).glob("*.py")):
            allowed = request_scoped.get((folder, path.name), set())
            for name in _imports(path) - allowed:
                if any(name == f or name.startswith(f + ".") for f in forbidden):
                    offenders.append(f"{folder}/{path.name}: {name}")
    assert offenders == []
    assert not any(folder == "core" for folder, _ in request_scoped)
