"""Who asks comes first at the front door (issue 47, finding 1).

A present but unknown token is 401 before the body is decoded; a request without a
token over ``anonymous_max_bytes`` is 401 before anything is lexed; the pool's queue
is bounded (503 SERVER_BUSY with Retry-After); a request without a token never adds
to the document cache. Each refusal below is one today's front door gave only after
lexing and measuring the document (a different code) or never gave.
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

TOKEN = "secret-token"
# 20,001 tokens: QUERY_TOO_COMPLEX once lexed; a request refused first never gets there.
TOO_MANY = "{ " + " ".join(["__typename"] * 20_001) + " }"


def door(**kw: Any) -> FrontDoor:
    auth = AuthTable({TOKEN: Binding("s1", "default", "human", "h")})
    schema = build_schema(Settings())._schema
    return FrontDoor(
        schema, auth, DocumentLimits.from_settings(Settings()), max_json_depth=64, **kw
    )


def headers(token: str | None) -> dict[bytes, bytes]:
    out = {b"content-type": b"application/json"}
    if token is not None:
        out[b"authorization"] = f"Bearer {token}".encode()
    return out


async def _admit(front: FrontDoor, query: str, token: str | None) -> Any:
    body = json.dumps({"query": query}).encode()
    return await front.admit("POST", headers(token), b"", body)


def admit(front: FrontDoor, query: str, token: str | None = TOKEN) -> Any:
    return asyncio.run(_admit(front, query, token))


@pytest.mark.req("API-2", "API-3")
@pytest.mark.parametrize("token", ["wrong", "", "x" * 5000])
def test_an_unknown_token_is_401_before_the_document_is_read(token: str) -> None:
    front = door()
    try:
        for query in (TOO_MANY, "{ health", "{ health }"):
            answer = admit(front, query, token)
            assert isinstance(answer, Refusal), answer
            assert (answer.status, answer.codes) == (401, ["UNAUTHENTICATED"])
            assert (b"www-authenticate", b"Bearer") in answer.headers
        assert isinstance(admit(front, TOO_MANY), Refusal)  # the right token: measured
        assert admit(front, TOO_MANY).codes == ["QUERY_TOO_COMPLEX"]
    finally:
        front.close()


@pytest.mark.req("API-2", "API-3")
def test_without_a_token_only_a_small_document_is_looked_at() -> None:
    front = door(anonymous_max_bytes=4096)
    try:
        big = admit(front, TOO_MANY, None)
        assert isinstance(big, Refusal) and (big.status, big.codes) == (401, ["UNAUTHENTICATED"])
        error = big.errors[0]
        assert error["extensions"]["details"] == {"anonymousMaxBytes": 4096}
        # Public operations within the bound still run without a token.
        assert isinstance(admit(front, "{ health }", None), Prepared)
        assert isinstance(admit(front, "{ __typename " + " " * 3000 + "}", None), Prepared)
        # A GET's query string counts the same.
        query = "query=" + "%20" * 5000 + "%7B%20health%20%7D"
        get = asyncio.run(front.admit("GET", {}, query.encode(), b""))
        assert isinstance(get, Refusal) and get.codes == ["UNAUTHENTICATED"]
    finally:
        front.close()


@pytest.mark.req("API-3")
def test_a_client_without_a_token_cannot_evict_the_cached_documents() -> None:
    front = door(cache_size=8)
    try:
        mine = "{ health __typename }"
        assert isinstance(admit(front, mine), Prepared)
        for i in range(50):  # unique public documents without a token
            assert isinstance(admit(front, f"{{ a{i}: health }}", None), Prepared)
        hits = front.cache_hits
        assert isinstance(admit(front, mine), Prepared)
        assert front.cache_hits == hits + 1  # still kept
        # With a token the same flood does evict (the cache is an LRU of 8).
        for i in range(50):
            assert isinstance(admit(front, f"{{ b{i}: health }}"), Prepared)
        hits = front.cache_hits
        admit(front, mine)
        assert front.cache_hits == hits
    finally:
        front.close()


@pytest.mark.req("API-3")
def test_a_full_queue_is_503_server_busy_with_retry_after() -> None:
    front = door(queue=4, threads=1, inline_bytes=0, retry_after_s=3)

    async def flood() -> list[Any]:
        # Twelve at once: the first four are held (the pool's queue), the rest refused
        # before they wait; without a token at most half the queue.
        signed = [_admit(front, TOO_MANY + " " * i, TOKEN) for i in range(8)]
        anonymous = [_admit(front, "{ health }" + " " * i, None) for i in range(4)]
        return await asyncio.gather(*anonymous, *signed)

    try:
        answers = asyncio.run(flood())
        busy = [a for a in answers if isinstance(a, Refusal) and a.codes == ["SERVER_BUSY"]]
        assert len(busy) == 8, [getattr(a, "codes", a) for a in answers]
        assert all(a.status == 503 and (b"retry-after", b"3") in a.headers for a in busy)
        # Two of the four without a token were held, the other two refused.
        assert sum(isinstance(a, Prepared) for a in answers[:4]) == 2
        # Once they are answered the queue is empty again.
        assert admit(front, TOO_MANY).codes == ["QUERY_TOO_COMPLEX"]
    finally:
        front.close()
