"""The managed Neo4j's vector-index population buffer, derived from its heap setting,
and the JVM flag that lets Lucene use the vector API."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphsvc.errors import InvalidInputError
from graphsvc.localdb.launcher import java_major, population_buffer_mb, vector_api_flags

VECTOR_API = "--add-modules=jdk.incubator.vector"


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


def _jdk(tmp_path: Path, release: str | None) -> str:
    """A JDK folder as the launcher sees it: bin/java and (maybe) a release file."""
    (tmp_path / "bin").mkdir()
    java = tmp_path / "bin" / "java"
    java.write_text("")
    if release is not None:
        (tmp_path / "release").write_text(release)
    return str(java)


@pytest.mark.parametrize(
    ("release", "major", "flags"),
    [
        ('IMPLEMENTOR="Eclipse Adoptium"\nJAVA_VERSION="25.0.1"\n', 25, [VECTOR_API]),
        ('JAVA_VERSION="21.0.4"\n', 21, [VECTOR_API]),
        ('JAVA_VERSION="17.0.13"\n', 17, []),
        ("JAVA_RUNTIME_VERSION=x\n", None, []),
        (None, None, []),
    ],
)
def test_the_vector_api_module_is_added_on_java_21_and_later(
    tmp_path: Path, release: str | None, major: int | None, flags: list[str]
) -> None:
    java = _jdk(tmp_path, release)
    assert java_major(java) == major
    assert vector_api_flags(java) == flags
