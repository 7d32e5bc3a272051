"""The managed Neo4j's vector-index population buffer, derived from its heap setting."""

from __future__ import annotations

import pytest

from graphsvc.errors import InvalidInputError
from graphsvc.localdb.launcher import population_buffer_mb


@pytest.mark.parametrize(
    ("heap", "mb"),
    [
        ("1g", 341),
        ("2G", 682),
        ("512m", 170),
        ("1048576k", 341),
        (str(3 * 2**20), 1),  # bytes: 3 MiB of heap, a third of it
        ("64g", 2047),  # Lucene refuses 2048 MB or more
        ("1k", 1),  # never below 1 MB
    ],
)
def test_population_buffer_is_a_third_of_the_heap(heap: str, mb: int) -> None:
    assert population_buffer_mb(heap) == mb


@pytest.mark.parametrize("heap", ["", "1.5g", "1gb", "-1g", "g", "1 g"])
def test_a_heap_java_would_not_take_is_invalid_input(heap: str) -> None:
    with pytest.raises(InvalidInputError):
        population_buffer_mb(heap)
