"""Integration fixtures: one real Neo4j per test session, a fresh subject per test.

The managed Neo4j (``graphsvc.localdb``) is started on a free port with a data
folder of its own, unless ``GRAPHSVC_NEO4J_URI`` points at an existing server.
Nothing here is mocked: Neo4j, the embedding model and the tokenizer are real.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
from serve_support import serving

from graphsvc.core.binding import Binding
from graphsvc.embed import get_embedder
from graphsvc.http.app import create_app
from graphsvc.keys.auth import AuthTable
from graphsvc.localdb import LocalNeo4j
from graphsvc.runtime import service_for
from graphsvc.service import Service
from graphsvc.settings import Settings
from graphsvc.store.connection import Database
from graphsvc.tokenizer import get_tokenizer


@pytest.fixture(scope="session")
def neo4j_uri(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    external = os.environ.get("GRAPHSVC_NEO4J_URI")
    if external:
        yield external
        return
    settings = Settings.from_env(state_dir=tmp_path_factory.mktemp("neo4j-state"))
    local = LocalNeo4j(settings, name="test", port=0, auth=False)
    inst = local.start(die_with_parent=True)
    try:
        yield inst.uri
    finally:
        local.stop()


@pytest.fixture(scope="session")
def test_settings(neo4j_uri: str, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    state = tmp_path_factory.mktemp("graphsvc-state")
    return Settings.from_env(
        neo4j_uri=neo4j_uri,
        state_dir=state,
        key_file=str(state / "signing-key.json"),
        secret_file=str(state / "server-secret"),
    )


@pytest.fixture(scope="session")
def db(test_settings: Settings) -> Iterator[Database]:
    database = Database(
        test_settings.neo4j.uri,
        test_settings.neo4j.user,
        test_settings.neo4j.password,
        test_settings.neo4j.database,
    )
    database.apply_schema()
    yield database
    database.close()


@pytest.fixture(scope="session")
def service(test_settings: Settings, db: Database) -> Service:
    return service_for(test_settings, db, get_embedder(), get_tokenizer())


@pytest.fixture()
def subject() -> str:
    """A fresh subject per test: tests never see each other's data."""
    return f"t-{uuid.uuid4().hex[:12]}"


@pytest.fixture()
def human(subject: str) -> Binding:
    return Binding(subject, "default", "human", "alice", may_purge=True)


@pytest.fixture()
def agent(subject: str) -> Binding:
    return Binding(subject, "default", "agent", "bot-1")


@dataclass
class LiveServer:
    """graphsvc served by uvicorn on a loopback port, in this process."""

    url: str
    auth: AuthTable

    def token_for(self, binding: Binding) -> str:
        token = uuid.uuid4().hex
        self.auth.add(token, binding)
        return token

    def gql(
        self, query: str, variables: dict[str, object] | None = None, *, token: str | None = None
    ) -> dict[str, object]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        r = httpx.post(
            f"{self.url}/graphql",
            json={"query": query, "variables": variables or {}},
            headers=headers,
            timeout=60,
        )
        assert r.status_code < 500, r.text
        body: dict[str, object] = r.json()
        return body


@pytest.fixture(scope="session")
def live_server(service: Service) -> Iterator[LiveServer]:
    auth = AuthTable({})
    with serving(create_app(service, auth)) as url:
        yield LiveServer(url=url, auth=auth)
