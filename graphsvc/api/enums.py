"""The GraphQL enums more than one feature's types use (links, inspect, writes, ranges)."""

from __future__ import annotations

from enum import Enum

import strawberry

__all__ = ["ChangeOp", "Direction", "LinkAt", "RangeUnit"]


@strawberry.enum(description="How a link binds its target (INS-3).")
class LinkAt(Enum):
    LOGICAL = strawberry.enum_value("logical", description="Follows the target atom's head.")
    OBSERVED = strawberry.enum_value("observed", description="Pinned to one revision.")


@strawberry.enum(description="Which links of inspect's root to follow.")
class Direction(Enum):
    INCOMING = strawberry.enum_value(
        "incoming", description="Links held by other atoms' heads that point at the root."
    )
    OUTGOING = strawberry.enum_value("outgoing", description="The root's own links.")
    BOTH = strawberry.enum_value("both", description="Incoming and outgoing.")


@strawberry.enum(description="The kind of a change.")
class ChangeOp(Enum):
    CREATE = strawberry.enum_value("create", description="A new atom.")
    REVISE = strawberry.enum_value(
        "revise", description="A new revision of an atom whose head is `target` (CAS)."
    )
    RETIRE = strawberry.enum_value(
        "retire", description="A retired revision of an atom whose head is `target` (WR-4)."
    )


@strawberry.enum(description="The unit of a source range.")
class RangeUnit(Enum):
    BYTE = strawberry.enum_value("byte", description="UTF-8 bytes.")
    CHAR = strawberry.enum_value("char", description="Characters (code points).")
    LINE = strawberry.enum_value("line", description="Lines.")
