"""Durable background jobs: the outbox of deferred atomisation and embeddings.

Real Neo4j, real embedder and tokenizer, the rule curator (the Ollama-like
loopback server where a failing curator is needed). A job is written by the
write's transaction, held by the writing process's worker, taken by another
worker once its hold ran out, run at most once at a time, and has one effect when
run twice; failures are recorded with a stable code and retried by an operator.
"""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from atomise_support import (
    THREE_SENTENCES,
    CliResult,
    cli_env,
    create,
    cypher,
    fake_ollama,
    service_with,
)
from graph_support import codes, gql

from graphsvc.atomise.worker import worker_for
from graphsvc.core.binding import Binding
from graphsvc.errors import CasConflictError
from graphsvc.inputs.models import parse_changes
from graphsvc.service import Service
from graphsvc.settings import Settings
from graphsvc.store import jobs as job_store
from graphsvc.store.connection import Database
from graphsvc.store.jobs import NewJob
from graphsvc.store.write_steps import Provenance

BUDGET = 50  # THREE_SENTENCES makes three atoms with the rule curator
DEFERRED = {
    "auto_atomise_mode": "deferred",
    "auto_atomise_threshold_cl100k": 40,
    "auto_atomise_max_atom_tokens": BUDGET,
}


@pytest.fixture(scope="module")
def rule(service: Service) -> Service:
    return service_with(service, curator="rule")


def jobs_of(db: Database, subject: str) -> list[dict[str, Any]]:
    return cypher(
        db,
        "MATCH (j:Job {subject: $s}) RETURN j.jobId AS jobId, j.kind AS kind, "
        "j.atomId AS atomId, j.state AS state, j.attempts AS attempts, j.outcome AS outcome, "
        "j.lastError AS lastError, j.leaseOwner AS leaseOwner ORDER BY j.createdAt",
        s=subject,
    )


def head(db: Database, subject: str, atom_id: str) -> dict[str, Any]:
    rows = cypher(
        db,
        "MATCH (a:Atom {subject: $s, atomId: $a})-[:HEAD]->(h:Revision) "
        "RETURN h.rev AS rev, h.state AS state, h.atomisedInto AS atomisedInto, "
        "h.embedding IS NOT NULL AS embedded",
        s=subject,
        a=atom_id,
    )
    return rows[0]


def events(db: Database, subject: str) -> int:
    rows = cypher(db, "MATCH (e:SignedEvent {subject: $s}) RETURN count(e) AS n", s=subject)
    return int(rows[0]["n"])


def orphan_job(
    db: Database, binding: Binding, atom_id: str, rev: int, *, kind: str = "atomise", **lease: Any
) -> str:
    """A job as a write of a process that died would have left it (default: its
    hold ran out a second ago)."""
    job_id = uuid.uuid4().hex
    prov = Provenance.of(binding, uuid.uuid4().hex, "2026-01-01T00:00:00+00:00")
    job = NewJob(
        jobId=job_id,
        kind=kind,
        atomId=atom_id,
        rev=rev,
        maxAtomTokens=BUDGET,
        leaseOwner=lease.get("owner", "dead-host:1:00000000"),
        leaseUntil=lease.get("until", time.time() - 1),
    )
    db.write_tx(
        lambda tx: job_store.create_jobs(tx, prov, binding.auth_generation, [job]),
        label="test/orphan_job",
    )
    return job_id


