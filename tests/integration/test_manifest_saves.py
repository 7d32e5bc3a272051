"""Reads' manifests are saved in batches (group commit of concurrent reads), on a real
Neo4j: every manifest a read names exists when the read answers and replays; a batch
that fails writes nothing, and each of its reads then saves alone (MAN-1)."""

from __future__ import annotations

import dataclasses
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from write_support import new, write

from graphsvc.core.binding import Binding
from graphsvc.core.requests import ReadRequest
from graphsvc.core.write_models import AtomRef
from graphsvc.errors import StoreError
from graphsvc.service import Service
from graphsvc.store.connection import Database
from graphsvc.store.manifests import (
    NewManifest,
    find_manifest_replay,
    manifest_queue,
    save_manifest,
    save_manifests,
)


def _transactions() -> float:
    from graphsvc.telemetry.metrics import REGISTRY

    value = REGISTRY.get_sample_value(
        "graphsvc_neo4j_query_duration_seconds_count", {"query": "read/save_manifests"}
    )
    return value or 0.0


def _manifest(subject: str, presented: list[AtomRef], digest: str = "sha256:x") -> NewManifest:
    now = time.time()
    return NewManifest(
        subject=subject,
        manifest_id=uuid.uuid4().hex,
        digest=digest,
        now=now,
        expired_before=now - 3600,
        policy="default",
        actor_kind="human",
        actor_id="alice",
        presented=presented,
    )


def _presented(db: Database, subject: str, manifest_id: str) -> list[tuple[str, int]] | None:
    row = find_manifest_replay(db, subject, manifest_id)
    if row is None:
        return None
    return sorted((p["atomId"], int(p["rev"])) for p in row["presented"])


@pytest.fixture()
def refs(service: Service, human: Binding) -> list[AtomRef]:
    made = write(
        service,
        human,
        [new(f"h{i}", f"harbour note number {i} about boats and tides") for i in range(6)],
    ).changes
    return [AtomRef(v.atom_id, v.rev) for v in made.values()]


@pytest.mark.req("MAN-1")
def test_concurrent_reads_each_name_a_manifest_that_exists_and_replays(
    service: Service, human: Binding, refs: list[AtomRef]
) -> None:
    def one(i: int) -> tuple[str, set[str]]:
        result = service.read(human, ReadRequest(f"harbour boats tides {i}", 2000))
        revisions = result.manifest["presentation"]["revisions"]
        return result.manifest["id"], {r["atomId"] for r in revisions}

    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(one, range(24)))
    assert len({manifest_id for manifest_id, _ in answers}) == 24
    for manifest_id, presented in answers:
        replay = service.replay_manifest(human, manifest_id)
        assert replay is not None and presented
        assert {p.atom_id for p in replay.presented} == presented


@pytest.mark.req("MAN-1")
def test_manifests_queued_during_a_save_are_saved_in_one_transaction(
    db: Database, subject: str, refs: list[AtomRef]
) -> None:
    queue = manifest_queue(db)
    manifests = [_manifest(subject, refs[i : i + 2]) for i in range(5)]
    with queue.lock:  # a batch is committing: nothing new starts a drain
        queue.draining = True
    futures = [queue.put(m) for m in manifests]
    assert not any(f.done() for f in futures)
    before = _transactions()
    queue._drain()  # what the committing batch's thread does next
    assert _transactions() == before + 1
    assert all(f.result(timeout=0) is None for f in futures)
    for m in manifests:
        expected = sorted((r.atom_id, r.rev) for r in m.presented)
        assert _presented(db, subject, m.manifest_id) == expected
    assert queue.draining is False and queue.pending == []


@pytest.mark.req("MAN-1")
def test_a_failed_batch_writes_nothing_and_its_reads_save_alone(
    db: Database, subject: str, refs: list[AtomRef]
) -> None:
    # A real fault: one manifest of the batch reuses a stored manifest's id, so the
    # (subject, manifestId) constraint fails the batch's transaction.
    stored = _manifest(subject, refs[:1], digest="sha256:first")
    save_manifests(db, [stored])
    clash = dataclasses.replace(stored, digest="sha256:second", presented=refs)
    good = [_manifest(subject, refs[i : i + 3]) for i in range(4)]
    queue = manifest_queue(db)

    # The batch alone: it fails whole, none of its manifests is there.
    with queue.lock:
        queue.draining = True
    futures = [queue.put(m) for m in [*good[:2], clash, *good[2:]]]
    queue._drain()
    assert all(isinstance(f.exception(timeout=0), StoreError) for f in futures)
    assert all(_presented(db, subject, m.manifest_id) is None for m in good)
    assert _presented(db, subject, stored.manifest_id) == [(refs[0].atom_id, refs[0].rev)]

    # As reads do: each waits for its batch, which fails, then saves alone.
    with queue.lock:
        queue.draining = True
    outcomes: dict[str, BaseException | None] = {}

    def read_saves(m: NewManifest) -> None:
        try:
            save_manifest(db, m)
            outcomes[m.manifest_id + m.digest] = None
        except BaseException as exc:
            outcomes[m.manifest_id + m.digest] = exc

    threads = [threading.Thread(target=read_saves, args=(m,)) for m in [*good, clash]]
    for t in threads:
        t.start()
    while len(queue.pending) < len(threads):
        time.sleep(0.01)
    queue._drain()
    for t in threads:
        t.join(timeout=60)
    assert all(outcomes[m.manifest_id + m.digest] is None for m in good)
    assert isinstance(outcomes[clash.manifest_id + clash.digest], StoreError)
    for m in good:
        expected = sorted((r.atom_id, r.rev) for r in m.presented)
        assert _presented(db, subject, m.manifest_id) == expected
    row = find_manifest_replay(db, subject, stored.manifest_id)
    assert row is not None and row["digest"] == "sha256:first"
    assert _presented(db, subject, stored.manifest_id) == [(refs[0].atom_id, refs[0].rev)]


@pytest.mark.req("RD-8", "RD-4")
def test_a_repeated_read_counts_the_same_tokens_from_the_cache(
    service: Service, human: Binding, refs: list[AtomRef]
) -> None:
    tokenizer = service.tokenizer
    first = service.read(human, ReadRequest("harbour boats tides", 2000))
    hits = tokenizer._part.cache_info().hits
    again = service.read(human, ReadRequest("harbour boats tides", 2000))
    assert tokenizer._part.cache_info().hits > hits
    assert again.text == first.text and len(first.manifest["presentation"]["revisions"]) >= 2
    assert again.selection.tokens == first.selection.tokens == len(tokenizer.encode(first.text))
