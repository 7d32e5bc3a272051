"""Worker of ``bench/ab_read.py``: reads with the graphsvc of one source tree.

Run as ``python bench/ab_worker.py TREE`` with ``TREE`` first on ``PYTHONPATH`` and
``GRAPHSVC_NEO4J_URI`` set; it refuses to run when ``graphsvc`` was imported from
anywhere else. It builds the service the way that tree's ``graphsvc serve`` does
(``graphsvc.runtime.build_service``), answers one JSON line
``{"ms", "tokens", "packed"}`` (``packed``: :func:`packed_digest`) per request line
``{"subject", "query", "budget", "depth"}`` on stdin, and times only the ``read``
call (query embedding included).
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any


def say(payload: dict[str, Any]) -> None:
    """One JSON line to the benchmark."""
    sys.stdout.write(json.dumps(payload) + "\n")
    sys.stdout.flush()


def graphsvc_of(tree: Path) -> Path | None:
    """Where ``graphsvc`` was imported from; None (after saying so) when not ``tree``."""
    import graphsvc

    where = Path(graphsvc.__file__).resolve()
    if tree not in where.parents:
        say({"error": f"graphsvc imported from {where}, not from {tree}"})
        return None
    return where


def packed_digest(result: Any) -> str:
    """A digest of what a read packed and recorded: the text, the items in order, the
    selection (token counts), the closure's validation and the manifest without what
    differs by run (its id, the evaluation time); ``--compare``-style identity checks
    compare these between the arms."""
    body = result.to_json()
    manifest = json.loads(json.dumps(body["manifest"]))
    manifest.pop("id", None)
    manifest.get("acquisition", {}).pop("evaluatedAt", None)
    for query in manifest.get("watches", {}).get("queries", []):
        query.pop("evaluatedAt", None)
    kept = {
        "text": body["text"],
        "items": body["items"],
        "selection": body["selection"],
        "validation": body["diagnostics"].get("validation"),
        "manifest": manifest,
    }
    return hashlib.sha256(json.dumps(kept, sort_keys=True).encode()).hexdigest()


def main() -> int:
    tree = Path(sys.argv[1]).resolve()
    where = graphsvc_of(tree)
    if where is None:
        return 1
    from graphsvc.core.binding import Binding
    from graphsvc.runtime import build_service
    from graphsvc.settings import Settings

    try:
        from graphsvc.core.requests import ReadRequest
    except ImportError:  # a tree from before the typed requests (an A/B's base)
        ReadRequest = None  # type: ignore[assignment,misc]

    built = build_service(Settings.from_env(), progress=lambda _msg: None)
    service = built[0] if isinstance(built, tuple) else built
    say({"ready": True, "graphsvc": str(where)})
    for line in sys.stdin:
        request = json.loads(line)
        binding = Binding(request["subject"], "default", "human", "bench")
        t0 = time.perf_counter()
        query, budget, depth = request["query"], request["budget"], request["depth"]
        if ReadRequest is None:
            result = service.read(binding, query, budget, depth=depth)  # type: ignore[call-arg]
        else:
            result = service.read(binding, ReadRequest(query, budget, depth=depth))
        ms = (time.perf_counter() - t0) * 1000
        selection = result.selection  # a dict in a tree from before the typed result
        tokens = selection["tokens"] if isinstance(selection, dict) else selection.tokens
        say({"ms": ms, "tokens": tokens, "packed": packed_digest(result)})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
