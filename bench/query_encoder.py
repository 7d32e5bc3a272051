"""Benchmark: the query encoder — fp32 ONNX vs int8-quantised ONNX (vs PyTorch).

Run::

    .venv/bin/python bench/query_encoder.py [--model all-MiniLM-L6-v2] [--data DIR]
                                            [--json PATH]

No database: the LoCoMo turns (``../shared/data/locomo``, one text per turn as
``bench/quality.py`` writes them) are embedded once with the shipped body path; each
question is then embedded by every query encoder and the turns of its conversation
ranked by exact cosine, so the only difference between two rows is the query vector.

It prints, per encoder (each as the service builds it: ``get_embedder(model,
precision)``, one intra-op thread, the model's query prefix): query latency p50/p95 and
CPU p50 (one text per call, as a search embeds it); the cosine between its vector and the fp32 ONNX
vector of the same question (min and mean); recall@5/@10 of the questions' evidence
by cosine alone, with the paired margin against fp32 ONNX (95 % bootstrap interval).
The int8 graph is ``onnxruntime.quantization.quantize_dynamic`` (weights int8, per
channel) of the exported fp32 graph, written next to it in the cache.

Writes ``bench/results/query_encoder.json`` (or ``--json``) with the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.quality import (  # noqa: E402
    Scores,
    load_conversations,
    paired_margin,
    percentile,
)
from graphsvc.embed.sentence import embed_query, get_embedder  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--model", default="all-MiniLM-L6-v2")
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "locomo"))
    ap.add_argument("--torch", action="store_true", help="also time the PyTorch query path")
    ap.add_argument("--json", default=str(ROOT / "bench" / "results" / "query_encoder.json"))
    args = ap.parse_args(argv)
    load_before = list(os.getloadavg())
    convs = load_conversations(args.data)
    # Each precision's embedder as the service builds it: the query path is
    # embed_query (one onnxruntime thread, the model's query prefix); bodies are
    # always the fp32 graph, so both rank the same stored vectors.
    encoders = {kind: get_embedder(args.model, kind) for kind in ("fp32", "int8")}
    embedder = encoders["fp32"]
    t = time.perf_counter()
    bodies = {c.name: np.asarray(embedder.embed([x.text for x in c.turns])) for c in convs}
    print(f"embedded {sum(len(c.turns) for c in convs)} turns in {time.perf_counter() - t:.1f} s")
    rows: dict[str, Any] = {}
    vectors: dict[str, dict[str, np.ndarray]] = {}
    scores: dict[str, Scores] = {}
    for kind, encoder in encoders.items():
        name = f"{kind} x1"
        ms: list[float] = []
        cpu: list[float] = []
        vecs: dict[str, np.ndarray] = {}
        for c in convs:
            out = []
            for q in c.questions:
                t, c0 = time.perf_counter(), time.thread_time()
                out.append(embed_query(encoder, q.text))
                ms.append((time.perf_counter() - t) * 1000)
                cpu.append((time.thread_time() - c0) * 1000)
            vecs[c.name] = np.asarray(out)
        vectors[kind] = vecs
        rows[name] = {
            "p50Ms": round(percentile(ms, 50), 2),
            "p95Ms": round(percentile(ms, 95), 2),
            "cpuP50Ms": round(percentile(cpu, 50), 2),
        }
        print(f"{name:>8}: p50 {rows[name]['p50Ms']} ms, p95 {rows[name]['p95Ms']} ms")
    if args.torch and getattr(embedder, "_embed_torch", None) is not None:
        import torch

        torch.set_num_threads(1)
        ms = []
        for c in convs:
            for q in c.questions:
                t = time.perf_counter()
                embedder._embed_torch([q.text])  # type: ignore[attr-defined]
                ms.append((time.perf_counter() - t) * 1000)
        rows["torch x1"] = {
            "p50Ms": round(percentile(ms, 50), 2),
            "p95Ms": round(percentile(ms, 95), 2),
        }
        print(f"torch x1: p50 {rows['torch x1']['p50Ms']} ms, p95 {rows['torch x1']['p95Ms']} ms")
    for kind, vecs in vectors.items():
        s = Scores()
        for c in convs:
            sims = vecs[c.name] @ bodies[c.name].T
            for qi, q in enumerate(c.questions):
                order = np.argsort(-sims[qi])
                s.add([c.turns[i].dia_id for i in order[:10]], q)
        scores[kind] = s
    agree = np.concatenate(
        [np.sum(vectors["int8"][c.name] * vectors["fp32"][c.name], axis=1) for c in convs]
    )
    report = {
        "model": args.model,
        "questions": len(scores["fp32"].r5),
        "latency": rows,
        "cosineInt8VsFp32": {
            "min": round(float(agree.min()), 5),
            "mean": round(float(agree.mean()), 5),
        },
        "recall": {k: v.summary() for k, v in scores.items()},
        "pairedInt8MinusFp32": paired_margin(scores["int8"], scores["fp32"]),
        "loadAverage": [load_before, list(os.getloadavg())],
    }
    print(
        f"cosine(int8, fp32) min {report['cosineInt8VsFp32']['min']}, mean "
        f"{report['cosineInt8VsFp32']['mean']}; recall@5/@10 by cosine: fp32 "
        f"{report['recall']['fp32']['recall@5']}/{report['recall']['fp32']['recall@10']}, int8 "
        f"{report['recall']['int8']['recall@5']}/{report['recall']['int8']['recall@10']}; "
        f"int8 − fp32 {report['pairedInt8MinusFp32']}"
    )
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"load average {report['loadAverage']}; wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
