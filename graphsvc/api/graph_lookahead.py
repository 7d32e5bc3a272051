"""Look-ahead: what a field's sub-selection will ask for, read from the document.

A loader can then fetch the next level with this one (one round trip instead of
two) when, and only when, the query selects it. The answer is per field node of
the document, so the 100 ``links`` fields of one page cost one walk of the
selection, not 100. Fragments (inline and named) are followed and their type
conditions ignored: a yes may fetch a little that is not shown, never the reverse
harm (a no only means one more round trip later).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from graphql import FieldNode, FragmentSpreadNode, InlineFragmentNode
from strawberry.types import Info

from graphsvc.api.graph_loaders import loaders_of

__all__ = ["NEXT_PAGE_CURSOR", "selects", "wants_target_citations"]

# The description of a search's and a read's `cursor` field: whether an operation
# selects it (``selects(info, "cursor")``) decides whether the evaluation is stored.
NEXT_PAGE_CURSOR = (
    "The next page's cursor; null on the last page. Selecting it stores this"
    " evaluation for the next page; an operation that does not select it"
    " stores nothing."
)


# ``raw`` is graphql-core's GraphQLResolveInfo (its ``fragments`` are the document's).
def _fields(raw: Any, nodes: Iterable[FieldNode], name: str) -> list[FieldNode]:
    """The fields called ``name`` directly under ``nodes`` (through fragments)."""
    return [f for n in nodes for f in _children(raw, n) if f.name.value == name]


def _children(raw: Any, node: FieldNode) -> Iterator[FieldNode]:
    pending = list(node.selection_set.selections) if node.selection_set else []
    seen: set[str] = set()
    while pending:
        sel = pending.pop()
        if isinstance(sel, FieldNode):
            yield sel
        elif isinstance(sel, InlineFragmentNode):
            pending.extend(sel.selection_set.selections)
        elif isinstance(sel, FragmentSpreadNode):
            name = sel.name.value
            fragment = raw.fragments.get(name)
            if fragment is not None and name not in seen:
                seen.add(name)
                pending.extend(fragment.selection_set.selections)


def selects(info: Info, name: str) -> bool:
    """Does this field's selection ask for its field ``name`` (through fragments,
    whatever their directives)?"""
    raw = info._raw_info
    return bool(_fields(raw, raw.field_nodes, name))


def wants_target_citations(info: Info) -> bool:
    """Does this ``links`` field select its targets' citations?

    ``links { edges { node { target { ... on Revision { citations } ... on Atom {
    head { citations } } } } } }``, either branch.
    """
    raw = info._raw_info
    memo = loaders_of(info).lookahead
    key = id(raw.field_nodes[0])
    found = memo.get(key)
    if found is None:
        targets = _fields(
            raw, _fields(raw, _fields(raw, raw.field_nodes, "edges"), "node"), "target"
        )
        found = bool(_fields(raw, targets, "citations")) or bool(
            _fields(raw, _fields(raw, targets, "head"), "citations")
        )
        memo[key] = found
    return found
