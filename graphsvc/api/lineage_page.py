"""A built-in page at ``/lineage`` that draws an atom's lineage graph (API-5).

Static HTML with a small inline script: it asks for an API token and an atom id,
runs the GraphQL ``lineage`` query against ``/graphql`` with the caller's own token
(the page itself holds no data and needs no auth) and draws the nodes and edges as
SVG — derives_from levels top to bottom, link neighbours in a column on the right.
No external scripts or styles, so it works offline.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from graphsvc.api.page_headers import html_page

__all__ = ["LINEAGE_HTML", "lineage_route"]

LINEAGE_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>graphsvc lineage</title>
<style>
 body{font:14px system-ui,sans-serif;margin:1rem;color:#222}
 input{font:inherit;padding:.2rem .4rem} button{font:inherit}
 #err{color:#b00020;white-space:pre-wrap} svg{border:1px solid #ddd;margin-top:.5rem}
 .root circle{fill:#1f77b4}.lineage circle{fill:#9ecae1}.neighbour circle{fill:#ddd}
 .archived circle{stroke:#b00020;stroke-width:3}
 line.derives_from{stroke:#1f77b4;stroke-width:2}line.link{stroke:#aaa;stroke-dasharray:4 3}
 text{font-size:11px}
</style></head><body>
<h1>Lineage</h1>
<form id="f">
 <label>API token <input id="token" type="password" size="30" autocomplete="off"></label>
 <label>atomId <input id="atom" size="34"></label>
 <label>depth <input id="depth" type="number" min="0" max="16" value="3" style="width:4em">
 </label>
 <button>draw</button>
</form>
<div id="err"></div><svg id="g" width="1000" height="600"></svg>
<script>
const NS = "http://www.w3.org/2000/svg";
function el(name, attrs, parent) {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  parent.appendChild(e); return e;
}
function draw(g) {
  const svg = document.getElementById("g"); svg.innerHTML = "";
  const levels = {}, pos = {};
  for (const n of g.nodes) {
    const key = n.kind === "neighbour" ? "n" : String(n.level);
    (levels[key] = levels[key] || []).push(n);
  }
  const rows = Object.keys(levels).filter(k => k !== "n").sort((a, b) => a - b);
  rows.forEach((k, r) => levels[k].forEach((n, i) => {
    pos[n.id] = [60 + i * 800 / Math.max(levels[k].length, 1), 50 + r * 110];
  }));
  (levels.n || []).forEach((n, i) => { pos[n.id] = [900, 50 + i * 60]; });
  const height = Math.max(200, 80 + rows.length * 110, 80 + (levels.n || []).length * 60);
  svg.setAttribute("height", height);
  for (const e of g.edges) {
    const a = pos[e.source], b = pos[e.target]; if (!a || !b) continue;
    const l = el("line", {x1: a[0], y1: a[1], x2: b[0], y2: b[1], class: e.type}, svg);
    el("title", {}, l).textContent = e.type === "link" ? e.role + " (" + e.at + ")"
      : "derives_from rev " + e.fromRev + " -> " + e.toRev + ", " + e.keyId;
  }
  for (const n of g.nodes) {
    const [x, y] = pos[n.id];
    const grp = el("g", {class: n.kind + (n.state === "archived" ? " archived" : "")}, svg);
    el("circle", {cx: x, cy: y, r: 10}, grp);
    el("text", {x: x + 13, y: y + 4}, grp).textContent =
      n.id.slice(0, 8) + " r" + n.rev + " " + n.state;
    el("title", {}, grp).textContent = n.text;
  }
}
document.getElementById("f").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const err = document.getElementById("err"); err.textContent = "";
  const body = {query: "query($id: ID!, $d: Int) { lineage(atomId: $id, depth: $d) }",
    variables: {id: document.getElementById("atom").value.trim(),
                d: Number(document.getElementById("depth").value)}};
  const r = await fetch("/graphql", {method: "POST", body: JSON.stringify(body),
    headers: {"Content-Type": "application/json",
              "Authorization": "Bearer " + document.getElementById("token").value}});
  const out = await r.json();
  if (out.errors) { err.textContent = out.errors.map(e => e.message).join("\\n"); return; }
  draw(out.data.lineage);
});
</script></body></html>
"""


async def _page(_: Request) -> Response:
    return html_page(LINEAGE_HTML)


def lineage_route() -> Route:
    """The ``/lineage`` route, to add to the app's routes."""
    return Route("/lineage", _page, methods=["GET"])
