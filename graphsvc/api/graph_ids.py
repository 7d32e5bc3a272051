"""Opaque global ids (Relay Global Object Identification) and connection cursors.

A global id is ``base64url(JSON [kind, ...key])`` without padding: ``["Atom",
atomId]``, ``["Revision", atomId, rev]``, ``["Source", sourceKey]``. Clients must
treat it as opaque. An id names a thing, not a permission: resolving it is
filtered by the caller's subject, so another subject's id answers like one that
never existed (null).

A cursor is the same encoding of ``["c", connection, ...keyset position]``; a
cursor of another connection, or one that does not decode, is INVALID_INPUT; so is
an id or a cursor whose integer is outside the signed 64-bit range (a forged one:
what is issued always fits), before the number can reach the driver.
"""

from __future__ import annotations

import base64
import binascii
import json
from json.encoder import encode_basestring as _json_str
from typing import Any

from graphsvc.core.input_bounds import is_wide_int
from graphsvc.errors import InvalidInputError

__all__ = ["decode_cursor", "decode_id", "encode_cursor", "encode_id"]

_KINDS = {"Atom": (str,), "Revision": (str, int), "Source": (str,), "Entity": (str,)}
_MAX_CHARS = 2048


def _encode(parts: list[Any]) -> str:
    # The text json.dumps(parts, separators=(",", ":"), ensure_ascii=False) gives,
    # built here for the usual str/int parts at about half its cost (a walk of the
    # typed graph encodes an id or a cursor per object); anything else goes through it.
    if all(type(p) is str or type(p) is int for p in parts):
        text = "[" + ",".join(_json_str(p) if type(p) is str else str(p) for p in parts) + "]"
    else:
        text = json.dumps(parts, separators=(",", ":"), ensure_ascii=False)
    return base64.urlsafe_b64encode(text.encode("utf-8")).decode("ascii").rstrip("=")


def _fits(value: Any, kind: type) -> bool:
    return isinstance(value, kind) and not isinstance(value, bool) and not is_wide_int(value)


def _decode(text: str) -> Any:
    if not isinstance(text, str) or not 0 < len(text) <= _MAX_CHARS:
        return None
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        return json.loads(raw.decode("utf-8"))
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None


def encode_id(kind: str, *key: str | int) -> str:
    """The global id of a thing of ``kind`` (``Atom``, ``Revision``, ``Source``,
    ``Entity``)."""
    return _encode([kind, *key])


def decode_id(global_id: str) -> tuple[str, tuple[Any, ...]]:
    """``(kind, key)`` of a global id.

    Raises:
        InvalidInputError: not a global id of this service.
    """
    parts = _decode(global_id)
    if isinstance(parts, list) and parts and parts[0] in _KINDS:
        kind, key = parts[0], tuple(parts[1:])
        types = _KINDS[kind]
        if len(key) == len(types) and all(_fits(v, t) for v, t in zip(key, types, strict=True)):
            return kind, key
    raise InvalidInputError("not a global id of this service")


def encode_cursor(connection: str, *position: str | int) -> str:
    """The cursor after an edge of ``connection`` at ``position``."""
    return _encode(["c", connection, *position])


def decode_cursor(connection: str, cursor: str, *types: type) -> tuple[Any, ...]:
    """The keyset position in a cursor of ``connection``.

    Raises:
        InvalidInputError: the cursor does not decode or is of another connection.
    """
    parts = _decode(cursor)
    if (
        isinstance(parts, list)
        and len(parts) == 2 + len(types)
        and parts[:2] == ["c", connection]
        and all(_fits(v, t) for v, t in zip(parts[2:], types, strict=True))
    ):
        return tuple(parts[2:])
    raise InvalidInputError(f"after: not a cursor of {connection}")
