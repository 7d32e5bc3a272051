"""Forensic bundles: deterministic bytes, offline verification, tamper evidence (SIG-3)."""

from __future__ import annotations

import gzip
import io
import json
import tarfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from graphsvc.core.signing import (
    SignableLink,
    key_id_for_seed,
    make_event,
    public_key_for_seed,
    sign_link,
)
from graphsvc.errors import InvalidInputError
from graphsvc.forensics import bundle as bundle_mod
from graphsvc.forensics.bundle import (
    BUNDLE_FORMAT,
    bundle_bytes,
    verify_bundle,
    verify_bundle_bytes,
    write_bundle,
)

SEED = bytes(range(1, 33))
OTHER_SEED = bytes([7]) * 32
SUBJECT = "subj-1"


def sample_inputs(seed: bytes = SEED) -> dict[str, Any]:
    """A parent atomised into two atoms: 3 revisions, 2 lineage edges, 2 events."""
    kid = key_id_for_seed(seed)
    parent_v1 = {"atomId": "p1", "rev": 1, "state": "active", "text": "Long body. Two facts."}
    parent_v2 = {**parent_v1, "rev": 2, "state": "archived", "atomisedInto": 2}
    atoms: list[dict[str, Any]] = [
        {"atomId": "a1", "rev": 1, "state": "active", "text": "Long body.", "atomOf": "p1"},
        {"atomId": "a2", "rev": 1, "state": "active", "text": "Two facts.", "atomOf": "p1"},
    ]
    lineage = []
    for atom in atoms:
        link = SignableLink(
            subject=SUBJECT,
            from_atom_id=atom["atomId"],
            from_rev=1,
            to_atom_id="p1",
            to_rev=1,
            signed_at="2025-01-02T03:04:05Z",
            key_id=kid,
        )
        lineage.append({**link.to_dict(), "signature": sign_link(seed, link)})
    first = make_event(seed, None, SUBJECT, "write", {"atomId": "p1"}, "2025-01-02T03:04:00Z")
    second = make_event(
        seed,
        first,
        SUBJECT,
        "atomisation_complete",
        {"sourceId": "p1", "atomIds": ["a1", "a2"], "atomCount": 2},
        "2025-01-02T03:04:06Z",
    )
    manifest = {
        "subject": SUBJECT,
        "rootAtomId": "p1",
        "memories": [
            {
                "atomId": "p1",
                "atomisedInto": 2,
                "archivedAt": "2025-01-02T03:04:06Z",
                "atomIds": ["a1", "a2"],
                "atomOf": None,
            },
            *(
                {
                    "atomId": a["atomId"],
                    "atomisedInto": None,
                    "archivedAt": None,
                    "atomIds": [],
                    "atomOf": "p1",
                }
                for a in atoms
            ),
        ],
    }
    return {
        "manifest": manifest,
        "revisions": [parent_v1, parent_v2, *atoms],
        "events": [first.to_dict(), second.to_dict()],
        "public_keys": {kid: public_key_for_seed(seed).hex()},
        "lineage": lineage,
    }


@pytest.fixture(scope="module")
def raw_bundle() -> bytes:
    return bundle_bytes(**sample_inputs())


def members_of(raw: bytes) -> dict[str, bytes]:
    with tarfile.open(fileobj=io.BytesIO(raw), mode="r:") as tar:
        out: dict[str, bytes] = {}
        for member in tar.getmembers():
            fh = tar.extractfile(member)
            assert fh is not None
            out[member.name] = fh.read()
        return out


@pytest.mark.req("SIG-3")
def test_written_bundle_verifies_offline(tmp_path: Path) -> None:
    path = tmp_path / "bundle.tar"
    write_bundle(path, **sample_inputs())
    report = verify_bundle(path)
    assert report.problems == []
    assert report.ok
    assert report.checked == {
        "members": 11,
        "hashedFiles": 9,
        "keys": 1,
        "lineageSignatures": 2,
        "events": 2,
        "revisions": 4,
        "memories": 3,
    }


@pytest.mark.req("SIG-3")
def test_bundle_layout_and_manifest(raw_bundle: bytes) -> None:
    files = members_of(raw_bundle)
    kid = key_id_for_seed(SEED)
    assert list(files) == sorted(files)
    assert set(files) == {
        f"keys/{kid}.pub.json",
        "lineage/00000001.json",
        "lineage/00000002.json",
        "manifest.json",
        "manifest.sha256",
        "revisions/a1@1.json",
        "revisions/a2@1.json",
        "revisions/p1@1.json",
        "revisions/p1@2.json",
        "signed-events/00000001.json",
        "signed-events/00000002.json",
    }
    manifest = json.loads(files["manifest.json"])
    assert manifest["format"] == BUNDLE_FORMAT
    assert manifest["memories"][0]["atomIds"] == ["a1", "a2"]
    assert set(manifest["files"]) == set(files) - {"manifest.json", "manifest.sha256"}
    # JSON is compact, key-sorted, UTF-8, newline-terminated.
    text = files["revisions/p1@1.json"].decode("utf-8")
    assert text.endswith("}\n") and ": " not in text and ", " not in text.replace(". ", "")
    assert json.loads(text) == sample_inputs()["revisions"][0]
    assert files["manifest.sha256"].decode().endswith("  manifest.json\n")


