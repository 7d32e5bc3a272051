"""API tokens → Bindings, from the JSON file named by ``GRAPHSVC_AUTH_FILE`` (SPEC API-2).

File shape::

    {"tokens": {"<secret>": {"subject": "s1", "policy": "default",
                             "actor": {"kind": "agent", "id": "bot-1"},
                             "purge": false, "authGeneration": 1}}}

``authGeneration`` is optional (default 1); raising it invalidates every
InputToken and idempotency record issued under the old generation.
"""

from __future__ import annotations

import hmac
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from graphsvc.core.binding import Binding
from graphsvc.errors import InvalidInputError, UnauthenticatedError

__all__ = ["AuthTable"]


class _Actor(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: str = Field(pattern="^(agent|human|input-adapter)$")
    id: str = Field(min_length=1, max_length=256)


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    subject: str = Field(min_length=1, max_length=256)
    policy: str = Field(default="default", min_length=1, max_length=256)
    actor: _Actor
    purge: bool = False
    auth_generation: int = Field(default=1, alias="authGeneration", ge=1)


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tokens: dict[str, _Entry]


class AuthTable:
    """Looks up the Binding of a bearer token (constant-time comparison)."""

    def __init__(self, tokens: dict[str, Binding]) -> None:
        self._tokens = dict(tokens)

    @classmethod
    def from_file(cls, path: str | Path) -> AuthTable:
        """Load and validate the auth file.

        Raises:
            InvalidInputError: the file is missing or malformed.
        """
        try:
            raw = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise InvalidInputError(f"cannot read auth file {path}: {exc}") from exc
        return cls.from_dict(raw)

    @classmethod
    def from_dict(cls, raw: Any) -> AuthTable:
        try:
            parsed = _File.model_validate(raw)
        except ValidationError as exc:
            raise InvalidInputError(f"invalid auth file: {exc}") from exc
        tokens = {
            secret: Binding(
                subject=e.subject,
                policy=e.policy,
                actor_kind=e.actor.kind,  # type: ignore[arg-type]
                actor_id=e.actor.id,
                auth_generation=e.auth_generation,
                may_purge=e.purge,
            )
            for secret, e in parsed.tokens.items()
        }
        return cls(tokens)

    def add(self, secret: str, binding: Binding) -> None:
        """Register one more token (tests and the demo use this)."""
        self._tokens[secret] = binding

    def binding_for(self, authorization: str | None) -> Binding:
        """The Binding of an ``Authorization: Bearer <token>`` header value.

        Raises:
            UnauthenticatedError: no header, wrong scheme, or unknown token.
        """
        if not authorization:
            raise UnauthenticatedError("missing Authorization: Bearer <token>")
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise UnauthenticatedError("Authorization must be 'Bearer <token>'")
        token = token.strip()
        found: Binding | None = None
        for secret, binding in self._tokens.items():
            # Compare against every entry so timing does not reveal a prefix match.
            if hmac.compare_digest(secret.encode(), token.encode()):
                found = binding
        if found is None:
            raise UnauthenticatedError("unknown API token")
        return found
