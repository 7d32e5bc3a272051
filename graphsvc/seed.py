"""Loads the demo corpora through the public write operation.

The corpora are package data (``graphsvc/seed_data/``, in the wheel too), read with
:mod:`importlib.resources`:

- ``seed_data/demo.json``: 20 atoms about the water cycle, one batch (the original demo).
- ``seed_data/team.json``: the design and incident history of an engineering team (about
  300 atoms; built by ``scripts/build_team_corpus.py``): services with a required
  dependency cycle, ADRs, incidents with causes, timelines and follow-ups, runbooks,
  SLOs, citations with ranges, revisions (one adds a verified citation of a stored
  atom), retirements, a retrospective note atomised with signed lineage (rule
  curator), and a second subject (``demo-partner``).

Every batch is written by a human binding with a fixed idempotencyKey, so loading
again is a repeated write (IDEM-2), not a copy; the atomised note answers "already
atomised" the second time.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib.resources import files
from importlib.resources.abc import Traversable
from typing import Any

from graphsvc.core.binding import Binding
from graphsvc.inputs import parse_changes
from graphsvc.service import Service

__all__ = [
    "DEMO_CORPUS",
    "TEAM_CORPUS",
    "load_demo_corpus",
    "load_seed",
    "load_team_corpus",
    "read_corpus",
]

# Package data (wheel included); a Traversable is a Path in a file-system install.
DEMO_CORPUS: Traversable = files("graphsvc") / "seed_data" / "demo.json"
TEAM_CORPUS: Traversable = files("graphsvc") / "seed_data" / "team.json"

Progress = Callable[[int, int, str], None]


def read_corpus(path: Traversable) -> dict[str, Any]:
    """The parsed JSON document of a corpus file (``DEMO_CORPUS``, ``TEAM_CORPUS``)."""
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return doc


def load_demo_corpus(service: Service, path: Traversable = DEMO_CORPUS) -> dict[str, Any]:
    """Write the demo corpus; returns ``{subject, atoms, operationId, repeated}``."""
    doc = read_corpus(path)
    binding = Binding(doc["subject"], "default", "human", "seed")
    outcome = service.write(binding, parse_changes(doc["changes"]), doc.get("idempotencyKey"))
    return {
        "subject": doc["subject"],
        "atoms": len(outcome.changes),
        "operationId": outcome.operation_id,
        "repeated": outcome.repeated,
    }


def load_team_corpus(
    service: Service,
    path: Traversable = TEAM_CORPUS,
    progress: Progress | None = None,
    *,
    subject: str | None = None,
) -> dict[str, Any]:
    """Write the team corpus batch by batch; returns counts per kind of step.

    ``subject`` replaces the corpus's subject (``demo``); the second subject is then
    ``<subject>-partner``.
    """
    doc = read_corpus(path)
    if subject is not None:
        doc["subject"] = subject
        doc["partner"]["subject"] = f"{subject}-partner"
    human = Binding(doc["subject"], "default", "human", "seed")
    key = doc["idempotencyKey"]
    ids: dict[str, tuple[str, int]] = {}
    steps = [len(b) for b in doc["batches"]]
    total = sum(steps) + len(doc["revisions"]) + len(doc["retire"]) + 2
    total += len(doc["partner"]["changes"])
    done = 0
    repeated = True

    def tick(n: int, label: str) -> None:
        nonlocal done
        done += n
        if progress is not None:
            progress(done, total, label)

    def ref(local: str) -> dict[str, Any]:
        atom_id, rev = ids[local]
        return {"atomId": atom_id, "rev": rev}

    def resolved(links: list[dict[str, Any]], here: set[str]) -> list[dict[str, Any]]:
        out = []
        for link in links:
            target = dict(link["target"])
            local = target.get("local")
            if local is not None and local not in here:
                del target["local"]
                target["ref"] = ref(local)
            out.append({**link, "target": target})
        return out

    def write(binding: Binding, changes: list[dict[str, Any]], suffix: str) -> None:
        nonlocal repeated
        outcome = service.write(binding, parse_changes(changes), f"{key}-{suffix}")
        repeated = repeated and outcome.repeated
        for cid, view in outcome.changes.items():
            if binding is human:
                ids[cid] = (view.atom_id, view.rev)

    tick(0, "start")
    for n, batch in enumerate(doc["batches"], 1):
        here = {c["id"] for c in batch}
        changes = [
            {**c, "content": {**c["content"], "links": resolved(c["content"]["links"], here)}}
            for c in batch
        ]
        write(human, changes, f"b{n}")
        tick(len(batch), f"batch {n}")
    revisions = []
    for r in doc["revisions"]:
        sources = list(r.get("sources", []))
        cite = r.get("cite_stored")
        if cite:
            atom_id, rev = ids[cite["local"]]
            sources.append(
                {
                    "uri": f"atom:{atom_id}",
                    "version": str(rev),
                    "range": {"start": cite["start"], "end": cite["end"], "unit": cite["unit"]},
                }
            )
        revisions.append(
            {
                "id": r["local"],
                "op": "revise",
                "target": ref(r["local"]),
                "content": {"text": r["text"], "links": resolved(r["links"], set())},
                "sources": sources,
            }
        )
    write(human, revisions, "revisions")
    tick(len(revisions), "revisions")
    retire = [{"id": local, "op": "retire", "target": ref(local)} for local in doc["retire"]]
    write(human, retire, "retire")
    tick(len(retire), "retirements")
    note = doc["atomise"]
    write(
        human,
        [
            {
                "id": note["id"],
                "op": "create",
                "content": {"text": note["text"], "links": resolved(note["links"], set())},
                "sources": [],
            }
        ],
        "note",
    )
    tick(1, "note")
    curated = Service(
        service.settings.with_(curator="rule"), service.db, service.embedder, service.tokenizer
    )
    outcome = curated.atomise(human, ids[note["id"]][0], max_atom_tokens=note["maxAtomTokens"])
    tick(1, "atomise")
    partner = doc["partner"]
    pbinding = Binding(partner["subject"], "default", "human", "seed")
    write(pbinding, partner["changes"], "partner")
    tick(len(partner["changes"]), "second subject")
    return {
        "subject": doc["subject"],
        "ids": {local: atom_id for local, (atom_id, _) in ids.items()},
        "atoms": sum(steps) + 1 + len(outcome.atom_ids),
        "revisions": len(revisions),
        "retired": len(retire),
        "atomisedInto": len(outcome.atom_ids),
        "secondSubject": {"subject": partner["subject"], "atoms": len(partner["changes"])},
        "repeated": repeated,
    }


def load_seed(service: Service, progress: Progress | None = None) -> dict[str, Any]:
    """Both corpora (``graphsvc seed`` and ``serve --seed``): water cycle, then the team."""
    water = load_demo_corpus(service)
    team = load_team_corpus(service, progress=progress)
    team.pop("ids")
    return {
        "subject": water["subject"],
        "atoms": water["atoms"] + team["atoms"],
        "repeated": water["repeated"] and team["repeated"],
        "waterCycle": water,
        "team": team,
    }
