"""Benchmark: graphsvc's activation solve vs personalised ``networkx.pagerank``.

Run::

    .venv/bin/python bench/activation.py [--sizes 1000,10000,100000] [--json PATH]

For each size it builds a seeded random retrieval graph (average out-degree ~4 links,
each link a forward and a reverse edge as ACT-7 prescribes, a few matched seeds in
``b``), then times, on the same graph and the same tolerance:

* ours: :func:`graphsvc.core.activation.propagate` from edge arrays (includes
  building ``T``), median of several runs;
* baseline: ``networkx.pagerank`` on a prebuilt ``DiGraph`` (includes networkx's own
  conversion to a SciPy matrix), median of fewer runs.

It prints a table with the ratio baseline/ours and whether both rank the top 10 the
same, and writes the numbers to ``bench/results/activation.json``.

How the two problems map onto each other. Ours solves ``a = b + p·Pᵀa`` where ``P``
is the row-normalised weight matrix. Personalised PageRank solves
``x = α·Pᵀx + (1−α)·v`` (plus dangling-node redistribution). With ``α = p`` and
``v = b/Σb`` the solutions are proportional, ``x = (1−p)·a/Σb``, so after
normalising both give the same scores — as long as no node that holds mass is
dangling. Every linked node has out-edges here (each link adds a reverse edge) and
the seeds are drawn among linked nodes, so the only dangling nodes are isolated ones
that never receive mass.

Tolerance. Ours stops at ``‖a − b − Tᵀa‖₁/‖a‖₁ ≤ tol``. networkx stops when
``Σ|x_new − x_old| < N·tol_nx`` with ``Σx = 1``; that L1 change is exactly the
normalised residual of ``x_old``, so ``tol_nx = tol / N`` is the same target.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
import scipy
import scipy.sparse as sp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from graphsvc.core.activation import (  # noqa: E402  (path set up just above)
    DEFAULT_PROPAGATION,
    DEFAULT_TOL,
    build_edges,
    propagate,
    usage_boost,
)

OUT_DEGREE = 4
SEEDS = 8
TOP_K = 10
# The spec's evaluation work limit (500,000) is sized for retrieval graphs of ≤ 512
# nodes; the benchmark measures the solver itself, so it lifts the limit.
UNLIMITED_WORK = 10**15


def make_graph(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Random links (no self-links) expanded by ``build_edges``, and a seeded ``b``."""
    rng = np.random.default_rng(seed)
    n_links = OUT_DEGREE * n
    heads = rng.integers(0, n, n_links)
    # Offset in 1..n-1 keeps tails distinct from heads without rejection sampling.
    tails = (heads + rng.integers(1, n, n_links)) % n
    links = list(zip(heads.tolist(), tails.tolist(), ["link"] * n_links, strict=True))
    src, dst, w = build_edges(n, links)
    linked = np.flatnonzero(np.bincount(src, minlength=n) > 0)
    seeds = rng.choice(linked, size=min(SEEDS, linked.size), replace=False)
    m = np.zeros(n)
    m[seeds] = rng.uniform(0.3, 1.0, seeds.size)
    u = np.zeros(n)
    u[seeds] = rng.uniform(0.0, 20.0, seeds.size)
    return src, dst, w, usage_boost(m, u)


def to_networkx(n: int, src: np.ndarray, dst: np.ndarray, w: np.ndarray) -> nx.DiGraph:
    """The same weighted graph as a DiGraph; parallel edges summed as our matrix does."""
    summed = sp.coo_matrix((w, (src, dst)), shape=(n, n)).tocsr().tocoo()
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_weighted_edges_from(
        zip(summed.row.tolist(), summed.col.tolist(), summed.data.tolist(), strict=True)
    )
    return g


def timed(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    """Median wall time in ms over ``repeats`` runs (after one warm-up), and one result."""
    result = fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), result


def top_k(scores: np.ndarray, k: int) -> list[int]:
    order: list[int] = np.argsort(-scores, kind="stable")[:k].tolist()
    return order


def run_size(n: int, seed: int, p: float, tol: float) -> dict[str, Any]:
    src, dst, w, b = make_graph(n, seed)
    ours_repeats = 9 if n <= 10_000 else 5
    nx_repeats = 3 if n <= 10_000 else 1

    ours_ms, res = timed(
        lambda: propagate(n, src, dst, w, b, propagation=p, tol=tol, max_work=UNLIMITED_WORK),
        ours_repeats,
    )

    g = to_networkx(n, src, dst, w)
    personalization = {int(i): float(b[i]) for i in np.flatnonzero(b)}
    nx_ms, pr = timed(
        lambda: nx.pagerank(
            g, alpha=p, personalization=personalization, tol=tol / n, max_iter=10_000
        ),
        nx_repeats,
    )
    # How much of networkx's time is its graph→matrix conversion (not its solver).
    convert_ms, _ = timed(lambda: nx.to_scipy_sparse_array(g, weight="weight"), nx_repeats)

    nx_scores = np.array([pr[i] for i in range(n)])
    ours_top, nx_top = top_k(res.scores, TOP_K), top_k(nx_scores, TOP_K)
    return {
        "nodes": n,
        "edges": int(res.edges),
        "ours_ms": round(ours_ms, 3),
        "networkx_ms": round(nx_ms, 3),
        "networkx_convert_ms": round(convert_ms, 3),
        "ratio_networkx_over_ours": round(nx_ms / ours_ms, 2),
        "solver": res.solver,
        "iterations": res.iterations,
        "residual": res.residual,
        "converged": res.converged,
        "top10_same_order": ours_top == nx_top,
        "top10_overlap": len(set(ours_top) & set(nx_top)),
        "max_abs_score_diff": float(np.abs(res.scores - nx_scores).max()),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--json", default=str(ROOT / "bench" / "results" / "activation.json"))
    parser.add_argument("--seed", type=int, default=20240601)
    parser.add_argument("--propagation", type=float, default=DEFAULT_PROPAGATION)
    parser.add_argument("--tol", type=float, default=DEFAULT_TOL)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]

    rows = []
    header = (
        f"{'nodes':>8} {'edges':>8} {'ours ms':>9} {'nx ms':>10} {'nx conv':>9} "
        f"{'nx/ours':>8} {'iters':>5} {'top10':>10}"
    )
    print(header)
    print("-" * len(header))
    for n in sizes:
        row = run_size(n, args.seed + n, args.propagation, args.tol)
        rows.append(row)
        agree = "same" if row["top10_same_order"] else f"{row['top10_overlap']}/10"
        print(
            f"{row['nodes']:>8} {row['edges']:>8} {row['ours_ms']:>9.2f} "
            f"{row['networkx_ms']:>10.2f} {row['networkx_convert_ms']:>9.2f} "
            f"{row['ratio_networkx_over_ours']:>7.1f}x {row['iterations']:>5} {agree:>10}",
            flush=True,
        )

    report = {
        "benchmark": "activation propagate vs networkx.pagerank (personalised)",
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "params": {
            "propagation": args.propagation,
            "tol": args.tol,
            "networkx_tol": "tol / nodes (networkx compares L1 change to N·tol)",
            "out_degree_links": OUT_DEGREE,
            "seeds": SEEDS,
            "seed": args.seed,
        },
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "numpy": np.__version__,
            "scipy": scipy.__version__,
            "networkx": nx.__version__,
            "loadavg_at_end": list(os.getloadavg()),
        },
        "results": rows,
    }
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
