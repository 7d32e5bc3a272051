"""``graphsvc compact``: rebuild the managed Neo4j's store so purged bytes leave the disk.

**Why.** ``purge`` deletes records, but Neo4j marks deleted records unused and
leaves their bytes in the store files until the space is reused; the
transaction logs keep every committed change until they are pruned; Lucene keeps
deleted documents in a segment until a merge rewrites it. The measured details
are in docs/erasure.md.

**How.** The managed Neo4j is stopped and started again read-only on a private
loopback port (no client reaches it); a second, empty instance is started; every
live node and relationship is copied into it (``graphsvc.store.graph_copy``);
the schema is created there, so every index is populated from live data only;
then both stop, the new database folder and transaction-log folder replace the
old ones, the old ones are overwritten with zeros and unlinked, and the managed
Neo4j is started again if it was running. The system database (users) is kept.

**Crash safety.** The swap is two renames per folder, journalled in
``compact-swap.json`` in the instance home; while the journal exists the launcher
refuses to start (Neo4j would create an empty database), and the next
``graphsvc compact`` finishes the swap before anything else. A failure before the
swap keeps the old store untouched and starts it again.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from graphsvc.errors import CompactError
from graphsvc.localdb import Instance, LocalNeo4j
from graphsvc.localdb.launcher import SWAP_JOURNAL, start_all, stop_all
from graphsvc.settings import Settings
from graphsvc.store.compact import create_schema, index_states
from graphsvc.store.connection import Database
from graphsvc.store.embedding_model import recorded_dimension
from graphsvc.store.graph_copy import copy_graph
from graphsvc.store.meta import mark_compacted

__all__ = ["CompactReport", "compact", "data_bytes", "shred_tree"]


@dataclass(frozen=True)
class CompactReport:
    """What a compact did: the records copied, the purges whose bytes it removed, the
    data folder's size before and after, what was shredded, and how long each phase
    and Neo4j's downtime took (seconds)."""

    nodes: int
    relationships: int
    erased_purges: int
    bytes_before: int
    bytes_after: int
    shredded_files: int
    shredded_bytes: int
    copy_seconds: float
    index_seconds: float
    swap_seconds: float
    shred_seconds: float
    downtime_seconds: float
    # The live instance was running before, so it was started again.
    restarted: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "nodes": self.nodes,
            "relationships": self.relationships,
            "erasedPurges": self.erased_purges,
            "bytesBefore": self.bytes_before,
            "bytesAfter": self.bytes_after,
            "shreddedFiles": self.shredded_files,
            "shreddedBytes": self.shredded_bytes,
            "copySeconds": self.copy_seconds,
            "indexSeconds": self.index_seconds,
            "swapSeconds": self.swap_seconds,
            "shredSeconds": self.shred_seconds,
            "downtimeSeconds": self.downtime_seconds,
            "restarted": self.restarted,
        }


Progress = Callable[[str], None]
# Opens a Database on an instance compaction started (the read-only source and the
# empty target): the root's graphsvc.runtime.instance_database.
Connect = Callable[[Instance], Database]
_ZEROS = bytes(1024 * 1024)


