"""``Database.read_each``: a unit of work whose every query is an auto-commit read
(what a search's evaluation runs on, graphsvc.ops.evaluate): one round trip per
query, the request's deadline honoured before anything is sent, the subject's
state read as a transaction would read it.
"""

from __future__ import annotations

import pytest

from graphsvc.core.binding import Binding
from graphsvc.errors import DeadlineExceededError
from graphsvc.inputs.models import parse_changes
from graphsvc.service import Service
from graphsvc.store.connection import SCHEMA_VERSION, Database, round_trips, run
from graphsvc.telemetry.request_scope import scope


@pytest.mark.req("RD-1")
def test_each_query_is_sent_on_its_own_and_sees_the_subject_as_committed(
    service: Service, db: Database, human: Binding, subject: str
) -> None:
    def state() -> dict[str, object]:
        return db.read_each(
            lambda tx: run(tx, "search/mirror_state", subject=subject)[0], label="state"
        )

    before = round_trips()
    rows = db.read_each(
        lambda tx: (run(tx, "meta/health"), run(tx, "search/mirror_state", subject=subject)),
        label="two reads",
    )
    assert round_trips() - before == 2
    health, first = rows[0][0], rows[1][0]
    assert health["schemaVersion"] == SCHEMA_VERSION
    assert first["pending"] is False and first["changeSeq"] == 0
    change = {
        "id": "a",
        "op": "create",
        "content": {"text": "plain words", "links": []},
        "sources": [],
    }
    service.write(human, parse_changes([change]))
    assert state()["changeSeq"] == 1  # the committed write moved the subject's sequence


@pytest.mark.req("RD-1")
def test_nothing_is_sent_once_the_requests_deadline_has_passed(db: Database) -> None:
    before = round_trips()
    with scope("late", timeout_s=0.0), pytest.raises(DeadlineExceededError):
        db.read_each(lambda tx: run(tx, "meta/health"), label="late read")
    assert round_trips() == before
