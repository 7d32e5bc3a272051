"""Availability models: how past use turns into the usage value ``u`` (SPEC §5, AV-1..3).

A model is pure: ``update(state, event) -> state`` folds one accepted use into a small
JSON state, and ``value(state, evaluated_at) -> float`` reads ``u`` at a given time.
The caller always passes the time in; nothing here reads a clock.

The store owns everything around the model (AV-3): one state per subject, policy and
revision, ``eventId`` deduplication and the explicit reset. The service calls models
only through :func:`checked_update` and :func:`checked_value`, which enforce AV-2 and
turn every misbehaviour into :class:`~graphsvc.errors.AvailabilityModelError`.
"""

from __future__ import annotations

import inspect
import json
import math
from dataclasses import dataclass
from numbers import Real
from typing import Any, Final, Protocol, runtime_checkable

from graphsvc.errors import AvailabilityModelError, InvalidInputError

__all__ = [
    "DAY_S",
    "MAX_STATE_BYTES",
    "AdaptiveUseModel",
    "AvailabilityModel",
    "UsageEvent",
    "canonical_state_bytes",
    "checked_update",
    "checked_value",
]

DAY_S: Final = 86_400.0
MAX_STATE_BYTES: Final = 1024

State = dict[str, Any]


@dataclass(frozen=True)
class UsageEvent:
    """One accepted model response that used a revision (AV-4).

    Attributes:
        event_id: the host's id for the use; the store deduplicates on it (AV-3).
        at: when the use happened, epoch seconds.
        weight: how much use this event counts for (≥ 0, default 1).
    """

    event_id: str
    at: float
    weight: float = 1.0

    def __post_init__(self) -> None:
        if not isinstance(self.event_id, str) or not self.event_id:
            raise InvalidInputError("event_id must be a non-empty string")
        if not math.isfinite(self.at):
            raise InvalidInputError(f"event time must be finite, got {self.at!r}")
        if not math.isfinite(self.weight) or self.weight < 0.0:
            raise InvalidInputError(f"event weight must be finite and ≥ 0, got {self.weight!r}")


@runtime_checkable
class AvailabilityModel(Protocol):
    """What an availability model must offer (AV-1). Both methods are synchronous."""

    @property
    def id(self) -> str:
        """Stable name of the model, stored next to each state."""
        ...

    def update(self, state: State, event: UsageEvent) -> State:
        """Return the state after ``event``; ``{}`` is the state of a never-used revision."""
        ...

    def value(self, state: State, evaluated_at: float) -> float:
        """Return ``u ≥ 0`` for ``state`` at time ``evaluated_at`` (epoch seconds)."""
        ...


