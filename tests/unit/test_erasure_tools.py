"""The pieces of disk erasure that need no Neo4j: the scanner, the shredder, the guards."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest

from graphsvc.errors import CompactError, InvalidInputError, LauncherError
from graphsvc.localdb import LocalNeo4j, erasure_scan
from graphsvc.localdb.erasure_scan import scan
from graphsvc.localdb.launcher import SWAP_JOURNAL
from graphsvc.ops.compact import compact, shred_tree
from graphsvc.runtime import instance_database
from graphsvc.settings import Settings


def test_scan_finds_utf8_and_both_utf16_forms_and_names_no_text(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "raw.db").write_bytes(b"\x00\x01zqalpha\x02")
    (tmp_path / "le.log").write_bytes(b"xx" + "zqbeta".encode("utf-16-le"))
    (tmp_path / "be.log").write_bytes("zqbeta".encode("utf-16-be") + b"\xff")
    (tmp_path / "clean").write_bytes(b"nothing here")
    report = scan(tmp_path, ["zqalpha", "zqbeta", "zqgamma"])
    assert report.files == 4
    assert {(h.path, h.needle, h.how) for h in report.hits} == {
        ("a/raw.db", 0, "utf-8"),
        ("le.log", 1, "utf-16-le"),
        ("be.log", 1, "utf-16-be"),
    }
    assert report.found(2) == []
    assert "zq" not in str(report.to_json())


def test_scan_sees_a_needle_across_a_chunk_boundary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(erasure_scan, "_CHUNK", 16)
    (tmp_path / "f").write_bytes(b"x" * 13 + b"zqsplitword" + b"y" * 40)
    assert [h.how for h in scan(tmp_path, ["zqsplitword"]).hits] == ["utf-8"]


def test_scan_refuses_needles_that_would_match_by_chance(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError):
        scan(tmp_path, ["abc"])
    with pytest.raises(InvalidInputError):
        scan(tmp_path, [])


def test_shred_overwrites_before_it_unlinks(tmp_path: Path) -> None:
    victim = tmp_path / "old" / "store"
    victim.mkdir(parents=True)
    (victim / "strings.db").write_bytes(b"zqsecret" * 1000)
    # A second name for the same inode still shows what the blocks hold afterwards.
    witness = tmp_path / "witness"
    witness.hardlink_to(victim / "strings.db")
    files, size = shred_tree(tmp_path / "old")
    assert (files, size) == (1, 8000)
    assert not (tmp_path / "old").exists()
    assert witness.read_bytes() == bytes(8000)


def test_compact_refuses_a_neo4j_it_does_not_manage(tmp_path: Path) -> None:
    settings = Settings.from_env({}, state_dir=tmp_path, neo4j_uri="bolt://127.0.0.1:1")
    with pytest.raises(CompactError) as err:
        compact(settings, connect=partial(instance_database, settings))
    assert err.value.code == "COMPACT_FAILED"
    assert list(tmp_path.iterdir()) == []  # nothing was touched


def test_launcher_refuses_to_start_while_a_swap_is_unfinished(tmp_path: Path) -> None:
    local = LocalNeo4j(Settings.from_env({}, state_dir=tmp_path), name="swap", port=0)
    local.home.mkdir(parents=True)
    (local.home / SWAP_JOURNAL).write_text("{}")
    with pytest.raises(LauncherError) as err:
        local.start()
    assert "graphsvc compact" in err.value.message


def test_erasure_delay_must_be_positive() -> None:
    with pytest.raises(InvalidInputError):
        Settings.from_env({"GRAPHSVC_ERASURE_MAX_DELAY_S": "0"})
    with pytest.raises(InvalidInputError):
        Settings.from_env({"GRAPHSVC_ERASURE_MAX_DELAY_S": "nan"})


def test_a_stemmed_lucene_term_counts_as_the_needle() -> None:
    # What an English analyzer makes of the needle is still the needle.
    assert erasure_scan._stem_of("confidenti", "confidential")
    assert not erasure_scan._stem_of("conf", "confidential")  # too short to be evidence
    assert not erasure_scan._stem_of("confidentiality", "confidential")


def test_an_interrupted_swap_is_finished_and_the_old_store_shredded(tmp_path: Path) -> None:
    from graphsvc.ops.compact import _finish_interrupted

    settings = Settings.from_env({}, state_dir=tmp_path)
    live = LocalNeo4j(settings, name="serve", progress=lambda _m: None)
    target = LocalNeo4j(settings, name="serve-compact", progress=lambda _m: None)
    trash = live.home / "erased-20260101T000000"
    # The crash came after the old database folder moved to the trash, before the
    # new one moved in; the transaction logs were not touched yet.
    (trash / "databases" / "neo4j").mkdir(parents=True)
    (trash / "databases" / "neo4j" / "neostore").write_bytes(b"old zqpurged")
    (live.home / "data" / "transactions" / "neo4j").mkdir(parents=True)
    (live.home / "data" / "transactions" / "neo4j" / "tx.0").write_bytes(b"old log zqpurged")
    for part, name in (("databases", "neostore"), ("transactions", "tx.0")):
        folder = target.home / "data" / part / "neo4j"
        folder.mkdir(parents=True)
        (folder / name).write_bytes(b"new")
    journal = live.home / SWAP_JOURNAL
    journal.write_text(f'{{"trash": "{trash}", "new": "{target.home}"}}')
    with pytest.raises(LauncherError):
        live.start()  # Neo4j would make an empty database here

    files, _size = _finish_interrupted(live, target, lambda _m: None)

    assert not journal.exists() and not trash.exists() and not target.home.exists()
    assert (live.home / "data" / "databases" / "neo4j" / "neostore").read_bytes() == b"new"
    assert (live.home / "data" / "transactions" / "neo4j" / "tx.0").read_bytes() == b"new"
    assert files >= 2
    assert scan(tmp_path, ["zqpurged"]).hits == []
