"""Cypher text loaded from the package data ``cypher/**/*.cypher``.

One query per file, named by its path: ``query("write/create_revisions")`` returns the
text of ``cypher/write/create_revisions.cypher``. The folder sits beside ``graphsvc/``
in the repository and installs as the package ``graphsvc.cypher`` (pyproject.toml's
``package-dir``); the files are found with :mod:`importlib.resources`, never through
the repository root.
Queries take ``$parameters`` only; no code formats user text into them (STYLE rule 2).
Files are read once and cached.
"""

from __future__ import annotations

import re
from functools import cache
from importlib.resources import files
from importlib.resources.abc import Traversable

__all__ = ["cypher_root", "query", "query_names", "schema_statements"]

# A query name: lower-case path segments joined by "/" (no "..", no absolute path).
_NAME = re.compile(r"[a-z0-9_]+(?:/[a-z0-9_]+)*")
_SUFFIX = ".cypher"


def cypher_root() -> Traversable:
    """The folder of the ``graphsvc.cypher`` package (the repository's ``cypher/``)."""
    return files("graphsvc.cypher")


@cache
def query(name: str) -> str:
    """The Cypher text of ``cypher/<name>.cypher``.

    Raises:
        KeyError: no such query file (a programming error, not user input).
    """
    if not _NAME.fullmatch(name):
        raise KeyError(f"no Cypher query named {name!r}")
    *folders, stem = name.split("/")
    node = cypher_root()
    for folder in folders:
        node = node / folder
    node = node / f"{stem}{_SUFFIX}"
    if not node.is_file():
        raise KeyError(f"no Cypher query named {name!r}")
    return node.read_text(encoding="utf-8").strip()


def query_names() -> list[str]:
    """Every query name in the package (``schema/…`` included), sorted."""
    names: list[str] = []

    def walk(node: Traversable, prefix: str) -> None:
        for child in node.iterdir():
            if child.is_dir():
                walk(child, f"{prefix}{child.name}/")
            elif child.name.endswith(_SUFFIX):
                names.append(prefix + child.name[: -len(_SUFFIX)])

    walk(cypher_root(), "")
    return sorted(names)


# Schema files that have another statement on a server with in-index filtered
# vector search (Neo4j 2026.x): the vector index with the subject as filter property.
_FILTERED_VECTOR_SCHEMA = {"013_current_embedding": "index/create_vector_filtered"}


def schema_statements(*, filtered_vector: bool = False) -> list[tuple[str, str]]:
    """``(file stem, statement)`` for every schema file, in file-name order.

    ``filtered_vector``: the server filters vector searches inside the index (Neo4j
    2026.x): the vector index is created with the subject as a filter property.
    """
    schema = cypher_root() / "schema"
    found = sorted(
        (child for child in schema.iterdir() if child.is_file() and child.name.endswith(_SUFFIX)),
        key=lambda child: child.name,
    )
    out = []
    for child in found:
        stem = child.name[: -len(_SUFFIX)]
        if filtered_vector and stem in _FILTERED_VECTOR_SCHEMA:
            out.append((stem, query(_FILTERED_VECTOR_SCHEMA[stem])))
        else:
            out.append((stem, child.read_text(encoding="utf-8").strip()))
    return out
