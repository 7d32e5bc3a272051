"""Bounds on outside values (core/input_bounds.py) and the CLI's terminal-safe text."""

from __future__ import annotations

import argparse
import json
from datetime import datetime

import pytest

from graphsvc.cli.output import emit, print_error, terminal_safe
from graphsvc.core.input_bounds import excerpt, first_wide_int, int64_literal_ok, is_int64
from graphsvc.core.instants import as_of_instant, utc_z, with_utc_z
from graphsvc.errors import GraphsvcError, InvalidInputError, NotFoundError
from graphsvc.inputs.text_input import check_json_values

OSC_TITLE = "before\x1b]0;owned\x07after"


@pytest.mark.req("API-3")
def test_the_64_bit_range_and_its_edges() -> None:
    assert is_int64(2**63 - 1) and is_int64(-(2**63)) and is_int64(0)
    assert not is_int64(2**63) and not is_int64(-(2**63) - 1) and not is_int64(True)
    assert int64_literal_ok("-9223372036854775808") and int64_literal_ok("9223372036854775807")
    assert not int64_literal_ok("9223372036854775808")
    assert not int64_literal_ok("9" * 10_000)  # refused without int() (4,300-digit limit)
    assert first_wide_int({"a": [1, True, {"b": 2**64}]}, "row 3") == "row 3.a[2].b"
    assert first_wide_int({"a": [1, 2**63 - 1, False]}) is None


@pytest.mark.req("API-3", "MCP-1")
def test_json_values_refuse_a_wide_integer_with_its_path() -> None:
    check_json_values({"rev": 2**63 - 1, "ok": True}, 10)
    with pytest.raises(InvalidInputError) as info:
        check_json_values({"changes": [{"rev": 2**63}]}, 10, "arguments")
    assert info.value.code == "INVALID_INPUT"
    assert info.value.details == {"path": "arguments.changes[0].rev"}


@pytest.mark.req("API-3")
@pytest.mark.parametrize(
    "text", ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-00:01", "0001-01-01T00:59:59+01:00"]
)
def test_an_instant_outside_the_datetime_range_is_invalid_input(text: str) -> None:
    with pytest.raises(InvalidInputError) as info:
        as_of_instant(datetime.fromisoformat(text), "asOf")
    assert "asOf" in info.value.message and info.value.details == {"argument": "asOf"}
    assert as_of_instant(datetime.fromisoformat("0001-01-01T01:00:00+01:00")) == (
        "0001-01-01T00:00:00.000000+00:00"
    )


def test_stored_instants_leave_with_z_fixed_width_in_time_order() -> None:
    stored = ["2026-12-07T14:25:05+00:00", "2026-12-07T14:25:05.000001+00:00"]
    assert [utc_z(t) for t in stored] == [
        "2026-12-07T14:25:05.000000Z",
        "2026-12-07T14:25:05.000001Z",
    ]
    # Stored order and time order agree, and so does the order of what leaves.
    assert sorted(utc_z(t) for t in reversed(stored)) == [utc_z(t) for t in stored]
    # Both spellings read back as the same instant (inputs take either).
    assert all(datetime.fromisoformat(utc_z(t)) == datetime.fromisoformat(t) for t in stored)
    for other in (None, 3.5, "observed", "2026-12-07T14:25:05+01:00", "x2026-12-07T14:25:05+00:00"):
        assert utc_z(other) == other


def test_a_json_answer_changes_instants_under_time_keys_only() -> None:
    t = "2026-12-07T14:25:05.5+00:00"
    doc = {
        "createdAt": t,
        "asOf": t,
        "dueBy": t,
        "text": t,
        "links": [{"at": "observed", "role": "cites"}],
        "changes": [{"at": t, "committedAt": None, "evaluatedAt": 1.5}],
    }
    out = with_utc_z(doc)
    z = "2026-12-07T14:25:05.500000Z"
    assert (out["createdAt"], out["asOf"], out["dueBy"], out["text"]) == (z, z, z, t)
    assert out["links"] == doc["links"]
    assert out["changes"] == [{"at": z, "committedAt": None, "evaluatedAt": 1.5}]
    assert doc["createdAt"] == t  # the given document is left as it was


@pytest.mark.req("API-4")
def test_cli_json_prints_instants_with_z(capsys: pytest.CaptureFixture[str]) -> None:
    emit(argparse.Namespace(json=True), {"lastCompactAt": "2026-12-07T14:25:05+00:00"}, "x")
    assert json.loads(capsys.readouterr().out) == {"lastCompactAt": "2026-12-07T14:25:05.000000Z"}


@pytest.mark.req("API-3")
def test_an_excerpt_is_at_most_64_characters_of_the_input() -> None:
    assert excerpt("short") == "short"
    cut = excerpt("x" * 3_000_000)
    assert cut.startswith("x" * 64) and "x" * 65 not in cut and "3000000 characters" in cut


@pytest.mark.req("API-4")
def test_human_output_escapes_control_characters_and_json_stays_exact(
    capsys: pytest.CaptureFixture[str],
) -> None:
    text = f"{OSC_TITLE}\n\ttab\r\nline\x9b2J\x00\x7f\rover"
    emit(argparse.Namespace(json=False), {"text": text}, text)
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out and "\x00" not in out
    assert "\\x1b]0;owned\\x07after" in out and "\\x9b2J" in out and "\\x0dover" in out
    assert "\n\ttab\nline" in out  # newline and tab kept; CR LF is a newline
    emit(argparse.Namespace(json=True), {"text": text}, text)
    assert '"text": "before\\u001b]0;owned\\u0007after' in capsys.readouterr().out
    emit(argparse.Namespace(json=True), {"text": text}, text)
    assert json.loads(capsys.readouterr().out) == {"text": text}


@pytest.mark.req("API-4")
def test_a_human_error_line_escapes_control_characters(
    capsys: pytest.CaptureFixture[str],
) -> None:
    error: GraphsvcError = NotFoundError(f"atom {OSC_TITLE} does not exist")
    print_error(argparse.Namespace(json=False), error)
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\\x1b]0;owned\\x07" in err
    assert terminal_safe("plain ünïcode\n") == "plain ünïcode\n"
