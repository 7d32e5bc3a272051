"""Forensic bundles from a real store (SIG-3, SIG-4, API-7).

Export → offline verify (CLI, exit 0); flipped bytes anywhere → verify fails; a key
rotation leaves old signatures verifiable through the retired public key.
"""

from __future__ import annotations

import io
import json
import random
import stat
import tarfile
from pathlib import Path

import pytest
from atomise_support import THREE_SENTENCES, cli_env, create, run_cli, service_with

from graphsvc.core.binding import Binding
from graphsvc.forensics.bundle import verify_bundle_bytes
from graphsvc.service import Service
from graphsvc.settings import Settings

BUDGET = 50


@pytest.fixture(scope="module")
def rule(service: Service) -> Service:
    return service_with(service, curator="rule")


def members(data: bytes) -> dict[str, bytes]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
        out: dict[str, bytes] = {}
        for m in tar.getmembers():
            fh = tar.extractfile(m)
            assert fh is not None
            out[m.name] = fh.read()
        return out


@pytest.mark.req("SIG-3", "API-7", "API-4")
def test_exported_bundle_verifies_offline_with_exit_0(
    rule: Service, test_settings: Settings, tmp_path: Path, human: Binding, subject: str
) -> None:
    parent = create(rule, human, THREE_SENTENCES)
    outcome = rule.atomise(human, parent.atom_id, max_atom_tokens=BUDGET)
    env = cli_env(test_settings, tmp_path / "state")
    bundle = tmp_path / "bundle.tar"
    # From an atom: the walk goes up to the parent and down to every sibling.
    export = run_cli(
        [
            "export-forensic-bundle",
            "--memory-id",
            outcome.atom_ids[1],
            "--subject",
            subject,
            "-o",
            str(bundle),
            "--json",
        ],
        env,
    )
    assert export.code == 0, export.stderr
    assert export.json()["memories"] == 4 and export.json()["lineage"] == 3
    assert stat.S_IMODE(bundle.stat().st_mode) == 0o600

    verify = run_cli(["verify-bundle", str(bundle), "--json"], env)
    assert verify.code == 0, verify.stdout + verify.stderr
    report = verify.json()
    assert report["ok"] is True and report["problems"] == []
    assert report["checked"]["lineageSignatures"] == 3 and report["checked"]["events"] == 1

    files = members(bundle.read_bytes())
    manifest = json.loads(files["manifest.json"])
    envelopes = {m["atomId"]: m for m in manifest["memories"]}
    assert envelopes[parent.atom_id] == {
        "atomId": parent.atom_id,
        "atomisedInto": 3,
        "archivedAt": outcome.archived_at,
        "atomIds": list(outcome.atom_ids),
        "atomOf": None,
    }
    for atom_id in outcome.atom_ids:
        assert envelopes[atom_id]["atomOf"] == parent.atom_id
        assert envelopes[atom_id]["atomIds"] == []
    assert f"revisions/{parent.atom_id}@1.json" in files
    assert f"revisions/{parent.atom_id}@2.json" in files
    event = json.loads(files["signed-events/00000001.json"])
    assert event["type"] == "atomisation_complete"
    assert event["payload"]["atomIds"] == list(outcome.atom_ids)
    assert any(name.startswith("keys/ed25519:") for name in files)

    # Without the chain: the memory itself (its envelope still names its parent).
    alone = tmp_path / "alone.tar"
    flat = run_cli(
        [
            "export-forensic-bundle",
            "--memory-id",
            outcome.atom_ids[1],
            "--subject",
            subject,
            "-o",
            str(alone),
            "--include-atomisation-chain=false",
        ],
        env,
    )
    assert flat.code == 0, flat.stderr
    alone_files = members(alone.read_bytes())
    assert not any(name.startswith("lineage/") for name in alone_files)
    alone_manifest = json.loads(alone_files["manifest.json"])
    assert [m["atomId"] for m in alone_manifest["memories"]] == [outcome.atom_ids[1]]
    assert alone_manifest["memories"][0]["atomOf"] == parent.atom_id
    assert verify_bundle_bytes(alone.read_bytes()).ok


@pytest.mark.req("SIG-3", "API-7")
def test_a_flipped_byte_anywhere_fails_verification(
    rule: Service, test_settings: Settings, tmp_path: Path, human: Binding
) -> None:
    parent = create(rule, human, THREE_SENTENCES)
    rule.atomise(human, parent.atom_id, max_atom_tokens=BUDGET)
    data = rule.export_forensic_bundle(human, parent.atom_id).data
    assert verify_bundle_bytes(data).ok
    rng = random.Random(20250101)
    positions = rng.sample(range(len(data)), k=min(len(data), 400))
    assert len(positions) >= 300
    survivors = []
    for pos in positions:
        tampered = bytearray(data)
        tampered[pos] ^= rng.randrange(1, 256)
        if verify_bundle_bytes(bytes(tampered)).ok:
            survivors.append(pos)
    assert survivors == []

    bad = tmp_path / "tampered.tar"
    tampered = bytearray(data)
    tampered[len(data) // 3] ^= 0x01
    bad.write_bytes(bytes(tampered))
    env = cli_env(test_settings, tmp_path / "state")
    result = run_cli(["verify-bundle", str(bad), "--json"], env)
    assert result.code == 2
    assert result.json()["ok"] is False and result.json()["problems"]


@pytest.mark.req("SIG-4", "SIG-3")
def test_rotation_keeps_old_signatures_verifiable(
    rule: Service, tmp_path: Path, human: Binding
) -> None:
    own = service_with(rule, key_file=str(tmp_path / "keys" / "signing-key.json"))
    first = create(own, human, THREE_SENTENCES)
    own.atomise(human, first.atom_id, max_atom_tokens=BUDGET)
    ring = own.signing_keys()
    old_key = ring.active_key_id
    new_key = ring.rotate()
    second = create(own, human, THREE_SENTENCES)
    own.atomise(human, second.atom_id, max_atom_tokens=BUDGET)

    data = own.export_forensic_bundle(human, first.atom_id).data
    files = members(data)
    assert {f"keys/{old_key}.pub.json", f"keys/{new_key}.pub.json"} <= set(files)
    lineage = [json.loads(v) for k, v in files.items() if k.startswith("lineage/")]
    assert {rec["keyId"] for rec in lineage} == {old_key}
    events = [json.loads(v) for k, v in sorted(files.items()) if k.startswith("signed-events/")]
    assert [e["keyId"] for e in events] == [old_key, new_key]
    report = verify_bundle_bytes(data, trusted_keys=ring.public_keys())
    assert report.ok, report.problems
    assert report.checked["lineageSignatures"] == 3 and report.checked["events"] == 2
    # Only the new key is not enough: the old signatures need the retired key.
    only_new = {new_key: ring.public_keys()[new_key]}
    assert not verify_bundle_bytes(data, trusted_keys=only_new).ok
