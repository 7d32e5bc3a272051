"""The entity index (SPEC §16, ENT-1…ENT-3) on a real Neo4j: maintained by write,
revise, retire, atomise and purge in their own transactions, recorded by extractor
version, rebuilt (resumably) by ``graphsvc index rebuild --entities``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from neo4j import RoutingControl

from graphsvc.core.binding import Binding
from graphsvc.core.entity_keys import Mention
from graphsvc.core.requests import InspectRequest, SearchRequest
from graphsvc.core.write_models import AtomRef
from graphsvc.entities import RuleExtractor
from graphsvc.errors import EntityExtractorMismatchError
from graphsvc.inputs.models import parse_changes
from graphsvc.ops.entity_index import ensure_entity_extractor, rebuild_entities
from graphsvc.process_state.head_mirrors import forget_mirrors
from graphsvc.runtime import service_for
from graphsvc.service import Service
from graphsvc.settings import ENTITY_WEIGHTS_OFF, Settings
from graphsvc.store.connection import Database
from graphsvc.store.entity_views import entities_of_atoms, entities_page, mentions_page

REPO = Path(__file__).resolve().parents[2]


def create(service: Service, binding: Binding, *texts: str) -> list[AtomRef]:
    changes = [
        {"id": f"c{i}", "op": "create", "content": {"text": t, "links": []}, "sources": []}
        for i, t in enumerate(texts)
    ]
    out = service.write(binding, parse_changes(changes))
    return [AtomRef(out.changes[f"c{i}"].atom_id, 1) for i in range(len(texts))]


def revise(service: Service, binding: Binding, ref: AtomRef, text: str) -> AtomRef:
    change = {
        "id": "r",
        "op": "revise",
        "target": {"atomId": ref.atom_id, "rev": ref.rev},
        "content": {"text": text, "links": []},
        "sources": [],
    }
    out = service.write(binding, parse_changes([change]))
    return AtomRef(ref.atom_id, out.changes["r"].rev)


def retire(service: Service, binding: Binding, ref: AtomRef) -> None:
    change = {"id": "x", "op": "retire", "target": {"atomId": ref.atom_id, "rev": ref.rev}}
    service.write(binding, parse_changes([change]))


def keys_of(db: Database, subject: str, ref: AtomRef) -> list[str]:
    return [e.key for e in entities_of_atoms(db, subject, [ref.atom_id]).get(ref.atom_id, [])]


def all_entities(db: Database, subject: str) -> dict[str, Any]:
    return {
        e.key: e for e in entities_page(db, subject, query=None, type_=None, after=None, limit=1000)
    }


def cypher(db: Database, query: str, **params: Any) -> list[dict[str, Any]]:
    records, _, _ = db.driver.execute_query(
        query, params, database_=db.database, routing_=RoutingControl.WRITE
    )
    return [r.data() for r in records]


# ------------------------------------------------------------------ ENT-1


@pytest.mark.req("ENT-1")
def test_a_write_indexes_its_heads_entities_with_keys_names_and_types(
    service: Service, human: Binding, subject: str
) -> None:
    a, b = create(
        service,
        human,
        "INC-2041 (2026-02-20): the payments-api rejected cards after Dr. Smith's deploy.",
        "The payments-api is owned by Stanford University; see INC-2041.",
    )
    assert keys_of(service.db, subject, a) == [
        "2026-02-20",
        "inc-2041",
        "payments-api",
        "smith",
    ]
    found = all_entities(service.db, subject)
    assert found["smith"].name == "Smith" and found["smith"].type == "person"
    assert found["2026-02-20"].type == "date"
    assert found["stanford university"].type == "organisation"
    assert found["inc-2041"].mentions == 2 and found["payments-api"].mentions == 2
    mentioned = mentions_page(service.db, subject, "inc-2041", after=None, limit=10)
    assert sorted(m.atom_id for m in mentioned) == sorted([a.atom_id, b.atom_id])
    # MENTIONS leave the head only: no other revision, no body changed.
    rows = cypher(
        service.db,
        "MATCH (r:Revision {subject: $s})-[:MENTIONS]->(e:Entity) "
        "RETURN r:Current AS current, e.subject AS es",
        s=subject,
    )
    assert rows and all(r["current"] and r["es"] == subject for r in rows)


@pytest.mark.req("ENT-1")
def test_two_subjects_with_the_same_entity_name_stay_apart(service: Service) -> None:
    one, two = (Binding(f"t-{uuid.uuid4().hex[:12]}", "default", "human", "h") for _ in "12")
    [a] = create(service, one, "Our friend Melanie painted the lake at Lake Tahoe.")
    [b] = create(service, two, "Sadly Jon and Melanie never saw Lake Tahoe.")
    for binding, ref in ((one, a), (two, b)):
        assert "melanie" in keys_of(service.db, binding.subject, ref)
        [ent] = entities_page(
            service.db, binding.subject, query="melanie", type_=None, after=None, limit=5
        )
        assert ent.mentions == 1
        [m] = mentions_page(service.db, binding.subject, "melanie", after=None, limit=5)
        assert m.atom_id == ref.atom_id
    rows = cypher(
        service.db,
        "MATCH (e:Entity {key: 'melanie'}) WHERE e.subject IN $s "
        "MATCH (r)-[:MENTIONS]->(e) RETURN e.subject AS es, r.subject AS rs",
        s=[one.subject, two.subject],
    )
    assert len(rows) == 2 and all(r["es"] == r["rs"] for r in rows)


class OtherRules(RuleExtractor):
    version = "rules-0-other"

    def extract(self, texts: Sequence[str]) -> list[list[Mention]]:
        return [[] for _ in texts]


@pytest.mark.req("ENT-1")
def test_the_database_records_its_extractor_and_another_one_refuses_to_start(
    service: Service, human: Binding
) -> None:
    create(service, human, "Caroline met Jon in Boston.")
    ensure_entity_extractor(service.db, RuleExtractor())  # the recorded one starts
    with pytest.raises(EntityExtractorMismatchError) as other:
        ensure_entity_extractor(service.db, OtherRules())
    assert other.value.code == "ENTITY_EXTRACTOR_MISMATCH"
    assert "index rebuild --entities" in other.value.message
    with pytest.raises(EntityExtractorMismatchError) as off:
        ensure_entity_extractor(service.db, None)
    assert "GRAPHSVC_ENTITIES" in off.value.message


# ------------------------------------------------------------------ ENT-2


@pytest.mark.req("ENT-2")
def test_a_revise_replaces_the_mentions_and_removes_the_entity_left_without_one(
    service: Service, human: Binding, subject: str
) -> None:
    [a] = create(service, human, "Last year Caroline moved to Sweden with Jon.")
    a2 = revise(service, human, a, "Last year Caroline moved to Norway.")
    assert keys_of(service.db, subject, a2) == ["caroline", "norway"]
    found = all_entities(service.db, subject)
    assert "sweden" not in found and "jon" not in found
    assert found["caroline"].mentions == 1
    rows = cypher(
        service.db,
        "MATCH (r:Revision {subject: $s, atomId: $a})-[:MENTIONS]->() RETURN r.rev AS rev",
        s=subject,
        a=a.atom_id,
    )
    assert {r["rev"] for r in rows} == {2}


@pytest.mark.req("ENT-2")
def test_a_write_that_mentions_nothing_commits_while_the_entity_lock_is_held(
    service: Service, human: Binding, subject: str
) -> None:
    # Another transaction (an index change of this subject) holds the entity lock.
    session = service.db.driver.session(database=service.db.database)
    holder = session.begin_transaction()
    holder.run("MERGE (l:EntityLock {subject: $s}) SET l.by = 'test'", s=subject).consume()
    written: list[AtomRef] = []
    failed: list[BaseException] = []

    def write_plain() -> None:
        try:
            written.extend(create(service, human, "nothing here is named, only plain words."))
        except BaseException as exc:  # the assertion below reports it
            failed.append(exc)

    worker = threading.Thread(target=write_plain, daemon=True)
    worker.start()
    try:
        # The write changes no entity, so it does not queue behind the lock.
        worker.join(timeout=120)
        committed = not worker.is_alive()
    finally:
        holder.rollback()
        session.close()
        worker.join(timeout=120)
    assert committed and not failed, failed
    [a] = written
    rows = cypher(
        service.db,
        "MATCH (r:Revision:Current {subject: $s, atomId: $a}) RETURN r.entityIndex AS v",
        s=subject,
        a=a.atom_id,
    )
    assert rows == [{"v": RuleExtractor().version}]
    assert keys_of(service.db, subject, a) == []


@pytest.mark.req("ENT-2")
def test_retiring_an_atom_removes_its_mentions(
    service: Service, human: Binding, subject: str
) -> None:
    a, b = create(
        service, human, "Our friend Gina opened a studio in Paris.", "Tea is what Gina likes."
    )
    retire(service, human, a)
    assert keys_of(service.db, subject, a) == []
    found = all_entities(service.db, subject)
    assert "paris" not in found
    assert found["gina"].mentions == 1
    [m] = mentions_page(service.db, subject, "gina", after=None, limit=5)
    assert m.atom_id == b.atom_id


@pytest.mark.req("ENT-2")
def test_atomising_archives_the_parents_mentions_and_indexes_the_atoms(
    service: Service, human: Binding, subject: str
) -> None:
    rule = service_for(
        service.settings.with_(curator="rule"), service.db, service.embedder, service.tokenizer
    )
    text = (
        "The ingest-worker on host Zephyr crashed at 02:14 UTC after its scratch disk "
        "filled up completely with rotated debug logs. "
        "Alerts about the crash fired eleven minutes later because Melanie had set the "
        "disk threshold at ninety-eight percent. "
        "The on-call engineer Jon restored service by deleting old logs and re-enabling "
        "the nightly rotation job that the migration had disabled."
    )
    [parent] = create(rule, human, text)
    assert "melanie" in keys_of(service.db, subject, parent)
    outcome = rule.atomise(human, parent.atom_id, max_atom_tokens=50)
    assert len(outcome.atom_ids) == 3
    assert keys_of(service.db, subject, parent) == []  # archived: no mentions
    atoms = entities_of_atoms(service.db, subject, list(outcome.atom_ids))
    keys = {e.key for ents in atoms.values() for e in ents}
    assert {"ingest-worker", "zephyr", "melanie", "jon"} <= keys
    mentioned = {
        m.atom_id for m in mentions_page(service.db, subject, "melanie", after=None, limit=9)
    }
    assert mentioned <= set(outcome.atom_ids) and len(mentioned) == 1


# ------------------------------------------------------------------ ENT-3


@pytest.mark.req("ENT-3")
def test_purging_the_last_mention_removes_the_entity_and_aliases_from_purged_text(
    service: Service, human: Binding, subject: str
) -> None:
    secret = "Zq" + uuid.uuid4().hex[:10]
    a, b = create(
        service,
        human,
        f"Melanie's cousin {secret} visited the Louvre.",
        "Hiking is what Melanie loves.",
    )
    before = all_entities(service.db, subject)
    assert secret.lower() in before and "Melanie's" in before["melanie"].aliases
    service.purge(human, a.atom_id)
    after = all_entities(service.db, subject)
    assert secret.lower() not in after and "louvre" not in after
    assert after["melanie"].aliases == ("Melanie",) and after["melanie"].mentions == 1
    # Nothing derived from the purged text is left anywhere in Neo4j's entity index.
    rows = cypher(
        service.db,
        "MATCH (e:Entity {subject: $s}) RETURN e.key AS key, e.name AS name, e.aliases AS aliases",
        s=subject,
    )
    dump = json.dumps(rows)
    assert secret.lower() not in dump.lower() and "louvre" not in dump.lower()
    assert keys_of(service.db, subject, b) == ["melanie"]


# ------------------------------------------------------------------ ENT-6


def _mention_forms(db: Database, subject: str) -> dict[str, str]:
    """Each mention's own form → the entity key it belongs to."""
    rows = cypher(
        db,
        "MATCH (:Revision {subject: $s})-[m:MENTIONS]->(e:Entity) "
        "RETURN DISTINCT m.form AS form, e.key AS key",
        s=subject,
    )
    return {r["form"]: r["key"] for r in rows}