def compact(
    settings: Settings,
    *,
    connect: Connect,
    name: str = "serve",
    batch: int = 2000,
    index_timeout_s: float = 3600.0,
    progress: Progress | None = None,
    clock: Callable[[], float] = time.time,
) -> CompactReport:
    """Rebuild the store of the managed instance ``name`` from its live records.

    Returns:
        What was copied, erased and shredded, and the seconds it took.

    Raises:
        CompactError: no managed Neo4j (GRAPHSVC_NEO4J_URI is set), no database
            yet, a copy that does not match, or indexes that do not come online.
        LauncherError: an instance could not start.
        StoreError: Neo4j failed during the copy.
    """
    say = progress or (lambda _msg: None)
    if not settings.neo4j.managed:
        raise CompactError(
            "graphsvc compact rebuilds the managed Neo4j only; for a Neo4j you run "
            "(GRAPHSVC_NEO4J_URI), see docs/erasure.md"
        )
    live, target, auth = _instances(settings, name, say)
    leftovers = _finish_interrupted(live, target, say)
    database = settings.neo4j.database
    if not (live.home / "data" / "databases" / database).is_dir():
        raise CompactError(f"the managed Neo4j '{name}' has no database {database!r} yet")
    was_running = live.status() is not None
    before = data_bytes(live.home)
    t_down = time.monotonic()
    live.stop()
    source = LocalNeo4j(
        settings,
        name=name,
        port=0,
        auth=auth,
        progress=say,
        extra_conf=(f"server.databases.read_only={database}",),
    )
    try:
        phases, copied, erased = _build_copy(
            connect, source, target, batch, index_timeout_s, clock, say
        )
    except BaseException:
        stop_all([source, target])
        shred_tree(target.home)
        if was_running:
            live.start()
        raise
    t = time.monotonic()
    trash = _swap(live, target, database, clock, say)
    swap_s = round(time.monotonic() - t, 3)
    t = time.monotonic()
    files, size = shred_tree(trash)
    more_files, more_size = shred_tree(target.home)
    shred_s = round(time.monotonic() - t, 3)
    if was_running:
        live.start()
    downtime = time.monotonic() - t_down
    say(f"graphsvc: compact: done; {files} old store files overwritten and removed")
    return CompactReport(
        nodes=copied["nodes"],
        relationships=copied["relationships"],
        erased_purges=erased,
        bytes_before=before,
        bytes_after=data_bytes(live.home),
        shredded_files=files + more_files + leftovers[0],
        shredded_bytes=size + more_size + leftovers[1],
        copy_seconds=phases["copySeconds"],
        index_seconds=phases["indexSeconds"],
        swap_seconds=swap_s,
        shred_seconds=shred_s,
        downtime_seconds=round(downtime, 3),
        restarted=was_running,
    )


def _instances(settings: Settings, name: str, say: Progress) -> tuple[LocalNeo4j, LocalNeo4j, bool]:
    """The live instance (as it was configured, on the port it had: the launcher
    rewrites neo4j.conf at each start), the empty target, and whether auth is on."""
    live = LocalNeo4j(settings, name=name, progress=say)
    auth = _auth_enabled(live)
    running = live.status()
    port = running.port if running is not None else None
    live = LocalNeo4j(settings, name=name, port=port, auth=auth, progress=say)
    target = LocalNeo4j(settings, name=f"{name}-compact", port=0, auth=False, progress=say)
    return live, target, auth


def _build_copy(
    connect: Connect,
    source: LocalNeo4j,
    target: LocalNeo4j,
    batch: int,
    index_timeout_s: float,
    clock: Callable[[], float],
    say: Progress,
) -> tuple[dict[str, float], dict[str, Any], int]:
    shred_tree(target.home)  # a copy left by a failed run is never reused
    src, tgt = start_all([source, target], die_with_parent=True)
    src_db = connect(src)
    tgt_db = connect(tgt)
    try:
        say("graphsvc: compact: copying live records into a new store...")
        copied = copy_graph(src_db, tgt_db, batch=batch, progress=say)
        t = time.monotonic()
        create_schema(tgt_db, recorded_dimension(src_db))
        _await_indexes(tgt_db, time.monotonic() + index_timeout_s, say)
        index_s = time.monotonic() - t
        now = datetime.fromtimestamp(clock(), UTC).isoformat()
        erased = mark_compacted(tgt_db, now)
    finally:
        src_db.close()
        tgt_db.close()
    stop_all([source, target])
    phases = {"copySeconds": copied.pop("seconds"), "indexSeconds": round(index_s, 3)}
    return phases, copied, erased


