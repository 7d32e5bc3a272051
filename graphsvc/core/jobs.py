"""A background job as the operator and the API show it (no Neo4j here)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["JobRow"]


@dataclass(frozen=True)
class JobRow:
    """A job as ``graphsvc jobs list`` and the GraphQL ``jobs`` field show it."""

    job_id: str
    subject: str
    kind: str
    atom_id: str
    rev: int
    state: str
    attempts: int
    outcome: str | None
    last_error: str | None
    created_at: str
    updated_at: str
    lease_owner: str | None
    lease_until: float | None

    def to_json(self) -> dict[str, Any]:
        return {
            "jobId": self.job_id,
            "subject": self.subject,
            "kind": self.kind,
            "atomId": self.atom_id,
            "rev": self.rev,
            "state": self.state,
            "attempts": self.attempts,
            "outcome": self.outcome,
            "lastError": self.last_error,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
            "leaseOwner": self.lease_owner,
            "leaseUntil": self.lease_until,
        }