def _entity_share(service: Service, human: Binding, ref: AtomRef) -> float:
    """The share of ``ref``'s score that came through entities when searching for the
    full form's reviewer (0 when it is not a hit)."""
    result = service.search(human, SearchRequest("who reviewed the billing outage", limit=10))
    for hit in result.hits:
        if hit.atom.atom_id == ref.atom_id:
            return float(hit.breakdown.get("entityShare", 0.0))
    return 0.0


@pytest.mark.req("ENT-6")
def test_a_surname_joins_its_full_name_and_a_second_full_name_splits_it(
    service: Service, human: Binding, subject: str
) -> None:
    full, short = create(
        service,
        human,
        "Yesterday Ingrid Vasquez reviewed the billing outage.",
        "The rollback plan from Vasquez ships on Friday.",
    )
    found = all_entities(service.db, subject)
    assert "vasquez" not in found  # one entity, not two
    joined = found["ingrid vasquez"]
    assert joined.name == "Ingrid Vasquez" and joined.mentions == 2
    assert set(joined.aliases) == {"Ingrid Vasquez", "Vasquez"}
    assert keys_of(service.db, subject, short) == ["ingrid vasquez"]
    # A search for the full form's text reaches the short form's atom through the entity.
    joined_share = _entity_share(service, human, short)
    assert joined_share > 0

    # A second full form makes "Vasquez" ambiguous: it is an entity of its own again.
    marco = create(service, human, "On Monday Marco Vasquez joined the payments team.")[0]
    found = all_entities(service.db, subject)
    assert found["ingrid vasquez"].aliases == ("Ingrid Vasquez",)
    assert found["vasquez"].aliases == ("Vasquez",) and found["vasquez"].mentions == 1
    assert found["marco vasquez"].mentions == 1
    assert keys_of(service.db, subject, short) == ["vasquez"]
    # The search path's mirror of the heads follows the move (the short form's atom
    # was not written): it ranks as a process reading the heads afresh does, and less
    # of its score comes through entities than while it was joined.
    split_share = _entity_share(service, human, short)
    forget_mirrors(service.db)
    assert _entity_share(service, human, short) == pytest.approx(split_share)
    assert split_share < joined_share
    # Retiring the second full form joins them again: resolution follows current text.
    retire(service, human, marco)
    assert keys_of(service.db, subject, short) == ["ingrid vasquez"]
    assert _mention_forms(service.db, subject) == {
        "ingrid vasquez": "ingrid vasquez",
        "vasquez": "ingrid vasquez",
    }
    assert keys_of(service.db, subject, full) == ["ingrid vasquez"]


