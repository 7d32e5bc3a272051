"""The typed graph's loader helpers: answers without awaiting when the value is known."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from strawberry.dataloader import DataLoader

from graphsvc.api.graph_loaders import MISSING, cached, then


def _loader() -> tuple[DataLoader[str, Any], list[list[str]]]:
    batches: list[list[str]] = []

    async def load(keys: list[str]) -> list[Any]:
        batches.append(list(keys))
        return [None if k == "gone" else k.upper() for k in keys]

    return DataLoader(load_fn=load), batches


def test_then_converts_at_once_when_the_load_is_done() -> None:
    async def run() -> Any:
        loader, batches = _loader()
        loader.prime("a", "A")
        out = then(loader.load("a"), lambda v: f"<{v}>")
        return out, batches

    out, batches = asyncio.run(run())
    assert out == "<A>"  # a plain value: no future, no round trip
    assert batches == []


def test_then_gives_a_future_of_the_converted_value_when_the_load_is_pending() -> None:
    async def run() -> Any:
        loader, batches = _loader()
        pending = [then(loader.load(k), lambda v: f"<{v}>") for k in ("a", "b", "gone")]
        assert all(isinstance(p, asyncio.Future) and not p.done() for p in pending)
        return [await p for p in pending], batches

    values, batches = asyncio.run(run())
    assert values == ["<A>", "<B>", "<None>"]
    assert batches == [["a", "b", "gone"]]  # still one batch


def test_then_delivers_the_load_error_and_the_conversion_error_to_the_field() -> None:
    async def failing(keys: list[str]) -> list[Any]:
        raise RuntimeError("store down")

    def bad(value: Any) -> Any:
        raise ValueError("cannot convert")

    async def run() -> None:
        down: DataLoader[str, Any] = DataLoader(load_fn=failing)
        with pytest.raises(RuntimeError, match="store down"):
            await then(down.load("a"), str)
        loader, _ = _loader()
        with pytest.raises(ValueError, match="cannot convert"):
            await then(loader.load("a"), bad)

    asyncio.run(run())


def test_cached_tells_a_known_value_a_known_absence_and_nothing_known_apart() -> None:
    async def run() -> Any:
        loader, _ = _loader()
        loader.prime("a", "A")
        loader.prime("gone", None)
        pending = loader.load("b")
        seen = (cached(loader, "a"), cached(loader, "gone"), cached(loader, "b"))
        await pending
        return (*seen, cached(loader, "b"), cached(loader, "never"))

    a, gone, b_pending, b_done, never = asyncio.run(run())
    assert (a, gone, b_done) == ("A", None, "B")
    assert b_pending is MISSING and never is MISSING
