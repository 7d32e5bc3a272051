"""Descriptions of the SPEC API-6 core types, set on the built schema.

The typed graph's types carry their descriptions where they are defined; the
older API-6 types were written without them. Rather than touch every one of
those definitions, :func:`describe` sets these texts on the built GraphQL schema
(where a definition has none of its own), so introspection, GraphiQL and
``schema.graphql`` show a description on every type, field and enum value.
Names and shapes do not change (API-6).
"""

from __future__ import annotations

from typing import Final

from graphql import (
    GraphQLEnumType,
    GraphQLInputObjectType,
    GraphQLInterfaceType,
    GraphQLObjectType,
    GraphQLSchema,
)

__all__ = ["DESCRIPTIONS", "describe"]

DESCRIPTIONS: Final[dict[str, str]] = {
    "Query": "Reads. None of them changes any body, link or usage state (CORE-2).",
    "Mutation": "Writes and operator operations.",
    # Inputs of write (SPEC §2)
    "AtomRefInput": "An issued revision: atomId and rev.",
    "LinkTargetInput": "A link target: `ref` (an issued revision) or `local` (a change of "
    "this batch), exactly one, with at/required/orderKey.",
    "LinkInput": "A typed link: a role (user data) and a target.",
    "RangeInput": "A range of a source in bytes, characters or lines (end exclusive).",
    "SourceCitationInput": "A cited source: uri, optional version, digest and range.",
    "ContentInput": "The body and the complete list of links of a new revision.",
    "ChangeInput": "One change of a write batch: create, revise or retire.",
    "WriteOptionsInput": "Options of a write.",
    "ChangeOp": "The kind of a change.",
    "ChangeOp.CREATE": "A new atom.",
    "ChangeOp.REVISE": "A new revision of an atom whose head is `target` (CAS).",
    "ChangeOp.RETIRE": "A retired revision of an atom whose head is `target` (WR-4).",
    "LinkAt": "How a link binds its target (INS-3).",
    "LinkAt.LOGICAL": "Follows the target atom's head.",
    "LinkAt.OBSERVED": "Pinned to one revision.",
    "Direction": "Which links of inspect's root to follow.",
    "Direction.INCOMING": "Links held by other atoms' heads that point at the root.",
    "Direction.OUTGOING": "The root's own links.",
    "Direction.BOTH": "Incoming and outgoing.",
    "RangeUnit": "The unit of a source range.",
    "RangeUnit.BYTE": "UTF-8 bytes.",
    "RangeUnit.CHAR": "Characters (code points).",
    "RangeUnit.LINE": "Lines.",
    # Outputs
    "AtomRef": "An issued revision: atomId and rev.",
    "AtomRef.atomId": "The atom.",
    "AtomRef.rev": "The revision number.",
    "AtomLink": "A link of an AtomView; the safe form of LNK-2 when unavailable.",
    "AtomLink.role": "The role (user data; never implies meaning, CORE-4).",
    "AtomLink.unavailable": "The target is purged or not permitted: no target is shown.",
    "AtomLink.required": "The target must be presented with this revision (RD-2).",
    "AtomLink.at": "LOGICAL follows the head; OBSERVED is pinned.",
    "AtomLink.orderKey": "Caller-given order key.",
    "AtomLink.target": "The target revision; null when unavailable. (Typed walk: `atom`.)",
    "AtomView": "The public form of one revision (SPEC §2).",
    "AtomView.atomId": "The atom.",
    "AtomView.rev": "The revision number.",
    "AtomView.state": "active, retired or archived.",
    "AtomView.text": "The body.",
    "AtomView.head": "This revision is the atom's head.",
    "AtomView.links": "The links, in stored order.",
    "AtomView.sources": "The source citations as JSON (typed: Revision.citations).",
    "AtomView.atomOf": "The atom this one was atomised from (§11).",
    "AtomView.atomisedInto": "How many atoms this revision was atomised into.",
    "AtomView.archivedAt": "When this revision was archived (§11).",
    "ChangeResult": "The committed view of one change of a write.",
    "ChangeResult.id": "The change id of the batch.",
    "ChangeResult.atom": "The committed revision.",
    "WriteOutcome": "The result of a write (WR-8).",
    "WriteOutcome.operationId": "The operation (the same on an idempotent replay).",
    "WriteOutcome.repeated": "An idempotent replay: nothing was committed again.",
    "WriteOutcome.indexing": "complete or pending: whether the new heads are searchable yet.",
    "WriteOutcome.changes": "Every change id with its committed view.",
    "WriteOutcome.atomiseMode": "The namespace policy's atomisation mode, when it applied.",
    "WriteOutcome.atomiseOutcome": "What synchronous atomisation did, when it applied.",
    "SearchHit": "One ranked atom of a search.",
    "SearchHit.atom": "The atom's head.",
    "SearchHit.score": "Relative score within this evaluation (ACT-4).",
    "SearchHit.scoreBreakdown": "How the score was made, as JSON (typed: breakdown).",
    "SearchResult": "A page of a search.",
    "SearchResult.hits": "The ranked hits of this page.",
    "SearchResult.diagnostics": "acquisition, validation, evaluation, selection (CUR-3).",
    "SearchResult.cursor": "The next page's cursor; null on the last page.",
    "Selection": "What a read selected under its budget.",
    "Selection.baselineComplete": "Every root's required closure was presented.",
    "Selection.coverageCertified": "The selection is certified against the candidates.",
    "Selection.tokens": "Tokens of the read text.",
    "Selection.budget": "The token budget asked for.",
    "ReadItem": "One presented revision of a read.",
    "ReadItem.ref": "The presented revision.",
    "ReadItem.role": "root or required.",
    "ReadItem.score": "The root's score; null for required bodies.",
    "ReadItem.blocked": "The root is blocked (RD-2).",
    "ReadResult": "A token-budgeted, dependency-complete read (SPEC §8).",
    "ReadResult.text": "The read text (formatVersion 2 JSON).",
    "ReadResult.formatVersion": "The text's format version.",
    "ReadResult.items": "The presented revisions in order.",
    "ReadResult.selection": "What was selected under the budget.",
    "ReadResult.manifest": "The observation record as JSON (typed: manifestInfo).",
    "ReadResult.diagnostics": "acquisition, validation, evaluation, selection (CUR-3).",
    "ReadResult.cursor": "The next page's cursor; null on the last page.",
    "Via": "One link between inspect's root and a neighbour, seen from the root.",
    "Via.direction": "INCOMING or OUTGOING.",
    "Via.role": "The link's role.",
    "Via.at": "The link's binding.",
    "Via.required": "The link is required.",
    "Via.orderKey": "Caller-given order key.",
    "Neighbor": "A neighbour revision and every link joining it to the root (INS-4).",
    "Neighbor.atom": "The neighbour revision.",
    "Neighbor.via": "The links joining it to the root.",
    "InspectResult": "One revision and its one-hop neighbourhood (SPEC §7).",
    "InspectResult.atom": "The inspected revision.",
    "InspectResult.neighbors": "One page of neighbours.",
    "InspectResult.receipt": "A sealed receipt of what was shown.",
    "InspectResult.readEligibility": "What showing the body does not prove (LNK-3).",
    "InspectResult.stale": "A declared watch no longer holds (LNK-1).",
    "InspectResult.diagnostics": "acquisition, validation, evaluation, selection (CUR-3).",
    "InspectResult.usage": "The caller's usage state of this revision.",
    "InspectResult.cursor": "The next page's cursor; null on the last page.",
}


def describe(schema: GraphQLSchema) -> None:
    """Set :data:`DESCRIPTIONS` on types, fields and enum values that have none."""
    for key, text in DESCRIPTIONS.items():
        type_name, _, member = key.partition(".")
        t = schema.type_map.get(type_name)
        if t is None:
            continue
        if not member:
            if not t.description:
                t.description = text
            continue
        target = None
        if isinstance(t, GraphQLObjectType | GraphQLInterfaceType | GraphQLInputObjectType):
            target = t.fields.get(member)
        elif isinstance(t, GraphQLEnumType):
            target = t.values.get(member)
        if target is not None and not target.description:
            target.description = text