@pytest.mark.req("ENT-6", "ENT-3")
def test_purging_the_full_form_removes_every_alias_derived_from_it(
    service: Service, human: Binding, subject: str
) -> None:
    secret = "Zq" + uuid.uuid4().hex[:8].lower()
    full, short = create(
        service,
        human,
        f"Yesterday Ingrid {secret.capitalize()} reviewed the billing outage.",
        f"The rollback plan from {secret.capitalize()} ships on Friday.",
    )
    joined = all_entities(service.db, subject)[f"ingrid {secret.lower()}"]
    assert f"Ingrid {secret.capitalize()}" in joined.aliases
    service.purge(human, full.atom_id)
    after = all_entities(service.db, subject)
    assert f"ingrid {secret.lower()}" not in after
    assert after[secret.lower()].aliases == (secret.capitalize(),)
    assert keys_of(service.db, subject, short) == [secret.lower()]
    rows = cypher(
        service.db,
        "MATCH (e:Entity {subject: $s}) OPTIONAL MATCH (e)<-[m:MENTIONS]-() "
        "RETURN e.key AS key, e.name AS name, e.aliases AS aliases, "
        "collect([m.name, m.form, m.aliases]) AS mentions",
        s=subject,
    )
    assert "ingrid" not in json.dumps(rows).lower()


