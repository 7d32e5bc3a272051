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
from typing import TYPE_CHECKING, Any

from graphsvc.core.binding import Binding
from graphsvc.core.citations import check_range, parse_store_uri, source_key
from graphsvc.errors import DependencyInvalidError, InvalidInputError
from graphsvc.inputs import HostInputIn
from graphsvc.ops.guards import refuse_if_purge_pending
from graphsvc.ops.tokens import check_tokens_exist, issue_token, open_token

if TYPE_CHECKING:
    from graphsvc.service import Service

__all__ = ["observe"]


def observe(service: Service, binding: Binding, host_input: HostInputIn) -> str:
    """Record the host's declared inputs and return a new InputToken.

    Raises:
        TokenInvalidError: an inherited token is invalid, expired or purged.
        DependencyInvalidError: a basis/watch revision, presentation manifest or
            cited atom does not exist in this subject.
        InvalidInputError: a citation range lies outside the cited stored text.
        PurgePendingError: a purge in this subject has not finished.
    """
    db = service.db
    s = binding.subject
    refuse_if_purge_pending(db, s)
    now = service.clock()
    inherited = [open_token(service.secret, binding, t, now=now) for t in host_input.inherit]
    check_tokens_exist(db, s, (c.token_id for c in inherited))

    refs = [r.core() for r in [*host_input.basis, *host_input.watches]]
    if refs:
        rows = db.read(
            "write/check_refs",
            subject=s,
            refs=[{"atomId": r.atom_id, "rev": r.rev, "wantText": False} for r in refs],
        )
        for row in rows:
            if not row["found"]:
                raise DependencyInvalidError(f"{row['atomId']}@{row['rev']} does not exist")

    presented: list[dict[str, Any]] = []
    if host_input.presentations:
        rows = db.read("observe/find_manifests", subject=s, manifestIds=host_input.presentations)
        for row in rows:
            if not row["found"]:
                raise DependencyInvalidError(f"manifest {row['manifestId']} does not exist")
            presented.extend(p for p in row["presented"] if p.get("atomId") is not None)

    cites = _citations(service, binding, host_input)
    token_id = uuid.uuid4().hex
    expires_at = now + service.settings.token_lifetime_s
    inputs_doc = {
        "presentations": sorted(host_input.presentations),
        "sources": [c["public"] for c in cites],
        "inherit": sorted(c.inputs_digest for c in inherited),
        "basis": sorted((r.atom_id, r.rev) for r in (b.core() for b in host_input.basis)),
        "watches": sorted((r.atom_id, r.rev) for r in (w.core() for w in host_input.watches)),
        "payloadDigest": host_input.payload_digest,
    }
    inputs_digest = (
        "sha256:"
        + hashlib.sha256(
            json.dumps(inputs_doc, sort_keys=True, separators=(",", ":")).encode()
        ).hexdigest()
    )
    db.write(
        "observe/create_input",
        subject=s,
        tokenId=token_id,
        payloadDigest=host_input.payload_digest,
        inputsDigest=inputs_digest,
        presentations=list(host_input.presentations),
        sources=json.dumps([c["public"] for c in cites], sort_keys=True),
        watchesJson=json.dumps([w.core().to_json() for w in host_input.watches]),
        actorKind=binding.actor_kind,
        actorId=binding.actor_id,
        policy=binding.policy,
        authGeneration=binding.auth_generation,
        now=now,
        expiresAt=expires_at,
        basis=[b.core().to_json() for b in host_input.basis],
        watches=[w.core().to_json() for w in host_input.watches],
        presented=presented,
        inherit=[c.token_id for c in inherited],
        cites=[{k: v for k, v in c.items() if k != "public"} for c in cites],
    )
    return issue_token(service.secret, binding, token_id, expires_at, inputs_digest)


def _citations(service: Service, binding: Binding, host_input: HostInputIn) -> list[dict[str, Any]]:
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
            rows = service.db.read(
                "write/check_refs",
                subject=binding.subject,
                refs=[{"atomId": atom_id, "rev": int(version), "wantText": True}],
            )
            if not rows[0]["found"]:
                raise DependencyInvalidError(f"cited {cite.uri} rev {version} does not exist")
            check_range(rows[0]["text"], rows[0]["digest"], item, change_id="observe")
            verified = True
        item["version"] = version
        item["verified"] = verified
        item["sourceKey"] = source_key(cite.uri, version, cite.digest)
        item["public"] = {**cite.to_json(), "verified": verified}
        out.append(item)
    return out
