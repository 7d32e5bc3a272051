"""Analysts' export (issue 17, API-4): a subject's graph as GraphML, node-link JSON or CSV.

The use case behind ``graphsvc export``. It reads through the same rules as every
public read: the caller's Binding fixes the subject, and a subject with an unfinished
purge is refused (PURGE_PENDING, LNK-6), checked before the first page and again
before each later one.

What is written (the same graph in every format):

- **nodes** ``kind``: ``atom`` (each atom at its head: ``rev``, ``state``, ``text``,
  ``tokens``, ``createdAt``, ``revisedAt``, ``atomOf``, ``atomisedInto``,
  ``archivedAt``, ``actorKind``, ``actorId``, ``label``), ``source`` (each cited
  source: ``uri``, ``version``, ``digest``), ``unavailable`` (one per link whose
  target the caller may not see, e.g. purged; it names nothing), ``entity`` (each
  entity of the entity index, SPEC §16, id ``entity:<key>``: ``entityKey``, ``label``
  (its name), ``entityType``, ``aliases`` (joined by `` | ``), ``mentionCount``) and,
  with ``revisions=True``, ``revision`` (each superseded revision, id ``atomId@rev``).
- **edges** ``kind``: ``link`` (``role``, ``at``, ``required``, ``orderKey``,
  ``targetRev``), ``cites`` (``start``, ``end``, ``unit``, ``verified``),
  ``derives_from`` (child → parent, ``fromRev``, ``toRev``, ``keyId``, ``signedAt``,
  ``signatureStatus``: ``verified`` | ``invalid`` | ``unknown_key``, GraphQL's
  SignatureStatus in lower case), ``mentions`` (atom → entity its head names,
  ``count``) and ``revision_of`` (revision → its atom).

Attributes keep their types (ints stay ints, booleans booleans); a missing value is
left out (GraphML, JSON) or empty (CSV). **Streaming**: atoms are read in pages of
``page_size`` (keyset paging on atomId) and written as they come, so memory stays
bounded by one page whatever the subject's size. Pages are separate read
transactions: an export taken while others write is per-page consistent.

XML 1.0 cannot hold most control characters (U+0000–U+0008, U+000B, U+000C,
U+000E–U+001F), U+FFFE/U+FFFF or lone surrogates, even escaped. In GraphML a value
holding one is written with each such character as ``\\uXXXX`` and every backslash
doubled, and the element's ``xmlEscaped`` attribute names the escaped attributes;
:func:`unescape_xml_value` restores the original. JSON and CSV carry any text as is.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, Final, Literal, Protocol, TypeVar

from graphsvc.core.binding import Binding
from graphsvc.core.instants import with_utc_z
from graphsvc.core.signing import signature_status
from graphsvc.core.views import EXPORT_FORMATS, ExportReport
from graphsvc.errors import InvalidInputError
from graphsvc.ops.guards import refuse_if_purge_pending
from graphsvc.store import entity_views
from graphsvc.store import export as store
from graphsvc.store.connection import Database
from graphsvc.store.export import NOW, AtomPageRow, LineageRow, RevisionRow, Window

__all__ = [
    "EDGE_ATTRS",
    "FORMATS",
    "NODE_ATTRS",
    "ExportReport",
    "PublicKeys",
    "Window",
    "export_graph",
    "unescape_xml_value",
    "xml_safe",
]

Format = Literal["graphml", "node-link", "csv"]
FORMATS: Final = EXPORT_FORMATS
DEFAULT_PAGE: Final = 500
FORMAT_VERSION: Final = 1
_LABEL_CHARS: Final = 80

NODE_ATTRS: Final[dict[str, type]] = {
    "kind": str,
    "label": str,
    "rev": int,
    "state": str,
    "text": str,
    "tokens": int,
    "createdAt": str,
    "revisedAt": str,
    "atomOf": str,
    "atomisedInto": int,
    "archivedAt": str,
    "actorKind": str,
    "actorId": str,
    "uri": str,
    "version": str,
    "digest": str,
    "entityKey": str,
    "entityType": str,
    "aliases": str,
    "mentionCount": int,
}
EDGE_ATTRS: Final[dict[str, type]] = {
    "kind": str,
    "role": str,
    "at": str,
    "required": bool,
    "orderKey": str,
    "targetRev": int,
    "start": int,
    "end": int,
    "unit": str,
    "verified": bool,
    "fromRev": int,
    "toRev": int,
    "keyId": str,
    "signedAt": str,
    "signatureStatus": str,
    "count": int,
}
_CSV_LABEL: Final = {
    "atom": "Atom",
    "source": "Source",
    "unavailable": "Unavailable",
    "entity": "Entity",
}
_CSV_TYPE: Final = {
    "link": "LINK",
    "cites": "CITES",
    "derives_from": "DERIVES_FROM",
    "revision_of": "REVISION_OF",
    "mentions": "MENTIONS",
}

# ------------------------------------------------------------------ XML 1.0 safety
_XML_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
_XML_ESCAPE = re.compile(r"\\(\\|u[0-9a-f]{4})")


def xml_safe(value: str) -> tuple[str, bool]:
    """``value`` with the characters XML 1.0 forbids as ``\\uXXXX`` (and ``\\`` as ``\\\\``).

    Returns:
        (text, escaped): ``escaped`` is False (and the text unchanged) when nothing
        needed escaping.
    """
    if not _XML_FORBIDDEN.search(value):
        return value, False
    doubled = value.replace("\\", "\\\\")
    return _XML_FORBIDDEN.sub(lambda m: f"\\u{ord(m.group()):04x}", doubled), True


def unescape_xml_value(value: str) -> str:
    """Inverse of :func:`xml_safe` for a value named in an element's ``xmlEscaped``."""
    return _XML_ESCAPE.sub(lambda m: "\\" if m[1] == "\\" else chr(int(m[1][1:], 16)), value)


