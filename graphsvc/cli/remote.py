"""``search``, ``read`` and ``inspect`` through a running ``graphsvc serve`` (docs/cli.md).

When a server is configured (``GRAPHSVC_SERVER_URL``, or ``--server URL``), these
three commands send their GraphQL operation to it over HTTP instead of opening the
database: the process then imports only the standard library and this package's
light modules (no Neo4j driver, tokenizer, NumPy, SciPy or model), which is what
makes them answer in well under a second. The answer is turned back into the
``to_json`` form the direct path prints, so the human and ``--json`` output, the
warnings and the exit codes are the same.

The token is ``GRAPHSVC_SERVER_TOKEN``, else the entry of the auth file
(``GRAPHSVC_AUTH_FILE``, else ``serve``'s demo file) whose subject, policy and actor
kind are the command's binding flags (the one with the same actor id first). The
server acts with the token's binding; when the auth file names the token, a
``--subject`` other than its subject is refused (``INVALID_INPUT``).

:func:`run_operation` takes the path: one request value
(:mod:`graphsvc.core.requests`) is either the GraphQL operation's variables or the
argument of the Service call.

No fallback: a configured server that does not answer is ``SERVER_UNAVAILABLE``
(exit 6), not a silent switch to the slower direct path, which might open another
database than the one the server serves. ``--server ''`` opens the database.

With nothing configured, a running ``serve`` of the same database found through the
state dir (:mod:`graphsvc.cli.discovery`) is used the same way; when it does not hold
(no token for the binding flags, no answer) the command opens the database, which is
the same data. ``--verbose`` says on stderr which path a command took.
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

import graphsvc.errors as errors
from graphsvc.cli.common import (
    binding_from_args,
    connected_service,
    empty_subject_warnings,
    no_atoms_warning,
    warn,
)
from graphsvc.cli.discovery import find_serve
from graphsvc.errors import (
    GraphsvcError,
    InvalidInputError,
    ServerUnavailableError,
    UnauthenticatedError,
)
from graphsvc.settings import Settings

if TYPE_CHECKING:  # the direct path's types; the HTTP path imports no Service
    from graphsvc.core.binding import Binding
    from graphsvc.service import Service

__all__ = [
    "INSPECT",
    "INSPECT_OPERATION",
    "READ",
    "READ_OPERATION",
    "SEARCH",
    "SEARCH_OPERATION",
    "Operation",
    "Server",
    "add_server_arg",
    "atom_json",
    "inspect_json",
    "read_json",
    "run_operation",
    "search_json",
    "server_for",
    "subject_warnings",
]

_LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def add_server_arg(p: argparse.ArgumentParser) -> None:
    """``--server URL``: ask that ``graphsvc serve`` (default ``GRAPHSVC_SERVER_URL``)."""
    p.add_argument(
        "--server",
        metavar="URL",
        default=None,
        help="ask the graphsvc serve at URL over HTTP (default GRAPHSVC_SERVER_URL, else "
        "a running serve of the same database found in the state dir; '' opens the database)",
    )
    p.add_argument(
        "--verbose",
        action="store_true",
        help="say on stderr which server (or the database itself) answered",
    )


def _say(args: argparse.Namespace, text: str) -> None:
    if getattr(args, "verbose", False):
        print(f"graphsvc: {text}", file=sys.stderr)


@dataclass(frozen=True)
class Server:
    """A running ``graphsvc serve``: its GraphQL endpoint and the token to send."""

    endpoint: str
    token: str
    timeout_s: float
    discovered: bool = False

    def query(self, document: str, variables: dict[str, Any]) -> dict[str, Any]:
        """The ``data`` of one GraphQL operation.

        Raises:
            ServerUnavailableError: no answer, or one that is not GraphQL JSON.
            GraphsvcError: the error the server answered, by its ``extensions.code``.
        """
        body = json.dumps({"query": document, "variables": variables}).encode()
        request = urllib.request.Request(
            self.endpoint,
            data=body,
            method="POST",
            headers={
                "Content-Type": "application/json",
                "Accept": "application/json",
                "Authorization": f"Bearer {self.token}",
            },
        )
        try:
            with _opener(self.endpoint).open(request, timeout=self.timeout_s) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:  # 4xx/5xx still carry GraphQL JSON
            raw = exc.read()
            status = exc.code
        except OSError as exc:  # refused, unresolvable, timed out (URLError is one)
            reason = getattr(exc, "reason", exc)
            raise ServerUnavailableError(
                f"graphsvc serve at {self.endpoint} did not answer ({reason}); "
                "start it, or pass --server '' to open the database",
                details={"server": self.endpoint},
            ) from None
        else:
            status = 200
        try:
            doc = json.loads(raw)
        except ValueError:
            doc = None
        if not isinstance(doc, dict) or not ("data" in doc or "errors" in doc):
            raise ServerUnavailableError(
                f"{self.endpoint} answered HTTP {status} without GraphQL JSON: "
                "is it a graphsvc serve?",
                details={"server": self.endpoint},
            )
        if doc.get("errors"):
            raise _error(doc["errors"][0])
        data = doc.get("data")
        if not isinstance(data, dict):
            raise ServerUnavailableError(f"{self.endpoint} answered no data")
        return data


def _opener(endpoint: str) -> urllib.request.OpenerDirector:
    """urllib's opener; without the environment's proxies for a loopback server."""
    if urlsplit(endpoint).hostname in _LOOPBACK:
        return urllib.request.build_opener(urllib.request.ProxyHandler({}))
    return urllib.request.build_opener()


def _error_classes() -> dict[str, type[GraphsvcError]]:
    out: dict[str, type[GraphsvcError]] = {}
    todo: list[type[GraphsvcError]] = [errors.GraphsvcError]
    while todo:
        cls = todo.pop()
        out.setdefault(cls.code, cls)
        todo.extend(cls.__subclasses__())
    return out


def _error(entry: Any) -> GraphsvcError:
    """The GraphsvcError of one GraphQL error: its class by ``extensions.code``."""
    entry = entry if isinstance(entry, dict) else {}
    ext = entry.get("extensions") or {}
    code = str(ext.get("code", "INTERNAL"))
    message = str(entry.get("message", "")) or code
    details = {k: v for k, v in ext.items() if k != "code"} if isinstance(ext, dict) else {}
    cls = _error_classes().get(code)
    if cls is None:  # a code of the server's HTTP layer only (e.g. REQUEST_TOO_LARGE)
        return GraphsvcError(f"{code}: {message}", details=details)
    return cls(message, details=details)


def server_for(args: argparse.Namespace, settings: Settings) -> Server | None:
    """The server to ask, or None for the direct path (no server configured).

    Raises:
        InvalidInputError: the URL is not http(s), or ``--subject`` is not the token's.
        UnauthenticatedError: no token for the binding flags.
    """
    url = settings.client.server_url if args.server is None else args.server
    url = url.strip()
    if not url:
        return _discovered(args, settings) if args.server is None else None
    parts = urlsplit(url)
    if parts.scheme not in {"http", "https"} or not parts.netloc:
        raise InvalidInputError(f"--server {url!r}: not an http:// or https:// URL")
    endpoint = url if parts.path.rstrip("/") else url.rstrip("/") + "/graphql"
    token = _token(args, settings)
    return Server(endpoint, token, settings.http.request_timeout_s + 5.0)


def _discovered(args: argparse.Namespace, settings: Settings) -> Server | None:
    """The running serve of this database recorded in the state dir, when the binding
    flags have a token for it (the same rules as a configured server); else None."""
    found = find_serve(settings)
    if found is None:
        _say(args, "no running graphsvc serve of this database: opening the database")
        return None
    try:
        token = _token(args, settings)
    except (UnauthenticatedError, InvalidInputError) as exc:
        _say(args, f"not using the graphsvc serve at {found.url} ({exc}): opening the database")
        return None
    endpoint = found.url.rstrip("/") + "/graphql"
    return Server(endpoint, token, settings.http.request_timeout_s + 5.0, discovered=True)


def _auth_path(settings: Settings) -> Path:
    from graphsvc.cli.serve import demo_auth_path

    return Path(settings.paths.auth_file) if settings.paths.auth_file else demo_auth_path(settings)


def _entries(path: Path) -> dict[str, dict[str, Any]]:
    """The auth file's ``tokens`` (validated by the server, not here), or none."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    tokens = raw.get("tokens") if isinstance(raw, dict) else None
    if not isinstance(tokens, dict):
        return {}
    return {k: v for k, v in tokens.items() if isinstance(v, dict)}


