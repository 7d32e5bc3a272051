"""Typed siblings of the root fields SPEC API-6 fixes as ``JSON!`` (the JSON fields stay).

- ``healthTyped: Health!`` beside ``health``;
- ``recordUseTyped: UseRecorded!`` beside ``recordUse``;
- ``purgeTyped: PurgeResult!`` beside ``purge``;
- ``atomiseTyped: AtomiseResult!`` beside ``atomise``;
- ``setNamespacePolicyTyped: NamespacePolicy!`` beside ``setNamespacePolicy``.

Each type is built from the facade's typed result, the same value whose ``to_json()``
the JSON field answers, and holds every key of that JSON (a key the JSON leaves out in
one of its shapes is null here), so the two never disagree. Instants leave in the
house's ``Z`` form (:func:`graphsvc.core.instants.utc_z`), as the JSON scalar writes
them.
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING

import strawberry

from graphsvc.core.instants import utc_z

if TYPE_CHECKING:
    from graphsvc.core.views import Health
    from graphsvc.service import AtomiseOutcome, NamespacePolicy, PurgeOutcome, UseRecorded

__all__ = [
    "AtomiseMode",
    "AtomiseResult",
    "HealthEmbedding",
    "HealthEntities",
    "HealthInfo",
    "HealthNeo4j",
    "NamespacePolicyInfo",
    "PurgeResult",
    "UseRecordedInfo",
    "atomise_result",
    "health_info",
    "namespace_policy_info",
    "purge_result",
    "use_recorded_info",
]


@strawberry.type(description="The Neo4j server the service talks to.")
class HealthNeo4j:
    name: str = strawberry.field(description="The server's product name.")
    version: str = strawberry.field(description="The server's version.")
    edition: str = strawberry.field(description="community or enterprise.")


@strawberry.type(description="The embedding model the service ranks with.")
class HealthEmbedding:
    model: str = strawberry.field(description="The model's name.")
    dimension: int = strawberry.field(description="Its vectors' dimension.")
    query_runtime: str = strawberry.field(description="What embeds a query (e.g. onnx, torch).")


@strawberry.type(description="The entity index (SPEC §16).")
class HealthEntities:
    extractor: str | None = strawberry.field(
        description="The entity extractor's version; null when the entity index is off."
    )


@strawberry.type(name="Health", description="The server's and the models' facts (no data).")
class HealthInfo:
    status: str = strawberry.field(description="ok when the service answers.")
    neo4j: HealthNeo4j = strawberry.field(description="The Neo4j server.")
    schema_version: int | None = strawberry.field(
        description="The database's graphsvc schema version; null before the first migration."
    )
    neo4j_age_s: float = strawberry.field(
        description="How old the Neo4j facts are, in seconds (a serving process refreshes them)."
    )
    embedding: HealthEmbedding = strawberry.field(description="The embedding model.")
    tokenizer: str = strawberry.field(description="The tokenizer that counts tokens.")
    curator: str = strawberry.field(description="The atomisation curator (none, rule, ollama).")
    entities: HealthEntities = strawberry.field(description="The entity index.")


@strawberry.type(name="UseRecorded", description="The answer to one accepted-use event (AV-4).")
class UseRecordedInfo:
    event_id: strawberry.ID = strawberry.field(description="The host's id of the event.")
    repeated: bool = strawberry.field(
        description="The event was seen before: nothing changed (deduplicated)."
    )
    updated: int = strawberry.field(description="How many revisions' usage state it updated.")


@strawberry.type(description="What a purge erased: ids and counts only, never text (§6).")
class PurgeResult:
    atom_id: strawberry.ID = strawberry.field(description="The atom asked for.")
    purged: list[strawberry.ID] = strawberry.field(
        description="The atoms erased (the target and its dependency closure), sorted."
    )
    revisions: int = strawberry.field(description="Revisions erased.")
    inputs: int = strawberry.field(description="Recorded host inputs erased.")
    resumed: bool = strawberry.field(description="An unfinished purge of the atom was resumed.")


@strawberry.type(
    description="What one atomise call did (ATM-8). Fields the JSON leaves out in one of "
    "its shapes are null here: the bookkeeping ones when already atomised, the "
    "transaction's when nothing was atomised (informational)."
)
class AtomiseResult:
    already_atomised: bool = strawberry.field(
        description="The atom was atomised before and force was not set: nothing changed."
    )
    source_id: strawberry.ID = strawberry.field(description="The parent atom.")
    atom_ids: list[strawberry.ID] = strawberry.field(
        description="The atoms of this atomisation (or of the earlier one); empty when "
        "the source was too small."
    )
    atom_count: int = strawberry.field(description="How many atoms (atomIds' length).")
    archived_at: str | None = strawberry.field(
        description="When the parent was archived; null when nothing happened."
    )
    dropped_count: int | None = strawberry.field(
        description="Curator atoms dropped by the token budget (ATM-5)."
    )
    truncated_count: int | None = strawberry.field(
        description="Surviving atoms cut because there were more than 10."
    )
    warnings: list[str] | None = strawberry.field(
        description="Kept atoms up to 25% over the budget."
    )
    informational: str | None = strawberry.field(
        description="Why nothing was atomised (source_too_small); null when it was."
    )
    source_rev: int | None = strawberry.field(description="The parent revision split.")
    archive_rev: int | None = strawberry.field(description="The parent's archive revision.")
    event_sequence: int | None = strawberry.field(
        description="Sequence of the signed atomisation_complete event."
    )
    operation_id: strawberry.ID | None = strawberry.field(
        description="The operation record of the transaction."
    )


@strawberry.enum(description="When a namespace's over-threshold writes are atomised (ATM-9).")
class AtomiseMode(Enum):
    DEFERRED = strawberry.enum_value("deferred", description="By the job worker, after commit.")
    SYNCHRONOUS = strawberry.enum_value(
        "synchronous", description="Inside the write, before it answers."
    )


@strawberry.type(
    name="NamespacePolicy",
    description="The caller's namespace auto-atomise policy, defaults filled in (ATM-8). "
    "Field names are the JSON's keys in camel case (auto_atomise → autoAtomise).",
)
class NamespacePolicyInfo:
    auto_atomise: bool = strawberry.field(description="The legacy switch (deferred when set).")
    auto_atomise_mode: AtomiseMode | None = strawberry.field(description="The explicit mode.")
    auto_atomise_threshold_cl100k: int = strawberry.field(
        description="Atomise a write whose body exceeds this many cl100k tokens."
    )
    auto_atomise_max_atom_tokens: int = strawberry.field(
        description="The token budget of each atom."
    )
    auto_atomise_max_retries: int | None = strawberry.field(
        description="Curator retries of a synchronous atomisation; null: the default."
    )
    resolved_mode: AtomiseMode | None = strawberry.field(
        description="The mode in force (explicit, else deferred when autoAtomise); null: off."
    )


def health_info(health: Health) -> HealthInfo:
    """The typed form of the ``health`` JSON (:meth:`Health.to_json`)."""
    return HealthInfo(
        status=health.status,
        neo4j=HealthNeo4j(
            name=health.neo4j.name, version=health.neo4j.version, edition=health.neo4j.edition
        ),
        schema_version=health.schema_version,
        neo4j_age_s=health.neo4j_age_s,
        embedding=HealthEmbedding(
            model=health.embedding_model,
            dimension=health.embedding_dimension,
            query_runtime=health.query_runtime,
        ),
        tokenizer=health.tokenizer,
        curator=health.curator,
        entities=HealthEntities(extractor=health.entity_extractor),
    )


def use_recorded_info(recorded: UseRecorded) -> UseRecordedInfo:
    """The typed form of the ``recordUse`` JSON."""
    return UseRecordedInfo(
        event_id=strawberry.ID(recorded.event_id),
        repeated=recorded.repeated,
        updated=recorded.updated,
    )


def purge_result(outcome: PurgeOutcome) -> PurgeResult:
    """The typed form of the ``purge`` JSON."""
    return PurgeResult(
        atom_id=strawberry.ID(outcome.atom_id),
        purged=[strawberry.ID(a) for a in outcome.purged],
        revisions=outcome.revisions,
        inputs=outcome.inputs,
        resumed=outcome.resumed,
    )


def atomise_result(outcome: AtomiseOutcome) -> AtomiseResult:
    """The typed form of the ``atomise`` JSON, shape by shape
    (:meth:`AtomiseOutcome.to_json`)."""
    done = not outcome.already_atomised and outcome.reason is None
    counted = not outcome.already_atomised
    return AtomiseResult(
        already_atomised=outcome.already_atomised,
        source_id=strawberry.ID(outcome.source_id),
        atom_ids=[strawberry.ID(a) for a in outcome.atom_ids],
        atom_count=outcome.atom_count,
        archived_at=utc_z(outcome.archived_at),
        dropped_count=outcome.dropped_count if counted else None,
        truncated_count=outcome.truncated_count if counted else None,
        warnings=list(outcome.warnings) if counted else None,
        informational=outcome.reason if counted else None,
        source_rev=outcome.source_rev if done else None,
        archive_rev=outcome.archive_rev if done else None,
        event_sequence=outcome.event_sequence if done else None,
        operation_id=strawberry.ID(outcome.operation_id)
        if done and outcome.operation_id is not None
        else None,
    )


def namespace_policy_info(policy: NamespacePolicy) -> NamespacePolicyInfo:
    """The typed form of the ``setNamespacePolicy`` JSON."""
    mode = policy.auto_atomise_mode
    return NamespacePolicyInfo(
        auto_atomise=policy.auto_atomise,
        auto_atomise_mode=None if mode is None else AtomiseMode(mode),
        auto_atomise_threshold_cl100k=policy.auto_atomise_threshold_cl100k,
        auto_atomise_max_atom_tokens=policy.auto_atomise_max_atom_tokens,
        auto_atomise_max_retries=policy.auto_atomise_max_retries,
        resolved_mode=None if policy.mode is None else AtomiseMode(policy.mode),
    )