# ------------------------------------------------------------------ sinks
class _Sink(Protocol):
    def node(self, node_id: str, attrs: dict[str, Any]) -> None: ...

    def edge(self, src: str, dst: str, key: str, attrs: dict[str, Any]) -> None: ...

    def close(self) -> None: ...


def _xml_text(value: str) -> str:
    return (
        value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\r", "&#13;")
    )


def _xml_attr(value: str) -> str:
    return _xml_text(value).replace('"', "&quot;").replace("\n", "&#10;").replace("\t", "&#9;")


_GRAPHML_TYPE: Final = {str: "string", int: "long", bool: "boolean", float: "double"}


class _GraphML:
    """GraphML written element by element (nodes and edges interleaved, as GraphML allows)."""

    def __init__(self, out: IO[str], graph_attrs: dict[str, Any]) -> None:
        self.out = out
        w = out.write
        w('<?xml version="1.0" encoding="UTF-8"?>\n')
        w('<graphml xmlns="http://graphml.graphdrawing.org/xmlns">\n')
        for name, value in graph_attrs.items():
            kind = _GRAPHML_TYPE[type(value)]
            w(f'<key id="g_{name}" for="graph" attr.name="{name}" attr.type="{kind}"/>\n')
        for prefix, where, attrs in (("n", "node", NODE_ATTRS), ("e", "edge", EDGE_ATTRS)):
            for name, typ in {**attrs, "xmlEscaped": str}.items():
                w(
                    f'<key id="{prefix}_{name}" for="{where}" attr.name="{name}" '
                    f'attr.type="{_GRAPHML_TYPE[typ]}"/>\n'
                )
        w('<graph id="G" edgedefault="directed">\n')
        for name, value in graph_attrs.items():
            w(f'<data key="g_{name}">{_xml_text(self._scalar(value))}</data>\n')

    @staticmethod
    def _scalar(value: Any) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)

    def _data(self, prefix: str, attrs: dict[str, Any]) -> str:
        parts: list[str] = []
        escaped: list[str] = []
        for name, value in attrs.items():
            text = self._scalar(value)
            if isinstance(value, str):
                text, was = xml_safe(text)
                if was:
                    escaped.append(name)
            parts.append(f'<data key="{prefix}_{name}">{_xml_text(text)}</data>')
        if escaped:
            parts.append(f'<data key="{prefix}_xmlEscaped">{",".join(escaped)}</data>')
        return "".join(parts)

    def node(self, node_id: str, attrs: dict[str, Any]) -> None:
        safe_id, _ = xml_safe(node_id)
        self.out.write(f'<node id="{_xml_attr(safe_id)}">{self._data("n", attrs)}</node>\n')

    def edge(self, src: str, dst: str, key: str, attrs: dict[str, Any]) -> None:
        s, _ = xml_safe(src)
        d, _ = xml_safe(dst)
        k, _ = xml_safe(key)
        self.out.write(
            f'<edge id="{_xml_attr(k)}" source="{_xml_attr(s)}" target="{_xml_attr(d)}">'
            f"{self._data('e', attrs)}</edge>\n"
        )

    def close(self) -> None:
        self.out.write("</graph>\n</graphml>\n")