@dataclass(frozen=True)
class AdaptiveUseModel:
    """Default model ``adaptiveUse``: decayed use mass with a growing half-life (§15).

    State (JSON, ~90 bytes): ``{"mass": M, "halfLifeS": H, "lastAt": T, "uses": N}``.

    * ``{}`` means never used: ``value = 0``.
    * First use (weight ``w`` at time ``t``): ``M = w``, ``H = 7 days`` (604,800 s),
      ``T = t``, ``N = 1``.
    * Each later use at ``t ≥ T``: ``M ← min(1e6, M·2^(−(t−T)/H) + w)``, then
      ``H ← min(365 days, 1.5·H)``, ``T ← t``, ``N ← N + 1``. So after ``N`` uses the
      half-life is ``7·1.5^(N−1)`` days: 7, 10.5, 15.75, … ; it reaches the 365-day
      (31,536,000 s) cap at the 11th use (7·1.5¹⁰ ≈ 403.6 days).
    * A late event (``t < T``, e.g. delivered out of order) is decayed to ``T``
      instead: ``M ← min(1e6, M + w·2^(−(T−t)/H))``; ``H`` grows as for any use and
      ``T`` stays.
    * ``value(state, e) = M·2^(−max(0, e−T)/H)``: at most the mass cap 1e6, and an
      evaluation before the last use reads ``M`` rather than extrapolating backwards.

    Repeated use makes a revision both more available and slower to be forgotten; the
    bounded half-life and mass keep one hot revision from dominating forever.

    Attributes:
        initial_half_life_s: half-life after the first use (7 days).
        max_half_life_s: upper bound of the half-life (365 days).
        growth: factor applied to the half-life on each repeated use (1.5).
        mass_cap: upper bound of the use mass (1e6).
    """

    initial_half_life_s: float = 7.0 * DAY_S
    max_half_life_s: float = 365.0 * DAY_S
    growth: float = 1.5
    mass_cap: float = 1e6

    def __post_init__(self) -> None:
        h0, hmax = self.initial_half_life_s, self.max_half_life_s
        if not (math.isfinite(h0) and math.isfinite(hmax) and 0.0 < h0 <= hmax):
            raise InvalidInputError("half-lives must be finite with 0 < initial ≤ max")
        if not (math.isfinite(self.growth) and self.growth >= 1.0):
            raise InvalidInputError("half-life growth must be finite and ≥ 1")
        if not (math.isfinite(self.mass_cap) and self.mass_cap > 0.0):
            raise InvalidInputError("mass cap must be finite and > 0")

    @property
    def id(self) -> str:
        """Always ``"adaptiveUse"``."""
        return "adaptiveUse"

    def update(self, state: State, event: UsageEvent) -> State:
        """Fold one use into ``state``; see the class docstring for the numbers.

        Raises:
            AvailabilityModelError: if ``state`` is not ``{}`` and not a state this
                model wrote.
        """
        if not state:
            return {
                "mass": min(self.mass_cap, float(event.weight)),
                "halfLifeS": self.initial_half_life_s,
                "lastAt": float(event.at),
                "uses": 1,
            }
        mass, half_life, last_at, uses = self._read(state)
        if event.at >= last_at:
            mass = mass * _decay(event.at - last_at, half_life) + event.weight
            last_at = float(event.at)
        else:
            mass = mass + event.weight * _decay(last_at - event.at, half_life)
        return {
            "mass": min(self.mass_cap, mass),
            "halfLifeS": min(self.max_half_life_s, half_life * self.growth),
            "lastAt": last_at,
            "uses": uses + 1,
        }

    def value(self, state: State, evaluated_at: float) -> float:
        """``u`` at ``evaluated_at``: the use mass decayed since the last use.

        Raises:
            AvailabilityModelError: if ``state`` is not ``{}`` and not a state this
                model wrote.
        """
        if not state:
            return 0.0
        mass, half_life, last_at, _ = self._read(state)
        return min(self.mass_cap, mass * _decay(max(0.0, evaluated_at - last_at), half_life))

    def _read(self, state: State) -> tuple[float, float, float, int]:
        try:
            mass = float(state["mass"])
            half_life = float(state["halfLifeS"])
            last_at = float(state["lastAt"])
            uses = int(state["uses"])
        except (KeyError, TypeError, ValueError) as exc:
            raise AvailabilityModelError(f"not an {self.id} state: {state!r}") from exc
        if not (
            math.isfinite(mass)
            and mass >= 0.0
            and math.isfinite(half_life)
            and half_life > 0.0
            and math.isfinite(last_at)
            and uses >= 1
        ):
            raise AvailabilityModelError(f"corrupt {self.id} state: {state!r}")
        return mass, half_life, last_at, uses


def _decay(elapsed_s: float, half_life_s: float) -> float:
    return float(2.0 ** (-elapsed_s / half_life_s))


