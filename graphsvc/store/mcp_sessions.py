"""MCP sessions and their windows in Neo4j (SPEC §17, MCP-1).

A session is one ``McpSession`` node, keyed by subject and session id, bound to the
binding that opened it (actor, policy, auth generation: a session never crosses
bindings) and expiring when idle. Its window (what graphsvc showed the model in
it, :mod:`graphsvc.core.session_window`) is one list property. It lives in the
database, not in a process, so that every replica of ``graphsvc serve`` behind a
balancer sees the same session.
"""

from __future__ import annotations

from collections.abc import Iterable

from graphsvc.core.binding import Binding
from graphsvc.core.session_window import Shown, merged
from graphsvc.store.connection import Database

__all__ = [
    "close_session",
    "discard_input",
    "open_session",
    "record_shown",
    "touch_session",
    "window",
]


def _bound(binding: Binding, session_id: str, now: float) -> dict[str, object]:
    return {
        "subject": binding.subject,
        "sessionId": session_id,
        "actorKind": binding.actor_kind,
        "actorId": binding.actor_id,
        "policy": binding.policy,
        "authGeneration": binding.auth_generation,
        "now": now,
    }


def open_session(
    db: Database, binding: Binding, session_id: str, now: float, idle_s: float
) -> None:
    """Create a session with an empty window (and drop some expired ones)."""
    db.write("mcp/open_session", **_bound(binding, session_id, now), expiresAt=now + idle_s)


def touch_session(
    db: Database, binding: Binding, session_id: str, now: float, idle_s: float
) -> bool:
    """Whether the session is live for this binding; if so its idle time restarts."""
    rows = db.write("mcp/touch_session", **_bound(binding, session_id, now), expiresAt=now + idle_s)
    return bool(rows)


def record_shown(
    db: Database,
    binding: Binding,
    session_id: str,
    shown: Iterable[Shown],
    *,
    now: float,
    idle_s: float,
    bound: int,
) -> bool:
    """Check the session, restart its idle time and put ``shown`` in front of its
    window (most recent first, at most ``bound`` entries), in one query; False when
    the session is gone."""
    rows = db.write(
        "mcp/present",
        **_bound(binding, session_id, now),
        keys=merged(shown, [], bound),
        bound=bound,
        expiresAt=now + idle_s,
    )
    return bool(rows)


def window(db: Database, binding: Binding, session_id: str, now: float) -> list[str] | None:
    """The session's window (stored keys, most recent first); None when it is gone."""
    rows = db.read("mcp/window", **_bound(binding, session_id, now))
    return list(rows[0]["shown"] or []) if rows else None


def close_session(db: Database, binding: Binding, session_id: str) -> bool:
    """Delete the session and its window; whether there was one."""
    params = _bound(binding, session_id, 0.0)
    params.pop("now")
    params.pop("authGeneration")
    rows = db.write("mcp/close_session", **params)
    return bool(rows and rows[0]["closed"])


def discard_input(db: Database, subject: str, token_id: str) -> None:
    """Delete an Input record nothing was generated from or inherits (a session
    token whose change was refused)."""
    db.write("mcp/discard_input", subject=subject, tokenId=token_id)
