"""A serving process SIGKILLed at random moments loses no deferred work and does none twice.

A real ``graphsvc serve`` subprocess on the session's Neo4j, with a namespace
policy that atomises in deferred mode and an Ollama-like loopback server that takes
a while to answer (the only stand-in: an LLM cannot run here), so jobs are in
flight when the process dies. The test writes sources through GraphQL over HTTP,
SIGKILLs the server at a random moment after each start (``KILLS`` times, more
writes after each restart), then lets one last start finish the work. Every job
caused by a committed write must end ``done`` and every source must be atomised
exactly once: three atoms, one ``atomisation_complete`` event, one job.
"""

from __future__ import annotations

import json
import os
import random
import secrets
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from atomise_support import SENTENCES, THREE_SENTENCES, atoms_answer, cypher, fake_ollama

from graphsvc.settings import Settings
from graphsvc.store.connection import Database

KILLS = 20
FIRST_WRITES = 12
WRITES_PER_START = 2
BUDGET = 50
WRITE = """
mutation($changes: [ChangeInput!]!) {
  write(changes: $changes) { changes { id atom { atomId rev } } atomiseMode }
}
"""
POLICY = "mutation($p: JSON!) { setNamespacePolicy(policy: $p) }"
JOBS = "{ jobs(first: 100) { counts { pending done failed } } }"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """One ``graphsvc serve`` process; ``start`` again after ``kill``."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.env = env
        self.log = log
        self.port = _free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "graphsvc", "serve", "--port", str(self.port)],
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.log.read_text()[-3000:]
            try:
                r = httpx.get(f"http://127.0.0.1:{self.port}/readyz", timeout=5)
                if r.status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise AssertionError("serve did not become ready: " + self.log.read_text()[-3000:])

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def gql(self, query: str, variables: dict[str, Any], token: str) -> dict[str, Any]:
        r = httpx.post(
            f"http://127.0.0.1:{self.port}/graphql",
            json={"query": query, "variables": variables},
            headers={"Authorization": f"Bearer {token}"},
            timeout=60,
        )
        body: dict[str, Any] = r.json()
        assert "errors" not in body, body
        return body["data"]


def _private_file(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)


@pytest.mark.req("ATM-9")
def test_twenty_sigkills_during_deferred_work_lose_nothing_and_repeat_nothing(
    test_settings: Settings, db: Database, tmp_path: Path
) -> None:
    subject = f"sigkill-{secrets.token_hex(4)}"
    token = secrets.token_urlsafe(24)
    keys = tmp_path / "keys"
    keys.mkdir(mode=0o700)
    _private_file(keys / "secret", secrets.token_bytes(32).hex())
    grant = {"subject": subject, "policy": "default", "actor": {"kind": "human", "id": "ops"}}
    _private_file(keys / "auth.json", json.dumps({"tokens": {token: grant}}))
    rng = random.Random(20261201)

    with fake_ollama(atoms_answer(SENTENCES), delay_s=0.3) as fake:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHSVC_")}
        env.update(
            GRAPHSVC_NEO4J_URI=test_settings.neo4j.uri,
            GRAPHSVC_NEO4J_USER=test_settings.neo4j.user,
            GRAPHSVC_NEO4J_PASSWORD=test_settings.neo4j.password,
            GRAPHSVC_NEO4J_DATABASE=test_settings.neo4j.database,
            GRAPHSVC_STATE_DIR=str(tmp_path / "state"),
            GRAPHSVC_SECRET_FILE=str(keys / "secret"),
            GRAPHSVC_KEY_FILE=str(keys / "signing-key.json"),
            GRAPHSVC_AUTH_FILE=str(keys / "auth.json"),
            GRAPHSVC_CURATOR="ollama",
            GRAPHSVC_OLLAMA_URL=fake.base_url,
            # A killed process's jobs are taken again 2 s after its last renewal.
            GRAPHSVC_JOB_LEASE_S="2",
            GRAPHSVC_JOB_POLL_S="0.5",
            GRAPHSVC_JOB_MAX_ATTEMPTS="50",
            # A killed replica's registration would hold the next start otherwise.
            GRAPHSVC_REPLICA_LEASE_S="2",
        )
        server = Server(env, tmp_path / "serve.log")
        sources: list[str] = []

        def write_sources(n: int) -> None:
            for _ in range(n):
                text = f"{THREE_SENTENCES} Incident note {len(sources)}."
                change = {"id": "s", "op": "CREATE", "content": {"text": text, "links": []}}
                data = server.gql(WRITE, {"changes": [{**change, "sources": []}]}, token)
                assert data["write"]["atomiseMode"] == "deferred"
                sources.append(data["write"]["changes"][0]["atom"]["atomId"])

        try:
            server.start()
            server.gql(
                POLICY,
                {
                    "p": {
                        "auto_atomise_mode": "deferred",
                        "auto_atomise_threshold_cl100k": 40,
                        "auto_atomise_max_atom_tokens": BUDGET,
                    }
                },
                token,
            )
            write_sources(FIRST_WRITES)
            for _ in range(KILLS):
                time.sleep(rng.uniform(0.0, 1.2))  # the worker is mid-job at some point
                server.kill()
                server.start()
                write_sources(WRITES_PER_START)
            deadline = time.monotonic() + 240
            counts: dict[str, int] = {}
            while time.monotonic() < deadline:
                counts = server.gql(JOBS, {}, token)["jobs"]["counts"]
                if counts["pending"] == 0:
                    break
                time.sleep(0.5)
        finally:
            server.stop()
        calls = len(fake.bodies)

    assert len(sources) == FIRST_WRITES + KILLS * WRITES_PER_START
    assert counts == {"pending": 0, "done": len(sources), "failed": 0}, counts
    jobs = cypher(
        db,
        "MATCH (j:Job {subject: $s}) RETURN j.atomId AS atomId, j.state AS state, "
        "j.outcome AS outcome, j.attempts AS attempts",
        s=subject,
    )
    assert sorted(j["atomId"] for j in jobs) == sorted(sources)  # one job per source
    # An atomisation records its job's end in its own transaction: no job saw its
    # effect without its record (which a second run would report as "already").
    assert {j["outcome"] for j in jobs} == {"atomised"}
    effects = cypher(
        db,
        "UNWIND $ids AS id "
        "MATCH (a:Atom {subject: $s, atomId: id})-[:HEAD]->(h:Revision) "
        "OPTIONAL MATCH (c:Atom {subject: $s, atomOf: id}) "
        "RETURN id, h.state AS state, h.atomisedInto AS into, count(c) AS atoms",
        s=subject,
        ids=sources,
    )
    assert all(e["state"] == "archived" and e["into"] == 3 for e in effects), effects
    assert all(e["atoms"] == 3 for e in effects), effects  # never atomised twice
    events = cypher(
        db,
        "MATCH (e:SignedEvent {subject: $s}) RETURN count(e) AS n",
        s=subject,
    )
    assert events[0]["n"] == len(sources)  # one atomisation_complete per source
    # Some jobs really were interrupted: the curator was asked more often than once
    # per source, or some job was claimed more than once.
    assert calls > len(sources) or any(j["attempts"] > 1 for j in jobs), (calls, jobs)
