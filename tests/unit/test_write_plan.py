"""Pure validation of a write batch and its semantic fingerprint (no database).

``parse_changes`` is the edge (caller JSON → core models), ``validate_plan``
the database-free checks of SPEC §2, ``plan_fingerprint`` IDEM-1's canonical
hash, and ``check_range`` the citation check against a stored text.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from graphsvc.core.binding import Binding
from graphsvc.core.citations import check_range, text_digest, unit_length
from graphsvc.core.write_models import AtomRef, Change, LinkSpec
from graphsvc.core.write_plan import Limits, plan_fingerprint, validate_plan
from graphsvc.errors import GraphsvcError
from graphsvc.inputs.models import parse_changes

HUMAN = Binding("s1", "default", "human", "alice")
AGENT = Binding("s1", "default", "agent", "bot")
SELF_LINK = {"role": "r", "target": {"local": "a"}}
LIMITS = Limits(max_changes=4, max_body_bytes=10, max_links=2, max_sources=2, max_write_bytes=25)


def _create(cid: str, text: str = "x", **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"id": cid, "op": "create", "content": {"text": text, "links": []}}
    out["sources"] = []
    out.update(extra)
    return out


def _code(raw: Any, binding: Binding = HUMAN, limits: Limits = LIMITS) -> tuple[str, str]:
    with pytest.raises(GraphsvcError) as info:
        validate_plan(parse_changes(raw), binding, limits)
    return info.value.code, info.value.message


# ------------------------------------------------------------------ the edge


@pytest.mark.req("WR-2")
def test_missing_links_and_sources_stay_distinct_from_empty() -> None:
    given = parse_changes([_create("a")])[0]
    assert given.links == () and given.sources == ()
    raw = _create("a")
    del raw["sources"]
    del raw["content"]["links"]
    missing = parse_changes([raw])[0]
    assert missing.links is None and missing.sources is None


@pytest.mark.req("WR-6")
def test_link_target_forms_and_their_defaults() -> None:
    links = [
        {"role": "bare", "target": {"atomId": "x", "rev": 2}},
        {"role": "ref", "target": {"ref": {"atomId": "x", "rev": 2}}},
        {"role": "full", "target": {"ref": {"atomId": "x", "rev": 2}, "at": "logical",
                                    "required": True, "orderKey": "k"}},
        {"role": "local", "target": {"local": "b"}},
    ]  # fmt: skip
    change = parse_changes([_create("a", content={"text": "t", "links": links})])[0]
    assert change.links == (
        LinkSpec("bare", ref=AtomRef("x", 2), at="observed", required=False),
        LinkSpec("ref", ref=AtomRef("x", 2), at="observed", required=False),
        LinkSpec("full", ref=AtomRef("x", 2), at="logical", required=True, order_key="k"),
        LinkSpec("local", local="b", at="observed", required=False),
    )


@pytest.mark.req("WR-6")
def test_a_link_kind_in_graphqls_spelling_means_the_same_link() -> None:
    links = [
        {"role": "up", "target": {"ref": {"atomId": "x", "rev": 2}, "at": "LOGICAL"}},
        {"role": "pin", "target": {"ref": {"atomId": "x", "rev": 2}, "at": "Observed"}},
    ]
    change = parse_changes([_create("a", content={"text": "t", "links": links})])[0]
    assert [link.at for link in change.links or ()] == ["logical", "observed"]
    bad = {"role": "r", "target": {"ref": {"atomId": "x", "rev": 2}, "at": "PINNED"}}
    with pytest.raises(GraphsvcError) as info:
        parse_changes([_create("a", content={"text": "t", "links": [bad]})])
    assert info.value.code == "INVALID_INPUT"


@pytest.mark.req("WR-7", "WR-6")
@pytest.mark.parametrize(
    "target",
    [
        {"ref": {"atomId": "x", "rev": 1}, "local": "b"},
        {"ref": {"atomId": "x", "rev": 1}, "atomId": "x", "rev": 1},
        {"atomId": "x"},
        {},
        {"ref": {"atomId": "x", "rev": 0}},
        {"ref": {"atomId": "", "rev": 1}},
        {"local": "b", "at": "sideways"},
        {"local": "b", "color": "red"},
    ],
)
def test_malformed_link_target_is_invalid_input_naming_the_change(target: dict[str, Any]) -> None:
    raw = [_create("bad", content={"text": "t", "links": [{"role": "r", "target": target}]})]
    with pytest.raises(GraphsvcError) as info:
        parse_changes(raw)
    assert info.value.code == "INVALID_INPUT"
    assert "'bad'" in info.value.message and info.value.details == {"changeId": "bad"}


@pytest.mark.req("WR-7")
@pytest.mark.parametrize(
    "raw",
    [
        "not a list",
        [{"op": "create"}],
        [{"id": "a", "op": "delete"}],
        [{"id": "a", "op": "create", "content": {"text": 5, "links": []}, "sources": []}],
        [{"id": "a", "op": "create", "content": {"text": "t", "links": []}, "sources": [{}]}],
        [{"id": "a", "op": "retire", "target": {"atomId": "x", "rev": 1},
          "content": {"text": "t", "links": []}}],
    ],
)  # fmt: skip
def test_malformed_changes_are_invalid_input(raw: Any) -> None:
    with pytest.raises(GraphsvcError) as info:
        parse_changes(raw)
    assert info.value.code == "INVALID_INPUT"


@pytest.mark.req("API-4", "WR-1")
def test_changes_wrapper_and_upper_case_ops_are_accepted() -> None:
    wrapped = parse_changes({"changes": [{**_create("a"), "op": "CREATE"}]})
    assert [c.op for c in wrapped] == ["create"]


# ---------------------------------------------------------------- validate_plan


@pytest.mark.req("WR-1")
def test_empty_batch_and_duplicate_ids_are_invalid_input() -> None:
    assert _code([])[0] == "INVALID_INPUT"
    code, message = _code([_create("a"), _create("a")])
    assert code == "INVALID_INPUT" and "'a'" in message


@pytest.mark.req("WR-2")
def test_create_and_revise_need_text_links_and_sources() -> None:
    for drop in ("links", "sources"):
        raw = _create("a")
        if drop == "links":
            del raw["content"]["links"]
        else:
            del raw["sources"]
        code, message = _code([raw])
        assert code == "INVALID_INPUT" and "'a'" in message and "WR-2" in message
    revise = {"id": "r", "op": "revise", "target": {"atomId": "x", "rev": 1}, "sources": []}
    assert _code([revise]) == ("INVALID_INPUT", "change 'r': content.text is required")


@pytest.mark.req("WR-3")
def test_target_rules() -> None:
    code, message = _code([_create("c", target={"atomId": "x", "rev": 1})])
    assert code == "INVALID_INPUT" and "create takes no target" in message
    code, message = _code([{"id": "r", "op": "retire"}])
    assert code == "INVALID_INPUT" and "WR-3" in message
    twice = [
        {"id": "r1", "op": "retire", "target": {"atomId": "x", "rev": 1}},
        {**_create("r2"), "op": "revise", "target": {"atomId": "x", "rev": 1}},
    ]
    code, message = _code(twice)
    assert (
        code == "INVALID_INPUT" and "'r2'" in message and "one change per logical atom" in message
    )


@pytest.mark.req("WR-5")
def test_local_target_must_name_a_change_of_this_batch() -> None:
    links = [{"role": "r", "target": {"local": "elsewhere"}}]
    code, message = _code([_create("a", content={"text": "t", "links": links})])
    assert code == "INVALID_INPUT" and "'elsewhere'" in message
    ok = [
        _create("a", content={"text": "t", "links": [{"role": "r", "target": {"local": "b"}}]}),
        _create("b", content={"text": "t", "links": [{"role": "r", "target": {"local": "a"}}]}),
    ]
    assert len(validate_plan(parse_changes(ok), HUMAN, LIMITS).changes) == 2


@pytest.mark.req("WR-7")
@pytest.mark.parametrize(
    ("raw", "limit"),
    [
        ([_create(f"c{i}") for i in range(5)], "changes"),
        ([_create("a", "ééééééé")], "bodyBytes"),  # 7 characters, 14 bytes
        ([_create("a", content={"text": "t", "links": [SELF_LINK] * 3})], "links"),
        ([_create("a", sources=[{"uri": "u"}] * 3)], "sources"),
        ([_create(f"c{i}", "x" * 9) for i in range(3)], "writeBytes"),
    ],
)  # fmt: skip
def test_configured_limits_are_budget_exceeded(raw: list[dict[str, Any]], limit: str) -> None:
    with pytest.raises(GraphsvcError) as info:
        validate_plan(parse_changes(raw), HUMAN, LIMITS)
    assert info.value.code == "BUDGET_EXCEEDED" and info.value.details["limit"] == limit


@pytest.mark.req("WR-7")
def test_limits_are_inclusive() -> None:
    raw = [_create("a", "é" * 5), _create("b", "x" * 10)]  # 10 + 10 bytes
    assert len(validate_plan(parse_changes(raw), HUMAN, LIMITS).changes) == 2


@pytest.mark.req("TOK-2")
def test_agent_changes_need_a_token_humans_do_not() -> None:
    code, message = _code([_create("a", input="tok"), _create("b")], AGENT)
    assert code == "TOKEN_INVALID" and "'b'" in message
    assert validate_plan(parse_changes([_create("b")]), HUMAN, LIMITS).changes


@pytest.mark.req("WR-2")
def test_reversed_citation_range_is_invalid_input() -> None:
    src = {"uri": "u", "range": {"start": 4, "end": 3, "unit": "char"}}
    code, message = _code([_create("a", sources=[src])])
    assert code == "INVALID_INPUT" and "'a'" in message


@pytest.mark.req("WR-7", "WR-6")
def test_core_models_built_without_the_edge_are_checked_too() -> None:
    with pytest.raises(GraphsvcError) as info:
        validate_plan([Change(id="a", op="delete")], HUMAN, LIMITS)  # type: ignore[arg-type]
    assert info.value.code == "INVALID_INPUT"
    bad_at = Change("a", "create", text="t", links=(LinkSpec("r", local="a", at="x"),), sources=())  # type: ignore[arg-type]
    with pytest.raises(GraphsvcError) as info:
        validate_plan([bad_at], HUMAN, LIMITS)
    assert info.value.code == "INVALID_INPUT" and info.value.details == {"changeId": "a"}


# ------------------------------------------------------------------ fingerprint


def _reorder(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _reorder(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_reorder(v) for v in value]
    return value


PLAN = [
    _create(
        "a",
        content={
            "text": "body",
            "links": [
                {"role": "r", "target": {"ref": {"atomId": "x", "rev": 1}, "orderKey": "1"}},
                {"role": "s", "target": {"local": "b", "required": True}},
            ],
        },
        sources=[{"uri": "u", "version": "2", "range": {"start": 0, "end": 1, "unit": "byte"}}],
    ),
    {"id": "b", "op": "retire", "target": {"atomId": "y", "rev": 3}},
]


@pytest.mark.req("IDEM-1")
def test_fingerprint_is_independent_of_json_key_order() -> None:
    assert list(_reorder(PLAN)[0]) != list(PLAN[0])  # really another key order
    assert plan_fingerprint(parse_changes(PLAN)) == plan_fingerprint(parse_changes(_reorder(PLAN)))
    assert plan_fingerprint(parse_changes(PLAN)).startswith("sha256:")


@pytest.mark.req("IDEM-1")
def test_fingerprint_is_semantic_defaults_spelled_out_are_the_same_plan() -> None:
    explicit = _reorder(PLAN)
    explicit[0]["content"]["links"][0]["target"]["at"] = "observed"
    explicit[0]["content"]["links"][0]["target"]["required"] = False
    bare = [dict(PLAN[0]), PLAN[1]]
    bare[0]["content"] = {
        "text": "body",
        "links": [
            {"role": "r", "target": {"atomId": "x", "rev": 1, "orderKey": "1"}},
            PLAN[0]["content"]["links"][1],
        ],
    }
    fp = plan_fingerprint(parse_changes(PLAN))
    assert plan_fingerprint(parse_changes(explicit)) == fp
    assert plan_fingerprint(parse_changes(bare)) == fp


@pytest.mark.req("IDEM-1")
@pytest.mark.parametrize(
    "mutate",
    [
        lambda p: p[0]["content"].__setitem__("text", "other body"),
        lambda p: p[0]["content"]["links"].reverse(),
        lambda p: p[0]["content"]["links"][0]["target"].__setitem__("at", "logical"),
        lambda p: p[0]["sources"].clear(),
        lambda p: p[1]["target"].__setitem__("rev", 4),
        lambda p: p.reverse(),
        lambda p: p[0].__setitem__("id", "renamed"),
    ],
)
def test_fingerprint_changes_with_the_meaning(mutate: Any) -> None:
    changed = copy.deepcopy(PLAN)
    mutate(changed)
    if changed[0]["id"] == "renamed":
        changed[0]["content"]["links"][1]["target"]["local"] = "b"
    assert plan_fingerprint(parse_changes(changed)) != plan_fingerprint(parse_changes(PLAN))


@pytest.mark.req("IDEM-1")
def test_tokens_enter_the_fingerprint_by_their_declared_inputs() -> None:
    one = parse_changes([_create("a", input="token-one")])
    two = parse_changes([_create("a", input="token-two")])
    assert plan_fingerprint(one) != plan_fingerprint(two)
    same = {"a": "sha256:inputs"}
    assert plan_fingerprint(one, same) == plan_fingerprint(two, same)
    assert plan_fingerprint(one, same) != plan_fingerprint(one, {"a": "sha256:other"})


# -------------------------------------------------------------------- citations


@pytest.mark.req("WR-2")
def test_unit_lengths() -> None:
    text = "héllo\nwörld\n!"
    assert (unit_length(text, "byte"), unit_length(text, "char"), unit_length(text, "line")) == (
        15,
        13,
        3,
    )


@pytest.mark.req("WR-2", "WR-7")
@pytest.mark.parametrize(("unit", "end"), [("byte", 15), ("char", 13), ("line", 3)])
def test_range_must_lie_inside_the_cited_text(unit: str, end: int) -> None:
    text = "héllo\nwörld\n!"
    digest = text_digest(text)
    check_range(
        text, digest, {"uri": "atom:x", "start": 0, "end": end, "unit": unit}, change_id="c"
    )
    with pytest.raises(GraphsvcError) as info:
        check_range(
            text, digest, {"uri": "atom:x", "start": 0, "end": end + 1, "unit": unit}, change_id="c"
        )
    assert info.value.code == "INVALID_INPUT" and "'c'" in info.value.message


@pytest.mark.req("WR-2", "WR-7")
def test_digest_must_match_the_cited_text() -> None:
    text = "cited"
    check_range(
        text, text_digest(text), {"uri": "atom:x", "digest": text_digest(text)}, change_id="c"
    )
    with pytest.raises(GraphsvcError) as info:
        check_range(
            text,
            text_digest(text),
            {"uri": "atom:x", "digest": text_digest("other")},
            change_id="c",
        )
    assert info.value.code == "INVALID_INPUT" and "digest" in info.value.message
