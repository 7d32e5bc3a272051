// graphsvc explorer: time travel (docs/time-travel.md) and read replay, kept apart
// from explore.js. The time bar sets the instant explore.js passes to inspect as
// `asOf` (window.graphsvcTime.asOf()), redraws the open atom's neighbourhood as of
// then and marks the drawn atoms whose head changed between then and now. The replay
// panel shows what a read's manifest presented and what changed since. Every text
// from the graph goes into the page with textContent, never as HTML.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  let asOf = null; // ISO-8601 string, or null for now
  window.graphsvcTime = { asOf: () => asOf };

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function explorer() {
    return window.graphsvcExplorer;
  }

  // Atoms whose head changed between the instant and now: a thick orange outline.
  explorer()
    .cy.style()
    .selector("node.tt-changed")
    .style({ "border-width": 5, "border-color": "#e8a33d", "border-style": "double" })
    .update();

  // ------------------------------------------------------------------ time bar
  const DAY_MS = 86400000;
  const SPAN_DAYS = 30;
  const bar = el("div", { id: "timebar", role: "group", "aria-label": "Time travel" });
  const label = el("label", { for: "asof-date" }, "Graph as of");
  const date = el("input", { id: "asof-date", type: "datetime-local", step: "1" });
  const slider = el("input", {
    id: "asof-slider",
    type: "range",
    min: String(-SPAN_DAYS * 24),
    max: "0",
    step: "1",
    value: "0",
    "aria-label": "hours before now",
  });
  const nowBtn = el("button", { type: "button", id: "asof-now" }, "Now");
  const status = el("span", { id: "asof-status", role: "status", class: "muted" }, "showing now");
  bar.append(label, date, slider, nowBtn, status);
  const toolbar = $("toolbar");
  toolbar.parentNode.insertBefore(bar, toolbar.nextSibling);

  function localValue(d) {
    const pad = (n) => String(n).padStart(2, "0");
    return (
      d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) + "T" +
      pad(d.getHours()) + ":" + pad(d.getMinutes()) + ":" + pad(d.getSeconds())
    );
  }

  function rootId() {
    const ex = explorer();
    if (!ex) return null;
    const root = ex.cy.nodes(".root");
    return root.empty() ? null : root.id();
  }

  async function markChanges() {
    const ex = explorer();
    ex.cy.nodes().removeClass("tt-changed");
    if (asOf === null) return 0;
    const ids = ex.cy.nodes().not(".ghost").not(".entity").map((n) => n.id()).slice(0, 60);
    if (!ids.length) return 0;
    const parts = ids.map(
      (_, i) => `t${i}: atom(atomId: $a${i}, asOf: $t) { head { rev } } ` +
        `n${i}: atom(atomId: $a${i}) { state head { rev } }`,
    );
    const decl = ["$t: DateTime"].concat(ids.map((_, i) => "$a" + i + ": ID!")).join(", ");
    const vars = { t: asOf };
    ids.forEach((id, i) => (vars["a" + i] = id));
    const data = await ex.gql(`query(${decl}) { ${parts.join(" ")} }`, vars);
    let changed = 0;
    ids.forEach((id, i) => {
      const then = data["t" + i];
      const now = data["n" + i];
      const moved = !now || !then || now.head.rev !== then.head.rev;
      if (moved) {
        changed += 1;
        ex.cy.getElementById(id).addClass("tt-changed");
      }
    });
    return changed;
  }

  async function redraw() {
    const id = rootId();
    const when = asOf === null ? "now" : new Date(asOf).toLocaleString();
    if (!id) {
      status.textContent = "showing " + when + " (open an atom to draw it)";
      return;
    }
    status.textContent = "drawing as of " + when + "…";
    await explorer().openAtom(id);
    try {
      const changed = await markChanges();
      status.textContent =
        asOf === null
          ? "showing now"
          : "as of " + when + " · " + changed + " drawn atom" + (changed === 1 ? "" : "s") +
            " changed since (orange outline)";
    } catch (e) {
      status.textContent = "as of " + when + " · changes not marked: " + e.message;
    }
  }

  function setAsOf(d) {
    asOf = d === null ? null : d.toISOString();
    date.value = d === null ? "" : localValue(d);
    bar.classList.toggle("past", d !== null);
  }

  slider.addEventListener("change", () => {
    const hours = Number(slider.value);
    setAsOf(hours === 0 ? null : new Date(Date.now() + hours * 3600000));
    redraw();
  });
  date.addEventListener("change", () => {
    if (!date.value) {
      setAsOf(null);
    } else {
      const d = new Date(date.value);
      setAsOf(d);
      const hours = Math.round((d.getTime() - Date.now()) / 3600000);
      slider.value = String(Math.max(-SPAN_DAYS * 24, Math.min(0, hours)));
    }
    redraw();
  });
  nowBtn.addEventListener("click", () => {
    slider.value = "0";
    setAsOf(null);
    redraw();
  });

  // ------------------------------------------------------------------ replay
  const REPLAY = `query($id: ID!) { manifest(id: $id) {
    manifestId createdAt expired sameSetToday
    presented { ref { atomId rev } text tokens changedSince headRev }
  } }`;
  const WORDS = {
    UNCHANGED: "unchanged",
    HEAD_MOVED: "revised since",
    RETIRED: "retired since",
    ARCHIVED: "archived since",
  };
  const panel = el("details", { id: "replay-panel", open: "" });
  panel.append(el("summary", {}, "Replay a read (from its manifest id)"));
  const form = el("form", { id: "replay-form" });
  form.append(
    el("label", { for: "replay-id" }, "Manifest id"),
    el("input", { id: "replay-id", type: "text", required: "", placeholder: "from read's manifest" }),
    el("button", { type: "submit" }, "Replay"),
  );
  const out = el("div", { id: "replay-out", role: "status" });
  panel.append(form, out);
  $("left").append(panel);

  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    out.replaceChildren(el("p", { class: "muted" }, "Loading…"));
    try {
      const data = await explorer().gql(REPLAY, { id: $("replay-id").value.trim() });
      const m = data.manifest;
      if (!m) {
        out.replaceChildren(
          el("p", { class: "error" }, "No such manifest (unknown, expired and removed, or it " +
            "presented an atom that was purged since)."),
        );
        return;
      }
      const changed = m.presented.filter((p) => p.changedSince !== "UNCHANGED").length;
      const head = el(
        "p",
        { class: "read-summary" },
        "Read at " + new Date(m.createdAt).toLocaleString() + " · " + m.presented.length +
          " presented · " + changed + " changed since" + (m.expired ? " · past its lifetime" : "") +
          (m.sameSetToday === false ? " · a read today would differ" : ""),
      );
      const list = el("ol", { class: "replay-items" });
      for (const p of m.presented) {
        const item = el("li", { class: "tt-" + p.changedSince.toLowerCase() });
        const open = el("button", { type: "button", class: "linklike" }, p.ref.atomId.slice(0, 8) + "…");
        open.addEventListener("click", () => explorer().openAtom(p.ref.atomId));
        const badge = el("span", { class: "tt-badge" }, WORDS[p.changedSince] || p.changedSince);
        item.append(open, document.createTextNode(" r" + p.ref.rev + " · " + p.tokens + " tokens "), badge);
        item.append(el("div", { class: "replay-text" }, p.text));
        list.append(item);
      }
      out.replaceChildren(head, list);
    } catch (e) {
      out.replaceChildren(el("p", { class: "error" }, "Replay failed: " + (e.code ? e.code + ": " : "") + e.message));
    }
  });
})();
