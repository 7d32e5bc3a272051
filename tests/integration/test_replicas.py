"""Replicas of one database must share their keys (ops/replicas.py, issue 18).

Every lease here runs on a clock far in the past, so what this test registers is
already expired for any real process that shares the session's Neo4j, and leases of
real processes (now) would look alive to it: the test starts by removing those.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

import pytest

from graphsvc.errors import ReplicaKeysMismatchError
from graphsvc.ops.replicas import ReplicaLease
from graphsvc.settings import Settings
from graphsvc.store.connection import Database

T0 = 1_000_000.0
SECRET_A = bytes(range(32))
SECRET_B = bytes(range(1, 33))
KEY = "ed25519:test-key"


@pytest.fixture()
def fresh_registry(db: Database) -> Iterator[Database]:
    db.driver.execute_query("MATCH (r:ServiceReplica) DETACH DELETE r", database_=db.database)
    yield db
    db.driver.execute_query("MATCH (r:ServiceReplica) DETACH DELETE r", database_=db.database)


def at(t: float) -> Callable[[], float]:
    return lambda: t


def test_replicas_with_the_same_keys_share_a_database(fresh_registry: Database) -> None:
    a = ReplicaLease(fresh_registry, SECRET_A, KEY, at(T0))
    b = ReplicaLease(fresh_registry, SECRET_A, KEY, at(T0 + 1))
    a.acquire()
    b.acquire()
    assert a.fingerprint == b.fingerprint
    assert a.replica_id != b.replica_id


def test_a_replica_with_another_secret_or_key_refuses_while_one_is_live(
    fresh_registry: Database,
) -> None:
    a = ReplicaLease(fresh_registry, SECRET_A, KEY, at(T0), lease_s=30)
    a.acquire()
    for other in (
        ReplicaLease(fresh_registry, SECRET_B, KEY, at(T0 + 10)),
        ReplicaLease(fresh_registry, SECRET_A, "ed25519:another-key", at(T0 + 10)),
    ):
        with pytest.raises(ReplicaKeysMismatchError) as caught:
            other.acquire()
        assert caught.value.code == "REPLICA_KEYS_MISMATCH"
        assert caught.value.details["replicas"][0]["fingerprint"] == a.fingerprint
        # The fingerprint is no copy of the secret.
        assert SECRET_A.hex() not in str(caught.value.to_dict())


def test_a_released_or_lapsed_lease_lets_other_keys_start(fresh_registry: Database) -> None:
    a = ReplicaLease(fresh_registry, SECRET_A, KEY, at(T0), lease_s=30)
    a.acquire()
    a.release()
    ReplicaLease(fresh_registry, SECRET_B, KEY, at(T0 + 1)).acquire()  # a stopped cleanly
    # b now crashes (no release): other keys wait until its lease runs out.
    with pytest.raises(ReplicaKeysMismatchError):
        ReplicaLease(fresh_registry, SECRET_A, KEY, at(T0 + 10), lease_s=30).acquire()
    ReplicaLease(fresh_registry, SECRET_A, KEY, at(T0 + 32), lease_s=30).acquire()


def test_a_renewed_lease_stays_live(fresh_registry: Database) -> None:
    now = [T0]
    a = ReplicaLease(fresh_registry, SECRET_A, KEY, lambda: now[0], lease_s=30)
    a.acquire()
    now[0] = T0 + 25
    a.renew()
    with pytest.raises(ReplicaKeysMismatchError):
        ReplicaLease(fresh_registry, SECRET_B, KEY, at(T0 + 50)).acquire()


def test_replicas_starting_together_agree_on_one_set_of_keys(fresh_registry: Database) -> None:
    barrier = threading.Barrier(8)
    outcome: dict[int, str] = {}

    def start(i: int) -> None:
        lease = ReplicaLease(fresh_registry, SECRET_A if i % 2 else SECRET_B, KEY, at(T0))
        barrier.wait()
        try:
            lease.acquire()
            outcome[i] = "started:" + lease.fingerprint
        except ReplicaKeysMismatchError:
            outcome[i] = "refused:" + lease.fingerprint

    threads = [threading.Thread(target=start, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    started = {v.split(":", 1)[1] for v in outcome.values() if v.startswith("started:")}
    refused = {v.split(":", 1)[1] for v in outcome.values() if v.startswith("refused:")}
    assert len(outcome) == 8
    assert len(started) == 1  # one set of keys won, all four of its replicas started
    assert refused and started.isdisjoint(refused)
    assert sum(v.startswith("started:") for v in outcome.values()) == 4


def test_replicas_applying_the_schema_at_once_all_start(
    db: Database, test_settings: Settings
) -> None:
    """Each start applies the schema; two processes may both find an index missing
    and both create it: the one that loses the race must not fail its start."""
    from write_support import cypher, own_database

    # What a fresh database looks like to the schema step (one of each kind).
    cypher(db, "DROP INDEX job_state IF EXISTS")
    cypher(db, "DROP INDEX current_text IF EXISTS")
    cypher(db, "DROP CONSTRAINT job_key IF EXISTS")
    cypher(db, "DROP CONSTRAINT service_replica_id IF EXISTS")
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def apply() -> None:
        # Each replica is a process of its own, with its own connection pool.
        own = own_database(test_settings)
        try:
            start.wait()
            own.apply_schema()
        except BaseException as exc:
            errors.append(exc)
        finally:
            own.close()

    threads = [threading.Thread(target=apply) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert errors == []
    names = {r["name"] for r in cypher(db, "SHOW INDEXES YIELD name RETURN name")}
    assert {"job_state", "current_text", "job_key"} <= names
