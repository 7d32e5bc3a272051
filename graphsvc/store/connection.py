"""One Neo4j driver per process, with every call naming ``database_`` and ``routing_``.

Driver exceptions are mapped to :class:`~graphsvc.errors.StoreError` here, where
they enter graphsvc (STYLE: errors of lower libraries mapped where they enter).

Outages and time limits (docs/operations.md): the driver's connect, connection
acquisition and transaction retry times are short settings, so an unreachable
Neo4j is STORE_UNAVAILABLE within about two seconds; deadlocks are retried longer
here. Inside an HTTP request every transaction gets the time left before the
request's deadline as its Neo4j transaction timeout, so a request over its limit
is stopped in the database too (DeadlineExceededError, ``TIMEOUT``).
"""

from __future__ import annotations

import contextvars
import itertools
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, Protocol, TypeVar

from neo4j import (
    Driver,
    GraphDatabase,
    ManagedTransaction,
    Query,
    Result,
    RoutingControl,
    Session,
)
from neo4j.api import BookmarkManager
from neo4j.exceptions import (
    AuthError,
    ClientError,
    DriverError,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)

from graphsvc.errors import (
    DeadlineExceededError,
    GraphsvcError,
    StoreCredentialsError,
    StoreError,
)
from graphsvc.settings import Settings
from graphsvc.store.queries import query, schema_statements
from graphsvc.telemetry.metrics import timed_query
from graphsvc.telemetry.request_scope import remaining_s

__all__ = ["SCHEMA_VERSION", "Database", "Tx", "round_trips", "run"]

T = TypeVar("T")


class Tx(Protocol):
    """Where a unit of work's named queries run (:func:`run`): a managed transaction
    (:meth:`Database.read_tx`, :meth:`Database.write_tx`) or a session whose every
    query commits on its own (:meth:`Database.read_each`). A use case holds one and
    passes it to store functions; it never runs a query itself, so it needs no
    neo4j import."""

    def run(self, query: str, parameters: dict[str, Any] | None = None) -> Result: ...


# What `CREATE ... IF NOT EXISTS` raises when another process created the same
# index or constraint between its check and its commit.
_CREATED_MEANWHILE = frozenset(
    {
        "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists",
        "Neo.ClientError.Schema.IndexAlreadyExists",
        "Neo.ClientError.Schema.ConstraintAlreadyExists",
    }
)
# Bumped when cypher/schema changes meaning (not merely when a file is added).
SCHEMA_VERSION = 1
# The first pause of a retry and the longest (each pause doubles the one before).
_RETRY_DELAY_S = 0.05
_MAX_RETRY_DELAY_S = 1.0
# The first Neo4j release line whose Cypher 25 has the in-index filtered vector
# search (`SEARCH ... WHERE` on a vector index declared `WITH [...]`).
_FILTERED_VECTOR_SINCE = 2026
# Transaction timeouts below this are not sent (the server would read 0 as "none").
_MIN_TX_TIMEOUT_S = 0.01

# Every named query sent to Neo4j, counted (the typed graph's batching test reads it).
# next() on itertools.count is atomic under the GIL, so worker threads need no lock;
# reading the count advances it too, and the reads are counted apart and subtracted.
_SENT = itertools.count()
_READS = itertools.count()


def _count_query() -> None:
    next(_SENT)


def round_trips() -> int:
    """How many named queries this process has sent to Neo4j so far (all threads)."""
    reads_before = next(_READS)
    return next(_SENT) - reads_before


def run(tx: Tx, name: str, **params: Any) -> list[dict[str, Any]]:
    """Run the named query in ``tx``; each row as a plain dict.

    Values stay as the driver decoded them: our queries return maps, lists and
    scalars, never nodes, so the recursive walk of ``Record.data()`` (a third of
    a read's client time on big retrieval graphs) is not needed.
    """
    with timed_query(name):
        return _plain_rows(tx.run(query(name), _quiet(params)))


class _QuietList(list[Any]):
    """A list parameter whose ``repr`` does not walk its items.

    The driver formats every RUN message for its debug log, whether or not that
    log is enabled (``" ".join(map(repr, fields))`` in ``neo4j/_sync/io/_bolt``):
    for a bulk import's batch of 2,000 revisions with 384-float embeddings that
    repr costs far more client CPU than the pack, holding the GIL (docs/ingest.md,
    "List parameters with a short repr"). The packer sends a list subclass as a list,
    unchanged.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<list of {len(self)}>"


def _quiet(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with each top-level list wrapped in :class:`_QuietList` (a shallow copy)."""
    return {k: _QuietList(v) if type(v) is list else v for k, v in params.items()}


def _plain_rows(result: Result) -> list[dict[str, Any]]:
    keys = result.keys()
    return [dict(zip(keys, record, strict=True)) for record in result]


