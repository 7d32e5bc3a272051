"""Benchmark: what bounds graph-sensitive recall on the team corpus (bench/team.py).

Run::

    .venv/bin/python bench/team_bound.py [--json OUT]

The same corpus and questions as ``bench/team.py``. It asks how far *any* ranking that
keeps the text order within a neighbourhood could go, by reranking the text order
(graphsvc's own match over the same candidates: the shipped settings at propagation 0
with the entity weights 0) in three ways, each a simple rule with no scoring of its
own:

- ``cluster-first, top-k anchors``: the one-hop neighbourhood of each of the text
  order's first k atoms (its declared links both ways, and every head that shares an
  entity mentioned by at most ``GRAPHSVC_ENTITY_MAX_DEGREE`` heads with it) moves
  ahead of everything else, in text order: what a perfect graph boost of the best
  text hits could do;
- ``cluster-first, true anchor``: the same around the question's evidence atom that
  text ranks best (an oracle: it knows the answer's anchor), one hop and two hops;
- ``match + w x best neighbour's match``: each atom's text match plus ``w`` times the
  best match among its one-hop neighbours (the same neighbourhoods). A maximum, not a
  linear spread: outside ACT-3, which divides what a node passes on among its edges.
  Measured to see what a rule of that shape would give, not shipped;
- ``graphsvc`` (shipped) and the text order itself, for reference.

If the first is far below the second, the limit is which anchor to trust, not how far
activation travels from it. Writes ``bench/results/team_bound.json`` and prints one
table.
"""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import BenchNeo4j  # noqa: E402
from graphsvc.core.binding import Binding  # noqa: E402
from graphsvc.core.requests import SearchRequest  # noqa: E402
from graphsvc.embed import get_embedder  # noqa: E402
from graphsvc.runtime import service_for  # noqa: E402
from graphsvc.seed import load_team_corpus  # noqa: E402
from graphsvc.settings import ENTITY_WEIGHTS_OFF  # noqa: E402
from graphsvc.tokenizer import get_tokenizer  # noqa: E402

QUESTIONS = ROOT / "bench" / "data" / "team_questions.json"
TEXT_ONLY = {"propagation": 0.0, **ENTITY_WEIGHTS_OFF}


class Neighbourhoods:
    """One-hop neighbours of the subject's atoms (local ids): links both ways, and
    heads sharing an entity of at most ``max_degree`` mentions."""

    def __init__(
        self,
        links: Iterable[tuple[str, str]],
        mentions: Iterable[tuple[str, str]],
        max_degree: int,
    ) -> None:
        self.adj: dict[str, set[str]] = defaultdict(set)
        for s, d in links:
            self.adj[s].add(d)
            self.adj[d].add(s)
        by_entity: dict[str, set[str]] = defaultdict(set)
        for atom, key in mentions:
            by_entity[key].add(atom)
        for heads in by_entity.values():
            if len(heads) <= max_degree:
                for h in heads:
                    self.adj[h] |= heads - {h}

    def around(self, anchors: Iterable[str], hops: int) -> set[str]:
        seen = set(anchors)
        frontier = set(seen)
        for _ in range(hops):
            frontier = {n for a in frontier for n in self.adj[a]} - seen
            seen |= frontier
        return seen


def cluster_first(order: Sequence[str], cluster: set[str]) -> list[str]:
    """``order`` with the members of ``cluster`` moved ahead, each part in its order."""
    return [a for a in order if a in cluster] + [a for a in order if a not in cluster]


def best_neighbour(
    order: Sequence[str], match: dict[str, float], hood: Neighbourhoods, weight: float
) -> list[str]:
    """``order`` reranked by each atom's match plus ``weight`` × the best match among its
    one-hop neighbours: a maximum, not ACT-3's linear spread, so a neighbour's whole
    match reaches every atom next to it however many there are, and a hub gains no
    more than any other atom from its many neighbours."""
    score = {
        a: match.get(a, 0.0) + weight * max((match.get(n, 0.0) for n in hood.adj[a]), default=0.0)
        for a in order
    }
    return sorted(order, key=lambda a: (-score[a], order.index(a)))


