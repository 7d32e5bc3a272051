"""WR-7: a batch is all or nothing even when the Neo4j connection dies mid-batch.

A TCP proxy on 127.0.0.1 sits between a separate Database (its own driver) and
the real Neo4j. Each iteration it forwards a seeded-random number of
client→server bytes of one write, then cuts every connection. In "refuse" mode
it refuses new connections for the rest of the iteration (the write fails); in
"reconnect" mode it lets the driver reconnect and retry (the write must then
succeed exactly once). Afterwards the subject holds either the whole batch or
none of it, counted directly in Neo4j.
"""

from __future__ import annotations

import random
import socket
import struct
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

import pytest
from neo4j import GraphDatabase
from write_support import cypher, new, ref, revise, subject_counts, write

from graphsvc.core.binding import Binding
from graphsvc.errors import GraphsvcError
from graphsvc.ops.write import WriteOutcome
from graphsvc.runtime import service_for
from graphsvc.service import Service
from graphsvc.settings import Settings
from graphsvc.store.connection import Database
from graphsvc.tokenizer import get_tokenizer

# A Bolt COMMIT message: chunk of 2 bytes, tiny struct 0xB0 with signature 0x12, end marker.
_BOLT_COMMIT = b"\x00\x02\xb0\x12\x00\x00"
# Text only the write transaction sends (cypher/write/create_revisions.cypher).
_WRITE_TX_MARKER = b"CREATE (a)-[:HAS_REVISION]->(n)"
SEED = 20240607
REFUSE_ITERATIONS = 50
RECONNECT_ITERATIONS = 6
TAIL_BYTES = 1500
BATCH_IDS = [*(f"c{i}" for i in range(8)), "ra", "rb"]


class CuttingProxy:
    """Forwards bytes to ``upstream``; cuts all connections after a byte budget."""

    def __init__(self, upstream_host: str, upstream_port: int) -> None:
        self._upstream = (upstream_host, upstream_port)
        self._lock = threading.Lock()
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(64)
        self.port: int = self._listener.getsockname()[1]
        self._sockets: list[socket.socket] = []
        self._budget: int | None = None
        self._refuse_after_cut = True
        self.refusing = False
        self.cut = False
        self.sent = 0
        self.upstream_addresses: set[str] = set()
        self._after_marker: bytes | None = None
        self._marker_seen = False
        self._drop_reply = False
        self._closed = False
        threading.Thread(target=self._accept_loop, daemon=True).start()

    def arm(
        self, budget: int | None, *, refuse_after_cut: bool, after_marker: bytes | None = None
    ) -> None:
        """Cut after ``budget`` client bytes, or, with ``after_marker``, when the
        server answers the first Bolt COMMIT sent after a chunk containing it
        (the server has committed; the client never hears so)."""
        with self._lock:
            self._budget = budget
            self._after_marker = after_marker
            self._marker_seen = False
            self._drop_reply = False
            self._refuse_after_cut = refuse_after_cut
            self.refusing = False
            self.cut = False
            self.sent = 0
            self.upstream_addresses = set()

    def cut_all(self) -> None:
        with self._lock:
            self._cut_locked()

    def close(self) -> None:
        self._closed = True
        self.cut_all()
        self._listener.close()

    def _cut_locked(self) -> None:
        for s in self._sockets:
            try:
                # RST, not FIN: neither side gets to read what was in flight.
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()
        self._sockets = []

    def _accept_loop(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                if self.refusing:
                    client.close()
                    continue
                try:
                    upstream = socket.create_connection(self._upstream)
                except OSError:
                    client.close()
                    continue
                host, port = upstream.getsockname()[:2]
                self.upstream_addresses.add(f"{host}:{port}")
                self._sockets += [client, upstream]
            threading.Thread(target=self._pump, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, False), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, to_server: bool) -> None:
        while True:
            try:
                data = src.recv(65536)
            except OSError:
                return
            if not data:
                return
            if not to_server and self._drop_reply:
                with self._lock:
                    self._drop_reply = False
                    self.cut = True
                    self.refusing = self._refuse_after_cut
                    self._cut_locked()
                    return
            if to_server:
                with self._lock:
                    if self._after_marker is not None:
                        self._marker_seen = self._marker_seen or self._after_marker in data
                        if self._marker_seen and data.endswith(_BOLT_COMMIT):
                            # Let COMMIT through; swallow the server's reply to it.
                            self._after_marker = None
                            self._drop_reply = True

                    if self._budget is not None:
                        allowed = self._budget - self.sent
                        if len(data) >= allowed:
                            if allowed > 0:
                                self._send(dst, data[:allowed])
                            self.sent += max(allowed, 0)
                            self.cut = True
                            self.refusing = self._refuse_after_cut
                            self._budget = None
                            self._cut_locked()
                            return
                    self.sent += len(data)
            if not self._send(dst, data):
                return

    @staticmethod
    def _send(dst: socket.socket, data: bytes) -> bool:
        try:
            dst.sendall(data)
        except OSError:
            return False
        return True


