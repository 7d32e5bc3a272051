"""The entity index in Neo4j (SPEC §16): mentions of current heads and their entities.

``(:Revision:Current)-[:MENTIONS {name, type, count, aliases}]->(:Entity {subject,
key, name, type, aliases, mentions})``. Every change runs inside the transaction
of what causes it (a write batch, an atomisation, a purge's erase step, a rebuild
batch), so the index commits exactly with it (ENT-2), and every change of an
entity (a mention added or removed) first takes the subject's :data:`lock`
(``entities/lock``), as the last steps of its transaction: concurrent batches of
one subject serialise on it until commit, so an entity found without
mentions is deleted while no other transaction is adding one, and an entity's
name and aliases are derived from the mentions that exist when it commits
(:func:`graphsvc.core.entity_keys.fold_entity`): nothing derived from a removed
or purged text survives (ENT-3).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from graphsvc.core.entity_keys import Mention, fold_entity
from graphsvc.core.entity_resolution import JOINERS, confirm_tentative, resolve_forms, variant
from graphsvc.store.connection import Database, Tx, run

__all__ = [
    "ExtractorRecord",
    "HeadMentions",
    "begin_rebuild",
    "count_pending",
    "drop_mentions",
    "extractor_record",
    "head_mentions",
    "index_batch",
    "lock",
    "mark_heads",
    "pending_heads",
    "plain",
    "record_extractor",
    "refresh",
    "resolve",
    "write_mentions",
]


class HeadMentions(TypedDict):
    """The mentions of one new current head (the parameter shape of ``add_mentions``):
    its tentative ones (ENT-6) as JSON rows, None when it has none."""

    atomId: str
    rev: int
    mentions: list[dict[str, Any]]
    tentative: str | None


def head_mentions(atom_id: str, rev: int, mentions: Sequence[Mention]) -> HeadMentions:
    unsure = [m.to_row() for m in mentions if m.tentative]
    return {
        "atomId": atom_id,
        "rev": rev,
        "mentions": [m.to_row() for m in mentions if not m.tentative],
        "tentative": json.dumps(unsure, sort_keys=True) if unsure else None,
    }


def lock(tx: Tx, subjects: Iterable[str], by: str) -> None:
    """Hold the entity-index lock of each subject (sorted: no deadlock) until commit."""
    run(tx, "entities/lock", subjects=sorted(set(subjects)), by=by)


def drop_mentions(tx: Tx, subject: str, atom_ids: Sequence[str]) -> list[str]:
    """Remove every mention of any revision of ``atom_ids``; the keys they named."""
    if not atom_ids:
        return []
    rows = run(tx, "entities/drop_mentions", subject=subject, atomIds=list(atom_ids))
    return list(rows[0]["keys"])


def resolve(tx: Tx, subject: str, only: Sequence[str] | None = None) -> list[str]:
    """ENT-6: move every mention whose form resolves to another entity than the one it
    belongs to (:func:`~graphsvc.core.entity_resolution.resolve_forms` over the
    subject's current forms) and settle the tentative mentions of the subject's heads
    (of ``only`` these atoms' heads: the caller knows the forms did not change, so no
    other head's confirmations can); the keys of the entities it changed."""
    rows = run(tx, "entities/forms", subject=subject)
    forms: dict[str, set[str]] = {}
    for row in rows:
        forms.setdefault(row["form"], set()).update(row["types"])
    target = resolve_forms(forms)
    moves = [
        {"form": row["form"], "source": row["key"], "target": target[row["form"]]}
        for row in rows
        if target[row["form"]] != row["key"]
    ]
    keys: list[str] = []
    if moves:
        moves.sort(key=lambda m: (m["form"], m["source"]))
        keys = list(run(tx, "entities/move_mentions", subject=subject, moves=moves)[0]["keys"])
    keys += _sync_tentative(tx, subject, forms, only)
    if keys:
        # Heads this write did not touch changed entities: the change feed does not
        # name them, so every process's mirror of the subject reads its heads again.
        run(tx, "entities/move_generation")
    return keys


def _sync_tentative(
    tx: Tx, subject: str, forms: Mapping[str, set[str]], only: Sequence[str] | None
) -> list[str]:
    """ENT-6: give each current head (of ``only`` these atoms, when given) an edge for
    every tentative mention the subject's forms now confirm
    (:func:`~graphsvc.core.entity_resolution.confirm_tentative`), and take away those no
    longer confirmed; the keys of the entities it changed."""
    if only is None:
        heads = run(tx, "entities/tentative", subject=subject)
    else:
        heads = run(tx, "entities/tentative_of", subject=subject, atomIds=list(only))
    if not heads:
        return []
    unsure = {h["atomId"]: json.loads(h["tentative"]) for h in heads}
    confirmed = confirm_tentative(forms, {x["key"] for rows in unsure.values() for x in rows})
    adds, drops = [], []
    for head in heads:
        have = {(str(f), str(k)) for f, k in head["edges"]}
        want = {x["key"]: x for x in unsure[head["atomId"]] if x["key"] in confirmed}
        wanted = {(key, confirmed[key]) for key in want}
        drops += [{"atomId": head["atomId"], "form": f, "key": k} for f, k in sorted(have - wanted)]
        for key, entity in sorted(wanted - have):
            adds.append(
                {**want[key], "atomId": head["atomId"], "rev": head["rev"], "target": entity}
            )
    if not adds and not drops:
        return []
    run(tx, "entities/sync_tentative", subject=subject, adds=adds, drops=drops)
    return sorted({d["key"] for d in drops} | {a["target"] for a in adds})


def _could_confirm(tx: Tx, subject: str, heads: Sequence[HeadMentions]) -> bool:
    """Whether some full name of the subject could confirm a tentative mention of
    ``heads`` (``entities/could_confirm``: entity keys only, a superset)."""
    forms = {variant(x["key"]) for h in heads if h["tentative"] for x in json.loads(h["tentative"])}
    rows = run(
        tx, "entities/could_confirm", subject=subject, forms=sorted(forms), joiners=sorted(JOINERS)
    )
    return bool(rows)


def refresh(tx: Tx, subject: str, keys: Iterable[str], tentative: Sequence[str] = ()) -> None:
    """Resolve the subject's forms again (ENT-6), then re-derive the entities named or
    moved from their mentions; delete those left without one. Nothing to do when no
    entity was named and no head brought tentative mentions (``tentative``: those
    heads' atoms). When no entity was named the subject's forms are as they were, so
    only those heads' tentative mentions are settled: a write of plain sentences does
    not read every head of the subject."""
    wanted = sorted(set(keys))
    if not wanted and not tentative:
        return
    wanted = sorted({*wanted, *resolve(tx, subject, None if wanted else tentative)})
    rows, orphans = [], []
    for row in run(tx, "entities/mentions_of", subject=subject, keys=wanted):
        found = [list(m) for m in row["mentions"] if m[0] is not None]
        facts = fold_entity(row["key"], found)
        if facts.mentions == 0:
            orphans.append(row["key"])
        else:
            rows.append(
                {
                    "key": facts.key,
                    "name": facts.name,
                    "type": facts.type,
                    "aliases": list(facts.aliases),
                    "mentions": facts.mentions,
                }
            )
    run(tx, "entities/refresh", subject=subject, rows=rows, orphans=orphans)


def plain(replaced: Sequence[str], heads: Sequence[HeadMentions]) -> bool:
    """Whether a write changes no entity: it replaces no atom and its heads name
    nothing (they may bring tentative mentions, ENT-6), so the subject's forms stay
    as they were."""
    return not replaced and not any(h["mentions"] for h in heads)


def mark_heads(tx: Tx, subject: str, heads: Sequence[HeadMentions], extractor: str) -> None:
    """Before the subject-wide locks, for a :func:`plain` write: its heads are marked
    indexed and keep their tentative mentions (``entities/add_mentions`` touches only
    them), so the sequence lock is held for less; :func:`write_mentions` then settles."""
    if heads:
        run(tx, "entities/add_mentions", subject=subject, heads=list(heads), extractor=extractor)


def write_mentions(
    tx: Tx,
    subject: str,
    replaced: Sequence[str],
    heads: Sequence[HeadMentions],
    extractor: str,
    by: str,
) -> None:
    """In a write's transaction: the ``replaced`` atoms' old mentions go, the new
    ``heads``' mentions come, the entities touched are refreshed (ENT-1, ENT-2).

    Call it after :func:`graphsvc.store.write_steps.record_change`, and for a
    :func:`plain` write after :func:`mark_heads` (before the record): every writer
    of the subject then holds its change sequence's lock here, to commit. A plain
    write whose heads bring tentative mentions (ENT-6) takes the entity lock only
    when ``entities/could_confirm`` finds a name that could confirm one; the lock it
    skips is not needed, because whoever adds a name settles the subject's tentative
    heads while holding the sequence lock too: it either commits before this write
    looks (the look finds the name) or reads its heads after this write commits.
    """
    if not replaced and not heads:
        return
    unsure = [h["atomId"] for h in heads if h["tentative"]]
    if plain(replaced, heads):
        if unsure and _could_confirm(tx, subject, heads):
            lock(tx, [subject], by)
            refresh(tx, subject, (), unsure)
        return
    lock(tx, [subject], by)
    touched = drop_mentions(tx, subject, replaced)
    if heads:
        touched += run(
            tx,
            "entities/add_mentions",
            subject=subject,
            heads=list(heads),
            extractor=extractor,
        )[0]["keys"]
    refresh(tx, subject, touched, unsure)


@dataclass(frozen=True)
class ExtractorRecord:
    """What the database says about its entity index (``GraphsvcMeta {key:
    'entityExtractor'}``): the recorded version, an unfinished rebuild's target and
    run id, whether entities exist, and whether a current head is unindexed."""

    version: str | None
    migrating_to: str | None
    run_id: str | None
    has_entities: bool
    unindexed: bool


def extractor_record(db: Database, version: str | None) -> ExtractorRecord:
    """The record, and whether a current head is not indexed by ``version``."""
    row = db.read("meta/entity_extractor", version=version or "")[0]
    return ExtractorRecord(
        version=row["version"],
        migrating_to=row["migratingTo"],
        run_id=row["runId"],
        has_entities=bool(row["hasEntities"]),
        unindexed=bool(row["unindexed"]),
    )


def record_extractor(db: Database, version: str) -> None:
    """Record ``version`` as the index's extractor (and end any rebuild)."""
    db.write("meta/set_entity_extractor", version=version)


def begin_rebuild(db: Database, version: str, run_id: str) -> tuple[str, bool]:
    """Start (or resume) a rebuild by ``version``: ``(run id, resumed)``."""
    row = db.write("entities/begin_rebuild", version=version, runId=run_id)[0]
    return str(row["runId"]), bool(row["resumed"])


def count_pending(db: Database, version: str, subject: str | None) -> tuple[int, int]:
    """(heads ``version`` has not indexed, indexable heads) of ``subject`` (None: all)."""
    row = db.read("entities/count_pending", version=version, subject=subject)[0]
    return int(row["pending"] or 0), int(row["total"] or 0)


def pending_heads(
    db: Database, version: str, subject: str | None, limit: int
) -> list[dict[str, Any]]:
    """The next ``limit`` heads (subject, atomId, rev, text) ``version`` has not indexed."""
    return db.read_rows("entities/pending_heads", version=version, subject=subject, limit=limit)


def index_batch(
    db: Database,
    batch: dict[str, list[HeadMentions]],
    extractor: str,
    run_id: str,
) -> None:
    """One rebuild batch in one write transaction: per subject (locked), the heads'
    atoms lose every mention and the heads get the extractor's."""

    def work(tx: Tx) -> None:
        run(tx, "entities/hold_sequence", subjects=sorted(batch), by=f"rebuild:{run_id}")
        lock(tx, batch, f"rebuild:{run_id}")
        for subject in sorted(batch):
            heads = batch[subject]
            write_mentions(tx, subject, [h["atomId"] for h in heads], heads, extractor, run_id)
        run(tx, "entities/move_generation")

    db.write_tx(work, label="entities/rebuild batch")
