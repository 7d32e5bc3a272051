"""What ``graphsvc compact`` asks of the new store besides the copy (``store/graph_copy``).

The schema is created in the copy after the records, so every index is populated
from live data only; the compaction waits for the indexes before the swap.
"""

from __future__ import annotations

from typing import TypedDict

from neo4j import RoutingControl

from graphsvc.store.connection import Database, _mapped
from graphsvc.store.graph_copy import index_states as _index_rows
from graphsvc.store.queries import schema_statements

__all__ = ["IndexState", "create_schema", "index_states"]


class IndexState(TypedDict):
    """One index of a database: ``name``, ``state`` (``ONLINE``, ``POPULATING``,
    ``FAILED``) and ``populationPercent``."""

    name: str
    state: str
    populationPercent: float | None


def create_schema(db: Database, embedding_dimension: int) -> None:
    """Run every ``cypher/schema`` statement in ``db`` (no version record, no wait);
    the vector index gets ``embedding_dimension`` (the source's model's) and, on Neo4j
    2026.x, the subject as filter property."""
    params = {"dimension": embedding_dimension}
    for stem, statement in schema_statements(filtered_vector=db.filters_vectors()):
        with _mapped(f"schema/{stem}"):
            db.driver.execute_query(
                statement, params, database_=db.database, routing_=RoutingControl.WRITE
            )


def index_states(db: Database) -> list[IndexState]:
    """Every index of ``db`` and how far its population is."""
    return [
        {"name": r["name"], "state": r["state"], "populationPercent": r["populationPercent"]}
        for r in _index_rows(db)
    ]
