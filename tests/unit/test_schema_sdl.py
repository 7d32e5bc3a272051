"""The served GraphQL schema: checked in as schema.graphql, described everywhere."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from graphql import GraphQLEnumType, GraphQLInterfaceType, GraphQLObjectType, GraphQLUnionType

from graphsvc.api.schema import Mutation, Query, build_schema
from graphsvc.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

from schema_sdl import SDL_FILE, served_sdl  # noqa: E402

BUILT_IN = {"String", "Int", "Float", "Boolean", "ID"}


@pytest.mark.req("API-6")
def test_checked_in_sdl_is_the_served_schema() -> None:
    assert SDL_FILE.read_text(encoding="utf-8") == served_sdl(), (
        "schema.graphql has drifted from the served schema: run "
        "`python scripts/schema_sdl.py` and commit schema.graphql"
    )


@pytest.mark.req("API-6")
def test_every_type_field_and_enum_value_has_a_description() -> None:
    schema = build_schema(Settings())._schema
    missing = []
    for name, t in sorted(schema.type_map.items()):
        if name.startswith("__") or name in BUILT_IN:
            continue
        if not t.description:
            missing.append(name)
        if isinstance(t, GraphQLObjectType | GraphQLInterfaceType):
            missing += [f"{name}.{f}" for f, d in t.fields.items() if not d.description]
        if isinstance(t, GraphQLEnumType):
            missing += [f"{name}.{v}" for v, d in t.values.items() if not d.description]
        if isinstance(t, GraphQLUnionType):
            assert t.types, name
    assert missing == []


@pytest.mark.req("API-6")
def test_typed_graph_is_additive_to_the_api6_core() -> None:
    sdl = served_sdl()
    # A few API-6 shapes, unchanged; the typed graph only adds (names from SPEC API-6).
    for line in (
        "lineage(atomId: ID!, depth: Int = null): JSON!",
        "scoreBreakdown: JSON!",
        "manifest: JSON!",
        "target: AtomRef",
        "interface Node {",
        # asOf (docs/time-travel.md) was added after these four, with its description.
        "atoms(\n    first: Int = null\n    after: String = null\n"
        "    state: AtomState = null\n    text: String = null\n",
        "union LinkTarget = Revision | Atom",
    ):
        assert line in sdl, line


@pytest.mark.req("API-6")
def test_feature_root_types_merge_without_overriding_a_field() -> None:
    # Query and Mutation inherit every feature module's root type (graphsvc.api.schema);
    # a field name two of them define would silently hide one of them.
    for root in (Query, Mutation):
        names = [f.name for base in root.__bases__ for f in base.__strawberry_definition__.fields]
        assert len(names) == len(set(names)), root
        assert {f.name for f in root.__strawberry_definition__.fields} == set(names)
