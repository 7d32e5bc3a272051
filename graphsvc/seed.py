"""Loads the demo corpora through the public write operation.

The corpora are package data (the repository's ``seed/``, installed as the package
``graphsvc.seed_data``, in the wheel too), read with
:mod:`importlib.resources`:

- ``seed/demo.json``: 20 atoms about the water cycle, one batch (the original demo).
- ``seed/team.json``: the design and incident history of an engineering team (about
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
from graphsvc.inputs.models import parse_changes
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
DEMO_CORPUS: Traversable = files("graphsvc.seed_data") / "demo.json"
TEAM_CORPUS: Traversable = files("graphsvc.seed_data") / "team.json"

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


class _TeamWriter:
    """Writes the team corpus's batches, remembering the ids the writes gave."""

    def __init__(
        self, service: Service, human: Binding, key: str, total: int, progress: Progress | None
    ) -> None:
        self.service = service
        self.human = human
        self.key = key
        self.ids: dict[str, tuple[str, int]] = {}
        self.repeated = True
        self._total = total
        self._done = 0
        self._progress = progress

    def tick(self, n: int, label: str) -> None:
        self._done += n
        if self._progress is not None:
            self._progress(self._done, self._total, label)

    def ref(self, local: str) -> dict[str, Any]:
        atom_id, rev = self.ids[local]
        return {"atomId": atom_id, "rev": rev}

    def resolved(self, links: list[dict[str, Any]], here: set[str]) -> list[dict[str, Any]]:
        """Links with targets written by earlier batches pointed at their stored ids."""
        out = []
        for link in links:
            target = dict(link["target"])
            local = target.get("local")
            if local is not None and local not in here:
                del target["local"]
                target["ref"] = self.ref(local)
            out.append({**link, "target": target})
        return out

    def write(self, binding: Binding, changes: list[dict[str, Any]], suffix: str) -> None:
        outcome = self.service.write(binding, parse_changes(changes), f"{self.key}-{suffix}")
        self.repeated = self.repeated and outcome.repeated
        if binding is self.human:
            for cid, view in outcome.changes.items():
                self.ids[cid] = (view.atom_id, view.rev)

    def revision(self, r: dict[str, Any]) -> dict[str, Any]:
        """One of the corpus's revisions as a change (its stored citation resolved)."""
        sources = list(r.get("sources", []))
        cite = r.get("cite_stored")
        if cite:
            atom_id, rev = self.ids[cite["local"]]
            sources.append(
                {
                    "uri": f"atom:{atom_id}",
                    "version": str(rev),
                    "range": {"start": cite["start"], "end": cite["end"], "unit": cite["unit"]},
                }
            )
        return {
            "id": r["local"],
            "op": "revise",
            "target": self.ref(r["local"]),
            "content": {"text": r["text"], "links": self.resolved(r["links"], set())},
            "sources": sources,
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
    steps = [len(b) for b in doc["batches"]]
    total = sum(steps) + len(doc["revisions"]) + len(doc["retire"]) + 2
    total += len(doc["partner"]["changes"])
    w = _TeamWriter(service, human, doc["idempotencyKey"], total, progress)
    w.tick(0, "start")
    for n, batch in enumerate(doc["batches"], 1):
        here = {c["id"] for c in batch}
        changes = [
            {**c, "content": {**c["content"], "links": w.resolved(c["content"]["links"], here)}}
            for c in batch
        ]
        w.write(human, changes, f"b{n}")
        w.tick(len(batch), f"batch {n}")
    revisions = [w.revision(r) for r in doc["revisions"]]
    w.write(human, revisions, "revisions")
    w.tick(len(revisions), "revisions")
    retire = [{"id": local, "op": "retire", "target": w.ref(local)} for local in doc["retire"]]
    w.write(human, retire, "retire")
    w.tick(len(retire), "retirements")
    note = doc["atomise"]
    content = {"text": note["text"], "links": w.resolved(note["links"], set())}
    w.write(human, [{"id": note["id"], "op": "create", "content": content, "sources": []}], "note")
    w.tick(1, "note")
    curated = service.with_settings(service.settings.with_(curator="rule"))
    outcome = curated.atomise(human, w.ids[note["id"]][0], max_atom_tokens=note["maxAtomTokens"])
    w.tick(1, "atomise")
    partner = doc["partner"]
    w.write(Binding(partner["subject"], "default", "human", "seed"), partner["changes"], "partner")
    w.tick(len(partner["changes"]), "second subject")
    return {
        "subject": doc["subject"],
        "ids": {local: atom_id for local, (atom_id, _) in w.ids.items()},
        "atoms": sum(steps) + 1 + len(outcome.atom_ids),
        "revisions": len(revisions),
        "retired": len(retire),
        "atomisedInto": len(outcome.atom_ids),
        "secondSubject": {"subject": partner["subject"], "atoms": len(partner["changes"])},
        "repeated": w.repeated,
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