@pytest.mark.req("SIG-3")
def test_tar_headers_are_fixed(raw_bundle: bytes) -> None:
    with tarfile.open(fileobj=io.BytesIO(raw_bundle), mode="r:") as tar:
        for member in tar.getmembers():
            assert member.isreg()
            assert (member.mtime, member.uid, member.gid) == (0, 0, 0)
            assert (member.uname, member.gname, member.mode) == ("", "", 0o644)
            assert member.pax_headers == {}
    assert len(raw_bundle) % 512 == 0
    assert raw_bundle.endswith(bytes(1024))


@pytest.mark.req("SIG-3")
def test_same_inputs_give_the_same_bytes_whatever_the_order(raw_bundle: bytes) -> None:
    inputs = sample_inputs()
    inputs["lineage"] = list(reversed(inputs["lineage"]))
    inputs["revisions"] = list(reversed(inputs["revisions"]))
    inputs["events"] = list(reversed(inputs["events"]))
    assert bundle_bytes(**inputs) == raw_bundle
    assert bundle_bytes(**sample_inputs()) == raw_bundle


@pytest.mark.req("SIG-3")
@pytest.mark.parametrize("mask", [0x01, pytest.param(0x80, marks=pytest.mark.slow)])
def test_every_single_flipped_byte_fails_verification(raw_bundle: bytes, mask: int) -> None:
    assert verify_bundle_bytes(raw_bundle).ok
    survivors = []
    buf = bytearray(raw_bundle)
    for offset in range(len(buf)):
        buf[offset] ^= mask
        if verify_bundle_bytes(bytes(buf)).ok:
            survivors.append(offset)
        buf[offset] ^= mask
    assert survivors == [], f"flips at offsets {survivors[:20]} went unnoticed"


RAW_BUNDLE = bundle_bytes(**sample_inputs())


@pytest.mark.req("SIG-3")
@settings(max_examples=300, deadline=None)
@given(offset=st.integers(0, len(RAW_BUNDLE) - 1), value=st.integers(0, 255))
def test_any_byte_set_to_any_other_value_fails(offset: int, value: int) -> None:
    assume(RAW_BUNDLE[offset] != value)
    tampered = bytearray(RAW_BUNDLE)
    tampered[offset] = value
    assert not verify_bundle_bytes(bytes(tampered)).ok


@pytest.mark.req("SIG-3")
@pytest.mark.parametrize("typeflag", [b"x", b"g", b"L", b"K", b"5", b"2", b"S", b"\0"])
def test_member_type_changes_fail(typeflag: bytes) -> None:
    # The first header's typeflag (offset 156) turned into a pax, GNU long-name,
    # directory, symlink or sparse header: the parser may read something else
    # entirely, and verification must still fail rather than crash.
    for header_offset in (0, RAW_BUNDLE.index(b"lineage/00000002.json")):
        tampered = bytearray(RAW_BUNDLE)
        tampered[header_offset + 156 : header_offset + 157] = typeflag
        assert not verify_bundle_bytes(bytes(tampered)).ok


@pytest.mark.req("SIG-3")
def test_flipped_byte_in_a_file_on_disk_fails(tmp_path: Path, raw_bundle: bytes) -> None:
    files = members_of(raw_bundle)
    offset = raw_bundle.index(files["revisions/a1@1.json"]) + 5
    tampered = bytearray(raw_bundle)
    tampered[offset] ^= 0x01
    path = tmp_path / "b.tar"
    path.write_bytes(bytes(tampered))
    report = verify_bundle(path)
    assert not report.ok
    assert "hash mismatch: revisions/a1@1.json" in report.problems


def retar(files: dict[str, bytes]) -> bytes:
    # Re-tar with the bundle's own deterministic writer, so only the content check
    # under test can fail.
    return bundle_mod._tar_bytes(files)


@pytest.mark.req("SIG-3")
def test_missing_file_fails(raw_bundle: bytes) -> None:
    files = members_of(raw_bundle)
    del files["revisions/a2@1.json"]
    report = verify_bundle_bytes(retar(files))
    assert not report.ok
    assert "missing file listed in manifest: revisions/a2@1.json" in report.problems


