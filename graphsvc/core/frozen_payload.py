"""How a frozen evaluation's payload is stored (CUR-1): compact JSON, deflated.

A first page stores the whole ranked evaluation behind its cursor: every scored node
with its breakdown, ~80 KB of JSON for a 300-node retrieval graph. Written as a
string on every search, that was most of the search path's write volume in Neo4j;
deflated at level 1 it is ~5× smaller for under a millisecond of CPU, and read back
only when a later page is asked for. Payloads stored as JSON text by earlier
versions still decode.
"""

from __future__ import annotations

import json
import zlib
from typing import Any

from graphsvc.errors import CursorExpiredError

__all__ = ["decode_payload", "encode_payload"]

# Level 1: on these payloads within ~10 % of level 6's size at a fifth of its time.
_LEVEL = 1


def encode_payload(payload: dict[str, Any]) -> bytes:
    """``payload`` as deflated compact JSON (bytes, a Neo4j byte-array property)."""
    return zlib.compress(json.dumps(payload, separators=(",", ":")).encode("utf-8"), _LEVEL)


def decode_payload(stored: str | bytes | bytearray) -> dict[str, Any]:
    """The payload :func:`encode_payload` stored (or an earlier version's JSON text).

    Raises:
        CursorExpiredError: the stored value does not decode: the cursor cannot be
            served, as if its evaluation were gone.
    """
    try:
        text = stored if isinstance(stored, str) else zlib.decompress(stored).decode("utf-8")
        out = json.loads(text)
    except (zlib.error, UnicodeDecodeError, ValueError) as exc:
        raise CursorExpiredError("the evaluation behind this cursor cannot be read") from exc
    if not isinstance(out, dict):
        raise CursorExpiredError("the evaluation behind this cursor cannot be read")
    return out
