"""Copy every live node and relationship of one Neo4j database into another.

What ``graphsvc compact`` builds its new store with (docs/erasure.md). Neo4j
Community has no ``neo4j-admin database copy`` (it is an Enterprise command), so
this is the same idea done through Bolt: the source is read, the target gets
only what the source answers, i.e. live records. Deleted records, old
transactions and index segments of the source never reach the target.

Labels, relationship types and property maps travel as query parameters
(``CREATE (n:$(labels))``, Neo4j 5.26), so every value keeps its Cypher type
(strings, numbers, lists such as embeddings, temporal values).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

from graphsvc.errors import CompactError
from graphsvc.store.connection import Database, _mapped
from graphsvc.store.queries import query

__all__ = ["copy_graph", "counts", "index_states"]

Progress = Callable[[str], None]


def counts(db: Database) -> dict[str, int]:
    """``{"nodes", "relationships"}`` of ``db``."""
    row = db.read("compact/counts")[0]
    return {"nodes": int(row["nodes"]), "relationships": int(row["relationships"])}


def index_states(db: Database) -> list[dict[str, Any]]:
    """``[{name, state, populationPercent}]`` of every index of ``db``."""
    return db.read("compact/index_states")


def copy_graph(
    source: Database, target: Database, *, batch: int = 2000, progress: Progress | None = None
) -> dict[str, Any]:
    """Copy all nodes, then all relationships, from ``source`` into (empty) ``target``.

    Returns:
        ``{"nodes", "relationships", "seconds"}`` as copied.

    Raises:
        CompactError: the target's counts differ from the source's afterwards.
        StoreError: either database failed.
    """
    say = progress or (lambda _msg: None)
    t0 = time.monotonic()
    expected = counts(source)
    new_id: dict[int, int] = {}
    done = 0
    for rows in _batches(source, "compact/read_nodes", batch):
        for row in target.write("compact/create_nodes", rows=rows):
            new_id[row["old"]] = row["new"]
        done += len(rows)
        _say_share(say, "nodes", done, expected["nodes"], len(rows), batch)
    rels = 0
    for rows in _batches(source, "compact/read_relationships", batch):
        mapped = [
            {"s": new_id[r["s"]], "t": new_id[r["t"]], "type": r["type"], "props": r["props"]}
            for r in rows
        ]
        rels += int(target.write("compact/create_relationships", rows=mapped)[0]["created"])
        _say_share(say, "relationships", rels, expected["relationships"], len(rows), batch)
    got = counts(target)
    if got != expected:
        raise CompactError(
            "the copy does not hold what the source holds; the old store is kept",
            details={"source": expected, "copy": got},
        )
    return {**got, "seconds": round(time.monotonic() - t0, 3)}


def _batches(db: Database, name: str, size: int) -> Iterator[list[dict[str, Any]]]:
    """The rows of one read query, streamed (never all in memory), in lists of ``size``."""
    with (
        _mapped(name),
        db.driver.session(database=db.database, default_access_mode="READ", fetch_size=size) as s,
    ):
        result = s.run(query(name))
        keys = result.keys()
        rows: list[dict[str, Any]] = []
        for record in result:
            rows.append(dict(zip(keys, record, strict=True)))
            if len(rows) == size:
                yield rows
                rows = []
        if rows:
            yield rows


def _say_share(say: Progress, what: str, done: int, total: int, last: int, batch: int) -> None:
    step = max(batch, total // 10)
    if done == total or done // step != (done - last) // step:
        say(f"graphsvc: compact: {done}/{total} {what} copied")