class Database:
    """A driver bound to one database name.

    Args:
        uri: Bolt URI.
        user: user name (ignored when ``password`` is empty and auth is off).
        password: password; empty means no authentication.
        database: the database every call targets.
        connection_timeout_s: the TCP connect of a new connection (the driver runs the
            Bolt handshake and HELLO within the acquisition deadline).
        acquisition_timeout_s: to get a connection from the pool, opening included.
        max_retry_time_s: the driver's retry time for a failed transaction; short, so
            a lost server is reported instead of retried for 30 s.
        transient_retry_s: how long a deadlock (a transient transaction error) is
            retried, within the request's deadline.
        max_pool_size: connections of this process.
    """

    def __init__(
        self,
        uri: str,
        user: str,
        password: str,
        database: str,
        *,
        connection_timeout_s: float = 1.0,
        acquisition_timeout_s: float = 2.0,
        max_retry_time_s: float = 0.5,
        transient_retry_s: float = 10.0,
        max_pool_size: int = 64,
    ) -> None:
        auth = (user, password) if password else None
        try:
            self.driver: Driver = GraphDatabase.driver(
                uri,
                auth=auth,
                max_connection_pool_size=max_pool_size,
                connection_acquisition_timeout=acquisition_timeout_s,
                connection_timeout=connection_timeout_s,
                max_transaction_retry_time=max_retry_time_s,
                # Cypher hints about unused labels are noise in logs, not signals.
                notifications_min_severity="OFF",
            )
        except (DriverError, ValueError) as exc:
            raise StoreError(f"cannot create a Neo4j driver for {uri}: {exc}") from exc
        self.uri = uri
        self.database = database
        self.connection_timeout_s = connection_timeout_s
        self.acquisition_timeout_s = acquisition_timeout_s
        self.max_retry_time_s = max_retry_time_s
        self.transient_retry_s = transient_retry_s
        self.max_pool_size = max_pool_size
        # Independent queries of one request run side by side (Neo4j runs each
        # query on one core); see soon().
        self._pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="graphsvc-db")
        # Through a routing URI (a cluster, Aura) reads may go to a follower that has
        # not applied this process's last write yet: every session then shares one
        # bookmark manager, so a read waits for the writes this process committed
        # (causal consistency). One server (bolt://) needs none: its reads see
        # every commit (read-committed), and bookmarks would only cost.
        self.bookmarks: BookmarkManager | None = (
            GraphDatabase.bookmark_manager() if uri.split(":", 1)[0].startswith("neo4j") else None
        )
        # Facts about the server read once per Database (store/indexes: whether it
        # filters vector searches inside the index); plain dict operations, atomic
        # under the GIL, so worker threads need no lock (a race reads twice).
        self.facts: dict[str, Any] = {}

    @classmethod
    def for_settings(cls, settings: Settings, uri: str, user: str, password: str) -> Database:
        """A Database with the driver timeouts and pool size of ``settings``."""
        return cls(
            uri,
            user,
            password,
            settings.neo4j.database,
            connection_timeout_s=settings.neo4j.connection_timeout_s,
            acquisition_timeout_s=settings.neo4j.acquisition_timeout_s,
            max_retry_time_s=settings.neo4j.max_retry_time_s,
            transient_retry_s=settings.neo4j.transient_retry_s,
            max_pool_size=settings.neo4j.max_pool_size,
        )

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        self.driver.close()

    # ------------------------------------------------------------ single queries
    def read(self, name: str, **params: Any) -> list[dict[str, Any]]:
        """Run the named read query as its own transaction (rows via ``Record.data()``)."""
        return self._autocommit(name, params, RoutingControl.READ, plain=False)

    def write(self, name: str, **params: Any) -> list[dict[str, Any]]:
        """Run the named write query as its own transaction (rows via ``Record.data()``)."""
        return self._autocommit(name, params, RoutingControl.WRITE, plain=False)

    def read_rows(self, name: str, **params: Any) -> list[dict[str, Any]]:
        """Like :meth:`read`, each row a plain dict as in :func:`run` (for big results)."""
        return self._autocommit(name, params, RoutingControl.READ, plain=True)

    def _autocommit(
        self, name: str, params: dict[str, Any], routing: RoutingControl, *, plain: bool
    ) -> list[dict[str, Any]]:
        """One named query as an auto-commit transaction.

        RUN and PULL travel together and the commit is part of the answer: one
        round trip, where a managed transaction takes three (BEGIN, the query,
        COMMIT). A retryable failure (the statement was rolled back) is retried
        like a managed transaction's (:meth:`_unmanaged`).
        """

        def once() -> list[dict[str, Any]]:
            with timed_query(name), self._session(routing) as session:
                result = _EachQuery(session, name).run(query(name), _quiet(params))
                if plain:
                    return _plain_rows(result)
                return [record.data() for record in result]

        return self._unmanaged(once, name)

    def _unmanaged(self, once: Callable[[], T], label: str) -> T:
        """Run ``once`` (auto-commit queries) again after a retryable failure, for the
        driver's ``max_retry_time_s`` (:func:`_retrying`, the one retry loop), as the
        driver retries a managed transaction; a failure left is a ``StoreError``."""
        try:
            return _retrying(once, _retryable, self.max_retry_time_s)
        except (Neo4jError, DriverError):
            with _mapped(label):
                raise

    # ------------------------------------------------------------ side work
    def soon(self, work: Callable[[], T], *, label: str = "side work") -> Future[T]:
        """Start ``work`` (its own reads or writes) on a worker thread.

        For queries of one request that do not depend on each other: Neo4j runs
        each query on one core, so two of them finish in about the time of one.
        Neo4j reads are read-committed, so separate transactions of one request see
        what one transaction would (each query sees the latest commits). The caller
        waits for the result before it answers. ``label`` names the thread's work
        in errors.
        """

        def labelled() -> T:
            with _mapped(label):
                return work()

        # The request's scope (its deadline, its id in logs) goes with the work.
        return self._pool.submit(contextvars.copy_context().run, labelled)

    def read_soon(self, name: str, **params: Any) -> Future[list[dict[str, Any]]]:
        """:meth:`read_rows` on a worker thread (see :meth:`soon`)."""
        return self.soon(lambda: self.read_rows(name, **params), label=name)

    # ------------------------------------------------------------ transactions
    def write_tx(self, work: Callable[[Tx], T], *, label: str = "write") -> T:
        """Run ``work`` in one write transaction, retried on transient errors.

        The function may be called more than once (driver retries); it must not
        have side effects outside the transaction.
        """
        return self._managed(work, label, RoutingControl.WRITE)

    def read_tx(self, work: Callable[[Tx], T], *, label: str = "read") -> T:
        """Run ``work`` in one read transaction.

        Neo4j reads are read-committed: each query sees what was committed when it
        ran, so a transaction groups queries but is not a snapshot.
        """
        return self._managed(work, label, RoutingControl.READ)

    def read_each(self, work: Callable[[Tx], T], *, label: str = "read") -> T:
        """Run ``work`` with each of its queries an auto-commit read of its own.

        One round trip per query, where a read transaction adds BEGIN and COMMIT
        (three for a one-query search); it gives up nothing a read transaction
        gives, since that is no snapshot either (:meth:`read_tx`). A retryable
        failure runs ``work`` again (:meth:`_unmanaged`).
        """

        def once() -> T:
            with self._session(RoutingControl.READ) as session:
                return work(_EachQuery(session, label))

        return self._unmanaged(once, label)

    def _managed(self, work: Callable[[Tx], T], label: str, routing: RoutingControl) -> T:
        """A managed transaction with the request's time left as its timeout.

        The driver retries any retryable failure for ``max_retry_time_s``; a deadlock
        (``Neo.TransientError.Transaction.*``) is retried here for up to
        ``transient_retry_s`` more, never past the request's deadline (:func:`_retrying`).
        """

        def once() -> T:
            timeout = _tx_timeout(label)

            def unit(tx: ManagedTransaction) -> T:
                return work(tx)

            if timeout is not None:
                unit.timeout = timeout  # type: ignore[attr-defined]  # neo4j.unit_of_work
            with _mapped(label), self._session(routing) as session:
                if routing == RoutingControl.READ:
                    return session.execute_read(unit)
                return session.execute_write(unit)

        return _retrying(once, _deadlocked, self.transient_retry_s)

    @contextmanager
    def _session(self, routing: RoutingControl) -> Iterator[Session]:
        mode = "READ" if routing == RoutingControl.READ else "WRITE"
        with self.driver.session(
            database=self.database, default_access_mode=mode, bookmark_manager=self.bookmarks
        ) as s:
            yield s

    # ------------------------------------------------------------ schema / meta
    def filters_vectors(self) -> bool:
        """Whether the server searches a vector index with filters inside the index
        (Cypher 25 ``SEARCH … WHERE``: Neo4j 2026.x and later; 5.26 LTS does not).
        Read once per Database (``dbms.components()``)."""
        known = self.facts.get("filtersVectors")
        if known is None:
            rows = self.read("meta/server_components")
            version = str(rows[0]["version"]) if rows else ""
            major = version.split(".", 1)[0]
            known = major.isdigit() and int(major) >= _FILTERED_VECTOR_SINCE
            self.facts["filtersVectors"] = known
        return bool(known)

    def apply_schema(self, embedding_dimension: int = 384) -> int:
        """Apply every ``cypher/schema`` statement (idempotent) and record the version.

        On a server that :meth:`filters_vectors`, a new vector index gets the subject
        as a filter property (``index/create_vector_filtered``); an existing one is
        kept as it is (``graphsvc index rebuild`` re-creates it).

        Args:
            embedding_dimension: the vector index's dimension when it is created
                (the embedding model's; 384 is all-MiniLM-L6-v2's). An existing index
                keeps its own (:mod:`graphsvc.ops.embedding_model` checks it).
        """
        files = []
        params = {"dimension": embedding_dimension}
        for stem, statement in schema_statements(filtered_vector=self.filters_vectors()):
            with _mapped(f"schema/{stem}"):
                try:
                    self.driver.execute_query(
                        statement, params, database_=self.database, routing_=RoutingControl.WRITE
                    )
                except ClientError as exc:
                    # Two processes starting at once (replicas) both found the index
                    # missing and both created it: the other one's is the same.
                    if exc.code not in _CREATED_MEANWHILE:
                        raise
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


