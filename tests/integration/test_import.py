"""``graphsvc import``: bulk ingest through the write path (docs/ingest.md).

The invariants are ``write``'s: the same invalid plans are refused with the same
codes (in-process, against the session Neo4j). The CLI runs as a subprocess for
the summary, the progress bar, a failing batch that names its row, and a resume
after the process was SIGKILLed right after its first batch committed (the
test entry point ``import_crash_entry.py``). Each CLI call that connects
loads the embedding model in its own process (seconds), so there are four.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from atomise_support import cli_env
from write_support import cypher, new, observe, ref, retire, revise, subject_counts, write

from graphsvc.bulk.bulk_import import import_file
from graphsvc.core.binding import Binding
from graphsvc.errors import GraphsvcError
from graphsvc.service import Service
from graphsvc.settings import Settings
from graphsvc.store.connection import Database


def _import_cli(
    settings: Settings, tmp_path: Path, *args: str, kill_after: int = 0, **env: str
) -> subprocess.CompletedProcess[str]:
    # kill_after > 0: the test's entry point, SIGKILLed right after that many batches.
    entry = (
        [str(Path(__file__).with_name("import_crash_entry.py")), str(kill_after)]
        if kill_after
        else ["-m", "graphsvc"]
    )
    return subprocess.run(
        [sys.executable, *entry, "import", *args],
        capture_output=True,
        text=True,
        env=cli_env(settings, tmp_path / "state", **env),
        timeout=300,
        check=False,
    )


def _jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _conversation(n: int) -> list[dict[str, Any]]:
    """Compact rows: each message replies to the previous one (often in an earlier
    batch) and to the first message of the file, and cites its transcript."""
    rows: list[dict[str, Any]] = []
    for i in range(n):
        links = []
        if i > 0:
            links.append({"role": "reply-to", "target": {"local": f"m{i - 1}"}})
        if i > 1:
            links.append({"role": "thread", "target": {"local": "m0", "at": "logical"}})
        rows.append(
            {
                "id": f"m{i}",
                "text": f"message {i} of the imported conversation about tidal turbines",
                "links": links,
                "sources": [{"uri": "https://example.org/transcript", "version": str(i)}],
            }
        )
    return rows


def _stored(db: Database, subject: str) -> dict[str, dict[str, Any]]:
    """text -> the stored head: atom id, embedding present, link targets' texts."""
    rows = cypher(
        db,
        "MATCH (a:Atom {subject: $s})-[:HEAD]->(r:Revision) "
        "OPTIONAL MATCH (r)-[l:LINK]->(t) "
        "OPTIONAL MATCH (t)-[:HEAD]->(th:Revision) "
        "WITH a, r, l, coalesce(th.text, t.text) AS target ORDER BY l.ordinal "
        "RETURN r.text AS text, a.atomId AS atomId, r.embedding IS NOT NULL AS embedded, "
        "size([(r)-[:CITES]->() | 1]) AS cites, "
        "[x IN collect({role: l.role, at: l.at, target: target}) WHERE x.role IS NOT NULL] "
        "AS links",
        s=subject,
    )
    return {r["text"]: r for r in rows}


def _text(i: int) -> str:
    return f"message {i} of the imported conversation about tidal turbines"


def _assert_conversation(db: Database, subject: str, n: int) -> None:
    stored = _stored(db, subject)
    assert sorted(stored) == sorted(_text(i) for i in range(n))
    count = cypher(db, "MATCH (a:Atom {subject: $s}) RETURN count(a) AS n", s=subject)[0]["n"]
    assert count == n  # every row exactly once
    for i in range(n):
        row = stored[_text(i)]
        assert row["embedded"] is True and row["cites"] == 1
        expected = []
        if i > 0:
            expected.append({"role": "reply-to", "at": "observed", "target": _text(i - 1)})
        if i > 1:
            expected.append({"role": "thread", "at": "logical", "target": _text(0)})
        assert row["links"] == expected, i


# ----------------------------------------------------------------- CLI, happy path
@pytest.mark.req("API-4", "WR-5", "WR-8")
def test_import_cli_commits_every_row_with_links_citations_progress_and_json_summary(
    test_settings: Settings, db: Database, human: Binding, tmp_path: Path
) -> None:
    path = _jsonl(tmp_path / "conv.jsonl", _conversation(10))
    result = _import_cli(
        test_settings, tmp_path, str(path), "--subject", human.subject, "--batch", "4", "--json"
    )
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["rows"] == 10 and summary["batches"] == 3 and summary["batchSize"] == 4
    assert summary["committedBatches"] == 3 and summary["committedRows"] == 10
    assert summary["replayedBatches"] == 0 and summary["links"] == 9 + 8
    assert summary["citations"] == 10 and summary["indexing"] == "complete"
    assert summary["digest"].startswith("sha256:") and summary["atomsPerSecond"] > 0
    progress = [line for line in result.stderr.splitlines() if line.startswith("import: [")]
    assert progress and "10/10 atoms" in progress[-1] and "atoms/s" in progress[-1]
    assert "batch 3/3" in progress[-1]
    _assert_conversation(db, human.subject, 10)
    # One transaction per batch: one Operation each, with its batch's revisions.
    ops = cypher(
        db,
        "MATCH (o:Operation {subject: $s}) RETURN o.changeCount AS n ORDER BY n",
        s=human.subject,
    )
    assert [o["n"] for o in ops] == [2, 4, 4]


