"""The composition root: settings → the parts of one process → :class:`Service`.

``graphsvc serve``, every CLI command and the tests build their objects here, once:

- **database**: the configured Neo4j (``GRAPHSVC_NEO4J_URI``), or the managed local
  one, started when no URI is set (:func:`connect`);
- **tokenizer**: cl100k_base, process-wide;
- **secret**: the server's MAC secret (InputTokens, cursors, receipts), read from its
  0600 file and created there on first start (:func:`secret_of`); the Service itself
  writes no file;
- **signing keys**: a loader of the Ed25519 key ring (SIG-4), called when a use case
  signs or verifies, never at start: loading creates the key file, and each load
  re-checks the file's mode (:meth:`Parts.signing_keys`); and a loader of the
  verification keys alone that never creates the file (:meth:`Parts.verification_keys`,
  ``graphsvc export``). No other module finds the key file or builds a key ring;
- **clock**: epoch seconds (``time.time``; tests pass their own);
- **embedder**: a :class:`~graphsvc.embed.lazy.LazyEmbedder`: the model loads on the
  first call that embeds, so ``purge``, ``inspect``, ``export`` and refused commands
  never load it; ``serve`` loads it at start. An HTTP app times its calls
  (:func:`instrument`, which also puts the Service's jobs in ``/metrics``);
- **compaction's connections**: a :class:`Database` on each managed instance that
  ``graphsvc compact`` starts (:func:`instance_database`).

Only this module (and the tests) builds a :class:`Database` or a :class:`KeyRing`
(tests/unit/test_architecture.py): a use case is handed the built object or a callable.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from graphsvc.embed import Embedder
from graphsvc.embed.lazy import LazyEmbedder
from graphsvc.errors import GraphsvcError
from graphsvc.keys.server_secret import load_or_create_secret
from graphsvc.keys.signing_keys import KeyRing
from graphsvc.localdb import Instance, LocalNeo4j
from graphsvc.service import HEALTH_FACTS_REFRESH_S, Service
from graphsvc.settings import Settings
from graphsvc.store.connection import Database
from graphsvc.tokenizer import Tokenizer, get_tokenizer

if TYPE_CHECKING:
    from graphsvc.atomise.worker import JobWorker

__all__ = [
    "Parts",
    "Runtime",
    "build_service",
    "connect",
    "instance_database",
    "instrument",
    "job_worker_of",
    "secret_of",
    "service_for",
    "serving",
    "signing_key_path",
]


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def secret_of(settings: Settings) -> bytes:
    """The server's MAC secret: ``GRAPHSVC_SECRET_FILE`` or ``<state>/server-secret``.

    Raises:
        InvalidInputError: the file is readable by group/others or malformed.
    """
    return load_or_create_secret(settings.paths.secret_path)


def signing_key_path(settings: Settings) -> Path:
    """Where the deployment's signing key ring lives (SIG-4)."""
    return settings.paths.signing_key_path


@dataclass
class Parts:
    """Everything but the database that a Service is built from.

    Attributes:
        settings: configuration.
        embedder: the (lazy) embedder.
        tokenizer: the cl100k_base counter.
        secret: the MAC secret.
        clock: epoch seconds.
    """

    settings: Settings
    embedder: Embedder
    tokenizer: Tokenizer
    secret: bytes
    clock: Callable[[], float] = time.time

    @classmethod
    def for_settings(
        cls,
        settings: Settings,
        embedder: Embedder | None = None,
        tokenizer: Tokenizer | None = None,
        *,
        clock: Callable[[], float] = time.time,
    ) -> Parts:
        """The parts of ``settings``; a missing embedder is a lazy one.

        Raises:
            InvalidInputError: the secret file is unsafe or malformed.
        """
        return cls(
            settings=settings,
            embedder=embedder
            if embedder is not None
            else LazyEmbedder(
                model=settings.embedding.model, query_precision=settings.embedding.query_precision
            ),
            tokenizer=tokenizer if tokenizer is not None else get_tokenizer(),
            secret=secret_of(settings),
            clock=clock,
        )

    def signing_keys(self) -> KeyRing:
        """The key ring, loaded now (created, mode 0600, if it does not exist).

        Raises:
            SignerError: the key file is unsafe, unreadable or malformed.
        """
        return KeyRing.load_or_create(signing_key_path(self.settings))

    def verification_keys(self) -> dict[str, bytes]:
        """The deployment's verification keys (active and retired); none if it has no
        key ring yet. Unlike signing, checking never creates a key file.

        Raises:
            SignerError: the key file is unsafe, unreadable or malformed.
        """
        path = signing_key_path(self.settings)
        if not path.exists():
            return {}
        return KeyRing.load_or_create(path).public_keys()

    def service(self, db: Database) -> Service:
        """The Service over ``db`` built from these parts."""
        return Service(
            self.settings,
            db,
            self.embedder,
            self.tokenizer,
            secret=self.secret,
            signing_keys=self.signing_keys,
            verification_keys=self.verification_keys,
            worker_of=job_worker_of,
            clock=self.clock,
        )


