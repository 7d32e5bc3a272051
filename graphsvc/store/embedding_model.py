"""Which embedding model a database's embeddings come from, and the reembed steps.

The record is ``GraphsvcMeta {key: 'embeddingModel'}`` (name, dimension, and while
``graphsvc reembed`` runs: ``migratingTo`` and ``migrationId``). A database without
a record and with embeddings predates the record: its embeddings are
all-MiniLM-L6-v2's (:data:`LEGACY_MODEL`). :mod:`graphsvc.ops.embedding_model`
decides what to do with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from graphsvc.store.connection import Database

__all__ = [
    "LEGACY_DIMENSION",
    "LEGACY_MODEL",
    "ModelRecord",
    "begin_reembed",
    "count_pending",
    "model_record",
    "pending_heads",
    "record_model",
    "recorded_dimension",
    "set_embeddings",
    "vector_index_dimension",
]

LEGACY_MODEL: Final = "sentence-transformers/all-MiniLM-L6-v2"
LEGACY_DIMENSION: Final = 384


@dataclass(frozen=True)
class ModelRecord:
    """What the database says about its embeddings.

    Attributes:
        name: the recorded model (None: no record).
        dimension: its dimension (None: no record).
        migrating_to: the target of an unfinished reembed (None: none).
        migration_id: that reembed's id.
        has_embeddings: whether any current head holds an embedding.
    """

    name: str | None
    dimension: int | None
    migrating_to: str | None
    migration_id: str | None
    has_embeddings: bool

    @property
    def effective_name(self) -> str | None:
        """The model the embeddings come from (None: no record and no embeddings)."""
        if self.name is not None:
            return self.name
        return LEGACY_MODEL if self.has_embeddings else None


def model_record(db: Database) -> ModelRecord:
    row = db.read("meta/embedding_model")[0]
    dim = row["dimension"]
    return ModelRecord(
        name=row["name"],
        dimension=None if dim is None else int(dim),
        migrating_to=row["migratingTo"],
        migration_id=row["migrationId"],
        has_embeddings=bool(row["hasEmbeddings"]),
    )


def recorded_dimension(db: Database) -> int:
    """The dimension of the recorded model (384 without a record)."""
    record = model_record(db)
    return record.dimension or LEGACY_DIMENSION


def vector_index_dimension(db: Database) -> int | None:
    """The vector index's dimension (None: no index)."""
    rows = db.read("index/vector_dimension")
    return int(rows[0]["dimension"]) if rows else None


def record_model(db: Database, name: str, dimension: int) -> None:
    """Record ``name`` as the embeddings' model (and end any reembed)."""
    db.write("meta/set_embedding_model", model=name, dimension=dimension)


def begin_reembed(
    db: Database, *, source: str, source_dimension: int, target: str, migration_id: str
) -> str:
    """Mark a reembed to ``target`` as under way; the run's id (an unfinished run's,
    when one is resumed)."""
    rows = db.write(
        "reembed/begin",
        source=source,
        sourceDimension=source_dimension,
        target=target,
        migrationId=migration_id,
    )
    return str(rows[0]["migrationId"])


def pending_heads(db: Database, migration_id: str, limit: int) -> list[dict[str, Any]]:
    """Up to ``limit`` heads (subject, atomId, rev, text) not yet re-embedded."""
    return db.read_rows("reembed/pending", migrationId=migration_id, limit=limit)


def count_pending(db: Database, migration_id: str) -> tuple[int, int]:
    """(pending, total) heads with an embedding."""
    row = db.read("reembed/count_pending", migrationId=migration_id)[0]
    return int(row["pending"]), int(row["total"])


def set_embeddings(db: Database, migration_id: str, rows: list[dict[str, Any]]) -> int:
    """Write one batch (subject, atomId, rev, embedding); how many heads took it."""
    out = db.write("reembed/set_embeddings", migrationId=migration_id, rows=rows)
    return int(out[0]["updated"]) if out else 0