# ----------------------------------------------------------------- resume after a kill
@pytest.mark.req("WR-7", "IDEM-2")
def test_import_resumes_after_a_kill_and_stores_every_row_exactly_once(
    test_settings: Settings, db: Database, human: Binding, tmp_path: Path
) -> None:
    path = _jsonl(tmp_path / "conv.jsonl", _conversation(10))
    args = (str(path), "--subject", human.subject, "--batch", "4", "--json")
    killed = _import_cli(test_settings, tmp_path, *args, kill_after=1)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    # The first batch committed; the second was prepared (ids issued) but not written.
    assert sorted(_stored(db, human.subject)) == sorted(_text(i) for i in range(4))

    resumed = _import_cli(test_settings, tmp_path, *args)
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads(resumed.stdout)
    assert summary["replayedBatches"] == 1 and summary["replayedRows"] == 4
    assert summary["committedBatches"] == 2 and summary["committedRows"] == 6
    # Rows of later batches link to the atoms the killed run committed.
    _assert_conversation(db, human.subject, 10)
    footprint = subject_counts(db, human.subject)

    again = _import_cli(test_settings, tmp_path, *args)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["replayedBatches"] == 3
    assert subject_counts(db, human.subject) == footprint


# ----------------------------------------------------------------- failing batch
@pytest.mark.req("WR-7", "API-4")
def test_import_failing_batch_commits_nothing_of_it_and_names_the_row(
    test_settings: Settings, db: Database, human: Binding, tmp_path: Path
) -> None:
    rows = _conversation(9)
    # Row 6 (batch 1 of 3-row batches) links to a revision that was never issued.
    rows[5]["links"].append({"role": "see", "target": {"atomId": "never-issued", "rev": 1}})
    path = _jsonl(tmp_path / "mixed.jsonl", rows)
    result = _import_cli(
        test_settings, tmp_path, str(path), "--subject", human.subject, "--batch", "3", "--json"
    )
    assert result.returncode == 8, result.stderr
    error = json.loads(result.stdout)
    assert error["error"] == "DEPENDENCY_INVALID"
    assert error["row"] == 6 and error["batch"] == 1 and "row 6" in error["message"]
    # Batch 0 committed; nothing of batch 1 (rows 4-6), and batch 2 was never tried.
    assert sorted(_stored(db, human.subject)) == sorted(_text(i) for i in range(3))


@pytest.mark.req("API-4", "WR-2")
def test_import_malformed_row_is_refused_before_connecting_naming_its_line(
    test_settings: Settings, human: Binding, tmp_path: Path
) -> None:
    rows: list[Any] = _conversation(5)
    del rows[3]["sources"]  # WR-2: missing is not empty
    path = _jsonl(tmp_path / "bad.jsonl", rows)
    unreachable = test_settings.with_(neo4j_uri="bolt://127.0.0.1:9")
    result = _import_cli(unreachable, tmp_path, str(path), "--subject", human.subject, "--json")
    assert result.returncode == 8, result.stderr
    error = json.loads(result.stdout)
    assert error["error"] == "INVALID_INPUT" and error["row"] == 4, error
    not_json = tmp_path / "garbage.jsonl"
    not_json.write_text(json.dumps(rows[0]) + "\n\n{oops\n")
    result = _import_cli(unreachable, tmp_path, str(not_json), "--subject", human.subject)
    assert result.returncode == 8 and "INVALID_INPUT: row 3" in result.stderr


