"""bge-small-en-v1.5 from Maven Central: CLS pooling, unit vectors, the query prefix on
queries only, and the int8 query graph close to the fp32 one (ACT-1's semantic signal)."""

from __future__ import annotations

import numpy as np
import pytest

from graphsvc.embed import get_embedder
from graphsvc.embed.models import BGE_QUERY_PREFIX
from graphsvc.embed.sentence import embed_query

BGE = "bge-small-en-v1.5"
BODIES = [
    "The harbour master logs the spring tides every morning at six.",
    "Our bakery proofs sourdough overnight in a cold cellar.",
    "Astronomers tracked the comet's tail across the winter sky.",
]


@pytest.mark.req("ACT-1")
def test_bge_embeds_bodies_plainly_and_queries_with_its_prefix() -> None:
    fp32 = get_embedder(BGE, "fp32")
    assert (fp32.model_name, fp32.dimension) == ("BAAI/bge-small-en-v1.5+cls+query-prefix", 384)
    bodies = np.array(fp32.embed(BODIES))
    assert np.allclose(np.linalg.norm(bodies, axis=1), 1.0, atol=1e-5)
    query = "when are the tides logged at the harbour?"
    q = np.array(embed_query(fp32, query))
    # The query is the body path's embedding of the prefixed text, not of the bare one.
    prefixed = np.array(fp32.embed([BGE_QUERY_PREFIX + query])[0])
    bare = np.array(fp32.embed([query])[0])
    assert float(np.abs(q - prefixed).max()) < 1e-5
    assert float(np.abs(q - bare).max()) > 1e-3
    assert int(np.argmax(bodies @ q)) == 0
    # The int8 query graph: near the fp32 vector, the same first body.
    q8 = np.array(embed_query(get_embedder(BGE, "int8"), query))
    assert float(q8 @ q) > 0.95
    assert int(np.argmax(bodies @ q8)) == 0
