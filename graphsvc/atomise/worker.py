"""The background job worker: deferred atomisation and embeddings from the outbox (ATM-9).

A write whose namespace policy defers work writes the jobs in its own transaction
(:mod:`graphsvc.store.jobs`), held by this process's worker for a lease; the write
then hands their ids to the worker (:meth:`JobWorker.submit`), which runs them on
one daemon thread. A job survives the process: when the process dies, its lease
runs out and any worker that looks for claimable jobs takes it
(:meth:`JobWorker.start_polling`: ``graphsvc serve`` and ``graphsvc jobs run`` do,
at start and every ``job_poll_s``). A job runs at most once at a time (the claim
is a locked compare-and-set); running it twice has one effect (an atomised atom
is not atomised again; an embedded head is not embedded again). Its end is
recorded as ``done`` (with the outcome word), ``failed`` (with an error code;
``graphsvc jobs retry`` puts it back), or ``pending`` again after a transient
failure (Neo4j unavailable, a time-out, a concurrent revision), claimable after a
back-off. A job claimed ``job_max_attempts`` times without an end is ``failed``
(``ATTEMPTS_EXHAUSTED``): it cannot crash workers forever.

``submit`` never blocks and never raises into the write; a job's failure is
logged (``graphsvc.atomise`` logger, warning) and recorded, never raised.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final, Protocol

from graphsvc.atomise.usecase import AtomiseDeps, atomise, outcome_word
from graphsvc.core.binding import Binding
from graphsvc.core.write_models import AtomRef
from graphsvc.errors import (
    CasConflictError,
    DeadlineExceededError,
    GraphsvcError,
    NotFoundError,
    PurgePendingError,
    StoreError,
)
from graphsvc.settings import Settings
from graphsvc.store import jobs as store
from graphsvc.store.atomise import embed_head, head_to_embed
from graphsvc.store.connection import Database

__all__ = [
    "DEFERRED_RETRIES",
    "JobHost",
    "JobResult",
    "JobWorker",
    "worker_for",
]

log = logging.getLogger("graphsvc.atomise")

# ATM-7: deferred mode always allows 3 retries; the namespace override is ignored.
DEFERRED_RETRIES: Final = 3
_KEEP_RESULTS: Final = 256
_CLAIM_BATCH: Final = 16
_COUNTS_MAX_AGE_S: Final = 5.0
# A transiently failed job is claimable again after min(2^attempts, cap) seconds.
_BACKOFF_CAP_S: Final = 300.0
# Errors after which the same job may well succeed later.
_TRANSIENT: Final = (StoreError, DeadlineExceededError, CasConflictError, PurgePendingError)


@dataclass(frozen=True)
class JobResult:
    """``outcome`` is ``atomised``, ``embedded``, ``skipped_<reason>``, ``failed`` or
    ``retry`` (a transient failure; the job is pending again)."""

    atom_id: str
    outcome: str
    detail: str = ""
    job_id: str = ""


class JobHost(Protocol):
    """What owns a worker: the store, the settings, and the atomisation's
    dependencies of the moment a job runs."""

    db: Database
    settings: Settings

    def atomise_deps(self) -> AtomiseDeps: ...

    def job_worker(self) -> JobWorker:
        """The one worker this host keeps (holding the host weakly)."""
        ...


def _owner_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class JobWorker:
    """Runs jobs one at a time on a background thread.

    Args:
        deps: gives the current dependencies and settings, or None when the owner
            is gone (its jobs are left to their lease).
        clock: seconds since the epoch (leases are compared in Neo4j by value).
    """

    def __init__(
        self,
        deps: Callable[[], JobHost | None],
        *,
        clock: Callable[[], float] = time.time,
        name: str = "graphsvc-jobs",
    ) -> None:
        self.owner = _owner_name()
        self._host = deps
        self._clock = clock
        self._name = name
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._queue: deque[str] = deque()
        self._running = 0
        self._thread: threading.Thread | None = None
        self._poll_s: float | None = None
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._counts: tuple[float, int, int] | None = None
        self.results: deque[JobResult] = deque(maxlen=_KEEP_RESULTS)
        self.failed = 0
        self.done = 0

    # ------------------------------------------------------------------ control

    def submit(self, job_ids: str | Iterable[str]) -> bool:
        """Run these jobs (already written and held by this worker) soon."""
        ids = [job_ids] if isinstance(job_ids, str) else list(job_ids)
        with self._lock:
            self._queue.extend(ids)
            self._ensure_thread()
        self._wake.set()
        return True

    def start_polling(self, poll_s: float) -> None:
        """Also take claimable jobs of any process (left by a crash), now and every
        ``poll_s`` seconds, until :meth:`stop`."""
        with self._lock:
            self._poll_s = poll_s
            self._stop.clear()
            self._ensure_thread()
        self._wake.set()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop polling; the job running now finishes (its lease covers a hard stop)."""
        self._stop.set()
        self._wake.set()
        thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def wait_idle(self, timeout: float) -> bool:
        """Block until every submitted job has finished, at most ``timeout`` seconds.

        Returns:
            True if the worker is idle.
        """
        with self._idle:
            return self._idle.wait_for(
                lambda: not self._queue and self._running == 0, timeout=timeout
            )

    def drain_once(self) -> bool:
        """Claim and run, in the calling thread, the claimable jobs of one query
        (``graphsvc jobs run --once``); True when there were any."""
        return self._poll_once()

    def queue_counts(self) -> tuple[int, int]:
        """(pending, failed) jobs in the database, re-counted at most every 5 s
        (``/metrics``); this worker's own when the database cannot be asked."""
        now = time.monotonic()
        with self._lock:
            cached = self._counts
            if cached is not None and now - cached[0] < _COUNTS_MAX_AGE_S:
                return cached[1], cached[2]
        host = self._host()
        try:
            if host is None:
                raise StoreError("no host")
            found = store.counts(host.db, None)
            counts = (found["pending"], found["failed"])
        except GraphsvcError:
            return self.pending, self.failed
        with self._lock:
            self._counts = (now, *counts)
        return counts

    @property
    def pending(self) -> int:
        """Jobs this worker holds and has not finished."""
        with self._lock:
            return len(self._queue) + self._running

    def _ensure_thread(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._loop, name=self._name, daemon=True)
            self._thread.start()

    # ------------------------------------------------------------------ loop

    def _loop(self) -> None:
        next_poll = 0.0
        while True:
            job_id = self._next_local()
            if job_id is not None:
                self._run_guarded(job_id)
                continue
            poll_s = self._poll_s
            if poll_s is None or self._stop.is_set():
                with self._lock:
                    if not self._queue:
                        self._thread = None
                        return
                continue
            now = time.monotonic()
            if now >= next_poll:
                next_poll = now + poll_s
                if self._poll_once():
                    next_poll = 0.0  # there may be more
                    continue
            self._wake.wait(max(0.0, next_poll - time.monotonic()))
            self._wake.clear()

    def _next_local(self) -> str | None:
        with self._lock:
            if not self._queue:
                return None
            self._running += 1
            return self._queue.popleft()

    def _poll_once(self) -> bool:
        """Claim and run the claimable jobs of one query; True when there were any."""
        host = self._host()
        if host is None:
            self._stop.set()  # the owner is gone: nothing to run jobs with
            return False
        try:
            ids = store.claimable(host.db, self._clock(), _CLAIM_BATCH)
        except GraphsvcError as exc:
            log.warning("looking for background jobs failed: %s: %s", exc.code, exc.message)
            return False
        for job_id in ids:
            if self._stop.is_set():
                break
            with self._lock:
                self._running += 1
            self._run_guarded(job_id)
        return bool(ids)

    def _run_guarded(self, job_id: str) -> None:
        try:
            result = self.run_one(job_id)
        except Exception as exc:  # a worker never dies of one job (ATM-9)
            log.exception("background job %s could not be run", job_id)
            result = JobResult("", "retry", type(exc).__name__, job_id)
        with self._idle:
            if result is not None:
                self.results.append(result)
                if result.outcome == "failed":
                    self.failed += 1
                elif result.outcome != "retry":
                    self.done += 1
            self._running -= 1
            self._idle.notify_all()

    # ------------------------------------------------------------------ one job

    def run_one(self, job_id: str) -> JobResult | None:
        """Claim ``job_id`` and run it; None when it was not claimable."""
        host = self._host()
        if host is None:
            return JobResult("", "skipped_service_closed", job_id=job_id)
        settings = host.settings
        db = host.db
        now = self._clock()
        job = store.claim(db, job_id, self.owner, now, settings.jobs.lease_s)
        if job is None:
            return None
        if job.attempts > settings.jobs.max_attempts:
            self._finish(db, job, "failed", error="ATTEMPTS_EXHAUSTED")
            log.warning("background job %s given up after %d claims", job_id, job.attempts - 1)
            return JobResult(job.atom_id, "failed", "ATTEMPTS_EXHAUSTED", job_id)
        with _Renewal(db, job.job_id, self.owner, settings.jobs.lease_s, self._clock):
            return self._execute(host, job)

    def _execute(self, host: JobHost, job: store.ClaimedJob) -> JobResult:
        db = host.db
        try:
            word = self._effect(host, job)
        except NotFoundError:
            word = "skipped_not_found"
        except _TRANSIENT as exc:
            retry_at = self._clock() + min(2.0**job.attempts, _BACKOFF_CAP_S)
            log.warning(
                "background job %s (%s of %s) will be retried: %s: %s",
                job.job_id,
                job.kind,
                job.atom_id,
                exc.code,
                exc.message,
            )
            self._finish(db, job, "pending", error=exc.code, retry_at=retry_at)
            return JobResult(job.atom_id, "retry", exc.code, job.job_id)
        except GraphsvcError as exc:
            log.warning(
                "deferred %s of %s failed: %s: %s", job.kind, job.atom_id, exc.code, exc.message
            )
            self._finish(db, job, "failed", error=exc.code)
            return JobResult(job.atom_id, "failed", exc.code, job.job_id)
        if not (job.kind == "atomise" and word == "atomised"):
            # (a committed atomisation recorded its job's end itself)
            self._finish(db, job, "done", outcome=word)
        return JobResult(job.atom_id, word, job_id=job.job_id)

    def _effect(self, host: JobHost, job: store.ClaimedJob) -> str:
        binding = Binding(
            subject=job.subject,
            policy=job.policy,
            actor_kind=job.actor_kind,  # type: ignore[arg-type]  # stored from a Binding
            actor_id=job.actor_id,
            auth_generation=job.auth_generation,
        )
        deps = host.atomise_deps()
        if job.kind == "embed":
            return embed_deferred(deps, binding.subject, AtomRef(job.atom_id, job.rev))
        hold = store.JobHold(job.job_id, self.owner)

        def run() -> str:
            outcome = atomise(
                deps,
                binding,
                job.atom_id,
                max_atom_tokens=job.max_atom_tokens,
                retries=DEFERRED_RETRIES,
                job=hold,
            )
            return outcome_word(outcome)

        try:
            return run()
        except CasConflictError:
            # Another worker (or a revision) moved the head meanwhile; once more
            # tells "already atomised" from a real conflict.
            return run()

    def _finish(
        self,
        db: Database,
        job: store.ClaimedJob,
        state: store.JobState,
        *,
        outcome: str | None = None,
        error: str | None = None,
        retry_at: float | None = None,
    ) -> None:
        try:
            store.finish(
                db,
                job.job_id,
                self.owner,
                state=state,
                now=self._clock(),
                outcome=outcome,
                error=error,
                retry_at=retry_at,
            )
        except GraphsvcError as exc:
            # The effect is committed or absent either way; the job is claimed
            # again after its lease and its second run has no second effect.
            log.warning("could not record the end of job %s: %s", job.job_id, exc.code)


