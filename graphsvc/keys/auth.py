"""API tokens → Bindings, from the JSON file named by ``GRAPHSVC_AUTH_FILE`` (SPEC API-2).

File shape::

    {"tokens": {"<secret>": {"subject": "s1", "policy": "default",
                             "actor": {"kind": "agent", "id": "bot-1"},
                             "purge": false, "authGeneration": 1,
                             "can": ["read", "write"]}}}

``authGeneration`` is optional (default 1); raising it invalidates every
InputToken and idempotency record issued under the old generation.

``can`` is optional: the capabilities of the token, from :data:`CAPABILITIES`.
Without it a human token may read, write, atomise and export, an agent or
input-adapter token may read and write (SPEC CORE-1: atomise, purge and
exportForensicBundle are operator operations); ``"purge": true`` adds ``purge``
either way. :func:`required_capability` is the one table of which GraphQL field
needs which capability; :meth:`AuthTable.grant_for` is where it is checked.
"""

from __future__ import annotations

import hmac
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from graphsvc.core.binding import Binding
from graphsvc.errors import InvalidInputError, PermissionDeniedError, UnauthenticatedError

__all__ = ["CAPABILITIES", "AuthTable", "Grant", "default_capabilities", "required_capability"]

CAPABILITIES = ("read", "write", "atomise", "export", "purge")

# GraphQL root field → the capability it needs. A field not named here needs
# "read" in a query and "write" in a mutation.
_FIELD_CAPABILITY = {
    "search": "read",
    "read": "read",
    "inspect": "read",
    "lineage": "read",
    "write": "write",
    "observe": "write",
    "recordUse": "write",
    "recordUseTyped": "write",
    "resetUsage": "write",
    "atomise": "atomise",
    "atomiseTyped": "atomise",
    "setNamespacePolicy": "atomise",
    "setNamespacePolicyTyped": "atomise",
    "exportForensicBundle": "export",
    "exportForensicBundleTyped": "export",
    "purge": "purge",
    "purgeTyped": "purge",
}


def required_capability(field_name: str, *, mutation: bool) -> str:
    """The capability a GraphQL root field needs (see the module docstring)."""
    return _FIELD_CAPABILITY.get(field_name, "write" if mutation else "read")


def default_capabilities(actor_kind: str, *, purge: bool = False) -> frozenset[str]:
    """What a token without ``can`` may do: operators more than agents and adapters."""
    base = {"read", "write", "atomise", "export"} if actor_kind == "human" else {"read", "write"}
    return frozenset(base | ({"purge"} if purge else set()))


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
    can: list[str] | None = None

    def capabilities(self) -> frozenset[str]:
        if self.can is None:
            return default_capabilities(self.actor.kind, purge=self.purge)
        unknown = sorted(set(self.can) - set(CAPABILITIES))
        if unknown:
            raise ValueError(f"unknown capabilities {unknown}; known: {list(CAPABILITIES)}")
        return frozenset(self.can) | ({"purge"} if self.purge else frozenset())


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tokens: dict[str, _Entry]


@dataclass(frozen=True)
class Grant:
    """A token's Binding and what it may do."""

    binding: Binding
    can: frozenset[str]

    def require(self, capability: str) -> Binding:
        """The Binding, if this grant holds ``capability``.

        Raises:
            PermissionDeniedError: it does not.
        """
        if capability not in self.can:
            raise PermissionDeniedError(
                f'this API token may not {capability} (auth file entry "can")',
                details={"capability": capability},
            )
        return self.binding


class AuthTable:
    """Looks up the Binding of a bearer token (constant-time comparison)."""

    def __init__(self, tokens: dict[str, Binding], can: dict[str, frozenset[str]] | None = None):
        self._tokens: dict[str, Grant] = {}
        for secret, binding in tokens.items():
            self.add(secret, binding, (can or {}).get(secret))

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
        table = cls({})
        for secret, e in parsed.tokens.items():
            try:
                can = e.capabilities()
            except ValueError as exc:
                raise InvalidInputError(f"invalid auth file: {exc}") from exc
            binding = Binding(
                subject=e.subject,
                policy=e.policy,
                actor_kind=e.actor.kind,  # type: ignore[arg-type]
                actor_id=e.actor.id,
                auth_generation=e.auth_generation,
                may_purge="purge" in can,
            )
            table.add(secret, binding, can)
        return table

    def add(self, secret: str, binding: Binding, can: frozenset[str] | None = None) -> None:
        """Register one more token (tests and the demo use this).

        ``can`` defaults to :func:`default_capabilities` of the binding.
        """
        if can is None:
            can = default_capabilities(binding.actor_kind, purge=binding.may_purge)
        self._tokens[secret] = Grant(binding, frozenset(can))

    def binding_for(self, authorization: str | None) -> Binding:
        """The Binding of an ``Authorization: Bearer <token>`` header value.

        Raises:
            UnauthenticatedError: no header, wrong scheme, or unknown token.
        """
        return self.grant_for(authorization).binding

    def grant_for(self, authorization: str | None) -> Grant:
        """The Grant of an ``Authorization: Bearer <token>`` header value.

        Raises:
            UnauthenticatedError: no header, wrong scheme, or unknown token.
        """
        if not authorization:
            raise UnauthenticatedError("missing Authorization: Bearer <token>")
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise UnauthenticatedError("Authorization must be 'Bearer <token>'")
        token = token.strip()
        found: Grant | None = None
        for secret, grant in self._tokens.items():
            # Compare against every entry so timing does not reveal a prefix match.
            if hmac.compare_digest(secret.encode(), token.encode()):
                found = grant
        if found is None:
            raise UnauthenticatedError("unknown API token")
        return found
