"""MCP sessions (SPEC §17): graphsvc's MCP server as the host of its model.

A session is opened per stdio process or per streamable-HTTP session id
(:func:`open_session`); each tool call that shows the model something adds it to
the session's window (:func:`present`); a change the session makes with an agent
binding gets an InputToken the server issues from that window
(:func:`session_token`), through the same ``observe`` a GraphQL host calls
(:func:`graphsvc.ops.observe.observe`), so TOK-1…TOK-7, stale and purge hold for it
unchanged. The model never sees or passes a token (MCP-2, MCP-5).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from graphsvc.core.binding import Binding
from graphsvc.core.session_window import Declared, SessionToken, Shown, declared
from graphsvc.errors import TokenInvalidError
from graphsvc.inputs.models import AtomRefIn, HostInputIn
from graphsvc.ops.input_tokens import open_token
from graphsvc.ops.observe import observe
from graphsvc.store import mcp_sessions as store
from graphsvc.store.connection import Database
from graphsvc.store.observe import find_manifests
from graphsvc.store.write_store import find_revisions

__all__ = [
    "SessionLimits",
    "close_session",
    "discard_token",
    "live",
    "open_session",
    "present",
    "session_token",
    "touch",
]


@dataclass(frozen=True)
class SessionLimits:
    """How long an idle session lives and how much of what it showed it keeps."""

    mcp_session_idle_s: float
    mcp_session_window: int


def open_session(
    db: Database, clock: Callable[[], float], limits: SessionLimits, binding: Binding
) -> str:
    """A new session of ``binding`` with an empty window; its id (128 random bits)."""
    session_id = secrets.token_hex(16)
    store.open_session(db, binding, session_id, clock(), limits.mcp_session_idle_s)
    return session_id


def touch(
    db: Database,
    clock: Callable[[], float],
    limits: SessionLimits,
    binding: Binding,
    session_id: str,
) -> bool:
    """Whether ``session_id`` is a live session of ``binding`` (its idle time restarts)."""
    return store.touch_session(db, binding, session_id, clock(), limits.mcp_session_idle_s)


def live(db: Database, clock: Callable[[], float], binding: Binding, session_id: str) -> bool:
    """Whether ``session_id`` is a live session of ``binding``, read only: a tool call
    restarts its idle time with the one write of :func:`present` that ends it."""
    return store.window(db, binding, session_id, clock()) is not None


def present(
    db: Database,
    clock: Callable[[], float],
    limits: SessionLimits,
    binding: Binding,
    session_id: str,
    shown: Iterable[Shown],
) -> bool:
    """End a tool call of the session with one write: the session is checked, its
    idle time restarts and what the call showed goes in front of its window (MCP-1);
    False when the session has ended."""
    return store.record_shown(
        db,
        binding,
        session_id,
        shown,
        now=clock(),
        idle_s=limits.mcp_session_idle_s,
        bound=limits.mcp_session_window,
    )


def close_session(db: Database, binding: Binding, session_id: str) -> bool:
    """End the session: its window is deleted. Whether there was one."""
    return store.close_session(db, binding, session_id)


def session_token(
    db: Database,
    secret: bytes,
    clock: Callable[[], float],
    token_lifetime_s: float,
    binding: Binding,
    session_id: str,
    payload_digest: str,
) -> SessionToken:
    """The InputToken of a change the session makes (MCP-2): presentations, basis and
    watches from its window, ``payload_digest`` the digest of the call's arguments.

    Raises:
        TokenInvalidError: the session has ended (expired, or closed by its client).
        PurgePendingError: a purge in this subject has not finished.
    """
    keys = store.window(db, binding, session_id, clock())
    if keys is None:
        raise TokenInvalidError("this MCP session has ended; open a new session")
    inputs = _still_there(db, binding.subject, declared(keys))
    host_input = HostInputIn(
        presentations=list(inputs.presentations),
        basis=[_ref(r.atom_id, r.rev) for r in inputs.basis],
        watches=[_ref(r.atom_id, r.rev) for r in inputs.watches],
        payloadDigest=payload_digest,
    )
    token = observe(db, secret, clock, token_lifetime_s, binding, host_input)
    return SessionToken(token, inputs)


def _ref(atom_id: str, rev: int) -> AtomRefIn:
    return AtomRefIn(atomId=atom_id, rev=rev)


def _still_there(db: Database, subject: str, inputs: Declared) -> Declared:
    """The declared inputs that still exist: a manifest past its lifetime, or a
    revision purged since it was shown, can no longer be declared (and a purged
    body's dependants are gone with it, LNK-5)."""
    manifests = (
        tuple(m.manifest_id for m in find_manifests(db, subject, inputs.presentations) if m.found)
        if inputs.presentations
        else ()
    )
    found = (
        {
            (f.atom_id, f.rev)
            for f in find_revisions(db, subject, inputs.basis, with_text=False)
            if f.found
        }
        if inputs.basis
        else set()
    )
    return Declared(
        manifests,
        tuple(r for r in inputs.basis if (r.atom_id, r.rev) in found),
        tuple(r for r in inputs.watches if (r.atom_id, r.rev) in found),
        inputs.written,
    )


def discard_token(db: Database, secret: bytes, binding: Binding, token: str) -> None:
    """Delete the record of a session token whose change failed, so that a refused
    call leaves nothing behind; a record a revision was generated from stays."""
    claims = open_token(secret, binding, token, now=None)
    store.discard_input(db, binding.subject, claims.token_id)
