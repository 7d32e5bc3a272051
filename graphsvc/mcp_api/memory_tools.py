"""The MCP tools that are not a GraphQL root field: ``remember``, ``entities``,
``changes``, ``atom`` and ``status`` (docs/agents.md, "Tools").

Each has its own argument model (strict, unknown keys refused, the JSON Schema the
model sees) and one run function over a :class:`~graphsvc.mcp_api.session.Call`.
``remember`` is SPEC MCP-4: one create in one batch with the session's InputToken,
``about`` written as links to revisions the session was shown.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from graphsvc.core.instants import as_of_instant
from graphsvc.core.requests import InspectRequest
from graphsvc.core.session_window import Shown, written
from graphsvc.core.write_models import AtomRef, Change, LinkSpec
from graphsvc.errors import InvalidInputError
from graphsvc.inputs.models import SourceIn
from graphsvc.mcp_api.session import Call

__all__ = [
    "AtomArguments",
    "ChangesArguments",
    "EntitiesArguments",
    "RememberArguments",
    "StatusArguments",
    "run_atom",
    "run_changes",
    "run_entities",
    "run_remember",
    "run_status",
]

_STRICT = ConfigDict(extra="forbid", strict=True, populate_by_name=True)
_ID = Field(min_length=1, max_length=256)


class AboutIn(BaseModel):
    """An atom the new text is about: one the session was shown."""

    model_config = _STRICT
    atom_id: str = Field(alias="atomId", min_length=1, max_length=256)
    role: str = Field(default="about", min_length=1, max_length=256)


class RememberArguments(BaseModel):
    model_config = _STRICT
    text: str = Field(min_length=1, description="What to remember, in words.")
    about: list[AboutIn] | None = Field(
        default=None,
        max_length=128,
        description="Atoms shown in this session that the text is about (linked with `role`).",
    )
    sources: list[SourceIn] | None = Field(
        default=None, max_length=128, description="Where the text comes from (uri, version)."
    )


class EntitiesArguments(BaseModel):
    model_config = _STRICT
    query: str | None = Field(
        default=None, max_length=1024, description="A name or part of one (any case)."
    )
    key: str | None = Field(
        default=None, max_length=1024, description="An entity's key: list the atoms naming it."
    )
    first: int | None = Field(default=None, ge=0, le=1000)
    after: str | None = Field(default=None, max_length=1024)


def _instant(value: str | None) -> str | None:
    """An ISO-8601 instant (``Z`` or an offset; none is UTC) in the stored form."""
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError as exc:
        raise ValueError("an ISO-8601 instant, such as 2026-12-07T11:00:00Z") from exc
    return as_of_instant(moment)


class ChangesArguments(BaseModel):
    model_config = _STRICT
    since: str | None = Field(default=None, max_length=64, description="ISO-8601 UTC instant.")
    until: str | None = Field(default=None, max_length=64)
    after: int | None = Field(
        default=None, ge=0, le=2**63 - 1, description="`cursor` of the previous page."
    )
    first: int | None = Field(default=None, ge=0, le=1000)

    _instants = field_validator("since", "until")(_instant)


class AtomArguments(BaseModel):
    model_config = _STRICT
    atom_id: str = Field(alias="atomId", min_length=1, max_length=256)
    rev: int | None = Field(default=None, ge=1, le=2**31 - 1)
    as_of: str | None = Field(
        default=None, alias="asOf", max_length=64, description="ISO-8601 UTC: the atom then."
    )

    _instants = field_validator("as_of")(_instant)


class StatusArguments(BaseModel):
    model_config = _STRICT


def _about_refs(call: Call, about: list[AboutIn], shown: tuple[AtomRef, ...]) -> list[LinkSpec]:
    """``about`` as links to the revisions the session was shown (the most recent
    one of each atom); an atom it was not shown is refused (MCP-4)."""
    latest: dict[str, AtomRef] = {}
    for seen in shown:
        latest.setdefault(seen.atom_id, seen)
    links = []
    for item in about:
        ref: AtomRef | None = latest.get(item.atom_id)
        if ref is None and call.binding.actor_kind != "agent":
            # A person's session has no token; its `about` names the current head.
            view = call.service.inspect(
                call.binding, InspectRequest(atom_id=item.atom_id, limit=0)
            ).atom
            ref = AtomRef(view.atom_id, view.rev)
        if ref is None:
            raise InvalidInputError(
                "about: an atom this session was not shown; search, read or inspect it first",
                details={"atomId": item.atom_id[:256]},
            )
        links.append(LinkSpec(role=item.role, ref=ref))
    return links


def run_remember(call: Call, a: BaseModel) -> dict[str, Any]:
    """One create with the session's token (MCP-4)."""
    assert isinstance(a, RememberArguments)
    with call.change_token() as issued:
        # `about` may name what the session was shown or wrote itself.
        known = (*issued.declared.basis, *issued.declared.written) if issued else ()
        links = _about_refs(call, a.about or [], known)
        change = Change(
            id="remember",
            op="create",
            text=a.text,
            links=tuple(links),
            sources=tuple(s.core() for s in a.sources) if a.sources else (),
            input=issued.token if issued is not None else None,
        )
        outcome = call.service.write(call.binding, [change], None).to_json()
    call.show(written(outcome))
    derived = issued.declared if issued is not None else None
    return {
        "atom": outcome["changes"]["remember"],
        "operationId": outcome["operationId"],
        "indexing": outcome["indexing"],
        "derivedFrom": {
            "manifests": list(derived.presentations) if derived else [],
            "atoms": [r.to_json() for r in derived.basis] if derived else [],
        },
    }


