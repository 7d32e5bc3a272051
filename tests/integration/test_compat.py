"""No v0.8 compatibility layer (CUR-4) and no legacy manifest projection (MAN-2)."""

from __future__ import annotations

import base64
import json

import pytest

from graphsvc.api.schema import build_schema
from graphsvc.core.binding import Binding
from graphsvc.core.requests import ReadRequest, SearchRequest
from graphsvc.errors import CursorInvalidError
from graphsvc.inputs.models import parse_changes
from graphsvc.service import Service
from graphsvc.settings import Settings


@pytest.mark.req("CUR-4")
def test_schema_has_no_edit_or_draft_compatibility_layer(test_settings: Settings) -> None:
    sdl = build_schema(test_settings).as_str()
    assert "edit(" not in sdl
    assert "Draft" not in sdl


@pytest.mark.req("CUR-4")
def test_old_style_cursors_are_rejected(service: Service, human: Binding) -> None:
    service.write(
        human,
        parse_changes(
            [
                {
                    "id": f"c{i}",
                    "op": "create",
                    "content": {"text": f"note {i}", "links": []},
                    "sources": [],
                }
                for i in range(3)
            ]
        ),
    )
    old = base64.urlsafe_b64encode(json.dumps({"offset": 1, "v": "0.8"}).encode()).decode()
    # Old cursors do not parse as this version's: rejected as invalid (CUR-4).
    for cursor in (old, "v08:page=2", "gcu0." + old):
        with pytest.raises(CursorInvalidError):
            service.search(human, SearchRequest("note", limit=1, cursor=cursor))
        with pytest.raises(CursorInvalidError):
            service.read(human, ReadRequest("note", 200, limit=1, cursor=cursor))


@pytest.mark.req("MAN-2")
def test_manifest_carries_no_independent_legacy_fields(service: Service, human: Binding) -> None:
    service.write(
        human,
        parse_changes(
            [
                {
                    "id": "a",
                    "op": "create",
                    "content": {"text": "legacy check", "links": []},
                    "sources": [],
                }
            ]
        ),
    )
    manifest = service.read(human, ReadRequest("legacy check", 200)).manifest
    assert manifest["contractVersion"] == 2
    assert {"acquisition", "presentation", "watches"} <= set(manifest)
    assert not {"reads", "currentReads", "observations"} & set(manifest)
