"""Namespace policies (ATM-8): one stored JSON document per subject + policy name."""

from __future__ import annotations

import json
from typing import Any

from graphsvc.store.connection import Database

__all__ = ["load_policy", "save_policy"]


def load_policy(db: Database, subject: str, policy: str) -> dict[str, Any] | None:
    """The stored policy document of the namespace, or None when none is stored."""
    rows = db.read("atomise/get_policy", subject=subject, policy=policy)
    if not rows or rows[0]["json"] is None:
        return None
    doc: dict[str, Any] = json.loads(rows[0]["json"])
    return doc


def save_policy(
    db: Database, subject: str, policy: str, doc: dict[str, Any], *, now: str, actor_id: str
) -> None:
    """Store (replace) the namespace's policy document."""
    db.write(
        "atomise/set_policy",
        subject=subject,
        policy=policy,
        json=json.dumps(doc, sort_keys=True),
        now=now,
        actorId=actor_id,
    )
