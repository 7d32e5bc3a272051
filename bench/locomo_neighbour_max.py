"""Benchmark: the best-neighbour rule of ``bench/team_bound.py`` on LoCoMo.

Run::

    .venv/bin/python bench/locomo_neighbour_max.py [--data DIR] [--json OUT]

``bench/team_bound.py`` found that ranking by an atom's match plus w × the best match
among its one-hop neighbours (a maximum, outside ACT-3's linear solve) ranks the
team questions above the shipped solve. This asks whether that holds where nothing
was tuned to it: the LoCoMo conversations of ``bench/quality.py`` (loaded the same
way, each in a subject of its own, over HTTP), the same questions, and per question

- ``text order``: graphsvc's own match over its candidates (propagation 0, entity
  weights 0), the order the rule reranks;
- ``shipped``: graphsvc's search with the shipped settings (``bench/quality.py``'s
  graphsvc row);
- ``max w=…``: the text order reranked by match + w × the best neighbour's match,
  with the neighbourhoods of ``bench/team_bound.py`` (declared links both ways and
  heads sharing an entity of at most ``GRAPHSVC_ENTITY_MAX_DEGREE`` mentions), and
  ``links only`` (declared links alone).

It prints R@5, R@10 and multi-hop R@10 per system with the paired difference to
``shipped`` and its 95 % bootstrap interval over the questions, and writes
``bench/results/locomo_neighbour_max.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import BenchNeo4j  # noqa: E402
from bench.quality import (  # noqa: E402
    DEFAULT_DATA,
    load_conversation_into,
    load_conversations,
    recall,
    serve,
)
from bench.team_bound import TEXT_ONLY, Neighbourhoods, best_neighbour  # noqa: E402
from graphsvc.core.binding import Binding  # noqa: E402
from graphsvc.core.requests import SearchRequest  # noqa: E402
from graphsvc.embed import get_embedder  # noqa: E402
from graphsvc.runtime import service_for  # noqa: E402
from graphsvc.tokenizer import get_tokenizer  # noqa: E402

WEIGHTS = (0.25, 0.5, 1.0)
MULTI_HOP = 1  # LoCoMo's category of multi-hop questions (bench/quality.py)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default=str(DEFAULT_DATA))
    p.add_argument("--json", default=str(ROOT / "bench" / "results" / "locomo_neighbour_max.json"))
    args = p.parse_args(argv)
    convs = load_conversations(args.data)
    neo = BenchNeo4j("locomo-neighbour-max")
    db = neo.database()
    rows: dict[str, list[tuple[int, float, float]]] = {}
    try:
        db.apply_schema()
        embedder, tokenizer, settings = get_embedder(), get_tokenizer(), neo.settings
        shipped = service_for(settings, db, embedder, tokenizer)
        text = service_for(settings.with_(**TEXT_ONLY), db, embedder, tokenizer)
        live = serve(shipped)
        run_id = uuid.uuid4().hex[:8]
        for conv in convs:
            conv.subject = f"locomo-max-{run_id}-{conv.name}"
            token = uuid.uuid4().hex
            binding = Binding(conv.subject, "default", "human", "bench")
            live.auth.add(token, binding)
            load_conversation_into(live, token, conv, db)
            links, _, _ = db.driver.execute_query(
                "MATCH (r:Revision:Current {subject: $s})-[:LINK]->(t) "
                "OPTIONAL MATCH (t)-[:HEAD]->(h:Current) "
                "RETURN r.atomId AS s, coalesce(h.atomId, t.atomId) AS d",
                {"s": conv.subject},
                database_=db.database,
            )
            mentions, _, _ = db.driver.execute_query(
                "MATCH (r:Revision:Current {subject: $s})-[:MENTIONS]->(e:Entity) "
                "RETURN r.atomId AS a, e.key AS k",
                {"s": conv.subject},
                database_=db.database,
            )
            pairs = [(r["s"], r["d"]) for r in links]
            degree = settings.ranking.entity_max_degree
            hoods = {
                "": Neighbourhoods(pairs, ((r["a"], r["k"]) for r in mentions), degree),
                " links only": Neighbourhoods(pairs, [], degree),
            }
            for q in conv.questions:
                evidence = [conv.atom_of[e] for e in q.evidence]
                hits = text.search(binding, SearchRequest(q.text, limit=1000)).hits
                match = {h.atom.atom_id: float(h.breakdown["match"]) for h in hits}
                order = list(match)
                top = shipped.search(binding, SearchRequest(q.text, limit=10)).hits
                systems: dict[str, list[str]] = {
                    "text order": order,
                    "shipped": [h.atom.atom_id for h in top],
                }
                for w in WEIGHTS:
                    for suffix, hood in hoods.items():
                        systems[f"max w={w:g}{suffix}"] = best_neighbour(order, match, hood, w)
                for name, ranked in systems.items():
                    rows.setdefault(name, []).append(
                        (q.category, recall(ranked, evidence, 5), recall(ranked, evidence, 10))
                    )
    finally:
        db.close()

    base = np.array([r[1:] for r in rows["shipped"]])
    rng = np.random.default_rng(20261204)
    picks = rng.integers(0, len(base), (2000, len(base)))
    report: dict[str, Any] = {}
    print(f"{'system':24s} {'R@5':>7s} {'R@10':>7s} {'MH R@10':>8s}  vs shipped (95 %)")
    for name, values in rows.items():
        arr = np.array([r[1:] for r in values])
        multi = [r[2] for r in values if r[0] == MULTI_HOP]
        diff = arr - base
        boots = diff[picks].mean(axis=1)
        lo, hi = np.percentile(boots, [2.5, 97.5], axis=0)
        report[name] = {
            "recall@5": round(float(arr[:, 0].mean()), 4),
            "recall@10": round(float(arr[:, 1].mean()), 4),
            "multiHopRecall@10": round(float(np.mean(multi)), 4),
            "minusShipped@5": [round(float(x), 4) for x in (diff[:, 0].mean(), lo[0], hi[0])],
            "minusShipped@10": [round(float(x), 4) for x in (diff[:, 1].mean(), lo[1], hi[1])],
        }
        print(
            f"{name:24s} {arr[:, 0].mean():7.4f} {arr[:, 1].mean():7.4f} {np.mean(multi):8.4f}  "
            f"R@5 {diff[:, 0].mean():+.4f} [{lo[0]:+.3f}, {hi[0]:+.3f}]  "
            f"R@10 {diff[:, 1].mean():+.4f} [{lo[1]:+.3f}, {hi[1]:+.3f}]"
        )
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "benchmark": "locomo_neighbour_max",
                "date": datetime.now(UTC).isoformat(timespec="seconds"),
                "questions": len(base),
                "systems": report,
            },
            indent=1,
        )
        + "\n"
    )
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
