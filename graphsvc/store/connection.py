"""One Neo4j driver per process, with every call naming ``database_`` and ``routing_``.

Driver exceptions are mapped to :class:`~graphsvc.errors.StoreError` here, where
they enter graphsvc (STYLE: errors of lower libraries mapped where they enter).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
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

__all__ = ["SCHEMA_VERSION", "Database"]

T = TypeVar("T")

# Bumped when cypher/schema changes meaning (not merely when a file is added).
SCHEMA_VERSION = 1


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

    def close(self) -> None:
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
        """Run ``work`` in one read transaction (one snapshot for all its queries)."""
        with _mapped(label), self._session(RoutingControl.READ) as session:
            return session.execute_read(work)

    @contextmanager
    def _session(self, routing: RoutingControl) -> Iterator[Session]:
        mode = "READ" if routing == RoutingControl.READ else "WRITE"
        with self.driver.session(database=self.database, default_access_mode=mode) as s:
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
