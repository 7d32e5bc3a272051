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

**Dated** (``dated=True``: ``graphsvc seed`` and ``serve --seed``): the team corpus is
written along the dates its texts name, so time travel has a history to show. Each
atom is written at the first date (and time) its text names, or at the latest date of
the atoms it links to, whichever is later (an atom never exists before what it links
to); an atom that names no date and links to none dated exists from 60 days before
the corpus's first date. Revisions come at the date they name, else a week after
their atom; retirements, the retrospective note, its atomisation and the partner
subject a day after the last date. The writes go through the public write operation
in date order, with the Service's clock set to each date for the duration of the
write (the demo loader is the only code that sets it), so every instant is recorded
as it is for any write. The idempotency keys of a dated load differ from an undated
one's: load a subject one way only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from importlib.resources import files
from importlib.resources.abc import Traversable
from typing import Any

from graphsvc.core.binding import Binding
from graphsvc.inputs.models import parse_changes
from graphsvc.service import Service

__all__ = [
    "DEMO_CORPUS",
    "TEAM_CORPUS",
    "creation_dates",
    "load_demo_corpus",
    "load_seed",
    "load_team_corpus",
    "read_corpus",
    "text_instant",
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


_DATE = re.compile(r"\b(20\d\d-\d\d-\d\d)(?:[ T](\d\d):(\d\d))?")
_DAY = 86400.0


def text_instant(text: str) -> float | None:
    """The first date (with its time, else noon UTC) a text names, in epoch seconds."""
    m = _DATE.search(text)
    if m is None:
        return None
    try:
        d = datetime.strptime(m.group(1), "%Y-%m-%d").replace(tzinfo=UTC, hour=12)
    except ValueError:
        return None
    if m.group(2):
        d = d.replace(hour=int(m.group(2)) % 24, minute=int(m.group(3)) % 60)
    return d.timestamp()


@contextmanager
def _clock_at(service: Service, instant: float) -> Iterator[None]:
    """The Service's clock reads ``instant`` while a dated write runs."""
    original = service.clock
    service.clock = lambda: instant
    try:
        yield
    finally:
        service.clock = original


def creation_dates(doc: dict[str, Any]) -> dict[str, float]:
    """Each created atom's instant: its text's date, or its latest target's if later."""
    creates = {c["id"]: c for batch in doc["batches"] for c in batch}
    own = {cid: text_instant(c["content"]["text"]) for cid, c in creates.items()}
    dated = [t for t in own.values() if t is not None]
    floor = (min(dated) if dated else 0.0) - 60 * _DAY
    when: dict[str, float] = {cid: floor if t is None else t for cid, t in own.items()}
    targets = {
        cid: [t for link in c["content"]["links"] if (t := link["target"].get("local")) in creates]
        for cid, c in creates.items()
    }
    changed = True
    while changed:  # to a fixed point: values only rise, a cycle ends at its latest
        changed = False
        for cid, ts in targets.items():
            latest = max([when[t] for t in ts], default=when[cid])
            if latest > when[cid]:
                when[cid] = latest
                changed = True
    return when


def _revision_dates(doc: dict[str, Any], when: dict[str, float]) -> list[float]:
    """Each revision's instant: the date it names, else a week after its atom; never
    before its atom or what it links to (or cites)."""
    out = []
    for r in doc["revisions"]:
        base = when[r["local"]]
        named = text_instant(r["text"])
        at = named if named is not None and named > base else base + 7 * _DAY
        after = [when[t] for link in r["links"] if (t := link["target"].get("local")) in when]
        cite = r.get("cite_stored")
        if cite and cite["local"] in when:
            after.append(when[cite["local"]])
        out.append(max([at, *after]))
    return out


def _load_dated(w: _TeamWriter, doc: dict[str, Any], human: Binding) -> float:
    """The corpus's creations and revisions in one date order (so commit order and
    instants agree); returns the last instant."""
    when = creation_dates(doc)
    creates = {c["id"]: c for batch in doc["batches"] for c in batch}
    instants = sorted(set(when.values()))
    events: list[tuple[float, int, int]] = [(t, 0, k) for k, t in enumerate(instants)]
    events += [(t, 1, n) for n, t in enumerate(_revision_dates(doc, when))]
    for instant, kind, k in sorted(events):  # at one instant, creations first
        day = datetime.fromtimestamp(instant, UTC).date().isoformat()
        with _clock_at(w.service, instant):
            if kind == 1:  # one write each: an atom may be revised twice
                w.write(human, [w.revision(doc["revisions"][k])], f"dated-revision-{k}")
                w.tick(1, "revision " + day)
                continue
            group = [cid for cid in creates if when[cid] == instant]
            here = set(group)
            changes = [
                {
                    **creates[c],
                    "content": {
                        **creates[c]["content"],
                        "links": w.resolved(creates[c]["content"]["links"], here),
                    },
                }
                for c in group
            ]
            w.write(human, changes, f"dated-{k}")
            w.tick(len(group), "dated " + day)
    return max(t for t, _, _ in events)


def load_team_corpus(
    service: Service,
    path: Traversable = TEAM_CORPUS,
    progress: Progress | None = None,
    *,
    subject: str | None = None,
    dated: bool = False,
) -> dict[str, Any]:
    """Write the team corpus batch by batch; returns counts per kind of step.

    ``subject`` replaces the corpus's subject (``demo``); the second subject is then
    ``<subject>-partner``. ``dated``: written along the dates the texts name (the
    module's docstring says how), for time travel to show.
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
    if dated:
        last = _load_dated(w, doc, human)
        with _clock_at(service, last + _DAY):
            return _finish(w, doc, human, service, steps, len(doc["revisions"]))
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
    return _finish(w, doc, human, service, steps, len(revisions))


def _finish(
    w: _TeamWriter,
    doc: dict[str, Any],
    human: Binding,
    service: Service,
    steps: list[int],
    revisions: int,
) -> dict[str, Any]:
    """Retirements, the atomised note and the partner subject; the load's report."""
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
        "revisions": revisions,
        "retired": len(retire),
        "atomisedInto": len(outcome.atom_ids),
        "secondSubject": {"subject": partner["subject"], "atoms": len(partner["changes"])},
        "repeated": w.repeated,
    }


def load_seed(
    service: Service, progress: Progress | None = None, *, dated: bool = True
) -> dict[str, Any]:
    """Both corpora (``graphsvc seed`` and ``serve --seed``): water cycle, then the team
    (dated along its texts unless ``dated`` is False)."""
    water = load_demo_corpus(service)
    team = load_team_corpus(service, progress=progress, dated=dated)
    team.pop("ids")
    return {
        "subject": water["subject"],
        "atoms": water["atoms"] + team["atoms"],
        "repeated": water["repeated"] and team["repeated"],
        "waterCycle": water,
        "team": team,
    }
