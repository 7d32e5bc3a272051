"""``graphsvc jobs list|retry|run``: the durable background jobs (operators).

Deferred atomisations and deferred embeddings are jobs in Neo4j, written with the
write that causes them (atomise/worker.py, docs/operations.md#background-jobs).

- ``list [--subject S] [--state pending|done|failed] [--limit N]``: newest first,
  with the counts per state; exits 0.
- ``retry JOB_ID [--subject S]``: a ``failed`` job back to ``pending`` with a fresh
  attempt budget; a running ``graphsvc serve`` (or ``jobs run``) takes it within
  ``GRAPHSVC_JOB_POLL_S``. Exits 0, 2 (no such job), or 1 (the job is not failed:
  nothing to do).
- ``run [--once]``: a worker without the HTTP API: takes claimable jobs (left by a
  process that died, or retried) until interrupted, or with ``--once`` until none
  is left; exits 0.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from graphsvc.cli.common import int_in
from graphsvc.cli.exit_codes import EXIT_INFORMATIONAL, EXIT_OK
from graphsvc.cli.output import command, emit, progress
from graphsvc.core.instants import utc_z
from graphsvc.errors import InvalidInputError, NotFoundError
from graphsvc.settings import Settings

__all__ = ["register"]

_MAX_LIMIT = 1_000


def register(sub: Any) -> None:
    p = sub.add_parser("jobs", help="list, retry or run the background jobs")
    actions = p.add_subparsers(dest="action", required=True)

    ls = actions.add_parser("list", help="jobs, newest first, and the counts per state")
    ls.add_argument("--subject", help="only this subject's jobs (default: every subject)")
    ls.add_argument("--state", choices=["pending", "done", "failed"])
    ls.add_argument(
        "--limit",
        type=int_in(1, _MAX_LIMIT),
        default=50,
        help=f"at most this many (1..{_MAX_LIMIT})",
    )
    ls.add_argument("--json", action="store_true", help="print one JSON document")
    ls.set_defaults(handler=_list)

    retry = actions.add_parser("retry", help="put a failed job back to pending")
    retry.add_argument("job_id")
    retry.add_argument("--subject", help="refuse a job of another subject")
    retry.add_argument("--json", action="store_true", help="print one JSON document")
    retry.set_defaults(handler=_retry)

    run = actions.add_parser("run", help="a worker for claimable jobs, without the HTTP API")
    run.add_argument("--once", action="store_true", help="stop when no job is left")
    run.add_argument("--json", action="store_true", help="print one JSON document at the end")
    run.set_defaults(handler=_run)


@command
def _list(args: argparse.Namespace, settings: Settings) -> int:
    from graphsvc.cli.common import connected_admin

    with connected_admin(settings) as admin:
        rows, counts = admin.jobs(args.subject, args.state, args.limit)
    payload = {"counts": counts, "jobs": [r.to_json() for r in rows]}
    lines = [" ".join(f"{k} {v}" for k, v in counts.items())]
    lines += [
        f"{r.job_id}  {r.state:<7} {r.kind:<7} {r.subject}/{r.atom_id}@{r.rev}  "
        f"attempts {r.attempts}  {r.outcome or r.last_error or ''}  {utc_z(r.updated_at)}"
        for r in rows
    ]
    emit(args, payload, "\n".join(lines))
    return EXIT_OK


@command
def _retry(args: argparse.Namespace, settings: Settings) -> int:
    from graphsvc.cli.common import connected_admin

    if not args.job_id.strip():
        raise InvalidInputError("a job id is required")
    with connected_admin(settings) as admin:
        result = admin.retry_job(args.job_id, args.subject, "cli")
    if result == "not_found":
        raise NotFoundError(f"no job {args.job_id}")
    emit(
        args,
        {"jobId": args.job_id, "result": result},
        f"job {args.job_id}: "
        + ("pending again" if result == "retried" else "not failed; nothing to do"),
    )
    return EXIT_OK if result == "retried" else EXIT_INFORMATIONAL


@command
def _run(args: argparse.Namespace, settings: Settings) -> int:
    from graphsvc.cli.common import connected_service

    with connected_service(settings) as service:
        worker = service.job_worker()
        ran = 0
        if args.once:
            while worker.drain_once():
                ran = worker.done + worker.failed
        else:
            progress(f"graphsvc: running background jobs (every {settings.jobs.poll_s:g} s)")
            worker.start_polling(settings.jobs.poll_s)
            try:
                while True:
                    time.sleep(3600)
            except KeyboardInterrupt:
                worker.stop()
            ran = worker.done + worker.failed
    emit(
        args,
        {"done": worker.done, "failed": worker.failed},
        f"{ran} jobs ended: {worker.done} done, {worker.failed} failed",
    )
    return EXIT_OK
