"""Wiring: settings → (managed) Neo4j → Database → Service.

``build_service`` is what ``graphsvc serve`` and every CLI data command use; tests
build the same objects around their session Neo4j.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

from graphsvc.localdb import Instance, LocalNeo4j
from graphsvc.service import Service
from graphsvc.settings import Settings
from graphsvc.store.connection import Database

__all__ = ["Runtime", "build_service", "connect"]


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


@dataclass
class Runtime:
    """The live parts of one process."""

    settings: Settings
    db: Database
    managed: Instance | None = None


def connect(
    settings: Settings,
    *,
    progress: Callable[[str], None] = _stderr,
    die_with_parent: bool = False,
) -> Runtime:
    """Connect to the configured Neo4j, starting the managed one when no URI is set."""
    managed: Instance | None = None
    if settings.managed_neo4j:
        local = LocalNeo4j(settings, name="serve", progress=progress)
        managed = local.start(die_with_parent=die_with_parent)
        db = Database(managed.uri, managed.user, managed.password, settings.neo4j_database)
    else:
        db = Database(
            settings.neo4j_uri,
            settings.neo4j_user,
            settings.neo4j_password,
            settings.neo4j_database,
        )
    return Runtime(settings=settings, db=db, managed=managed)


def build_service(
    settings: Settings,
    *,
    progress: Callable[[str], None] = _stderr,
    die_with_parent: bool = False,
) -> tuple[Service, Runtime]:
    """Connect, apply the schema (idempotent), load the models, build the Service."""
    from graphsvc.embed import get_embedder
    from graphsvc.ops.index import FULLTEXT_ANALYZER, fulltext_needs_rebuild
    from graphsvc.tokenizer import get_tokenizer

    rt = connect(settings, progress=progress, die_with_parent=die_with_parent)
    rt.db.apply_schema()
    old = fulltext_needs_rebuild(rt.db)
    if old is not None:
        progress(
            f"graphsvc: the fulltext index uses the {old!r} analyzer, not {FULLTEXT_ANALYZER!r}; "
            "run `graphsvc index rebuild --fulltext` once for the better lexical ranking"
        )
    service = Service(settings, rt.db, get_embedder(), get_tokenizer())
    return service, rt
