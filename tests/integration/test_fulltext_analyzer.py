"""The fulltext index's analyzer: English by default, migrated by
``graphsvc index rebuild --fulltext`` on a database created with another one.

While the rebuild runs, searches have no lexical signal (ACT-1: it is missing, so
the semantic signal ranks alone) and never call the half-populated index. These
tests drop and re-create the session's shared fulltext index; each leaves it online
with graphsvc's analyzer and the rebuild marker removed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from atomise_support import cli_env

from graphsvc.core.binding import Binding
from graphsvc.core.requests import SearchRequest
from graphsvc.inputs.models import parse_changes
from graphsvc.ops.index import (
    FULLTEXT_ANALYZER,
    FULLTEXT_INDEX,
    fulltext_index_state,
    fulltext_needs_rebuild,
    rebuild_fulltext_index,
)
from graphsvc.service import Service
from graphsvc.settings import Settings
from graphsvc.store.connection import Database

OLD_ANALYZER = "standard-no-stop-words"


def _run(db: Database, statement: str) -> list[dict[str, object]]:
    rows, _, _ = db.driver.execute_query(statement, database_=db.database)
    return [dict(r) for r in rows]


def _marker(db: Database) -> int:
    rows = _run(db, "MATCH (m:GraphsvcMeta {key: 'fulltextIndex'}) RETURN count(m) AS n")
    return int(rows[0]["n"])  # type: ignore[call-overload]


def _recreate_with_old_analyzer(db: Database) -> None:
    """The index as a database created before the switch to English holds it."""
    _run(db, "DROP INDEX current_text IF EXISTS")
    db.driver.execute_query(
        "CREATE FULLTEXT INDEX current_text FOR (r:Current) ON EACH [r.text, r.subject] "
        "OPTIONS {indexConfig: {`fulltext.analyzer`: $analyzer}}",
        {"analyzer": OLD_ANALYZER},
        database_=db.database,
    )
    _run(db, "CALL db.awaitIndexes(120)")
    # A new index generation, as the rebuild command leaves: a process that read the
    # analyzer before (store/retrieval keeps it) reads it again.
    db.write("index/clear_fulltext_rebuild")


@pytest.fixture()
def analyzer_restored(db: Database) -> Iterator[None]:
    yield
    state = fulltext_index_state(db)
    if _marker(db) or state is None or state["analyzer"] != FULLTEXT_ANALYZER:
        rebuild_fulltext_index(db, grace_s=0)


def _corpus(service: Service) -> tuple[Binding, dict[str, str]]:
    tag = uuid.uuid4().hex[:8]
    binding = Binding(f"t-analyzer-{tag}", "default", "human", "alice")
    texts = {
        # Nothing but Lucene's English stop words (and a tag no query has).
        "filler": f"It is and it was, and it will be, for it is that {tag}.",
        # The query's content words, inflected differently.
        "paint": f"Melanie painted sunrises over the lake {tag} last summer.",
    }
    changes = [
        {"id": key, "op": "create", "content": {"text": text, "links": []}, "sources": []}
        for key, text in texts.items()
    ]
    outcome = service.write(binding, parse_changes(changes))
    return binding, {key: outcome.changes[key].atom_id for key in texts}


def _lexical(service: Service, binding: Binding, query: str) -> dict[str, float | None]:
    result = service.search(binding, SearchRequest(query, depth=0))
    return {h.atom.atom_id: h.breakdown["lexical"] for h in result.hits}


@pytest.mark.req("ACT-1")
def test_a_new_database_gets_the_english_analyzer(db: Database) -> None:
    state = fulltext_index_state(db)
    assert state is not None
    assert state["analyzer"] == FULLTEXT_ANALYZER == "english"
    assert fulltext_needs_rebuild(db) is None


@pytest.mark.req("ACT-1")
@pytest.mark.usefixtures("analyzer_restored")
def test_rebuild_migrates_an_old_analyzer_and_searches_rank_semantically_meanwhile(
    service: Service, db: Database
) -> None:
    _recreate_with_old_analyzer(db)
    binding, ids = _corpus(service)
    query = "is it that it was painting"
    assert fulltext_needs_rebuild(db) == OLD_ANALYZER

    # Old analyzer: stop words are terms, so the filler is the only lexical hit,
    # and "painting" does not match "painted".
    before = _lexical(service, binding, query)
    assert before[ids["filler"]] == 1.0
    assert before.get(ids["paint"], 0.0) == 0.0
    # graphsvc's own BM25 analyses as the English analyzer does: with another one in
    # the index it keeps Lucene's score instead of mixing the two analyses.
    diagnostics = service.search(binding, SearchRequest(query, depth=0)).diagnostics["acquisition"]
    assert diagnostics["lexicalStatistics"] == "index"

    # Marked: the index is not called, the lexical signal is missing for everyone.
    db.write("index/mark_fulltext_rebuild", since="2026-12-01T00:00:00+00:00")
    during = service.search(binding, SearchRequest(query, depth=0))
    acquisition = during.diagnostics["acquisition"]
    assert acquisition["lexicalMode"] == "rebuilding"
    assert acquisition["lexicalCandidates"] == 0
    assert {h.atom.atom_id: h.breakdown["lexical"] for h in during.hits} == {
        h.atom.atom_id: None for h in during.hits
    }
    # The weights renormalise to the semantic signal alone (m = 0.8·s / 0.8).
    for h in during.hits:
        assert h.breakdown["match"] == pytest.approx(max(0.0, h.breakdown["semantic"]))
    assert all(acquisition["missingSignals"][h.atom.atom_id] == ["lexical"] for h in during.hits)

    report = rebuild_fulltext_index(db, grace_s=0)
    assert report.index == FULLTEXT_INDEX and report.started is True
    assert report.analyzer_before == OLD_ANALYZER and report.analyzer == FULLTEXT_ANALYZER
    assert report.to_json()["analyzerBefore"] == OLD_ANALYZER
    assert report.entries >= len(ids)
    assert _marker(db) == 0
    assert fulltext_needs_rebuild(db) is None

    # English: stop words are gone and "painting" stems like "painted".
    after = _lexical(service, binding, query)
    assert after[ids["paint"]] == 1.0
    assert after.get(ids["filler"], 0.0) == 0.0
    diagnostics = service.search(binding, SearchRequest(query, depth=0)).diagnostics["acquisition"]
    assert diagnostics["lexicalStatistics"] == "subject"


@pytest.mark.req("ACT-1")
@pytest.mark.usefixtures("analyzer_restored")
def test_cli_rebuilds_the_fulltext_index_with_a_json_report(
    db: Database, test_settings: Settings, tmp_path: Path
) -> None:
    _recreate_with_old_analyzer(db)
    proc = subprocess.run(
        [sys.executable, "-m", "graphsvc", "index", "rebuild", "--fulltext", "--json"],
        env=cli_env(test_settings, tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["index"] == FULLTEXT_INDEX
    assert (report["analyzerBefore"], report["analyzer"]) == (OLD_ANALYZER, FULLTEXT_ANALYZER)
    assert f"fulltext index {FULLTEXT_INDEX}: online" in proc.stderr
    assert fulltext_index_state(db) == {
        "state": "ONLINE",
        "populationPercent": 100.0,
        "analyzer": FULLTEXT_ANALYZER,
    }


def _analyzer_reads() -> int:
    from graphsvc.telemetry.metrics import REGISTRY

    return sum(
        int(s.value)
        for metric in REGISTRY.collect()
        for s in metric.samples
        if s.name == "graphsvc_neo4j_query_duration_seconds_count"
        and s.labels.get("query") == "index/fulltext_state"
    )


@pytest.mark.req("ACT-1")
def test_the_analyzer_is_read_once_per_index_generation(service: Service, db: Database) -> None:
    binding = Binding(f"t-ana-{uuid.uuid4().hex[:8]}", "default", "human", "h")
    changes = [
        {
            "id": "a",
            "op": "create",
            "content": {"text": "kelp forests shelter otters", "links": []},
            "sources": [],
        }
    ]
    service.write(binding, parse_changes(changes))
    db.write("index/clear_fulltext_rebuild")  # a new generation: read it once, then keep it
    before = _analyzer_reads()
    for _ in range(3):
        hits = service.search(binding, SearchRequest("kelp forests")).hits
        assert hits and hits[0].breakdown["lexical"] == 1.0
    assert _analyzer_reads() - before == 1
    db.write("index/clear_fulltext_rebuild")
    service.search(binding, SearchRequest("otters"))
    assert _analyzer_reads() - before == 2