@pytest.mark.req("SIG-3")
def test_extra_file_fails(raw_bundle: bytes) -> None:
    files = members_of(raw_bundle)
    files["notes.txt"] = b"hello\n"
    report = verify_bundle_bytes(retar(files))
    assert not report.ok
    assert "extra file not listed in manifest: notes.txt" in report.problems


@pytest.mark.req("SIG-3")
def test_missing_manifest_or_digest_fails(raw_bundle: bytes) -> None:
    for name in ("manifest.json", "manifest.sha256"):
        files = members_of(raw_bundle)
        del files[name]
        report = verify_bundle_bytes(retar(files))
        assert not report.ok
        assert f"missing {name}" in report.problems


@pytest.mark.req("SIG-3")
def test_consistently_rehashed_but_forged_lineage_fails_its_signature() -> None:
    # An attacker who rewrites a file and fixes every hash still cannot forge a
    # signature: the bundle is internally consistent yet fails verification.
    inputs = sample_inputs()
    inputs["lineage"][0] = {**inputs["lineage"][0], "from": {"atomId": "a9", "rev": 1}}
    inputs["revisions"].append({"atomId": "a9", "rev": 1, "text": "forged"})
    report = verify_bundle_bytes(bundle_bytes(**inputs))
    assert not report.ok
    assert any("bad signature" in p for p in report.problems)


@pytest.mark.req("SIG-3", "SIG-2")
def test_broken_event_chain_fails() -> None:
    inputs = sample_inputs()
    inputs["events"] = inputs["events"][1:]  # first event missing: chain starts at 2
    report = verify_bundle_bytes(bundle_bytes(**inputs))
    assert not report.ok
    assert any("expected sequence 1" in p for p in report.problems)


@pytest.mark.req("SIG-3", "SIG-4")
def test_trusted_keys_must_match_the_bundled_keys(raw_bundle: bytes) -> None:
    kid = key_id_for_seed(SEED)
    assert verify_bundle_bytes(raw_bundle, trusted_keys={kid: public_key_for_seed(SEED)}).ok
    # A bundle re-signed by someone else's key verifies internally, but not against
    # the keys the auditor trusts.
    foreign = bundle_bytes(**sample_inputs(OTHER_SEED))
    assert verify_bundle_bytes(foreign).ok
    report = verify_bundle_bytes(foreign, trusted_keys={kid: public_key_for_seed(SEED)})
    assert not report.ok
    assert any("not one of the trusted keys" in p for p in report.problems)


@pytest.mark.req("SIG-3")
def test_lineage_to_a_revision_missing_from_the_bundle_fails() -> None:
    inputs = sample_inputs()
    inputs["revisions"] = [r for r in inputs["revisions"] if (r["atomId"], r["rev"]) != ("p1", 1)]
    report = verify_bundle_bytes(bundle_bytes(**inputs))
    assert not report.ok
    assert any("revision p1@1 is not in the bundle" in p for p in report.problems)


@pytest.mark.req("SIG-3")
def test_compressed_truncated_or_unreadable_bundles_fail(tmp_path: Path, raw_bundle: bytes) -> None:
    assert not verify_bundle_bytes(gzip.compress(raw_bundle, mtime=0)).ok
    assert not verify_bundle_bytes(raw_bundle[:-512]).ok
    assert not verify_bundle_bytes(raw_bundle + b"\0" * 512).ok
    assert not verify_bundle_bytes(b"").ok
    report = verify_bundle(tmp_path / "absent.tar")
    assert not report.ok
    assert report.problems[0].startswith("cannot read bundle")


@pytest.mark.req("SIG-3")
@pytest.mark.parametrize(
    "change",
    [
        lambda i: i["manifest"].update(files={}),
        lambda i: i["manifest"].update(format="x"),
        lambda i: i["manifest"].pop("memories"),
        lambda i: i["manifest"]["memories"][0].pop("atomOf"),
        lambda i: i["revisions"].append({"atomId": "../etc", "rev": 1}),
        lambda i: i["revisions"].append({"atomId": "p1", "rev": 1}),
        lambda i: i["revisions"].append({"atomId": "x", "rev": 0}),
        lambda i: i["public_keys"].update({"ed25519:0000000000000000": "00" * 32}),
        lambda i: i["lineage"][0].pop("signature"),
        lambda i: i["events"][0].update(prevHash="nothex"),
        lambda i: i["revisions"][0].update(score=float("nan")),
    ],
)
def test_malformed_inputs_are_refused_at_write(tmp_path: Path, change: Any) -> None:
    inputs = sample_inputs()
    change(inputs)
    with pytest.raises(InvalidInputError):
        write_bundle(tmp_path / "b.tar", **inputs)
    assert not (tmp_path / "b.tar").exists()
