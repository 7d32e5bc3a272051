"""The one error tree of graphsvc.

Every failure a caller can see is a :class:`GraphsvcError` with a stable ``code``.
The GraphQL layer copies ``code`` into ``extensions.code``; the CLI prints it
(``--json`` prints ``{"error": code, "message": ...}``).

::

    GraphsvcError                        (code: INTERNAL)
    ├── InvalidInputError                INVALID_INPUT
    ├── UnauthenticatedError             UNAUTHENTICATED
    ├── PermissionDeniedError            PERMISSION_DENIED
    ├── NotFoundError                    NOT_FOUND
    ├── CasConflictError                 CAS_CONFLICT
    ├── BudgetExceededError              BUDGET_EXCEEDED
    ├── DependencyInvalidError           DEPENDENCY_INVALID
    ├── TokenInvalidError                TOKEN_INVALID
    ├── IdempotencyConflictError         IDEMPOTENCY_CONFLICT
    ├── PurgePendingError                PURGE_PENDING
    ├── CursorExpiredError               CURSOR_EXPIRED
    ├── CursorInvalidError               CURSOR_INVALID
    ├── QueryTooComplexError             QUERY_TOO_COMPLEX
    ├── QueryTooDeepError                QUERY_TOO_DEEP
    ├── OperationNotFoundError           OPERATION_NOT_FOUND
    ├── OperationNameRequiredError       OPERATION_NAME_REQUIRED
    ├── BadRequestError                  BAD_REQUEST
    │   └── BatchNotSupportedError       BATCH_NOT_SUPPORTED
    ├── UnsupportedMediaTypeError        UNSUPPORTED_MEDIA_TYPE
    ├── MethodNotAllowedError            METHOD_NOT_ALLOWED
    ├── TierLockedError                  TIER_LOCKED
    ├── CuratorFailedError               CURATOR_FAILED
    ├── GovernanceRefusedError           GOVERNANCE_REFUSED
    ├── DepthExceededError               DEPTH_EXCEEDED
    ├── AvailabilityModelError           AVAILABILITY_MODEL_ERROR
    ├── SignerError                      SIGNER_ERROR
    ├── StoreError                       STORE_UNAVAILABLE
    ├── ServerUnavailableError           SERVER_UNAVAILABLE
    ├── ServerBusyError                  SERVER_BUSY
    ├── DeadlineExceededError            TIMEOUT
    ├── IndexRebuildError                INDEX_REBUILD_FAILED
    ├── CompactError                     COMPACT_FAILED
    ├── ModelLoadError                   MODEL_UNAVAILABLE
    ├── EmbeddingModelMismatchError      EMBEDDING_MODEL_MISMATCH
    ├── EntityExtractorMismatchError     ENTITY_EXTRACTOR_MISMATCH
    ├── ReplicaKeysMismatchError         REPLICA_KEYS_MISMATCH
    └── LauncherError                    NEO4J_LAUNCH_FAILED
        ├── JavaMissingError             JAVA_MISSING
        ├── MavenMissingError            MAVEN_MISSING
        ├── PortInUseError               PORT_IN_USE
        └── StartTimeoutError            NEO4J_START_TIMEOUT

Lower libraries' exceptions are mapped where they enter
(``raise StoreError(...) from exc``), never leaked as themselves.
"""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = [
    "AvailabilityModelError",
    "BadRequestError",
    "BatchNotSupportedError",
    "BudgetExceededError",
    "CasConflictError",
    "CompactError",
    "CuratorFailedError",
    "CursorExpiredError",
    "CursorInvalidError",
    "DeadlineExceededError",
    "DependencyInvalidError",
    "DepthExceededError",
    "EmbeddingModelMismatchError",
    "EntityExtractorMismatchError",
    "GovernanceRefusedError",
    "GraphsvcError",
    "IdempotencyConflictError",
    "IndexRebuildError",
    "InvalidInputError",
    "JavaMissingError",
    "LauncherError",
    "MavenMissingError",
    "MethodNotAllowedError",
    "ModelLoadError",
    "NotFoundError",
    "OperationNameRequiredError",
    "OperationNotFoundError",
    "PermissionDeniedError",
    "PortInUseError",
    "PurgePendingError",
    "QueryTooComplexError",
    "QueryTooDeepError",
    "ReplicaKeysMismatchError",
    "ServerBusyError",
    "ServerUnavailableError",
    "SignerError",
    "StartTimeoutError",
    "StoreError",
    "TierLockedError",
    "TokenInvalidError",
    "UnauthenticatedError",
    "UnsupportedMediaTypeError",
]


class GraphsvcError(Exception):
    """Base of every error graphsvc raises on purpose.

    Attributes:
        code: stable machine-readable code (never changes for a subclass).
        message: human-readable explanation.
        details: optional JSON-safe extra facts (e.g. the offending change id).
    """

    code: ClassVar[str] = "INTERNAL"

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] = dict(details or {})

    def to_dict(self) -> dict[str, Any]:
        """JSON form used by the CLI and the GraphQL error extensions."""
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details:
            out["details"] = self.details
        return out


class InvalidInputError(GraphsvcError):
    code = "INVALID_INPUT"


class UnauthenticatedError(GraphsvcError):
    code = "UNAUTHENTICATED"


class PermissionDeniedError(GraphsvcError):
    code = "PERMISSION_DENIED"


class NotFoundError(GraphsvcError):
    code = "NOT_FOUND"


class CasConflictError(GraphsvcError):
    code = "CAS_CONFLICT"


