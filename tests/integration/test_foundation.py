"""The foundation: a real Neo4j, the schema, the offline models, GraphQL health."""

from __future__ import annotations

import subprocess
import sys
import uuid

import pytest

from graphsvc.service import Service
from graphsvc.store.connection import SCHEMA_VERSION, Database


def test_driver_writes_and_reads_nodes_in_real_neo4j(db: Database, subject: str) -> None:
    name = f"probe-{uuid.uuid4().hex}"
    db.driver.execute_query(
        "CREATE (:Probe {subject: $s, name: $n})", {"s": subject, "n": name}, database_=db.database
    )
    records, _, _ = db.driver.execute_query(
        "MATCH (p:Probe {subject: $s}) RETURN p.name AS name",
        {"s": subject},
        database_=db.database,
        routing_="r",
    )
    assert [r["name"] for r in records] == [name]
    db.driver.execute_query(
        "MATCH (p:Probe {subject: $s}) DELETE p", {"s": subject}, database_=db.database
    )


def test_schema_apply_is_idempotent_and_creates_indexes(db: Database) -> None:
    def snapshot() -> list[tuple[str, str]]:
        records, _, _ = db.driver.execute_query(
            "SHOW INDEXES YIELD name, type RETURN name, type ORDER BY name", database_=db.database
        )
        return [(r["name"], r["type"]) for r in records]

    before = snapshot()
    assert db.apply_schema() == SCHEMA_VERSION
    assert snapshot() == before
    kinds = dict(before)
    assert kinds["current_embedding"] == "VECTOR"
    assert kinds["current_text"] == "FULLTEXT"
    records, _, _ = db.driver.execute_query(
        "SHOW CONSTRAINTS YIELD name RETURN collect(name) AS names", database_=db.database
    )
    assert {"atom_key", "revision_key", "operation_key"} <= set(records[0]["names"])


def test_health_reports_real_server_version(service: Service) -> None:
    health = service.health().to_json()
    assert health["neo4j"]["version"].startswith("5.26.")
    assert health["neo4j"]["edition"] == "community"
    assert health["schemaVersion"] == SCHEMA_VERSION
    assert health["embedding"] == {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "dimension": 384,
        "queryRuntime": "onnxruntime",
    }


@pytest.mark.req("API-1")
def test_health_over_http_graphql(live_server) -> None:  # type: ignore[no-untyped-def]
    body = live_server.gql("{ health }")
    assert "errors" not in body, body
    health = body["data"]["health"]
    assert health["neo4j"]["version"].startswith("5.26.")
    assert health["embedding"]["dimension"] == 384


@pytest.mark.req("API-1")
def test_graphiql_is_served(live_server) -> None:  # type: ignore[no-untyped-def]
    import httpx

    r = httpx.get(f"{live_server.url}/graphql", headers={"Accept": "text/html"})
    assert r.status_code == 200
    assert "graphiql" in r.text.lower()


def test_models_load_with_no_network(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # A fresh interpreter with the hub forced offline, an empty HF cache and no proxy
    # reachable: the embedding and the token count must still be real.
    code = (
        "from graphsvc.embed import SentenceEmbedder\n"
        "from graphsvc.tokenizer import Tokenizer\n"
        "e = SentenceEmbedder()\n"
        "assert e.query_runtime == 'onnxruntime', e.query_runtime\n"
        "v = e.embed(['hello world'])[0]\n"
        "import math\n"
        "assert len(v) == 384, len(v)\n"
        "assert abs(math.sqrt(sum(x*x for x in v)) - 1) < 1e-4\n"
        "assert Tokenizer().count('hello world') == 2\n"
        "print('ok')\n"
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": str(tmp_path / "hf"),
        "TIKTOKEN_CACHE_DIR": str(tmp_path / "tiktoken"),
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
        "HOME": str(tmp_path),
    }
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().endswith("ok")
