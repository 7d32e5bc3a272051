"""The Neo4j of one benchmark run, shared by the benchmarks that need one.

``GRAPHSVC_NEO4J_URI`` set: that server. Otherwise a managed Neo4j is started for the
run on a free port, without auth, in a temporary state folder (its data goes with
it), and stopped by :meth:`BenchNeo4j.close`; it also dies with the benchmark's
process. Heap and page cache defaults apply only where the environment does not set
``GRAPHSVC_NEO4J_HEAP`` / ``GRAPHSVC_NEO4J_PAGECACHE``.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from graphsvc.localdb import LocalNeo4j
from graphsvc.settings import Settings
from graphsvc.store.connection import Database

__all__ = ["BenchNeo4j", "env_variants"]


class BenchNeo4j:
    """Settings (and a Database) pointing at the run's Neo4j.

    Args:
        name: names the temporary folder and the managed instance (``bench-<name>``).
        heap, pagecache: the managed Neo4j's memory unless the environment sets it.
        **overrides: further settings, by name (``state`` may be used in them
            through :attr:`state` after construction; pass paths relative to it instead).
    """

    def __init__(
        self, name: str, *, heap: str | None = None, pagecache: str | None = None, **overrides: Any
    ) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix=f"graphsvc-bench-{name}-")
        self.state = Path(self._tmp.name)
        self.local: LocalNeo4j | None = None
        self.pid: int | None = None
        base = Settings.from_env(state_dir=self.state, **overrides)
        if os.environ.get("GRAPHSVC_NEO4J_URI"):
            self.settings = base
            return
        if heap and "GRAPHSVC_NEO4J_HEAP" not in os.environ:
            base = base.with_(neo4j_heap=heap)
        if pagecache and "GRAPHSVC_NEO4J_PAGECACHE" not in os.environ:
            base = base.with_(neo4j_pagecache=pagecache)
        self.local = LocalNeo4j(base, name=f"bench-{name}", port=0, auth=False)
        try:
            inst = self.local.start(die_with_parent=True)
        except BaseException:
            self._tmp.cleanup()
            raise
        self.pid = inst.pid
        self.settings = base.with_(neo4j_uri=inst.uri)

    def database(self) -> Database:
        """A Database on the run's Neo4j with the settings' driver timeouts."""
        s = self.settings
        return Database.for_settings(s, s.neo4j.uri, s.neo4j.user, s.neo4j.password)

    def close(self) -> None:
        """Stop the managed Neo4j (if one was started) and remove the state folder."""
        if self.local is not None:
            self.local.stop()
        self._tmp.cleanup()


def child_env(neo: BenchNeo4j) -> dict[str, str]:
    """The environment of a ``graphsvc`` child process on the run's Neo4j and state folder:
    this process's, without any other ``GRAPHSVC_*`` setting."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHSVC_")}
    env.update(
        GRAPHSVC_NEO4J_URI=neo.settings.neo4j.uri,
        GRAPHSVC_NEO4J_USER=neo.settings.neo4j.user,
        GRAPHSVC_NEO4J_PASSWORD=neo.settings.neo4j.password,
        GRAPHSVC_STATE_DIR=str(neo.state),
    )
    return env


def rss_mb(pid: int | str = "self") -> float | None:
    """Resident memory of a process in MiB (``VmRSS``), None when it cannot be read."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return None


def env_variants(text: str) -> list[tuple[str, dict[str, str]]]:
    """``"K=V,K=V;K=V"`` as (variant text, {name: value}) pairs, in order (a variant
    named twice comes twice: alternating runs).

    Raises:
        ValueError: a variant that is not ``GRAPHSVC_NAME=value[,GRAPHSVC_NAME=value]``.
    """
    variants: list[tuple[str, dict[str, str]]] = []
    for part in text.split(";"):
        pairs = [kv.split("=", 1) for kv in part.split(",") if kv.strip()]
        if not pairs or any(
            len(kv) != 2 or not kv[0].strip().startswith("GRAPHSVC_") for kv in pairs
        ):
            raise ValueError(f"{part!r} is not GRAPHSVC_NAME=value[,GRAPHSVC_NAME=value]")
        variants.append((part.strip(), {k.strip(): v.strip() for k, v in pairs}))
    return variants