@pytest.mark.req("ENT-6")
def test_an_acronym_and_a_hyphen_variant_join_their_full_forms(
    service: Service, human: Binding, subject: str
) -> None:
    create(
        service,
        human,
        "Yesterday the Site Reliability Engineering group met the payments-api owners.",
        "Then SRE paged the Payments API on-call.",
    )
    found = all_entities(service.db, subject)
    assert "sre" not in found and "SRE" in found["site reliability engineering"].aliases
    variants = [k for k in found if k.replace("-", " ") == "payments api"]
    assert variants == ["payments api"]
    assert set(found["payments api"].aliases) == {"Payments API", "payments-api"}


def _query_entities(service: Service, human: Binding, text: str, *, mirror: bool) -> int:
    """How many entities ``text`` names (query-entity weight on), searched through the
    subject's head mirror or, with the mirror off, Neo4j's indexes."""
    named = service_for(
        service.settings.with_(entity_query_weight=1.0, head_mirror_max=10_000 if mirror else 0),
        service.db,
        service.embedder,
        service.tokenizer,
    )
    result = named.search(human, SearchRequest(text, limit=10))
    return int(result.diagnostics["evaluation"]["entities"]["queryEntities"])


@pytest.mark.req("ENT-6", "ENT-4")
@pytest.mark.parametrize("mirror", [True, False], ids=["mirror", "indexes"])
def test_a_query_short_form_names_the_joined_entity_unless_it_is_ambiguous(
    service: Service, human: Binding, subject: str, mirror: bool
) -> None:
    create(
        service,
        human,
        "Yesterday Ingrid Vasquez reviewed the billing outage.",
        "The Site Reliability Engineering rota changes in May.",
    )
    # No text wrote "Vasquez" or "SRE" alone: the query's capitalised short forms fit
    # exactly one full form each; a lower-case one is no name of its own.
    assert _query_entities(service, human, "What did Vasquez review?", mirror=mirror) == 1
    assert _query_entities(service, human, "When does the SRE rota change", mirror=mirror) == 1
    assert _query_entities(service, human, "what did vasquez review", mirror=mirror) == 0
    # A text that writes "Vasquez" makes it an alias: a lower-case query names it too.
    create(service, human, "The rollback plan from Vasquez ships on Friday.")
    assert _query_entities(service, human, "what did vasquez review", mirror=mirror) == 1
    # A second full name makes "Vasquez" ambiguous: it names only its own entity.
    create(service, human, "On Monday Marco Vasquez joined the payments team.")
    assert "vasquez" in all_entities(service.db, subject)
    assert _query_entities(service, human, "What did Vasquez review?", mirror=mirror) == 1
    assert _query_entities(service, human, "What did Ingrid review?", mirror=mirror) == 1


