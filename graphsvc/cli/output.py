"""The one printer of the command line: results, progress and errors.

- a result is one JSON document on stdout with ``--json`` (exact: JSON escapes
  every control character; instants in UTC with ``Z``), else human text (its
  instants in the same form), in which every control character of
  stored text is shown escaped (:func:`terminal_safe`): an atom's text can hold
  ``ESC ] 0 ; … BEL`` and must not retitle or repaint the reader's terminal;
- progress goes to stderr, one line per step;
- an error is printed once, by :func:`command`, in one format: with ``--json``
  ``{"error": CODE, "message": ..., "exitCode": N}`` on stdout (plus ``row``,
  ``batch``, ``changeId``, ``rows`` when the error names them), else
  ``graphsvc: CODE: message`` on stderr (plus Neo4j's log tail when a launch
  failed); the exit code is the table's (:mod:`graphsvc.cli.exit_codes`).
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import sys
from collections.abc import Callable
from typing import Any

from graphsvc.cli.exit_codes import exit_code_for
from graphsvc.core.instants import with_utc_z
from graphsvc.errors import GraphsvcError
from graphsvc.settings import Settings

__all__ = ["Handler", "command", "emit", "print_error", "progress", "terminal_safe"]

Handler = Callable[[argparse.Namespace, Settings], int]

# Facts an error may carry that a script needs to resume (which row, which batch).
_ERROR_FACTS = ("row", "batch", "changeId", "rows")
# C0 but tab and newline (a CR only where no LF follows it), DEL, C1: ESC starts
# every terminal escape sequence (CSI, OSC, DCS), and C1 holds their one-byte forms.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]|\r(?!\n)")
_CONTROL_OK = re.compile(r"\r\n")


def _escaped(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"


def terminal_safe(text: str) -> str:
    """``text`` with every control character but newline and tab (and CR before LF)
    written as a visible ``\\xNN`` escape, so that printing it cannot move the
    cursor, retitle the window or change colours."""
    return _CONTROL.sub(_escaped, _CONTROL_OK.sub("\n", text))


def emit(args: argparse.Namespace, payload: Any, text: str | None = None) -> None:
    """Print ``payload`` as JSON with ``--json``, else ``text`` (or indented JSON);
    its instants in the Z form (:func:`graphsvc.core.instants.with_utc_z`)."""
    if getattr(args, "json", False) or text is None:
        print(json.dumps(with_utc_z(payload), indent=2, sort_keys=True, default=str))
    else:
        print(terminal_safe(text))


def progress(msg: str) -> None:
    """One progress line on stderr."""
    print(terminal_safe(msg), file=sys.stderr, flush=True)


def print_error(args: argparse.Namespace | None, exc: GraphsvcError) -> int:
    """Print ``exc`` in the CLI's one error format and return its exit code."""
    code = exit_code_for(exc)
    if getattr(args, "json", False):
        doc: dict[str, Any] = {"error": exc.code, "message": exc.message, "exitCode": code}
        doc.update({k: exc.details[k] for k in _ERROR_FACTS if k in exc.details})
        print(json.dumps(doc, default=str))
    else:
        print(terminal_safe(f"graphsvc: {exc.code}: {exc.message}"), file=sys.stderr)
        tail = exc.details.get("logTail")
        if tail:
            print(tail, file=sys.stderr)
    return code


def command(handler: Handler) -> Handler:
    """Wrap a command's handler: a GraphsvcError it raises is printed once and
    becomes the table's exit code."""

    @functools.wraps(handler)
    def run(args: argparse.Namespace, settings: Settings) -> int:
        try:
            return handler(args, settings)
        except GraphsvcError as exc:
            return print_error(args, exc)

    return run
