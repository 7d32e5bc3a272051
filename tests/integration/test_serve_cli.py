"""`graphsvc serve --seed` as a real process: demo corpus loaded, GraphQL answers over HTTP."""

from __future__ import annotations

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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.req("API-1", "API-4")
def test_serve_with_seed_answers_health_and_search(test_settings: Settings, tmp_path: Path) -> None:
    port = _free_port()
    env = {
        **os.environ,
        "GRAPHSVC_NEO4J_URI": test_settings.neo4j_uri,
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
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