def canonical_state_bytes(state: object) -> bytes:
    """The canonical JSON of a state: sorted keys, no spaces, UTF-8, no NaN.

    This is the form that is stored and that the 1 KiB limit of AV-2 measures.

    Args:
        state: the state to encode.

    Returns:
        The encoded bytes.

    Raises:
        AvailabilityModelError: if ``state`` is not a JSON object that survives the
            round trip unchanged (tuples, non-string keys, NaN, sets … all fail).
    """
    if not isinstance(state, dict):
        raise AvailabilityModelError(f"state must be a JSON object, got {type(state).__name__}")
    try:
        text = json.dumps(
            state, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
        # json.dumps quietly turns int keys into strings and tuples into lists; a
        # state that would not read back equal is one the store could not restore.
        same = json.loads(text) == state
    except (TypeError, ValueError, RecursionError) as exc:
        raise AvailabilityModelError(f"state is not JSON-serialisable: {exc}") from exc
    if not same:
        raise AvailabilityModelError("state does not survive a JSON round trip unchanged")
    return text.encode("utf-8")


def _checked_state(state: object, what: str) -> State:
    raw = canonical_state_bytes(state)
    if len(raw) > MAX_STATE_BYTES:
        raise AvailabilityModelError(
            f"{what} state is {len(raw)} bytes, over the {MAX_STATE_BYTES}-byte limit",
            details={"bytes": len(raw), "limit": MAX_STATE_BYTES},
        )
    result: State = json.loads(raw)
    return result


def _refuse_awaitable(result: object, model: AvailabilityModel, method: str) -> None:
    if inspect.isawaitable(result):
        # Close a coroutine we will never await so Python does not warn about it.
        if inspect.iscoroutine(result):
            result.close()
        raise AvailabilityModelError(
            f"availability model {model.id!r}.{method} returned an awaitable; "
            "models must be synchronous (AV-1)"
        )


def checked_update(model: AvailabilityModel, state: State, event: UsageEvent) -> State:
    """Call ``model.update`` under the rules of AV-2.

    The model gets a private copy of ``state`` (decoded from its canonical JSON), so
    it cannot change the caller's.

    Args:
        model: the availability model.
        state: current state (``{}`` if never used).
        event: the accepted use.

    Returns:
        The new state, as a fresh JSON-equal dict of at most 1 KiB canonical JSON.

    Raises:
        AvailabilityModelError: if either state is not JSON or over 1 KiB, the model
            raises (chained as ``__cause__``), or it returns an awaitable.
    """
    before = _checked_state(state, "input")
    try:
        result: object = model.update(before, event)
    except AvailabilityModelError:
        raise
    except Exception as exc:
        raise AvailabilityModelError(
            f"availability model {model.id!r}.update failed: {exc!r}"
        ) from exc
    _refuse_awaitable(result, model, "update")
    return _checked_state(result, "returned")


def checked_value(model: AvailabilityModel, state: State, at: float) -> float:
    """Call ``model.value`` under the rules of AV-2.

    Args:
        model: the availability model.
        state: the revision's state (``{}`` if never used).
        at: evaluation time, epoch seconds.

    Returns:
        ``u``, a finite float ≥ 0.

    Raises:
        InvalidInputError: if ``at`` is not finite.
        AvailabilityModelError: if the state is not JSON or over 1 KiB, the model
            raises (chained as ``__cause__``), returns an awaitable, a non-number,
            NaN, infinity, or a negative value.
    """
    if not math.isfinite(at):
        raise InvalidInputError(f"evaluation time must be finite, got {at!r}")
    before = _checked_state(state, "input")
    try:
        result: object = model.value(before, float(at))
    except AvailabilityModelError:
        raise
    except Exception as exc:
        raise AvailabilityModelError(
            f"availability model {model.id!r}.value failed: {exc!r}"
        ) from exc
    _refuse_awaitable(result, model, "value")
    # bool is an int subclass; True as a usage value is a bug, not a number.
    if isinstance(result, bool) or not isinstance(result, Real):
        raise AvailabilityModelError(
            f"availability model {model.id!r}.value returned {type(result).__name__}, not a number"
        )
    u = float(result)
    if not math.isfinite(u) or u < 0.0:
        raise AvailabilityModelError(
            f"availability model {model.id!r}.value returned {u!r}; "
            "it must be finite and ≥ 0 (AV-2)"
        )
    return u
