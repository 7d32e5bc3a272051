// graphsvc explorer: a single page over graphsvc's own GraphQL API (search, inspect,
// lineage, read). No build step, no network beyond this server. Every text from the
// graph is put into the page with textContent, never as HTML.
"use strict";

(function () {
  const TOKEN_KEY = "graphsvc.explore.token"; // sessionStorage only, never the URL
  const $ = (id) => document.getElementById(id);
  const MAX_TITLE = 56;

  // ------------------------------------------------------------------ GraphQL
  const ATOM_FIELDS = `atomId rev state text head atomOf atomisedInto archivedAt sources
    links { role unavailable required at orderKey target { atomId rev } }`;

  class ApiError extends Error {
    constructor(message, code) {
      super(message);
      this.code = code || "ERROR";
    }
  }

  async function gql(query, variables) {
    const token = sessionStorage.getItem(TOKEN_KEY);
    const headers = { "Content-Type": "application/json" };
    if (token) headers.Authorization = "Bearer " + token;
    let response;
    try {
      response = await fetch("/graphql", {
        method: "POST",
        headers,
        body: JSON.stringify({ query, variables: variables || {} }),
      });
    } catch (e) {
      throw new ApiError("graphsvc cannot be reached: " + e.message, "NETWORK");
    }
    let body;
    try {
      body = await response.json();
    } catch (e) {
      throw new ApiError("graphsvc answered HTTP " + response.status, "HTTP_" + response.status);
    }
    if (body.errors && body.errors.length) {
      const err = body.errors[0];
      const code = (err.extensions && err.extensions.code) || "ERROR";
      throw new ApiError(err.message, code);
    }
    return body.data;
  }

  function describe(err) {
    return err.code ? err.code + ": " + err.message : String(err);
  }

  // ------------------------------------------------------------------ sign in
  async function checkToken() {
    // A cheap authenticated call: any answer but UNAUTHENTICATED means the token works.
    try {
      await gql("query($id: ID!) { inspect(atomId: $id, limit: 1) { stale } }", {
        id: "00000000-0000-0000-0000-000000000000",
      });
      return null;
    } catch (e) {
      return e.code === "UNAUTHENTICATED" ? e : null;
    }
  }

  function showSignedIn(signedIn) {
    $("signin").hidden = signedIn;
    $("whoami").hidden = !signedIn;
    $("whoami-text").textContent = signedIn ? "Signed in (token kept in this tab only)" : "";
    for (const id of ["q", "read-q", "read-budget"]) $(id).disabled = !signedIn;
    for (const b of document.querySelectorAll("#search-form button, #read-form button")) {
      b.disabled = !signedIn;
    }
  }

  $("signin").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const token = $("token").value.trim();
    if (!token) return;
    sessionStorage.setItem(TOKEN_KEY, token);
    $("token").value = "";
    const bad = await checkToken();
    if (bad) {
      sessionStorage.removeItem(TOKEN_KEY);
      showSignedIn(false);
      setSearchStatus("Sign-in failed: " + describe(bad), true);
      $("token").focus();
      return;
    }
    showSignedIn(true);
    setSearchStatus("");
    $("q").focus();
    const wanted = new URLSearchParams(window.location.search).get("atom");
    if (wanted) openAtom(wanted);
  });

  $("signout-btn").addEventListener("click", () => {
    sessionStorage.removeItem(TOKEN_KEY);
    showSignedIn(false);
    clearGraph();
    $("hits").replaceChildren();
    $("token").focus();
  });

  // ------------------------------------------------------------------ search
  function setSearchStatus(text, isError) {
    const el = $("search-status");
    el.textContent = text;
    el.title = text; // one line on screen (a long query is cut); all of it on hover
    el.classList.toggle("error", Boolean(isError));
  }

  function shortText(text, n) {
    const flat = (text || "").replace(/\s+/g, " ").trim();
    return flat.length <= n ? flat : flat.slice(0, n - 1) + "…";
  }

  // A node's title: the text's first clause (up to ": ", ". ", "; " or " — " after its
  // first 8 characters, so "INC-2041 timeline 2025-11-03 11:41 UTC: ..." keeps its
  // time), cut at a word boundary near MAX_TITLE characters. The full text is shown on
  // hover and in the side panel.
  function titleOf(text) {
    const flat = (text || "").replace(/\s+/g, " ").trim();
    const m = /(: |\. |; | — )/.exec(flat.slice(8));
    let cut = m ? flat.slice(0, 8 + m.index) : flat;
    if (cut.length > MAX_TITLE) {
      const head = cut.slice(0, MAX_TITLE);
      const space = head.lastIndexOf(" ");
      cut = (space > 20 ? head.slice(0, space) : head) + "…";
    }
    return cut;
  }

  $("search-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const q = $("q").value.trim();
    if (!q) return;
    setSearchStatus("Searching…");
    $("hits").replaceChildren();
    try {
      const data = await gql(
        `query($q: String!) { search(query: $q, limit: 20) {
           hits { score weak atom { atomId rev state text } } } }`,
        { q },
      );
      const hits = data.search.hits;
      const weak = hits.filter((h) => h.weak).length;
      const what = hits.length + " hit" + (hits.length === 1 ? "" : "s") + " for “" + shortText(q, 40) + "”";
      if (hits.length && weak === hits.length) {
        // The point first: the line is cut when it is long.
        setSearchStatus("All weak matches: nothing really matches “" + shortText(q, 40) + "” (" +
          hits.length + " hits)", true);
      } else {
        setSearchStatus(what + (weak ? " (" + weak + " weak)" : ""));
      }
      if (!$("read-q").value) $("read-q").value = q;
      for (const hit of hits) {
        const li = document.createElement("li");
        const btn = document.createElement("button");
        btn.type = "button";
        btn.className = hit.weak ? "hit weak" : "hit";
        btn.dataset.atomId = hit.atom.atomId;
        btn.title = hit.weak ? "weak match: its text hardly matches the query" : "";
        const score = document.createElement("span");
        score.className = "score";
        score.textContent = hit.score.toFixed(3);
        const state = document.createElement("span");
        state.className = "badge state-" + hit.atom.state;
        state.textContent = (hit.weak ? "weak match · " : "") + hit.atom.state + " · r" + hit.atom.rev;
        const text = document.createElement("span");
        text.className = "hit-text";
        text.textContent = shortText(hit.atom.text, 140);
        btn.append(score, state, text);
        btn.addEventListener("click", () => openAtom(hit.atom.atomId));
        li.append(btn);
        $("hits").append(li);
      }
    } catch (e) {
      setSearchStatus("Search failed: " + describe(e), true);
    }
  });

  // ------------------------------------------------------------------ graph
  const STATE_COLOURS = {
    active: "#3b82c4",
    retired: "#b8c2cc",
    archived: "#e0a800",
  };
  // 16 colours that stay apart and dark enough on white.
  const ROLE_PALETTE = [
    "#4e79a7", "#e15759", "#59a14f", "#f28e2b", "#b07aa1", "#76b7b2", "#9c755f",
    "#b8860b", "#c2185b", "#1b4f72", "#7b241c", "#145a32", "#6e2c00", "#4a235a",
    "#0e6655", "#566573",
  ];
  const LINEAGE_COLOUR = "#6b3fa0";
  // A role keeps its colour for the whole tab session (first come, first served),
  // so roles in one drawing differ while there are fewer than 16 of them.
  const roleColours = new Map();
  function roleColour(role) {
    if (!roleColours.has(role)) {
      roleColours.set(role, ROLE_PALETTE[roleColours.size % ROLE_PALETTE.length]);
    }
    return roleColours.get(role);
  }

  // Labels keep their screen size when zoomed out down to FIT_FLOOR (so Fit of up to 60
  // nodes stays readable); below it they shrink with the drawing, and under ~7 px they
  // are not drawn (the status line says so). zoomNow follows cy's zoom (see "zoom").
  const FIT_FLOOR = 0.45;
  let zoomNow = 1;
  function labelScale() {
    return zoomNow >= 1 ? 1 : 1 / Math.max(zoomNow, FIT_FLOOR);
  }

  const cy = cytoscape({
    container: $("cy"),
    minZoom: 0.1,
    maxZoom: 4,
    style: [
      {
        selector: "node",
        style: {
          "background-color": "data(colour)",
          label: "data(label)",
          "font-size": () => 12 * labelScale(),
          "font-family": "system-ui, sans-serif",
          color: "#111",
          "text-wrap": "wrap",
          "text-max-width": () => 150 * labelScale(),
          "text-valign": "bottom",
          "text-margin-y": 5,
          "text-background-color": "#fff",
          "text-background-opacity": 0.9,
          "text-background-padding": 2,
          "text-background-shape": "roundrectangle",
          width: 22,
          height: 22,
          "border-width": 2,
          "border-color": "#1d3b5a",
          "min-zoomed-font-size": 7,
        },
      },
      { selector: ".filtered", style: { display: "none" } },
      { selector: "node.weak-hit", style: { opacity: 0.55 } },
      { selector: "node[state = 'retired']", style: { "border-style": "dashed", "border-color": "#5b6770" } },
      { selector: "node[state = 'archived']", style: { shape: "round-rectangle", "border-color": "#7a5c00" } },
      {
        selector: "node.ghost",
        style: {
          "background-opacity": 0,
          "border-style": "dotted",
          "border-color": "#777",
          color: "#555",
          "font-style": "italic",
          shape: "ellipse",
        },
      },
      { selector: "node.root", style: { width: 34, height: 34, "border-width": 4, "border-color": "#c0392b" } },
      { selector: "node.expanded", style: { "border-width": 4 } },
      { selector: "node:selected", style: { "overlay-color": "#f1c40f", "overlay-opacity": 0.35, "overlay-padding": 6 } },
      {
        selector: "edge",
        style: {
          width: 1.6,
          "line-color": "data(colour)",
          "target-arrow-color": "data(colour)",
          "target-arrow-shape": "triangle",
          "arrow-scale": 1.2,
          "curve-style": "bezier",
          // Parallel links (two roles between one pair) far enough apart that their
          // level labels do not run into each other.
          "control-point-step-size": 64,
          opacity: 0.9,
          label: "data(label)",
          // Level and on a light box: a role read along a steep edge is hard to read.
          "font-size": 11,
          color: "#222",
          "text-rotation": "none",
          "text-background-color": "#fcfcfd",
          "text-background-opacity": 0.92,
          "text-background-padding": 2,
          "text-background-shape": "roundrectangle",
          "min-zoomed-font-size": 8,
        },
      },
      { selector: "edge[?required]", style: { width: 4.5 } },
      { selector: "edge[at = 'logical']", style: { "line-style": "dashed", "line-dash-pattern": [8, 4] } },
      {
        selector: "edge[kind = 'derives_from']",
        style: { "line-style": "dotted", "target-arrow-shape": "vee", width: 3 },
      },
      { selector: "edge:selected", style: { "overlay-color": "#f1c40f", "overlay-opacity": 0.35 } },
      // The entity index (SPEC §16): entities are diamonds coloured by type, joined to
      // the atoms that mention them by thin grey lines without arrows or labels.
      {
        selector: "node.entity",
        style: {
          shape: "diamond",
          width: 18,
          height: 18,
          "border-width": 1.5,
          "border-color": "#333",
          "font-size": () => 11 * labelScale(),
          "font-style": "italic",
        },
      },
      {
        selector: "edge[kind = 'mentions']",
        style: {
          width: 1,
          "line-color": "#9aa5b1",
          "line-style": "dotted",
          "target-arrow-shape": "none",
          label: "",
          opacity: 0.8,
        },
      },
      { selector: "node.dim, edge.dim", style: { opacity: 0.2 } },
    ],
  });

  const expanded = new Set();
  let selectedId = null;

  // ------------------------------------------------------------------ entities
  // Colours of the entity types (the GraphQL EntityType values), fixed so a type
  // keeps its colour across drawings and in the legend.
  const ENTITY_COLOURS = {
    PERSON: "#d62728",
    ORGANISATION: "#9467bd",
    PLACE: "#2ca02c",
    PRODUCT: "#ff7f0e",
    EVENT: "#8c564b",
    DATE: "#17becf",
    IDENTIFIER: "#e377c2",
    NAME: "#bcbd22",
  };
  const ENTITY_WORDS = {
    PERSON: "person", ORGANISATION: "organisation", PLACE: "place", PRODUCT: "product",
    EVENT: "event", DATE: "date", IDENTIFIER: "identifier", NAME: "name",
  };
  // Atom groups (colour by shared entity): warm and green first, so no group looks
  // like the default blue of an active atom.
  const GROUP_PALETTE = [
    "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#edc948", "#9c755f", "#ff9da7",
    "#76b7b2", "#8cd17d", "#b6992d", "#d37295", "#86bcb6",
  ];
  const entitiesOf = new Map(); // atomId -> [{id, key, name, type, mentionCount}]
  const ALIASES_PER_QUERY = 25; // the API allows 30 aliases per operation

  async function loadEntities(atomIds) {
    const missing = atomIds.filter((a) => !entitiesOf.has(a) && !a.startsWith("ghost:"));
    for (let i = 0; i < missing.length; i += ALIASES_PER_QUERY) {
      const chunk = missing.slice(i, i + ALIASES_PER_QUERY);
      const vars = {};
      const parts = chunk.map((a, j) => {
        vars["a" + j] = a;
        return `a${j}: atom(atomId: $a${j}) { atomId entities { id key name type mentionCount } }`;
      });
      const decl = chunk.map((_, j) => "$a" + j + ": ID!").join(", ");
      const data = await gql(`query(${decl}) { ${parts.join(" ")} }`, vars);
      chunk.forEach((a, j) => {
        const got = data["a" + j];
        entitiesOf.set(a, got ? got.entities : []);
      });
    }
  }

  function entityMode() {
    return $("entity-mode").value;
  }

  // Draw the entities of the drawn atoms: in "shared" mode only those two or more
  // drawn atoms mention (plus every entity of the selected atom), so the drawing
  // shows what ties atoms together without a cloud of one-off names.
  function drawEntities() {
    // Entities are drawn afresh each time; those drawn before keep their place.
    const kept = new Map();
    cy.nodes(".entity").forEach((n) => kept.set(n.id(), Object.assign({}, n.position())));
    cy.remove("node.entity");
    const mode = entityMode();
    if (mode === "off") return;
    const count = new Map();
    const info = new Map();
    cy.nodes().not(".ghost").not(".entity").forEach((n) => {
      for (const e of entitiesOf.get(n.id()) || []) {
        count.set(e.key, (count.get(e.key) || 0) + 1);
        info.set(e.key, e);
      }
    });
    const own = new Set((entitiesOf.get(selectedId) || []).map((e) => e.key));
    for (const [key, e] of info) {
      if (mode === "shared" && count.get(key) < 2 && !own.has(key)) continue;
      const id = "entity:" + key;
      const node = cy.add({
        group: "nodes",
        classes: "entity",
        data: {
          id,
          label: shortText(e.name, 32),
          colour: ENTITY_COLOURS[e.type] || "#777",
          etype: e.type,
          gid: e.id,
          key,
          mentionCount: e.mentionCount,
        },
      });
      if (kept.has(id)) {
        node.position(kept.get(id));
        node.scratch("_placed", true);
      }
      cy.nodes().not(".ghost").not(".entity").forEach((n) => {
        if ((entitiesOf.get(n.id()) || []).some((x) => x.key === key)) {
          addEdge(n.id(), id, "mentions", "", "", false);
        }
      });
    }
    // New diamonds go next to the atoms that mention them, clear of what is drawn.
    cy.nodes(".entity").forEach((n) => {
      if (n.scratch("_placed")) return;
      const atoms = n.connectedEdges().connectedNodes().not(n).filter((a) => a.scratch("_placed"));
      if (atoms.empty()) return;
      const c = { x: 0, y: 0 };
      atoms.forEach((a) => { c.x += a.position("x"); c.y += a.position("y"); });
      placeAround({ x: c.x / atoms.length, y: c.y / atoms.length }, [n], 45);
    });
    colourAtoms();
  }

  // "Colour atoms by entity": each atom takes the colour of the drawn entity it
  // mentions that most drawn atoms share (ties: by key), so groups of atoms about
  // one person, service or date stand out; other atoms are grey.
  function colourAtoms() {
    const byEntity = $("colour-mode").value === "entity";
    const drawn = new Map();
    cy.nodes(".entity").forEach((e) => drawn.set(e.data("key"), e.connectedEdges().length));
    const palette = new Map();
    cy.nodes().not(".ghost").not(".entity").forEach((n) => {
      if (!byEntity) {
        n.data("colour", STATE_COLOURS[n.data("state")] || "#999");
        return;
      }
      const ents = (entitiesOf.get(n.id()) || []).filter((e) => drawn.has(e.key));
      ents.sort((a, b) => drawn.get(b.key) - drawn.get(a.key) || a.key.localeCompare(b.key));
      if (!ents.length) {
        n.data("colour", "#d5dbe1");
        return;
      }
      const key = ents[0].key;
      if (!palette.has(key)) palette.set(key, GROUP_PALETTE[palette.size % GROUP_PALETTE.length]);
      n.data("colour", palette.get(key));
      n.data("group", key);
    });
    atomGroups = palette;
  }
  let atomGroups = new Map();

  function labelOf(atom) {
    const stateNote = atom.state === "active" ? "" : " [" + atom.state + "]";
    return titleOf(atom.text) + stateNote;
  }

  function atomData(atom) {
    return { label: labelOf(atom), full: atom.text, state: atom.state, rev: atom.rev };
  }

  // A node shows its atom's head (as of the time bar's instant), or the revision the
  // reader picked in the side panel (data `picked`): never an older revision that a
  // neighbour's observed link pins. Such a link is labelled "pinned rN" on its edge;
  // a node first reached only through one is drawn from that revision and marked
  // `pinnedOnly` until loadHeads replaces it with the head. `own`: this is the atom
  // an inspect was about (its head, or as of the instant), which always wins.
  function upsertAtom(atom, extraClass, own) {
    const id = atom.atomId;
    let node = cy.getElementById(id);
    if (node.empty()) {
      const data = Object.assign({ id, colour: STATE_COLOURS[atom.state] || "#999" }, atomData(atom));
      if (atom.head) data.headRev = atom.rev;
      else if (atom.head === false && !own) data.pinnedOnly = true;
      node = cy.add({ group: "nodes", data });
    } else if (own || (atom.head && !node.data("picked"))) {
      node.data(Object.assign(atomData(atom), { pinnedOnly: false, picked: false }));
      if (atom.head) node.data("headRev", atom.rev);
    }
    if (extraClass) node.addClass(extraClass);
    return node;
  }

  // Nodes drawn from a pinned older revision get their atom's head (as of the time
  // bar's instant), in chunks of aliases.
  async function loadHeads() {
    const ids = cy.nodes("[?pinnedOnly]").map((n) => n.id());
    const asOf = window.graphsvcTime ? window.graphsvcTime.asOf() : null;
    for (let i = 0; i < ids.length; i += ALIASES_PER_QUERY) {
      const chunk = ids.slice(i, i + ALIASES_PER_QUERY);
      const vars = { t: asOf };
      const parts = chunk.map((a, j) => {
        vars["a" + j] = a;
        return `a${j}: atom(atomId: $a${j}, asOf: $t) { head { rev state text } }`;
      });
      const decl = ["$t: DateTime"].concat(chunk.map((_, j) => "$a" + j + ": ID!")).join(", ");
      const data = await gql(`query(${decl}) { ${parts.join(" ")} }`, vars);
      chunk.forEach((a, j) => {
        const got = data["a" + j];
        const node = cy.getElementById(a);
        if (!got || !got.head || node.empty() || !node.data("pinnedOnly")) return;
        const h = got.head;
        const head = { atomId: a, rev: h.rev, state: String(h.state).toLowerCase(), text: h.text };
        node.data(Object.assign(atomData(head), { pinnedOnly: false, headRev: h.rev }));
      });
    }
  }

  function addEdge(src, dst, kind, role, at, required, extra) {
    const id = [kind, src, dst, role, at].join("|");
    if (!cy.getElementById(id).empty()) return;
    cy.add({
      group: "edges",
      data: Object.assign(
        {
          id,
          source: src,
          target: dst,
          kind,
          role,
          label: role,
          at,
          required: Boolean(required),
          colour: kind === "derives_from" ? LINEAGE_COLOUR : roleColour(role),
        },
        extra || {},
      ),
    });
  }

  function addGhosts(atom) {
    atom.links.forEach((link, i) => {
      if (!link.unavailable) return;
      const ghostId = "ghost:" + atom.atomId + ":" + i;
      if (cy.getElementById(ghostId).empty()) {
        cy.add({
          group: "nodes",
          classes: "ghost",
          data: { id: ghostId, label: "unavailable (" + link.role + ")", state: "unavailable", colour: "#fff" },
        });
      }
      addEdge(atom.atomId, ghostId, "link", link.role, link.at.toLowerCase(), link.required);
    });
  }

  const INSPECT = `query($id: ID!, $rev: Int, $version: LinkAt, $asOf: DateTime) {
    inspect(atomId: $id, rev: $rev, version: $version, direction: BOTH, limit: 200,
            asOf: $asOf) {
      atom { ${ATOM_FIELDS} }
      neighbors { atom { ${ATOM_FIELDS} } via { direction role at required orderKey } }
      diagnostics
      cursor
    } }`;

  const LINEAGE = `query($id: ID!) { lineage(atomId: $id, depth: 2) }`;
  // The typed lineage graph checks each derives_from signature now (VERIFIED,
  // INVALID, UNKNOWN_KEY); the side panel shows that status beside key and time.
  const SIGNATURES = `query($id: ID!) {
    lineageGraph(atomId: $id, depth: 1) { edges { source target kind signatureStatus } }
  }`;
  const SIGNATURE_WORDS = {
    VERIFIED: "signature verified",
    INVALID: "signature INVALID",
    UNKNOWN_KEY: "signing key unknown",
  };

  // `lineage` answers now only: as of an instant the drawing leaves lineage out.
  function lineageOf(atomId) {
    if (window.graphsvcTime && window.graphsvcTime.asOf()) {
      return Promise.resolve({ nodes: [], edges: [] });
    }
    return gql(LINEAGE, { id: atomId }).then((d) => d.lineage);
  }

  // Variables every inspect sends besides its own (refetch(extra) sets them).
  const extraVariables = {};
  async function inspect(atomId, rev) {
    // The time bar (explore_time.js) sets the instant; none: now.
    const asOf = window.graphsvcTime ? window.graphsvcTime.asOf() : null;
    const vars = Object.assign({}, extraVariables, {
      id: atomId,
      rev: rev || null,
      version: $("version").value,
      asOf,
    });
    const data = await gql(INSPECT, vars);
    return data.inspect;
  }

  let truncatedNote = "";
  function mergeInspect(result) {
    const root = result.atom;
    // More than one page of neighbours: say so rather than pretend the drawing is whole.
    truncatedNote = result.cursor ? " (first 200 neighbours of a node with more)" : "";
    upsertAtom(root, "expanded", true);
    expanded.add(root.atomId);
    for (const n of result.neighbors) {
      upsertAtom(n.atom);
      for (const v of n.via) {
        if (v.direction === "OUTGOING") {
          // An observed link to an older revision: the edge names it, the node stays.
          const pinned = v.at === "OBSERVED" && n.atom.head === false
            ? { label: v.role + " · pinned r" + n.atom.rev, pinnedRev: n.atom.rev } : null;
          addEdge(root.atomId, n.atom.atomId, "link", v.role, v.at.toLowerCase(), v.required, pinned);
        } else {
          addEdge(n.atom.atomId, root.atomId, "link", v.role, v.at.toLowerCase(), v.required);
        }
      }
    }
    addGhosts(root);
  }

  function mergeLineage(lin) {
    for (const e of lin.edges) {
      if (e.type !== "derives_from") continue;
      for (const end of [e.source, e.target]) {
        if (cy.getElementById(end).empty()) {
          const n = lin.nodes.find((x) => x.id === end);
          if (n) upsertAtom({ atomId: n.id, rev: n.rev, state: n.state, text: n.text });
        }
      }
      addEdge(e.source, e.target, "derives_from", "derives_from", "lineage", false, {
        fromRev: e.fromRev,
        toRev: e.toRev,
        keyId: e.keyId,
        signedAt: e.signedAt,
      });
    }
  }

  function showGraphError(text) {
    // Errors replace the drawing: never an error over a stale graph.
    clearGraph();
    $("cy").hidden = true;
    $("canvas-wrap").hidden = true;
    const box = $("graph-error");
    box.textContent = text;
    box.hidden = false;
  }

  function clearGraphError() {
    $("graph-error").hidden = true;
    $("graph-error").textContent = "";
    $("cy").hidden = false;
    $("canvas-wrap").hidden = false;
    cy.resize();
  }

  function clearGraph() {
    cy.elements().remove();
    expanded.clear();
    selectedId = null;
    $("side-body").hidden = true;
    $("side-empty").hidden = false;
    refreshLists();
  }

  // The first drawing of an opened atom: fcose over everything. Later expansions
  // never run it again (see placeAround): drawn nodes stay where the reader saw them.
  function layout(randomize) {
    if (cy.nodes().empty()) return;
    const opts = {
      name: "fcose",
      quality: "proof",
      randomize: randomize,
      animate: false,
      nodeDimensionsIncludeLabels: true,
      idealEdgeLength: () => 170,
      nodeRepulsion: () => 30000,
      nodeSeparation: 140,
      gravity: 0.15,
      packComponents: true,
      fit: true,
      padding: 30,
    };
    try {
      cy.layout(opts).run();
    } catch (e) {
      cy.layout({ name: "cose", animate: false, nodeDimensionsIncludeLabels: true }).run();
    }
    cy.nodes().forEach((n) => n.scratch("_placed", true));
    readableView();
  }

  // New nodes go on rings around `centre`, each slot at least MIN_GAP from every drawn
  // node, the slots facing away from the rest of the drawing first. Nothing drawn
  // moves. Deterministic (no random jitter), so the same expansion draws the same.
  const MIN_GAP = 100;
  const RING_STEP = 115;
  function placeAround(centre, nodes, firstRadius) {
    const taken = [];
    cy.nodes().forEach((n) => {
      if (n.scratch("_placed")) taken.push(n.position());
    });
    const old = taken.length ? taken : [centre];
    const mid = old.reduce((a, p) => ({ x: a.x + p.x / old.length, y: a.y + p.y / old.length }),
      { x: 0, y: 0 });
    const away = Math.hypot(centre.x - mid.x, centre.y - mid.y) > 1
      ? Math.atan2(centre.y - mid.y, centre.x - mid.x) : 0;
    const free = (p) => taken.every((q) => Math.hypot(p.x - q.x, p.y - q.y) >= MIN_GAP);
    const list = [...nodes];
    let next = 0;
    for (let ring = 0; next < list.length && ring < 40; ring++) {
      const r = (firstRadius || 170) + ring * RING_STEP;
      const count = Math.max(6, Math.floor((2 * Math.PI * r) / MIN_GAP));
      const slots = [];
      for (let i = 0; i < count; i++) {
        // alternate either side of the outward direction: nearest to it first
        const k = i % 2 === 0 ? i / 2 : -(i + 1) / 2;
        const a = away + (k * 2 * Math.PI) / count + (ring % 2 ? Math.PI / count : 0);
        slots.push({ x: centre.x + r * Math.cos(a), y: centre.y + r * Math.sin(a) });
      }
      for (const p of slots) {
        if (next >= list.length) break;
        if (!free(p)) continue;
        list[next].position(p);
        list[next].scratch("_placed", true);
        taken.push(p);
        next++;
      }
    }
  }

  // Keep the opened atom (and, when it fits, the expanded node and what it brought) in
  // view: pan as little as needed; zoom out only as far as labels stay readable.
  const VIEW_MARGIN = 40;
  function keepInView(extra) {
    const root = cy.nodes(".root");
    const want = root.union(extra || cy.collection()).filter((n) => !n.hasClass("filtered"));
    if (want.empty()) return;
    const w = cy.width();
    const h = cy.height();
    let bb = want.renderedBoundingBox({ includeLabels: false });
    const room = Math.min((w - 2 * VIEW_MARGIN) / Math.max(bb.w, 1), (h - 2 * VIEW_MARGIN) / Math.max(bb.h, 1));
    if (room < 1) {
      const level = Math.max(FIT_FLOOR, cy.zoom() * room);
      if (level < cy.zoom()) {
        const at = (root.empty() ? want : root).renderedBoundingBox();
        cy.zoom({ level, renderedPosition: { x: (at.x1 + at.x2) / 2, y: (at.y1 + at.y2) / 2 } });
      }
      bb = want.renderedBoundingBox({ includeLabels: false });
    }
    // What still does not fit: the opened atom wins.
    const box = bb.w > w - 2 * VIEW_MARGIN || bb.h > h - 2 * VIEW_MARGIN
      ? (root.empty() ? want : root).renderedBoundingBox({ includeLabels: false }) : bb;
    let dx = 0;
    let dy = 0;
    if (box.x1 < VIEW_MARGIN) dx = VIEW_MARGIN - box.x1;
    else if (box.x2 > w - VIEW_MARGIN) dx = w - VIEW_MARGIN - box.x2;
    if (box.y1 < VIEW_MARGIN) dy = VIEW_MARGIN - box.y1;
    else if (box.y2 > h - VIEW_MARGIN) dy = h - VIEW_MARGIN - box.y2;
    if (dx || dy) cy.panBy({ x: dx, y: dy });
    updateZoomHint();
  }

  // After a layout: fit, but never below a zoom where labels stay readable; then the
  // selected node is centred and Fit shows everything.
  const READABLE_ZOOM = 0.8;
  function readableView() {
    cy.fit(undefined, 30);
    if (cy.zoom() < READABLE_ZOOM && cy.nodes().length <= 60) {
      const focus = selectedId ? cy.getElementById(selectedId) : cy.nodes(".root");
      cy.zoom(READABLE_ZOOM);
      cy.center(focus && !focus.empty() ? focus : undefined);
    }
    updateZoomHint();
  }

  // Fit: everything, unless that is below FIT_FLOOR for up to 60 nodes; then as much as
  // fits at FIT_FLOOR around the drawing's centre (labels stay 12 px on screen).
  function fitReadable() {
    const shown = cy.elements().not(".filtered");
    cy.fit(shown, 30);
    if (cy.zoom() < FIT_FLOOR && cy.nodes().not(".filtered").length <= 60) {
      cy.zoom(FIT_FLOOR);
      cy.center(shown);
    }
    updateZoomHint();
  }

  function updateZoomHint() {
    zoomNow = cy.zoom();
    $("zoom-hint").hidden = cy.zoom() * 12 * labelScale() >= 7 || cy.nodes().empty();
    syncStatusLine();
  }

  function setGraphStatus(text) {
    $("graph-status").textContent = text;
    $("graph-status").title = text;
    syncStatusLine();
  }

  // The status line lies over the canvas's top edge and is shown only with a message:
  // it takes no room, so the canvas keeps its size as messages come and go.
  function syncStatusLine() {
    $("graph-status").hidden = !$("graph-status").textContent;
    $("status-line").hidden = $("graph-status").hidden && $("zoom-hint").hidden;
  }

  async function openAtom(atomId) {
    setGraphStatus("Loading…");
    clearGraphError();
    clearGraph();
    try {
      const [result, lin] = await Promise.all([
        inspect(atomId),
        lineageOf(atomId),
      ]);
      mergeInspect(result);
      mergeLineage(lin);
      cy.getElementById(atomId).addClass("root");
      selectedId = atomId;
      await withEntities();
      layout(true);
      applyRoleFilter();
      refreshLists();
      select(atomId, result, lin);
      setGraphStatus(truncatedNote.trim());
      // A shareable address names the atom (never the token).
      history.replaceState(null, "", "?atom=" + encodeURIComponent(atomId));
    } catch (e) {
      setGraphStatus("");
      showGraphError("Could not draw " + atomId + ": " + describe(e));
    }
  }

  // Merge what inspect and lineage say about `atomId` and put the nodes that are new
  // around it; nothing already drawn moves. Returns the new nodes.
  function mergeAround(atomId, result, lin) {
    const known = cy.getElementById(atomId);
    let centre = known.empty() || !known.scratch("_placed") ? null : Object.assign({}, known.position());
    mergeInspect(result);
    if (lin) mergeLineage(lin);
    const fresh = cy.nodes().filter((n) => !n.scratch("_placed") && !n.hasClass("entity"));
    if (!centre) {
      // An atom picked from a list that is not drawn yet: it goes beside the drawing.
      const me = cy.getElementById(atomId);
      const bb = cy.nodes().filter((n) => n.scratch("_placed")).boundingBox();
      centre = bb.w ? { x: bb.x2 + 2 * RING_STEP, y: (bb.y1 + bb.y2) / 2 } : { x: 0, y: 0 };
      me.position(centre);
      me.scratch("_placed", true);
    }
    placeAround(centre, fresh.not(cy.getElementById(atomId)).sort((a, b) => (a.id() < b.id() ? -1 : 1)));
    return fresh;
  }

  // Each expansion's number: a click during an expansion starts another, and only the
  // newest one selects its node and moves the view (an older one finishing later must
  // not take the selection back from the node the person clicked last).
  let expandSeq = 0;
  async function expand(atomId) {
    if (atomId.startsWith("ghost:")) return;
    const mine = ++expandSeq;
    setGraphStatus("Expanding…");
    if (!$("graph-error").hidden) clearGraphError();
    try {
      const before = cy.nodes().not(".entity").length;
      const [result, lin] = await Promise.all([
        inspect(atomId),
        lineageOf(atomId),
      ]);
      const fresh = mergeAround(atomId, result, lin);
      if (mine === expandSeq) selectedId = atomId;
      await withEntities();
      const added = cy.nodes().not(".entity").length - before;
      applyRoleFilter();
      refreshLists();
      if (mine !== expandSeq) return; // a newer click owns the selection and the view
      select(atomId, result, lin);
      keepInView(cy.getElementById(atomId).union(fresh));
      // "0 nodes added" alone reads like a failed expansion.
      const none = added === 0 ? " (every neighbour was already drawn)" : "";
      setGraphStatus(added + " node" + (added === 1 ? "" : "s") + " added" + none + truncatedNote);
    } catch (e) {
      setGraphStatus("");
      showGraphError("Could not expand " + atomId + ": " + describe(e));
    }
  }

  // Fetch every expansion again (the "links at" switch, or a caller's extra query
  // variables such as a point in time): link edges are redrawn, drawn nodes keep their
  // place, new ones go around the atom that brought them, nodes no expansion reaches
  // any more leave. `extra` (optional) is merged into every inspect's variables and
  // kept for later expansions.
  async function refetch(extra) {
    if (extra) Object.assign(extraVariables, extra);
    const order = [...expanded];
    if (!order.length) return;
    setGraphStatus("Updating " + order.length + " expansion" + (order.length === 1 ? "" : "s") + "…");
    if (!$("graph-error").hidden) clearGraphError();
    try {
      const results = await Promise.all(order.map((id) => inspect(id)));
      cy.remove("edge[kind = 'link']");
      cy.remove("node.ghost");
      let selected = null;
      results.forEach((result, i) => {
        mergeAround(order[i], result, null);
        if (order[i] === selectedId) selected = result;
      });
      // Atoms that nothing reaches any more (not expanded, no edge left) leave.
      cy.nodes().not(".entity").forEach((n) => {
        if (!expanded.has(n.id()) && n.connectedEdges("[kind != 'mentions']").empty()) n.remove();
      });
      await withEntities();
      applyRoleFilter();
      refreshLists();
      if (selected) {
        fillAtom(selected);
        fillRevisions(selected.atom);
      }
      keepInView(cy.collection());
      setGraphStatus("links at " + $("version").value.toLowerCase() + " · " + order.length +
        " expansion" + (order.length === 1 ? "" : "s") + " kept" + truncatedNote);
    } catch (e) {
      setGraphStatus("");
      showGraphError("Could not update the drawing: " + describe(e));
    }
  }

  async function withEntities() {
    const atoms = cy.nodes().not(".ghost").not(".entity").map((n) => n.id());
    try {
      await loadHeads();
    } catch (e) {
      setGraphStatus("heads of pinned revisions could not be loaded: " + describe(e));
    }
    try {
      await loadEntities(atoms);
    } catch (e) {
      setGraphStatus("entities could not be loaded: " + describe(e));
    }
    drawEntities();
  }

  // Labels below ~7 px are not drawn; say so instead of showing unreadable text.
  // Label sizes follow the zoom (labelScale): restyle once per frame while zooming.
  let restyle = 0;
  cy.on("zoom", () => {
    zoomNow = cy.zoom();
    updateZoomHint();
    hideTip();
    if (!restyle) {
      restyle = requestAnimationFrame(() => {
        restyle = 0;
        cy.style().update();
      });
    }
  });
  cy.on("pan", hideTip);

  // Full text on hover (labels are short titles).
  function hideTip() {
    $("hover-tip").hidden = true;
  }
  cy.on("mouseover", "node", (ev) => {
    const n = ev.target;
    const tip = $("hover-tip");
    tip.textContent = n.data("full") || n.data("label");
    const p = n.renderedPosition();
    const box = $("cy").getBoundingClientRect();
    const host = $("center").getBoundingClientRect();
    tip.style.left = Math.min(box.left - host.left + p.x + 14, host.width - 340) + "px";
    tip.style.top = box.top - host.top + p.y + 14 + "px";
    tip.hidden = false;
  });
  cy.on("mouseout", "node", hideTip);
  cy.on("tap", hideTip);
  $("cy").addEventListener("mouseleave", hideTip);

  cy.on("tap", "node", (ev) => {
    const id = ev.target.id();
    if (id.startsWith("ghost:")) {
      showGhost(ev.target);
      return;
    }
    if (ev.target.hasClass("entity")) {
      showEntity(ev.target);
      return;
    }
    expand(id);
  });

  // ------------------------------------------------------------------ lists + legend
  function refreshLists() {
    cy.nodes().forEach((n) => n.scratch("_placed", true));
    $("node-count").textContent = String(cy.nodes().length);
    refreshCounts();
    $("edge-count").textContent = String(cy.edges().length);
    const ul = $("nodelist");
    ul.replaceChildren();
    cy.nodes().forEach((n) => {
      const li = document.createElement("li");
      const btn = document.createElement("button");
      btn.type = "button";
      btn.textContent = n.data("label");
      btn.dataset.nodeId = n.id();
      btn.addEventListener("click", () => {
        if (n.hasClass("ghost")) showGhost(n);
        else if (n.hasClass("entity")) showEntity(n);
        else expand(n.id());
      });
      li.append(btn);
      ul.append(li);
    });
    drawLegend();
  }

  // Roles the reader unticked in the legend: their links (and atoms reached only
  // through them) are not displayed; they stay in the drawing and come back at once.
  const hiddenRoles = new Set();
  function applyRoleFilter() {
    cy.elements().removeClass("filtered");
    if (!hiddenRoles.size) return;
    cy.edges("[kind = 'link']").forEach((e) => {
      if (hiddenRoles.has(e.data("role"))) e.addClass("filtered");
    });
    cy.nodes().not(".entity").forEach((n) => {
      if (n.hasClass("root") || n.hasClass("expanded")) return;
      const shown = n.connectedEdges("[kind != 'mentions']").not(".filtered");
      if (shown.empty()) n.addClass("filtered");
    });
    cy.nodes(".entity").forEach((n) => {
      const atoms = n.connectedEdges().connectedNodes().not(n).not(".filtered");
      if (atoms.empty()) n.addClass("filtered");
    });
    cy.edges("[kind = 'mentions']").forEach((e) => {
      if (e.source().hasClass("filtered") || e.target().hasClass("filtered")) e.addClass("filtered");
    });
  }

  function refreshCounts() {
    const hidden = cy.nodes(".filtered").length;
    $("hidden-note").textContent = hidden ? " · " + hidden + " hidden by the role filter" : "";
  }

  function legendItem(swatch, text) {
    const span = document.createElement("span");
    span.className = "legend-item";
    span.append(swatch, document.createTextNode(text));
    return span;
  }

  function nodeSwatch(cls) {
    const s = document.createElement("span");
    s.className = "sw-node " + cls;
    return s;
  }

  function edgeSwatch(colour, cls) {
    const s = document.createElement("span");
    s.className = "sw-edge " + (cls || "");
    s.style.borderTopColor = colour;
    s.style.color = colour;
    return s;
  }

  function drawLegend() {
    const box = $("legend");
    box.replaceChildren();
    const nodes = document.createElement("div");
    // Coloured by shared entity, fills name groups (last line); state is the shape.
    nodes.className = $("colour-mode").value === "entity" ? "by-group" : "";
    nodes.append(
      legendItem(nodeSwatch("active"), "active"),
      legendItem(nodeSwatch("retired"), "retired"),
      legendItem(nodeSwatch("archived"), "archived (atomised)"),
      legendItem(nodeSwatch("ghost"), "unavailable / purged"),
      legendItem(nodeSwatch("rootmark"), "opened atom"),
    );
    const styles = document.createElement("div");
    styles.append(
      legendItem(edgeSwatch("#333"), "observed link (pinned revision)"),
      legendItem(edgeSwatch("#333", "dashed"), "logical link (follows head)"),
      legendItem(edgeSwatch("#333", "heavy"), "required"),
      legendItem(edgeSwatch(LINEAGE_COLOUR, "dotted"), "derives_from (lineage)"),
    );
    // Roles double as the role filter: untick one to hide its links (and the atoms
    // only those links joined).
    const roles = document.createElement("div");
    roles.id = "role-filter";
    const seen = new Set();
    cy.edges("[kind = 'link']").forEach((e) => seen.add(e.data("role")));
    for (const role of [...seen].sort()) {
      const item = legendItem(edgeSwatch(roleColour(role)), role);
      const box = document.createElement("input");
      box.type = "checkbox";
      box.checked = !hiddenRoles.has(role);
      box.dataset.role = role;
      box.setAttribute("aria-label", "show " + role + " links");
      box.addEventListener("change", () => {
        if (box.checked) hiddenRoles.delete(role);
        else hiddenRoles.add(role);
        applyRoleFilter();
        refreshCounts();
      });
      const label = document.createElement("label");
      label.className = "role-toggle";
      label.append(box, item);
      roles.append(label);
    }
    if (seen.size) {
      const title = document.createElement("span");
      title.className = "legend-title";
      title.textContent = "roles (untick to hide):";
      roles.prepend(title);
    }
    const ents = document.createElement("div");
    const types = new Set();
    cy.nodes(".entity").forEach((n) => types.add(n.data("etype")));
    if (types.size) {
      const title = document.createElement("span");
      title.className = "legend-title";
      title.textContent = "entities (◆):";
      ents.append(title);
      for (const t of Object.keys(ENTITY_COLOURS)) {
        if (!types.has(t)) continue;
        const sw = nodeSwatch("entity");
        sw.style.backgroundColor = ENTITY_COLOURS[t];
        ents.append(legendItem(sw, ENTITY_WORDS[t]));
      }
    }
    const groups = document.createElement("div");
    groups.id = "legend-colour-key";
    if ($("colour-mode").value === "entity" && atomGroups.size) {
      const title = document.createElement("span");
      title.className = "legend-title";
      title.textContent = "atoms coloured by the entity they share:";
      groups.append(title);
      for (const [key, colour] of atomGroups) {
        const sw = nodeSwatch("active");
        sw.style.backgroundColor = colour;
        const node = cy.getElementById("entity:" + key);
        groups.append(legendItem(sw, node.empty() ? key : node.data("label")));
      }
    }
    // What the colours mean comes first: roles can fill several rows, and when they
    // need more than the legend's height the overflow (scrolled) is the last roles.
    box.append(nodes, groups, ents, styles, roles);
  }

  // ------------------------------------------------------------------ side panel
  function li(text, cls) {
    const el = document.createElement("li");
    el.textContent = text;
    if (cls) el.className = cls;
    return el;
  }

  function atomButton(atomId, text) {
    const btn = document.createElement("button");
    btn.type = "button";
    btn.className = "linkish";
    btn.textContent = text;
    btn.addEventListener("click", () => expand(atomId));
    return btn;
  }

  function showGhost(node) {
    selectedId = null;
    $("side-empty").hidden = true;
    $("side-body").hidden = false;
    $("side-title").textContent = "Unavailable link target";
    $("side-meta").textContent = "role " + node.data("label");
    $("rev-pick").replaceChildren();
    $("expand-btn").disabled = true;
    $("side-text").textContent =
      "This link's target is unavailable to you (purged, or not in your subject). " +
      "graphsvc never names it.";
    for (const id of ["side-cites", "side-lineage", "side-out", "side-in", "side-entities"]) {
      $(id).replaceChildren();
    }
  }

  function fillAtom(result) {
    const a = result.atom;
    $("side-title").textContent = shortText(a.text, 80);
    $("side-meta").textContent =
      a.atomId + " · rev " + a.rev + (a.head ? " (head)" : " (superseded)") + " · " + a.state +
      (a.archivedAt ? " · archived " + a.archivedAt : "") +
      (a.atomOf ? " · atom of " + a.atomOf : "") +
      (a.atomisedInto ? " · atomised into " + a.atomisedInto : "");
    $("side-text").textContent = a.text;
    const cites = $("side-cites");
    cites.replaceChildren();
    const sources = Array.isArray(a.sources) ? a.sources : [];
    if (!sources.length) cites.append(li("none", "muted"));
    for (const s of sources) {
      let text = s.uri;
      if (s.version) text += " @ " + s.version;
      if (s.range) text += " [" + s.range.unit + " " + s.range.start + "–" + s.range.end + "]";
      if (s.verified) text += " ✓ verified";
      cites.append(li(text));
    }
    const out = $("side-out");
    const inc = $("side-in");
    out.replaceChildren();
    inc.replaceChildren();
    for (const link of a.links) {
      const item = document.createElement("li");
      const head = link.role + (link.required ? " (required)" : "") + " · " + link.at.toLowerCase() + " → ";
      item.append(document.createTextNode(head));
      if (link.unavailable || !link.target) {
        item.append(document.createTextNode("unavailable"));
      } else {
        const n = result.neighbors.find((x) => x.atom.atomId === link.target.atomId);
        item.append(atomButton(link.target.atomId, n ? shortText(n.atom.text, 60) : link.target.atomId));
        // An observed link that pins an older revision says so (the node shows the head).
        const node = cy.getElementById(link.target.atomId);
        const headRev = node.empty() ? null : node.data("headRev");
        item.append(document.createTextNode(" r" + link.target.rev +
          (link.at === "OBSERVED" && headRev && headRev > link.target.rev
            ? " · pinned (head is r" + headRev + ")" : "")));
      }
      out.append(item);
    }
    if (!a.links.length) out.append(li("none", "muted"));
    for (const n of result.neighbors) {
      for (const v of n.via) {
        if (v.direction !== "INCOMING") continue;
        const item = document.createElement("li");
        item.append(document.createTextNode(
          v.role + (v.required ? " (required)" : "") + " · " + v.at.toLowerCase() + " ← "));
        item.append(atomButton(n.atom.atomId, shortText(n.atom.text, 60)));
        inc.append(item);
      }
    }
    if (!inc.children.length) inc.append(li("none", "muted"));
  }

  function fillEntities(atomId) {
    const ul = $("side-entities");
    ul.replaceChildren();
    const ents = entitiesOf.get(atomId) || [];
    if (!ents.length) ul.append(li("none", "muted"));
    for (const e of ents) {
      const item = document.createElement("li");
      const sw = document.createElement("span");
      sw.className = "sw-node entity";
      sw.style.backgroundColor = ENTITY_COLOURS[e.type] || "#777";
      item.append(sw);
      const btn = document.createElement("button");
      btn.type = "button";
      btn.className = "linkish";
      btn.textContent = e.name;
      btn.addEventListener("click", () => {
        const node = cy.getElementById("entity:" + e.key);
        if (!node.empty()) showEntity(node);
        else showEntity(null, e);
      });
      item.append(btn);
      item.append(document.createTextNode(
        " · " + (ENTITY_WORDS[e.type] || e.type) + " · " + e.mentionCount + " atom" +
        (e.mentionCount === 1 ? "" : "s")));
      ul.append(item);
    }
  }

  const ENTITY_MENTIONS = `query($id: ID!) { node(id: $id) { ... on Entity {
    key name type aliases mentionCount
    mentions(first: 20) { edges { node { count atom { atomId head { text } } } }
      pageInfo { hasNextPage } } } } }`;

  async function showEntity(node, known) {
    const e = known || {
      id: node.data("gid"), key: node.data("key"), name: node.data("label"),
      type: node.data("etype"), mentionCount: node.data("mentionCount"),
    };
    // Highlight the atoms that mention it; dim the rest.
    cy.elements().removeClass("dim");
    if (node) {
      const keep = node.closedNeighborhood();
      cy.elements().not(keep).addClass("dim");
      cy.nodes().unselect();
      node.select();
    }
    $("side-empty").hidden = true;
    $("side-body").hidden = false;
    $("side-title").textContent = e.name;
    $("side-meta").textContent =
      "entity · " + (ENTITY_WORDS[e.type] || e.type) + " · key " + e.key + " · mentioned by " +
      e.mentionCount + " current atom" + (e.mentionCount === 1 ? "" : "s");
    $("rev-pick").replaceChildren();
    $("expand-btn").disabled = true;
    $("side-text").textContent = "Derived by the entity index from the atoms' texts; not an atom.";
    for (const id of ["side-cites", "side-lineage", "side-out", "side-in", "side-entities"]) {
      $(id).replaceChildren();
    }
    try {
      const d = await gql(ENTITY_MENTIONS, { id: e.id });
      const ent = d.node;
      if (!ent) return;
      $("side-text").textContent =
        "Derived by the entity index from the atoms' texts; not an atom.\nAliases: " +
        ent.aliases.join(", ");
      const ul = $("side-in");
      for (const edge of ent.mentions.edges) {
        const m = edge.node;
        if (!m.atom) continue;
        const item = document.createElement("li");
        item.append(document.createTextNode("mentioned ×" + m.count + " by "));
        item.append(atomButton(m.atom.atomId, shortText(m.atom.head.text, 60)));
        ul.append(item);
      }
      if (ent.mentions.pageInfo.hasNextPage) ul.append(li("… and more", "muted"));
    } catch (err) {
      $("side-error").textContent = "Could not load the entity: " + describe(err);
      $("side-error").hidden = false;
    }
  }

  function fillLineage(atomId, lin) {
    const ul = $("side-lineage");
    ul.replaceChildren();
    ul.dataset.atom = atomId;
    const pending = [];
    const byId = new Map(lin.nodes.map((n) => [n.id, n]));
    const edges = lin.edges.filter(
      (e) => e.type === "derives_from" && (e.source === atomId || e.target === atomId),
    );
    if (!edges.length) ul.append(li("none", "muted"));
    for (const e of edges) {
      const item = document.createElement("li");
      const other = e.source === atomId ? e.target : e.source;
      const n = byId.get(other);
      item.append(document.createTextNode(e.source === atomId ? "derived from " : "source of "));
      item.append(atomButton(other, n ? shortText(n.text, 50) : other));
      const sig = document.createElement("span");
      sig.className = e.keyId ? "sig signed" : "sig unsigned";
      sig.textContent = e.keyId
        ? " · signed (key " + e.keyId + ", " + e.signedAt + ")"
        : " · unsigned";
      item.append(sig);
      ul.append(item);
      if (e.keyId) pending.push([item, e.source + ">" + e.target]);
    }
    if (pending.length) checkSignatures(atomId, ul, pending);
  }

  function checkSignatures(atomId, ul, pending) {
    gql(SIGNATURES, { id: atomId })
      .then((d) => {
        if (ul.dataset.atom !== atomId) return; // another atom was picked meanwhile
        const status = new Map();
        for (const e of d.lineageGraph.edges) {
          if (e.kind !== "DERIVES_FROM") continue;
          // Either orientation: the two APIs name the same edge's ends.
          status.set(e.source + ">" + e.target, e.signatureStatus);
          status.set(e.target + ">" + e.source, e.signatureStatus);
        }
        for (const [item, key] of pending) {
          const s = status.get(key);
          const span = document.createElement("span");
          span.className = "sig " + (s === "VERIFIED" ? "verified" : "bad");
          span.textContent = " · " + (SIGNATURE_WORDS[s] || "signature not checked");
          item.append(span);
        }
      })
      .catch(() => {
        if (ul.dataset.atom !== atomId) return;
        for (const [item] of pending) {
          const span = document.createElement("span");
          span.className = "sig bad";
          span.textContent = " · signature not checked";
          item.append(span);
        }
      });
  }

  function fillRevisions(atom) {
    const pick = $("rev-pick");
    pick.replaceChildren();
    const headRev = atom.head ? atom.rev : cy.getElementById(atom.atomId).data("headRev") || atom.rev;
    const top = Math.max(headRev, atom.rev);
    for (let r = top; r >= 1; r--) {
      const opt = document.createElement("option");
      opt.value = String(r);
      opt.textContent = "rev " + r + (r === top ? " (head)" : "");
      if (r === atom.rev) opt.selected = true;
      pick.append(opt);
    }
  }

  function select(atomId, result, lin) {
    selectedId = atomId;
    pickSeq++; // a revision still loading for the previous selection is dropped
    $("side-empty").hidden = true;
    $("side-body").hidden = false;
    $("side-error").hidden = true;
    $("expand-btn").disabled = false;
    cy.nodes().unselect();
    cy.getElementById(atomId).select();
    cy.elements().removeClass("dim");
    fillAtom(result);
    fillLineage(atomId, lin);
    fillRevisions(result.atom);
    fillEntities(atomId);
  }

  // Picking a revision shows it in the side panel and on its node (an explicit pick);
  // the head again, or expanding the atom, shows the head. Only the newest pick for
  // the selected atom is shown.
  let pickSeq = 0;
  $("rev-pick").addEventListener("change", async () => {
    if (!selectedId) return;
    const forId = selectedId;
    const mine = ++pickSeq;
    const rev = Number($("rev-pick").value);
    try {
      const result = await inspect(forId, rev);
      if (mine !== pickSeq || selectedId !== forId) return;
      $("side-error").hidden = true;
      fillAtom(result);
      const node = cy.getElementById(forId);
      if (!node.empty()) node.data(Object.assign(atomData(result.atom), { picked: !result.atom.head }));
    } catch (e) {
      if (mine !== pickSeq || selectedId !== forId) return;
      $("side-text").textContent = "";
      $("side-error").textContent = "Could not load rev " + rev + ": " + describe(e);
      $("side-error").hidden = false;
    }
  });

  $("expand-btn").addEventListener("click", () => {
    if (selectedId) expand(selectedId);
  });

  // ------------------------------------------------------------------ toolbar
  $("fit-btn").addEventListener("click", fitReadable);
  $("zoomin-btn").addEventListener("click", () =>
    cy.zoom({ level: cy.zoom() * 1.25, renderedPosition: { x: cy.width() / 2, y: cy.height() / 2 } }),
  );
  $("zoomout-btn").addEventListener("click", () =>
    cy.zoom({ level: cy.zoom() / 1.25, renderedPosition: { x: cy.width() / 2, y: cy.height() / 2 } }),
  );
  $("focus-btn").addEventListener("click", () => {
    const n = selectedId && cy.getElementById(selectedId);
    if (n && !n.empty()) cy.animate({ center: { eles: n }, zoom: Math.max(cy.zoom(), 1.2) }, { duration: 200 });
  });
  $("layout-btn").addEventListener("click", () => layout(true));
  $("entity-mode").addEventListener("change", () => {
    drawEntities();
    layout(true);
    refreshLists();
  });
  $("colour-mode").addEventListener("change", () => {
    colourAtoms();
    drawLegend();
  });
  // "links at" fetches every expansion again at the other version: nothing is lost.
  $("version").addEventListener("change", () => refetch());

  // ------------------------------------------------------------------ read panel
  // Texts of revisions named by a read, fetched in chunks of aliases: the panel shows
  // what each item says, not an id stub.
  async function revisionTexts(refs) {
    const out = new Map();
    for (let i = 0; i < refs.length; i += ALIASES_PER_QUERY) {
      const chunk = refs.slice(i, i + ALIASES_PER_QUERY);
      const vars = {};
      const parts = chunk.map((r, j) => {
        vars["a" + j] = r.atomId;
        vars["r" + j] = r.rev;
        return `a${j}: atom(atomId: $a${j}) { revision(rev: $r${j}) { text } }`;
      });
      const decl = chunk.map((_, j) => "$a" + j + ": ID!, $r" + j + ": Int!").join(", ");
      const data = await gql(`query(${decl}) { ${parts.join(" ")} }`, vars);
      chunk.forEach((r, j) => {
        const got = data["a" + j];
        if (got && got.revision) out.set(r.atomId + "@" + r.rev, got.revision.text);
      });
    }
    return out;
  }

  function parseKey(key) {
    const at = key.lastIndexOf("@");
    return { atomId: key.slice(0, at), rev: Number(key.slice(at + 1)) };
  }

  const BLOCK_WORDS = {
    stale: "a required link's pinned revision is no longer the head",
    retired: "a required link points at a retired atom",
    unavailable: "a required link's target is unavailable",
  };

  $("read-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const out = $("read-out");
    out.replaceChildren(li("Reading…", "muted"));
    try {
      const data = await gql(
        `query($q: String!, $b: Int!) { read(query: $q, memoryTokenBudget: $b) {
           items { ref { atomId rev } role score blocked }
           selection { baselineComplete coverageCertified tokens budget }
           diagnostics } }`,
        { q: $("read-q").value, b: Number($("read-budget").value) },
      );
      const r = data.read;
      const sel = r.selection;
      const diag = (r.diagnostics && r.diagnostics.selection) || {};
      const leftOut = (diag.leftOut || []).map(parseKey);
      const blockedRoots = diag.blockedRoots || [];
      const minBudget = diag.minBudgetFor || {};
      const refs = r.items.map((i) => i.ref).concat(leftOut, blockedRoots.map((b) => parseKey(b.ref)));
      const texts = await revisionTexts(refs);
      const textOf = (ref) => texts.get(ref.atomId + "@" + ref.rev) || ref.atomId;
      const summary = document.createElement("p");
      summary.className = "read-summary";
      const blocked = r.items.filter((i) => i.blocked);
      summary.textContent =
        sel.tokens + " of " + sel.budget + " tokens used · " + r.items.length + " items · " +
        blocked.length + " blocked root" + (blocked.length === 1 ? "" : "s") +
        (leftOut.length ? " · " + leftOut.length + " left out" : "") +
        (sel.baselineComplete ? " · baseline complete" : "") +
        (sel.coverageCertified ? " · coverage certified" : "");
      const meter = document.createElement("meter");
      meter.min = 0;
      meter.max = sel.budget;
      meter.value = Math.min(sel.tokens, sel.budget);
      meter.setAttribute("aria-label", "tokens used of budget");
      const list = document.createElement("ol");
      list.className = "read-items";
      for (const item of r.items) {
        const el = document.createElement("li");
        el.className = item.blocked ? "blocked" : "";
        el.append(atomButton(item.ref.atomId, titleOf(textOf(item.ref))));
        el.title = textOf(item.ref);
        el.append(document.createTextNode(
          " r" + item.ref.rev + " · " + item.role +
          (item.score === null ? "" : " · " + item.score.toFixed(3)) +
          (item.blocked ? " · BLOCKED" : ""),
        ));
        list.append(el);
      }
      const parts = [summary, meter, list];
      // Roots that were ranked but not presented, each with why: closure over budget
      // (with the budget it would need) or blocked (with the failing link).
      if (leftOut.length || blockedRoots.length) {
        const head = document.createElement("p");
        head.className = "read-summary left-out-head";
        head.textContent = "Left out:";
        const lo = document.createElement("ul");
        lo.className = "read-items left-out";
        for (const ref of leftOut) {
          const el = document.createElement("li");
          el.append(atomButton(ref.atomId, titleOf(textOf(ref))));
          el.title = textOf(ref);
          const need = minBudget[ref.atomId + "@" + ref.rev];
          el.append(document.createTextNode(
            " r" + ref.rev + " · its required closure does not fit the budget" +
            (need ? " (needs a budget of " + need + ")" : "")));
          lo.append(el);
        }
        for (const b of blockedRoots) {
          const ref = parseKey(b.ref);
          const el = document.createElement("li");
          el.className = "blocked";
          el.append(atomButton(ref.atomId, titleOf(textOf(ref))));
          el.title = textOf(ref);
          const reasons = [...new Set((b.edges || []).map((e) => BLOCK_WORDS[e.reason] || e.reason))];
          el.append(document.createTextNode(
            " r" + ref.rev + " · blocked: " + (reasons.join("; ") || "a required link fails")));
          lo.append(el);
        }
        parts.push(head, lo);
      }
      out.replaceChildren(...parts);
      summary.scrollIntoView({ block: "nearest" });
    } catch (e) {
      out.replaceChildren(li("Read failed: " + describe(e), "error"));
    }
  });

  // ------------------------------------------------------------------ start
  showSignedIn(Boolean(sessionStorage.getItem(TOKEN_KEY)));
  drawLegend();
  const params = new URLSearchParams(window.location.search);
  const linked = params.get("atom");
  // /lineage?atom=X redirects here with lineage=1: the same drawing (lineage edges
  // are always drawn), the side panel scrolled to the lineage list.
  const showLineage = params.get("lineage") === "1";
  if (linked && sessionStorage.getItem(TOKEN_KEY)) {
    openAtom(linked).then(() => {
      if (showLineage) $("side-lineage-head").scrollIntoView({ block: "start" });
    });
  }
  // For tests, the browser console and add-ons (explore_time.js): refetch(extraVars)
  // redraws every expansion with extra inspect variables; gql asks the API.
  window.graphsvcExplorer = { cy, openAtom, expand, refetch, gql };
})();