class _EachQuery:
    """A :class:`Tx` whose every query is an auto-commit transaction of ``session``,
    with the request's time left as its timeout (:meth:`Database.read_each`)."""

    def __init__(self, session: Session, label: str) -> None:
        self._session = session
        self._label = label

    def run(self, query: str, parameters: dict[str, Any] | None = None) -> Result:
        text = Query(query, timeout=_tx_timeout(self._label))  # raises past the deadline
        _count_query()
        return self._session.run(text, parameters)


def _tx_timeout(label: str) -> float | None:
    """Seconds left before the request's deadline, for Neo4j's transaction timeout.

    Raises:
        DeadlineExceededError: the deadline has passed (nothing more is sent).
    """
    left = remaining_s()
    if left is None:
        return None
    if left < _MIN_TX_TIMEOUT_S:
        raise DeadlineExceededError(f"request time limit reached before {label}")
    return left


def _retrying(
    attempt: Callable[[], T], retry_on: Callable[[Exception], bool], budget_s: float
) -> T:
    """Run ``attempt``; after a failure ``retry_on`` accepts, pause and run it again.

    The one retry loop of the store (the driver's managed transactions retry inside
    it on their own): pauses start at 50 ms and double up to 1 s; no pause ends past
    ``budget_s`` from the first attempt or past the request's deadline, so the last
    failure is raised instead.
    """
    started = time.monotonic()
    delay = _RETRY_DELAY_S
    while True:
        try:
            return attempt()
        except Exception as exc:
            if not retry_on(exc):
                raise
            left = remaining_s()
            if time.monotonic() - started + delay > budget_s or (
                left is not None and left <= delay
            ):
                raise
            time.sleep(delay)
            delay = min(delay * 2, _MAX_RETRY_DELAY_S)


