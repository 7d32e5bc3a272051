"""Replicas: several ``graphsvc serve`` processes on one Neo4j (docs/operations.md).

Any replica must accept what another one handed out: a cursor or an InputToken is
sealed with the MAC secret, a lineage edge is signed with the active signing key.
So every replica of a database is configured with the same secret file
(``GRAPHSVC_SECRET_FILE``) and key file (``GRAPHSVC_KEY_FILE``). A replica that was
given other files would answer, and its tokens would fail on its peers some of the
time, depending on which replica a load balancer picked: a fault that is hard to see.

So each serving process registers itself in Neo4j with a lease
(``:ServiceReplica {replicaId, fingerprint, expiresAt}``, renewed every third of
the lease) and the fingerprint of its keys (:func:`graphsvc.core.mac.key_fingerprint`:
keyed by the secret, so it reveals nothing of it). A process whose fingerprint
differs from that of a live replica refuses to start with REPLICA_KEYS_MISMATCH,
naming the other replica. A clean stop gives the lease back; after a crash the
lease runs out (``GRAPHSVC_REPLICA_LEASE_S``, 30 s by default), so rotating the keys
means stopping every replica, changing the files, and starting them again.

Only ``graphsvc serve`` registers: CLI commands and in-process services in tests
do not hand out tokens to other processes' clients.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from graphsvc.core.mac import key_fingerprint
from graphsvc.errors import ReplicaKeysMismatchError
from graphsvc.store import replicas as store
from graphsvc.store.connection import Database

__all__ = ["ReplicaLease"]

# A registration whose lease ran out this long ago is deleted by the next register.
_FORGET_S = 86_400.0


@dataclass
class ReplicaLease:
    """This process's registration as a replica of ``db``.

    Args:
        db: the database served.
        secret: the MAC secret.
        signing_key_id: the active signing key's id.
        clock: epoch seconds.
        lease_s: how long a registration holds without renewal.
    """

    db: Database
    secret: bytes
    signing_key_id: str
    clock: Callable[[], float]
    lease_s: float = 30.0

    def __post_init__(self) -> None:
        self._me = store.Registration(
            replica_id=uuid.uuid4().hex,
            fingerprint=key_fingerprint(self.secret, self.signing_key_id),
            host=socket.gethostname(),
            pid=os.getpid(),
            lease_s=self.lease_s,
            forget_s=_FORGET_S,
        )

    @property
    def replica_id(self) -> str:
        return self._me.replica_id

    @property
    def fingerprint(self) -> str:
        return self._me.fingerprint

    @property
    def renew_every_s(self) -> float:
        """How often :meth:`renew` must run for the lease never to lapse."""
        return self.lease_s / 3

    def acquire(self) -> None:
        """Register, or refuse when a live replica has other keys.

        Raises:
            ReplicaKeysMismatchError: another live replica's fingerprint differs.
            StoreError: Neo4j is not reachable.
        """
        clashing = store.register(self.db, self._me, self.clock())
        if not clashing:
            return
        other = clashing[0]
        raise ReplicaKeysMismatchError(
            f"another graphsvc replica of this database (on {other.host}, pid {other.pid}) "
            "uses another MAC secret or signing key: configure the same "
            "GRAPHSVC_SECRET_FILE and GRAPHSVC_KEY_FILE on every replica. To rotate "
            "them, stop every replica first (a crashed replica's registration runs out "
            f"after {self.lease_s:g} s)",
            details={
                "replicas": [
                    {"host": o.host, "pid": o.pid, "fingerprint": o.fingerprint} for o in clashing
                ],
                "fingerprint": self._me.fingerprint,
            },
        )

    def renew(self) -> None:
        """Extend the lease (run every :attr:`renew_every_s`)."""
        store.renew(self.db, self._me, self.clock())

    def release(self) -> None:
        """Give the lease back on a clean stop."""
        store.release(self.db, self._me.replica_id)