def run_cli(args: list[str], env: dict[str, str], timeout: float = 180) -> CliResult:
    """The real ``graphsvc`` command line in a subprocess."""
    proc = subprocess.run(
        [sys.executable, "-m", "graphsvc", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


def write_big(service: Service, binding: Binding) -> Any:
    change = {"id": "a", "op": "create", "content": {"text": THREE_SENTENCES, "links": []}}
    return service.write(binding, parse_changes([{**change, "sources": []}]))


@pytest.mark.req("ATM-9")
def test_a_deferred_write_commits_its_job_and_the_worker_ends_it(
    rule: Service, db: Database, human: Binding, subject: str
) -> None:
    rule.set_namespace_policy(human, DEFERRED)
    outcome = write_big(rule, human)
    assert outcome.extra == {"atomiseMode": "deferred"}
    atom_id = outcome.changes["a"].atom_id
    assert worker_for(rule).wait_idle(timeout=90)
    (job,) = jobs_of(db, subject)
    assert job["kind"] == "atomise" and job["atomId"] == atom_id
    assert job["state"] == "done" and job["outcome"] == "atomised" and job["attempts"] == 1
    assert head(db, subject, atom_id)["atomisedInto"] == 3


@pytest.mark.req("ATM-9")
def test_a_refused_write_leaves_no_job(
    rule: Service, db: Database, human: Binding, subject: str
) -> None:
    rule.set_namespace_policy(human, DEFERRED)
    first = create(rule, human, "A short note to revise.")
    create_change = {"id": "a", "op": "create", "content": {"text": THREE_SENTENCES, "links": []}}
    stale = {
        "id": "b",
        "op": "revise",
        "target": {"atomId": first.atom_id, "rev": first.rev},
        "content": {"text": THREE_SENTENCES + " Revised.", "links": []},
    }
    rule.write(human, parse_changes([{**stale, "id": "r", "sources": []}]))  # moves the head
    with pytest.raises(CasConflictError):
        rule.write(
            human, parse_changes([{**create_change, "sources": []}, {**stale, "sources": []}])
        )
    assert worker_for(rule).wait_idle(timeout=90)
    # Only the committed revision caused a job; the refused batch (one big create
    # among them) left none.
    (job,) = jobs_of(db, subject)
    assert job["atomId"] == first.atom_id


def test_a_job_whose_worker_died_is_taken_once_its_hold_ran_out(
    rule: Service, db: Database, human: Binding, subject: str
) -> None:
    view = create(rule, human, THREE_SENTENCES)  # no policy: nothing deferred yet
    expired = orphan_job(db, human, view.atom_id, view.rev)
    other = service_with(rule)
    worker = worker_for(other)
    assert worker.drain_once()
    assert not worker.drain_once()  # nothing left to take
    (job,) = jobs_of(db, subject)
    assert job["jobId"] == expired and job["state"] == "done" and job["outcome"] == "atomised"
    assert job["leaseOwner"] == worker.owner and job["attempts"] == 1
    assert head(db, subject, view.atom_id)["atomisedInto"] == 3


def test_a_job_held_by_a_live_worker_is_left_alone(
    rule: Service, db: Database, human: Binding, subject: str
) -> None:
    view = create(rule, human, THREE_SENTENCES)
    job_id = orphan_job(
        db, human, view.atom_id, view.rev, owner="alive:1:1", until=time.time() + 600
    )
    other = service_with(rule)  # held: the worker holds its service weakly
    worker = worker_for(other)
    assert worker.run_one(job_id) is None  # not claimable
    (job,) = jobs_of(db, subject)
    assert job["state"] == "pending" and job["attempts"] == 0
    assert head(db, subject, view.atom_id)["atomisedInto"] is None


def test_running_a_job_twice_has_one_effect(
    rule: Service, db: Database, human: Binding, subject: str
) -> None:
    view = create(rule, human, THREE_SENTENCES)
    job_id = orphan_job(db, human, view.atom_id, view.rev)
    other = service_with(rule)  # held: the worker holds its service weakly
    worker = worker_for(other)
    assert worker.drain_once()
    # A crash right after the effect and before its end was recorded: the job is
    # pending again and its hold has run out.
    cypher(
        db,
        "MATCH (j:Job {jobId: $j}) SET j.state = 'pending', j.leaseUntil = 0.0 RETURN j",
        j=job_id,
    )
    assert worker.drain_once()
    (job,) = jobs_of(db, subject)
    assert job["state"] == "done" and job["outcome"] == "skipped_already_atomised"
    assert job["attempts"] == 2
    assert head(db, subject, view.atom_id)["atomisedInto"] == 3
    assert events(db, subject) == 1  # one atomisation_complete event


def test_a_job_claimed_too_often_is_given_up(
    rule: Service, db: Database, human: Binding, subject: str
) -> None:
    view = create(rule, human, THREE_SENTENCES)
    job_id = orphan_job(db, human, view.atom_id, view.rev)
    limit = rule.settings.jobs.max_attempts
    cypher(db, "MATCH (j:Job {jobId: $j}) SET j.attempts = $n RETURN j", j=job_id, n=limit)
    other = service_with(rule)
    result = worker_for(other).run_one(job_id)
    assert result is not None and result.outcome == "failed"
    (job,) = jobs_of(db, subject)
    assert job["state"] == "failed" and job["lastError"] == "ATTEMPTS_EXHAUSTED"
    assert head(db, subject, view.atom_id)["atomisedInto"] is None


def test_a_synchronous_write_ends_its_embed_job_and_an_orphan_one_is_embedded(
    rule: Service, db: Database, human: Binding, subject: str
) -> None:
    rule.set_namespace_policy(human, {**DEFERRED, "auto_atomise_mode": "synchronous"})
    outcome = write_big(rule, human)
    assert outcome.extra is not None and outcome.extra["atomiseOutcome"] == "atomised"
    (job,) = jobs_of(db, subject)
    assert job["kind"] == "embed" and job["state"] == "done"
    assert job["outcome"] == "done_in_request"

    # A head the request never got to (the process died before atomising it):
    # written without its embedding, with its embed job left behind.
    rule.set_namespace_policy(human, {"auto_atomise": False})
    view = create(rule, human, "Left without an embedding by a crashed request.")
    cypher(
        db,
        "MATCH (r:Revision:Current {subject: $s, atomId: $a}) REMOVE r.embedding RETURN r",
        s=subject,
        a=view.atom_id,
    )
    orphan_job(db, human, view.atom_id, view.rev, kind="embed")
    assert not head(db, subject, view.atom_id)["embedded"]
    other = service_with(rule)
    assert worker_for(other).drain_once()
    embed_job = next(j for j in jobs_of(db, subject) if j["atomId"] == view.atom_id)
    assert embed_job["state"] == "done" and embed_job["outcome"] == "embedded"
    assert head(db, subject, view.atom_id)["embedded"]


def test_purge_deletes_the_jobs_of_the_atoms_it_erases(
    rule: Service, db: Database, human: Binding, subject: str
) -> None:
    view = create(rule, human, THREE_SENTENCES)
    orphan_job(db, human, view.atom_id, view.rev, owner="alive:1:1", until=time.time() + 600)
    assert jobs_of(db, subject)
    rule.purge(human, view.atom_id)
    assert jobs_of(db, subject) == []


def test_a_failed_job_is_listed_and_retried_by_the_cli(
    service: Service, db: Database, human: Binding, subject: str, test_settings: Settings,
    tmp_path: Path,
) -> None:  # fmt: skip
    with fake_ollama() as fake:  # always malformed
        llm = service_with(service, curator="ollama", ollama_url=fake.base_url)
        llm.set_namespace_policy(human, DEFERRED)
        outcome = write_big(llm, human)
        assert worker_for(llm).wait_idle(timeout=60)
    (job,) = jobs_of(db, subject)
    assert job["state"] == "failed" and job["lastError"] == "CURATOR_FAILED"
    assert job["atomId"] == outcome.changes["a"].atom_id

    env = cli_env(test_settings, tmp_path / "state")
    listed = run_cli(["jobs", "list", "--subject", subject, "--state", "failed", "--json"], env)
    assert listed.code == 0, listed.stderr
    doc = listed.json()
    assert doc["counts"] == {"pending": 0, "done": 0, "failed": 1}
    assert [j["jobId"] for j in doc["jobs"]] == [job["jobId"]]
    assert doc["jobs"][0]["lastError"] == "CURATOR_FAILED"

    retried = run_cli(["jobs", "retry", job["jobId"], "--json"], env)
    assert retried.code == 0, retried.stderr
    assert retried.json() == {"jobId": job["jobId"], "result": "retried"}
    (again,) = jobs_of(db, subject)
    assert again["state"] == "pending" and again["attempts"] == 0
    assert run_cli(["jobs", "retry", job["jobId"], "--json"], env).code == 1  # not failed
    missing = run_cli(["jobs", "retry", "no-such-job", "--json"], env)
    assert missing.code == 2 and missing.json()["error"] == "NOT_FOUND"
    other = run_cli(["jobs", "retry", job["jobId"], "--subject", "someone-else", "--json"], env)
    assert other.code == 2  # another subject's job is not found

    # `jobs run --once` (rule curator in the CLI's environment) takes the retried job.
    ran = run_cli(["jobs", "run", "--once", "--json"], env, timeout=300)
    assert ran.code == 0, ran.stderr
    (final,) = jobs_of(db, subject)
    assert final["state"] == "done" and final["outcome"] == "atomised"


@pytest.mark.req("API-1")
def test_graphql_jobs_shows_the_callers_subject_only(
    rule: Service, db: Database, human: Binding, subject: str
) -> None:
    view = create(rule, human, THREE_SENTENCES)
    orphan_job(db, human, view.atom_id, view.rev, owner="alive:1:1", until=time.time() + 600)
    query = (
        "query($first: Int!) { jobs(first: $first) { counts { pending done failed } "
        "items { jobId kind atomId rev state attempts outcome lastError } } }"
    )
    mine, errors = gql(rule, human, query, first=20)
    assert not errors and mine is not None, errors
    assert mine["jobs"]["counts"] == {"pending": 1, "done": 0, "failed": 0}
    (item,) = mine["jobs"]["items"]
    assert item["kind"] == "ATOMISE" and item["atomId"] == view.atom_id
    assert item["state"] == "PENDING" and item["attempts"] == 0

    stranger = Binding(f"other-{uuid.uuid4().hex[:8]}", "default", "human", "eve")
    theirs, errors = gql(rule, stranger, query, first=20)
    assert not errors and theirs is not None
    assert theirs["jobs"] == {"counts": {"pending": 0, "done": 0, "failed": 0}, "items": []}

    _, errors = gql(rule, human, query, first=101)
    assert codes(errors) == ["INVALID_INPUT"]