class MemoEmbedder:
    """The session's real embedder, remembering vectors of texts it has seen.

    Every iteration writes the same texts; computing them once keeps the test
    about the connection, not about the CPU time of the model.
    """

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._memo: dict[str, list[float]] = {}
        self.model_name = inner.model_name
        self.dimension = inner.dimension

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        missing = [t for t in dict.fromkeys(texts) if t not in self._memo]
        if missing:
            self._memo.update(zip(missing, self._inner.embed(missing), strict=True))
        return [self._memo[t] for t in texts]


@dataclass
class Scenario:
    service: Service
    proxy: CuttingProxy
    settings: Settings
    embedder: MemoEmbedder
    sent: int = 0


@pytest.fixture()
def scenario(service: Service, test_settings: Settings, db: Database) -> Iterator[Scenario]:
    target = urlparse(test_settings.neo4j.uri)
    proxy = CuttingProxy(target.hostname or "127.0.0.1", target.port or 7687)
    embedder = MemoEmbedder(service.embedder)
    direct = service_for(test_settings, db, embedder, get_tokenizer())
    try:
        yield Scenario(direct, proxy, test_settings, embedder)
    finally:
        proxy.close()


def _proxied_service(sc: Scenario, *, retry_s: float) -> Service:
    """A Service whose Database reaches Neo4j only through the proxy."""
    s = sc.settings
    uri = f"bolt://127.0.0.1:{sc.proxy.port}"
    db = Database(uri, s.neo4j.user, s.neo4j.password, s.neo4j.database)
    db.driver.close()
    db.driver = GraphDatabase.driver(
        uri,
        auth=(s.neo4j.user, s.neo4j.password) if s.neo4j.password else None,
        max_transaction_retry_time=retry_s,
        initial_retry_delay=0.02,
        connection_timeout=10,
        connection_acquisition_timeout=10,
        notifications_min_severity="OFF",
    )
    return service_for(s, db, sc.embedder, get_tokenizer())


def _batch(base: Sequence[Any]) -> list[dict[str, Any]]:
    """Ten changes: creates with forward/backward/cyclic local links, logical and
    observed links to existing atoms, citations, and two revisions."""
    a, b = base
    changes = [
        new(
            f"c{i}",
            f"fault batch atom {i}",
            links=[
                {"role": "next", "target": {"local": f"c{(i + 1) % 8}"}},
                {"role": "about", "target": {"ref": ref(a), "at": "logical"}},
                {"role": "pinned", "target": ref(b)},
            ],
            sources=[
                {"uri": f"https://example.org/{i}"},
                {
                    "uri": f"atom:{b.atom_id}",
                    "version": "1",
                    "range": {"start": 0, "end": 4, "unit": "char"},
                },
            ],
        )
        for i in range(8)
    ]
    changes.append(
        revise("ra", ref(a), "base a, revised", links=[{"role": "r", "target": {"local": "c0"}}])
    )
    changes.append(revise("rb", ref(b), "base b, revised"))
    return changes


