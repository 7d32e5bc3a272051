"""The design's layout: cypher/ and seed/ beside graphsvc/, installed inside it.

pyproject.toml names every package (setuptools cannot find a package whose folder
lives outside its parent's); these tests fail when a package folder is added without
its entry, when the mapping of the two top-level folders changes, or when the image
build would leave them out; and every third-party package graphsvc imports is one
of its declared dependencies (not only something another dependency happens to bring).
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from importlib.resources import files
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]


@pytest.mark.req("DOC-1")
def test_every_package_folder_is_named_in_pyproject() -> None:
    on_disk = {
        ".".join(p.parent.relative_to(ROOT).parts)
        for p in (ROOT / "graphsvc").rglob("__init__.py")
        if "__pycache__" not in p.parts
    }
    mapped = set(SETUPTOOLS["package-dir"])
    assert set(SETUPTOOLS["packages"]) == on_disk | mapped


@pytest.mark.req("DOC-1")
def test_queries_and_corpora_live_beside_the_package_and_load_as_its_data() -> None:
    assert SETUPTOOLS["package-dir"] == {"graphsvc.cypher": "cypher", "graphsvc.seed_data": "seed"}
    assert not (ROOT / "graphsvc" / "cypher").exists()
    assert not (ROOT / "graphsvc" / "seed_data").exists()
    queries = sorted((ROOT / "cypher").rglob("*.cypher"))
    assert queries, "no query files under cypher/"
    # The installed package's data is the repository's folder (editable install).
    sample = queries[0].relative_to(ROOT / "cypher")
    node = files("graphsvc.cypher").joinpath(*sample.parts)
    assert node.read_text(encoding="utf-8") == queries[0].read_text(encoding="utf-8")
    assert files("graphsvc.seed_data").joinpath("demo.json").is_file()
    data = SETUPTOOLS["package-data"]
    assert data["graphsvc.cypher"] == ["*/*.cypher"] and data["graphsvc.seed_data"] == ["*.json"]


@pytest.mark.req("DOC-1")
def test_the_image_copies_both_folders() -> None:
    steps = (ROOT / "Dockerfile").read_text(encoding="utf-8").splitlines()
    assert "COPY cypher ./cypher" in steps and "COPY seed ./seed" in steps


def _imported_top_levels() -> set[str]:
    names: set[str] = set()
    for path in (ROOT / "graphsvc").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    # _typeshed exists only for type checkers (imported under TYPE_CHECKING).
    return {n for n in names if n not in sys.stdlib_module_names} - {"graphsvc", "_typeshed"}


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_every_imported_package_is_a_declared_dependency() -> None:
    declared = {
        _normal(re.split(r"[<>=!~\[ ;]", d)[0]) for d in PYPROJECT["project"]["dependencies"]
    }
    owners = packages_distributions()
    undeclared = {
        module: owners.get(module, [])
        for module in _imported_top_levels()
        if not any(_normal(d) in declared for d in owners.get(module, []))
    }
    assert undeclared == {}, f"imported but not in [project] dependencies: {undeclared}"