@pytest.mark.req("ENT-6", "ENT-2", "ENT-3")
def test_a_first_name_opening_a_sentence_counts_while_the_subject_names_it(
    service: Service, human: Binding, subject: str
) -> None:
    opening, common = create(
        service,
        human,
        "Ingrid went to the offsite in Lisbon.",
        "Everything went fine at the offsite.",
    )
    assert keys_of(service.db, subject, opening) == ["lisbon"]
    assert keys_of(service.db, subject, common) == []
    # Another text names Ingrid Vasquez: the opening "Ingrid" joins her entity, though
    # its atom was not written again (and the search path's mirror follows).
    full = create(service, human, "On Monday Ingrid Vasquez booked the flights.")[0]
    assert keys_of(service.db, subject, opening) == ["ingrid vasquez", "lisbon"]
    assert keys_of(service.db, subject, common) == []
    joined = all_entities(service.db, subject)["ingrid vasquez"]
    assert joined.mentions == 2 and set(joined.aliases) == {"Ingrid", "Ingrid Vasquez"}
    assert _query_entities(service, human, "Where did Vasquez go?", mirror=True) == 1
    # Retiring the full name takes the confirmation with it.
    retire(service, human, full)
    assert keys_of(service.db, subject, opening) == ["lisbon"]
    assert "ingrid vasquez" not in all_entities(service.db, subject)
    # Confirmed again, then purged: nothing derived from the purged text remains.
    full = create(service, human, "On Tuesday Ingrid Vasquez booked the hotel.")[0]
    assert keys_of(service.db, subject, opening) == ["ingrid vasquez", "lisbon"]
    service.purge(human, full.atom_id)
    assert keys_of(service.db, subject, opening) == ["lisbon"]
    rows = cypher(
        service.db,
        "MATCH (e:Entity {subject: $s}) OPTIONAL MATCH (e)<-[m:MENTIONS]-() "
        "RETURN e.key AS key, e.aliases AS aliases, collect([m.name, m.form]) AS mentions",
        s=subject,
    )
    assert "vasquez" not in json.dumps(rows).lower()


@pytest.mark.req("ENT-6")
def test_a_text_of_plain_sentences_joins_a_name_the_subject_already_gives(
    service: Service, human: Binding, subject: str
) -> None:
    # The full name first; then texts whose only candidates open their sentences: the
    # write settles just its own heads (the subject's forms did not change).
    full = create(service, human, "On Monday Ingrid Vasquez booked the flights.")[0]
    plain, common = create(
        service, human, "Ingrid called back at noon.", "Everything went fine today."
    )
    assert keys_of(service.db, subject, plain) == ["ingrid vasquez"]
    assert keys_of(service.db, subject, common) == []
    assert keys_of(service.db, subject, full) == ["ingrid vasquez"]
    assert all_entities(service.db, subject)["ingrid vasquez"].mentions == 2