@dataclass
class Runtime:
    """The live parts of one process.

    Attributes:
        settings: configuration.
        db: the Neo4j connection (closed by :meth:`close`).
        managed: the managed Neo4j this process uses, if any.
        parts: what the Service is built from (set by :func:`build_service`).
    """

    settings: Settings
    db: Database
    managed: Instance | None = None
    parts: Parts | None = field(default=None)

    def close(self) -> None:
        """Close the database connection (a managed Neo4j keeps running)."""
        self.db.close()


def connect(
    settings: Settings,
    *,
    progress: Callable[[str], None] = _stderr,
    die_with_parent: bool = False,
) -> Runtime:
    """Connect to the configured Neo4j, starting the managed one when no URI is set.

    Raises:
        LauncherError: the managed Neo4j cannot be started.
    """
    managed: Instance | None = None
    if settings.neo4j.managed:
        local = LocalNeo4j(settings, name="serve", progress=progress)
        managed = local.start(die_with_parent=die_with_parent)
        db = Database.for_settings(settings, managed.uri, managed.user, managed.password)
    else:
        db = Database.for_settings(
            settings, settings.neo4j.uri, settings.neo4j.user, settings.neo4j.password
        )
    return Runtime(settings=settings, db=db, managed=managed)


def job_worker_of(service: Service) -> JobWorker:
    """The background-job worker of ``service`` (one per Service, made when it first
    asks, :meth:`Service.job_worker`); it holds the Service weakly, so a Service that
    is gone leaves its held jobs to their lease and another worker."""
    from graphsvc.atomise.worker import JobWorker

    return JobWorker(weakref.ref(service))


def instance_database(settings: Settings, instance: Instance) -> Database:
    """A connection to a managed instance this process started (``graphsvc compact``'s
    source and target): the driver's default timeouts, ``settings``' database name."""
    password = instance.password if instance.auth else ""
    return Database(instance.uri, instance.user, password, settings.neo4j.database)


def instrument(service: Service) -> Service:
    """``service`` as an HTTP app serves it (:func:`graphsvc.http.app.create_app`): its
    embedder's calls timed in ``/metrics`` (once: an instrumented Service is left as
    it is) and its background jobs counted there. Returns the same Service."""
    from graphsvc.telemetry.metrics import TimedEmbedder, track_jobs

    if not isinstance(service.embedder, TimedEmbedder):
        service.embedder = TimedEmbedder(service.embedder)
    ref = weakref.ref(service)

    def jobs() -> tuple[int, int]:
        svc = ref()
        if svc is None:
            return 0, 0
        return svc.job_worker().queue_counts()

    track_jobs(id(service), jobs)
    return service


def service_for(
    settings: Settings,
    db: Database,
    embedder: Embedder | None = None,
    tokenizer: Tokenizer | None = None,
    *,
    clock: Callable[[], float] = time.time,
) -> Service:
    """A Service over an open ``db``, built as the root builds it (tests, benches).

    Args:
        settings: configuration (its secret file is read, or created).
        db: an open database.
        embedder: the embedder (default: a lazy sentence model).
        tokenizer: the tokenizer (default: cl100k_base).
        clock: epoch seconds.

    Raises:
        InvalidInputError: the secret file is unsafe or malformed.
    """
    return Parts.for_settings(settings, embedder, tokenizer, clock=clock).service(db)


