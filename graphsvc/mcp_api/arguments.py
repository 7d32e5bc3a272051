"""Pydantic models of the MCP tools' arguments, generated from the GraphQL schema.

A tool's arguments are its GraphQL root field's arguments, with the same names,
nullability and defaults: each argument becomes a field of a pydantic model built
here with :func:`pydantic.create_model`, and the tool's JSON Schema is that
model's (:meth:`pydantic.BaseModel.model_json_schema`). Nothing is written twice:

- scalars and enums map to strict Python types (GraphQL ``Int`` keeps its 32-bit
  range, an enum its values, ``ID`` is a string);
- the inputs that the GraphQL resolvers hand to :mod:`graphsvc.inputs.models` take that
  module's pydantic models instead of a translation of the GraphQL input type:
  ``ChangeInput`` is :class:`~graphsvc.inputs.ChangeIn` (what ``parse_changes``
  validates) without its ``input`` (the InputToken, which the server adds, SPEC
  MCP-2), and ``AtomRefInput`` is :class:`~graphsvc.inputs.AtomRefIn`;
- every other input object becomes a model of its own fields, and ``JSON`` an
  object.

Unknown arguments are refused (``extra="forbid"``), as GraphQL refuses them.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from graphql import (
    GraphQLArgument,
    GraphQLEnumType,
    GraphQLField,
    GraphQLInputField,
    GraphQLInputObjectType,
    GraphQLInputType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLScalarType,
    Undefined,
)
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    create_model,
    field_validator,
)
from pydantic.json_schema import GenerateJsonSchema

from graphsvc.inputs.models import AtomRefIn, ChangeIn

__all__ = ["ARGUMENT_CONFIG", "ToolSchema", "arguments_model"]

# Unknown keys are refused, as in graphsvc.inputs. Strings are bounded by the size
# of the whole call (graphsvc.mcp_api.server), not one by one.
ARGUMENT_CONFIG = ConfigDict(extra="forbid")

_INT32 = (-(2**31), 2**31 - 1)
_SCALARS: dict[str, Any] = {
    "String": Annotated[str, Strict()],
    "ID": Annotated[str, Strict()],
    "Boolean": Annotated[bool, Strict()],
    "Int": Annotated[int, Strict(), Field(ge=_INT32[0], le=_INT32[1])],
    "Float": Annotated[float, Field(allow_inf_nan=False)],
    # JSON arguments of the public operations are objects (a manifest, a policy).
    "JSON": dict[str, Any],
}


def _without_token(model: type[BaseModel]) -> type[BaseModel]:
    """``model`` without its ``input`` field: over MCP the server is the host and puts
    the session's InputToken on every change itself (SPEC MCP-2), so no tool schema
    names a token, and a change that carries one is refused as an unknown key."""
    fields: dict[str, Any] = {
        name: (info.annotation, info)
        for name, info in model.model_fields.items()
        if name != "input"
    }
    return create_model(
        "ChangeInput",
        __config__=model.model_config,
        __validators__={"op_any_case": field_validator("op", mode="before")(_any_case)},
        **fields,
    )


def _any_case(cls: type, value: Any) -> Any:
    # Enum words in any case, as ChangeIn takes them (docs/agents.md, "Vocabulary").
    return value.lower() if isinstance(value, str) else value


# GraphQL input types whose resolvers validate with graphsvc.inputs.models' models.
_INPUT_MODELS: dict[str, type[BaseModel]] = {
    "ChangeInput": _without_token(ChangeIn),
    "AtomRefInput": AtomRefIn,
}


class ToolSchema(GenerateJsonSchema):
    """JSON Schema without the per-field titles pydantic derives from field names
    ("Memorytokenbudget"): the names say it, and every token of a tool list is read
    by the model."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


def arguments_model(
    field_name: str,
    field: GraphQLField,
    descriptions: dict[str, str] | None = None,
) -> type[BaseModel]:
    """The pydantic model of a GraphQL root field's arguments.

    Args:
        field_name: the root field (``search``, ``write``, ...).
        field: its definition in the built schema.
        descriptions: text for the JSON Schema of an argument, by name, where the
            GraphQL argument has no description of its own.
    """
    fields: dict[str, Any] = {}
    for name, arg in field.args.items():
        required = isinstance(arg.type, GraphQLNonNull)
        annotation = _python_type(arg.type)
        text = arg.description or (descriptions or {}).get(name)
        fields[name] = _field(annotation, required, arg, text)
    model_name = "".join(p[:1].upper() + p[1:] for p in field_name.split("_")) + "Arguments"
    return create_model(model_name, __config__=ARGUMENT_CONFIG, **fields)


def _field(
    annotation: Any,
    required: bool,
    definition: GraphQLArgument | GraphQLInputField,
    description: str | None,
) -> tuple[Any, Any]:
    default = definition.default_value
    if required and default is Undefined:
        return annotation, Field(..., description=description)
    if default is Undefined:
        default = None
    # A nullable argument may be sent as null, as in GraphQL.
    annotation = annotation if required else annotation | None
    return annotation, Field(default=default, description=description)


def _enum(values: tuple[Any, ...]) -> Any:
    """An enum's words, taken in any case (``"BOTH"`` is ``both``; docs/agents.md,
    "Vocabulary"), listed in the schema as the values are spelled."""
    words = {str(v).lower(): v for v in values}

    def any_case(value: Any) -> Any:
        return words.get(value.lower(), value) if isinstance(value, str) else value

    return Annotated[Literal[values], BeforeValidator(any_case)]


def _python_type(t: GraphQLInputType) -> Any:
    """The Python type of a GraphQL input type, ignoring its outer nullability."""
    if isinstance(t, GraphQLNonNull):
        t = t.of_type
    if isinstance(t, GraphQLList):
        item = _python_type(t.of_type)
        if not isinstance(t.of_type, GraphQLNonNull):
            item = item | None
        return list[item]  # type: ignore[valid-type]
    if isinstance(t, GraphQLScalarType):
        return _SCALARS.get(t.name, Any)
    if isinstance(t, GraphQLEnumType):
        return _enum(tuple(v.value for v in t.values.values()))
    if isinstance(t, GraphQLInputObjectType):
        known = _INPUT_MODELS.get(t.name)
        if known is not None:
            return known
        fields: dict[str, Any] = {
            name: _field(_python_type(f.type), isinstance(f.type, GraphQLNonNull), f, f.description)
            for name, f in t.fields.items()
        }
        return create_model(t.name, __config__=ARGUMENT_CONFIG, **fields)
    raise TypeError(f"no Python type for GraphQL input type {t}")
