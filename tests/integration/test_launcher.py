"""The managed local Neo4j: start twice is harmless, stop leaves no JVM, clear errors."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from graphsvc.errors import JavaMissingError, PortInUseError
from graphsvc.localdb import LocalNeo4j
from graphsvc.localdb.launcher import population_buffer_mb
from graphsvc.settings import Settings


def _java_pids_for(home: Path) -> list[int]:
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if "CommunityEntryPoint" in cmd and f"--home-dir={home}" in cmd:
            pids.append(int(proc.name))
    return pids


def test_start_twice_is_harmless_and_stop_leaves_no_java(tmp_path: Path) -> None:
    settings = Settings.from_env(state_dir=tmp_path)
    local = LocalNeo4j(settings, name="twice", port=0, auth=True, progress=lambda _: None)
    first = local.start(die_with_parent=True)
    try:
        second = local.start(die_with_parent=True)
        assert second.pid == first.pid and second.port == first.port
        assert local.status() is not None
        # Authentication is on and the generated password works.
        from neo4j import GraphDatabase

        with GraphDatabase.driver(first.uri, auth=(first.user, first.password)) as d:
            records, _, _ = d.execute_query("RETURN 41 + 1 AS x", database_="neo4j")
            assert records[0]["x"] == 42
        assert (local.home / "password").stat().st_mode & 0o077 == 0
        conf = (local.home / "conf" / "neo4j.conf").read_text()
        assert "server.default_listen_address=127.0.0.1" in conf
        assert "dbms.usage_report.enabled=false" in conf
        assert "server.http.enabled=false" in conf
        # A vector index populated from existing data is written in few segments.
        buffer = population_buffer_mb(settings.neo4j.heap)
        assert f"internal.dbms.index.vector.population_ram_buffer_size={buffer}" in conf
    finally:
        assert local.stop() is True
    assert _java_pids_for(local.home) == []
    assert local.status() is None
    assert local.stop() is False


def test_taken_port_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        local = LocalNeo4j(
            Settings.from_env(state_dir=tmp_path), name="busy", port=port, progress=print
        )
        with pytest.raises(PortInUseError) as err:
            local.start()
    assert err.value.code == "PORT_IN_USE"
    assert str(port) in err.value.message
    assert _java_pids_for(local.home) == []


def test_missing_java_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    local = LocalNeo4j(Settings.from_env(state_dir=tmp_path), name="nojava", port=0)
    with pytest.raises(JavaMissingError) as err:
        local.start()
    assert err.value.code == "JAVA_MISSING"
