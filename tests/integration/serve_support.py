"""Serve an ASGI app with uvicorn on a loopback port, in a thread of this process."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn
from starlette.types import ASGIApp

__all__ = ["serving"]


@contextmanager
def serving(app: ASGIApp, **config: Any) -> Iterator[str]:
    """Yield the base URL of ``app`` served by a real uvicorn (lifespan included);
    ``config``: more of ``uvicorn.Config``'s arguments (``http=``)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(
            app, host="127.0.0.1", port=port, log_level="warning", log_config=None, **config
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
