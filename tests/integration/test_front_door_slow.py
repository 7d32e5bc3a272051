"""Clients that are slow or have no token (issue 47, findings 1 and 2).

Real uvicorn with graphsvc's protocol (``graphsvc/http/read_deadline.py``, short
deadlines so that the test is short), real Neo4j. A client that sends its head or its
body a byte at a time is answered 408 and disconnected; a client that connects and
sends nothing is too. The socket timeouts are guards against a hang (the test fails
instead of stalling), not assertions on speed.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from serve_support import serving

from graphsvc.core.binding import Binding
from graphsvc.http.app import create_app
from graphsvc.http.read_deadline import deadline_protocol
from graphsvc.keys.auth import AuthTable
from graphsvc.service import Service

GUARD_S = 60
HEAD_S = 1.0
BODY_S = 1.0
TRICKLE_S = 0.3  # between two bytes: well inside a deadline, so only the total counts


@pytest.fixture(scope="module", params=["httptools", "h11"])
def slow_server(request: Any, service: Service) -> Iterator[tuple[str, AuthTable]]:
    auth = AuthTable({})
    protocol = deadline_protocol(request.param, HEAD_S, BODY_S)
    with serving(create_app(service, auth), http=protocol) as url:
        yield url, auth


def _connect(url: str) -> socket.socket:
    parts = urlsplit(url)
    sock = socket.create_connection((parts.hostname, parts.port), timeout=GUARD_S)
    sock.settimeout(GUARD_S)
    return sock


def _trickle_until_closed(sock: socket.socket, data: bytes) -> bytes:
    """Send ``data`` a byte every TRICKLE_S until the server closes; what it sent back."""
    sock.setblocking(False)
    answer = b""
    for byte in data:
        try:
            sock.send(bytes([byte]))
        except OSError:  # closed under us (reset or broken pipe)
            break
        time.sleep(TRICKLE_S)
        try:
            chunk = sock.recv(65536)
        except BlockingIOError:
            continue
        except OSError:
            break
        answer += chunk
        if not chunk:
            return answer
    sock.setblocking(True)
    sock.settimeout(GUARD_S)
    try:
        while chunk := sock.recv(65536):
            answer += chunk
    except OSError:
        pass
    return answer


def _is_408(answer: bytes) -> dict[str, Any]:
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408 "), answer[:200]
    assert b"connection: close" in head.lower()
    doc: dict[str, Any] = json.loads(body)
    return doc


@pytest.mark.req("API-3")
def test_a_head_sent_a_byte_at_a_time_is_408_and_disconnected(
    slow_server: tuple[str, AuthTable],
) -> None:
    url, _ = slow_server
    head = b"POST /graphql HTTP/1.1\r\nHost: x\r\n" + b"X-Slow: " + b"a" * 400 + b"\r\n\r\n"
    with _connect(url) as sock:
        answer = _trickle_until_closed(sock, head)
    doc = _is_408(answer)
    assert doc["errors"][0]["extensions"]["code"] == "REQUEST_TIMEOUT"
    # The service still answers everyone else.
    assert httpx.get(f"{url}/healthz", timeout=GUARD_S).status_code == 200


@pytest.mark.req("API-3")
def test_a_body_sent_a_byte_at_a_time_is_408_and_disconnected(
    slow_server: tuple[str, AuthTable], human: Binding
) -> None:
    url, auth = slow_server
    auth.add("slow-token", human)
    body = json.dumps({"query": "{ health }", "variables": {"pad": "p" * 400}}).encode()
    head = (
        b"POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Authorization: Bearer slow-token\r\n"
        b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n"
    )
    with _connect(url) as sock:
        sock.sendall(head)
        answer = _trickle_until_closed(sock, body)
    assert _is_408(answer)["errors"][0]["extensions"]["code"] == "REQUEST_TIMEOUT"


@pytest.mark.req("API-3")
def test_a_connection_that_sends_nothing_is_closed(slow_server: tuple[str, AuthTable]) -> None:
    url, _ = slow_server
    with _connect(url) as sock:
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert _is_408(answer)["errors"][0]["extensions"]["code"] == "REQUEST_TIMEOUT"


@pytest.mark.req("API-3")
def test_keep_alive_requests_in_time_are_served_as_before(
    slow_server: tuple[str, AuthTable],
) -> None:
    url, _ = slow_server
    with httpx.Client(timeout=GUARD_S) as client:
        for _ in range(3):
            r = client.post(f"{url}/graphql", json={"query": "{ health }"})
            assert r.status_code == 200 and "errors" not in r.json(), r.text
            time.sleep(HEAD_S * 1.5)  # idle between requests is keep-alive's, not ours


def _flood_document() -> str:
    """`{ health }` and a 3.9 MB comment: seconds of lexing, a public operation."""
    return "{ health }\n#" + "x" * 3_900_000


@pytest.mark.req("API-2", "API-3")
@pytest.mark.parametrize("authorization", [None, "Bearer not-a-token", "Basic eDp5"])
def test_a_large_document_without_a_known_token_is_401_before_it_is_lexed(
    live_server: Any, authorization: str | None
) -> None:
    document = _flood_document()
    assert 3_500_000 < len(document) < 4_000_000
    headers = {"content-type": "application/json"}
    if authorization:
        headers["authorization"] = authorization
    r = httpx.post(
        f"{live_server.url}/graphql",
        content=json.dumps({"query": document}).encode(),
        headers=headers,
        timeout=GUARD_S,
    )
    # Lexed first (as before), it ran `health` for anyone, with a wrong token too.
    assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer", r.text[:300]
    error = r.json()["errors"][0]
    assert error["extensions"]["code"] == "UNAUTHENTICATED"
    if authorization is None:
        assert error["extensions"]["details"] == {"anonymousMaxBytes": 16_384}
