"""The lexical candidates' semantic signal, computed in Python, equals Neo4j's (ACT-1).

The fulltext query brings the top lexical candidates' embeddings along, and
``neo4j_cosines`` computes what ``vector.similarity.cosine`` would. Every hit that can
be among the top candidates carries its embedding, hits tied at the edge included.
"""

from __future__ import annotations

import random
import uuid

import pytest

from graphsvc.core.activation import neo4j_cosines
from graphsvc.core.binding import Binding
from graphsvc.core.bm25 import fulltext_query
from graphsvc.inputs.models import parse_changes
from graphsvc.service import Service
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


@pytest.mark.req("ACT-1")
def test_lexical_hits_tied_at_the_edge_all_carry_their_embedding(service: Service) -> None:
    # Twelve bodies of equal length with the query word once: equal BM25 scores.
    # Three shorter ones score higher. With limit 5 the 5th score is one of the tie,
    # so every tied hit (any may be among the caller's top 5 after its atomId
    # tie-break) must carry its embedding; lower scores carry none.
    subject = f"t-ties-{uuid.uuid4().hex[:10]}"
    binding = Binding(subject, "default", "human", "alice")
    texts = [f"kestrel {w}" for w in ("amber", "birch", "cedar")]
    # (x-prefixed: a bare "a" is an English stop word, which would shorten one body.)
    texts += [f"kestrel note number x{w} here" for w in "abcdefghijkl"]
    texts += [f"kestrel long note {w} with many more words in it" for w in "mnop"]
    changes = [
        {"id": f"c{i}", "op": "create", "content": {"text": t, "links": []}, "sources": []}
        for i, t in enumerate(texts)
    ]
    outcome = service.write(binding, parse_changes(changes))
    assert outcome.indexing == "complete"
    row = service.db.read(
        "search/fulltext_candidates",
        lucene=fulltext_query("kestrel", subject),
        k=64,
        limit=5,
        subject=subject,
        includeArchived=False,
    )[0]
    hits = row["hits"]
    assert len(hits) == len(texts)
    scores = [h[2] for h in hits]
    assert scores == sorted(scores, reverse=True)
    edge = scores[4]
    tied = [h for h in hits if h[2] == edge]
    assert len(tied) == 12  # the equal-length bodies, straddling the 5th place
    for atom_id, _rev, score, _into, _arch, embedding, _text in hits:
        if score >= edge:
            assert embedding is not None and len(embedding) == 384, atom_id
        else:
            assert embedding is None, atom_id
