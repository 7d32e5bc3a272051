"""Frozen evaluations are stored after the answer, several per transaction: whatever
queued while a save committed is stored by the next one (group commit), and every
cursor's evaluation is there afterwards (CUR-1)."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest
from neo4j import RoutingControl
from write_support import new, write

from graphsvc.core.binding import Binding
from graphsvc.core.frozen_payload import decode_payload
from graphsvc.core.mac import open_sealed
from graphsvc.core.requests import SearchRequest
from graphsvc.ops.cursors import FrozenEvaluation, _save_queue, _wait_saving
from graphsvc.service import Service
from graphsvc.store.connection import Database
from graphsvc.store.cursors import load_evaluation


def _transactions() -> float:
    from graphsvc.telemetry.metrics import REGISTRY

    value = REGISTRY.get_sample_value(
        "graphsvc_neo4j_query_duration_seconds_count", {"query": "cursor/save_evaluations"}
    )
    return value or 0.0


@pytest.mark.req("CUR-1")
def test_evaluations_queued_during_a_save_are_stored_in_one_transaction(db: Database) -> None:
    subject = f"t-saves-{uuid.uuid4().hex[:8]}"
    queue = _save_queue(db)
    now = time.time()
    frozen = [
        FrozenEvaluation(subject, uuid.uuid4().hex, {"order": [i], "n": i}, now + 300, now)
        for i in range(10)
    ]
    with queue.lock:  # a save is committing: nothing new starts a drain
        queue.draining = True
    futures = [queue.put(f) for f in frozen]
    assert not any(f.done() for f in futures)
    before = _transactions()
    queue._drain()  # what the committing save's thread does next
    assert _transactions() == before + 1
    assert all(f.result(timeout=0) is None for f in futures)
    for f in frozen:
        stored = load_evaluation(db, subject, f.eval_id)
        assert stored is not None and decode_payload(stored) == f.payload
    assert queue.draining is False and queue.pending == []


@pytest.mark.req("CUR-1")
def test_concurrent_searches_each_get_a_cursor_that_opens(service: Service) -> None:
    binding = Binding(f"t-saves-{uuid.uuid4().hex[:8]}", "default", "human", "alice")
    write(
        service, binding, [new(f"c{i}", f"harbour note number {i} about boats") for i in range(12)]
    )
    from concurrent.futures import ThreadPoolExecutor

    def first_page(i: int) -> tuple[str, list[str]]:
        result = service.search(binding, SearchRequest(f"harbour boats {i}", limit=3))
        assert result.cursor is not None
        return result.cursor, [h.atom.atom_id for h in result.hits]

    with ThreadPoolExecutor(8) as pool:
        pages = list(pool.map(first_page, range(16)))
    for i, (cursor, first) in enumerate(pages):
        nxt = service.search(binding, SearchRequest(f"harbour boats {i}", limit=3, cursor=cursor))
        assert len(nxt.hits) == 3 and not set(first) & {h.atom.atom_id for h in nxt.hits}


@pytest.mark.req("CUR-1")
def test_a_searchs_stored_evaluation_is_kept_by_column_and_reads_back_as_ranked(
    service: Service,
) -> None:
    """What a real search stores is the columnar form, and it decodes to the ranking
    the first page was cut from (floats bit for bit, unscored semantics as None)."""
    binding = Binding(f"t-saves-{uuid.uuid4().hex[:8]}", "default", "human", "alice")
    write(service, binding, [new(f"c{i}", f"lighthouse log {i} about fog") for i in range(9)])
    result = service.search(binding, SearchRequest("lighthouse fog", limit=4))
    assert result.cursor is not None
    eval_id = str(open_sealed(service.secret, "cursor", result.cursor)["e"])
    _wait_saving(eval_id)
    stored = load_evaluation(service.db, binding.subject, eval_id)
    assert isinstance(stored, (bytes, bytearray)) and bytes(stored).startswith(b"GSC1")
    ranked = decode_payload(stored)["ranked"]
    assert [(r["atomId"], r["score"], r["breakdown"]) for r in ranked[:4]] == [
        (h.atom.atom_id, h.score, h.breakdown) for h in result.hits
    ]


_NO_CURSOR = """query($q: String!) {
  search(query: $q, limit: 2) { hits { atom { atomId } } }
  read(query: $q, memoryTokenBudget: 60, limit: 1) { text }
}"""
_CURSOR_IN_A_FRAGMENT = """query($q: String!, $c: String) {
  search(query: $q, limit: 2, cursor: $c) { hits { atom { atomId } } ...Paging }
}
fragment Paging on SearchResult { cursor }"""


def _stored(service: Service, subject: str) -> int:
    rows, _, _ = service.db.driver.execute_query(
        "MATCH (e:Evaluation {subject: $s}) RETURN count(e) AS n",
        {"s": subject},
        database_=service.db.database,
        routing_=RoutingControl.READ,
    )
    return int(rows[0]["n"])


@pytest.mark.req("CUR-1")
def test_a_page_whose_operation_selects_no_cursor_stores_no_evaluation(
    service: Service, live_server: Any
) -> None:
    """Over HTTP: a search or read that does not select `cursor` can never ask for a
    next page, so nothing is stored for one; selected (here through a fragment), the
    cursor is given and its next page opens."""
    binding = Binding(f"t-saves-{uuid.uuid4().hex[:8]}", "default", "human", "alice")
    write(service, binding, [new(f"c{i}", f"tide table {i} for the harbour") for i in range(9)])
    token = live_server.token_for(binding)
    body = live_server.gql(_NO_CURSOR, {"q": "tide harbour"}, token=token)
    assert "errors" not in body and len(body["data"]["search"]["hits"]) == 2, body
    paged = live_server.gql(_CURSOR_IN_A_FRAGMENT, {"q": "tide harbour"}, token=token)
    cursor = paged["data"]["search"]["cursor"]
    assert isinstance(cursor, str)
    later = live_server.gql(_CURSOR_IN_A_FRAGMENT, {"q": "tide harbour", "c": cursor}, token=token)
    assert "errors" not in later, later
    first = {h["atom"]["atomId"] for h in paged["data"]["search"]["hits"]}
    assert first.isdisjoint(h["atom"]["atomId"] for h in later["data"]["search"]["hits"])
    assert _stored(service, binding.subject) == 1  # the paged search's only