def _seed_subject(sc: Scenario) -> tuple[Binding, list[Any]]:
    binding = Binding(f"fault-{uuid.uuid4().hex[:10]}", "default", "human", "faulty")
    out = write(sc.service, binding, [new("a", "base a"), new("b", "base b")])
    return binding, [out.changes["a"], out.changes["b"]]


def _drain(db: Database, addresses: set[str]) -> None:
    """Wait until Neo4j has finished (committed or rolled back) every transaction
    that arrived through the proxy, so counts are final."""
    deadline = time.monotonic() + 120
    while True:
        rows = cypher(db, "SHOW TRANSACTIONS YIELD clientAddress RETURN clientAddress")
        if not any(r["clientAddress"] in addresses for r in rows):
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"transactions from {addresses} never finished: {rows}")
        time.sleep(0.05)


def _consistent(db: Database, subject: str) -> None:
    """Structural invariants of a subject: one HEAD per atom, at headRev, a gap-free
    revision chain, and every revision written by exactly one operation."""
    rows = cypher(
        db,
        "MATCH (a:Atom {subject: $s}) "
        "RETURN a.atomId AS id, a.headRev AS headRev, "
        "[(a)-[:HEAD]->(h) | h.rev] AS heads, "
        "[(a)-[:HAS_REVISION]->(r) | r.rev] AS revs, "
        "[(a)-[:HAS_REVISION]->(r) | COUNT { (r)-[:WRITTEN_BY]->() }] AS writers",
        s=subject,
    )
    for row in rows:
        assert row["heads"] == [row["headRev"]], row
        assert sorted(row["revs"]) == list(range(1, row["headRev"] + 1)), row
        assert set(row["writers"]) == {1}, row


def _run_once(
    sc: Scenario,
    budget: int | None,
    *,
    refuse: bool,
    retry_s: float,
    after_marker: bytes | None = None,
    key: str | None = None,
    seeded: tuple[Binding, list[Any]] | None = None,
) -> tuple[Binding, tuple[int, int], WriteOutcome | GraphsvcError, bool, set[str]]:
    binding, base = seeded or _seed_subject(sc)
    before = subject_counts(sc.service.db, binding.subject)
    proxied = _proxied_service(sc, retry_s=retry_s)
    sc.proxy.arm(budget, refuse_after_cut=refuse, after_marker=after_marker)
    result: WriteOutcome | GraphsvcError
    try:
        result = write(proxied, binding, _batch(base), key)
    except GraphsvcError as exc:
        result = exc
    finally:
        cut = sc.proxy.cut
        sc.sent = sc.proxy.sent
        sc.proxy.arm(None, refuse_after_cut=False)
        sc.proxy.cut_all()
        addresses = set(sc.proxy.upstream_addresses)
        proxied.db.close()
    sc.proxy.arm(None, refuse_after_cut=False)
    return binding, before, result, cut, addresses


