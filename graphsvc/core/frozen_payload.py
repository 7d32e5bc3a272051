"""How a frozen evaluation's payload is stored (CUR-1): its ranking by column.

A first page stores the whole ranked evaluation behind its cursor: every scored node
with its breakdown, hundreds of rows of the same shape. Written as JSON, the float
reprs alone were most of a search's own CPU on the serving process, on every search,
for a payload read back only when a later page is asked for
(docs/performance.md#search-at-10k-atoms-over-http). So the ranked rows are
stored as columns: one packed little-endian array per numeric or boolean field
(floats bit for bit, ``None`` kept by a mask), one value for a column that never
changes, JSON for the rest (ids), in a header deflated at level 1. A payload whose
rows differ in shape is stored as deflated compact JSON, and payloads stored by
earlier versions (deflated JSON, or JSON text) still decode.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Sequence
from operator import itemgetter
from typing import Any

import numpy as np

from graphsvc.errors import CursorExpiredError

__all__ = ["decode_payload", "encode_payload"]

# Level 1: on these payloads nearly level 6's size at a fraction of its time.
_LEVEL = 1
# Marks the columnar layout; a deflate stream starts with 0x78, so never this.
_MAGIC = b"GSC1"
_HEAD = struct.Struct("<I")
_INT64 = (-(2**63), 2**63 - 1)

# A column: its path in a row ("key" or "key.nested"), its kind, and what the header
# keeps of it. Kinds: const (one value in every row, kept in the header), f8 floats,
# f8n floats or None (a mask follows the values), i8 ints, b1 bools, json anything
# else (the values kept in the header).
_Column = tuple[list[str], str, Any]


def encode_payload(payload: dict[str, Any]) -> bytes:
    """``payload`` as bytes (a Neo4j byte-array property): its ``ranked`` rows by
    column when they share one shape, else deflated compact JSON."""
    ranked = payload.get("ranked")
    columns = _by_column(ranked) if isinstance(ranked, list) and ranked else None
    if columns is None:
        return zlib.compress(_json(payload), _LEVEL)
    header, blobs = columns
    head = _json(
        # "rest" keeps the payload's keys in order, "ranked" among them as a placeholder.
        {"rest": {k: None if k == "ranked" else v for k, v in payload.items()}, "ranked": header}
    )
    # Only the header is deflated: packed floats hardly shrink, and deflating them
    # cost as much as the rest of the encoding.
    packed = zlib.compress(head, _LEVEL)
    return b"".join([_MAGIC, _HEAD.pack(len(packed)), packed, *blobs])


def decode_payload(stored: str | bytes | bytearray) -> dict[str, Any]:
    """The payload :func:`encode_payload` stored (or an earlier version's JSON).

    Raises:
        CursorExpiredError: the stored value does not decode: the cursor cannot be
            served, as if its evaluation were gone.
    """
    try:
        if isinstance(stored, str):
            out = json.loads(stored)
        elif bytes(stored[: len(_MAGIC)]) == _MAGIC:
            out = _from_columns(bytes(stored[len(_MAGIC) :]))
        else:
            out = json.loads(zlib.decompress(stored).decode("utf-8"))
    except (zlib.error, UnicodeDecodeError, ValueError, KeyError, TypeError, struct.error) as exc:
        raise CursorExpiredError("the evaluation behind this cursor cannot be read") from exc
    if not isinstance(out, dict):
        raise CursorExpiredError("the evaluation behind this cursor cannot be read")
    return out


def _json(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode("utf-8")


def _by_column(rows: list[Any]) -> tuple[dict[str, Any], list[bytes]] | None:
    """The rows' header and packed columns, or None when they differ in shape."""
    try:
        keys = list(rows[0])
        nests = [list(v) if type(v) is dict else None for v in rows[0].values()]
        if not _same_keys(rows, keys):
            return None
        columns: list[_Column] = []
        blobs: list[bytes] = []
        for key, nested, values in zip(keys, nests, _transpose(rows, keys), strict=True):
            if nested is None:
                split = [([key], values)]
            elif _same_keys(values, nested):
                split = list(
                    zip(([key, k] for k in nested), _transpose(values, nested), strict=True)
                )
            else:
                return None
            for path, column in split:
                kind, blob, stored = _pack(column)
                columns.append((path, kind, stored))
                blobs.append(blob)
    except (TypeError, KeyError):  # a row without one of the first row's keys
        return None
    shape = [[k, n] for k, n in zip(keys, nests, strict=True)]
    return {"n": len(rows), "shape": shape, "columns": columns}, blobs


def _same_keys(rows: list[Any], keys: list[str]) -> bool:
    """Every row is a dict with as many keys as ``keys`` (the transpose then finds
    each of them in every row, or raises KeyError)."""
    return set(map(type, rows)) == {dict} and set(map(len, rows)) == {len(keys)}


def _transpose(values: list[dict[str, Any]], keys: list[str]) -> list[list[Any]]:
    if len(keys) == 1:
        return [[v[keys[0]] for v in values]]
    get = itemgetter(*keys)
    return [list(c) for c in zip(*map(get, values), strict=True)]


def _pack(values: list[Any]) -> tuple[str, bytes, Any]:
    """A column's kind, its packed bytes, and what the header keeps of it."""
    types = set(map(type, values))
    if types == {float}:
        packed = np.array(values, dtype="<f8")
        bits = packed.view("<i8")  # bit for bit: -0.0 is not 0.0, a NaN is itself
        if bool((bits == bits[0]).all()):
            return "const", b"", values[0]
        return "f8", packed.tobytes(), None
    if len(types) == 1 and types <= {bool, int, str, type(None)}:
        first = values[0]
        if all(v == first for v in values):
            return "const", b"", first
    if types == {float, type(None)}:
        mask = np.array([v is None for v in values], dtype=np.uint8)
        floats = np.array([0.0 if v is None else v for v in values], dtype="<f8")
        return "f8n", floats.tobytes() + mask.tobytes(), None
    if types == {bool}:
        return "b1", np.array(values, dtype=np.uint8).tobytes(), None
    if types == {int} and _INT64[0] <= min(values) and max(values) <= _INT64[1]:
        return "i8", np.array(values, dtype="<i8").tobytes(), None
    return "json", b"", values


def _unpack(kind: str, n: int, data: bytes, at: int) -> tuple[list[Any], int]:
    if kind == "f8":
        return np.frombuffer(data, dtype="<f8", count=n, offset=at).tolist(), at + 8 * n
    if kind == "f8n":
        floats = np.frombuffer(data, dtype="<f8", count=n, offset=at).tolist()
        mask = np.frombuffer(data, dtype=np.uint8, count=n, offset=at + 8 * n).tolist()
        return [None if m else f for f, m in zip(floats, mask, strict=True)], at + 9 * n
    if kind == "b1":
        return np.frombuffer(data, dtype=np.uint8, count=n, offset=at).astype(bool).tolist(), at + n
    if kind == "i8":
        return np.frombuffer(data, dtype="<i8", count=n, offset=at).tolist(), at + 8 * n
    raise ValueError(f"unknown column kind {kind!r}")


def _from_columns(body: bytes) -> dict[str, Any]:
    (size,) = _HEAD.unpack_from(body)
    at = _HEAD.size + size
    header = json.loads(zlib.decompress(body[_HEAD.size : at]))
    table = header["ranked"]
    n: int = table["n"]
    values: dict[tuple[str, ...], Sequence[Any]] = {}
    for path, kind, stored in table["columns"]:
        if kind == "json":
            column = stored
        elif kind == "const":
            column = [stored] * n
        else:
            column, at = _unpack(kind, n, body, at)
        if len(column) != n:
            raise ValueError("a column's length differs from the row count")
        values[tuple(path)] = column
    if at != len(body):
        raise ValueError("trailing bytes after the columns")
    parts: list[tuple[str, Sequence[Any] | list[dict[str, Any]]]] = []
    for key, nested in table["shape"]:
        if nested is None:
            parts.append((key, values[(key,)]))
        else:
            cols = [values[(key, k)] for k in nested]
            parts.append(
                (key, [dict(zip(nested, vs, strict=True)) for vs in zip(*cols, strict=True)])
            )
    keys = [k for k, _ in parts]
    ranked = [dict(zip(keys, vs, strict=True)) for vs in zip(*(c for _, c in parts), strict=True)]
    out: dict[str, Any] = header["rest"]
    out["ranked"] = ranked
    return out
