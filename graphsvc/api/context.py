"""Per-request context: the service and the caller's Binding (resolved lazily)."""

from __future__ import annotations

from dataclasses import dataclass, field

from strawberry.types import Info

from graphsvc.auth import AuthTable
from graphsvc.core.binding import Binding
from graphsvc.errors import UnauthenticatedError
from graphsvc.service import Service

__all__ = ["Context", "binding_of", "service_of"]


@dataclass
class Context:
    service: Service
    auth: AuthTable | None
    authorization: str | None
    _binding: Binding | None = field(default=None, init=False)

    def binding(self) -> Binding:
        """The caller's Binding; no token → no data (API-2).

        Raises:
            UnauthenticatedError: missing or unknown token, or no auth file configured.
        """
        if self._binding is None:
            if self.auth is None:
                raise UnauthenticatedError("no API tokens are configured (set GRAPHSVC_AUTH_FILE)")
            self._binding = self.auth.binding_for(self.authorization)
        return self._binding


def service_of(info: Info) -> Service:
    ctx: Context = info.context
    return ctx.service


def binding_of(info: Info) -> Binding:
    ctx: Context = info.context
    return ctx.binding()