@pytest.mark.req("WR-7")
def test_connection_cut_mid_batch_leaves_all_or_nothing(scenario: Scenario, db: Database) -> None:
    sc = scenario
    # Calibrate: the bytes one uncut write sends, and the footprint of a full batch.
    binding, before, result, cut, addresses = _run_once(sc, None, refuse=True, retry_s=0.0)
    assert isinstance(result, WriteOutcome) and not cut
    total = sc.sent
    _drain(db, addresses)
    after = subject_counts(db, binding.subject)
    full = (after[0] - before[0], after[1] - before[1])
    assert full[0] >= 12 and full[1] > 50 and total > 1000

    rng = random.Random(SEED)
    outcomes: dict[str, int] = {"nothing": 0, "whole": 0, "whole-but-error": 0}
    subjects: list[tuple[str, tuple[int, int], str]] = []
    injected = 0
    for n in range(REFUSE_ITERATIONS + 20):
        if injected == REFUSE_ITERATIONS:
            break
        # Every third cut lands in the last bytes: around COMMIT and the reads after it.
        tail = n % 3 == 2
        budget = rng.randint(max(1, total - TAIL_BYTES), total) if tail else rng.randint(1, total)
        binding, before, result, cut, addresses = _run_once(sc, budget, refuse=True, retry_s=1e-6)
        _drain(db, addresses)
        after = subject_counts(db, binding.subject)
        delta = (after[0] - before[0], after[1] - before[1])
        assert delta in {(0, 0), full}, (budget, delta, full, result)
        if isinstance(result, WriteOutcome):
            assert delta == full and set(result.changes) == set(BATCH_IDS)
            outcomes["whole"] += 1
        else:
            assert cut, result
            outcomes["nothing" if delta == (0, 0) else "whole-but-error"] += 1
        injected += cut
        _consistent(db, binding.subject)
        subjects.append((binding.subject, before, "nothing" if delta == (0, 0) else "whole"))
    # The cuts landed inside the write: some batches were lost entirely, some had
    # committed before the cut (the caller got an error, the batch is whole).
    assert injected == REFUSE_ITERATIONS, outcomes
    assert outcomes["nothing"] > 0 and outcomes["whole-but-error"] > 0, outcomes
    # A final recount, long after every transaction ended, agrees with what we saw.
    for subject, before, seen in subjects:
        after = subject_counts(db, subject)
        expected = before if seen == "nothing" else (before[0] + full[0], before[1] + full[1])
        assert after == expected, (subject, seen)


@pytest.mark.req("WR-7")
def test_write_retried_by_the_driver_after_a_cut_commits_exactly_once(
    scenario: Scenario, db: Database
) -> None:
    sc = scenario
    binding, before, result, _, addresses = _run_once(sc, None, refuse=True, retry_s=0.0)
    assert isinstance(result, WriteOutcome)
    total = sc.sent
    _drain(db, addresses)
    after = subject_counts(db, binding.subject)
    full = (after[0] - before[0], after[1] - before[1])

    rng = random.Random(SEED + 1)
    for _ in range(RECONNECT_ITERATIONS):
        budget = rng.randint(1, total)
        binding, before, result, _, addresses = _run_once(sc, budget, refuse=False, retry_s=30.0)
        _drain(db, addresses)
        after = subject_counts(db, binding.subject)
        # The driver reconnects and retries; whether or not the first attempt had
        # already committed, the caller gets the committed outcome, stored once.
        assert isinstance(result, WriteOutcome), (budget, result)
        assert (after[0] - before[0], after[1] - before[1]) == full, budget
        assert {v.rev for k, v in result.changes.items() if k in ("ra", "rb")} == {2}
        _consistent(db, binding.subject)
        ops = cypher(
            db, "MATCH (o:Operation {subject: $s}) RETURN count(o) AS n", s=binding.subject
        )
        assert ops == [{"n": 2}]  # the seeding write and this batch


@pytest.mark.req("WR-7", "IDEM-2")
def test_cut_after_commit_was_sent_keeps_the_whole_batch_and_a_keyed_retry_replays_it(
    scenario: Scenario, db: Database
) -> None:
    sc = scenario
    seeded = _seed_subject(sc)
    binding, base = seeded
    key = "after-commit"
    _, before, result, cut, addresses = _run_once(
        sc, None, refuse=True, retry_s=30.0, after_marker=_WRITE_TX_MARKER, key=key, seeded=seeded
    )
    # The reply to COMMIT never arrived: the outcome is unknown to the caller,
    # which gets STORE_UNAVAILABLE — never a wrong CAS_CONFLICT or a partial batch.
    assert cut and isinstance(result, GraphsvcError), result
    assert result.code == "STORE_UNAVAILABLE"
    _drain(db, addresses)
    after = subject_counts(db, binding.subject)
    assert after[0] > before[0]  # it did commit: COMMIT had reached the server
    _consistent(db, binding.subject)
    # Retrying with the same key returns what was stored, and stores nothing new.
    again = write(sc.service, binding, _batch(base), key)
    assert again.repeated is True
    assert {k: v.rev for k, v in again.changes.items() if k in ("ra", "rb")} == {"ra": 2, "rb": 2}
    assert subject_counts(db, binding.subject) == after
