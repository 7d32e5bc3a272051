"""The managed Neo4j's first fetch says how far it is (a cold fetch takes minutes)."""

from __future__ import annotations

import zipfile
from pathlib import Path

from graphsvc.localdb.launcher import FetchProgress, downloaded_bytes, entry_point
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
    assert Settings().neo4j.version_range == "5.26.31"


def test_the_server_main_class_comes_from_the_release_jar(tmp_path: Path) -> None:
    # 5.26 names it CommunityEntryPoint, 2026.x Neo4jCommunity: each jar says which.
    with zipfile.ZipFile(tmp_path / "neo4j-2026.08.1.jar", "w") as jar:
        jar.writestr(
            "META-INF/services/org.neo4j.server.startup.EntryPoint",
            "org.neo4j.server.Neo4jCommunity\n",
        )
    assert entry_point(tmp_path, "2026.08.1") == "org.neo4j.server.Neo4jCommunity"
    # A jar without the file (or no jar): the 5.x class.
    assert entry_point(tmp_path, "5.26.30") == "org.neo4j.server.CommunityEntryPoint"