class _NodeLink:
    """networkx node-link JSON (``edges`` key); edges wait in a spooled temp file."""

    def __init__(self, out: IO[str], graph_attrs: dict[str, Any]) -> None:
        self.out = out
        self.edges: IO[str] = tempfile.SpooledTemporaryFile(  # noqa: SIM115
            max_size=1024 * 1024, mode="w+", encoding="utf-8"
        )
        out.write('{"directed": true, "multigraph": true, "graph": ')
        out.write(json.dumps(graph_attrs, sort_keys=True))
        out.write(', "nodes": [')
        self.first_node = True
        self.first_edge = True

    def node(self, node_id: str, attrs: dict[str, Any]) -> None:
        self.out.write(("\n" if self.first_node else ",\n") + json.dumps({"id": node_id, **attrs}))
        self.first_node = False

    def edge(self, src: str, dst: str, key: str, attrs: dict[str, Any]) -> None:
        doc = {"source": src, "target": dst, "key": key, **attrs}
        self.edges.write(("\n" if self.first_edge else ",\n") + json.dumps(doc))
        self.first_edge = False

    def close(self) -> None:
        self.out.write('\n], "edges": [')
        self.edges.seek(0)
        shutil.copyfileobj(self.edges, self.out)
        self.edges.close()
        self.out.write("\n]}\n")


def _csv_header(name: str, typ: type) -> str:
    return name + {int: ":long", bool: ":boolean"}.get(typ, "")


class _Csv:
    """``nodes.csv`` + ``edges.csv`` with neo4j-admin import headers (Gephi reads them too)."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.files = [
            (folder / "nodes.csv").open("w", encoding="utf-8", newline=""),
            (folder / "edges.csv").open("w", encoding="utf-8", newline=""),
        ]
        self.nodes = csv.writer(self.files[0])
        self.edges = csv.writer(self.files[1])
        self.node_cols = list(NODE_ATTRS)
        self.edge_cols = list(EDGE_ATTRS)
        self.nodes.writerow(
            ["id:ID", ":LABEL", *(_csv_header(c, NODE_ATTRS[c]) for c in self.node_cols)]
        )
        self.edges.writerow(
            [
                ":START_ID",
                ":END_ID",
                ":TYPE",
                "key",
                *(_csv_header(c, EDGE_ATTRS[c]) for c in self.edge_cols),
            ]
        )

    @staticmethod
    def _cell(value: Any) -> str:
        if value is None:
            return ""
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)

    def node(self, node_id: str, attrs: dict[str, Any]) -> None:
        label = _CSV_LABEL.get(attrs["kind"], "Revision")
        self.nodes.writerow([node_id, label, *(self._cell(attrs.get(c)) for c in self.node_cols)])

    def edge(self, src: str, dst: str, key: str, attrs: dict[str, Any]) -> None:
        typ = _CSV_TYPE[attrs["kind"]]
        self.edges.writerow(
            [src, dst, typ, key, *(self._cell(attrs.get(c)) for c in self.edge_cols)]
        )

    def close(self) -> None:
        for f in self.files:
            f.close()


# ------------------------------------------------------------------ the use case
class _Counted:
    def __init__(self, sink: _Sink, report: ExportReport) -> None:
        self.sink = sink
        self.report = report

    # Instants leave in the Z form, as on every surface (docs/agents.md, "Vocabulary").
    def node(self, node_id: str, attrs: dict[str, Any]) -> None:
        self.report.nodes += 1
        self.sink.node(node_id, with_utc_z({k: v for k, v in attrs.items() if v is not None}))

    def edge(self, src: str, dst: str, key: str, attrs: dict[str, Any]) -> None:
        self.report.edges += 1
        kept = {k: v for k, v in attrs.items() if v is not None}
        self.sink.edge(src, dst, key, with_utc_z(kept))


def _plain(value: Any) -> Any:
    """Neo4j values → JSON-able scalars (temporal values become ISO strings)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    iso = getattr(value, "iso_format", None)
    return iso() if callable(iso) else str(value)