@pytest.mark.req("ENT-6")
def test_plain_sentences_and_a_full_name_written_at_once_join_in_either_order(
    service: Service, human: Binding, subject: str
) -> None:
    # A write of plain sentences takes the entity lock only when some name of the
    # subject could confirm an opening; the writer of a new full name settles the
    # subject's openings. Written at the same moment, every round must still join
    # the opening to the name, whichever commits first.
    names = [("Ingrid", "Vasquez"), ("Marta", "Okafor"), ("Tomas", "Lindqvist")]
    names += [("Priya", "Raman"), ("Jonas", "Berger"), ("Aiko", "Tanaka")]
    for first, last in names:
        start = threading.Barrier(2)
        made: dict[str, AtomRef] = {}

        def write(tag: str, text: str, start: threading.Barrier = start) -> None:
            start.wait()
            made[tag] = create(service, human, text)[0]  # noqa: B023 (joined below)

        threads = [
            threading.Thread(target=write, args=("opening", f"{last} called back at noon.")),
            threading.Thread(target=write, args=("full", f"On Monday {first} {last} flew.")),
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        key = f"{first} {last}".lower()
        assert keys_of(service.db, subject, made["opening"]) == [key]
        assert all_entities(service.db, subject)[key].mentions == 2


# ------------------------------------------------------------------ rebuild (ENT-1)


def _unindexed(service: Service, human: Binding, texts: list[str]) -> list[AtomRef]:
    """Heads written by a process with the index off (a database from before it)."""
    off = service_for(
        service.settings.with_(entities="off"), service.db, service.embedder, service.tokenizer
    )
    return create(off, human, *texts)


@pytest.mark.req("ENT-1")
def test_rebuild_indexes_heads_written_before_the_index(
    service: Service, human: Binding, subject: str
) -> None:
    refs = _unindexed(service, human, ["Caroline and Jon met.", "Then Jon visited Sweden."])
    assert all(keys_of(service.db, subject, r) == [] for r in refs)
    lines: list[str] = []
    report = rebuild_entities(
        service.db, RuleExtractor(), subject=subject, batch=1, progress=lines.append
    )
    assert report.indexed == 2 and report.pending == 0
    assert keys_of(service.db, subject, refs[1]) == ["jon", "sweden"]
    assert all_entities(service.db, subject)["jon"].mentions == 2
    assert any("2/2 heads" in line for line in lines)


def _cli_env(settings: Settings, tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHSVC_")}
    env.update(
        GRAPHSVC_NEO4J_URI=settings.neo4j.uri,
        GRAPHSVC_NEO4J_USER=settings.neo4j.user,
        GRAPHSVC_NEO4J_PASSWORD=settings.neo4j.password,
        GRAPHSVC_NEO4J_DATABASE=settings.neo4j.database,
        GRAPHSVC_STATE_DIR=str(tmp),
        GRAPHSVC_SECRET_FILE=settings.paths.secret_file,
        PYTHONPATH=str(REPO),
    )
    return env


@pytest.mark.req("ENT-1")
def test_rebuild_killed_midway_resumes_where_it_stopped(
    service: Service, human: Binding, subject: str, tmp_path: Path
) -> None:
    texts = [f"Person{chr(65 + i % 26)}x met Boston-{i} in INC-{1000 + i}." for i in range(120)]
    refs = _unindexed(service, human, texts)
    cmd = [
        sys.executable, "-m", "graphsvc", "index", "rebuild", "--entities",
        "--subject", subject, "--batch", "2",
    ]  # fmt: skip
    env = _cli_env(service.settings, tmp_path)
    proc = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    for line in proc.stderr:
        if "heads (" in line and not line.startswith("graphsvc: entities: 2/"):
            proc.send_signal(signal.SIGKILL)  # mid-way, after some batches committed
            break
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    done = sum(1 for r in refs if keys_of(service.db, subject, r))
    assert 0 < done < len(refs)
    finished = subprocess.run(
        [*cmd, "--json"], env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert finished.returncode == 0, finished.stderr
    report = json.loads(finished.stdout)
    assert report["resumed"] is True and report["pending"] == 0
    assert report["indexed"] == len(refs) - done  # only what the killed run had left
    assert all(keys_of(service.db, subject, r) for r in refs)


# ------------------------------------------------------------------ ENT-4


def _linked_pair(service: Service, human: Binding) -> tuple[AtomRef, AtomRef, AtomRef]:
    """A query matches `a`; `b` shares only the identifier INC-7731 with it; `c` is
    unrelated. No declared link anywhere."""
    a, b, c = create(
        service,
        human,
        "INC-7731: the tidal gauge at the harbour reported sea levels two metres too high.",
        "INC-7731 follow-up: recalibrate sensors every spring.",
        "The bakery sells sourdough on Saturdays.",
    )
    return a, b, c


@pytest.mark.req("ENT-4")
def test_search_reaches_an_atom_through_an_entity_and_says_how_much(
    service: Service, human: Binding
) -> None:
    a, b, c = _linked_pair(service, human)
    result = service.search(human, SearchRequest("tidal gauge sea level reading wrong", limit=10))
    by_id = {h.atom.atom_id: h for h in result.hits}
    assert a.atom_id in by_id and b.atom_id in by_id
    assert by_id[b.atom_id].breakdown["entityShare"] > 0
    ent = result.diagnostics["evaluation"]["entities"]
    assert ent["nodes"] >= 1 and ent["mentions"] >= 2 and 0 < ent["share"] < 1
    assert ent["unindexedSeeds"] == 0
    # Entities are never hits: every hit is an atom of the subject.
    assert {h.atom.atom_id for h in result.hits} <= {a.atom_id, b.atom_id, c.atom_id}
    assert abs(sum(h.score for h in result.hits) - 1.0) < 1e-6


@pytest.mark.req("ENT-4")
def test_with_the_entity_index_off_ranking_is_exactly_section_5(
    service: Service, human: Binding
) -> None:
    _linked_pair(service, human)
    weightless = service_for(
        service.settings.with_(**ENTITY_WEIGHTS_OFF),
        service.db,
        service.embedder,
        service.tokenizer,
    )
    off = service_for(
        service.settings.with_(entities="off"), service.db, service.embedder, service.tokenizer
    )
    q = "tidal gauge sea level reading wrong"
    one = [
        (h.atom.atom_id, h.score) for h in weightless.search(human, SearchRequest(q, limit=10)).hits
    ]
    two = off.search(human, SearchRequest(q, limit=10))
    assert one == [(h.atom.atom_id, h.score) for h in two.hits]
    assert "entities" not in two.diagnostics["evaluation"]
    assert all(h.breakdown["entityShare"] == 0.0 for h in two.hits)


@pytest.mark.req("ENT-4")
def test_a_common_entity_is_not_traversed(service: Service, human: Binding) -> None:
    narrow = service_for(
        service.settings.with_(entity_max_degree=1),
        service.db,
        service.embedder,
        service.tokenizer,
    )
    _linked_pair(service, human)  # INC-7731 is mentioned by two heads: over the bound
    result = narrow.search(human, SearchRequest("tidal gauge sea level reading wrong", limit=10))
    assert result.diagnostics["evaluation"]["entities"]["nodes"] == 0
    assert all(h.breakdown["entityShare"] == 0.0 for h in result.hits)


@pytest.mark.req("ENT-4")
def test_an_entity_the_query_names_seeds_the_heads_that_mention_it(
    service: Service, human: Binding
) -> None:
    a, b, _ = _linked_pair(service, human)
    named = service_for(
        service.settings.with_(entity_query_weight=1.0),
        service.db,
        service.embedder,
        service.tokenizer,
    )
    result = named.search(human, SearchRequest("what happened in inc-7731", limit=10))
    assert result.diagnostics["evaluation"]["entities"]["queryEntities"] == 1
    top = {h.atom.atom_id for h in result.hits[:2]}
    assert top == {a.atom_id, b.atom_id}


@pytest.mark.req("ENT-4")
def test_the_best_match_seeds_the_entities_it_shares_so_their_heads_rise(
    service: Service, human: Binding
) -> None:
    a, b, c = _linked_pair(service, human)

    def ranked(anchor_weight: float) -> tuple[dict[str, float], dict[str, Any]]:
        svc = service_for(
            service.settings.with_(entity_anchors=1, entity_anchor_weight=anchor_weight),
            service.db,
            service.embedder,
            service.tokenizer,
        )
        result = svc.search(human, SearchRequest("tidal gauge sea level reading wrong"))
        return (
            {h.atom.atom_id: h.score for h in result.hits},
            result.diagnostics["evaluation"]["entities"],
        )

    without, quiet = ranked(0.0)
    with_anchor, seeded = ranked(1.0)
    # a matches best; INC-7731, which a shares with b, starts with a's activation.
    assert quiet["anchorEntities"] == 0 and seeded["anchorEntities"] == 1
    assert with_anchor[b.atom_id] > without[b.atom_id]
    assert with_anchor[b.atom_id] / with_anchor[a.atom_id] > without[b.atom_id] / without[a.atom_id]
    # c shares nothing with a: it only loses share to what b gained.
    assert with_anchor.get(c.atom_id, 0.0) <= without.get(c.atom_id, 0.0)


# ------------------------------------------------------------------ ENT-5

ENTITY_WALK = """
query($id: ID!, $q: String) {
  atom(atomId: $id) { entities { id key name type aliases mentionCount } }
  entities(query: $q, first: 2) {
    edges { cursor node { key type mentions(first: 5) {
      edges { node { count name atom { atomId } } } pageInfo { hasNextPage } } } }
    pageInfo { hasNextPage endCursor }
  }
}
"""


@pytest.mark.req("ENT-5")
def test_the_typed_graph_shows_atom_entities_and_entity_mentions(
    service: Service, human: Binding
) -> None:
    from graph_support import gql_ok

    a, b = create(
        service,
        human,
        "Our friend Caroline met Jon in Boston on 8 May, 2023.",
        "Later Caroline's sister visited Boston.",
    )
    data = gql_ok(service, human, ENTITY_WALK, id=a.atom_id, q="bost")
    ents = data["atom"]["entities"]
    assert [e["key"] for e in ents] == ["2023-05-08", "boston", "caroline", "jon"]
    caroline = next(e for e in ents if e["key"] == "caroline")
    assert caroline["mentionCount"] == 2 and "Caroline's" in caroline["aliases"]
    assert next(e for e in ents if e["key"] == "2023-05-08")["type"] == "DATE"
    [edge] = data["entities"]["edges"]
    assert edge["node"]["key"] == "boston"
    atoms = {m["node"]["atom"]["atomId"] for m in edge["node"]["mentions"]["edges"]}
    assert atoms == {a.atom_id, b.atom_id}
    # node(id) resolves an entity's global id; paging by key.
    node = gql_ok(
        service, human, "query($id: ID!) { node(id: $id) { ... on Entity { key } } }",
        id=caroline["id"],
    )  # fmt: skip
    assert node["node"] == {"key": "caroline"}
    first = gql_ok(service, human, "{ entities(first: 2) { edges { node { key } } "
                   "pageInfo { hasNextPage endCursor } } }")  # fmt: skip
    assert [e["node"]["key"] for e in first["entities"]["edges"]] == ["2023-05-08", "boston"]
    assert first["entities"]["pageInfo"]["hasNextPage"] is True
    after = first["entities"]["pageInfo"]["endCursor"]
    rest = gql_ok(
        service, human, "query($a: String) { entities(after: $a) { edges { node { key } } } }",
        a=after,
    )  # fmt: skip
    assert [e["node"]["key"] for e in rest["entities"]["edges"]] == ["caroline", "jon"]


@pytest.mark.req("ENT-5")
def test_another_subject_sees_none_of_the_entities(service: Service, human: Binding) -> None:
    from graph_support import gql_ok

    [a] = create(service, human, "Our friend Zeldanova met Jon.")
    other = Binding(f"t-{uuid.uuid4().hex[:12]}", "default", "human", "eve")
    data = gql_ok(service, other, ENTITY_WALK, id=a.atom_id, q="zeldanova")
    assert data["atom"] is None and data["entities"]["edges"] == []


@pytest.mark.req("ENT-5")
def test_inspect_diagnostics_name_the_heads_entities_and_neighbours_sharing_them(
    service: Service, human: Binding
) -> None:
    [a] = create(service, human, "INC-9120: the tide gauge at Port Zelda drifted.")
    change = {
        "id": "b",
        "op": "create",
        "content": {
            "text": "INC-9120 fix: recalibrated the gauge.",
            "links": [{"role": "fix-of", "target": {"ref": {"atomId": a.atom_id, "rev": 1}}}],
        },
        "sources": [],
    }
    service.write(human, parse_changes([change]))
    result = service.inspect(human, InspectRequest(a.atom_id))
    ent = result.diagnostics["evaluation"]["entities"]
    assert ent["keys"] == ["inc-9120", "port zelda"] and ent["mentions"] == 2
    assert ent["neighboursSharing"] == 1 and ent["of"] == "the current head"


@pytest.mark.req("ENT-4")
def test_nearest_neighbour_edges_join_each_seed_to_its_most_similar_heads(
    service: Service, human: Binding
) -> None:
    create(
        service,
        human,
        "The harbour tide gauge reads sea level every minute.",
        "Sea level sensors at the harbour need calibration each spring.",
        "Sourdough bread needs a long cold proof.",
    )
    near = service_for(
        service.settings.with_(similar_heads=1, entity_weight=0.0),
        service.db,
        service.embedder,
        service.tokenizer,
    )
    on = near.search(human, SearchRequest("harbour sea level gauge", limit=10))
    off = near.search(human, SearchRequest("harbour sea level gauge", limit=10, depth=0))
    seeds = on.diagnostics["acquisition"]["seeds"]
    assert seeds >= 2 and on.diagnostics["evaluation"]["similarEdges"] == seeds  # one each
    assert off.diagnostics["evaluation"]["similarEdges"] == 0  # depth 0: no step
    assert abs(sum(h.score for h in on.hits) - 1.0) < 1e-6
