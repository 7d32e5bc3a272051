"""Logs of ``graphsvc serve``: one JSON object per line, each with the request id.

What is logged is chosen where it is logged, never dumped: access lines carry the
method, path (no query string), status, duration, operation and error codes;
client errors one line without a traceback; only internal errors carry one.
Tokens, secrets and atom texts are never passed to a logger; as a second guard the
formatter drops any ``Authorization`` value that a library might put in a message.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import time
from typing import IO, Any

from graphsvc.telemetry.request_scope import current

__all__ = ["JsonFormatter", "RequestIdFilter", "build_handler", "configure_logging"]

# Attributes every LogRecord has; anything else was passed with ``extra=`` on purpose.
# ``color_message`` is uvicorn's copy of the message with terminal colour codes.
_STANDARD = set(logging.makeLogRecord({}).__dict__) | {
    "message",
    "asctime",
    "request_id",
    "color_message",
}
_BEARER = re.compile(r"(?i)(bearer\s+)[^\s\"',]+")


class RequestIdFilter(logging.Filter):
    """Stamps ``record.request_id`` from the current request scope (``-`` outside one)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            sc = current()
            record.request_id = sc.request_id if sc else "-"
        return True


class JsonFormatter(logging.Formatter):
    """``{"ts", "level", "logger", "msg", "requestId", ...extra, "exc"}`` per line."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": _BEARER.sub(r"\1[redacted]", record.getMessage()),
            "requestId": getattr(record, "request_id", "-"),
        }
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_"):
                out[key] = value
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str, ensure_ascii=False)


def build_handler(fmt: str = "json", stream: IO[str] | None = None) -> logging.Handler:
    """The handler ``serve`` logs through: request id stamped when the line is logged."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.addFilter(RequestIdFilter())
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(
            logging.Formatter("%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s")
        )
    return handler


def configure_logging(fmt: str = "json", level: str = "INFO") -> None:
    """Route every logger (graphsvc, uvicorn, the driver) to stderr in ``fmt``."""
    handler = build_handler(fmt)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        lg = logging.getLogger(name)
        lg.handlers[:] = []
        lg.propagate = True
    # graphsvc logs each GraphQL error itself (graphsvc.api.errors), one line for a
    # client error; strawberry's own logger would add a traceback to every one.
    logging.getLogger("strawberry.execution").setLevel(logging.CRITICAL)
    # The driver warns on every retry of a transaction; STORE_UNAVAILABLE says it once.
    logging.getLogger("neo4j").setLevel(logging.ERROR)
