"""Bounds on values from outside: 64-bit integers and quoted excerpts of user text.

Neo4j stores integers as signed 64-bit; the driver raises ``OverflowError`` deep in
a transaction for anything wider, so every integer that comes from outside (GraphQL
variables and literals, MCP arguments, cursors, global ids, import rows) is checked
here first and refused as INVALID_INPUT (CURSOR_INVALID for a cursor). A message
that names what the caller sent quotes at most :data:`QUOTE_CHARS` characters of it,
so a 3 MB id never comes back as a 6 MB answer.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "INT64_MAX",
    "INT64_MIN",
    "MESSAGE_CHARS",
    "QUOTE_CHARS",
    "excerpt",
    "first_wide_int",
    "int64_literal_ok",
    "is_int64",
    "is_wide_int",
]

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
QUOTE_CHARS = 64
# A whole message of a library that quotes input (graphql-core) is cut here.
MESSAGE_CHARS = 256
# "-9223372036854775808" is 20 characters: a longer literal is outside the range,
# and is never converted (Python refuses int() of over 4,300 digits).
_MAX_LITERAL_CHARS = 20


def is_int64(value: Any) -> bool:
    """Whether ``value`` is an integer (bool excluded) that fits a signed 64-bit."""
    return (
        isinstance(value, int) and not isinstance(value, bool) and INT64_MIN <= value <= INT64_MAX
    )


def is_wide_int(value: Any) -> bool:
    """Whether ``value`` is an integer (bool excluded) outside the signed 64-bit range."""
    return isinstance(value, int) and not isinstance(value, bool) and not is_int64(value)


def int64_literal_ok(text: str) -> bool:
    """Whether an integer literal's text (``-?[0-9]+``) fits a signed 64-bit."""
    if len(text) > _MAX_LITERAL_CHARS:
        return False
    return INT64_MIN <= int(text) <= INT64_MAX


def first_wide_int(data: Any, path: str = "") -> str | None:
    """The path of the first integer in JSON-like ``data`` outside 64 bits, or None.

    Iterative and linear in the size of ``data``.
    """
    stack: list[tuple[Any, str]] = [(data, path)]
    while stack:
        value, where = stack.pop()
        if is_wide_int(value):
            return where or "the value"
        if isinstance(value, dict):
            stack.extend(
                (item, f"{where}.{excerpt(str(key))}" if where else excerpt(str(key)))
                for key, item in value.items()
            )
        elif isinstance(value, list):
            stack.extend((item, f"{where}[{i}]") for i, item in enumerate(value))
    return None


def excerpt(text: str, limit: int = QUOTE_CHARS) -> str:
    """``text`` as an error message may quote it: at most ``limit`` characters, an
    ellipsis and the full length after a cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text)} characters)"