def build_service(
    settings: Settings,
    *,
    progress: Callable[[str], None] = _stderr,
    die_with_parent: bool = False,
    load_model: bool = False,
) -> tuple[Service, Runtime]:
    """Connect, apply the schema (idempotent) and build the Service.

    Args:
        settings: configuration.
        progress: where launcher and schema notes go (stderr).
        die_with_parent: a managed Neo4j started here stops with this process.
        load_model: load the embedding model now (``serve``: before the first
            request), not on first use.

    Raises:
        LauncherError, StoreError: Neo4j cannot be started or reached.
        InvalidInputError: the secret file is unsafe or malformed.
        ModelLoadError: ``load_model`` and the model cannot be loaded.
        EmbeddingModelMismatchError: the database's embeddings are another model's.
        EntityExtractorMismatchError: its entity index is another extractor's.
    """
    from graphsvc.entities import extractor_for
    from graphsvc.ops.embedding_model import ensure_embedding_model
    from graphsvc.ops.entity_index import ensure_entity_extractor
    from graphsvc.ops.index import FULLTEXT_ANALYZER, fulltext_needs_rebuild

    parts = Parts.for_settings(settings)
    rt = connect(settings, progress=progress, die_with_parent=die_with_parent)
    try:
        model, dimension = parts.embedder.model_name, parts.embedder.dimension
        rt.db.apply_schema(embedding_dimension=dimension)
        ensure_embedding_model(rt.db, model, dimension, progress=progress)
        ensure_entity_extractor(rt.db, extractor_for(settings.ranking.entities), progress=progress)
        old = fulltext_needs_rebuild(rt.db)
        if old is not None:
            progress(
                f"graphsvc: the fulltext index uses the {old!r} analyzer, not "
                f"{FULLTEXT_ANALYZER!r}; run `graphsvc index rebuild --fulltext` once for "
                "the better lexical ranking"
            )
        if load_model and isinstance(parts.embedder, LazyEmbedder):
            parts.embedder.load()
    except BaseException:
        rt.close()
        raise
    rt.parts = parts
    return parts.service(rt.db), rt


@contextmanager
def serving(service: Service, *, progress: Callable[[str], None] = _stderr) -> Iterator[None]:
    """What a serving process does besides answering requests, for as long as it serves.

    Registers the process as a replica of its database (refused with
    REPLICA_KEYS_MISMATCH when a live replica has another MAC secret or signing key,
    ops/replicas.py) and renews the lease on a daemon thread; runs this replica's
    share of the background jobs (its own, and those left by a process that died, at
    start and every ``job_poll_s``); on a clean stop, stops both and gives the lease
    back.
    """
    from graphsvc.ops.replicas import ReplicaLease

    lease = ReplicaLease(
        service.db,
        service.secret,
        service.signing_keys().active_key_id,
        service.clock,
        lease_s=service.settings.operations.replica_lease_s,
    )
    lease.acquire()
    stop = threading.Event()

    def renew() -> None:
        while not stop.wait(lease.renew_every_s):
            try:
                lease.renew()
            except GraphsvcError as exc:  # Neo4j away: the next renewal re-registers
                progress(f"graphsvc: replica lease not renewed: {exc.code}")

    def refresh_facts() -> None:
        # Its own thread: a Neo4j that does not answer holds this one for the driver's
        # retry time, and must not hold the lease's renewal with it.
        while not stop.wait(HEALTH_FACTS_REFRESH_S):
            with contextlib.suppress(GraphsvcError):
                service.refresh_neo4j_facts()

    thread = threading.Thread(target=renew, name="graphsvc-replica-lease", daemon=True)
    thread.start()
    facts = threading.Thread(target=refresh_facts, name="graphsvc-health-facts", daemon=True)
    facts.start()
    worker = service.job_worker()
    worker.start_polling(service.settings.jobs.poll_s)
    try:
        yield
    finally:
        worker.stop()
        stop.set()
        thread.join(timeout=5)
        facts.join(timeout=5)
        with contextlib.suppress(GraphsvcError):
            lease.release()
