"""Deterministic CBOR (RFC 8949 §4.2.1) and SHA-256 helpers for signing (SIG-1, SIG-2).

Every signature and every hash in graphsvc is taken over the bytes this module
produces, so another implementation can reproduce them exactly. The encoding is
RFC 8949 §4.2.1 "core deterministic encoding":

- integers, lengths and tags in their shortest form;
- floats in the shortest of half/single/double precision that keeps the value;
- definite lengths only;
- map keys sorted by the bytewise order of their encoded form.

``cbor2.dumps(..., canonical=True)`` does all of this. It sorts map keys by
(length of encoded key, encoded key) — the older RFC 7049 rule — which is *identical*
to the bytewise rule as long as every key is a text string: a text string's encoded
form starts with its length in the header, so a shorter key's encoding always sorts
first bytewise too. That is why this module accepts only ``str`` map keys.

The accepted value model is deliberately small and JSON-like, so the same data can be
stored as JSON and re-hashed by an auditor: ``None``, ``bool``, ``int`` (within the
64-bit CBOR major types 0/1, no bignum tags), finite ``float``, ``str``, ``bytes``,
``list``/``tuple`` and ``dict`` with ``str`` keys.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping

import cbor2

from graphsvc.errors import InvalidInputError

__all__ = ["canonical_cbor", "sha256_hex"]

# CBOR major types 0 and 1 carry integers up to 2**64 - 1 and down to -2**64; beyond
# that cbor2 would emit bignum tags, which other implementations handle unevenly.
_UINT64_MAX = 2**64 - 1
_NINT64_MIN = -(2**64)
# Nesting bound: our signed structures are at most a few levels deep; a bound keeps a
# hostile payload from exhausting the Python stack.
_MAX_DEPTH = 64


def canonical_cbor(obj: object) -> bytes:
    """Encode ``obj`` with RFC 8949 §4.2.1 core deterministic CBOR.

    Args:
        obj: a value of the JSON-like model described in the module docstring.

    Returns:
        The deterministic CBOR bytes.

    Raises:
        InvalidInputError: a float is NaN or infinite, a map key is not a ``str``, an
            integer does not fit CBOR major type 0/1, the value nests deeper than 64
            levels, or a value has an unsupported type.
    """
    _check(obj, "$", 0)
    try:
        return cbor2.dumps(obj, canonical=True)
    except (cbor2.CBOREncodeError, TypeError, ValueError) as exc:  # pragma: no cover
        # _check already rejects everything cbor2 refuses; kept as a mapping point.
        raise InvalidInputError(f"value cannot be encoded as CBOR: {exc}") from exc


def sha256_hex(data: bytes) -> str:
    """Return the lowercase hex SHA-256 digest of ``data``.

    Args:
        data: the bytes to hash.

    Returns:
        64 lowercase hex characters.

    Raises:
        InvalidInputError: ``data`` is not ``bytes``.
    """
    if not isinstance(data, bytes | bytearray | memoryview):
        raise InvalidInputError("sha256_hex expects bytes")
    return hashlib.sha256(data).hexdigest()


def _check(obj: object, where: str, depth: int) -> None:
    """Reject anything outside the deterministic value model (see module docstring)."""
    if depth > _MAX_DEPTH:
        raise InvalidInputError(f"value nests deeper than {_MAX_DEPTH} levels at {where}")
    # bool before int: bool is an int subclass but encodes as a CBOR simple value.
    if obj is None or isinstance(obj, bool | str | bytes):
        return
    if isinstance(obj, int):
        if not _NINT64_MIN <= obj <= _UINT64_MAX:
            raise InvalidInputError(f"integer at {where} does not fit 64-bit CBOR")
        return
    if isinstance(obj, float):
        if not math.isfinite(obj):
            raise InvalidInputError(f"float at {where} is NaN or infinite")
        return
    if isinstance(obj, list | tuple):
        for i, item in enumerate(obj):
            _check(item, f"{where}[{i}]", depth + 1)
        return
    if isinstance(obj, Mapping):
        for key, value in obj.items():
            if not isinstance(key, str):
                raise InvalidInputError(
                    f"map key at {where} is {type(key).__name__}, only str keys are allowed"
                )
            _check(value, f"{where}.{key}", depth + 1)
        return
    raise InvalidInputError(f"unsupported type {type(obj).__name__} at {where}")
