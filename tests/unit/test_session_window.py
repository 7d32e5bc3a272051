"""What an MCP session showed its model, as pure values (SPEC §17, MCP-1…MCP-3)."""

from __future__ import annotations

import pytest

from graphsvc.core.session_window import (
    Shown,
    arguments_digest,
    declared,
    merged,
    shown_in_read,
    shown_in_search,
    written,
)
from graphsvc.core.write_models import AtomRef


@pytest.mark.req("MCP-1")
def test_the_window_is_most_recent_first_each_entry_once_and_bounded() -> None:
    first = [Shown("revision", "a", 1, True), Shown("manifest", "m1")]
    window = merged(first, [], 10)
    # Seen again (now as an old revision): it moves to the front in its latest form.
    window = merged([Shown("revision", "b", 2, True), Shown("revision", "a", 1, False)], window, 10)
    assert window == ["r:h:2:b", "r:o:1:a", "m:m1"]
    assert merged([Shown("revision", f"x{i}", 1, True) for i in range(5)], window, 3) == [
        "r:h:1:x0",
        "r:h:1:x1",
        "r:h:1:x2",
    ]
    # An atom id with a colon survives the stored form.
    assert Shown.parse(Shown("revision", "ns:id", 3, True).key()) == Shown(
        "revision", "ns:id", 3, True
    )


@pytest.mark.req("MCP-2")
def test_a_window_declares_manifests_basis_and_the_heads_as_watches() -> None:
    window = ["w:h:1:mine", "r:h:2:b", "r:o:1:a", "m:m1", "junk"]
    d = declared(window)
    assert d.presentations == ("m1",)
    assert d.basis == (AtomRef("b", 2), AtomRef("a", 1))
    assert d.watches == (AtomRef("b", 2),)
    assert d.written == (AtomRef("mine", 1),)


def test_answers_become_presentations() -> None:
    search = {"hits": [{"atom": {"atomId": "a", "rev": 2, "head": True}}, {"atom": {}}]}
    assert shown_in_search(search) == [Shown("revision", "a", 2, True)]
    items = [
        {"ref": {"atomId": "r", "rev": 1}, "role": "root", "blocked": False},
        {"ref": {"atomId": "q", "rev": 3}, "role": "required", "blocked": False},
        {"ref": {"atomId": "z", "rev": 1}, "role": "root", "blocked": True},
    ]
    assert shown_in_read("m", items) == [
        Shown("manifest", "m"),
        Shown("revision", "r", 1, True),
        Shown("revision", "q", 3, False),
    ]
    out = {"changes": {"c": {"atomId": "n", "rev": 1, "head": True}}}
    assert written(out) == [Shown("written", "n", 1, True)]


@pytest.mark.req("MCP-2")
def test_the_payload_digest_is_of_the_arguments_whatever_their_key_order() -> None:
    one = arguments_digest({"text": "x", "about": [{"atomId": "a", "role": "r"}]})
    two = arguments_digest({"about": [{"role": "r", "atomId": "a"}], "text": "x"})
    assert one == two and one.startswith("sha256:") and len(one) == 71
    assert arguments_digest({"text": "y"}) != one
