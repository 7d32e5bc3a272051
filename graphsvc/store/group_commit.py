"""Group commit: rows queued by concurrent requests, written one transaction per batch.

While one batch commits, the next rows queue; the drain then writes all of them (up
to a bound) together, so a transaction's fixed cost — on Neo4j (the commit, locks
on shared nodes) and here (a session, a round trip) — is paid once per batch, not
once per request. Nothing waits for a window to fill: an idle queue writes a lone
row at once. The batch is one transaction, so it commits whole or not at all.

The drain runs on the store's worker pool outside any request's scope: a batch
holds several requests' rows, so it must not be cut short by the deadline of the
request that happened to start it (each request bounds its own wait instead).
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Generic, TypeVar

from graphsvc.store.connection import Database

__all__ = ["GroupCommit", "queue_of"]

T = TypeVar("T")


class GroupCommit(Generic[T]):
    """Rows of type ``T`` waiting to be written by ``write_batch``, ``max_batch`` at a time.

    Args:
        db: its worker pool runs the drain.
        write_batch: writes a list of rows in one transaction (raises on failure).
        max_batch: the most rows one transaction writes.
        label: names the drain's work in errors.
    """

    def __init__(
        self,
        db: Database,
        write_batch: Callable[[list[T]], object],
        *,
        max_batch: int,
        label: str,
    ) -> None:
        self.db = db
        self.write_batch = write_batch
        self.max_batch = max_batch
        self.label = label
        self.lock = threading.Lock()
        self.pending: list[tuple[T, Future[None]]] = []
        self.draining = False

    def put(self, row: T) -> Future[None]:
        """Queue ``row``; the future is done once its batch committed, or holds the
        batch's error (then nothing of that batch was written)."""
        future: Future[None] = Future()
        with self.lock:
            self.pending.append((row, future))
            start, self.draining = not self.draining, True
        if start:
            try:
                # An empty context: no request's deadline or scope goes with the drain.
                contextvars.Context().run(self.db.soon, self._drain, label=self.label)
            except BaseException as exc:  # the pool is shut down: nothing will drain
                self._fail_all(exc)
        return future

    def _fail_all(self, exc: BaseException) -> None:
        with self.lock:
            batch, self.pending, self.draining = self.pending, [], False
        for _, future in batch:
            future.set_exception(exc)

    def _drain(self) -> None:
        while True:
            with self.lock:
                batch = self.pending[: self.max_batch]
                del self.pending[: self.max_batch]
                if not batch:
                    self.draining = False
                    return
            try:
                self.write_batch([row for row, _ in batch])
            except BaseException as exc:
                for _, future in batch:
                    future.set_exception(exc)
            else:
                for _, future in batch:
                    future.set_result(None)


def queue_of(
    db: Database,
    name: str,
    write_batch: Callable[[list[T]], object],
    *,
    max_batch: int,
    label: str,
) -> GroupCommit[T]:
    """``db``'s queue called ``name``, made on first use (one per Database; a race
    makes two and keeps one, before either holds a row)."""
    queue: GroupCommit[T] | None = db.facts.get(name)
    if queue is None:
        made = GroupCommit(db, write_batch, max_batch=max_batch, label=label)
        queue = db.facts.setdefault(name, made)
    return queue
