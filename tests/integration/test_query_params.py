"""List parameters reach Neo4j unchanged when their ``repr`` is cut short.

The driver formats every RUN message for its debug log whether or not the log is
on; ``graphsvc.store.connection.run`` hands it top-level lists whose ``repr`` does
not walk the items (docs/ingest.md, "Why it is built this way"). These tests prove the
wrapper changes nothing the database receives: order, values, floats to the bit.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace

from write_support import cypher, new

from graphsvc.core.binding import Binding
from graphsvc.inputs.models import parse_changes
from graphsvc.ops.write import write as write_op
from graphsvc.service import Service
from graphsvc.store.connection import Database, _quiet, run


def test_quiet_lists_repr_briefly_and_stay_equal() -> None:
    rows = [{"atomId": f"a{i}", "embedding": [0.1] * 384} for i in range(2000)]
    params = _quiet({"rows": rows, "subject": "s", "ids": ("x",), "n": 3})
    assert repr(params["rows"]) == "<list of 2000>"
    assert params["rows"] == rows and isinstance(params["rows"], list)
    assert params["subject"] == "s" and params["ids"] == ("x",) and params["n"] == 3
    assert rows[0]["embedding"] == [0.1] * 384  # the caller's lists are not touched


def test_list_parameter_arrives_in_order_with_exact_values(db: Database, subject: str) -> None:
    refs = [{"atomId": f"missing-{i}", "rev": i + 1, "wantText": bool(i % 2)} for i in range(500)]
    rows = db.read_tx(lambda tx: run(tx, "write/check_refs", subject=subject, refs=refs))
    assert [(r["atomId"], r["rev"]) for r in rows] == [(r["atomId"], r["rev"]) for r in refs]
    assert not any(r["found"] for r in rows)


def test_embeddings_are_stored_to_the_bit(service: Service, db: Database, human: Binding) -> None:
    rng = random.Random(7)
    vector = [rng.uniform(-1, 1) for _ in range(384)]
    deps = service.write_deps()

    class Fixed:
        model_name = deps.embedder.model_name
        dimension = 384

        def embed(self, texts: Sequence[str]) -> list[list[float]]:
            return [list(vector) for _ in texts]

    out = write_op(replace(deps, embedder=Fixed()), human, parse_changes([new("q1", "a body")]))
    stored = cypher(
        db,
        "MATCH (r:Revision {subject: $s, atomId: $a, rev: 1}) RETURN r.embedding AS e",
        s=human.subject,
        a=out.changes["q1"].atom_id,
    )
    assert stored[0]["e"] == vector
