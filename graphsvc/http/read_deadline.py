"""A deadline for reading each request's head and body (slowloris), in uvicorn's protocol.

uvicorn bounds a connection that is idle *between* requests (``timeout_keep_alive``)
but not the reading of one: its keep-alive timer is cancelled by every byte that
arrives, so a client that sends one header line (or one body byte) every few seconds
holds a connection, and the request's memory, for as long as it likes. The ASGI app
cannot help: it runs only once the head is complete, and it cannot close the socket.

So graphsvc serves HTTP/1.1 with uvicorn's own protocols (httptools or h11) and two
timers per request: the **head** must arrive within ``head_s`` of the connection
opening or of its first byte (later requests of a keep-alive connection), the
**body** within ``body_s`` of the head. A request that misses either is answered
``408`` with GraphQL-shaped JSON (``REQUEST_TIMEOUT``) when no response has started,
and the connection is closed. docs/operations.md says what uvicorn, graphsvc and a
reverse proxy each bound.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, ClassVar, Literal

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

__all__ = ["H11Deadline", "HttpToolsDeadline", "deadline_protocol"]

log = logging.getLogger("graphsvc.api")

_BODY = json.dumps(
    {
        "errors": [
            {
                "message": "the request was not received in time",
                "extensions": {"code": "REQUEST_TIMEOUT"},
            }
        ]
    }
).encode()
_408 = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
    b"connection: close\r\ncontent-length: " + str(len(_BODY)).encode() + b"\r\n\r\n" + _BODY
)


def _settings_deadlines() -> tuple[float, float]:
    from graphsvc.settings import Settings

    http = Settings().http
    return http.read_head_timeout_s, http.read_body_timeout_s


class _ReadDeadline:
    """The two timers; mixed into a uvicorn protocol (which gives ``transport``,
    ``cycle`` and ``loop``)."""

    head_s: ClassVar[float | None] = None  # None: from GRAPHSVC_* (worker processes)
    body_s: ClassVar[float | None] = None
    transport: Any
    cycle: Any
    loop: asyncio.AbstractEventLoop
    _timer: asyncio.TimerHandle | None = None
    _stage: Literal["head", "body"] | None = None

    def _deadlines(self) -> tuple[float, float]:
        cls = type(self)
        if cls.head_s is None or cls.body_s is None:
            cls.head_s, cls.body_s = _settings_deadlines()
        return cls.head_s, cls.body_s

    def _arm(self, stage: Literal["head", "body"] | None) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._stage = stage
        if stage is not None:
            head_s, body_s = self._deadlines()
            seconds = head_s if stage == "head" else body_s
            self._timer = self.loop.call_later(seconds, self._expired, stage)

    def _expired(self, stage: str) -> None:
        self._timer = None
        if self.transport.is_closing():
            return
        cycle = self.cycle
        # A keep-alive connection's slow next head: the cycle is the last request's.
        if stage == "head" or cycle is None or not cycle.response_started:
            self.transport.write(_408)
        log.info("request %s not received in time: connection closed", stage)
        self.transport.close()

    # The protocol's own methods, each wrapped (the mixin comes first in the MRO).
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        self._arm("head")  # a connection that sends nothing is on the head's clock

    def connection_lost(self, exc: Exception | None) -> None:
        self._arm(None)
        super().connection_lost(exc)  # type: ignore[misc]

    def data_received(self, data: bytes) -> None:
        if self._stage is None:  # the first byte of a new request: the head's clock
            self._arm("head")
        super().data_received(data)  # type: ignore[misc]


class HttpToolsDeadline(_ReadDeadline, HttpToolsProtocol):
    """uvicorn's httptools protocol with the head and body deadlines."""

    def on_headers_complete(self) -> None:
        self._arm("body")
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._arm(None)
        super().on_message_complete()


class H11Deadline(_ReadDeadline, H11Protocol):
    """uvicorn's h11 protocol with the head and body deadlines."""

    def handle_events(self) -> None:
        super().handle_events()
        state = self.conn.their_state
        if state is h11.SEND_BODY:
            if self._stage != "body":
                self._arm("body")
        elif state is not h11.IDLE:
            self._arm(None)  # DONE, MUST_CLOSE, CLOSED, ERROR: nothing left to read


def deadline_protocol(
    http: Literal["httptools", "h11"], head_s: float, body_s: float
) -> type[asyncio.Protocol]:
    """uvicorn's ``http`` protocol class with these deadlines (``uvicorn.Config(http=…)``).

    ``serve --workers`` names :class:`HttpToolsDeadline` or :class:`H11Deadline` by
    import path instead; each worker reads the deadlines from its GRAPHSVC_* settings.
    """
    base: type[_ReadDeadline] = HttpToolsDeadline if http == "httptools" else H11Deadline
    return type(base.__name__, (base,), {"head_s": head_s, "body_s": body_s})
