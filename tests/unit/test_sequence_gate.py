"""The sequence gate: a process's writers of one subject take the change sequence one at a time."""

from __future__ import annotations

import threading

import pytest

from graphsvc.store import sequence_gate


@pytest.mark.req("API-6", "WR-4")
def test_a_second_writer_of_the_subject_waits_until_the_first_transaction_ends() -> None:
    order: list[str] = []
    first_in = threading.Event()
    finish_first = threading.Event()

    def first() -> None:
        with sequence_gate.scope():
            sequence_gate.enter("s1")
            order.append("first numbered")
            first_in.set()
            finish_first.wait(10)
            order.append("first committed")

    def second() -> None:
        first_in.wait(10)
        with sequence_gate.scope():
            sequence_gate.enter("s1")
            order.append("second numbered")

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    first_in.wait(10)
    # The second writer is blocked on the gate: nothing it does can come before the
    # first transaction ends, however long the first takes.
    finish_first.set()
    for t in threads:
        t.join(10)
    assert order == ["first numbered", "first committed", "second numbered"]


@pytest.mark.req("API-6")
def test_after_a_retried_attempt_the_scope_gives_the_gate_back() -> None:
    with sequence_gate.scope():
        sequence_gate.enter("s2")
        sequence_gate.enter("s2")  # the driver ran the transaction function again
    taken: list[bool] = []

    def other() -> None:
        with sequence_gate.scope():
            sequence_gate.enter("s2")
            taken.append(True)

    t = threading.Thread(target=other)
    t.start()
    t.join(10)
    assert taken == [True]


@pytest.mark.req("API-6")
def test_outside_a_write_transaction_the_gate_holds_nothing() -> None:
    sequence_gate.enter("s3")  # no scope: a no-op, nothing left held
    with sequence_gate.scope():
        sequence_gate.enter("s3")


@pytest.mark.req("API-6")
def test_a_failed_transaction_gives_its_gate_back() -> None:
    with pytest.raises(RuntimeError), sequence_gate.scope():
        sequence_gate.enter("s4")
        raise RuntimeError("rolled back")
    done = threading.Event()

    def other() -> None:
        with sequence_gate.scope():
            sequence_gate.enter("s4")
            done.set()

    t = threading.Thread(target=other)
    t.start()
    t.join(10)
    assert done.is_set()
