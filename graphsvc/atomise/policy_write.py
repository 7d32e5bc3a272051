"""``write`` as the facade answers it: the core write under the caller's namespace
policy (SPEC §11, ATM-8/9).

A namespace policy may atomise what a write created. The work it causes is written
as background jobs in the write's own transaction (the outbox,
:mod:`graphsvc.store.jobs`), held by this process's worker; after the commit the
host layer (:func:`graphsvc.atomise.policy.after_write`) hands deferred jobs to the
worker, or atomises synchronously and records the ``embed`` jobs it made needless
as done. In synchronous mode the source's own embedding is skipped.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from graphsvc.atomise.policy import after_write, embedding_deferral, get_namespace_policy, jobs_for
from graphsvc.atomise.usecase import AtomiseDeps
from graphsvc.core.binding import Binding
from graphsvc.core.write_models import Change
from graphsvc.ops.write import WriteDeps, WriteOutcome, write
from graphsvc.store import jobs as job_store
from graphsvc.store.jobs import NewJob
from graphsvc.store.write_steps import NewRevision

__all__ = ["JobHolder", "write_under_policy"]


class JobHolder(Protocol):
    """The process's background-job worker, as a write uses it
    (:class:`graphsvc.atomise.worker.JobWorker`)."""

    owner: str

    def submit(self, job_ids: list[str]) -> bool:
        """Run these committed jobs (held by :attr:`owner`) soon (True: queued)."""
        ...


def write_under_policy(
    deps: WriteDeps,
    host: AtomiseDeps,
    worker: JobHolder,
    lease_s: float,
    binding: Binding,
    changes: list[Change],
    idempotency_key: str | None = None,
) -> WriteOutcome:
    """SPEC §2 ``write`` (:func:`graphsvc.ops.write.write`), then the namespace
    policy's host-layer work on what it committed.

    Args:
        deps: what the core write uses.
        host: what the host layer uses (its curator tier, tokenizer, database).
        worker: holds the jobs the write causes (their lease owner) and runs them.
        lease_s: how long the worker holds a new job before any worker may take it.
        binding: the caller.
        changes: the batch.
        idempotency_key: replays a committed batch with the same key.

    Returns:
        The write's outcome; ``extra`` says what the policy did, when it did anything.

    Raises:
        GraphsvcError: as :func:`graphsvc.ops.write.write` raises (the policy's own
            failures never raise: the write has committed).
    """
    policy = get_namespace_policy(deps.db, binding)
    curator = host.config.curator
    plan = jobs_for(curator, policy, owner=worker.owner, lease_until=deps.clock() + lease_s)
    planned: list[NewJob] = []

    def jobs(revisions: Sequence[NewRevision]) -> list[NewJob]:
        assert plan is not None
        planned[:] = plan(revisions)
        return planned

    outcome = write(
        deps,
        binding,
        changes,
        idempotency_key,
        defer_embedding=embedding_deferral(curator, deps.tokenizer, policy),
        jobs_for=None if plan is None else jobs,
    )

    def finish(ids: list[str], word: str) -> None:
        for job_id in ids:
            job_store.finish(
                deps.db, job_id, worker.owner, state="done", now=deps.clock(), outcome=word
            )

    return after_write(
        host, binding, outcome, policy, jobs=planned, submit=worker.submit, finish=finish
    )
