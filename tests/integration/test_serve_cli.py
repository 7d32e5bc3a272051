"""`graphsvc serve --seed` as a real process: demo corpus loaded, GraphQL answers over HTTP."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from graphsvc.settings import Settings
from graphsvc.store.connection import Database


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.req("API-1", "API-4")
def test_serve_with_seed_answers_health_and_search(test_settings: Settings, tmp_path: Path) -> None:
    port = _free_port()
    env = {
        **os.environ,
        "GRAPHSVC_NEO4J_URI": test_settings.neo4j.uri,
        "GRAPHSVC_STATE_DIR": str(tmp_path),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "graphsvc", "serve", "--seed", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}/graphql"
    try:
        deadline = time.monotonic() + 180
        body = None
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                r = httpx.post(url, json={"query": "{ health }"}, timeout=5)
                body = r.json()
                break
            except httpx.HTTPError:
                time.sleep(0.5)
        assert body is not None, "serve did not answer"
        assert body["data"]["health"]["neo4j"]["version"].startswith("5.26.")
        auth = json.loads((tmp_path / "demo-auth.json").read_text())
        assert (tmp_path / "demo-auth.json").stat().st_mode & 0o077 == 0
        token = next(k for k, v in auth["tokens"].items() if v["actor"]["kind"] == "human")
        r = httpx.post(
            url,
            json={
                "query": '{ search(query: "clouds form when vapour cools", limit: 3) '
                "{ hits { atom { text } score } } }"
            },
            headers={"Authorization": f"Bearer {token}"},
            timeout=60,
        )
        hits = r.json()["data"]["search"]["hits"]
        assert hits and "Condensation" in hits[0]["atom"]["text"]
        # GRAPHSVC_KEEP_ALIVE_S (30 s): a connection idle past uvicorn's own default
        # (5 s) still carries the next request; with that default the server closed it.
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        health = json.dumps({"query": "{ health }"})
        kind = {"Content-Type": "application/json"}
        conn.request("POST", "/graphql", body=health, headers=kind)
        assert conn.getresponse().read()
        first = conn.sock
        time.sleep(6)
        conn.request("POST", "/graphql", body=health, headers=kind)
        again = conn.getresponse()
        assert again.status == 200 and json.loads(again.read())["data"]["health"]
        assert conn.sock is first
        conn.close()
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            output, _ = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            output, _ = proc.communicate()
    # GRAPHSVC_HTTP_RUNTIME=auto: uvloop and httptools are installed with graphsvc.
    assert "graphsvc: HTTP on uvloop + httptools" in output


@pytest.mark.req("API-1", "API-4")
def test_serve_with_two_workers_answers_from_two_replicas(
    test_settings: Settings, tmp_path: Path, db: Database
) -> None:
    from graphsvc.store.replicas import live_replicas

    port = _free_port()
    auth = tmp_path / "auth.json"
    token = "workers-test-token"
    subject = f"t-workers-{port}"
    binding = {"subject": subject, "actor": {"kind": "human", "id": "w"}}
    auth.write_text(json.dumps({"tokens": {token: binding}}))
    auth.chmod(0o600)
    env = {
        **os.environ,
        "GRAPHSVC_NEO4J_URI": test_settings.neo4j.uri,
        "GRAPHSVC_STATE_DIR": str(tmp_path),
        "GRAPHSVC_AUTH_FILE": str(auth),
        "GRAPHSVC_JOB_POLL_S": "60",
        # The standard library's loop and h11 in the workers (the default is uvloop).
        "GRAPHSVC_HTTP_RUNTIME": "asyncio",
    }
    before = {r.replica_id for r in live_replicas(db, time.time())}
    proc = subprocess.Popen(
        [sys.executable, "-m", "graphsvc", "serve", "--workers", "2", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}/graphql"
    headers = {"Authorization": f"Bearer {token}"}
    try:
        deadline = time.monotonic() + 240
        mine: set[str] = set()
        while time.monotonic() < deadline and proc.poll() is None and len(mine) < 2:
            mine = {r.replica_id for r in live_replicas(db, time.time())} - before
            time.sleep(0.5)
        assert len(mine) == 2, "two workers did not both register"
        write = (
            'mutation { write(changes: [{id: "a", op: CREATE, content: {text: "Tidal pools '
            'hold sea anemones between the tides", links: []}, sources: []}]) { indexing } }'
        )
        with httpx.Client(timeout=60) as client:
            assert client.post(url, json={"query": write}, headers=headers).json()["data"]
            found = [
                client.post(
                    url,
                    json={
                        "query": '{ search(query: "anemones in tidal pools") '
                        "{ hits { atom { text } } } }"
                    },
                    headers=headers,
                ).json()["data"]["search"]["hits"]
                for _ in range(6)
            ]
        # Whichever worker answered, each search found the write (one database).
        assert all(hits and "anemones" in hits[0]["atom"]["text"] for hits in found)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            output, _ = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            output, _ = proc.communicate()
    # A clean stop gives both leases back.
    assert not ({r.replica_id for r in live_replicas(db, time.time())} & mine)
    assert "graphsvc: HTTP on asyncio + h11" in output