def _token(args: argparse.Namespace, settings: Settings) -> str:
    path = _auth_path(settings)
    entries = _entries(path)
    token = settings.client.server_token.strip()
    if token:
        subject = entries.get(token, {}).get("subject")
        if subject is not None and subject != args.subject:
            raise InvalidInputError(
                f"GRAPHSVC_SERVER_TOKEN acts in subject {subject!r}, not --subject "
                f"{args.subject!r} (the server uses the token's binding)"
            )
        return token
    fits = [
        (entry.get("actor", {}).get("id") != args.actor_id, secret)
        for secret, entry in entries.items()
        if entry.get("subject") == args.subject
        and entry.get("policy", "default") == args.policy
        and entry.get("actor", {}).get("kind") == args.actor_kind
    ]
    if not fits:
        raise UnauthenticatedError(
            f"no API token for subject {args.subject!r}, policy {args.policy!r}, "
            f"{args.actor_kind} in {path}: set GRAPHSVC_SERVER_TOKEN, or pass --server '' "
            "to open the database"
        )
    return min(fits)[1]


# ------------------------------------------------------------------ the operations

_ATOM = (
    "fragment CliAtom on AtomView { atomId rev state text head "
    "links { role unavailable required at orderKey target { atomId rev } } "
    "sources atomOf atomisedInto archivedAt }"
)

