"""GraphQL view of the caller's background jobs (deferred atomisation and embeddings).

``jobs(state, first)``: the caller's subject only, newest first, with the counts per
state. Retrying a failed job is an operator's act (``graphsvc jobs retry``).
"""

from __future__ import annotations

import asyncio
from enum import Enum

import strawberry
from strawberry.types import Info

from graphsvc.api.context import binding_of, service_of
from graphsvc.core.instants import utc_z
from graphsvc.core.jobs import JobRow
from graphsvc.errors import InvalidInputError

__all__ = ["JOBS_FIRST_MAX", "JobsQuery"]

JOBS_FIRST_MAX = 100


@strawberry.enum(description="Where a background job stands.")
class JobState(Enum):
    PENDING = strawberry.enum_value("pending", description="Not ended: waiting or running.")
    DONE = strawberry.enum_value("done", description="Ended with its effect (or none needed).")
    FAILED = strawberry.enum_value(
        "failed", description="Given up; an operator may retry it (`graphsvc jobs retry`)."
    )


@strawberry.enum(description="What a background job does.")
class JobKind(Enum):
    ATOMISE = strawberry.enum_value(
        "atomise", description="A deferred atomisation of the atom (ATM-9)."
    )
    EMBED = strawberry.enum_value(
        "embed", description="The embedding of a head a synchronous atomisation deferred."
    )


@strawberry.type(description="One background job, caused by a write of the caller's subject.")
class BackgroundJob:
    job_id: strawberry.ID = strawberry.field(description="The job's id.")
    kind: JobKind = strawberry.field(description="What it does.")
    atom_id: strawberry.ID = strawberry.field(description="The atom it is about.")
    rev: int = strawberry.field(description="The revision the write created.")
    state: JobState = strawberry.field(description="Where it stands.")
    attempts: int = strawberry.field(description="How many times a worker has taken it.")
    outcome: str | None = strawberry.field(
        description="For a done job: atomised, embedded or skipped_<reason>."
    )
    last_error: str | None = strawberry.field(
        description="The stable error code of its last failure, if any."
    )
    created_at: str = strawberry.field(description="When the write committed it (ISO 8601).")
    updated_at: str = strawberry.field(description="Its last change of state (ISO 8601).")


@strawberry.type(description="How many of the caller's jobs are in each state.")
class JobCounts:
    pending: int = strawberry.field(description="Waiting or running.")
    done: int = strawberry.field(description="Ended with their effect.")
    failed: int = strawberry.field(description="Given up.")


@strawberry.type(description="The caller's background jobs, newest first.")
class JobList:
    counts: JobCounts = strawberry.field(description="Jobs per state (all of them).")
    items: list[BackgroundJob] = strawberry.field(
        description=f"The newest `first` jobs (at most {JOBS_FIRST_MAX})."
    )


def _job(row: JobRow) -> BackgroundJob:
    return BackgroundJob(
        job_id=strawberry.ID(row.job_id),
        kind=JobKind(row.kind),
        atom_id=strawberry.ID(row.atom_id),
        rev=row.rev,
        state=JobState(row.state),
        attempts=row.attempts,
        outcome=row.outcome,
        last_error=row.last_error,
        created_at=utc_z(row.created_at),
        updated_at=utc_z(row.updated_at),
    )


@strawberry.type
class JobsQuery:
    @strawberry.field(
        description="The caller's background jobs (deferred atomisations and embeddings), "
        f"newest first; `first` in 0..{JOBS_FIRST_MAX} (default 20)."
    )
    async def jobs(self, info: Info, state: JobState | None = None, first: int = 20) -> JobList:
        if not 0 <= first <= JOBS_FIRST_MAX:
            raise InvalidInputError(f"first must be in 0..{JOBS_FIRST_MAX}")
        binding = binding_of(info)
        service = service_of(info)
        rows, counts = await asyncio.to_thread(
            service.jobs, binding, None if state is None else str(state.value), first
        )
        return JobList(counts=JobCounts(**counts), items=[_job(r) for r in rows])
