"""The running ``graphsvc serve`` of the same database, found through the state dir.

``serve`` writes ``<state dir>/serve.json`` (its URL, process id and the database it
serves) while it serves and removes it when it stops. ``search``, ``read`` and
``inspect`` with no ``GRAPHSVC_SERVER_URL`` and no ``--server`` read it: when the
process is alive and serves the database this shell would open (the same
``GRAPHSVC_NEO4J_URI`` and database, or the same state dir's managed Neo4j), they ask
it over HTTP with the usual token rules (docs/cli.md, "A running server"). A record
that does not hold (stale, another database, no token for the binding flags, no
answer) sends the command to the database itself, which is always correct, only
slower.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from graphsvc.settings import Settings

__all__ = ["Found", "database_identity", "find_serve", "forget_serve", "record_serve"]

_FILE = "serve.json"


@dataclass(frozen=True)
class Found:
    """A running serve of this shell's database: where it listens, and how it was found."""

    url: str
    pid: int
    record: Path


def database_identity(settings: Settings) -> str:
    """Which database a process with these settings opens (its URI, else the managed
    Neo4j of its state dir, and the database name)."""
    where = settings.neo4j.uri or f"managed:{settings.paths.state_dir.resolve()}"
    return f"{where}|{settings.neo4j.database}"


def _record_path(settings: Settings) -> Path:
    return settings.paths.state_dir / _FILE


def record_serve(settings: Settings, url: str) -> Path:
    """Say, in the state dir, that this process serves its database at ``url``.

    Written whole (a temporary file renamed over the old one), so a reader never
    sees half a record.

    Raises:
        OSError: the state dir cannot be written.
    """
    path = _record_path(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    body = {"url": url, "pid": os.getpid(), "database": database_identity(settings)}
    tmp = path.with_name(f".{_FILE}.{os.getpid()}")
    tmp.write_text(json.dumps(body), encoding="utf-8")
    os.replace(tmp, path)
    return path


def forget_serve(settings: Settings) -> None:
    """Remove this process's record (not another serve's that replaced it)."""
    path = _record_path(settings)
    try:
        if json.loads(path.read_text(encoding="utf-8")).get("pid") == os.getpid():
            path.unlink()
    except (OSError, ValueError, AttributeError):
        return


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True


def find_serve(settings: Settings) -> Found | None:
    """The serve recorded in the state dir when it is alive and serves this database."""
    path = _record_path(settings)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(raw, dict):
        return None
    url, pid = raw.get("url"), raw.get("pid")
    if not isinstance(url, str) or not isinstance(pid, int) or pid <= 0:
        return None
    if raw.get("database") != database_identity(settings) or not _alive(pid):
        return None
    return Found(url, pid, path)
