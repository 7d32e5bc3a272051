"""What the typed reads answer, as plain data (no Neo4j here): the change feed's
records, a replayed manifest, the entity index's views, an export's report and the
service's health.

The store and the use cases build these; the edges (GraphQL types, the CLI) show
them, importing this module rather than the layers that build them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Final

from graphsvc.core.write_models import AtomRef

__all__ = [
    "EXPORT_FORMATS",
    "ChangeRecord",
    "EntityView",
    "ExportReport",
    "Health",
    "ManifestReplay",
    "MentionView",
    "Neo4jServer",
    "PresentedRevision",
]


# ------------------------------------------------------------------ the change feed
@dataclass(frozen=True)
class ChangeRecord:
    """One operation of the feed (docs/time-travel.md)."""

    seq: int
    operation_id: str
    kind: str  # write | atomise | purge
    actor_kind: str | None
    actor_id: str | None
    at: str
    created: tuple[AtomRef, ...]
    revised: tuple[AtomRef, ...]
    retired: tuple[AtomRef, ...]
    archived: tuple[AtomRef, ...]
    purged: int
    redacted: int

    def to_json(self) -> dict[str, Any]:
        """The record as ``graphsvc changes --json`` and the MCP ``changes`` tool show it."""
        return {
            "sequence": self.seq,
            "operationId": self.operation_id,
            "kind": self.kind,
            "actor": None
            if self.actor_kind is None
            else {"kind": self.actor_kind, "id": self.actor_id},
            "committedAt": self.at,
            "created": [r.to_json() for r in self.created],
            "revised": [r.to_json() for r in self.revised],
            "retired": [r.to_json() for r in self.retired],
            "archived": [r.to_json() for r in self.archived],
            "purged": self.purged,
            "redacted": self.redacted,
        }


# ------------------------------------------------------------------ read replay
@dataclass(frozen=True)
class PresentedRevision:
    """One presented revision and what happened to its atom since."""

    atom_id: str
    rev: int
    state: str
    text: str
    tokens: int | None
    citations: list[dict[str, Any]]
    watches: list[dict[str, Any]]  # {atomId, rev, headRev, moved}
    change: str  # unchanged | head_moved | retired | archived
    head_rev: int | None


@dataclass(frozen=True)
class ManifestReplay:
    """A manifest replayed against today's graph."""

    manifest_id: str
    created_at: str
    expires_at: str
    expired: bool
    policy: str | None
    actor_kind: str | None
    actor_id: str | None
    digest: str | None
    acknowledged: bool
    presented: list[PresentedRevision]
    same_set_today: bool | None


# ------------------------------------------------------------------ the entity index
@dataclass(frozen=True)
class EntityView:
    """An entity: its key (unique in the subject), display name, type, aliases and
    how many current heads mention it; ``count`` is how often one atom names it
    (0 outside :func:`graphsvc.store.entity_views.entities_of_atoms`)."""

    key: str
    name: str
    type: str
    aliases: tuple[str, ...]
    mentions: int
    count: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "name": self.name,
            "type": self.type,
            "aliases": list(self.aliases),
            "mentions": self.mentions,
        }


@dataclass(frozen=True)
class MentionView:
    """A current head that mentions an entity, and how often."""

    atom_id: str
    rev: int
    count: int
    name: str


# ------------------------------------------------------------------ analysts' export
# The formats of ``graphsvc export`` (graphsvc.ops.export).
EXPORT_FORMATS: Final = ("graphml", "node-link", "csv")


@dataclass
class ExportReport:
    """What an export wrote."""

    format: str
    subject: str
    nodes: int = 0
    edges: int = 0
    atoms: int = 0
    sources: int = 0
    unavailable: int = 0
    revisions: int = 0
    links: int = 0
    citations: int = 0
    lineage: int = 0
    entities: int = 0
    mentions: int = 0
    signatures: dict[str, int] = field(
        default_factory=lambda: {"verified": 0, "invalid": 0, "unknown_key": 0}
    )
    pages: int = 0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


# ------------------------------------------------------------------ health
@dataclass(frozen=True)
class Neo4jServer:
    """The Neo4j server's name, version and edition."""

    name: str
    version: str
    edition: str


@dataclass(frozen=True)
class Health:
    """``{ health }``: the server's and the models' facts (no data)."""

    neo4j: Neo4jServer
    schema_version: int | None
    # How old the Neo4j facts are (seconds; a serving process refreshes them).
    neo4j_age_s: float
    embedding_model: str
    embedding_dimension: int
    query_runtime: str
    tokenizer: str
    curator: str
    # The entity extractor's version (None: the entity index is off).
    entity_extractor: str | None
    status: str = "ok"

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "neo4j": asdict(self.neo4j),
            "schemaVersion": self.schema_version,
            "neo4jAgeS": self.neo4j_age_s,
            "embedding": {
                "model": self.embedding_model,
                "dimension": self.embedding_dimension,
                "queryRuntime": self.query_runtime,
            },
            "tokenizer": self.tokenizer,
            "curator": self.curator,
            "entities": {"extractor": self.entity_extractor},
        }
