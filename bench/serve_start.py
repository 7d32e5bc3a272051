"""Benchmark: how long a restarted ``graphsvc serve`` takes to be ready, and its embedder's part.

    .venv/bin/python bench/serve_start.py [--starts 5] [--json OUT]

A managed Neo4j is started once (schema applied by the first start). Then, in turn:

- ``--starts`` times, ``graphsvc serve`` as a subprocess, timed from its start to the
  first ``GET /readyz`` that answers 200, then stopped with SIGINT (what a replica
  restarted after a crash waits for);
- the same number of times, in fresh interpreters, loading the embedder each way:
  ``get_embedder()`` (on the cached ONNX graphs, no PyTorch: what ``serve`` loads) and
  ``SentenceEmbedder()`` (sentence-transformers and torch: what it loaded before), with
  the seconds each took and whether torch was imported.

Prints medians and the ratio of the two embedders; writes ``bench/results/serve_start.json``.
Needs the ONNX graphs cached (any earlier embedding on this machine exported them).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from bench.harness import BenchNeo4j, child_env  # noqa: E402

_LOAD = """
import json, sys, time
t = time.monotonic()
from graphsvc.embed.sentence import {what}
e = {call}
e.embed(["a body to embed"])
print(json.dumps({{"s": time.monotonic() - t, "torch": "torch" in sys.modules,
                  "type": type(e).__name__}}))
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def time_serve(env: dict[str, str]) -> float:
    port = _free_port()
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "graphsvc", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while True:
            if proc.poll() is not None:
                raise SystemExit(f"graphsvc serve exited with {proc.returncode}")
            try:
                if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=2).status_code == 200:
                    return time.monotonic() - started
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)


def time_load(what: str, call: str) -> dict[str, Any]:
    code = _LOAD.format(what=what, call=call)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=600, check=True
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--json", type=Path, default=ROOT / "bench/results/serve_start.json")
    args = parser.parse_args()

    neo = BenchNeo4j("serve-start")
    try:
        env = child_env(neo)
        time_serve(env)  # applies the schema, writes the demo auth file: not counted
        ready = []
        for i in range(args.starts):
            ready.append(time_serve(env))
            print(f"serve ready after {ready[-1]:.2f} s ({i + 1}/{args.starts})", flush=True)
    finally:
        neo.close()
    onnx, full = [], []
    for _ in range(args.starts):
        onnx.append(time_load("get_embedder", "get_embedder()"))
        full.append(time_load("SentenceEmbedder", "SentenceEmbedder()"))
        print(f"embedder: onnx-only {onnx[-1]['s']:.2f} s, full {full[-1]['s']:.2f} s", flush=True)
    med_onnx = statistics.median(r["s"] for r in onnx)
    med_full = statistics.median(r["s"] for r in full)
    out = {
        "benchmark": "serve_start",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "cpus": os.cpu_count(),
        "loadAverage": list(os.getloadavg()),
        "serveReadyS": {"median": round(statistics.median(ready), 2), "all": ready},
        "embedderLoadS": {
            "onnxOnly": {"median": round(med_onnx, 2), "runs": onnx},
            "full": {"median": round(med_full, 2), "runs": full},
            "ratio": round(med_onnx / med_full, 3),
        },
    }
    print(
        f"serve ready: median {out['serveReadyS']['median']} s over {args.starts} starts; "
        f"embedder load (with one embedding): onnx-only {med_onnx:.2f} s "
        f"(torch imported: {any(r['torch'] for r in onnx)}), full {med_full:.2f} s, "
        f"ratio {out['embedderLoadS']['ratio']}"
    )
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
