"""The package installs: a non-editable wheel holds its queries, corpora and browser assets.

The wheel is built from a copy of the sources (``pip wheel --no-deps``), installed
with ``--no-deps`` into a fresh venv whose only other path is the project venv's
site-packages (a ``.pth`` line, so the project's editable install is not activated),
and imported in an isolated interpreter (``-I``) whose working directory is outside
the repository. No Neo4j is needed: the queries and corpora are read and parsed.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PIP = [sys.executable, "-m", "pip", "-q"]

# Runs in the installed venv; prints one JSON report.
PROBE = r"""
import json, re, sys
import graphsvc
from graphsvc.store.queries import query, query_names, schema_statements
from graphsvc.seed import DEMO_CORPUS, TEAM_CORPUS, read_corpus
from graphsvc.inputs.models import parse_changes
from graphsvc.http.static_assets import STATIC_DIR, static_mount
from starlette.applications import Starlette
from starlette.testclient import TestClient

names = query_names()
texts = {name: query(name) for name in names}
demo = read_corpus(DEMO_CORPUS)
team = read_corpus(TEAM_CORPUS)
changes = parse_changes(demo["changes"])

client = TestClient(Starlette(routes=[static_mount()]))
pages = ["explore.html", "graphiql.html"]
html = "".join((STATIC_DIR / p).read_text(encoding="utf-8") for p in pages)
assets = sorted(set(re.findall(r'(?:src|href)="(/static/[^"]+)"', html)))
served = {a: client.get(a).status_code for a in assets + [f"/static/{p}" for p in pages]}

print(json.dumps({
    "file": graphsvc.__file__,
    "path": sys.path,
    "queries": len(names),
    "empty": [n for n, t in texts.items() if not t],
    "schema": len(schema_statements()),
    "demo_changes": len(changes),
    "demo_subject": demo["subject"],
    "team_batches": len(team["batches"]),
    "served": served,
}))
"""


def _copy_sources(dest: Path) -> Path:
    """The files a wheel is built from (no caches, no egg-info of the editable install)."""
    src = dest / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    # The package, and the queries and corpora beside it (installed inside it).
    for folder in ("graphsvc", "cypher", "seed"):
        shutil.copytree(
            ROOT / folder,
            src / folder,
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"),
        )
    return src


def test_a_built_wheel_installs_and_loads_every_query_and_the_demo_corpus(
    tmp_path: Path,
) -> None:
    src = _copy_sources(tmp_path)
    dist = tmp_path / "dist"
    subprocess.run(
        [*PIP, "wheel", str(src), "--no-deps", "--no-build-isolation", "-w", str(dist)],
        check=True,
        cwd=tmp_path,
    )
    (wheel,) = dist.glob("graphsvc-*.whl")

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    py = env_dir / "bin" / "python"
    purelib = Path(
        subprocess.run(
            [str(py), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    # The dependencies come from the project venv: a plain path line (no .pth
    # processing there, so its editable graphsvc finder stays off).
    (purelib / "project_deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    subprocess.run(
        [*PIP, "install", "--no-deps", "--no-index", "--target", str(purelib), str(wheel)],
        check=True,
        cwd=tmp_path,
    )

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    done = subprocess.run(
        [str(py), "-I", "-c", PROBE],
        cwd=outside,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "HF_HUB_OFFLINE": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])

    assert Path(report["file"]).is_relative_to(env_dir), report["file"]
    # The repository is not on the path: only the project venv's site-packages (the
    # dependencies; it may live inside the checkout) is.
    deps = Path(sysconfig.get_path("purelib"))
    in_repo = [p for p in report["path"] if p and Path(p).is_relative_to(ROOT) and Path(p) != deps]
    assert in_repo == [], report["path"]
    on_disk = sorted(p for p in (ROOT / "cypher").rglob("*.cypher"))
    assert report["queries"] == len(on_disk) > 0
    assert report["empty"] == []
    assert report["schema"] == len(list((ROOT / "cypher" / "schema").glob("*")))
    assert report["demo_subject"] == "demo"
    assert report["demo_changes"] == 20
    assert report["team_batches"] > 0
    served = report["served"]
    # The explorer (cytoscape + fcose, its time bar) and the offline GraphiQL page,
    # each asset.
    assert "/static/vendor/cytoscape-fcose.js" in served, served
    assert "/static/explore_time.js" in served and "/static/explore_time.css" in served, served
    assert "/static/vendor/graphiql.min.js" in served, served
    # ... and every asset the repository's pages name, the vendored extensions included.
    static = ROOT / "graphsvc" / "http" / "static"
    pages = ["explore.html", "graphiql.html"]
    html = "".join((static / page).read_text(encoding="utf-8") for page in pages)
    named = set(re.findall(r'(?:src|href)="(/static/[^"]+)"', html))
    assert "/static/vendor/cytoscape-undo-redo.js" in named
    assert set(served) == named | {f"/static/{page}" for page in pages}, served
    assert set(served.values()) == {200}, served
