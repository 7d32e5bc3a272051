"""InputTokens: issue and verification (SPEC §3, TOK-1 … TOK-3).

(Not tiktoken counts: those are :mod:`graphsvc.tokenizer`; atom budgets are
:mod:`graphsvc.atomise.token_budget`.)

A token is a MAC-sealed payload ``{tid, sub, pol, ak, aid, gen, exp, ind}``:
token id, the binding it is bound to, expiry (epoch seconds) and the digest of
the inputs it declares. Verification rejects every case of TOK-3 with
TOKEN_INVALID: not a token, forged, another MAC domain (cursor, receipt),
another subject / policy / actor / auth generation, expired, or purged (its
Input record no longer exists).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from graphsvc.core.binding import Binding
from graphsvc.core.mac import open_sealed, seal
from graphsvc.errors import TokenInvalidError
from graphsvc.store.connection import Database
from graphsvc.store.input_tokens import purged_token_ids

__all__ = ["TokenClaims", "check_tokens_exist", "issue_token", "open_token"]


@dataclass(frozen=True)
class TokenClaims:
    token_id: str
    expires_at: float
    inputs_digest: str


def issue_token(
    secret: bytes, binding: Binding, token_id: str, expires_at: float, inputs_digest: str
) -> str:
    """Seal a new InputToken bound to ``binding``."""
    return seal(
        secret,
        "input-token",
        {
            "tid": token_id,
            "sub": binding.subject,
            "pol": binding.policy,
            "ak": binding.actor_kind,
            "aid": binding.actor_id,
            "gen": binding.auth_generation,
            "exp": expires_at,
            "ind": inputs_digest,
        },
    )


def open_token(
    secret: bytes, binding: Binding, token: str, *, now: float | None, change_id: str | None = None
) -> TokenClaims:
    """Verify MAC and scope; also expiry unless ``now`` is None (idempotent replay).

    Raises:
        TokenInvalidError: any rejection case of TOK-3 except "purged" (see
            :func:`check_tokens_exist`).
    """
    details: dict[str, Any] = {"changeId": change_id} if change_id else {}
    try:
        claims = open_sealed(secret, "input-token", token)
    except TokenInvalidError as exc:
        raise TokenInvalidError(_where(change_id) + exc.message, details=details) from exc
    expected = {
        "sub": binding.subject,
        "pol": binding.policy,
        "ak": binding.actor_kind,
        "aid": binding.actor_id,
        "gen": binding.auth_generation,
    }
    for field, value in expected.items():
        if claims.get(field) != value:
            raise TokenInvalidError(
                _where(change_id) + "InputToken was issued for another binding", details=details
            )
    try:
        tid = str(claims["tid"])
        exp = float(claims["exp"])
        ind = str(claims["ind"])
    except (KeyError, TypeError, ValueError) as exc:
        raise TokenInvalidError(
            _where(change_id) + "not a valid InputToken", details=details
        ) from exc
    if now is not None and now >= exp:
        raise TokenInvalidError(_where(change_id) + "InputToken has expired", details=details)
    return TokenClaims(token_id=tid, expires_at=exp, inputs_digest=ind)


def check_tokens_exist(
    db: Database,
    subject: str,
    token_ids: Iterable[str],
    change_of: Mapping[str, str] | None = None,
) -> None:
    """A token whose Input record is gone was purged (TOK-3).

    ``change_of`` maps a token id to the change that carries it, so the error
    names the offending change.

    Raises:
        TokenInvalidError: at least one token's inputs were erased by a purge.
    """
    ids = sorted(set(token_ids))
    if not ids:
        return
    purged = purged_token_ids(db, subject, ids)
    if purged:
        change_id = (change_of or {}).get(purged[0])
        raise TokenInvalidError(
            _where(change_id) + "InputToken refers to inputs that were purged",
            details={"changeId": change_id} if change_id else {},
        )


def _where(change_id: str | None) -> str:
    return f"change {change_id!r}: " if change_id else ""
