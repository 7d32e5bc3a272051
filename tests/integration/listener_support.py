"""A TCP port that counts who connects: proof that code did or did not reach Neo4j.

An event check instead of a stopwatch: code that must not touch the database is given
this port as its Neo4j address; afterwards the test asserts that nothing connected.
Every connection is accepted, counted and closed at once, so a driver that does
connect fails fast (ServiceUnavailable) instead of waiting for a handshake.
"""

from __future__ import annotations

import socket
import threading
from contextlib import suppress

__all__ = ["CountingPort"]


class CountingPort:
    """Listens on 127.0.0.1 from construction until :meth:`close`."""

    def __init__(self) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self._lock = threading.Lock()
        self._count = 0
        self.port = int(self._sock.getsockname()[1])
        self.uri = f"bolt://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._serve, name="counting-port", daemon=True)
        self._thread.start()

    @property
    def connections(self) -> int:
        """How many connections were made to the port so far."""
        with self._lock:
            return self._count

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:  # the socket was closed: the test is over
                return
            with self._lock:
                self._count += 1
            conn.close()

    def close(self) -> None:
        # shutdown() wakes the blocked accept() so the thread ends.
        with suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        self._sock.close()
        self._thread.join(timeout=5)

    def __enter__(self) -> CountingPort:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