# ----------------------------------------------------------------- same invariants as write
def _cases(service: Service, human: Binding, agent: Binding) -> list[tuple[str, Binding, Any]]:
    """(expected code, binding, plan) for invalid plans, one per kind of refusal."""
    head = write(service, human, [new("a", "the cited text, twenty-nine chars")]).changes["a"]
    stale = write(service, human, [revise("r", ref(head), "second revision")]).changes["r"]
    assert stale.rev == 2
    cite = {
        "uri": f"atom:{head.atom_id}",
        "version": "1",
        "range": {"start": 0, "end": 999, "unit": "char"},
    }
    token = observe(service, agent, basis=[ref(head)])
    ok = new("ok", "a valid row before the bad one")
    return [
        (
            "INVALID_INPUT",
            human,
            [ok, {"id": "x", "op": "create", "content": {"text": "t", "links": []}}],
        ),
        ("INVALID_INPUT", human, [ok, new("ok", "same id twice")]),
        (
            "INVALID_INPUT",
            human,
            [ok, new("l", "t", [{"role": "r", "target": {"local": "nowhere"}}])],
        ),
        (
            "INVALID_INPUT",
            human,
            [ok, {**retire("rt", ref(stale)), "content": {"text": "x", "links": []}}],
        ),
        ("INVALID_INPUT", human, [ok, new("c", "cites past the end", sources=[cite])]),
        ("BUDGET_EXCEEDED", human, [ok, new("big", "x" * 70_000)]),
        (
            "BUDGET_EXCEEDED",
            human,
            [ok, new("many", "t", [{"role": "r", "target": {"local": "ok"}}] * 129)],
        ),
        ("TOKEN_INVALID", agent, [new("a1", "agent row without a token")]),
        ("TOKEN_INVALID", agent, [new("a2", "forged token", token=token[:-4] + "AAAA")]),
        (
            "DEPENDENCY_INVALID",
            human,
            [ok, new("d", "t", [{"role": "r", "target": {"atomId": "ghost", "rev": 1}}])],
        ),
        ("CAS_CONFLICT", human, [ok, revise("late", ref(head), "revises rev 1, head is 2")]),
    ]


@pytest.mark.req("WR-1", "WR-2", "WR-3", "WR-5", "WR-7", "TOK-2", "TOK-3")
def test_import_refuses_the_same_plans_as_write_with_the_same_codes(
    service: Service, db: Database, human: Binding, agent: Binding, tmp_path: Path
) -> None:
    cases = _cases(service, human, agent)
    footprint = subject_counts(db, human.subject)
    for i, (code, binding, plan) in enumerate(cases):
        with pytest.raises(GraphsvcError) as by_write:
            write(service, binding, plan)
        path = _jsonl(tmp_path / f"case{i}.jsonl", plan)
        with pytest.raises(GraphsvcError) as by_import:
            import_file(service, binding, path, batch_size=len(plan))
        assert by_write.value.code == code, (i, by_write.value.message)
        assert by_import.value.code == code, (i, by_import.value.message)
        # The import names the row: the last row of each plan is the bad one, except
        # for a duplicate id, where the second use is.
        assert by_import.value.details["row"] == len(plan), (i, by_import.value.message)
        assert subject_counts(db, human.subject) == footprint, i


@pytest.mark.req("WR-5")
def test_import_local_target_in_a_later_batch_is_invalid_input(
    service: Service, human: Binding, tmp_path: Path
) -> None:
    rows = [
        new("a", "points forward", [{"role": "r", "target": {"local": "c"}}]),
        new("b", "filler"),
        new("c", "the target, one batch later"),
    ]
    path = _jsonl(tmp_path / "forward.jsonl", rows)
    with pytest.raises(GraphsvcError) as caught:
        import_file(service, human, path, batch_size=2)
    assert caught.value.code == "INVALID_INPUT" and caught.value.details["row"] == 1
    # In one batch the forward reference is fine (WR-5), as in write.
    summary = import_file(service, human, path, batch_size=3)
    assert summary.committed_rows == 3 and summary.links == 1


def test_import_freezes_the_collector_only_while_it_runs_and_stores_every_row(
    service: Service, db: Database, human: Binding, tmp_path: Path
) -> None:
    """``gc.freeze`` for the import's duration (bulk_import._long_lived_objects_frozen):
    the objects that existed before it are frozen during every batch and handed back
    to the collector afterwards, also when the import fails."""
    import gc

    # A serving process (and the live-server fixture) freezes its start-up heap
    # (api/gc_policy.py); this test needs a process that froze nothing itself.
    was_frozen = gc.get_freeze_count() > 0
    if was_frozen:
        gc.unfreeze()
    try:
        assert gc.get_freeze_count() == 0
        frozen: list[int] = []
        path = _jsonl(tmp_path / "gc.jsonl", _conversation(5))
        summary = import_file(
            service,
            human,
            path,
            batch_size=2,
            progress=lambda _: frozen.append(gc.get_freeze_count()),
        )
        assert summary.committed_rows == 5 and len(frozen) == 3 and min(frozen) > 0
        assert gc.get_freeze_count() == 0
        _assert_conversation(db, human.subject, 5)
        dangling = new("x", "t", [{"role": "r", "target": {"local": "nope"}}])
        bad = _jsonl(tmp_path / "gc-bad.jsonl", [dangling])
        with pytest.raises(GraphsvcError):
            import_file(service, human, bad, batch_size=2)
        assert gc.get_freeze_count() == 0
    finally:
        if was_frozen:
            gc.freeze()
