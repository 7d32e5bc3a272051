"""Worker of ``bench/ab_graph_walk.py``: typed graph walks with the graphsvc of one tree.

Run as ``python bench/ab_walk_worker.py TREE`` with ``TREE`` first on ``PYTHONPATH``
and ``GRAPHSVC_NEO4J_URI`` set; it refuses to run when ``graphsvc`` was imported from
anywhere else. It builds the service the way that tree's ``graphsvc serve`` does
(``graphsvc.runtime.build_service``, serve's collector policy), walks with that tree's
``bench/graph_walk.py`` (the real schema in process, one event loop with the served
executor), answers one JSON line ``{"ms", "atoms"}`` per request line
``{"subject", "start", "page"}`` on stdin, and times only the walk.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ab_worker import graphsvc_of, say  # this script's folder: sys.path[0]


def main() -> int:
    tree = Path(sys.argv[1]).resolve()
    where = graphsvc_of(tree)
    if where is None:
        return 1
    from bench.graph_walk import set_gc, typed_walk
    from graphsvc.api.graph_ids import encode_cursor
    from graphsvc.api.schema import build_schema
    from graphsvc.core.binding import Binding
    from graphsvc.keys.auth import AuthTable
    from graphsvc.runtime import build_service
    from graphsvc.settings import Settings

    settings = Settings.from_env()
    built = build_service(settings, progress=lambda _msg: None)
    service = built[0] if isinstance(built, tuple) else built
    schema = build_schema(settings)
    auth = AuthTable({})
    tokens: dict[str, str] = {}
    loop = asyncio.new_event_loop()
    loop.set_default_executor(ThreadPoolExecutor(settings.http.worker_threads))
    set_gc("frozen")  # what `graphsvc serve` runs
    say({"ready": True, "graphsvc": str(where)})
    for line in sys.stdin:
        request = json.loads(line)
        subject = request["subject"]
        if subject not in tokens:
            tokens[subject] = uuid.uuid4().hex
            auth.add(tokens[subject], Binding(subject, "default", "human", "bench"))
        cursor = encode_cursor("atoms", request["start"])
        t0 = time.perf_counter()
        data = typed_walk(loop, service, schema, auth, tokens[subject], cursor, request["page"])
        ms = (time.perf_counter() - t0) * 1000
        say({"ms": ms, "atoms": [e["node"]["atomId"] for e in data["atoms"]["edges"]]})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
