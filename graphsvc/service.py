"""Use cases: what each public operation does, over the store and the pure core.

Resolvers and CLI commands are one call into a :class:`Service` method.
"""

from __future__ import annotations

from typing import Any

from graphsvc.embed import Embedder
from graphsvc.settings import Settings
from graphsvc.store.connection import Database
from graphsvc.tokenizer import Tokenizer

__all__ = ["Service"]


class Service:
    """The operations of SPEC §1 (CORE-1), each taking the caller's Binding."""

    def __init__(
        self, settings: Settings, db: Database, embedder: Embedder, tokenizer: Tokenizer
    ) -> None:
        self.settings = settings
        self.db = db
        self.embedder = embedder
        self.tokenizer = tokenizer

    def health(self) -> dict[str, Any]:
        """Server version, schema version and model facts (no data, no auth needed)."""
        server = self.db.server_info()
        return {
            "status": "ok",
            "neo4j": server,
            "schemaVersion": self.db.schema_version(),
            "embedding": {
                "model": self.embedder.model_name,
                "dimension": self.embedder.dimension,
            },
            "tokenizer": self.tokenizer.name,
            "curator": self.settings.curator,
        }
