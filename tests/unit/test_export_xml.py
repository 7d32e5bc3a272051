"""GraphML text escaping of the analysts' export (issue 17): what XML 1.0 forbids."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from hypothesis import given
from hypothesis import strategies as st

from graphsvc.ops.export import _xml_text, unescape_xml_value, xml_safe


def test_xml_safe_escapes_only_what_xml_forbids_and_reverses() -> None:
    for text in ["plain", "tab\tnewline\n", "a\\b", "\x00\x1f\ufffe", "\\u0007\u0007"]:
        safe, escaped = xml_safe(text)
        assert escaped == any(ch in text for ch in "\x00\x1f\ufffe\u0007")
        if escaped:
            assert unescape_xml_value(safe) == text
            assert "\x00" not in safe and "\u0007" not in safe
        else:
            assert safe == text


@given(st.text(alphabet=st.characters(codec=None, exclude_categories=())))
def test_any_text_survives_an_xml_round_trip(text: str) -> None:
    safe, escaped = xml_safe(text)
    # Written the way the GraphML writer writes element text, then parsed by an XML parser.
    parsed = ET.fromstring(f"<d>{_xml_text(safe)}</d>".encode()).text or ""
    assert (unescape_xml_value(parsed) if escaped else parsed) == text
