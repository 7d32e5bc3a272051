"""Builders and direct-Neo4j probes shared by the write-contract tests.

Changes are built as the caller's JSON (what GraphQL/CLI hand to
``parse_changes``), so every test goes through the same edge validation as a
real caller. Probes read Neo4j directly, never through the service, so a test
can check what is stored independently of the views the service returns.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pytest
from neo4j import RoutingControl

from graphsvc.core.binding import Binding
from graphsvc.errors import GraphsvcError
from graphsvc.inputs.models import parse_changes, parse_host_input
from graphsvc.ops.write import WriteOutcome
from graphsvc.process_state.head_mirrors import forget_mirrors
from graphsvc.service import Service
from graphsvc.settings import Settings
from graphsvc.store.connection import Database

__all__ = [
    "cypher",
    "digest_of",
    "expect_error",
    "frozen_clock",
    "new",
    "observe",
    "own_database",
    "race",
    "ref",
    "retire",
    "revise",
    "subject_counts",
    "write",
]


def ref(view_or_id: Any, rev: int | None = None) -> dict[str, Any]:
    """An AtomRef JSON from a view (``.atom_id``/``.rev``) or an id and rev."""
    if rev is None:
        return {"atomId": view_or_id.atom_id, "rev": view_or_id.rev}
    return {"atomId": view_or_id, "rev": rev}


def new(
    cid: str,
    text: str,
    links: Sequence[dict[str, Any]] = (),
    sources: Sequence[dict[str, Any]] = (),
    token: str | None = None,
) -> dict[str, Any]:
    change: dict[str, Any] = {
        "id": cid,
        "op": "create",
        "content": {"text": text, "links": list(links)},
        "sources": list(sources),
    }
    if token is not None:
        change["input"] = token
    return change


def revise(
    cid: str,
    target: dict[str, Any],
    text: str,
    links: Sequence[dict[str, Any]] = (),
    sources: Sequence[dict[str, Any]] = (),
    token: str | None = None,
) -> dict[str, Any]:
    change = new(cid, text, links, sources, token)
    change["op"] = "revise"
    change["target"] = target
    return change


def retire(cid: str, target: dict[str, Any], token: str | None = None) -> dict[str, Any]:
    change: dict[str, Any] = {"id": cid, "op": "retire", "target": target}
    if token is not None:
        change["input"] = token
    return change


def write(service: Service, binding: Binding, changes: Any, key: str | None = None) -> WriteOutcome:
    """Parse the caller's JSON at the edge, then write, like a resolver does."""
    outcome: WriteOutcome = service.write(binding, parse_changes(changes), key)
    return outcome


def digest_of(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def observe(service: Service, binding: Binding, **host_input: Any) -> str:
    """Issue an InputToken; ``payloadDigest`` defaults to a fixed digest."""
    host_input.setdefault("payloadDigest", digest_of("payload"))
    return service.observe(binding, parse_host_input(host_input))


@contextmanager
def expect_error(code: str, *, names: str | None = None) -> Iterator[list[GraphsvcError]]:
    """Expect a GraphsvcError with ``code``; ``names`` must appear in its message."""
    caught: list[GraphsvcError] = []
    with pytest.raises(GraphsvcError) as info:
        yield caught
    caught.append(info.value)
    assert info.value.code == code, f"{info.value.code}: {info.value.message}"
    if names is not None:
        assert names in info.value.message, info.value.message


def cypher(db: Database, text: str, **params: Any) -> list[dict[str, Any]]:
    """Run Cypher directly on the test database (probes and fault simulation)."""
    records, _, _ = db.driver.execute_query(
        text, params, database_=db.database, routing_=RoutingControl.WRITE
    )
    forget_mirrors(db)  # a direct edit moves no generation the mirrors follow
    return [r.data() for r in records]


def own_database(settings: Settings) -> Database:
    """A Database of its own on the test Neo4j (its own pool and process facts), as
    another serving process has."""
    return Database(
        settings.neo4j.uri, settings.neo4j.user, settings.neo4j.password, settings.neo4j.database
    )


def subject_counts(db: Database, subject: str) -> tuple[int, int]:
    """(nodes, relationships) that belong to ``subject`` — the whole stored footprint,
    but for MCP sessions (SPEC §17: a session's window, not data; opening one is no
    write of the subject's knowledge)."""
    row = cypher(
        db,
        "MATCH (n) WHERE n.subject = $subject AND NOT n:McpSession "
        "OPTIONAL MATCH (n)-[r]-() "
        "RETURN count(DISTINCT n) AS nodes, count(DISTINCT r) AS rels",
        subject=subject,
    )[0]
    return int(row["nodes"]), int(row["rels"])


def race(n: int, work: Callable[[int], Any]) -> list[Any]:
    """Run ``work(i)`` in ``n`` threads released together; results or GraphsvcErrors."""
    barrier = threading.Barrier(n)
    results: list[Any] = [None] * n

    def run(i: int) -> None:
        barrier.wait()
        try:
            results[i] = work(i)
        except GraphsvcError as exc:
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


@contextmanager
def frozen_clock(service: Service) -> Iterator[list[float]]:
    """Freeze ``service.clock`` at ``now[0]``; the test moves time by assigning it."""
    original = service.clock
    now = [time.time()]
    service.clock = lambda: now[0]
    try:
        yield now
    finally:
        service.clock = original
