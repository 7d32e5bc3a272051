"""Availability models and the AV-2 guard rails around them (AV-1..3)."""

from __future__ import annotations

import json
import math
import warnings
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphsvc.core.availability import (
    DAY_S,
    MAX_STATE_BYTES,
    AdaptiveUseModel,
    AvailabilityModel,
    UsageEvent,
    canonical_state_bytes,
    checked_update,
    checked_value,
)
from graphsvc.errors import AvailabilityModelError, InvalidInputError

T0 = 1_700_000_000.0
MODEL = AdaptiveUseModel()


def _ev(at: float, weight: float = 1.0, event_id: str = "e") -> UsageEvent:
    return UsageEvent(event_id=event_id, at=at, weight=weight)


class _Stub:
    """A model whose update/value return whatever the test says."""

    id = "stub"

    def __init__(self, update_result: Any = None, value_result: Any = 0.0) -> None:
        self.update_result = update_result
        self.value_result = value_result

    def update(self, state: dict[str, Any], event: UsageEvent) -> Any:
        return self.update_result

    def value(self, state: dict[str, Any], evaluated_at: float) -> Any:
        return self.value_result


class _Raising:
    id = "raising"

    def update(self, state: dict[str, Any], event: UsageEvent) -> dict[str, Any]:
        raise ZeroDivisionError("boom")

    def value(self, state: dict[str, Any], evaluated_at: float) -> float:
        raise KeyError("mass")


class _Async:
    id = "async"

    async def update(self, state: dict[str, Any], event: UsageEvent) -> dict[str, Any]:
        return {}

    async def value(self, state: dict[str, Any], evaluated_at: float) -> float:
        return 1.0


# --------------------------------------------------------------------------- AV-1


@pytest.mark.req("AV-1")
def test_adaptive_use_model_satisfies_protocol_with_its_id() -> None:
    assert isinstance(MODEL, AvailabilityModel)
    assert MODEL.id == "adaptiveUse"


@pytest.mark.req("AV-1")
def test_empty_state_means_never_used() -> None:
    assert checked_value(MODEL, {}, T0) == 0.0


@pytest.mark.req("AV-1")
def test_usage_event_rejects_bad_fields() -> None:
    with pytest.raises(InvalidInputError):
        UsageEvent(event_id="", at=T0)
    with pytest.raises(InvalidInputError):
        UsageEvent(event_id="e", at=math.nan)
    with pytest.raises(InvalidInputError):
        UsageEvent(event_id="e", at=T0, weight=-1.0)


# --------------------------------------------------------------------------- §15 numbers


@pytest.mark.req("AV-1")
def test_first_use_halves_after_seven_days() -> None:
    s = checked_update(MODEL, {}, _ev(T0))
    assert s["halfLifeS"] == 7 * DAY_S == 604_800.0
    assert checked_value(MODEL, s, T0) == 1.0
    assert checked_value(MODEL, s, T0 + 7 * DAY_S) == pytest.approx(0.5)
    assert checked_value(MODEL, s, T0 + 14 * DAY_S) == pytest.approx(0.25)


@pytest.mark.req("AV-1")
def test_repeated_use_grows_half_life_by_one_and_a_half_up_to_a_year() -> None:
    s: dict[str, Any] = {}
    half_lives = []
    for k in range(14):
        s = checked_update(MODEL, s, _ev(T0 + k, event_id=f"e{k}"))
        half_lives.append(s["halfLifeS"] / DAY_S)
    assert half_lives[:3] == pytest.approx([7.0, 10.5, 15.75])
    assert half_lives[9] == pytest.approx(7 * 1.5**9)  # 10th use: ≈ 268.9 days
    assert half_lives[10:] == [365.0] * 4  # capped from the 11th use on
    assert s["uses"] == 14


@pytest.mark.req("AV-1")
def test_second_use_decays_old_mass_then_adds() -> None:
    s = checked_update(MODEL, {}, _ev(T0))
    s = checked_update(MODEL, s, _ev(T0 + 7 * DAY_S, event_id="e2"))
    assert s["mass"] == pytest.approx(1.5)
    assert s["halfLifeS"] == pytest.approx(10.5 * DAY_S)
    assert checked_value(MODEL, s, T0 + 17.5 * DAY_S) == pytest.approx(0.75)


@pytest.mark.req("AV-1")
def test_mass_is_capped_at_one_million() -> None:
    s = checked_update(MODEL, {}, _ev(T0, weight=5e5))
    s = checked_update(MODEL, s, _ev(T0, weight=5e5, event_id="e2"))
    s = checked_update(MODEL, s, _ev(T0, weight=5e5, event_id="e3"))
    assert s["mass"] == 1e6
    assert checked_value(MODEL, s, T0) == 1e6


@pytest.mark.req("AV-1")
def test_late_event_is_decayed_to_last_use_and_does_not_move_it_back() -> None:
    s = checked_update(MODEL, {}, _ev(T0 + 7 * DAY_S))
    s = checked_update(MODEL, s, _ev(T0, event_id="late"))
    assert s["lastAt"] == T0 + 7 * DAY_S
    assert s["mass"] == pytest.approx(1.5)


@pytest.mark.req("AV-1")
def test_value_before_last_use_does_not_extrapolate_backwards() -> None:
    s = checked_update(MODEL, {}, _ev(T0))
    assert checked_value(MODEL, s, T0 - 30 * DAY_S) == 1.0


