"""Benchmark: where graphsvc's missed LoCoMo evidence ranks, and whether its words could find it.

Run::

    .venv/bin/python bench/locomo_misses.py [--data DIR] [--json OUT]

The conversations of ``bench/quality.py`` are loaded the same way (each in a subject
of its own, over HTTP) and every question is searched with the shipped settings
(``search(limit: 100)``, in process). Per LoCoMo category it counts where each
evidence turn ranks (1–10, 11–20, 21–50, 51–100, beyond) and, per band, the share of
evidence turns that hold a **distinctive term of the question**: an analysed term
(graphsvc's own English analysis, ``graphsvc.core.bm25.analyse``) that at most 10 % of
the conversation's turns hold, so that speaker names and words such as "what" or
"did" do not count. Evidence without one can be found only through meaning (the
embedding) or structure, never through the words the question shares with it; the
text-order baseline of the same run (propagation 0, entity weights 0) is printed
beside the shipped ranking.

It bounds what reranking can do: evidence ranked beyond 100 is outside the retrieval
graph of most questions altogether. Writes ``bench/results/locomo_misses.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import BenchNeo4j  # noqa: E402
from bench.quality import (  # noqa: E402
    CATEGORIES,
    DEFAULT_DATA,
    Conversation,
    load_conversation_into,
    load_conversations,
    serve,
)
from bench.team_bound import TEXT_ONLY  # noqa: E402
from graphsvc.core.binding import Binding  # noqa: E402
from graphsvc.core.bm25 import analyse  # noqa: E402
from graphsvc.core.requests import SearchRequest  # noqa: E402
from graphsvc.embed import get_embedder  # noqa: E402
from graphsvc.runtime import service_for  # noqa: E402
from graphsvc.service import Service  # noqa: E402
from graphsvc.tokenizer import get_tokenizer  # noqa: E402

BANDS = ((1, 10), (11, 20), (21, 50), (51, 100), (101, 10**9))
DEPTH = 100
DISTINCTIVE = 0.10  # a term at most this share of a conversation's turns hold


def band_of(rank: int) -> str:
    """``"1-10"`` … ``">100"`` for a 1-based rank (``DEPTH + 1``: not in the top 100)."""
    for lo, hi in BANDS:
        if lo <= rank <= hi:
            return f"{lo}-{hi}" if hi < 10**9 else f">{lo - 1}"
    raise ValueError(rank)


def distinctive_terms(conv: Conversation) -> tuple[dict[str, set[str]], set[str]]:
    """Each turn's analysed terms, and the terms at most ``DISTINCTIVE`` of the turns hold."""
    terms = {t.dia_id: set(analyse(t.text).terms) for t in conv.turns}
    df = Counter(term for ts in terms.values() for term in ts)
    cap = DISTINCTIVE * len(conv.turns)
    return terms, {term for term, n in df.items() if n <= cap}


def ranks(service: Service, binding: Binding, conv: Conversation, text: str) -> dict[str, int]:
    """Each turn's 1-based rank in the top ``DEPTH`` of ``service``'s search."""
    hits = service.search(binding, SearchRequest(text, limit=DEPTH, paged=False)).hits
    return {conv.dia_of[h.atom.atom_id]: i + 1 for i, h in enumerate(hits)}


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default=str(DEFAULT_DATA))
    p.add_argument("--json", default=str(ROOT / "bench" / "results" / "locomo_misses.json"))
    args = p.parse_args(argv)
    convs = load_conversations(args.data)
    neo = BenchNeo4j("locomo-misses")
    db = neo.database()
    # (system, category, band) -> [evidence turns, of them with a distinctive query term]
    counts: dict[tuple[str, int, str], list[int]] = {}
    try:
        db.apply_schema()
        embedder, tokenizer, settings = get_embedder(), get_tokenizer(), neo.settings
        systems = {
            "shipped": service_for(settings, db, embedder, tokenizer),
            "text order": service_for(settings.with_(**TEXT_ONLY), db, embedder, tokenizer),
        }
        live = serve(systems["shipped"])
        run_id = uuid.uuid4().hex[:8]
        for conv in convs:
            conv.subject = f"locomo-misses-{run_id}-{conv.name}"
            token = uuid.uuid4().hex
            binding = Binding(conv.subject, "default", "human", "bench")
            live.auth.add(token, binding)
            load_conversation_into(live, token, conv, db)
            turn_terms, distinctive = distinctive_terms(conv)
            for q in conv.questions:
                asked = set(analyse(q.text).terms) & distinctive
                for name, service in systems.items():
                    rank_of = ranks(service, binding, conv, q.text)
                    for e in q.evidence:
                        row = counts.setdefault(
                            (name, q.category, band_of(rank_of.get(e, DEPTH + 1))), [0, 0]
                        )
                        row[0] += 1
                        row[1] += bool(asked & turn_terms.get(e, set()))
        live.server.should_exit = True
    finally:
        neo.close()
    report = _report(counts)
    for name in ("shipped", "text order"):
        print(f"\n{name}: evidence turns by rank (share with a distinctive question term)")
        print(f"{'category':12}" + "".join(f"{band_of(lo):>16}" for lo, _ in BANDS))
        for label in CATEGORIES.values():
            cells = report["systems"][name][label]
            print(
                f"{label:12}"
                + "".join(
                    f"{c['evidence']:>8} ({c['withTerm']:.2f})" if c["evidence"] else f"{'':>16}"
                    for c in cells.values()
                )
            )
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out}", file=sys.stderr)
    return 0


def _report(counts: dict[tuple[str, int, str], list[int]]) -> dict[str, Any]:
    systems: dict[str, Any] = {}
    for name in ("shipped", "text order"):
        systems[name] = {}
        for cat, label in CATEGORIES.items():
            cells = {}
            for lo, _ in BANDS:
                n, with_term = counts.get((name, cat, band_of(lo)), [0, 0])
                cells[band_of(lo)] = {
                    "evidence": n,
                    "withTerm": round(with_term / n, 3) if n else 0.0,
                }
            systems[name][label] = cells
    return {
        "benchmark": "locomo_misses",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": "bench/locomo_misses.py",
        "depth": DEPTH,
        "distinctiveShare": DISTINCTIVE,
        "systems": systems,
    }


if __name__ == "__main__":
    raise SystemExit(main())