class BudgetExceededError(GraphsvcError):
    code = "BUDGET_EXCEEDED"


class DependencyInvalidError(GraphsvcError):
    code = "DEPENDENCY_INVALID"


class TokenInvalidError(GraphsvcError):
    code = "TOKEN_INVALID"


class IdempotencyConflictError(GraphsvcError):
    code = "IDEMPOTENCY_CONFLICT"


class PurgePendingError(GraphsvcError):
    code = "PURGE_PENDING"


class CursorExpiredError(GraphsvcError):
    code = "CURSOR_EXPIRED"


class CursorInvalidError(GraphsvcError):
    """A cursor that does not parse: not ``gcu1.<payload>.<mac>``, bad base64 or a
    payload that is no JSON object. A well-formed cursor whose MAC or claims do not
    match is CURSOR_EXPIRED (CUR-2): it may be an honest cursor of an earlier secret,
    query or index; a string that never was a cursor is a caller's mistake."""

    code = "CURSOR_INVALID"


class QueryTooComplexError(GraphsvcError):
    """A GraphQL operation's estimated cost is over ``max_query_cost`` (API-3)."""

    code = "QUERY_TOO_COMPLEX"


class QueryTooDeepError(GraphsvcError):
    """The operation nests fields (or fragments) deeper than the configured limit."""

    code = "QUERY_TOO_DEEP"


class OperationNotFoundError(GraphsvcError):
    """``operationName`` names no operation of the document."""

    code = "OPERATION_NOT_FOUND"


class OperationNameRequiredError(GraphsvcError):
    """The document holds several operations and the request names none of them."""

    code = "OPERATION_NAME_REQUIRED"


class BadRequestError(GraphsvcError):
    """The HTTP request is not a well-formed GraphQL-over-HTTP request (HTTP 400)."""

    code = "BAD_REQUEST"


class BatchNotSupportedError(BadRequestError):
    """A JSON array of operations: graphsvc runs one operation per request."""

    code = "BATCH_NOT_SUPPORTED"


class UnsupportedMediaTypeError(GraphsvcError):
    """A POST body that is not ``application/json`` (HTTP 415)."""

    code = "UNSUPPORTED_MEDIA_TYPE"


class MethodNotAllowedError(GraphsvcError):
    """A mutation over GET, or a method other than GET and POST (HTTP 405)."""

    code = "METHOD_NOT_ALLOWED"


class TierLockedError(GraphsvcError):
    code = "TIER_LOCKED"


class CuratorFailedError(GraphsvcError):
    code = "CURATOR_FAILED"


class GovernanceRefusedError(GraphsvcError):
    code = "GOVERNANCE_REFUSED"


class DepthExceededError(GraphsvcError):
    code = "DEPTH_EXCEEDED"


class AvailabilityModelError(GraphsvcError):
    code = "AVAILABILITY_MODEL_ERROR"


class SignerError(GraphsvcError):
    code = "SIGNER_ERROR"


class StoreError(GraphsvcError):
    code = "STORE_UNAVAILABLE"


class StoreCredentialsError(InvalidInputError):
    """Neo4j refused the configured user and password (or none were configured for a
    Neo4j that needs them): a configuration error, not an outage (exit 8)."""


class ServerUnavailableError(GraphsvcError):
    """The ``graphsvc serve`` a command was told to ask (``GRAPHSVC_SERVER_URL``,
    ``--server``) did not answer, or did not answer with GraphQL (docs/cli.md)."""

    code = "SERVER_UNAVAILABLE"


class ServerBusyError(GraphsvcError):
    """The front door of ``/graphql`` holds as many requests as it may
    (``GRAPHSVC_FRONT_DOOR_QUEUE``): answered 503 with ``Retry-After``; send again."""

    code = "SERVER_BUSY"


class DeadlineExceededError(GraphsvcError):
    """The request's time limit passed (checked before each Neo4j call, and enforced
    inside Neo4j as the transaction timeout)."""

    code = "TIMEOUT"


class IndexRebuildError(GraphsvcError):
    """A vector index rebuild did not bring the index online (``graphsvc index rebuild``)."""

    code = "INDEX_REBUILD_FAILED"


class CompactError(GraphsvcError):
    """``graphsvc compact`` could not rebuild the store (docs/erasure.md)."""

    code = "COMPACT_FAILED"


class ModelLoadError(GraphsvcError):
    code = "MODEL_UNAVAILABLE"


class EmbeddingModelMismatchError(GraphsvcError):
    """The database's embeddings come from another model than the configured one,
    or a ``graphsvc reembed`` is unfinished (the service refuses to start)."""

    code = "EMBEDDING_MODEL_MISMATCH"


class EntityExtractorMismatchError(GraphsvcError):
    """The database's entity index was built by another extractor than the configured
    one, or a rebuild to another is unfinished (the service refuses to start)."""

    code = "ENTITY_EXTRACTOR_MISMATCH"


class ReplicaKeysMismatchError(GraphsvcError):
    """Another live replica of this database has another MAC secret or signing key
    (``graphsvc serve`` refuses to start; docs/operations.md, "Replicas")."""

    code = "REPLICA_KEYS_MISMATCH"


class LauncherError(GraphsvcError):
    code = "NEO4J_LAUNCH_FAILED"


class JavaMissingError(LauncherError):
    code = "JAVA_MISSING"


class MavenMissingError(LauncherError):
    code = "MAVEN_MISSING"


class PortInUseError(LauncherError):
    code = "PORT_IN_USE"


class StartTimeoutError(LauncherError):
    code = "NEO4J_START_TIMEOUT"
