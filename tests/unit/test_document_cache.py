"""The front door's document cache (issue 26/28): parse and validation once per text.

The measures read the variables, so they run for every request, cached or not.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from graphsvc.api.document_limits import DocumentLimits, Prepared
from graphsvc.api.schema import build_schema
from graphsvc.core.binding import Binding
from graphsvc.http.front_door import FrontDoor, Refusal
from graphsvc.keys.auth import AuthTable
from graphsvc.settings import Settings

SEARCH = 'query($l: Int) { search(query: "x", limit: $l) { hits { score } } }'


def door() -> FrontDoor:
    auth = AuthTable({"secret-token": Binding("s1", "default", "human", "h")})
    schema = build_schema(Settings())._schema
    return FrontDoor(schema, auth, DocumentLimits.from_settings(Settings()), max_json_depth=64)


def admit(front: FrontDoor, body: dict[str, Any], token: str | None = "secret-token") -> Any:
    headers = {b"content-type": b"application/json"}
    if token:
        headers[b"authorization"] = f"Bearer {token}".encode()
    return asyncio.run(front.admit("POST", headers, b"", json.dumps(body).encode()))


@pytest.mark.req("API-3")
def test_the_same_text_is_parsed_and_validated_once_and_measured_every_time() -> None:
    front = door()
    try:
        first = admit(front, {"query": SEARCH, "variables": {"l": 5}})
        second = admit(front, {"query": SEARCH, "variables": {"l": 7}})
        assert isinstance(first, Prepared) and isinstance(second, Prepared)
        assert second.document is first.document and front.cache_hits == 1
        # Cached, but these variables put its cost over the budget: refused.
        heavy = admit(front, {"query": SEARCH + " ", "variables": {"l": 10_000}})
        assert isinstance(heavy, Prepared)  # 40,450 of work fits the 250,000 budget
        flood = " ".join(
            f'a{i}: search(query: "x", limit: $l, depth: 32) {{ cursor }}' for i in range(8)
        )
        text = "query($l: Int) { " + flood + " }"
        assert isinstance(admit(front, {"query": text, "variables": {"l": 1}}), Prepared)
        refused = admit(front, {"query": text, "variables": {"l": 10_000}})
        assert isinstance(refused, Refusal) and refused.codes == ["QUERY_TOO_COMPLEX"]
        assert front.cache_hits == 2
        # Without a token the cached text is refused before it is measured.
        anonymous = admit(front, {"query": SEARCH, "variables": {"l": 5}}, token=None)
        assert isinstance(anonymous, Refusal) and anonymous.status == 401
    finally:
        front.close()


@pytest.mark.req("API-3")
def test_validation_errors_are_cached_with_the_document() -> None:
    front = door()
    try:
        bad = {"query": "{ search(query: 1) { nope } }"}
        first = admit(front, bad)
        second = admit(front, bad)
        assert isinstance(first, Prepared) and first.errors
        assert isinstance(second, Prepared) and second.errors == first.errors
        assert front.cache_hits == 1
    finally:
        front.close()


@pytest.mark.req("API-3")
def test_a_small_request_with_a_kept_document_is_checked_without_the_pool() -> None:
    front = door()
    try:
        assert isinstance(admit(front, {"query": SEARCH, "variables": {"l": 5}}), Prepared)
        assert front.inline == 0  # a new text is parsed and validated on the pool
    finally:
        front.close()
    # The pool is gone: only what the event loop checks itself still gets an answer.
    again = admit(front, {"query": SEARCH, "variables": {"l": 6}})
    assert isinstance(again, Prepared) and not again.errors and front.inline == 1
    anonymous = admit(front, {"query": SEARCH, "variables": {"l": 5}}, token=None)
    assert isinstance(anonymous, Refusal) and anonymous.status == 401
    assert front.inline == 2
    # The same document with a body past the inline bound, or a new document, needs
    # the pool.
    padded = {"query": SEARCH, "variables": {"l": 5}, "extensions": {"pad": "x" * 5000}}
    with pytest.raises(RuntimeError, match="shutdown"):
        admit(front, padded)
    with pytest.raises(RuntimeError, match="shutdown"):
        admit(front, {"query": SEARCH + " # another text", "variables": {"l": 5}})
    assert front.inline == 2