SEARCH = (
    "query CliSearch($query: String!, $depth: Int, $limit: Int, $includeArchived: Boolean, "
    "$cursor: String) { search(query: $query, depth: $depth, limit: $limit, "
    "includeArchived: $includeArchived, cursor: $cursor) "
    "{ hits { atom { ...CliAtom } score scoreBreakdown weak } diagnostics cursor } } " + _ATOM
)

READ = (
    "query CliRead($query: String!, $memoryTokenBudget: Int!, $depth: Int, $limit: Int, "
    "$includeArchived: Boolean, $cursor: String) { read(query: $query, "
    "memoryTokenBudget: $memoryTokenBudget, depth: $depth, limit: $limit, "
    "includeArchived: $includeArchived, cursor: $cursor) { text formatVersion "
    "items { ref { atomId rev } role score blocked } "
    "selection { baselineComplete coverageCertified tokens budget } "
    "manifest diagnostics cursor } }"
)

INSPECT = (
    "query CliInspect($atomId: ID!, $rev: Int, $version: LinkAt, $direction: Direction, "
    "$roles: [String!], $limit: Int, $cursor: String, $rangeStart: Int, $rangeEnd: Int, "
    "$asOf: DateTime) { inspect(atomId: $atomId, rev: $rev, version: $version, "
    "direction: $direction, roles: $roles, limit: $limit, cursor: $cursor, "
    "rangeStart: $rangeStart, rangeEnd: $rangeEnd, asOf: $asOf) { atom { ...CliAtom } "
    "neighbors { atom { ...CliAtom } via { direction role at required orderKey } } "
    "receipt readEligibility stale diagnostics usage cursor } } " + _ATOM
)

_ANY_ATOM = "query CliAnyAtom { atoms(first: 1) { edges { cursor } } }"


def _link(link: dict[str, Any]) -> dict[str, Any]:
    """``AtomLinkView.to_json`` of a GraphQL ``AtomLink``."""
    out: dict[str, Any] = {
        "role": link["role"],
        "unavailable": link["unavailable"],
        "required": link["required"],
        "at": str(link["at"]).lower(),
    }
    if link.get("orderKey") is not None:
        out["orderKey"] = link["orderKey"]
    if not link["unavailable"] and link.get("target") is not None:
        out["target"] = {"atomId": link["target"]["atomId"], "rev": link["target"]["rev"]}
    return out


def atom_json(atom: dict[str, Any]) -> dict[str, Any]:
    """``AtomView.to_json`` of a GraphQL ``AtomView``."""
    return {
        "atomId": atom["atomId"],
        "rev": atom["rev"],
        "state": atom["state"],
        "text": atom["text"],
        "head": atom["head"],
        "links": [_link(x) for x in atom["links"]],
        "sources": list(atom["sources"]),
        "atomOf": atom.get("atomOf"),
        "atomisedInto": atom.get("atomisedInto"),
        "archivedAt": atom.get("archivedAt"),
    }


def search_json(data: dict[str, Any]) -> dict[str, Any]:
    """``SearchResult.to_json`` of the ``search`` answer."""
    s = data["search"]
    return {
        "hits": [
            {
                "atom": atom_json(h["atom"]),
                "score": h["score"],
                "scoreBreakdown": h["scoreBreakdown"],
                "weak": h["weak"],
            }
            for h in s["hits"]
        ],
        "diagnostics": s["diagnostics"],
        "cursor": s["cursor"],
    }