@pytest.mark.req("AV-2")
def test_adaptive_use_state_stays_far_below_one_kib() -> None:
    s: dict[str, Any] = {}
    for k in range(50):
        s = checked_update(MODEL, s, _ev(T0 + k * 1e5, weight=1e5, event_id=f"e{k}"))
    assert len(canonical_state_bytes(s)) < 200


@pytest.mark.req("AV-3")
@given(
    st.lists(
        st.tuples(st.floats(min_value=0, max_value=1e9), st.floats(min_value=0, max_value=1e3)),
        max_size=20,
    ),
    st.floats(min_value=0, max_value=2e9),
)
def test_model_is_pure_and_deterministic(events: list[tuple[float, float]], at: float) -> None:
    def run() -> tuple[dict[str, Any], float]:
        s: dict[str, Any] = {}
        for i, (t, w) in enumerate(events):
            s = checked_update(MODEL, s, UsageEvent(f"e{i}", t, w))
        return s, checked_value(MODEL, s, at)

    first, second = run(), run()
    assert first == second
    assert 0.0 <= first[1] <= 1e6


@pytest.mark.req("AV-3")
def test_checked_update_leaves_callers_state_untouched() -> None:
    s = checked_update(MODEL, {}, _ev(T0))
    snapshot = json.dumps(s, sort_keys=True)
    checked_update(MODEL, s, _ev(T0 + 1, event_id="e2"))
    assert json.dumps(s, sort_keys=True) == snapshot


# --------------------------------------------------------------------------- AV-2 failures


@pytest.mark.req("AV-2")
def test_model_exception_propagates_as_availability_error_with_cause() -> None:
    with pytest.raises(AvailabilityModelError) as upd:
        checked_update(_Raising(), {}, _ev(T0))
    assert isinstance(upd.value.__cause__, ZeroDivisionError)
    with pytest.raises(AvailabilityModelError) as val:
        checked_value(_Raising(), {}, T0)
    assert isinstance(val.value.__cause__, KeyError)


@pytest.mark.req("AV-2")
def test_awaitable_result_is_an_error_and_the_coroutine_is_closed() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "coroutine was never awaited" would fail here
        with pytest.raises(AvailabilityModelError, match="awaitable"):
            checked_update(_Async(), {}, _ev(T0))
        with pytest.raises(AvailabilityModelError, match="awaitable"):
            checked_value(_Async(), {}, T0)


@pytest.mark.req("AV-2")
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, -0.5, "1.0", None, True])
def test_bad_value_is_an_error(bad: Any) -> None:
    with pytest.raises(AvailabilityModelError):
        checked_value(_Stub(value_result=bad), {}, T0)


@pytest.mark.req("AV-2")
def test_integer_value_is_accepted_as_float() -> None:
    assert checked_value(_Stub(value_result=3), {}, T0) == 3.0


@pytest.mark.req("AV-2")
def test_oversized_returned_state_is_an_error() -> None:
    big = {"blob": "x" * MAX_STATE_BYTES}
    with pytest.raises(AvailabilityModelError, match="limit") as exc:
        checked_update(_Stub(update_result=big), {}, _ev(T0))
    assert exc.value.details["bytes"] > MAX_STATE_BYTES


@pytest.mark.req("AV-2")
def test_state_of_exactly_one_kib_is_accepted() -> None:
    overhead = len(canonical_state_bytes({"b": ""}))
    state = {"b": "x" * (MAX_STATE_BYTES - overhead)}
    assert len(canonical_state_bytes(state)) == MAX_STATE_BYTES
    assert checked_update(_Stub(update_result=state), {}, _ev(T0)) == state


@pytest.mark.req("AV-2")
def test_oversized_input_state_is_an_error() -> None:
    with pytest.raises(AvailabilityModelError):
        checked_value(MODEL, {"blob": "x" * 2000}, T0)


@pytest.mark.req("AV-2")
@pytest.mark.parametrize(
    "bad_state",
    [
        {"t": {1, 2}},  # set
        {"t": object()},  # arbitrary object
        {"t": math.nan},  # NaN is not JSON
        {1: "int key"},  # json.dumps would silently stringify the key
        {"t": (1, 2)},  # tuple would come back as a list
        ["not", "an", "object"],
        None,
    ],
)
def test_non_json_returned_state_is_an_error(bad_state: Any) -> None:
    with pytest.raises(AvailabilityModelError):
        checked_update(_Stub(update_result=bad_state), {}, _ev(T0))


@pytest.mark.req("AV-2")
def test_corrupt_adaptive_state_is_an_error_not_a_zero() -> None:
    with pytest.raises(AvailabilityModelError):
        checked_value(MODEL, {"mass": "lots"}, T0)
    with pytest.raises(AvailabilityModelError):
        checked_value(MODEL, {"mass": -1.0, "halfLifeS": 1.0, "lastAt": T0, "uses": 1}, T0)


@pytest.mark.req("AV-2")
def test_non_finite_evaluation_time_is_invalid_input() -> None:
    with pytest.raises(InvalidInputError):
        checked_value(MODEL, {}, math.inf)


@pytest.mark.req("AV-1")
def test_model_parameters_are_validated() -> None:
    with pytest.raises(InvalidInputError):
        AdaptiveUseModel(initial_half_life_s=0.0)
    with pytest.raises(InvalidInputError):
        AdaptiveUseModel(initial_half_life_s=10.0, max_half_life_s=5.0)
    with pytest.raises(InvalidInputError):
        AdaptiveUseModel(growth=0.5)
