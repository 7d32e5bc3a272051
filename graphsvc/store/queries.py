"""Cypher text loaded from ``cypher/**/*.cypher``: one query per file, named by its path.

``query("write/create_revisions")`` returns the text of
``cypher/write/create_revisions.cypher``. Queries take ``$parameters`` only; no code
formats user text into them (STYLE rule 2). Files are read once and cached.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

__all__ = ["CYPHER_DIR", "query", "schema_statements"]

CYPHER_DIR = Path(__file__).resolve().parents[2] / "cypher"


@cache
def query(name: str) -> str:
    """The Cypher text of ``cypher/<name>.cypher``.

    Raises:
        KeyError: no such query file (a programming error, not user input).
    """
    path = (CYPHER_DIR / f"{name}.cypher").resolve()
    if CYPHER_DIR not in path.parents or not path.is_file():
        raise KeyError(f"no Cypher query named {name!r}")
    return path.read_text(encoding="utf-8").strip()


def schema_statements() -> list[tuple[str, str]]:
    """``(file stem, statement)`` for every schema file, in file-name order."""
    return [
        (p.stem, p.read_text(encoding="utf-8").strip())
        for p in sorted((CYPHER_DIR / "schema").glob("*.cypher"))
    ]
