"""Who is calling: the Binding of SPEC §1 (pure data)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["ACTOR_KINDS", "ActorKind", "Binding"]

ActorKind = Literal["agent", "human", "input-adapter"]
ACTOR_KINDS: tuple[ActorKind, ...] = ("agent", "human", "input-adapter")


@dataclass(frozen=True)
class Binding:
    """``{subject, policy, actor: {kind, id}, authGeneration}`` plus the purge right."""

    subject: str
    policy: str
    actor_kind: ActorKind
    actor_id: str
    auth_generation: int = 1
    may_purge: bool = False

    def scope(self) -> dict[str, object]:
        """The fields a token or idempotency key is bound to."""
        return {
            "subject": self.subject,
            "policy": self.policy,
            "actorKind": self.actor_kind,
            "actorId": self.actor_id,
            "authGeneration": self.auth_generation,
        }
