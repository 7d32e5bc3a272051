"""The pieces of disk erasure that need no Neo4j: the scanner, the shredder, the guards."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphsvc.errors import CompactError, InvalidInputError, LauncherError
from graphsvc.localdb import LocalNeo4j, erasure_scan
from graphsvc.localdb.erasure_scan import scan
from graphsvc.localdb.launcher import SWAP_JOURNAL
from graphsvc.ops.compact import compact, shred_tree
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
        compact(settings)
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
