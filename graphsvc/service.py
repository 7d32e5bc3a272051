"""The facade over the use cases: one method per public operation (SPEC §1).

Resolvers and CLI commands are one call into a :class:`Service` method; the method
passes the narrow dependencies the operation's module (``graphsvc/ops``,
``graphsvc/atomise``, ``graphsvc/forensics``) uses. The Service holds what the
composition root (:mod:`graphsvc.runtime`) built once — database, embedder,
tokenizer, secret, clock — and does no I/O of its own when constructed; build one
with :func:`graphsvc.runtime.build_service` (a process) or
:func:`graphsvc.runtime.service_for` (an open database: tests, benches).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from graphsvc.core.binding import Binding
from graphsvc.core.import_report import ImportProgress, ImportSummary
from graphsvc.core.jobs import JobRow
from graphsvc.core.lineage_views import LineageGraphView
from graphsvc.core.requests import InspectRequest, ReadRequest, SearchRequest
from graphsvc.core.session_window import SessionToken, Shown
from graphsvc.core.views import ExportReport, Health, ManifestReplay, Neo4jServer
from graphsvc.core.write_models import AtomRef, Change
from graphsvc.core.write_plan import Limits
from graphsvc.embed import Embedder
from graphsvc.entities import extractor_for
from graphsvc.forensics.bundle import VerifyReport, verify_bundle
from graphsvc.inputs.models import HostInputIn
from graphsvc.keys.signing_keys import KeyRing
from graphsvc.ops import Database, mcp_sessions
from graphsvc.ops.changes import ChangesPage, changes
from graphsvc.ops.database_facts import KeptReadiness, Readiness, readiness, subject_has_atoms
from graphsvc.ops.export import DEFAULT_PAGE, Window, export_graph

# Result types the edges name in annotations (GraphReader; ForensicExport,
# InspectResult and Via below), re-exported here so that an edge imports the facade
# and never the use case (tests/unit/test_architecture.py).
from graphsvc.ops.graph import GraphReader as GraphReader
from graphsvc.ops.jobs import jobs_page
from graphsvc.ops.mcp_sessions import SessionLimits
from graphsvc.ops.observe import observe
from graphsvc.ops.purge import PurgeOutcome as PurgeOutcome
from graphsvc.ops.purge import purge
from graphsvc.ops.replay import replay_manifest
from graphsvc.ops.usage import UseRecorded as UseRecorded
from graphsvc.ops.usage import record_use, reset_usage
from graphsvc.settings import Settings, fill
from graphsvc.tokenizer import Tokenizer

# The use cases that bring SciPy (the ranking) or httpx (the curators) are imported
# where an operation first needs them, so that a command which uses none of them
# (`graphsvc purge`, `changes`, `export`, `mcp` before its first search) starts
# without them (`python -X importtime -c "import graphsvc.service"` shows the cost).
# None of these is deferred to break a circle: the layers have none, deferred imports
# counted (tests/unit/test_architecture.py).
if TYPE_CHECKING:
    from graphsvc.atomise.hooks import AtomiseHooks
    from graphsvc.atomise.lineage import Lineage
    from graphsvc.atomise.policy import NamespacePolicy as NamespacePolicy
    from graphsvc.atomise.usecase import AtomiseDeps
    from graphsvc.atomise.usecase import AtomiseOutcome as AtomiseOutcome
    from graphsvc.atomise.worker import JobWorker
    from graphsvc.bulk.import_rows import ImportFile
    from graphsvc.forensics.export import BundleParts
    from graphsvc.forensics.export import ForensicExport as ForensicExport
    from graphsvc.ops.inspect import InspectResult as InspectResult
    from graphsvc.ops.inspect import Via as Via
    from graphsvc.ops.read import ReadResult
    from graphsvc.ops.search import SearchResult
    from graphsvc.ops.write import WriteDeps, WriteOutcome

__all__ = ["Service"]


# How old the Neo4j facts of { health } may be before a call reads them itself (a
# serving process refreshes them every HEALTH_FACTS_REFRESH_S).
HEALTH_FACTS_REFRESH_S = 1.0
HEALTH_FACTS_MAX_AGE_S = 3.0


class Service:
    """The operations of SPEC §1 (CORE-1), each taking the caller's Binding.

    Args:
        settings: configuration.
        db: the Neo4j connection.
        embedder: query/body embedder.
        tokenizer: cl100k_base counter.
        secret: the server's MAC secret (InputTokens, cursors, receipts); the root
            reads it from its file (:func:`graphsvc.runtime.secret_of`).
        signing_keys: loads the deployment's Ed25519 key ring (SIG-4) when a use
            case signs or verifies (:meth:`graphsvc.runtime.Parts.signing_keys`).
        verification_keys: loads its public keys alone, creating no key file
            (:meth:`graphsvc.runtime.Parts.verification_keys`; ``graphsvc export``).
        worker_of: makes this Service's background-job worker, on first use
            (:func:`graphsvc.runtime.job_worker_of`).
        clock: epoch seconds (injected so tests can move time).
    """

    def __init__(
        self,
        settings: Settings,
        db: Database,
        embedder: Embedder,
        tokenizer: Tokenizer,
        *,
        secret: bytes,
        signing_keys: Callable[[], KeyRing],
        verification_keys: Callable[[], dict[str, bytes]],
        worker_of: Callable[[Service], JobWorker],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.settings = settings
        self.db = db
        self.embedder = embedder
        self.tokenizer = tokenizer
        self.secret = secret
        self.signing_keys = signing_keys
        self.verification_keys = verification_keys
        self.worker_of = worker_of
        self.clock = clock
        # The entity extractor of GRAPHSVC_ENTITIES (None: no entity index, SPEC §16).
        self.extractor = extractor_for(settings.ranking.entities)
        # The background-job worker (job_worker), made on first use.
        self._worker: JobWorker | None = None
        self._worker_lock = threading.Lock()
        # What Neo4j last said about itself, and when: { health }.
        self._neo4j_facts = KeptReadiness()

    def with_settings(self, settings: Settings) -> Service:
        """The same database, models, secret, key ring and clock under other settings."""
        return Service(
            settings,
            self.db,
            self.embedder,
            self.tokenizer,
            secret=self.secret,
            signing_keys=self.signing_keys,
            verification_keys=self.verification_keys,
            worker_of=self.worker_of,
            clock=self.clock,
        )

    def health(self) -> Health:
        """Server version, schema version and model facts (no data, no auth needed).

        The Neo4j facts are the last ones read, when no older than
        ``HEALTH_FACTS_MAX_AGE_S``: a serving process reads them every second on a
        thread of its own (:func:`graphsvc.runtime.serving`), so ``{ health }`` never
        queues behind data queries on a busy Neo4j; elsewhere, or when Neo4j stopped
        answering that thread, they are read now (and an unreachable Neo4j is the
        error it always was). ``neo4jAgeS`` says how old they are.

        Raises:
            StoreError: the facts are stale and Neo4j is not reachable.
        """
        kept = self.kept_health()
        if kept is None:
            self.refresh_neo4j_facts()
            kept = self.kept_health()
        assert kept is not None  # just read
        return kept

    def kept_health(self) -> Health | None:
        """:meth:`health` from the kept Neo4j facts, with no I/O; None when there are
        none young enough (the caller reads them, off the event loop)."""
        kept = self._neo4j_facts.young(HEALTH_FACTS_MAX_AGE_S)
        if kept is None:
            return None
        facts, age = kept
        return Health(
            neo4j=Neo4jServer(**facts["neo4j"]),
            schema_version=facts["schemaVersion"],
            neo4j_age_s=round(age, 3),
            embedding_model=self.embedder.model_name,
            embedding_dimension=self.embedder.dimension,
            query_runtime=getattr(self.embedder, "query_runtime", "torch"),
            tokenizer=self.tokenizer.name,
            curator=self.settings.atomise.curator,
            entity_extractor=None if self.extractor is None else self.extractor.version,
        )

    def refresh_neo4j_facts(self) -> None:
        """Ask Neo4j for the facts ``{ health }`` reports; forget the kept ones when it
        does not answer.

        Raises:
            StoreError: Neo4j is not reachable.
        """
        self._neo4j_facts.refresh(self.db)

    def readiness(self) -> Readiness:
        """``/readyz``: Neo4j answers and the schema is current (raises otherwise)."""
        return readiness(self.db)

    @property
    def readiness_timeout_s(self) -> float:
        """How long a readiness check may take: a connection, then the driver's retries."""
        return self.db.acquisition_timeout_s + self.db.max_retry_time_s + 1.0

    @staticmethod
    def write_limits(settings: Settings) -> Limits:
        """The write plan's limits under ``settings`` (checked before connecting)."""
        from graphsvc.ops.write import limits_from_settings

        return limits_from_settings(settings)

    @staticmethod
    def require_curator_tier(settings: Settings) -> None:
        """ATM-4: atomisation needs a curator tier (checked before connecting).

        Raises:
            TierLockedError: ``settings.atomise.curator`` is ``none``.
        """
        from graphsvc.atomise.usecase import require_curator_tier

        require_curator_tier(settings)

    def job_worker(self) -> JobWorker:
        """This service's background-job worker, created on first use (one per
        Service, ATM-7) by the root's ``worker_of``. It holds the Service weakly: once
        the Service is gone its held jobs wait for their lease and another worker."""
        with self._worker_lock:
            if self._worker is None:
                self._worker = self.worker_of(self)
            return self._worker

    def write_deps(self) -> WriteDeps:
        """What the write use case uses (:class:`graphsvc.ops.write.WriteDeps`)."""
        from graphsvc.ops.write import WriteDeps, limits_from_settings

        return WriteDeps(
            db=self.db,
            embedder=self.embedder,
            tokenizer=self.tokenizer,
            secret=self.secret,
            clock=self.clock,
            limits=limits_from_settings(self.settings),
            extractor=self.extractor,
        )

    def atomise_deps(self) -> AtomiseDeps:
        """What the host layer uses (:class:`graphsvc.atomise.usecase.AtomiseDeps`)."""
        from graphsvc.atomise.usecase import AtomiseDeps

        return AtomiseDeps(
            db=self.db,
            embedder=self.embedder,
            tokenizer=self.tokenizer,
            secret=self.secret,
            clock=self.clock,
            config=self.settings.atomise,
            token_lifetime_s=self.settings.lifetimes.token_lifetime_s,
            signing_keys=self.signing_keys,
            extractor=self.extractor,
        )

    def write(
        self, binding: Binding, changes: list[Change], idempotency_key: str | None = None
    ) -> WriteOutcome:
        """SPEC §2 ``write`` under the caller's namespace policy; see
        :func:`graphsvc.atomise.policy_write.write_under_policy`."""
        from graphsvc.atomise.policy_write import write_under_policy

        return write_under_policy(
            self.write_deps(),
            self.atomise_deps(),
            self.job_worker(),
            self.settings.jobs.lease_s,
            binding,
            changes,
            idempotency_key,
        )

    def observe(self, binding: Binding, host_input: HostInputIn) -> str:
        """SPEC §3 ``observe``; see :func:`graphsvc.ops.observe.observe`."""
        return observe(
            self.db,
            self.secret,
            self.clock,
            self.settings.lifetimes.token_lifetime_s,
            binding,
            host_input,
        )

    def _session_limits(self) -> SessionLimits:
        return fill(SessionLimits, self.settings.client)

    def mcp_session_open(self, binding: Binding) -> str:
        """A new MCP session of ``binding`` (SPEC §17, MCP-1); its id. See
        :func:`graphsvc.ops.mcp_sessions.open_session`."""
        return mcp_sessions.open_session(self.db, self.clock, self._session_limits(), binding)

    def mcp_session_touch(self, binding: Binding, session_id: str) -> bool:
        """Whether ``session_id`` is a live MCP session of ``binding``."""
        return mcp_sessions.touch(self.db, self.clock, self._session_limits(), binding, session_id)

    def mcp_session_live(self, binding: Binding, session_id: str) -> bool:
        """Whether ``session_id`` is a live MCP session of ``binding`` (a read; the
        tool call's :meth:`mcp_session_present` restarts its idle time)."""
        return mcp_sessions.live(self.db, self.clock, binding, session_id)

    def mcp_session_present(
        self, binding: Binding, session_id: str, shown: Sequence[Shown]
    ) -> bool:
        """End a tool call of the session: one write checks it, restarts its idle
        time and adds what the call showed to its window (MCP-1)."""
        return mcp_sessions.present(
            self.db, self.clock, self._session_limits(), binding, session_id, shown
        )

    def mcp_session_close(self, binding: Binding, session_id: str) -> bool:
        """End an MCP session (its window is deleted)."""
        return mcp_sessions.close_session(self.db, binding, session_id)

    def mcp_session_discard(self, binding: Binding, token: str) -> None:
        """Forget a session token whose change was refused (nothing stays behind)."""
        mcp_sessions.discard_token(self.db, self.secret, binding, token)

    def mcp_session_token(
        self, binding: Binding, session_id: str, payload_digest: str
    ) -> SessionToken:
        """The InputToken the session's host issues for a change (MCP-2); see
        :func:`graphsvc.ops.mcp_sessions.session_token`.

        Raises:
            TokenInvalidError: the session has ended.
            PurgePendingError: a purge in this subject has not finished.
        """
        return mcp_sessions.session_token(
            self.db,
            self.secret,
            self.clock,
            self.settings.lifetimes.token_lifetime_s,
            binding,
            session_id,
            payload_digest,
        )

    def search(self, binding: Binding, request: SearchRequest) -> SearchResult:
        """SPEC §5 ``search``; see :func:`graphsvc.ops.search.search`."""
        from graphsvc.ops.search import SearchLimits, search

        limits = SearchLimits.from_settings(self.settings)
        return search(self.db, self.embedder, self.secret, self.clock, limits, binding, request)

    def record_use(
        self,
        binding: Binding,
        event_id: str,
        manifest: dict[str, Any],
        atoms: Sequence[AtomRef] | None = None,
    ) -> UseRecorded:
        """``recordUse``; see :func:`graphsvc.ops.usage.record_use`."""
        return record_use(self.db, self.clock, binding, event_id, manifest, atoms)

    def reset_usage(self, binding: Binding, atom_id: str | None = None) -> int:
        """``resetUsage``; see :func:`graphsvc.ops.usage.reset_usage`."""
        return reset_usage(self.db, binding, atom_id)

    def read(self, binding: Binding, request: ReadRequest) -> ReadResult:
        """SPEC §8 ``read``; see :func:`graphsvc.ops.read.read`."""
        from graphsvc.ops.read import ReadLimits, read

        limits = ReadLimits.from_settings(self.settings)
        return read(
            self.db,
            self.embedder,
            self.tokenizer,
            self.secret,
            self.clock,
            limits,
            binding,
            request,
        )

    def inspect(self, binding: Binding, request: InspectRequest) -> InspectResult:
        """SPEC §7 ``inspect``; see :func:`graphsvc.ops.inspect.inspect`."""
        from graphsvc.ops.inspect import InspectLimits, inspect

        limits = InspectLimits.from_settings(self.settings)
        model = self.embedder.model_name
        return inspect(self.db, self.secret, self.clock, model, limits, binding, request)

    def purge(self, binding: Binding, atom_id: str) -> PurgeOutcome:
        """SPEC §6 ``purge`` (operator); see :func:`graphsvc.ops.purge.purge`."""
        return purge(self.db, self.clock, binding, atom_id)

    # ------------------------------------------------ host layer: atomisation (§11-§12)
    def atomise(
        self,
        binding: Binding,
        atom_id: str,
        *,
        force: bool = False,
        max_atom_tokens: int | None = None,
        retries: int = 3,
        hooks: AtomiseHooks | None = None,
    ) -> AtomiseOutcome:
        """``atomise`` (ATM-1…10); see :func:`graphsvc.atomise.usecase.atomise`."""
        from graphsvc.atomise.usecase import atomise

        return atomise(
            self.atomise_deps(),
            binding,
            atom_id,
            force=force,
            max_atom_tokens=max_atom_tokens,
            retries=retries,
            hooks=hooks,
        )

    def set_namespace_policy(self, binding: Binding, policy: object) -> NamespacePolicy:
        """``setNamespacePolicy`` (ATM-8); see :mod:`graphsvc.atomise.policy`."""
        from graphsvc.atomise.policy import set_namespace_policy

        return set_namespace_policy(self.db, self.clock, binding, policy)

    def subject_has_atoms(self, subject: str) -> bool:
        """Whether ``subject`` holds any atom (a warning for a misspelt subject)."""
        return subject_has_atoms(self.db, subject)

    def namespace_policy(self, binding: Binding) -> NamespacePolicy:
        """The caller's namespace auto-atomise policy (§11), as stored."""
        from graphsvc.atomise.policy import get_namespace_policy

        return get_namespace_policy(self.db, binding)

    def jobs(
        self, binding: Binding, state: str | None, first: int
    ) -> tuple[list[JobRow], dict[str, int]]:
        """The caller's background jobs, newest first, and the counts per state."""
        return jobs_page(self.db, binding.subject, state, first)

    def replay_manifest(self, binding: Binding, manifest_id: str) -> ManifestReplay | None:
        """Read replay (docs/time-travel.md); see :mod:`graphsvc.ops.replay`."""
        return replay_manifest(
            self.db, self.clock(), self.settings.lifetimes.manifest_lifetime_s, binding, manifest_id
        )

    def changes(
        self,
        binding: Binding,
        *,
        since: str | None = None,
        until: str | None = None,
        after: int | None = None,
        first: int | None = None,
    ) -> ChangesPage:
        """The change feed (docs/time-travel.md); see :func:`graphsvc.ops.changes.changes`."""
        return changes(
            self.db,
            binding,
            since=since,
            until=until,
            after=after,
            first=self.settings.graphql.default_first if first is None else first,
            max_first=self.settings.graphql.max_first,
        )

    def graph_reader(self, binding: Binding) -> GraphReader:
        """The typed graph's batched reads for ``binding`` (docs/graphql.md), which the
        GraphQL DataLoaders call; see :class:`graphsvc.ops.graph.GraphReader`."""
        return GraphReader(self.db, binding, self.settings.graphql)

    def public_keys(self) -> dict[str, bytes]:
        """keyId → public key of the deployment's signing keys (current and retired),
        to check lineage signatures (SIG-4); loading creates the key ring on first use
        (:meth:`graphsvc.runtime.Parts.signing_keys`)."""
        return self.signing_keys().public_keys()

    def lineage(self, binding: Binding, atom_id: str, depth: int | None = None) -> Lineage:
        """``lineage`` (API-5); see :func:`graphsvc.atomise.lineage.lineage`."""
        from graphsvc.atomise.lineage import lineage

        return lineage(self.db, binding, atom_id, depth)

    def lineage_graph(
        self,
        binding: Binding,
        atom_id: str,
        depth: int | None = None,
        as_of: str | None = None,
    ) -> LineageGraphView:
        """``lineageGraph``: the lineage neighbourhood as nodes and edges, each
        derives_from edge's signature verified; see
        :func:`graphsvc.atomise.verified_lineage.lineage_graph`."""
        from graphsvc.atomise.verified_lineage import lineage_graph

        return lineage_graph(self.db, self.public_keys, binding, atom_id, depth, as_of)

    def export_graph(
        self,
        binding: Binding,
        fmt: str,
        target: IO[str] | Path,
        *,
        revisions: bool = False,
        page_size: int | None = None,
        progress: Callable[[ExportReport], None] | None = None,
        as_of: str | None = None,
        since: str | None = None,
    ) -> ExportReport:
        """``graphsvc export`` (docs/analysts.md): the caller's subject streamed as
        ``fmt`` to ``target``, lineage signatures checked against the deployment's keys
        (none created); see :func:`graphsvc.ops.export.export_graph`."""
        return export_graph(
            self.db,
            binding,
            fmt,
            target,
            revisions=revisions,
            page_size=DEFAULT_PAGE if page_size is None else page_size,
            public_keys=self.verification_keys,
            progress=progress,
            window=Window(as_of=as_of, since=since),
        )

    def export_forensic_bundle(
        self, binding: Binding, atom_id: str, *, include_atomisation_chain: bool = True
    ) -> ForensicExport:
        """``exportForensicBundle`` (SIG-3); see :mod:`graphsvc.forensics.export`."""
        from graphsvc.forensics.export import export_forensic_bundle

        return export_forensic_bundle(
            self.db,
            self.signing_keys,
            self.clock,
            binding,
            atom_id,
            include_atomisation_chain=include_atomisation_chain,
        )

    def collect_forensic_bundle(
        self, binding: Binding, atom_id: str, *, include_atomisation_chain: bool = True
    ) -> BundleParts:
        """What ``graphsvc export-forensic-bundle`` writes to a file (SIG-3)."""
        from graphsvc.forensics.export import collect_bundle

        return collect_bundle(
            self.db,
            self.signing_keys,
            self.clock,
            binding,
            atom_id,
            include_atomisation_chain=include_atomisation_chain,
        )

    @staticmethod
    def scan_import(
        settings: Settings, binding: Binding, path: Path, batch_size: int
    ) -> ImportFile:
        """``graphsvc import``'s first pass over ``path``, without the database: every
        row checked as ``write`` checks it before Neo4j (``bulk.import_rows.scan``)."""
        from graphsvc.bulk.import_rows import import_limits, scan

        return scan(path, binding, import_limits(settings, batch_size))

    def import_file(
        self,
        binding: Binding,
        path: Path,
        *,
        batch_size: int,
        scanned: ImportFile | None = None,
        progress: Callable[[ImportProgress], None] | None = None,
    ) -> ImportSummary:
        """``graphsvc import``: ``path`` in batches through the write path; see
        :func:`graphsvc.bulk.bulk_import.import_file`."""
        from graphsvc.bulk.bulk_import import import_file

        return import_file(
            self, binding, path, batch_size=batch_size, scanned=scanned, progress=progress
        )

    @staticmethod
    def verify_bundle(path: str) -> VerifyReport:
        """Verify a forensic bundle file offline (no database, no Service needed)."""
        return verify_bundle(path)
