"""Erasure that reaches the disk (issue 20, docs/erasure.md), on a managed Neo4j of its own.

The test starts a managed Neo4j in its own temporary state folder (the session
Neo4j is not used: ``graphsvc compact`` stops and restarts the instance it
rebuilds), writes atoms carrying unique words in their texts (short and long),
source URIs, source versions and a cited range, purges some through the purge
use case, runs the documented step (``graphsvc compact`` and ``graphsvc erasure
status``, as subprocesses, like an operator), then scans every file under the
state folder: raw UTF-8, UTF-16LE/BE, and every Lucene term and stored value.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from graphsvc.core.binding import Binding
from graphsvc.core.requests import SearchRequest
from graphsvc.embed import get_embedder
from graphsvc.inputs.models import parse_changes
from graphsvc.localdb import LocalNeo4j
from graphsvc.localdb.erasure_scan import scan
from graphsvc.runtime import service_for
from graphsvc.settings import Settings
from graphsvc.store.connection import Database
from graphsvc.store.entity_views import entities_page
from graphsvc.tokenizer import get_tokenizer


def _word() -> str:
    return "zq" + uuid.uuid4().hex[:16]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _cli(args: list[str], env: dict[str, str]) -> tuple[int, Any, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "graphsvc", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    return proc.returncode, json.loads(proc.stdout), proc.stderr


def _change(
    cid: str,
    text: str,
    *,
    sources: list[dict[str, Any]] | None = None,
    links: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    return {
        "id": cid,
        "op": "create",
        "content": {"text": text, "links": links or []},
        "sources": sources or [],
    }


def _long(word: str) -> str:
    # ~24 kB: stored in Neo4j's dynamic string store, many records long.
    filler = "Erasure has to reach every copy of the bytes on disk. " * 220
    return filler + word + " " + filler


@pytest.mark.req("LNK-6", "ENT-3")
def test_compact_leaves_no_byte_of_purged_atoms_and_keeps_the_rest(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    port = _free_port()
    settings = Settings.from_env(
        state_dir=tmp_path, neo4j_uri="", neo4j_port=port, key_file="", secret_file=""
    )
    local = LocalNeo4j(settings, name="serve", auth=False, progress=lambda _m: None)
    inst = local.start(die_with_parent=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHSVC_")}
    env.update(
        GRAPHSVC_STATE_DIR=str(tmp_path),
        GRAPHSVC_NEO4J_PORT=str(port),
        GRAPHSVC_NEO4J_HEAP=settings.neo4j.heap,
        GRAPHSVC_NEO4J_PAGECACHE=settings.neo4j.pagecache,
        GRAPHSVC_CACHE_DIR=str(settings.paths.cache_dir),
    )
    try:
        db = Database(inst.uri, "neo4j", "", "neo4j")
        db.apply_schema()
        service = service_for(settings, db, get_embedder(), get_tokenizer())
        human = Binding("erasure-s1", "default", "human", "alice", may_purge=True)
        words = {
            name: _word()
            for name in (
                "p_short", "p_uri", "p_version", "p_long", "p_tiny",
                "k_short", "k_uri", "k_long", "k_link",
            )
        }  # fmt: skip
        w = words
        # "svc-<word>" is an identifier: the entity index (ENT-3) stores an entity whose
        # key, name and alias hold the purged word, so the scans below cover it too.
        p_short_text = f"A short note that names svc-{w['p_short']} and nothing more."
        first = service.write(
            human,
            parse_changes(
                [
                    _change(
                        "p1",
                        p_short_text,
                        sources=[
                            {
                                "uri": f"https://example.org/{w['p_uri']}/page",
                                "version": f"v-{w['p_version']}",
                            }
                        ],
                    ),
                    _change("p3", w["p_tiny"]),
                    _change(
                        "k1",
                        f"A kept short note about svc-{w['k_short']}.",
                        sources=[{"uri": f"https://example.org/{w['k_uri']}/kept"}],
                    ),
                    _change("k2", _long(w["k_long"])),
                ]
            ),
            None,
        )
        p1 = first.changes["p1"]
        start = p_short_text.index(w["p_short"])
        cited = {"start": start, "end": start + len(w["p_short"]), "unit": "char"}
        second = service.write(
            human,
            parse_changes(
                [
                    # Cites a range of p1 (the range holds p_short): purged with p1.
                    _change(
                        "p2",
                        _long(w["p_long"]),
                        sources=[
                            {"uri": f"atom:{p1.atom_id}", "version": str(p1.rev), "range": cited}
                        ],
                    ),
                    # An ordinary link to p1 is no erasure dependency: kept (LNK-2).
                    _change(
                        "k3",
                        f"This kept note links to the purged one: {w['k_link']}.",
                        links=[
                            {"role": "see", "target": {"ref": {"atomId": p1.atom_id, "rev": 1}}}
                        ],
                    ),
                ]
            ),
            None,
        )
        purged_ids = {p1.atom_id, second.changes["p2"].atom_id, first.changes["p3"].atom_id}
        assert set(service.purge(human, p1.atom_id).purged) == purged_ids - {
            first.changes["p3"].atom_id
        }
        assert service.purge(human, first.changes["p3"].atom_id).purged == [
            first.changes["p3"].atom_id
        ]
        keys = {e.key for e in entities_page(db, human.subject, query=None, type_=None,
                                             after=None, limit=100)}  # fmt: skip
        assert f"svc-{w['k_short']}" in keys and not any(w["p_short"] in k for k in keys)
        db.close()
        purged = [w[k] for k in w if k.startswith("p_")]
        kept = [w[k] for k in w if k.startswith("k_")]
        lib = local.lib_dir()

        # The bytes are still on disk after purge, and the scanner sees them there
        # (the tiny text is packed into a property record: no byte scan sees it).
        before = scan(tmp_path, purged, lucene_lib=lib)
        for i, name in enumerate(k for k in w if k.startswith("p_")):
            if name != "p_tiny":
                assert before.found(i), f"{name} not seen before compact: the scan is blind"
        # The operator's check, with the erased texts in a file outside the state folder.
        needles = tmp_path_factory.mktemp("needles") / "erased.txt"
        needles.write_text("\n".join(purged) + "\n")
        status_cmd = ["erasure", "status", "--json", "--scan", str(needles)]
        code, status, _ = _cli(status_cmd, env)
        assert code == 5 and status["erased"] is False and status["pendingPurges"] == 2
        assert status["scan"]["hits"] and not any(word in json.dumps(status) for word in purged)

        # The documented step.
        code, report, stderr = _cli(["compact", "--json"], env)
        assert code == 0, stderr
        print(json.dumps(report))  # the phases, for whoever reads -s output
        assert report["erasedPurges"] == 2 and report["restarted"] is True
        assert report["shreddedFiles"] > 0
        assert "nodes copied" in stderr

        after = scan(tmp_path, purged + kept, lucene_lib=lib)
        assert after.files > 50 and after.lucene_folders >= 2
        assert [h for h in after.hits if h.needle < len(purged)] == []
        for i, word in enumerate(kept, start=len(purged)):
            hows = {h.how for h in after.found(i)}
            assert "utf-8" in hows, f"kept word {word} is not on disk any more"
        # The kept texts are still in the fulltext index (Lucene terms).
        for i in (len(purged), len(purged) + 2, len(purged) + 3):
            assert "lucene" in {h.how for h in after.found(i)}

        code, status, _ = _cli(status_cmd, env)
        assert code == 0 and status["erased"] is True and status["lastCompactAt"]
        assert status["scan"]["hits"] == [] and status["scan"]["luceneFolders"] >= 2

        running = local.status()
        assert running is not None and running.port == port
        db = Database(running.uri, "neo4j", "", "neo4j")
        service = service_for(settings, db, get_embedder(), get_tokenizer())
        # The entity index came through the copy (ENT-3: only what survives).
        copied = entities_page(db, human.subject, query=None, type_=None, after=None, limit=100)
        assert f"svc-{w['k_short']}" in {e.key for e in copied}
        owners = {
            "k_short": first.changes["k1"].atom_id,
            "k_long": first.changes["k2"].atom_id,
            "k_link": second.changes["k3"].atom_id,
        }
        for key, atom_id in owners.items():
            # The word's atom is the one fulltext hit (lexical 1.0, the others 0).
            lexical = {
                h.atom.atom_id: h for h in service.search(human, SearchRequest(w[key])).hits
                if h.breakdown["lexical"]
            }  # fmt: skip
            assert list(lexical) == [atom_id] and lexical[atom_id].breakdown["lexical"] == 1.0
            assert w[key] in lexical[atom_id].atom.text
        (k1,) = (
            h.atom
            for h in service.search(human, SearchRequest(w["k_short"])).hits
            if h.breakdown["lexical"]
        )
        assert k1.sources[0]["uri"] == f"https://example.org/{w['k_uri']}/kept"
        for key in ("p_short", "p_long", "p_tiny"):
            assert (
                not {h.atom.atom_id for h in service.search(human, SearchRequest(w[key])).hits}
                & purged_ids
            )
        # The link to the purged atom keeps its safe form (LNK-2).
        (k3,) = (
            h.atom
            for h in service.search(human, SearchRequest(w["k_link"])).hits
            if h.breakdown["lexical"]
        )
        assert [(lk.role, lk.unavailable) for lk in k3.links] == [("see", True)]
        db.close()
    finally:
        local.stop()
