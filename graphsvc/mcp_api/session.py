"""The MCP server as its model's host (SPEC §17): one tool call inside its session.

A :class:`Call` carries what a tool needs besides its arguments: the Service, the
caller's Binding, the arguments as received and the MCP session the call belongs
to (a stdio process's one session, or the ``Mcp-Session-Id`` of an HTTP request,
:mod:`graphsvc.mcp_api.http`). Through it a tool

- records what its answer shows the model (:meth:`Call.show`, MCP-1), kept until
  :meth:`Call.settle` ends the call with one write to the session (checked, its
  idle time restarted, the window merged), and
- gets the InputToken of a change it makes (:meth:`Call.token`, MCP-2): issued by
  the server from the session's window, with the digest of the call's own
  arguments as ``payloadDigest``; only an agent binding's changes carry one
  (TOK-2), and the model never passes one (MCP-5).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

from mcp.server.context import ServerRequestContext

from graphsvc.core.binding import Binding
from graphsvc.core.session_window import SessionToken, Shown, arguments_digest
from graphsvc.errors import GraphsvcError, TokenInvalidError
from graphsvc.service import Service

__all__ = ["Call", "SessionOf"]

SessionOf = Callable[[ServerRequestContext[Any, Any]], str | None]
"""The MCP session id of a request (None: the call belongs to no session)."""


@dataclass(frozen=True)
class Call:
    """One tool call: the facade, the caller, its arguments as received, its session."""

    service: Service
    binding: Binding
    raw: dict[str, Any]
    session_id: str | None
    # What the call's answer shows, until settle() writes it (most recent first).
    pending: list[Shown] = field(default_factory=list)

    def show(self, shown: Sequence[Shown]) -> None:
        """Keep what this call's answer shows the model, for :meth:`settle`."""
        self.pending[:0] = shown

    def settle(self) -> None:
        """End the call in its session with one write: the session's idle time
        restarts and what the call showed goes in front of its window (MCP-1)."""
        if self.session_id is not None:
            shown, self.pending[:] = list(self.pending), []
            self.service.mcp_session_present(self.binding, self.session_id, shown)

    def token(self) -> SessionToken | None:
        """The session's InputToken for a change this call makes; None for a binding
        whose changes need none (human, input-adapter).

        Raises:
            TokenInvalidError: an agent's call outside a live session.
            InvalidInputError: an argument value the canonical digest cannot hold.
        """
        if self.binding.actor_kind != "agent":
            return None
        if self.session_id is None:
            raise TokenInvalidError(
                "an agent's change over MCP needs an MCP session (initialize first)"
            )
        if self.pending:
            # What this call showed before its change is declared with it.
            self.settle()
        digest = arguments_digest(self.raw)
        return self.service.mcp_session_token(self.binding, self.session_id, digest)

    @contextmanager
    def change_token(self) -> Iterator[SessionToken | None]:
        """:meth:`token` for a change made inside the block; if the block fails, the
        token's record is deleted again, so a refused call writes nothing.

        Raises:
            TokenInvalidError: an agent's call outside a live session.
        """
        issued = self.token()
        try:
            yield issued
        except BaseException:
            if issued is not None:
                self.discard(issued)
            raise

    def discard(self, issued: SessionToken) -> None:
        """Delete the record of a token no change was made with (refused, or an
        idempotent replay that answered the first outcome)."""
        with suppress(GraphsvcError):
            self.service.mcp_session_discard(self.binding, issued.token)