def read_json(data: dict[str, Any]) -> dict[str, Any]:
    """``ReadResult.to_json`` of the ``read`` answer."""
    r = data["read"]
    return {
        "text": r["text"],
        "formatVersion": r["formatVersion"],
        "items": [
            {
                "ref": {"atomId": i["ref"]["atomId"], "rev": i["ref"]["rev"]},
                "role": i["role"],
                "score": i["score"],
                "blocked": i["blocked"],
            }
            for i in r["items"]
        ],
        "selection": dict(r["selection"]),
        "manifest": r["manifest"],
        "diagnostics": r["diagnostics"],
        "cursor": r["cursor"],
    }


def _via(v: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "direction": str(v["direction"]).lower(),
        "role": v["role"],
        "at": str(v["at"]).lower(),
        "required": v["required"],
    }
    if v.get("orderKey") is not None:
        out["orderKey"] = v["orderKey"]
    return out


def inspect_json(data: dict[str, Any]) -> dict[str, Any]:
    """``InspectResult.to_json`` of the ``inspect`` answer."""
    r = data["inspect"]
    return {
        "atom": atom_json(r["atom"]),
        "neighbors": [
            {"atom": atom_json(n["atom"]), "via": [_via(v) for v in n["via"]]}
            for n in r["neighbors"]
        ],
        "receipt": r["receipt"],
        "readEligibility": r["readEligibility"],
        "stale": r["stale"],
        "diagnostics": r["diagnostics"],
        "usage": r["usage"],
        "cursor": r["cursor"],
    }


def subject_warnings(server: Server, subject: str) -> list[str]:
    """:func:`graphsvc.cli.common.empty_subject_warnings` over HTTP: the token's
    subject holds no atom at all."""
    if server.query(_ANY_ATOM, {})["atoms"]["edges"]:
        return []
    return [no_atoms_warning(subject)]


# ------------------------------------------------------------------ either path


class _Request(Protocol):
    def graphql_variables(self) -> dict[str, Any]: ...


class _Result(Protocol):
    def to_json(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Operation:
    """``search``, ``read`` or ``inspect`` as the CLI runs it, on either path.

    Attributes:
        document: the GraphQL operation the HTTP path sends.
        from_data: its answer's ``data`` as the direct path's ``to_json`` form.
        call: the direct path: the one Service call.
        found: the key of the answer that is empty when nothing was found (then the
            command warns when the subject holds no atom at all); None: no warning.
    """

    document: str
    from_data: Callable[[dict[str, Any]], dict[str, Any]]
    call: Callable[[Service, Binding, Any], _Result]
    found: str | None = None


SEARCH_OPERATION = Operation(SEARCH, search_json, lambda s, b, r: s.search(b, r), "hits")
READ_OPERATION = Operation(READ, read_json, lambda s, b, r: s.read(b, r), "items")
INSPECT_OPERATION = Operation(INSPECT, inspect_json, lambda s, b, r: s.inspect(b, r))


def run_operation(
    op: Operation, request: _Request, args: argparse.Namespace, settings: Settings
) -> dict[str, Any]:
    """The answer to ``request`` in the ``to_json`` form, from a running server when
    one is configured (:func:`server_for`), else from the database; warnings printed
    (and, for ``--json``, added as ``warnings``).

    Raises:
        GraphsvcError: whatever the operation raises on either path, and
            ServerUnavailableError when the configured server does not answer.
    """
    server = server_for(args, settings)
    answer = None
    if server is not None:  # a running graphsvc serve, over HTTP (docs/cli.md)
        how = "found in the state dir" if server.discovered else "configured"
        _say(args, f"asking the graphsvc serve at {server.endpoint} ({how})")
        try:
            answer = server.query(op.document, request.graphql_variables())
        except ServerUnavailableError as exc:
            if not server.discovered:
                raise
            _say(args, f"{exc.args[0] if exc.args else exc}: opening the database")
    if server is not None and answer is not None:
        payload = op.from_data(answer)
        empty = op.found is not None and not payload[op.found]
        warnings = subject_warnings(server, args.subject) if empty else []
    else:
        if server is None and args.server is not None:
            _say(args, "opening the database (--server '')")
        with connected_service(settings) as service:
            payload = op.call(service, binding_from_args(args), request).to_json()
            empty = op.found is not None and not payload[op.found]
            warnings = empty_subject_warnings(service, args.subject) if empty else []
    warn(args, payload, warnings)
    return payload
