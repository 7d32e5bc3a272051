"""The deferred atomisation worker (ATM-9): a queue drained by one daemon thread.

``submit`` never blocks and never raises into the write that triggered it; a job's
failure is logged (``graphsvc.atomise`` logger, warning) and counted, never raised.
One worker per host (the :class:`~graphsvc.service.Service` facade, see
:func:`worker_for`); the thread starts with the first job and is a daemon, so it
never keeps a process alive.
"""

from __future__ import annotations

import logging
import queue
import threading
import weakref
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Protocol

from graphsvc.atomise.usecase import AtomiseDeps, atomise, outcome_word
from graphsvc.core.binding import Binding
from graphsvc.errors import GraphsvcError

__all__ = [
    "DEFERRED_RETRIES",
    "AtomiseHost",
    "AtomiseJob",
    "AtomiseWorker",
    "JobResult",
    "worker_for",
]

log = logging.getLogger("graphsvc.atomise")

# ATM-7: deferred mode always allows 3 retries; the namespace override is ignored.
DEFERRED_RETRIES: Final = 3
_QUEUE_LIMIT: Final = 10_000
_KEEP_RESULTS: Final = 256


@dataclass(frozen=True)
class AtomiseJob:
    """One deferred atomisation of ``atom_id`` for the binding that wrote it."""

    binding: Binding
    atom_id: str
    max_atom_tokens: int


@dataclass(frozen=True)
class JobResult:
    """``outcome`` is ``atomised``, ``skipped_<reason>`` or ``failed``."""

    atom_id: str
    outcome: str
    detail: str = ""


class AtomiseWorker:
    """Runs :class:`AtomiseJob` items one at a time on a background thread.

    Args:
        run: does one job and returns its outcome word; an exception is a failure.
        name: the thread's name.
    """

    def __init__(self, run: Callable[[AtomiseJob], str], *, name: str = "graphsvc-atomise"):
        self._run = run
        self._name = name
        self._queue: queue.Queue[AtomiseJob] = queue.Queue(maxsize=_QUEUE_LIMIT)
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._unfinished = 0
        self._thread: threading.Thread | None = None
        self.results: deque[JobResult] = deque(maxlen=_KEEP_RESULTS)
        self.failed = 0
        self.done = 0

    def submit(self, job: AtomiseJob) -> bool:
        """Queue a job without blocking.

        Returns:
            False (and logs) when the queue is full; the write is unaffected.
        """
        with self._lock:
            try:
                self._queue.put_nowait(job)
            except queue.Full:
                log.warning("atomise queue full; dropped deferred job for %s", job.atom_id)
                return False
            self._unfinished += 1
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name=self._name, daemon=True)
                self._thread.start()
        return True

    def wait_idle(self, timeout: float) -> bool:
        """Block until every submitted job has finished, at most ``timeout`` seconds.

        Returns:
            True if the worker is idle.
        """
        with self._idle:
            return self._idle.wait_for(lambda: self._unfinished == 0, timeout=timeout)

    @property
    def pending(self) -> int:
        with self._lock:
            return self._unfinished

    def _loop(self) -> None:
        while True:
            try:
                job = self._queue.get(timeout=5.0)
            except queue.Empty:
                with self._lock:
                    if self._queue.empty():
                        self._thread = None
                        return
                continue
            result = self._one(job)
            with self._idle:
                self.results.append(result)
                if result.outcome == "failed":
                    self.failed += 1
                else:
                    self.done += 1
                self._unfinished -= 1
                self._idle.notify_all()

    def _one(self, job: AtomiseJob) -> JobResult:
        try:
            return JobResult(job.atom_id, self._run(job))
        except GraphsvcError as exc:
            log.warning(
                "deferred atomisation of %s failed: %s: %s", job.atom_id, exc.code, exc.message
            )
            return JobResult(job.atom_id, "failed", exc.code)
        except Exception as exc:  # a worker never dies of one job (ATM-9)
            log.exception("deferred atomisation of %s failed", job.atom_id)
            return JobResult(job.atom_id, "failed", type(exc).__name__)


class AtomiseHost(Protocol):
    """What owns a worker: it gives the atomisation's dependencies when a job runs."""

    def atomise_deps(self) -> AtomiseDeps: ...


_WORKERS: weakref.WeakKeyDictionary[Any, AtomiseWorker] = weakref.WeakKeyDictionary()
_WORKERS_LOCK = threading.Lock()


def worker_for(host: AtomiseHost) -> AtomiseWorker:
    """The deferred worker of ``host`` (created on first use).

    The worker holds the host weakly: a job that runs after the host is gone is
    ``skipped_service_closed``; otherwise it atomises with the host's dependencies
    of that moment and the deferred retries (ATM-7).
    """
    with _WORKERS_LOCK:
        worker = _WORKERS.get(host)
        if worker is None:
            ref = weakref.ref(host)

            def run(job: AtomiseJob) -> str:
                owner = ref()
                if owner is None:
                    return "skipped_service_closed"
                outcome = atomise(
                    owner.atomise_deps(),
                    job.binding,
                    job.atom_id,
                    max_atom_tokens=job.max_atom_tokens,
                    retries=DEFERRED_RETRIES,
                )
                return outcome_word(outcome)

            worker = AtomiseWorker(run)
            _WORKERS[host] = worker
        return worker
