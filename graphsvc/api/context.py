"""Per-request context: the service and the caller's Binding (resolved lazily).

Every resolver gets its Binding through :func:`binding_of`, which is also where a
token's capabilities are enforced (``can`` in the auth file, see
:mod:`graphsvc.keys.auth`): the field being resolved names the capability it needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from graphql import OperationType
from strawberry.types import Info

from graphsvc.core.binding import Binding
from graphsvc.errors import UnauthenticatedError
from graphsvc.keys.auth import AuthTable, Grant, required_capability
from graphsvc.service import Service

__all__ = ["Context", "binding_of", "service_of"]


@dataclass
class Context:
    service: Service
    auth: AuthTable | None
    authorization: str | None
    _grant: Grant | None = field(default=None, init=False)

    def grant(self) -> Grant:
        """The caller's Grant; no token → no data (API-2).

        Raises:
            UnauthenticatedError: missing or unknown token, or no auth file configured.
        """
        if self._grant is None:
            if self.auth is None:
                raise UnauthenticatedError("no API tokens are configured (set GRAPHSVC_AUTH_FILE)")
            self._grant = self.auth.grant_for(self.authorization)
        return self._grant

    def binding(self, capability: str = "read") -> Binding:
        """The caller's Binding, if the token holds ``capability``.

        Raises:
            UnauthenticatedError: missing or unknown token, or no auth file configured.
            PermissionDeniedError: the token lacks ``capability``.
        """
        return self.grant().require(capability)


def service_of(info: Info) -> Service:
    ctx: Context = info.context
    return ctx.service


def binding_of(info: Info) -> Binding:
    """The caller's Binding for the field being resolved (its capability checked).

    Raises:
        UnauthenticatedError: missing or unknown token.
        PermissionDeniedError: the token may not run this field.
    """
    ctx: Context = info.context
    mutation = info.operation.operation == OperationType.MUTATION
    return ctx.binding(required_capability(info.field_name, mutation=mutation))
