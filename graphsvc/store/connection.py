"""One Neo4j driver per process, with every call naming ``database_`` and ``routing_``.

Driver exceptions are mapped to :class:`~graphsvc.errors.StoreError` here, where
they enter graphsvc (STYLE: errors of lower libraries mapped where they enter).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any, TypeVar

from neo4j import Driver, GraphDatabase, ManagedTransaction, RoutingControl, Session
from neo4j.exceptions import (
    ClientError,
    DriverError,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)

from graphsvc.errors import GraphsvcError, StoreError
from graphsvc.store.queries import query, schema_statements

__all__ = ["SCHEMA_VERSION", "Database", "run"]

T = TypeVar("T")

# Bumped when cypher/schema changes meaning (not merely when a file is added).
SCHEMA_VERSION = 1


def run(tx: ManagedTransaction, name: str, **params: Any) -> list[dict[str, Any]]:
    """Run the named query in ``tx``; each row as a plain dict.

    Values stay as the driver decoded them: our queries return maps, lists and
    scalars, never nodes, so the recursive walk of ``Record.data()`` (a third of
    a read's client time on big retrieval graphs) is not needed.
    """
    result = tx.run(query(name), params)
    keys = result.keys()
    return [dict(zip(keys, record, strict=True)) for record in result]


class Database:
    """A driver bound to one database name.

    Args:
        uri: Bolt URI.
        user: user name (ignored when ``password`` is empty and auth is off).
        password: password; empty means no authentication.
        database: the database every call targets.
    """

    def __init__(self, uri: str, user: str, password: str, database: str) -> None:
        auth = (user, password) if password else None
        try:
            self.driver: Driver = GraphDatabase.driver(
                uri,
                auth=auth,
                max_connection_pool_size=50,
                connection_acquisition_timeout=30,
                # Cypher hints about unused labels are noise in logs, not signals.
                notifications_min_severity="OFF",
            )
        except (DriverError, ValueError) as exc:
            raise StoreError(f"cannot create a Neo4j driver for {uri}: {exc}") from exc
        self.uri = uri
        self.database = database
        # Independent reads of one request run side by side (Neo4j runs each query
        # on one core); see read_tx_soon.
        self._pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="graphsvc-db")

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        self.driver.close()

    # ------------------------------------------------------------ single queries
    def read(self, name: str, **params: Any) -> list[dict[str, Any]]:
        """Run the named read query in an auto-routed read transaction."""
        with _mapped(name):
            records, _, _ = self.driver.execute_query(
                query(name), params, database_=self.database, routing_=RoutingControl.READ
            )
        return [r.data() for r in records]

    def write(self, name: str, **params: Any) -> list[dict[str, Any]]:
        """Run the named write query in its own write transaction."""
        with _mapped(name):
            records, _, _ = self.driver.execute_query(
                query(name), params, database_=self.database, routing_=RoutingControl.WRITE
            )
        return [r.data() for r in records]

    # ------------------------------------------------------------ transactions
    def write_tx(self, work: Callable[[ManagedTransaction], T], *, label: str = "write") -> T:
        """Run ``work`` in one write transaction, retried on transient errors.

        The function may be called more than once (driver retries); it must not
        have side effects outside the transaction.
        """
        with _mapped(label), self._session(RoutingControl.WRITE) as session:
            return session.execute_write(work)

    def read_tx(self, work: Callable[[ManagedTransaction], T], *, label: str = "read") -> T:
        """Run ``work`` in one read transaction.

        Neo4j reads are read-committed: each query sees what was committed when it
        ran, so a transaction groups queries but is not a snapshot.
        """
        with _mapped(label), self._session(RoutingControl.READ) as session:
            return session.execute_read(work)

    def read_tx_soon(
        self, work: Callable[[ManagedTransaction], T], *, label: str = "read"
    ) -> Future[T]:
        """Start ``work`` in its own read transaction on a worker thread.

        For reads that do not depend on each other: Neo4j runs each query on one
        core, so two halves of a query's input finish in about half the time.
        Neo4j reads are read-committed, so separate transactions of one request
        see what one transaction would (each query sees the latest commits).
        """
        return self._pool.submit(self.read_tx, work, label=label)

    def write_tx_soon(
        self, work: Callable[[ManagedTransaction], T], *, label: str = "write"
    ) -> Future[T]:
        """Start ``work`` in its own write transaction on a worker thread.

        For a write that does not depend on what the request still computes (a
        read's frozen evaluation): its round trips and commit overlap the rest of
        the request. The caller waits for the result before it answers.
        """
        return self._pool.submit(self.write_tx, work, label=label)

    @contextmanager
    def _session(self, routing: RoutingControl) -> Iterator[Session]:
        mode = "READ" if routing == RoutingControl.READ else "WRITE"
        with (
            self.driver.session(database=self.database, default_access_mode=mode) as s,
            _pipelined_begin(s),
        ):
            yield s

    # ------------------------------------------------------------ schema / meta
    def apply_schema(self) -> int:
        """Apply every ``cypher/schema`` statement (idempotent) and record the version."""
        files = []
        for stem, statement in schema_statements():
            with _mapped(f"schema/{stem}"):
                self.driver.execute_query(
                    statement, database_=self.database, routing_=RoutingControl.WRITE
                )
            files.append(stem)
        self.write("meta/set_schema_version", version=SCHEMA_VERSION, files=files)
        with _mapped("meta/await_indexes"):
            self.driver.execute_query(
                query("meta/await_indexes"),
                {"timeoutSeconds": 120},
                database_=self.database,
                routing_=RoutingControl.WRITE,
            )
        return SCHEMA_VERSION

    def schema_version(self) -> int | None:
        rows = self.read("meta/get_schema_version")
        return rows[0]["version"] if rows else None

    def server_info(self) -> dict[str, str]:
        rows = self.read("meta/server_components")
        row = rows[0]
        return {"name": row["name"], "version": row["version"], "edition": row["edition"]}


def _pipelined_begin(session: Session) -> AbstractContextManager[object]:
    """Send BEGIN together with the transaction's first query (one round trip less).

    The driver does this for ``execute_query`` through the session's
    ``_pipelined_begin`` flag; a round trip to Neo4j costs ~0.5 ms on a small VM and
    a read opens up to five transactions. A driver without the flag gets the
    plain (separate) BEGIN.
    """
    flag = getattr(session, "_pipelined_begin", None)
    return flag if isinstance(flag, AbstractContextManager) else nullcontext()


@contextmanager
def _mapped(label: str) -> Iterator[None]:
    try:
        yield
    except GraphsvcError:
        raise
    except (ServiceUnavailable, SessionExpired, TransientError) as exc:
        raise StoreError(f"Neo4j unavailable during {label}: {exc}") from exc
    except ClientError as exc:
        raise StoreError(f"Neo4j rejected {label}: {exc.code}: {exc.message}") from exc
    except (Neo4jError, DriverError, OSError) as exc:
        raise StoreError(f"Neo4j failed during {label}: {exc}") from exc
