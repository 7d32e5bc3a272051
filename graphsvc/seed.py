"""Loads the demo corpus in ``seed/demo.json`` through the public write operation.

The corpus is written as one batch by a human binding of subject ``demo`` with a
fixed idempotencyKey, so loading it again is a repeated write (IDEM-2), not a copy.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from graphsvc.core.binding import Binding
from graphsvc.inputs import parse_changes
from graphsvc.service import Service

__all__ = ["DEMO_CORPUS", "load_demo_corpus"]

DEMO_CORPUS = Path(__file__).resolve().parents[1] / "seed" / "demo.json"


def load_demo_corpus(service: Service, path: Path = DEMO_CORPUS) -> dict[str, Any]:
    """Write the demo corpus; returns ``{subject, atoms, operationId, repeated}``."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    binding = Binding(doc["subject"], "default", "human", "seed")
    outcome = service.write(binding, parse_changes(doc["changes"]), doc.get("idempotencyKey"))
    return {
        "subject": doc["subject"],
        "atoms": len(outcome.changes),
        "operationId": outcome.operation_id,
        "repeated": outcome.repeated,
    }