def _retryable(exc: Exception) -> bool:
    """A failed auto-commit query the server rolled back, safe to send again."""
    return isinstance(exc, Neo4jError | DriverError) and exc.is_retryable()


def _deadlocked(exc: Exception) -> bool:
    """A managed transaction that lost a deadlock (the driver's own retries spent)."""
    return isinstance(exc, StoreError) and _is_deadlock(exc.__cause__)


def _is_deadlock(exc: BaseException | None) -> bool:
    code = getattr(exc, "code", None) or ""
    return isinstance(exc, TransientError) and code.startswith("Neo.TransientError.Transaction.")


def _timed_out(exc: BaseException) -> bool:
    """A Neo4j error that means the transaction ran out of the request's time."""
    code = getattr(exc, "code", None) or ""
    if "TransactionTimedOut" in code:
        return True
    left = remaining_s()
    return left is not None and left <= 0 and ".Transaction." in code


@contextmanager
def _mapped(label: str) -> Iterator[None]:
    try:
        yield
    except GraphsvcError:
        raise
    except AuthError as exc:
        raise StoreCredentialsError(
            "Neo4j refused the credentials: set GRAPHSVC_NEO4J_USER and "
            "GRAPHSVC_NEO4J_PASSWORD for GRAPHSVC_NEO4J_URI, or leave the URI empty to use "
            "the managed Neo4j (its password is kept in the state dir)",
            details={"setting": "GRAPHSVC_NEO4J_PASSWORD"},
        ) from exc
    except Neo4jError as exc:
        if _timed_out(exc):
            raise DeadlineExceededError(f"request time limit reached during {label}") from exc
        if isinstance(exc, TransientError):
            raise StoreError(f"Neo4j unavailable during {label}: {exc}") from exc
        if isinstance(exc, ClientError):
            raise StoreError(f"Neo4j rejected {label}: {exc.code}: {exc.message}") from exc
        raise StoreError(f"Neo4j failed during {label}: {exc}") from exc
    except (ServiceUnavailable, SessionExpired) as exc:
        raise StoreError(f"Neo4j unavailable during {label}: {exc}") from exc
    except (DriverError, OSError) as exc:
        raise StoreError(f"Neo4j failed during {label}: {exc}") from exc
