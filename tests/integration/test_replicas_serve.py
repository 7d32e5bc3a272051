"""Two `graphsvc serve` processes on one Neo4j behave as one service (docs/operations.md).

They share the MAC secret and the signing key through configuration
(``GRAPHSVC_SECRET_FILE``, ``GRAPHSVC_KEY_FILE``): a cursor and an InputToken handed
out by one are accepted by the other, and concurrent revisions of one head sent to
both have exactly one winner (the CAS is in Neo4j, not in a process). A third
process configured with another secret refuses to start while they run.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from graphsvc.settings import Settings

SUBJECT = "replicas-e2e"
WRITE = """
mutation($changes: [ChangeInput!]!) {
  write(changes: $changes) { changes { id atom { atomId rev } } }
}
"""
OBSERVE = "mutation($input: JSON!) { observe(input: $input) }"
SEARCH = """
query($q: String!, $cursor: String) {
  search(query: $q, limit: 2, cursor: $cursor) { hits { atom { atomId } } cursor }
}
"""
DIGEST = "sha256:" + "ab" * 32


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Replica:
    def __init__(self, name: str, env: dict[str, str], state: Path) -> None:
        self.name = name
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/graphql"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "graphsvc", "serve", "--port", str(self.port)],
            env={**env, "GRAPHSVC_STATE_DIR": str(state)},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )

    def wait_ready(self) -> None:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                if httpx.get(f"http://127.0.0.1:{self.port}/readyz", timeout=5).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        out = self.proc.stdout.read() if self.proc.poll() is not None and self.proc.stdout else ""
        raise AssertionError(f"replica {self.name} did not become ready: {out[-2000:]}")

    def gql(self, query: str, variables: dict[str, Any], token: str) -> dict[str, Any]:
        r = httpx.post(
            self.url,
            json={"query": query, "variables": variables},
            headers={"Authorization": f"Bearer {token}"},
            timeout=60,
        )
        body: dict[str, Any] = r.json()
        return body

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)  # a clean stop gives the lease back
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture()
def shared(test_settings: Settings, tmp_path: Path) -> dict[str, Any]:
    keys = tmp_path / "keys"
    keys.mkdir(mode=0o700)
    secret = keys / "server-secret"
    fd = os.open(secret, os.O_WRONLY | os.O_CREAT, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(secrets.token_bytes(32).hex())
    tokens = {kind: secrets.token_urlsafe(24) for kind in ("human", "agent")}
    auth = keys / "auth.json"
    fd = os.open(auth, os.O_WRONLY | os.O_CREAT, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump(
            {
                "tokens": {
                    token: {
                        "subject": SUBJECT,
                        "policy": "default",
                        "actor": {"kind": kind, "id": f"e2e-{kind}"},
                    }
                    for kind, token in tokens.items()
                }
            },
            fh,
        )
    env = {
        **os.environ,
        "GRAPHSVC_NEO4J_URI": test_settings.neo4j.uri,
        "GRAPHSVC_SECRET_FILE": str(secret),
        "GRAPHSVC_KEY_FILE": str(keys / "signing-key.json"),
        "GRAPHSVC_AUTH_FILE": str(auth),
    }
    return {"env": env, "tokens": tokens, "tmp": tmp_path}


@pytest.fixture()
def two_replicas(shared: dict[str, Any]) -> Iterator[tuple[Replica, Replica]]:
    a = Replica("a", shared["env"], shared["tmp"] / "state-a")
    b = Replica("b", shared["env"], shared["tmp"] / "state-b")
    try:
        a.wait_ready()
        b.wait_ready()
        yield a, b
    finally:
        a.stop()
        b.stop()


def _created(body: dict[str, Any]) -> dict[str, Any]:
    assert "errors" not in body, body
    atom: dict[str, Any] = body["data"]["write"]["changes"][0]["atom"]
    return atom


def test_two_replicas_share_cursors_tokens_and_one_cas(
    two_replicas: tuple[Replica, Replica], shared: dict[str, Any]
) -> None:
    a, b = two_replicas
    human, agent = shared["tokens"]["human"], shared["tokens"]["agent"]
    texts = [f"replica note {i} about tidal harbours" for i in range(5)]
    atoms = [
        _created(
            a.gql(
                WRITE,
                {
                    "changes": [
                        {
                            "id": "c",
                            "op": "CREATE",
                            "content": {"text": t, "links": []},
                            "sources": [],
                        }
                    ]
                },
                human,
            )
        )
        for t in texts
    ]

    # A cursor sealed by A continues on B.
    first = a.gql(SEARCH, {"q": "tidal harbours"}, human)
    assert "errors" not in first, first
    cursor = first["data"]["search"]["cursor"]
    assert cursor
    second = b.gql(SEARCH, {"q": "tidal harbours", "cursor": cursor}, human)
    assert "errors" not in second, second
    page1 = {h["atom"]["atomId"] for h in first["data"]["search"]["hits"]}
    page2 = {h["atom"]["atomId"] for h in second["data"]["search"]["hits"]}
    assert page2 and page1.isdisjoint(page2)

    # An InputToken issued by A is accepted by B.
    observed = a.gql(
        OBSERVE,
        {"input": {"payloadDigest": DIGEST, "basis": [{"atomId": atoms[0]["atomId"], "rev": 1}]}},
        agent,
    )
    assert "errors" not in observed, observed
    token = observed["data"]["observe"]
    made = b.gql(
        WRITE,
        {
            "changes": [
                {
                    "id": "t",
                    "op": "CREATE",
                    "content": {"text": "derived from what A presented", "links": []},
                    "sources": [],
                    "input": token,
                }
            ]
        },
        agent,
    )
    assert _created(made)["rev"] == 1

    # Eight revisions of the same head, four to each replica at once: one wins.
    target = {"atomId": atoms[1]["atomId"], "rev": 1}
    barrier = threading.Barrier(8)
    answers: list[dict[str, Any]] = []
    lock = threading.Lock()

    def revise(i: int) -> None:
        replica = a if i % 2 == 0 else b
        change = {
            "id": "r",
            "op": "REVISE",
            "target": target,
            "content": {"text": f"revision {i}", "links": []},
            "sources": [],
        }
        barrier.wait()
        body = replica.gql(WRITE, {"changes": [change]}, human)
        with lock:
            answers.append(body)

    threads = [threading.Thread(target=revise, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wins = [x for x in answers if "errors" not in x]
    codes = sorted(x["errors"][0]["extensions"]["code"] for x in answers if "errors" in x)
    assert len(wins) == 1, answers
    assert wins[0]["data"]["write"]["changes"][0]["atom"]["rev"] == 2
    assert codes == ["CAS_CONFLICT"] * 7


def test_a_replica_with_another_secret_refuses_to_start(
    two_replicas: tuple[Replica, Replica], shared: dict[str, Any]
) -> None:
    other_secret = shared["tmp"] / "other-secret"
    fd = os.open(other_secret, os.O_WRONLY | os.O_CREAT, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(secrets.token_bytes(32).hex())
    env = {**shared["env"], "GRAPHSVC_SECRET_FILE": str(other_secret)}
    c = Replica("c", env, shared["tmp"] / "state-c")
    try:
        out, _ = c.proc.communicate(timeout=240)
    finally:
        c.stop()
    assert c.proc.returncode != 0
    assert "REPLICA_KEYS_MISMATCH" in out
    # The running replicas are untouched.
    for replica in two_replicas:
        assert httpx.get(f"http://127.0.0.1:{replica.port}/readyz", timeout=10).status_code == 200
