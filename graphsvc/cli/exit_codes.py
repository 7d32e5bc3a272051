"""The one exit-code table of the ``graphsvc`` command line (docs/cli.md).

Every command exits with the code of what happened: ``0`` when it did what was
asked; for an error, the code of its stable error code (:data:`ERROR_EXITS`, the same
for every command); a few commands also report a *state* with a code of their own
(:data:`OUTCOME_EXITS`: ``atomise`` had nothing to do, ``verify-bundle`` found a
failing check, ``erasure status`` has purges waiting, ``neo4j status`` finds nothing
running). The numbers 0–7 are SPEC ATM-8's for ``atomise``; ``verify-bundle``'s 2 is
SPEC API-7's; usage errors are argparse's 2.
"""

from __future__ import annotations

from typing import Final

from graphsvc.errors import GraphsvcError

__all__ = [
    "ERROR_EXITS",
    "EXIT_FAILED",
    "EXIT_INFORMATIONAL",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_REFUSED",
    "EXIT_USAGE",
    "OUTCOME_EXITS",
    "exit_code_for",
]

EXIT_OK: Final = 0
EXIT_INFORMATIONAL: Final = 1
EXIT_USAGE: Final = 2
EXIT_FAILED: Final = 6
EXIT_REFUSED: Final = 8
EXIT_INTERRUPTED: Final = 130

ERROR_EXITS: Final[dict[str, int]] = {
    # ATM-8's own codes, for every command.
    "NOT_FOUND": 2,
    "TIER_LOCKED": 3,
    "CURATOR_FAILED": 4,
    "GOVERNANCE_REFUSED": 5,
    "DEPTH_EXCEEDED": 7,
    # 6: graphsvc, its database or what it runs on failed; the request may succeed later.
    "STORE_UNAVAILABLE": EXIT_FAILED,
    "SERVER_UNAVAILABLE": EXIT_FAILED,
    "SERVER_BUSY": EXIT_FAILED,
    "SIGNER_ERROR": EXIT_FAILED,
    "TIMEOUT": EXIT_FAILED,
    "MODEL_UNAVAILABLE": EXIT_FAILED,
    "INDEX_REBUILD_FAILED": EXIT_FAILED,
    "COMPACT_FAILED": EXIT_FAILED,
    "NEO4J_LAUNCH_FAILED": EXIT_FAILED,
    "JAVA_MISSING": EXIT_FAILED,
    "MAVEN_MISSING": EXIT_FAILED,
    "PORT_IN_USE": EXIT_FAILED,
    "NEO4J_START_TIMEOUT": EXIT_FAILED,
    "INTERNAL": EXIT_FAILED,
    # 8: the request was refused as it stands (fix it, or the state it conflicts with).
    "INVALID_INPUT": EXIT_REFUSED,
    "UNAUTHENTICATED": EXIT_REFUSED,
    "PERMISSION_DENIED": EXIT_REFUSED,
    "CAS_CONFLICT": EXIT_REFUSED,
    "BUDGET_EXCEEDED": EXIT_REFUSED,
    "DEPENDENCY_INVALID": EXIT_REFUSED,
    "TOKEN_INVALID": EXIT_REFUSED,
    "IDEMPOTENCY_CONFLICT": EXIT_REFUSED,
    "PURGE_PENDING": EXIT_REFUSED,
    "CURSOR_EXPIRED": EXIT_REFUSED,
    "CURSOR_INVALID": EXIT_REFUSED,
    "QUERY_TOO_COMPLEX": EXIT_REFUSED,
    "QUERY_TOO_DEEP": EXIT_REFUSED,
    "OPERATION_NOT_FOUND": EXIT_REFUSED,
    "OPERATION_NAME_REQUIRED": EXIT_REFUSED,
    "BAD_REQUEST": EXIT_REFUSED,
    "BATCH_NOT_SUPPORTED": EXIT_REFUSED,
    "UNSUPPORTED_MEDIA_TYPE": EXIT_REFUSED,
    "METHOD_NOT_ALLOWED": EXIT_REFUSED,
    "AVAILABILITY_MODEL_ERROR": EXIT_REFUSED,
    "REPLICA_KEYS_MISMATCH": EXIT_REFUSED,
    "EMBEDDING_MODEL_MISMATCH": EXIT_REFUSED,
    "ENTITY_EXTRACTOR_MISMATCH": EXIT_REFUSED,
}

#: Codes that report a state, not an error: (command, code) → meaning.
OUTCOME_EXITS: Final[dict[tuple[str, int], str]] = {
    ("atomise", EXIT_INFORMATIONAL): "nothing to do: already atomised, or the source is too small",
    ("reembed", EXIT_INFORMATIONAL): "nothing to do: the embeddings already come from that model",
    ("verify-bundle", 2): "a check of the bundle failed",
    ("erasure status", 3): "finished purges await `graphsvc compact`",
    ("erasure status", 4): "a pending purge is past its due time",
    ("erasure status", 5): "--scan found a needle on disk",
    ("neo4j status", 3): "the managed Neo4j is not running",
}


def exit_code_for(error: GraphsvcError) -> int:
    """The exit code of ``error``: its code's entry in :data:`ERROR_EXITS` (6 if none)."""
    return ERROR_EXITS.get(error.code, EXIT_FAILED)
