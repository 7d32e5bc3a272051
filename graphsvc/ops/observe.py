"""``observe`` (SPEC §3): record what a host presented and declared; issue an InputToken.

The Input record keeps presentations (the revisions each read manifest
presented), basis revisions, sources, inherited tokens, watches and the payload
digest. A write made with the token links its revisions to this record
(GENERATED_FROM), which is how purge later finds what depends on erased data
(TOK-5, LNK-5). The service records what the host declared; it cannot see what
the host left out (TOK-4).
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable
from typing import Any

from graphsvc.core.binding import Binding
from graphsvc.core.citations import check_range, parse_store_uri, source_key
from graphsvc.core.write_models import AtomRef
from graphsvc.errors import DependencyInvalidError, InvalidInputError
from graphsvc.inputs.models import HostInputIn
from graphsvc.ops.guards import refuse_if_purge_pending
from graphsvc.ops.input_tokens import check_tokens_exist, issue_token, open_token
from graphsvc.store.connection import Database
from graphsvc.store.observe import NewInput, create_input, find_manifests
from graphsvc.store.write_store import find_revisions

__all__ = ["observe"]


def observe(
    db: Database,
    secret: bytes,
    clock: Callable[[], float],
    token_lifetime_s: float,
    binding: Binding,
    host_input: HostInputIn,
) -> str:
    """Record the host's declared inputs and return a new InputToken.

    Args:
        db: the store.
        secret: the server secret tokens are sealed with.
        clock: epoch seconds.
        token_lifetime_s: how long the new token is valid.
        binding: the caller.
        host_input: what the host presented and declared.

    Raises:
        TokenInvalidError: an inherited token is invalid, expired or purged.
        DependencyInvalidError: a basis/watch revision, presentation manifest or
            cited atom does not exist in this subject.
        InvalidInputError: a citation range lies outside the cited stored text.
        PurgePendingError: a purge in this subject has not finished.
    """
    s = binding.subject
    refuse_if_purge_pending(db, s)
    now = clock()
    inherited = [open_token(secret, binding, t, now=now) for t in host_input.inherit]
    check_tokens_exist(db, s, (c.token_id for c in inherited))
    basis = [b.core() for b in host_input.basis]
    watches = [w.core() for w in host_input.watches]
    _check_exist(db, s, [*basis, *watches])
    presented = _presented(db, s, host_input.presentations)
    cites = _citations(db, binding, host_input)
    token_id = uuid.uuid4().hex
    expires_at = now + token_lifetime_s
    inputs_doc = {
        "presentations": sorted(host_input.presentations),
        "sources": [c["public"] for c in cites],
        "inherit": sorted(c.inputs_digest for c in inherited),
        "basis": sorted((r.atom_id, r.rev) for r in basis),
        "watches": sorted((r.atom_id, r.rev) for r in watches),
        "payloadDigest": host_input.payload_digest,
    }
    inputs_digest = (
        "sha256:"
        + hashlib.sha256(
            json.dumps(inputs_doc, sort_keys=True, separators=(",", ":")).encode()
        ).hexdigest()
    )
    create_input(
        db,
        binding,
        NewInput(
            token_id=token_id,
            payload_digest=host_input.payload_digest,
            inputs_digest=inputs_digest,
            presentations=list(host_input.presentations),
            sources_json=json.dumps([c["public"] for c in cites], sort_keys=True),
            watches_json=json.dumps([w.to_json() for w in watches]),
            now=now,
            expires_at=expires_at,
            basis=basis,
            watches=watches,
            presented=presented,
            inherit=[c.token_id for c in inherited],
            cites=[{k: v for k, v in c.items() if k != "public"} for c in cites],
        ),
    )
    return issue_token(secret, binding, token_id, expires_at, inputs_digest)


def _check_exist(db: Database, subject: str, refs: list[AtomRef]) -> None:
    """Basis and watched revisions must exist in the subject."""
    if not refs:
        return
    for found in find_revisions(db, subject, refs, with_text=False):
        if not found.found:
            raise DependencyInvalidError(f"{found.atom_id}@{found.rev} does not exist")


def _presented(db: Database, subject: str, manifest_ids: list[str]) -> list[AtomRef]:
    """The revisions the named read manifests presented (each manifest must exist)."""
    presented: list[AtomRef] = []
    if not manifest_ids:
        return presented
    for manifest in find_manifests(db, subject, manifest_ids):
        if not manifest.found:
            raise DependencyInvalidError(f"manifest {manifest.manifest_id} does not exist")
        presented.extend(manifest.presented)
    return presented


def _citations(db: Database, binding: Binding, host_input: HostInputIn) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for ordinal, src in enumerate(host_input.sources):
        cite = src.core()
        version = cite.version
        verified = False
        atom_id = parse_store_uri(cite.uri)
        item: dict[str, Any] = {
            "ordinal": ordinal,
            "uri": cite.uri,
            "digest": cite.digest,
            "start": cite.range.start if cite.range else None,
            "end": cite.range.end if cite.range else None,
            "unit": cite.range.unit if cite.range else None,
        }
        if atom_id is not None:
            if version is None or not version.isdigit():
                raise InvalidInputError("an atom: source names its rev as version")
            found = find_revisions(
                db, binding.subject, [AtomRef(atom_id, int(version))], with_text=True
            )[0]
            if not found.found:
                raise DependencyInvalidError(f"cited {cite.uri} rev {version} does not exist")
            check_range(found.text or "", found.digest or "", item, change_id="observe")
            verified = True
        item["version"] = version
        item["verified"] = verified
        item["sourceKey"] = source_key(cite.uri, version, cite.digest)
        item["public"] = {**cite.to_json(), "verified": verified}
        out.append(item)
    return out
