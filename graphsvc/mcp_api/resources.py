"""MCP resources: an atom by URI, ``graphsvc://atom/<atomId>`` or ``…@<rev>``.

Without ``@<rev>`` the URI names the atom's head; with it, that revision. Reading
one is ``inspect`` of that revision with no neighbours (the same visibility: an
atom of another subject, or a purged one, is NOT_FOUND), and its content is the
revision's AtomView as JSON (text, state, links, sources). Atoms are not listed:
they are found with ``search`` and ``read``; the templates say how to name one.
"""

from __future__ import annotations

import json
import re

import mcp_types as types

from graphsvc.core.binding import Binding
from graphsvc.core.instants import with_utc_z
from graphsvc.core.requests import InspectRequest
from graphsvc.errors import InvalidInputError
from graphsvc.service import Service

__all__ = ["TEMPLATES", "atom_uri", "read_resource"]

_URI = re.compile(
    r"^graphsvc://atom/(?P<atom_id>[A-Za-z0-9._:-]{1,256})(?:@(?P<rev>[1-9][0-9]{0,9}))?$"
)
_MIME = "application/json"

TEMPLATES: tuple[types.ResourceTemplate, ...] = (
    types.ResourceTemplate(
        name="atom",
        title="Atom (head)",
        uri_template="graphsvc://atom/{atomId}",
        description="The current head revision of an atom of your subject, as JSON.",
        mime_type=_MIME,
    ),
    types.ResourceTemplate(
        name="atom-revision",
        title="Atom revision",
        uri_template="graphsvc://atom/{atomId}@{rev}",
        description="One issued revision of an atom of your subject, as JSON.",
        mime_type=_MIME,
    ),
)


def atom_uri(atom_id: str, rev: int | None = None) -> str:
    """The resource URI of an atom's head, or of one revision."""
    return f"graphsvc://atom/{atom_id}" + (f"@{rev}" if rev is not None else "")


def read_resource(service: Service, binding: Binding, uri: str) -> types.ReadResourceResult:
    """The contents of an atom URI.

    Raises:
        InvalidInputError: not a ``graphsvc://atom/`` URI.
        NotFoundError: no such atom or revision in the caller's subject.
    """
    m = _URI.match(uri)
    if m is None:
        raise InvalidInputError(
            "not an atom URI: graphsvc://atom/<atomId> or graphsvc://atom/<atomId>@<rev>"
        )
    rev = int(m["rev"]) if m["rev"] else None
    result = service.inspect(binding, InspectRequest(m["atom_id"], rev=rev, limit=0))
    view = with_utc_z(result.atom.to_json())
    return types.ReadResourceResult(
        contents=[
            types.TextResourceContents(
                uri=uri,
                mime_type=_MIME,
                text=json.dumps(view, ensure_ascii=False),
            )
        ]
    )
