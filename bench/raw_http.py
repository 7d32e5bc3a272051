"""A minimal keep-alive HTTP/1.1 client for load generators on the server's own cores.

``bench/load.py`` runs its clients on the two cores that also run the server and
Neo4j, so every millisecond of CPU a client spends per request is taken from what it
measures. httpx's ``AsyncClient`` (a connection pool, header models, retries on
stale connections) costs a few milliseconds of CPU per request; this client, one
connection per closed-loop client with the request bytes built once, costs a
fraction of that. It speaks just enough HTTP/1.1 for a ``POST`` answered with a
``Content-Length`` or chunked body; anything else raises :class:`RawHTTPError`.
"""

from __future__ import annotations

import asyncio

__all__ = ["RawConnection", "RawHTTPError", "RawResponse"]


class RawHTTPError(Exception):
    """The server's answer was not HTTP/1.1 this client understands."""


class RawResponse:
    """Status, content type and body of one answer."""

    __slots__ = ("body", "content_type", "status")

    def __init__(self, status: int, content_type: str, body: bytes) -> None:
        self.status = status
        self.content_type = content_type
        self.body = body


class RawConnection:
    """One keep-alive connection to ``host:port``, opened on first use and again after
    the server closes it (a failed request is not retried: it raises, and the load
    generator counts the error by its type)."""

    def __init__(self, host: str, port: int, headers: dict[str, str]) -> None:
        self._host, self._port = host, port
        lines = [f"Host: {host}:{port}", *(f"{k}: {v}" for k, v in headers.items())]
        self._headers = ("\r\n".join(lines) + "\r\n").encode("latin-1")
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def post(self, path: str, body: bytes) -> RawResponse:
        if self._writer is None:
            self._reader, self._writer = await asyncio.open_connection(self._host, self._port)
        assert self._reader is not None
        head = b"POST %s HTTP/1.1\r\n%sContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
        self._writer.write(head % (path.encode("ascii"), self._headers, len(body)) + body)
        try:
            return await self._answer(self._reader)
        except BaseException:
            self.close()
            raise

    async def _answer(self, reader: asyncio.StreamReader) -> RawResponse:
        block = await reader.readuntil(b"\r\n\r\n")
        status_line, *header_lines = block[:-4].decode("latin-1").split("\r\n")
        parts = status_line.split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
            raise RawHTTPError(f"not an HTTP/1.x status line: {status_line[:80]!r}")
        headers: dict[str, str] = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if "content-length" in headers:
            body = await reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            body = await self._chunks(reader)
        else:
            raise RawHTTPError("an answer with neither Content-Length nor chunked encoding")
        if headers.get("connection", "").lower() == "close":
            self.close()
        return RawResponse(int(parts[1]), headers.get("content-type", ""), body)

    @staticmethod
    async def _chunks(reader: asyncio.StreamReader) -> bytes:
        out = bytearray()
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0], 16)
            if size == 0:
                # Trailers (none expected) end with an empty line.
                while await reader.readuntil(b"\r\n") != b"\r\n":
                    pass
                return bytes(out)
            out += await reader.readexactly(size)
            await reader.readexactly(2)

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
        self._reader = self._writer = None
