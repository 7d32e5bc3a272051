"""Citations of sources held in the store: ``atom:<atomId>`` with version ``<rev>``.

A citation of an atom of this store is checked against the cited revision: its
range must lie inside the cited text, measured in the citation's unit, and a
given digest must match. Other URIs are recorded as declared (the service has
no copy of that text to check against).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from graphsvc.errors import InvalidInputError

__all__ = ["check_range", "parse_store_uri", "source_key", "text_digest", "unit_length"]


def text_digest(text: str) -> str:
    """The digest stored on every revision: ``sha256:<hex of the UTF-8 body>``."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def parse_store_uri(uri: str) -> str | None:
    """The atomId of an ``atom:<atomId>`` URI, or None for any other URI."""
    if uri.startswith("atom:") and len(uri) > 5:
        return uri[5:]
    return None


def source_key(uri: str, version: str | None, digest: str | None) -> str:
    """Identity of a Source node: one per (uri, version, digest)."""
    raw = "\x1f".join((uri, version or "", digest or ""))
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def unit_length(text: str, unit: str) -> int:
    """Length of ``text`` in bytes, characters or lines."""
    if unit == "byte":
        return len(text.encode("utf-8"))
    if unit == "char":
        return len(text)
    return len(text.splitlines())


def check_range(text: str, digest: str, cite: Mapping[str, Any], *, change_id: str) -> None:
    """Check a citation against the cited stored text.

    Raises:
        InvalidInputError: the range lies outside the text, or the digest differs.
    """
    details = {"changeId": change_id}
    given = cite.get("digest")
    if given and given != digest:
        raise InvalidInputError(
            f"change {change_id!r}: source digest does not match {cite['uri']}", details=details
        )
    if cite.get("start") is None:
        return
    length = unit_length(text, cite["unit"])
    if cite["end"] > length:
        raise InvalidInputError(
            f"change {change_id!r}: range {cite['start']}..{cite['end']} ({cite['unit']}) "
            f"is outside the cited text of {cite['uri']} (length {length})",
            details=details,
        )
