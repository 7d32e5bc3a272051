"""On a server with in-index filtered vector search (Neo4j 2026.x) the schema differs
in one statement only: the vector index is declared with the subject as a filter
property (tests/integration/test_vector_filtered.py runs it on a real 2026.08.1)."""

from __future__ import annotations

from graphsvc.store.queries import query, schema_statements


def test_only_the_vector_index_statement_changes_on_a_filtering_server() -> None:
    plain = dict(schema_statements())
    filtered = dict(schema_statements(filtered_vector=True))
    assert plain.keys() == filtered.keys()
    changed = {stem for stem in plain if plain[stem] != filtered[stem]}
    assert changed == {"013_current_embedding"}
    statement = filtered["013_current_embedding"]
    assert statement == query("index/create_vector_filtered")
    body = " ".join(line for line in statement.splitlines() if not line.startswith("//"))
    assert body.startswith("CYPHER 25 CREATE VECTOR INDEX current_embedding IF NOT EXISTS")
    assert "WITH [r.subject]" in body and "$dimension" in body
    assert "WITH [" not in plain["013_current_embedding"]
