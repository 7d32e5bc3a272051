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
from graphsvc.errors import CursorExpiredError, PurgePendingError
from graphsvc.ops.guards import PURGE_PENDING
from graphsvc.store.connection import Database

if TYPE_CHECKING:
    from graphsvc.service import Service

__all__ = [
    "checked_generation",
    "digest",
    "evaluation_params",
    "generation_of",
    "next_cursor",
    "open_cursor",
    "save_and_cursor",
    "save_evaluation",
]

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


def generation_of(state: dict[str, Any], model_name: str) -> str:
    """The index generation from a ``search/subject_state`` row.

    Raises:
        PurgePendingError: the row says a purge of the subject has not finished (LNK-6).
    """
    if state["pending"]:
        raise PurgePendingError(PURGE_PENDING)
    return f"{state['schemaVersion']}:{model_name}:{state['purgeEpoch']}"


def checked_generation(service: Service, subject: str) -> str:
    """The subject's index generation now, after the purge check (one round trip).

    Raises:
        PurgePendingError: a purge in the subject has not finished (LNK-6).
    """
    state = service.db.read("search/subject_state", subject=subject)[0]
    return generation_of(state, service.embedder.model_name)


def evaluation_params(
    service: Service, binding: Binding, payload: dict[str, Any]
) -> dict[str, Any]:
    """Parameters of a new frozen evaluation (``payload`` still a dict; see save_evaluation)."""
    now = service.clock()
    return {
        "subject": binding.subject,
        "evalId": uuid.uuid4().hex,
        "payload": payload,
        "expiresAt": now + service.settings.cursor_lifetime_s,
        "now": now,
    }


def save_evaluation(db: Database, params: dict[str, Any]) -> None:
    """Store a frozen evaluation made by :func:`evaluation_params` (one transaction).

    The payload is encoded here, so a caller that saves in a worker thread does
    not pay for the encoding on its own path.
    """
    payload = json.dumps(params["payload"], separators=(",", ":"))
    db.write("cursor/save_evaluation", **{**params, "payload": payload})


def save_and_cursor(
    service: Service,
    binding: Binding,
    kind: str,
    query_hash: str,
    payload: dict[str, Any],
    offset: int,
    generation: str,
) -> str:
    """Store the frozen evaluation and return the cursor of the page at ``offset``.

    ``generation`` is the index generation read with the evaluation: if a purge
    moved it since, the cursor is already stale and later pages say so.
    """
    params = evaluation_params(service, binding, payload)
    save_evaluation(service.db, params)
    return next_cursor(
        service,
        binding,
        kind,
        query_hash,
        params["evalId"],
        offset,
        params["expiresAt"],
        generation,
    )


def next_cursor(
    service: Service,
    binding: Binding,
    kind: str,
    query_hash: str,
    eval_id: str,
    offset: int,
    expires: float,
    generation: str,
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
            "g": generation,
            "x": expires,
        },
    )


def open_cursor(
    service: Service,
    binding: Binding,
    kind: str,
    cursor: str,
    query_hash: str,
    generation: str,
) -> tuple[dict[str, Any], str, int, float]:
    """Verify a cursor and load its evaluation: ``(payload, evalId, offset, expiry)``.

    ``generation`` is the subject's index generation now (see :func:`checked_generation`).

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
        "g": generation,
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