def run_entities(call: Call, a: BaseModel) -> dict[str, Any]:
    """Entities by name, or one entity's atoms."""
    assert isinstance(a, EntitiesArguments)
    reader = call.service.graph_reader(call.binding)
    reader.check_open()
    limit = reader.page_size(a.first)
    if a.key is not None:
        found = reader.entities_by_keys([a.key]).get(a.key)
        if found is None:
            raise InvalidInputError("no entity with this key", details={"key": a.key[:256]})
        mentions = reader.mentions_page(a.key, after=a.after, limit=limit + 1)
        atoms = mentions[:limit]
        return {
            "entity": found.to_json(),
            "atoms": [{"atomId": m.atom_id, "rev": m.rev, "count": m.count} for m in atoms],
            "cursor": atoms[-1].atom_id if len(mentions) > limit and atoms else None,
        }
    entities = reader.entities_page(query=a.query, type_=None, after=a.after, limit=limit + 1)
    page = entities[:limit]
    return {
        "entities": [e.to_json() for e in page],
        "cursor": page[-1].key if len(entities) > limit and page else None,
    }


def run_changes(call: Call, a: BaseModel) -> dict[str, Any]:
    """The change feed since an instant or a cursor."""
    assert isinstance(a, ChangesArguments)
    page = call.service.changes(
        call.binding, since=a.since, until=a.until, after=a.after, first=a.first
    )
    records = [r.to_json() for r in page.records]
    return {
        "changes": records,
        "cursor": page.records[-1].seq if page.records else a.after,
        "hasNext": page.has_next,
    }


def run_atom(call: Call, a: BaseModel) -> dict[str, Any]:
    """One atom (its head, a revision, or as it stood at an instant)."""
    assert isinstance(a, AtomArguments)
    request = InspectRequest(atom_id=a.atom_id, rev=a.rev, limit=0, as_of=a.as_of)
    answer = call.service.inspect(call.binding, request).to_json()
    atom = answer["atom"]
    call.show([Shown("revision", atom["atomId"], atom["rev"], bool(atom.get("head")))])
    return {"atom": atom, "stale": answer["stale"]}


def run_status(call: Call, a: BaseModel) -> dict[str, Any]:
    """Health, index lag and model facts."""
    return call.service.health().to_json()
