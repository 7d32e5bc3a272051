"""The deployment key file: 0600 on create, refusal when exposed, rotation (SIG-4)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from graphsvc.core.signing import (
    SignableLink,
    key_id,
    make_event,
    sign_link,
    verify_chain,
    verify_link,
)
from graphsvc.errors import SignerError
from graphsvc.keys.signing_keys import KeyRing


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def link_for(ring: KeyRing) -> SignableLink:
    return SignableLink(
        subject="s",
        from_atom_id="child",
        from_rev=1,
        to_atom_id="parent",
        to_rev=1,
        signed_at="2025-01-01T00:00:00Z",
        key_id=ring.active_key_id,
    )


@pytest.mark.req("SIG-4")
def test_first_start_creates_a_0600_key_file(tmp_path: Path) -> None:
    path = tmp_path / "secrets" / "signing-key.json"
    old_umask = os.umask(0o000)  # even a permissive umask must not widen the mode
    try:
        ring = KeyRing.load_or_create(path)
    finally:
        os.umask(old_umask)
    assert path.exists()
    assert mode_of(path) == 0o600
    assert ring.active_key_id == key_id(ring.active_public_key)
    assert ring.active_key_id.startswith("ed25519:")
    assert len(ring.active_seed) == 32
    assert [p.name for p in path.parent.iterdir()] == ["signing-key.json"]  # no tmp left


@pytest.mark.req("SIG-4")
def test_second_start_loads_the_same_key(tmp_path: Path) -> None:
    path = tmp_path / "key.json"
    first = KeyRing.load_or_create(path)
    second = KeyRing.load_or_create(path)
    assert second.active_seed == first.active_seed
    assert second.active_key_id == first.active_key_id
    assert second.public_keys() == first.public_keys()


@pytest.mark.req("SIG-4")
@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660, 0o606, 0o610])
def test_key_file_open_to_group_or_others_is_refused(tmp_path: Path, mode: int) -> None:
    path = tmp_path / "key.json"
    KeyRing.load_or_create(path)
    path.chmod(mode)
    with pytest.raises(SignerError) as info:
        KeyRing.load_or_create(path)
    assert info.value.details["mode"] == f"{mode:o}"
    assert "600" in info.value.message


@pytest.mark.req("SIG-4")
def test_owner_only_modes_are_accepted(tmp_path: Path) -> None:
    path = tmp_path / "key.json"
    KeyRing.load_or_create(path)
    path.chmod(0o400)
    assert KeyRing.load_or_create(path).active_key_id


@pytest.mark.req("SIG-4")
def test_rotation_keeps_old_keys_verifying(tmp_path: Path) -> None:
    path = tmp_path / "key.json"
    ring = KeyRing.load_or_create(path)
    old_id, old_seed = ring.active_key_id, ring.active_seed
    old_link = link_for(ring)
    old_signature = sign_link(old_seed, old_link)
    first_event = make_event(
        old_seed, None, "s", "atomisation_complete", {}, "2025-01-01T00:00:00Z"
    )

    new_id = ring.rotate()

    assert new_id == ring.active_key_id != old_id
    assert ring.active_seed != old_seed
    assert mode_of(path) == 0o600
    reloaded = KeyRing.load_or_create(path)
    assert reloaded.active_key_id == new_id
    assert set(reloaded.public_keys()) == {old_id, new_id}
    assert [r.key_id for r in reloaded.retired] == [old_id]
    # Signatures made before the rotation still verify with the retired public key.
    assert verify_link(reloaded.public_keys()[old_id], old_link, old_signature)
    second_event = make_event(
        reloaded.active_seed, first_event, "s", "atomisation_complete", {}, "2025-01-02T00:00:00Z"
    )
    assert second_event.key_id == new_id
    assert verify_chain([first_event, second_event], reloaded.public_keys()) == []
    # The retired seed is gone from the file: only public material is kept for it.
    stored = json.loads(path.read_text())
    assert old_seed.hex() not in path.read_text()
    assert stored["retired"] == [
        {"keyId": old_id, "publicKey": reloaded.public_keys()[old_id].hex()}
    ]


@pytest.mark.req("SIG-4")
def test_two_rotations_keep_every_old_key(tmp_path: Path) -> None:
    path = tmp_path / "key.json"
    ring = KeyRing.load_or_create(path)
    ids = [ring.active_key_id, ring.rotate(), ring.rotate()]
    assert len(set(ids)) == 3
    assert set(KeyRing.load_or_create(path).public_keys()) == set(ids)


@pytest.mark.req("SIG-4")
@pytest.mark.parametrize(
    "content",
    [
        b"not json",
        b"{}",
        b'{"version": 1, "active": {"seed": "00", "keyId": "x"}, "retired": []}',
        b'{"version": 2}',
    ],
)
def test_malformed_key_file_is_a_signer_error(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "key.json"
    path.write_bytes(content)
    path.chmod(0o600)
    with pytest.raises(SignerError):
        KeyRing.load_or_create(path)


@pytest.mark.req("SIG-4")
def test_tampered_key_id_is_a_signer_error(tmp_path: Path) -> None:
    path = tmp_path / "key.json"
    ring = KeyRing.load_or_create(path)
    ring.rotate()
    doc = json.loads(path.read_text())
    doc["retired"][0]["keyId"] = "ed25519:0000000000000000"
    path.write_text(json.dumps(doc))
    with pytest.raises(SignerError):
        KeyRing.load_or_create(path)


@pytest.mark.req("SIG-4")
def test_symlinked_or_non_regular_key_file_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    KeyRing.load_or_create(real)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    with pytest.raises(SignerError):
        KeyRing.load_or_create(link)
    directory = tmp_path / "dir.json"
    directory.mkdir(mode=0o700)
    with pytest.raises(SignerError):
        KeyRing.load_or_create(directory)
