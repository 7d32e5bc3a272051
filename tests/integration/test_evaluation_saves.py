"""Frozen evaluations are stored after the answer, several per transaction: whatever
queued while a save committed is stored by the next one (group commit), and every
cursor's evaluation is there afterwards (CUR-1)."""

from __future__ import annotations

import time
import uuid

import pytest
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