def _label(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _LABEL_CHARS else flat[: _LABEL_CHARS - 1] + "…"


T = TypeVar("T")
PublicKeys = Callable[[], dict[str, bytes]]


def _pages(
    db: Database,
    subject: str,
    fetch: Callable[[str], list[T]],
    key: Callable[[T], str],
    page_size: int,
) -> Iterator[list[T]]:
    """Keyset pages ``fetch(after)`` of at most ``page_size`` rows, each one checked
    against an unfinished purge first (LNK-6)."""
    after = ""
    while True:
        refuse_if_purge_pending(db, subject)
        rows = fetch(after)
        if not rows:
            return
        yield rows
        if len(rows) < page_size:
            return
        after = key(rows[-1])


def export_graph(
    db: Database,
    binding: Binding,
    fmt: str,
    target: IO[str] | Path,
    *,
    public_keys: PublicKeys,
    revisions: bool = False,
    page_size: int = DEFAULT_PAGE,
    progress: Callable[[ExportReport], None] | None = None,
    window: Window = NOW,
) -> ExportReport:
    """Stream the caller's subject as ``fmt`` to ``target``.

    Args:
        db: the database.
        binding: the caller; its subject is exported, nothing else.
        fmt: ``graphml`` | ``node-link`` | ``csv``.
        target: an open text stream (graphml, node-link) or a folder (csv, which
            writes ``nodes.csv`` and ``edges.csv`` there).
        public_keys: the deployment's verification keys (key id → raw public key),
            asked for once, when the first lineage edge is checked; see
            :meth:`graphsvc.runtime.Parts.verification_keys` (it creates no key file).
        revisions: also write superseded revisions as ``revision`` nodes.
        page_size: atoms per read page (memory is bounded by one page).
        progress: called after each page with the report so far.
        window: the graph as of an instant and/or only the atoms changed since one
            (docs/time-travel.md); entities and mentions describe current heads, so
            an export with ``as_of`` leaves them out.

    Returns:
        Counts of what was written.

    Raises:
        InvalidInputError: unknown format, bad page size, or a target that does not fit
            the format.
        PurgePendingError: a purge in the subject has not finished.
    """
    if fmt not in FORMATS:
        raise InvalidInputError(f"format must be one of {', '.join(FORMATS)}")
    if isinstance(page_size, bool) or not 1 <= page_size <= 10_000:
        raise InvalidInputError("page_size must be in 1..10000")
    if window.as_of and window.since and window.since > window.as_of:
        raise InvalidInputError("--since must not be after --as-of")
    subject = binding.subject
    refuse_if_purge_pending(db, subject)
    attrs: dict[str, Any] = {
        "subject": subject,
        "formatVersion": FORMAT_VERSION,
        "revisions": revisions,
    }
    # Only when asked for: a plain export's header stays as it was.
    attrs.update({k: v for k, v in (("asOf", window.as_of), ("since", window.since)) if v})
    sink = _open_sink(fmt, target, with_utc_z(attrs))
    report = ExportReport(format=fmt, subject=subject)
    writer = _Writer(
        db, subject, _Counted(sink, report), _Checker(subject, public_keys), page_size, window
    )
    try:
        writer.atoms(revisions, progress)
        writer.sources()
        if window.as_of is None:
            writer.entities()
    finally:
        sink.close()
    return report


def _open_sink(fmt: str, target: IO[str] | Path, graph_attrs: dict[str, Any]) -> _Sink:
    if fmt == "csv":
        if not isinstance(target, Path):
            raise InvalidInputError("csv writes two files: give a folder with -o, not -")
        return _Csv(target)
    if isinstance(target, Path):
        raise InvalidInputError(f"{fmt} is written to a stream")
    return _GraphML(target, graph_attrs) if fmt == "graphml" else _NodeLink(target, graph_attrs)


class _Checker:
    """Signature status of lineage edges; the keys are asked for at the first edge."""

    def __init__(self, subject: str, public_keys: PublicKeys) -> None:
        self.subject = subject
        self.public_keys = public_keys
        self.keys: dict[str, bytes] | None = None

    def status(self, edge: LineageRow) -> str:
        # One checker for every surface (core.signing.signature_status, SIG-1), in the
        # export's attribute vocabulary.
        if self.keys is None:
            self.keys = self.public_keys()
        return _EXPORT_STATUS[signature_status(self.subject, dict(edge), self.keys)]


class _Writer:
    """Reads the subject page by page and writes what each page holds."""

    def __init__(
        self,
        db: Database,
        subject: str,
        out: _Counted,
        checker: _Checker,
        page_size: int,
        window: Window = NOW,
    ) -> None:
        self.window = window
        self.db = db
        self.subject = subject
        self.out = out
        self.report = out.report
        self.checker = checker
        self.page_size = page_size

    def atoms(self, revisions: bool, progress: Callable[[ExportReport], None] | None) -> None:
        """Atoms page by page; after each page its lineage edges and, with
        ``revisions``, its superseded revisions."""
        db, subject, out, report = self.db, self.subject, self.out, self.report
        pages = _pages(
            db,
            subject,
            lambda after: store.atoms_page(db, subject, after, self.page_size, self.window),
            lambda row: row["atomId"],
            self.page_size,
        )
        for rows in pages:
            report.pages += 1
            ids = [r["atomId"] for r in rows]
            for row in rows:
                _atom(out, report, row)
            for edge in store.lineage_of(db, subject, ids, self.window):
                _lineage(out, report, edge, self.checker.status(edge))
            as_of = self.window.as_of is not None
            mentioned = {} if as_of else entity_views.entities_of_atoms(db, subject, ids)
            for atom_id in ids:
                for ent in mentioned.get(atom_id, []):
                    report.mentions += 1
                    out.edge(
                        atom_id,
                        "entity:" + ent.key,
                        "mentions",
                        {"kind": "mentions", "count": ent.count or 1},
                    )
            if revisions:
                for rev in store.revisions_of(db, subject, ids, self.window):
                    _revision(out, report, rev)
            if progress is not None:
                progress(report)

    def sources(self) -> None:
        db, subject = self.db, self.subject
        pages = _pages(
            db,
            subject,
            lambda after: store.sources_page(db, subject, after, self.page_size),
            lambda row: row["sourceKey"],
            self.page_size,
        )
        for rows in pages:
            for src in rows:
                self.report.sources += 1
                self.out.node(
                    "source:" + src["sourceKey"],
                    {
                        "kind": "source",
                        "label": src["uri"],
                        "uri": src["uri"],
                        "version": src["version"],
                        "digest": src["digest"],
                    },
                )

    def entities(self) -> None:
        """The entity index's entities (SPEC §16), by key."""
        db, subject = self.db, self.subject
        pages = _pages(
            db,
            subject,
            lambda after: entity_views.entities_page(
                db, subject, query=None, type_=None, after=after or None, limit=self.page_size
            ),
            lambda row: row.key,
            self.page_size,
        )
        for rows in pages:
            for ent in rows:
                self.report.entities += 1
                self.out.node(
                    "entity:" + ent.key,
                    {
                        "kind": "entity",
                        "label": ent.name,
                        "entityKey": ent.key,
                        "entityType": ent.type,
                        "aliases": " | ".join(ent.aliases),
                        "mentionCount": ent.mentions,
                    },
                )


def _lineage(out: _Counted, report: ExportReport, edge: LineageRow, status: str) -> None:
    report.lineage += 1
    report.signatures[status] += 1
    out.edge(
        edge["fromAtomId"],
        edge["toAtomId"],
        f"derives_from:{edge['fromRev']}:{edge['toRev']}",
        {
            "kind": "derives_from",
            "fromRev": int(edge["fromRev"]),
            "toRev": int(edge["toRev"]),
            "keyId": edge["keyId"],
            "signedAt": _plain(edge["signedAt"]),
            "signatureStatus": status,
        },
    )


_EXPORT_STATUS = {"verified": "verified", "invalid": "invalid", "unknown_key": "unknown_key"}


def _atom(out: _Counted, report: ExportReport, row: AtomPageRow) -> None:
    atom_id = row["atomId"]
    text = row["text"] or ""
    report.atoms += 1
    out.node(
        atom_id,
        {
            "kind": "atom",
            "label": _label(text),
            "rev": int(row["rev"]),
            "state": row["state"],
            "text": text,
            "tokens": None if row["tokens"] is None else int(row["tokens"]),
            "createdAt": _plain(row["createdAt"]),
            "revisedAt": _plain(row["revisedAt"]),
            "atomOf": row["atomOf"],
            "atomisedInto": None if row["atomisedInto"] is None else int(row["atomisedInto"]),
            "archivedAt": _plain(row["archivedAt"]),
            "actorKind": row["actorKind"],
            "actorId": row["actorId"],
        },
    )
    for i, link in enumerate(row["links"]):
        report.links += 1
        attrs = {
            "kind": "link",
            "role": link["role"],
            "at": link["at"],
            "required": bool(link["required"]),
            "orderKey": link["orderKey"],
            "targetRev": None if link["rev"] is None else int(link["rev"]),
        }
        if link["unavailable"] or link["atomId"] is None:
            ghost = f"unavailable:{atom_id}:{i}"
            report.unavailable += 1
            out.node(ghost, {"kind": "unavailable", "label": "unavailable"})
            out.edge(atom_id, ghost, f"link:{i}", attrs)
        else:
            out.edge(atom_id, link["atomId"], f"link:{i}", attrs)
    for i, cite in enumerate(row["cites"]):
        report.citations += 1
        out.edge(
            atom_id,
            "source:" + cite["sourceKey"],
            f"cites:{i}",
            {
                "kind": "cites",
                "start": None if cite["start"] is None else int(cite["start"]),
                "end": None if cite["end"] is None else int(cite["end"]),
                "unit": cite["unit"],
                "verified": bool(cite["verified"]),
            },
        )


def _revision(out: _Counted, report: ExportReport, row: RevisionRow) -> None:
    node_id = f"{row['atomId']}@{row['rev']}"
    text = row["text"] or ""
    report.revisions += 1
    out.node(
        node_id,
        {
            "kind": "revision",
            "label": _label(text),
            "rev": int(row["rev"]),
            "state": row["state"],
            "text": text,
            "tokens": None if row["tokens"] is None else int(row["tokens"]),
            "revisedAt": _plain(row["createdAt"]),
            "actorKind": row["actorKind"],
            "actorId": row["actorId"],
        },
    )
    out.edge(node_id, row["atomId"], f"revision_of:{row['rev']}", {"kind": "revision_of"})