def _await_indexes(db: Database, deadline: float, say: Progress) -> None:
    shown: dict[str, int] = {}
    while True:
        states = index_states(db)
        failed = [s["name"] for s in states if s["state"] == "FAILED"]
        if failed:
            raise CompactError(
                "indexes failed in the new store; the old store is kept",
                details={"failed": failed},
            )
        waiting = [s for s in states if s["state"] != "ONLINE"]
        if not waiting:
            return
        for s in waiting:
            tenth = int(float(s["populationPercent"] or 0.0)) // 10
            if tenth > shown.get(s["name"], -1):
                shown[s["name"]] = tenth
                say(f"graphsvc: compact: index {s['name']}: {tenth * 10}% populated")
        if time.monotonic() >= deadline:
            raise CompactError(
                "indexes of the new store did not come online in time; the old store is kept",
                details={"waiting": [s["name"] for s in waiting]},
            )
        time.sleep(0.5)


def _swap(
    live: LocalNeo4j, target: LocalNeo4j, database: str, clock: Callable[[], float], say: Progress
) -> Path:
    stamp = datetime.fromtimestamp(clock(), UTC).strftime("%Y%m%dT%H%M%S")
    trash = live.home / f"erased-{stamp}"
    journal = live.home / SWAP_JOURNAL
    journal.write_text(json.dumps({"trash": str(trash), "new": str(target.home)}))
    say("graphsvc: compact: swapping in the new store...")
    _do_swap(live, target, database, trash)
    journal.unlink()
    return trash


def _do_swap(live: LocalNeo4j, target: LocalNeo4j, database: str, trash: Path) -> None:
    """Renames only, each one skipped when already done (so a rerun finishes a swap)."""
    for part in ("databases", "transactions"):
        current = live.home / "data" / part / database
        old = trash / part / database
        new = target.home / "data" / part / database
        old.parent.mkdir(parents=True, exist_ok=True)
        if current.exists() and not old.exists():
            os.replace(current, old)
        if new.exists() and not current.exists():
            current.parent.mkdir(parents=True, exist_ok=True)
            os.replace(new, current)
        if not current.exists():
            raise CompactError(f"the new {part} folder is missing; the old one is in {old}")


def _finish_interrupted(live: LocalNeo4j, target: LocalNeo4j, say: Progress) -> tuple[int, int]:
    """Finish a swap a crash interrupted; shred what an earlier run left behind."""
    journal = live.home / SWAP_JOURNAL
    files = size = 0
    if journal.exists():
        say("graphsvc: compact: finishing the swap an earlier run began...")
        doc = json.loads(journal.read_text())
        database = live.settings.neo4j.database
        _do_swap(live, target, database, Path(doc["trash"]))
        journal.unlink()
    for old in sorted(live.home.glob("erased-*")) if live.home.is_dir() else []:
        f, s = shred_tree(old)
        files, size = files + f, size + s
    if live.status() is None and target.status() is None:
        f, s = shred_tree(target.home)
        files, size = files + f, size + s
    return files, size


def _auth_enabled(live: LocalNeo4j) -> bool:
    conf = live.home / "conf" / "neo4j.conf"
    if conf.exists():
        return "dbms.security.auth_enabled=true" in conf.read_text()
    return live.auth


def data_bytes(home: Path) -> int:
    """Bytes of every file under ``home/data`` (the store, logs of transactions, indexes)."""
    root = home / "data"
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) if root.is_dir() else 0


def shred_tree(root: Path) -> tuple[int, int]:
    """Overwrite every file under ``root`` with zeros, fsync, unlink; then remove the folders.

    Returns ``(files, bytes)``. On a journalling or copy-on-write file system or
    an SSD the old blocks may survive an overwrite; docs/erasure.md says what an
    operator does about that.
    """
    if not root.exists():
        return 0, 0
    files = size = 0
    for path in sorted(root.rglob("*"), reverse=True):
        if path.is_symlink() or path.is_file():
            if path.is_file() and not path.is_symlink():
                size += _overwrite(path)
            path.unlink()
            files += 1
        elif path.is_dir():
            path.rmdir()
    root.rmdir()
    return files, size


def _overwrite(path: Path) -> int:
    length = path.stat().st_size
    with path.open("r+b", buffering=0) as fh:
        left = length
        while left > 0:
            left -= fh.write(_ZEROS[: min(left, len(_ZEROS))])
        os.fsync(fh.fileno())
    return length
