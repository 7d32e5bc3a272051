"""Opaque, MAC-signed cursors over frozen evaluations (CUR-1, CUR-2).

The first page of a paged operation stores its evaluation (refs and numbers,
never bodies) as an ``:Evaluation`` node and returns a cursor that binds:
the operation kind, a hash of the query and options, the caller's binding,
a hash of the ranking settings, the index generation (schema version,
embedding model and the subject's purge epoch) and an expiry. Any difference on
a later call is CURSOR_EXPIRED; so is a missing or expired evaluation.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from typing import TYPE_CHECKING, Any

from graphsvc.core.binding import Binding
from graphsvc.core.mac import open_sealed, seal
from graphsvc.errors import CursorExpiredError

if TYPE_CHECKING:
    from graphsvc.service import Service

__all__ = ["digest", "open_cursor", "save_and_cursor"]

_RANKING_FIELDS = (
    "beta",
    "propagation",
    "convergence_tol",
    "role_weights",
    "max_seeds",
    "max_nodes",
    "max_edges",
    "evaluation_work",
    "packing_work",
    "candidate_oversample",
)


def digest(doc: Any) -> str:
    """Short canonical hash of a JSON-able document."""
    raw = json.dumps(doc, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:32]


def _settings_hash(service: Service) -> str:
    return digest({f: getattr(service.settings, f) for f in _RANKING_FIELDS})


def _index_generation(service: Service, subject: str) -> str:
    epoch = service.db.read("cursor/subject_generation", subject=subject)[0]["purgeEpoch"]
    return f"{service.db.schema_version()}:{service.embedder.model_name}:{epoch}"


def save_and_cursor(
    service: Service,
    binding: Binding,
    kind: str,
    query_hash: str,
    payload: dict[str, Any],
    offset: int,
) -> str:
    """Store the frozen evaluation and return the cursor of the page at ``offset``."""
    now = service.clock()
    eval_id = uuid.uuid4().hex
    expires = now + service.settings.cursor_lifetime_s
    service.db.write(
        "cursor/save_evaluation",
        subject=binding.subject,
        evalId=eval_id,
        payload=json.dumps(payload, separators=(",", ":")),
        expiresAt=expires,
        now=now,
    )
    return next_cursor(service, binding, kind, query_hash, eval_id, offset, expires)


def next_cursor(
    service: Service,
    binding: Binding,
    kind: str,
    query_hash: str,
    eval_id: str,
    offset: int,
    expires: float,
) -> str:
    """A cursor for another page of an already stored evaluation."""
    return seal(
        service.secret,
        "cursor",
        {
            "k": kind,
            "e": eval_id,
            "o": offset,
            "q": query_hash,
            "b": digest(binding.scope()),
            "s": _settings_hash(service),
            "g": _index_generation(service, binding.subject),
            "x": expires,
        },
    )


def open_cursor(
    service: Service, binding: Binding, kind: str, cursor: str, query_hash: str
) -> tuple[dict[str, Any], str, int, float]:
    """Verify a cursor and load its evaluation: ``(payload, evalId, offset, expiry)``.

    Raises:
        CursorExpiredError: forged, of another operation/query/options/binding/settings/
            index generation, expired, or its evaluation is gone.
    """
    claims = open_sealed(service.secret, "cursor", cursor)
    checks = {
        "k": kind,
        "q": query_hash,
        "b": digest(binding.scope()),
        "s": _settings_hash(service),
        "g": _index_generation(service, binding.subject),
    }
    for key, expected in checks.items():
        if claims.get(key) != expected:
            raise CursorExpiredError(
                "cursor no longer matches the query, options, authorisation, settings or index"
            )
    if service.clock() >= float(claims.get("x", 0)):
        raise CursorExpiredError("cursor has expired")
    rows = service.db.read(
        "cursor/load_evaluation", subject=binding.subject, evalId=str(claims.get("e"))
    )
    if not rows or rows[0]["payload"] is None:
        raise CursorExpiredError("the evaluation behind this cursor is gone")
    return json.loads(rows[0]["payload"]), str(claims["e"]), int(claims["o"]), float(claims["x"])
