"""Dump the shipped ranking of the development LoCoMo set, or compare two dumps.

A refactor of the ranking path must not move a single score: this loads every
conversation of ``--data`` (as ``bench/quality.py`` does: one GraphQL ``write`` per
session, each turn ``follows`` the previous one), asks every question with
``search`` (top ``--k``), and writes each answer's turn ids and scores to ten digits.
``--compare A.json B.json`` reads two dumps and says whether they are identical, or
where the first difference is (exit 1).

    .venv/bin/python bench/ranking_dump.py --out bench/results/ranking-before.json
    .venv/bin/python bench/ranking_dump.py --compare bench/results/ranking-before.json \\
        bench/results/ranking-after.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import BenchNeo4j  # noqa: E402
from bench.quality import (  # noqa: E402
    DEFAULT_DATA,
    load_conversation_into,
    load_conversations,
    serve,
)
from graphsvc.core.binding import Binding  # noqa: E402
from graphsvc.core.requests import SearchRequest  # noqa: E402
from graphsvc.embed import get_embedder  # noqa: E402
from graphsvc.embed.models import DEFAULT_MODEL, model_spec  # noqa: E402
from graphsvc.runtime import service_for  # noqa: E402
from graphsvc.tokenizer import get_tokenizer  # noqa: E402


def dump(data: Path, k: int) -> dict[str, Any]:
    """Every question's top ``k`` (turn id, score to ten digits), by conversation."""
    convs = load_conversations(data)
    spec = model_spec(DEFAULT_MODEL)
    neo = BenchNeo4j(f"ranking-dump-{os.getpid()}")
    db = neo.database()
    try:
        db.apply_schema(embedding_dimension=spec.dimension)
        settings = neo.settings.with_(embedding_model=spec.key)
        service = service_for(settings, db, get_embedder(spec.key), get_tokenizer())
        live = serve(service)
        _same_atom_ids()
        out: dict[str, Any] = {}
        for conv in convs:
            conv.subject = f"dump-{conv.name}"
            token = uuid.uuid4().hex
            binding = Binding(conv.subject, "default", "human", "bench")
            live.auth.add(token, binding)
            load_conversation_into(live, token, conv, db)
            answers = []
            for q in conv.questions:
                result = service.search(binding, SearchRequest(q.text, limit=k))
                answers.append(
                    {
                        "question": q.text,
                        "top": [
                            [conv.dia_of[h.atom.atom_id], f"{h.score:.10f}"] for h in result.hits
                        ],
                        "how": _how(result.diagnostics),
                    }
                )
            out[conv.name] = answers
            print(f"{conv.name}: {len(answers)} questions ranked", file=sys.stderr, flush=True)
        live.server.should_exit = True
        return out
    finally:
        neo.close()


def _same_atom_ids() -> None:
    """Give this process's writes the same atom ids as any other dump's.

    Ties in a ranking (two turns with the same fused match) are broken by atomId, and
    atom ids are random: two dumps of one code would differ at such ties. The dump's
    writes run one at a time, so a seeded sequence gives every turn the same id in
    every run (the write path's ``uuid.uuid4`` only; nothing else is touched).
    """
    import random
    import types

    import graphsvc.ops.write as write_path

    rng = random.Random(51)
    write_path.uuid = types.SimpleNamespace(  # type: ignore[assignment]
        uuid4=lambda: uuid.UUID(int=rng.getrandbits(128), version=4)
    )


def _how(diagnostics: dict[str, Any]) -> dict[str, Any]:
    """What a search's diagnostics say about how it ranked (no times): where two dumps
    differ, this says whether the candidates or the graph differed."""
    acq, ev = diagnostics.get("acquisition", {}), diagnostics.get("evaluation", {})
    keep = ("candidates", "semanticCandidates", "lexicalCandidates", "seeds", "vectorMode")
    return {
        **{k: acq.get(k) for k in (*keep, "lexicalMode", "lexicalStatistics")},
        **{k: ev.get(k) for k in ("nodes", "edges", "levels", "truncated", "entities")},
    }


def first_difference(a: dict[str, Any], b: dict[str, Any]) -> str | None:
    """Where two dumps first differ (None: identical)."""
    if sorted(a) != sorted(b):
        return f"conversations differ: {sorted(a)} vs {sorted(b)}"
    for name in sorted(a):
        if len(a[name]) != len(b[name]):
            return f"{name}: {len(a[name])} vs {len(b[name])} questions"
        for i, (x, y) in enumerate(zip(a[name], b[name], strict=True)):
            if x["top"] != y["top"]:
                how = "" if x.get("how") == y.get("how") else f"; how {x['how']} vs {y['how']}"
                return f"{name} question {i} ({x['question']!r}): {x['top']} vs {y['top']}{how}"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default=str(DEFAULT_DATA))
    p.add_argument("--k", type=int, default=20, help="hits per question")
    p.add_argument("--out", default=str(ROOT / "bench" / "results" / "ranking.json"))
    p.add_argument("--compare", nargs=2, metavar=("A", "B"))
    args = p.parse_args(argv)
    if args.compare:
        a, b = (json.loads(Path(f).read_text()) for f in args.compare)
        diff = first_difference(a["rankings"], b["rankings"])
        n = sum(len(v) for v in a["rankings"].values())
        print(
            f"{n} questions: identical to ten digits ({a['commit']} vs {b['commit']})"
            if diff is None
            else f"first difference: {diff}"
        )
        return 0 if diff is None else 1
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    report = {"commit": commit, "k": args.k, "rankings": dump(Path(args.data), args.k)}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