def embed_deferred(deps: AtomiseDeps, subject: str, ref: AtomRef) -> str:
    """Embed a head whose embedding a synchronous atomisation deferred, unless it is
    embedded already, no longer the head, or archived by that atomisation."""
    text = head_to_embed(deps.db, subject, ref)
    if text is None:
        return "skipped_not_needed"
    embed_head(deps.db, subject, ref, deps.embedder.embed([text])[0])
    return "embedded"


class _Renewal:
    """Renews a job's lease every third of it while the job runs."""

    def __init__(
        self, db: Database, job_id: str, owner: str, lease_s: float, clock: Callable[[], float]
    ) -> None:
        self._db, self._job_id, self._owner = db, job_id, owner
        self._lease_s, self._clock = lease_s, clock
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="graphsvc-job-lease", daemon=True)

    def __enter__(self) -> _Renewal:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._done.set()
        self._thread.join(5.0)

    def _loop(self) -> None:
        while not self._done.wait(self._lease_s / 3):
            try:
                store.renew(self._db, self._job_id, self._owner, self._clock() + self._lease_s)
            except GraphsvcError as exc:
                log.warning("could not renew the lease of job %s: %s", self._job_id, exc.code)


def worker_for(host: JobHost) -> JobWorker:
    """The background worker of ``host``: the one its owner keeps
    (:meth:`graphsvc.service.Service.job_worker`, created on first use)."""
    return host.job_worker()
