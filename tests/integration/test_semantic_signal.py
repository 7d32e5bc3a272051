"""The lexical candidates' semantic signal, computed in Python, equals Neo4j's (ACT-1).

The fulltext query brings the top lexical candidates' embeddings along, and
``neo4j_cosines`` computes what ``vector.similarity.cosine`` would (the signal of a
candidate the fetched rows miss still comes from the ``search/similarity`` query).
"""

from __future__ import annotations

import random

import pytest

from graphsvc.core.activation import neo4j_cosines
from graphsvc.store.connection import Database


@pytest.mark.req("ACT-1")
def test_python_cosine_equals_neo4j_vector_similarity(db: Database) -> None:
    rng = random.Random(11)
    query = [rng.gauss(0, 1) for _ in range(384)]
    vectors = [[rng.gauss(0, 1) for _ in range(384)] for _ in range(40)]
    vectors += [query, [-x for x in query], [3.0 * x for x in query]]  # 1, 0, 1
    rows, _, _ = db.driver.execute_query(
        "UNWIND $vs AS v RETURN vector.similarity.cosine($q, v) AS s",
        {"q": query, "vs": vectors},
        database_=db.database,
    )
    theirs = [float(r["s"]) for r in rows]
    ours = neo4j_cosines(query, vectors)
    assert all(o is not None for o in ours)
    assert ours == pytest.approx(theirs, abs=1e-6)
    assert ours[-3:] == pytest.approx([1.0, 0.0, 1.0], abs=1e-9)