def recall(ranked: Sequence[str], evidence: Sequence[str], k: int) -> float:
    return len(set(ranked[:k]) & set(evidence)) / len(evidence)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--json", default=str(ROOT / "bench" / "results" / "team_bound.json"))
    args = p.parse_args(argv)
    doc = json.loads(QUESTIONS.read_text(encoding="utf-8"))
    neo = BenchNeo4j("team-bound")
    db = neo.database()
    try:
        db.apply_schema()
        embedder, tokenizer = get_embedder(), get_tokenizer()
        settings = neo.settings
        shipped = service_for(settings, db, embedder, tokenizer)
        text = service_for(settings.with_(**TEXT_ONLY), db, embedder, tokenizer)
        subject = f"team-{uuid.uuid4().hex[:8]}"
        loaded = load_team_corpus(shipped, subject=subject)
        db.driver.execute_query("CALL db.awaitIndexes(600)", database_=db.database)
        local = {a: name for name, a in loaded["ids"].items()}
        links, _, _ = db.driver.execute_query(
            "MATCH (r:Revision:Current {subject: $s})-[:LINK]->(t) "
            "OPTIONAL MATCH (t)-[:HEAD]->(h:Current) "
            "RETURN r.atomId AS s, coalesce(h.atomId, t.atomId) AS d",
            {"s": subject},
            database_=db.database,
        )
        mentions, _, _ = db.driver.execute_query(
            "MATCH (r:Revision:Current {subject: $s})-[:MENTIONS]->(e:Entity) "
            "RETURN r.atomId AS a, e.key AS k",
            {"s": subject},
            database_=db.database,
        )
        hood = Neighbourhoods(
            ((local.get(r["s"], r["s"]), local.get(r["d"], r["d"])) for r in links),
            ((local.get(r["a"], r["a"]), r["k"]) for r in mentions),
            settings.ranking.entity_max_degree,
        )
        binding = Binding(subject, "default", "human", "bench")
        rows: dict[str, list[list[float]]] = defaultdict(list)
        top1_evidence = 0
        for q in doc["questions"]:
            ev = q["evidence"]

            def ranked(service: Any, limit: int, question: str = q["question"]) -> list[str]:
                hits = service.search(binding, SearchRequest(question, limit=limit)).hits
                return [local.get(h.atom.atom_id, h.atom.atom_id) for h in hits]

            text_hits = text.search(binding, SearchRequest(q["question"], limit=1000)).hits
            match = {
                local.get(h.atom.atom_id, h.atom.atom_id): float(h.breakdown["match"])
                for h in text_hits
            }
            order = list(match)
            order += [a for a in local.values() if a not in order]  # never a candidate
            top1_evidence += order[0] in ev
            anchor = min(ev, key=order.index)
            systems = {
                "text order (graphsvc at propagation 0)": order,
                "graphsvc (shipped)": ranked(shipped, 10),
                **{
                    f"cluster-first, top-{k} anchors": cluster_first(
                        order, hood.around(order[:k], 1)
                    )
                    for k in (1, 2, 3)
                },
                **{
                    f"match + {w:g} x best neighbour's match (not linear)": best_neighbour(
                        order, match, hood, w
                    )
                    for w in (0.5, 1.0)
                },
                **{
                    f"cluster-first, true anchor, {h} hop(s)": [
                        anchor,
                        *cluster_first([a for a in order if a != anchor], hood.around([anchor], h)),
                    ]
                    for h in (1, 2)
                },
            }
            for name, r in systems.items():
                rows[name].append([recall(r, ev, 5), recall(r, ev, 10)])
        report = {
            "benchmark": "team_bound",
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "questions": len(doc["questions"]),
            "topTextHitIsEvidence": top1_evidence,
            "entityMaxDegree": settings.ranking.entity_max_degree,
            "systems": {
                n: {
                    "recall@5": round(float(np.mean([x[0] for x in v])), 3),
                    "recall@10": round(float(np.mean([x[1] for x in v])), 3),
                }
                for n, v in rows.items()
            },
        }
        out = Path(args.json)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=1) + "\n")
        print(f"{'system':48s} {'R@5':>6s} {'R@10':>6s}")
        for n, s in report["systems"].items():
            print(f"{n:48s} {s['recall@5']:6.3f} {s['recall@10']:6.3f}")
        print(f"the top text hit is evidence for {top1_evidence} of {len(doc['questions'])}")
        print(f"wrote {out}")
    finally:
        db.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
