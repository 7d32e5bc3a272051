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
  // The bar spans the drawn atoms' own history: from the first one's creation to the
  // newest revision among them (then Now), in steps that fit that span (a corpus
  // written in a minute gets seconds, one written over months gets days).
  const STEP_CHOICES_S = [1, 2, 5, 10, 30, 60, 300, 900, 3600, 6 * 3600, 86400, 7 * 86400, 30 * 86400];
  const MAX_STEPS = 120;
  const bar = el("div", { id: "timebar", role: "group", "aria-label": "Time travel" });
  const label = el("label", { for: "asof-date" }, "Graph as of");
  const date = el("input", { id: "asof-date", type: "datetime-local", step: "1" });
  const slider = el("input", {
    id: "asof-slider", type: "range", min: "0", max: "1", step: "1", value: "1",
    "aria-label": "instant in the drawn atoms' history (right end: now)",
  });
  const nowBtn = el("button", { type: "button", id: "asof-now" }, "Now");
  const span = el("span", { id: "asof-span", class: "muted" }, "");
  const status = el("span", { id: "asof-status", role: "status", class: "muted" }, "showing now");
  bar.append(label, date, slider, nowBtn, span, status);
  const toolbar = $("toolbar");
  toolbar.parentNode.insertBefore(bar, toolbar.nextSibling);

  let history = null; // { start, end, stepMs, steps } in epoch ms
  async function loadHistory() {
    const ex = explorer();
    const ids = ex.cy.nodes().not(".ghost").not(".entity").map((n) => n.id()).slice(0, 100);
    if (!ids.length) return null;
    let start = Infinity;
    let end = -Infinity;
    for (let i = 0; i < ids.length; i += 25) {
      const chunk = ids.slice(i, i + 25);
      const vars = {};
      const parts = chunk.map((id, j) => {
        vars["a" + j] = id;
        return `a${j}: atom(atomId: $a${j}) { createdAt head { createdAt } }`;
      });
      const decl = chunk.map((_, j) => "$a" + j + ": ID!").join(", ");
      const data = await ex.gql(`query(${decl}) { ${parts.join(" ")} }`, vars);
      for (const j of chunk.keys()) {
        const a = data["a" + j];
        if (!a) continue;
        if (a.createdAt) start = Math.min(start, Date.parse(a.createdAt));
        if (a.head && a.head.createdAt) end = Math.max(end, Date.parse(a.head.createdAt));
      }
    }
    if (!Number.isFinite(start)) return null;
    end = Math.max(end, start + 1000);
    const wanted = (end - start) / MAX_STEPS / 1000;
    const stepS = STEP_CHOICES_S.find((s) => s >= wanted) || STEP_CHOICES_S[STEP_CHOICES_S.length - 1];
    const stepMs = stepS * 1000;
    const steps = Math.max(1, Math.ceil((end - start) / stepMs));
    history = { start, end, stepMs, steps };
    slider.max = String(steps + 1); // the last position is now
    span.textContent = new Date(start).toLocaleString() + " → " + new Date(end).toLocaleString() +
      " · steps of " + words(stepS);
    return history;
  }

  function words(s) {
    if (s < 60) return s + " s";
    if (s < 3600) return s / 60 + " min";
    if (s < 86400) return s / 3600 + " h";
    return s / 86400 + " day" + (s === 86400 ? "" : "s");
  }

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

  // Two aliases an atom (then and now), in chunks that stay under the API's 30 aliases.
  const MARK_CHUNK = 12;
  async function markChanges() {
    const ex = explorer();
    ex.cy.nodes().removeClass("tt-changed");
    if (asOf === null) return 0;
    const ids = ex.cy.nodes().not(".ghost").not(".entity").not(".tt-absent").map((n) => n.id());
    let changed = 0;
    for (let k = 0; k < ids.length; k += MARK_CHUNK) {
      const chunk = ids.slice(k, k + MARK_CHUNK);
      const parts = chunk.map(
        (_, i) => `t${i}: atom(atomId: $a${i}, asOf: $t) { head { rev } } ` +
          `n${i}: atom(atomId: $a${i}) { state head { rev } }`,
      );
      const decl = ["$t: DateTime"].concat(chunk.map((_, i) => "$a" + i + ": ID!")).join(", ");
      const vars = { t: asOf };
      chunk.forEach((id, i) => (vars["a" + i] = id));
      const data = await ex.gql(`query(${decl}) { ${parts.join(" ")} }`, vars);
      chunk.forEach((id, i) => {
        const then = data["t" + i];
        const now = data["n" + i];
        if (!then) return; // not there at the instant: not drawn as changed
        if (!now || now.head.rev !== then.head.rev) {
          changed += 1;
          ex.cy.getElementById(id).addClass("tt-changed");
        }
      });
    }
    return changed;
  }

  // Redraw every expansion as of the instant (explore.js's refetch keeps the places of
  // drawn nodes; nodes that did not exist then leave, and come back where they were at
  // Now). An opened atom created after the instant is said so, not an error.
  async function redraw() {
    const id = rootId();
    const when = asOf === null ? "now" : new Date(asOf).toLocaleString();
    if (!id) {
      status.textContent = "showing " + when + " (open an atom to draw it)";
      return;
    }
    status.textContent = "drawing as of " + when + "…";
    const outcome = (await explorer().refetch()) || { absent: [] };
    if (outcome.error) {
      status.textContent = "as of " + when + " · could not draw: " + outcome.error;
      return;
    }
    explorer().fit(); // what is drawn at the instant, all in view
    const drawn = explorer().cy.nodes().not(".ghost").not(".entity").not(".tt-absent").length;
    const missing = outcome.absent.includes(id)
      ? "the opened atom did not exist yet; drawing the " + drawn + " drawn atom" +
        (drawn === 1 ? "" : "s") + " that existed · " : "";
    try {
      const changed = await markChanges();
      status.textContent =
        asOf === null
          ? "showing now"
          : "as of " + when + " · " + missing + changed + " drawn atom" + (changed === 1 ? "" : "s") +
            " changed since (orange outline)";
    } catch (e) {
      status.textContent = "as of " + when + " · " + missing + "changes not marked: " + e.message;
    }
  }

  function setInstant(d) {
    asOf = d === null ? null : d.toISOString();
    date.value = d === null ? "" : localValue(d);
    bar.classList.toggle("past", d !== null);
    if (d === null) slider.value = slider.max;
    else if (history) {
      const k = Math.round((d.getTime() - history.start) / history.stepMs);
      slider.value = String(Math.max(0, Math.min(history.steps, k)));
    }
  }

  // For tests and the console: an ISO instant, or null for now; resolves when drawn.
  async function setAsOf(iso) {
    if (!history) await loadHistory();
    setInstant(iso === null ? null : new Date(iso));
    await redraw();
  }
  window.graphsvcTime.setAsOf = setAsOf;
  window.graphsvcTime.history = async () => history || loadHistory();

  // The span is read when the reader reaches for the bar (the drawing may have grown).
  for (const ev of ["pointerdown", "focus"]) {
    slider.addEventListener(ev, () => {
      if (asOf === null) loadHistory().catch(() => {});
    });
  }
  slider.addEventListener("change", async () => {
    if (!history) await loadHistory();
    const k = Number(slider.value);
    setInstant(!history || k > history.steps ? null : new Date(history.start + k * history.stepMs));
    redraw();
  });
  date.addEventListener("change", () => {
    setInstant(date.value ? new Date(date.value) : null);
    redraw();
  });
  nowBtn.addEventListener("click", () => {
    setInstant(null);
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
  panel.append(el("summary", {}, "Replay a read (yours below, or any manifest id)"));
  const form = el("form", { id: "replay-form" });
  form.append(
    el("label", { for: "replay-id" }, "Manifest id"),
    el("input", { id: "replay-id", type: "text", required: "", placeholder: "from read's manifest" }),
    el("button", { type: "submit" }, "Replay"),
  );
  const out = el("div", { id: "replay-out", role: "status" });
  // The reads this page made (newest first): each replays with one click.
  const reads = el("ol", { id: "replay-reads", "aria-label": "Reads made here" });
  document.addEventListener("graphsvc:read", (ev) => {
    const d = ev.detail;
    const item = el("li", {});
    const btn = el("button", { type: "button", class: "linkish", "data-manifest-id": d.manifestId },
      "“" + d.query.slice(0, 40) + "” · " + d.tokens + "/" + d.budget + " tokens");
    btn.title = "manifest " + d.manifestId;
    btn.addEventListener("click", () => {
      $("replay-id").value = d.manifestId;
      form.requestSubmit();
    });
    item.append(btn, el("span", { class: "muted manifest-id" }, " " + d.manifestId.slice(0, 12) + "…"));
    reads.prepend(item);
  });
  panel.append(reads, form, out);
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
