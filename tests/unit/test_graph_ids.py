"""Global ids and cursors of the typed graph keep their encoding (graphsvc/api/graph_ids.py).

Clients keep ids (normalised caches, bookmarks): the text must stay
``base64url(JSON [kind, ...key])`` without padding, byte for byte, whatever path
builds it.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from graphsvc.api.graph_ids import decode_cursor, decode_id, encode_cursor, encode_id
from graphsvc.errors import InvalidInputError

AWKWARD = 'q"u\\o/te\n\t\r\x00\x1f\x7f \u2028\u2029 é 漢字 😀'


def _reference(parts: list[Any]) -> str:
    raw = json.dumps(parts, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


@pytest.mark.parametrize(
    ("kind", "key"),
    [
        ("Atom", ("0f3c9a1e2b4d4c6e8a0b1c2d3e4f5a6b",)),
        ("Revision", ("0f3c9a1e2b4d4c6e8a0b1c2d3e4f5a6b", 12)),
        ("Source", ("sha256:" + "ab" * 32,)),
        ("Atom", (AWKWARD,)),
        ("Revision", (AWKWARD, 2**40)),
    ],
)
def test_ids_are_base64url_json_byte_for_byte_and_decode_back(
    kind: str, key: tuple[str | int, ...]
) -> None:
    gid = encode_id(kind, *key)
    assert gid == _reference([kind, *key])
    assert decode_id(gid) == (kind, key)


@pytest.mark.parametrize("position", [("abc",), (0,), (-3,), (AWKWARD, 7)])
def test_cursors_are_base64url_json_byte_for_byte_and_decode_back(
    position: tuple[str | int, ...],
) -> None:
    cursor = encode_cursor("links", *position)
    assert cursor == _reference(["c", "links", *position])
    types = tuple(type(p) for p in position)
    assert decode_cursor("links", cursor, *types) == position
    with pytest.raises(InvalidInputError):
        decode_cursor("atoms", cursor, *types)
