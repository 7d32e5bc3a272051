"""Plumbing shared by the atomisation, CLI and forensic tests.

- ``FakeOllama``: a loopback HTTP server answering ``POST /api/generate`` like Ollama
  (the only stand-in these tests use; Neo4j, the embedder and the tokenizer are real).
- ``run_cli``: runs the atomisation CLI commands in a subprocess through a tiny
  argparse that calls :func:`graphsvc.cli.atomise.register` (independent of how
  the main ``graphsvc`` parser wires them).
- builders (``create``) and direct-Neo4j probes (``cypher``, ``footprint``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from write_support import cypher
from write_support import subject_counts as footprint

from graphsvc.core.binding import Binding
from graphsvc.core.write_models import AtomView
from graphsvc.inputs.models import parse_changes
from graphsvc.runtime import service_for
from graphsvc.service import Service
from graphsvc.settings import Settings

__all__ = [
    "LEVEL",
    "SENTENCES",
    "THREE_SENTENCES",
    "FakeOllama",
    "answer",
    "atoms_answer",
    "create",
    "cypher",
    "fake_ollama",
    "footprint",
    "run_cli",
    "service_with",
]

# Three sentences of 20-30 cl100k tokens each: with max_atom_tokens=50 the rule
# curator makes exactly three atoms, and the whole (about 75 tokens) is over budget.
SENTENCES = (
    "The ingest worker on host zephyr crashed at 02:14 UTC after its scratch disk "
    "filled up completely with rotated debug logs.",
    "Alerts about the crash fired eleven minutes later because the disk threshold "
    "had been configured at ninety-eight percent.",
    "The on-call engineer restored service by deleting old logs and re-enabling the "
    "nightly rotation job that the migration had disabled.",
)
THREE_SENTENCES = " ".join(SENTENCES)

# Two atoms a little over 50 tokens: an LLM answer of these can be split again and
# again, which builds a deep atomOf chain.
LEVEL = [
    "Every nightly backup of the ledger database is copied to two separate regions, checked "
    "against its signed manifest, encrypted with the current archive key and then kept for "
    "ninety days before the storage lifecycle rule finally deletes it from the cold storage "
    "tier in the secondary data centre.",
    "Restores are rehearsed every quarter by the storage team, who carefully time the "
    "recovery, compare the row counts with the production ledger and file a short written "
    "report listing any drift, checksum mismatches or missing partitions that they found "
    "during the whole exercise last spring.",
]  # 51 and 52 tokens: over a budget of 50, within its 25% tolerance


def service_with(base: Service, **changes: Any) -> Service:
    """A second Service on the same database and models with changed settings."""
    return service_for(base.settings.with_(**changes), base.db, base.embedder, base.tokenizer)


def create(
    service: Service,
    binding: Binding,
    text: str,
    *,
    links: Sequence[dict[str, Any]] = (),
    sources: Sequence[dict[str, Any]] = (),
) -> AtomView:
    """Write one new atom through the public write path; returns its view."""
    change = {
        "id": "a",
        "op": "create",
        "content": {"text": text, "links": list(links)},
        "sources": list(sources),
    }
    outcome = service.write(binding, parse_changes([change]))
    view: AtomView = outcome.changes["a"]
    return view


# --------------------------------------------------------------------------- Ollama


def answer(model_text: str) -> bytes:
    """An Ollama ``/api/generate`` response body carrying ``model_text``."""
    doc = {"model": "gemma3:4b", "response": model_text, "done": True}
    return json.dumps(doc).encode()


def atoms_answer(texts: Sequence[str]) -> bytes:
    return answer(json.dumps({"atoms": [{"text": t} for t in texts]}))


MALFORMED = answer("Here are the atoms: first, second.")


@dataclass
class FakeOllama:
    """Answers every request with ``reply`` (bytes) after ``delay_s``; records request bodies."""

    reply: bytes = MALFORMED
    delay_s: float = 0.0
    bodies: list[dict[str, Any]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    base_url: str = ""


@contextmanager
def fake_ollama(reply: bytes = MALFORMED, delay_s: float = 0.0) -> Iterator[FakeOllama]:
    fake = FakeOllama(reply=reply, delay_s=delay_s)
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            with lock:
                fake.bodies.append(json.loads(body))
                fake.paths.append(self.path)
                data = fake.reply
            if fake.delay_s:
                time.sleep(fake.delay_s)  # a model that takes its time
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    fake.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


# --------------------------------------------------------------------------- CLI

_CLI = (
    "import argparse, sys\n"
    "from graphsvc.cli.atomise import register\n"
    "from graphsvc.settings import Settings\n"
    "p = argparse.ArgumentParser(prog='graphsvc')\n"
    "sub = p.add_subparsers(dest='command', required=True)\n"
    "register(sub)\n"
    "a = p.parse_args(sys.argv[1:])\n"
    "sys.exit(a.handler(a, Settings.from_env()))\n"
)


@dataclass
class CliResult:
    code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)


def cli_env(settings: Settings, state_dir: Path, **extra: str) -> dict[str, str]:
    """Environment for a CLI subprocess on the test Neo4j, sharing the signing key."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHSVC_")}
    env.update(
        GRAPHSVC_NEO4J_URI=settings.neo4j.uri,
        GRAPHSVC_NEO4J_USER=settings.neo4j.user,
        GRAPHSVC_NEO4J_PASSWORD=settings.neo4j.password,
        GRAPHSVC_NEO4J_DATABASE=settings.neo4j.database,
        GRAPHSVC_STATE_DIR=str(state_dir),
        GRAPHSVC_KEY_FILE=settings.paths.key_file,
        GRAPHSVC_SECRET_FILE=settings.paths.secret_file,
        GRAPHSVC_CURATOR="rule",
    )
    env.update(extra)
    return env


def run_cli(args: Sequence[str], env: dict[str, str], timeout: float = 180) -> CliResult:
    proc = subprocess.run(
        [sys.executable, "-c", _CLI, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return CliResult(proc.returncode, proc.stdout, proc.stderr)
