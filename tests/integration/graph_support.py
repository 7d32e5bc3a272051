"""Plumbing of the typed-graph tests: in-process schema execution and a small graph.

``gql`` runs a query through the real strawberry schema with a real Context (an
API token in a real AuthTable), exactly as the HTTP app builds it, against the
real Neo4j of the test session.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass
from typing import Any

from graphql import GraphQLError
from write_support import new, ref, retire, revise, write

from graphsvc.api.context import Context
from graphsvc.api.schema import build_schema
from graphsvc.core.binding import Binding
from graphsvc.core.write_models import AtomView
from graphsvc.keys.auth import AuthTable
from graphsvc.service import Service

__all__ = ["Small", "codes", "gql", "gql_ok", "small_graph"]


def gql(
    service: Service, binding: Binding | None, query: str, **variables: Any
) -> tuple[dict[str, Any] | None, list[GraphQLError]]:
    """Execute ``query`` in process as ``binding`` (None: no token); (data, errors)."""
    auth = AuthTable({})
    header = None
    if binding is not None:
        token = uuid.uuid4().hex
        auth.add(token, binding)
        header = f"Bearer {token}"
    context = Context(service=service, auth=auth, authorization=header)
    schema = build_schema(service.settings)
    result = asyncio.run(schema.execute(query, variable_values=variables, context_value=context))
    return result.data, list(result.errors or [])


def gql_ok(service: Service, binding: Binding, query: str, **variables: Any) -> dict[str, Any]:
    """Like :func:`gql`, asserting that there are no errors."""
    data, errors = gql(service, binding, query, **variables)
    assert not errors, [(e.message, e.extensions) for e in errors]
    assert data is not None
    return data


def codes(errors: list[GraphQLError]) -> list[str]:
    return [str((e.extensions or {}).get("code")) for e in errors]


@dataclass
class Small:
    """A: cited source text; B links to A (observed + logical) and cites A and a URL;
    C is retired; A has two revisions (rev 2 is the head)."""

    a: AtomView
    a2: AtomView
    b: AtomView
    c: AtomView


def small_graph(service: Service, binding: Binding) -> Small:
    out = write(
        service,
        binding,
        [
            new(
                "a",
                "Alpha cites the handbook.",
                sources=[
                    {
                        "uri": "https://example.org/handbook",
                        "version": "3",
                        "range": {"start": 0, "end": 12, "unit": "byte"},
                    }
                ],
            ),
            new("c", "Gamma will be retired."),
        ],
    )
    a, c = out.changes["a"], out.changes["c"]
    b = write(
        service,
        binding,
        [
            new(
                "b",
                "Beta builds on alpha.",
                links=[
                    {"role": "supports", "target": {"ref": ref(a), "at": "observed"}},
                    {
                        "role": "mentions",
                        "target": {"ref": ref(a), "at": "logical", "required": True},
                    },
                    {"role": "supports", "target": {"ref": ref(c), "at": "logical"}},
                ],
                sources=[
                    {"uri": f"atom:{a.atom_id}", "version": "1"},
                    {"uri": "https://example.org/handbook", "version": "3"},
                ],
            )
        ],
    ).changes["b"]
    a2 = write(service, binding, [revise("a2", ref(a), "Alpha, revised.")]).changes["a2"]
    c_retired = write(service, binding, [retire("c", ref(c))]).changes["c"]
    return Small(a=a, a2=a2, b=b, c=c_retired)
