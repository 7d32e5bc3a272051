"""Benchmark: what ``graphsvc compact`` costs (time, downtime, disk) against corpus size.

Run::

    .venv/bin/python bench/erasure.py [--sizes 10000,100000] [--purges 20]
                                      [--embed pooled] [--json PATH]

For each size, in a managed Neo4j of its own (a fresh temporary state folder):
the corpus of ``bench/read.py`` is bulk-loaded (atoms with two links each,
embeddings from the real model; ``--embed pooled`` as there), ``--purges`` atoms
are purged through the purge use case, then

- **baseline**: a plain restart of the managed Neo4j (stop, start), the downtime
  every procedure that needs the store offline pays at least;
- **compact**: ``graphsvc.ops.compact.compact`` (what ``graphsvc compact`` runs):
  phases (copy, index population, swap, overwrite+unlink), downtime, data folder
  before and after, the peak extra disk (the new store beside the old);
- **scan**: the erasure scanner over the instance folder (raw, UTF-16, Lucene).

It prints ``downtime / restart`` per size and writes ``bench/results/erasure.json``.
The machine's load average is recorded: on a shared machine it explains much of
the spread.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import random
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from graphsvc.core.binding import Binding  # noqa: E402  (path set up just above)
from graphsvc.embed import get_embedder  # noqa: E402
from graphsvc.localdb import LocalNeo4j  # noqa: E402
from graphsvc.localdb.erasure_scan import scan  # noqa: E402
from graphsvc.ops.compact import compact, data_bytes  # noqa: E402
from graphsvc.runtime import service_for  # noqa: E402
from graphsvc.settings import Settings  # noqa: E402
from graphsvc.store.connection import Database  # noqa: E402
from graphsvc.tokenizer import get_tokenizer  # noqa: E402

_spec = importlib.util.spec_from_file_location("bench_read", ROOT / "bench" / "read.py")
assert _spec is not None and _spec.loader is not None
bench_read = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_read)


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def one_size(n: int, args: argparse.Namespace, embedder: Any, tokenizer: Any) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="graphsvc-bench-erasure-") as tmp:
        state = Path(tmp)
        settings = Settings.from_env(state_dir=state, neo4j_uri="", neo4j_port=_free_port())
        if "GRAPHSVC_NEO4J_HEAP" not in os.environ:
            settings = settings.with_(neo4j_heap="1g")
        local = LocalNeo4j(settings, name="bench", auth=False, progress=_say)
        inst = local.start(die_with_parent=True)
        try:
            db = Database(inst.uri, "neo4j", "", "neo4j")
            db.apply_schema()
            service = service_for(settings, db, embedder, tokenizer)
            subject = f"bench-erasure-{n}"
            t0 = time.perf_counter()
            load = bench_read.load(service, subject, n, args.seed, args.embed, args.pool)
            ids = [
                r["a"]
                for r in db.driver.execute_query(
                    "MATCH (a:Atom {subject: $s}) RETURN a.atomId AS a",
                    {"s": subject},
                    database_="neo4j",
                )[0]
            ]
            rng = random.Random(args.seed)
            human = Binding(subject, "default", "human", "bench", may_purge=True)
            t1 = time.perf_counter()
            for atom_id in rng.sample(ids, args.purges):
                service.purge(human, atom_id)
            purge_s = (time.perf_counter() - t1) / args.purges
            db.close()
            _say(f"bench: {n} atoms loaded in {time.perf_counter() - t0:.0f} s")

            t2 = time.perf_counter()
            local.stop()
            local.start(die_with_parent=True)
            restart_s = time.perf_counter() - t2

            report = compact(settings, name="bench", batch=args.batch, progress=_say)
            t3 = time.perf_counter()
            found = scan(
                local.home, [uuid.uuid4().hex for _ in range(20)], lucene_lib=local.lib_dir()
            )
            scan_s = time.perf_counter() - t3
        finally:
            local.stop()
        return {
            "atoms": n,
            "purges": args.purges,
            "purgeSecondsEach": round(purge_s, 3),
            "load": {k: round(v, 1) for k, v in load.items()},
            "restartSeconds": round(restart_s, 2),
            "compact": report.to_json(),
            "extraDiskBytesPeak": report.bytes_after,  # the new store sits beside the old
            "downtimeOverRestart": round(report.downtime_seconds / restart_s, 2),
            "scan": {
                "files": found.files,
                "bytes": found.bytes,
                "luceneFolders": found.lucene_folders,
                "seconds": round(scan_s, 2),
                "hits": len(found.hits),
            },
            "loadAverage": os.getloadavg(),
            "dataBytesAfter": data_bytes(local.home),
        }


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _write(args: argparse.Namespace, runs: list[dict[str, Any]]) -> None:
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    doc = {
        "benchmark": "erasure",
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "embed": args.embed,
        "runs": runs,
    }
    out.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"wrote {out}", flush=True)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="10000,100000")
    p.add_argument("--purges", type=int, default=20)
    p.add_argument("--batch", type=int, default=2000)
    p.add_argument("--embed", choices=("real", "pooled"), default="pooled")
    p.add_argument("--pool", type=int, default=2000)
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("--json", default=str(ROOT / "bench" / "results" / "erasure.json"))
    args = p.parse_args()
    embedder, tokenizer = get_embedder(), get_tokenizer()
    runs = []
    for n in (int(s) for s in args.sizes.split(",") if s.strip()):
        r = one_size(n, args, embedder, tokenizer)
        runs.append(r)
        c = r["compact"]
        print(
            f"{n:>7} atoms: compact downtime {c['downtimeSeconds']:.0f} s "
            f"(copy {c['copySeconds']:.0f} s, indexes {c['indexSeconds']:.0f} s, "
            f"overwrite {c['shredSeconds']:.1f} s) = {r['downtimeOverRestart']:.1f}x a restart "
            f"({r['restartSeconds']:.0f} s); data {c['bytesBefore'] / 2**20:.0f} MB -> "
            f"{c['bytesAfter'] / 2**20:.0f} MB; scan {r['scan']['seconds']:.1f} s",
            flush=True,
        )
        _write(args, runs)  # after every size: a long run that is stopped keeps its sizes
    return 0


if __name__ == "__main__":
    sys.exit(main())
