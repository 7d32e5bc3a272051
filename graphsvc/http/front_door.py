"""The front door of ``/graphql``: every request is checked here before strawberry runs.

First, on the event loop and in time that does not grow with the request, **who
asks**: a request that carries ``Authorization`` must carry a known token (401 at
once, before its body is decoded); one without a token may carry at most
``anonymous_max_bytes`` (body and query string, a few KiB: ``health`` and
introspection are all it can run) or it is 401 before anything is decoded or lexed.
Then the pool's queue: at most ``queue`` requests are held (running or waiting), those
without a token at most half of them, and one more is 503 ``SERVER_BUSY`` with
``Retry-After``. So no client without a token can keep the threads from the callers
who have one.

The rest is taken apart in this order, each step linear in its size, the whole of
it on a small thread pool of its own so that nothing a client sends can hold the
event loop (``/healthz`` and the other requests keep being answered; a small request
whose document was parsed and validated before is the exception, see below):

1. **The HTTP envelope** (GraphQL-over-HTTP): GET or POST only (405); a POST body
   is ``application/json`` (415), UTF-8 (400), JSON (400), one object, not a batch
   array (400), nested at most ``max_json_depth`` deep (400), with a string
   ``query``, an object or null ``variables`` and ``extensions``, a string or null
   ``operationName`` (400). A GET carries the same as query parameters and may only
   run a query (405). GET without ``query`` from a browser gets the GraphiQL page.
2. **Well-formed text**: every string of the request (the document, the operation
   name, every variable, keys included) is well-formed Unicode: a lone surrogate
   (``"\\ud800"``) is INVALID_INPUT here, so no resolver ever sees one. String
   literals inside the document are checked by graphql-core's lexer.
3. **The document**: tokens and nesting counted before the parser runs, the
   operation chosen by name (:mod:`graphsvc.api.document_limits`).
4. **Authentication before anything that grows with the document**: an operation
   that selects a root field other than ``health`` and introspection needs a known
   token (401) before it is measured or validated.
5. **Measure** (depth, aliases, fields, cost: linear, every fragment once), then
   graphql-core's **validation**; the parsed document and the validation errors go
   to strawberry through the request scope (:class:`DocumentGate`), which neither
   parses nor validates again.

A document's parse and validation depend on its text alone, so the last
``cache_size`` documents (of at most ``_CACHE_MAX_CHARS`` characters) keep theirs:
an agent that sends the same operation again skips both. Only a request with a known
token adds to the cache (one without may use what is there), so a client without a
token cannot evict the documents of those with one. The operation choice, the
token, and the measures (which read the variables) run for every request. A small
request (``inline_bytes``) whose document is kept is checked on the event loop
itself: nothing in it grows beyond those few KiB, and it does not wait for a thread.

A refusal is answered as GraphQL JSON with a stable ``extensions.code``, with the
HTTP status GraphQL-over-HTTP gives it for ``application/json``: 400 for a request
that is not well-formed, 401, 405, 415, and 200 for errors of a well-formed request
(a document that does not parse, validate, or fit the limits); 503 for SERVER_BUSY.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import threading
from collections import OrderedDict
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from graphql import DocumentNode, GraphQLError, GraphQLSchema, OperationType, validate

from graphsvc.api.document_limits import (
    PUBLIC_ROOT_FIELDS,
    DocumentLimits,
    Prepared,
    measure,
    parse_document,
    root_field_names,
    select_operation,
    validation_rules,
)
from graphsvc.core.input_bounds import MESSAGE_CHARS, excerpt
from graphsvc.errors import (
    BadRequestError,
    BatchNotSupportedError,
    GraphsvcError,
    InvalidInputError,
    MethodNotAllowedError,
    ServerBusyError,
    UnauthenticatedError,
    UnsupportedMediaTypeError,
)
from graphsvc.inputs.text_input import check_json_values
from graphsvc.keys.auth import AuthTable
from graphsvc.telemetry.stages import stage, timed

__all__ = ["FrontDoor", "Refusal", "status_of"]

VALIDATE_THREAD_PREFIX = "graphsvc-validate"
# What the envelope answers for a browser's GET without a query: GraphiQL's page.
_IDE = object()
_CACHE_MAX_CHARS = 16_384
# A request without a token may carry at most this many bytes (body and query
# string) before anything is decoded (GRAPHSVC_ANONYMOUS_MAX_BYTES).
ANONYMOUS_MAX_BYTES = 16_384
# Requests the pool may hold, running or waiting (GRAPHSVC_FRONT_DOOR_QUEUE).
QUEUE = 64
# A request of at most this many bytes (body, query string and Authorization header)
# whose document is kept is checked on the event loop: what is left to do (decode a
# few KiB of JSON, look the document up, measure it with its variables, check the
# token) costs less than the hand-over to a thread, which under load waits for the
# GIL behind every resolver thread, `{ health }` included (GRAPHSVC_FRONT_DOOR_INLINE_BYTES).
INLINE_BYTES = 4096


class _NotKept:
    """``_admit``'s answer, when told to check only a kept document, for one that is
    not kept (the request goes to the pool)."""


_NOT_KEPT = _NotKept()

# HTTP status of a refusal (GraphQL-over-HTTP, application/json); others are 200.
_STATUS = {
    "BAD_REQUEST": 400,
    "BATCH_NOT_SUPPORTED": 400,
    "UNAUTHENTICATED": 401,
    "METHOD_NOT_ALLOWED": 405,
    "UNSUPPORTED_MEDIA_TYPE": 415,
    "SERVER_BUSY": 503,
}


def status_of(code: str) -> int:
    """The HTTP status the front door answers a refusal with this code."""
    return _STATUS.get(code, 200)


@dataclass(frozen=True)
class Refusal:
    """A request answered at the front door: status, GraphQL errors, extra headers."""

    status: int
    errors: list[dict[str, Any]]
    codes: list[str]
    operation: str = "unknown"
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)


def _error_json(error: GraphsvcError) -> dict[str, Any]:
    ext: dict[str, Any] = {"code": error.code}
    if error.details:
        ext["details"] = error.details
    return {"message": error.message, "extensions": ext}


def _refuse(error: GraphsvcError, operation: str = "unknown") -> Refusal:
    headers: list[tuple[bytes, bytes]] = []
    if isinstance(error, UnauthenticatedError):
        headers.append((b"www-authenticate", b"Bearer"))
    if isinstance(error, MethodNotAllowedError):
        allow = str(error.details.get("allow", "GET, POST"))
        headers.append((b"allow", allow.encode()))
    return Refusal(status_of(error.code), [_error_json(error)], [error.code], operation, headers)


def _media_type(headers: Mapping[bytes, bytes]) -> tuple[str, dict[str, str]]:
    raw = headers.get(b"content-type", b"").decode("latin-1")
    kind, _, rest = raw.partition(";")
    params = {}
    for part in rest.split(";"):
        key, _, value = part.strip().partition("=")
        if key:
            params[key.lower()] = value.strip().strip('"').lower()
    return kind.strip().lower(), params


def _json(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except RecursionError as exc:
        raise BadRequestError(f"{what} is nested too deeply") from exc
    except ValueError as exc:
        raise BadRequestError(f"{what} is not valid JSON: {exc}") from exc


@dataclass(frozen=True)
class _Request:
    query: str
    variables: dict[str, Any]
    operation_name: str | None


def _fields(data: Any) -> _Request:
    if isinstance(data, list):
        raise BatchNotSupportedError(
            "a JSON array of operations is not supported: send one operation per request"
        )
    if not isinstance(data, dict):
        raise BadRequestError("the request body must be a JSON object")
    query = data.get("query")
    if query is None:
        raise BadRequestError("the request has no GraphQL query (`query`)")
    if not isinstance(query, str):
        raise BadRequestError("`query` must be a string")
    variables = data.get("variables")
    if variables is not None and not isinstance(variables, dict):
        raise BadRequestError("`variables` must be an object or null")
    name = data.get("operationName")
    if name is not None and not isinstance(name, str):
        raise BadRequestError("`operationName` must be a string or null")
    extensions = data.get("extensions")
    if extensions is not None and not isinstance(extensions, dict):
        raise BadRequestError("`extensions` must be an object or null")
    return _Request(query, variables or {}, name or None)


def _from_get(query_string: bytes) -> dict[str, Any] | None:
    try:
        pairs = parse_qsl(query_string.decode("utf-8"), keep_blank_values=True, errors="strict")
    except UnicodeDecodeError as exc:
        raise BadRequestError("the query string is not UTF-8") from exc
    params: dict[str, str] = {}
    for key, value in pairs:
        params.setdefault(key, value)
    if "query" not in params:
        return None
    data: dict[str, Any] = {"query": params["query"]}
    for key in ("variables", "extensions"):
        if params.get(key):
            data[key] = _json(params[key], f"the `{key}` parameter")
    if params.get("operationName"):
        data["operationName"] = params["operationName"]
    return data


def _label(schema: GraphQLSchema, operation: OperationType, names: frozenset[str]) -> str:
    """A bounded metrics label: the root fields, as graphsvc.api.errors names them."""
    root = schema.get_root_type(operation)
    label = set()
    for name in names:
        if name.startswith("__"):
            label.add("introspection")
        elif root is not None and name in root.fields:
            label.add(name)
        else:
            label.add("unknown")
    if not label:
        return "unknown"
    return "multi" if len(label) > 3 else "+".join(sorted(label))


class FrontDoor:
    """Checks every ``/graphql`` request (see the module doc)."""

    def __init__(
        self,
        schema: GraphQLSchema,
        auth: AuthTable | None,
        limits: DocumentLimits,
        *,
        max_json_depth: int,
        threads: int = 2,
        cache_size: int = 256,
        inline_bytes: int = INLINE_BYTES,
        anonymous_max_bytes: int = ANONYMOUS_MAX_BYTES,
        queue: int = QUEUE,
        retry_after_s: int = 2,
    ) -> None:
        self._schema = schema
        self._auth = auth
        self._limits = limits
        self._max_json_depth = max_json_depth
        self._rules = validation_rules()
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix=VALIDATE_THREAD_PREFIX)
        self._cache: OrderedDict[str, tuple[DocumentNode, tuple[GraphQLError, ...]]] = OrderedDict()
        self._cache_size = cache_size
        self._cache_lock = threading.Lock()
        self.cache_hits = 0
        self._inline_bytes = inline_bytes
        self.inline = 0  # requests checked on the event loop (small, kept document)
        self._anonymous_max_bytes = anonymous_max_bytes
        self._queue = queue
        self._retry_after = str(retry_after_s).encode()
        # Requests handed to the pool and not back yet (all, and those without a
        # token); only the event loop changes them.
        self._held = 0
        self._held_anonymous = 0

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    async def admit(
        self, method: str, headers: Mapping[bytes, bytes], query_string: bytes, body: bytes
    ) -> Refusal | Prepared | None:
        """Check one request: a refusal to answer, a prepared document, or None.

        None means the request is not an operation (GraphiQL's page): strawberry
        serves it as it is.
        """
        refused = self.before_body(headers, len(body) + len(query_string))
        if refused is not None:
            return refused
        authorization = headers.get(b"authorization")
        known = authorization is not None
        size = len(body) + len(query_string) + len(authorization or b"")
        if size <= self._inline_bytes:
            with stage("front_door"):
                answer = self._admit(
                    method, headers, query_string, body, kept_only=True, known=known
                )
            if not isinstance(answer, _NotKept):
                self.inline += 1
                return answer
        if self._held >= self._queue or (not known and self._held_anonymous >= self._queue // 2):
            return self._busy()
        self._held += 1
        self._held_anonymous += not known
        try:
            loop = asyncio.get_running_loop()
            call = contextvars.copy_context().run
            admit = timed("front_door", self._admit)
            checked = await loop.run_in_executor(
                self._pool, call, admit, method, headers, query_string, body, False, known
            )
        finally:
            self._held -= 1
            self._held_anonymous -= not known
        assert not isinstance(checked, _NotKept)  # only asked for with kept_only
        return checked

    def before_body(self, headers: Mapping[bytes, bytes], size: int) -> Refusal | None:
        """The refusal of a request by who asks, or None: an unknown token, or no token
        and ``size`` (the body's announced or read length plus the query string) over
        ``anonymous_max_bytes``. Needs only the head: the app asks before it reads the
        body (:meth:`admit` asks again with the body's read length).
        """
        if headers.get(b"authorization") is not None:
            try:  # a known token or 401 now, whatever the request holds
                self._authenticate(headers)
            except GraphsvcError as exc:
                return _refuse(exc)
        elif size > self._anonymous_max_bytes:
            return _refuse(
                UnauthenticatedError(
                    f"a request without a token may carry at most {self._anonymous_max_bytes} "
                    "bytes: send Authorization: Bearer <token>",
                    details={"anonymousMaxBytes": self._anonymous_max_bytes},
                )
            )
        return None

    def _busy(self) -> Refusal:
        refusal = _refuse(
            ServerBusyError(
                "the server is checking as many requests as it may: send again later",
                details={"queue": self._queue},
            )
        )
        refusal.headers.append((b"retry-after", self._retry_after))
        return refusal

    def _admit(
        self,
        method: str,
        headers: Mapping[bytes, bytes],
        query_string: bytes,
        body: bytes,
        kept_only: bool = False,
        known: bool = False,
    ) -> Refusal | Prepared | _NotKept | None:
        try:
            data = self._envelope(method, headers, query_string, body)
            if data is _IDE:
                return None
            check_json_values(data, self._max_json_depth, too_deep=BadRequestError)
            request = _fields(data)
        except GraphsvcError as exc:
            return _refuse(exc)
        cached = self._cached(request.query)
        if cached is None and kept_only:
            return _NOT_KEPT
        if cached is not None:
            document, errors = cached
        else:
            try:
                document = parse_document(request.query, self._limits)
            except GraphsvcError as exc:
                return _refuse(exc)
            except GraphQLError as exc:
                formatted = dict(exc.formatted)
                formatted["message"] = excerpt(exc.message, MESSAGE_CHARS)  # quotes a token
                formatted["extensions"] = {"code": "INVALID_INPUT"}
                return Refusal(200, [formatted], ["INVALID_INPUT"])
            except RecursionError:
                # Bounded by the nesting limit; kept so that no parse can answer 500.
                return _refuse(InvalidInputError("the document is nested too deeply"))
            errors = None
        try:
            op = select_operation(document, request.operation_name)
        except GraphsvcError as exc:
            return _refuse(exc)
        names = root_field_names(document, op)
        label = _label(self._schema, op.operation, names)
        try:
            if method == "GET" and op.operation != OperationType.QUERY:
                raise MethodNotAllowedError(
                    f"a {op.operation.value} is sent with POST, not GET",
                    details={"allow": "POST"},
                )
            if not known and not names <= PUBLIC_ROOT_FIELDS:
                self._authenticate(headers)
            measure(self._schema, document, op, request.variables, self._limits)
        except GraphsvcError as exc:
            return _refuse(exc, label)
        if errors is None:
            errors = tuple(validate(self._schema, document, self._rules))
            if known:  # without a token: use the cache, never evict from it
                self._keep(request.query, document, errors)
        return Prepared(request.query, document, errors)

    def _cached(self, query: str) -> tuple[DocumentNode, tuple[GraphQLError, ...]] | None:
        with self._cache_lock:
            hit = self._cache.get(query)
            if hit is not None:
                self._cache.move_to_end(query)
                self.cache_hits += 1
            return hit

    def _keep(self, query: str, document: DocumentNode, errors: tuple[GraphQLError, ...]) -> None:
        if len(query) > _CACHE_MAX_CHARS or self._cache_size <= 0:
            return
        with self._cache_lock:
            self._cache[query] = (document, errors)
            self._cache.move_to_end(query)
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)

    def _envelope(
        self, method: str, headers: Mapping[bytes, bytes], query_string: bytes, body: bytes
    ) -> Any:
        if method == "GET":
            data = _from_get(query_string)
            if data is None:
                accept = headers.get(b"accept", b"").decode("latin-1")
                if "text/html" in accept or "*/*" in accept:
                    return _IDE
                raise BadRequestError("the request has no GraphQL query (`query` parameter)")
            return data
        if method != "POST":
            raise MethodNotAllowedError(
                "GraphQL is served over GET and POST", details={"allow": "GET, POST"}
            )
        kind, params = _media_type(headers)
        if kind != "application/json":
            raise UnsupportedMediaTypeError(
                "send the operation as application/json", details={"contentType": kind or None}
            )
        if params.get("charset", "utf-8") not in {"utf-8", "utf8"}:
            raise UnsupportedMediaTypeError(
                "the body must be UTF-8", details={"charset": params["charset"]}
            )
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BadRequestError("the request body is not UTF-8") from exc
        return _json(text, "the request body")

    def _authenticate(self, headers: Mapping[bytes, bytes]) -> None:
        if self._auth is None:
            raise UnauthenticatedError("no API tokens are configured (set GRAPHSVC_AUTH_FILE)")
        authorization = headers.get(b"authorization")
        self._auth.grant_for(authorization.decode("latin-1") if authorization else None)
