"""The write steps both transactions share (store/write_steps.py), seen from each path.

A unique-constraint race on a new revision number (the backstop behind the atom
lock) is CAS_CONFLICT in a write batch and in an atomisation alike, and neither
leaves anything behind. The race is simulated by a stray revision node that holds
the number the transaction is about to create.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from atomise_support import THREE_SENTENCES, create, service_with
from write_support import cypher, new, ref, revise, subject_counts, write

from graphsvc.core.binding import Binding
from graphsvc.errors import CasConflictError
from graphsvc.service import Service
from graphsvc.store.connection import Database


@pytest.fixture()
def stray(db: Database, subject: str) -> Iterator[None]:
    yield
    cypher(db, "MATCH (r:Revision {subject: $s, stray: true}) DELETE r", s=subject)


def _stray_revision(db: Database, subject: str, atom_id: str, rev: int) -> None:
    """A revision node with the key (subject, atomId, rev), attached to nothing."""
    cypher(
        db,
        "CREATE (:Revision {subject: $s, atomId: $a, rev: $r, stray: true})",
        s=subject,
        a=atom_id,
        r=rev,
    )


def _head(db: Database, subject: str, atom_id: str) -> tuple[int, str]:
    row = cypher(
        db,
        "MATCH (:Atom {subject: $s, atomId: $a})-[:HEAD]->(h:Revision) "
        "RETURN h.rev AS rev, h.state AS state",
        s=subject,
        a=atom_id,
    )[0]
    return row["rev"], row["state"]


@pytest.mark.req("WR-3", "WR-7")
def test_a_revision_number_race_in_a_write_batch_is_cas_conflict(
    service: Service, db: Database, human: Binding, subject: str, stray: None
) -> None:
    first = write(service, human, [new("a", "The first text.")]).changes["a"]
    _stray_revision(db, subject, first.atom_id, 2)
    before = subject_counts(db, subject)
    with pytest.raises(CasConflictError):
        write(service, human, [revise("a", ref(first), "The second text.")])
    assert subject_counts(db, subject) == before
    assert _head(db, subject, first.atom_id) == (1, "active")


@pytest.mark.req("ATM-2")
def test_a_revision_number_race_in_an_atomisation_is_cas_conflict(
    service: Service, db: Database, human: Binding, subject: str, stray: None
) -> None:
    rule = service_with(service, curator="rule")
    parent = create(rule, human, THREE_SENTENCES)
    _stray_revision(db, subject, parent.atom_id, 2)  # the archive revision's number
    before = subject_counts(db, subject)
    with pytest.raises(CasConflictError):
        rule.atomise(human, parent.atom_id, max_atom_tokens=50)
    assert subject_counts(db, subject) == before  # no atoms, no event, no Input left
    assert _head(db, subject, parent.atom_id) == (1, "active")
