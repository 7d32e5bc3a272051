"""The managed Neo4j's first fetch says how far it is (a cold fetch takes minutes)."""

from __future__ import annotations

from graphsvc.localdb.launcher import FetchProgress, downloaded_bytes
from graphsvc.settings import Settings

LINE = (
    "[INFO] Downloaded from central: https://repo.maven.apache.org/maven2/org/neo4j/"
    "neo4j-kernel/5.26.30/neo4j-kernel-5.26.30.jar ({size} at 3.1 MB/s)"
)


def test_a_finished_download_line_gives_its_size_and_other_lines_none() -> None:
    assert downloaded_bytes(LINE.format(size="12 MB")) == 12_000_000
    assert downloaded_bytes(LINE.format(size="2.5 kB")) == 2_500
    assert downloaded_bytes(LINE.format(size="873 B")) == 873
    assert downloaded_bytes(LINE.format(size="3.9 kB").removeprefix("[INFO] ")) == 3_900
    assert downloaded_bytes("Downloading from central: https://x/y.jar") is None
    assert downloaded_bytes("[INFO] BUILD SUCCESS") is None


def test_progress_is_reported_at_most_every_few_seconds_with_running_totals() -> None:
    said: list[str] = []
    now = [0.0]
    progress = FetchProgress(said.append, lambda: now[0])
    for second in range(12):
        now[0] = float(second)
        progress.line(LINE.format(size="1 MB"))
        progress.line("Downloading from central: https://x/y.jar")
    assert progress.files == 12
    assert progress.bytes == 12_000_000
    # Lines at t=5 and t=10 report; the running total is in each message.
    assert said == [
        "graphsvc: fetching Neo4j: 6 files, 6.0 MB so far",
        "graphsvc: fetching Neo4j: 11 files, 11.0 MB so far",
    ]


def test_the_default_neo4j_is_one_pinned_version() -> None:
    assert Settings().neo4j_version_range == "[5.26.30]"
