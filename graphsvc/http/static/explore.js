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
  // Links are greys (their role is their label), so a colour on the canvas always
  // means the one thing "colour atoms by" names: node and link colours never meet.
  const LINK_GREY = "#8a939c";
  const LINEAGE_COLOUR = "#4a4f55";
  function roleColour() {
    return LINK_GREY;
  }

  // Labels keep their screen size when zoomed out down to FIT_FLOOR (so Fit of up to 60
  // nodes stays readable); below it they shrink with the drawing, and under ~7 px they
  // are not drawn (the status line says so). zoomNow follows cy's zoom (see "zoom").
  const FIT_FLOOR = 0.45;
  let zoomNow = 1;
  // The scale is applied in steps, as classes (a class change re-measures a label; a
  // function-valued font size would keep the old measure and cut the text).
  const LABEL_STEPS = [[0.9, ""], [0.7, "ls1"], [0.55, "ls2"], [0, "ls3"]];
  const STEP_SCALE = { "": 1, ls1: 1.3, ls2: 1.65, ls3: 1 / FIT_FLOOR };
  function labelStep(z) {
    return LABEL_STEPS.find(([from]) => z >= from)[1];
  }
  // A min-zoomed-font-size no label reaches (fonts ≤ 27 px at cytoscape's largest cached
  // texture scale, 8): such a label is neither drawn nor rasterised into a texture.
  const NEVER_RASTERISED = 1000;
  const scaled = (k) => [
    { selector: "node." + k, style: { "font-size": 12 * STEP_SCALE[k], "text-max-width": 150 * STEP_SCALE[k] } },
    { selector: "node.entity." + k, style: { "font-size": 11 * STEP_SCALE[k] } },
  ];

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
          "font-size": 12,
          "font-family": "system-ui, sans-serif",
          color: "#111",
          "text-wrap": "wrap",
          "text-max-width": 150,
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
      { selector: ".filtered, .user-hidden, .tt-absent", style: { display: "none" } },
      // Level of detail (applyLod): a label hidden when zoomed out keeps its room (the
      // layout counts it) but is not drawn. Transparent is not enough: cytoscape still
      // rasterises such a label, at full opacity, into its shared label texture, and a
      // label drawn there past its box leaves letters at the end of its neighbour (after
      // Fit: "ADR-011 (api-gateway,A"). A minimum size no label reaches keeps it out.
      { selector: "node.nolabel", style: { "text-opacity": 0, "text-background-opacity": 0, "min-zoomed-font-size": NEVER_RASTERISED } },
      { selector: "node.pinned", style: { "border-style": "double", "border-width": 5, "border-color": "#111" } },
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
          // Drawn for the selected node's links, or all when zoomed in (applyLod);
          // otherwise never rasterised (see node.nolabel).
          "text-opacity": 0,
          "text-background-opacity": 0,
          "min-zoomed-font-size": NEVER_RASTERISED,
          "font-size": 11,
          color: "#222",
          "text-rotation": "none",
          "text-background-color": "#fcfcfd",
          "text-background-opacity": 0.92,
          "text-background-padding": 2,
          "text-background-shape": "roundrectangle",
        },
      },
      { selector: "edge.labelled", style: { "text-opacity": 1, "text-background-opacity": 0.92, "min-zoomed-font-size": 8 } },
      { selector: "edge[?required]", style: { width: 4.5, "line-color": "#5b636b", "target-arrow-color": "#5b636b" } },
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
          shape: "data(shape)",
          width: 18,
          height: 18,
          "border-width": 1.5,
          "border-color": "#333",
          "font-size": 11,
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
      ...scaled("ls1"),
      ...scaled("ls2"),
      ...scaled("ls3"),
    ],
  });

  const expanded = new Set();
  let selectedId = null;

  // ------------------------------------------------------------------ entities
  // Colours of the entity types (the GraphQL EntityType values), fixed so a type
  // keeps its colour across drawings and in the legend.
  // Entity types are told apart by shape (colour means what "colour atoms by" says):
  // a type keeps its shape across drawings and in the legend.
  const ENTITY_SHAPES = {
    PERSON: "diamond",
    ORGANISATION: "hexagon",
    PLACE: "triangle",
    PRODUCT: "round-rectangle",
    EVENT: "star",
    DATE: "vee",
    IDENTIFIER: "tag",
    NAME: "rhomboid",
  };
  const ENTITY_FILL = "#eef0f2";
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
          colour: ENTITY_FILL,
          shape: ENTITY_SHAPES[e.type] || "diamond",
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
    // New entities are placed with the atoms an expansion brings (settle).
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
      // Never by dates: a date shared by two atoms says nothing about what they are.
      const ents = (entitiesOf.get(n.id()) || []).filter((e) => drawn.has(e.key) && e.type !== "DATE");
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
    // An entity that names a group takes the group's colour; the others stay pale.
    cy.nodes(".entity").forEach((e) => e.data("colour", palette.get(e.data("key")) || ENTITY_FILL));
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
    expandedWith.clear();
    selectedId = null;
    $("side-body").hidden = true;
    $("side-empty").hidden = false;
    refreshLists();
  }

  // ------------------------------------------------------------------ layout
  // The first drawing of an opened atom: fcose over everything. An expansion puts its
  // new nodes into free space beside what they attach to (cytoscape-layout-utilities'
  // placeNewNodes), then an incremental fcose (randomize: false) moves drawn nodes only
  // as far as needed to make room, never one on another; pinned nodes do not move
  // (fixedNodeConstraint). Labels take room in every layout even while level of detail
  // hides them (they are transparent, not removed), so zooming in never piles them up.
  const layoutTools = cy.layoutUtilities({
    idealEdgeLength: 150,
    offset: 60,
    desiredAspectRatio: 1.6,
    componentSpacing: 80,
  });
  const LAYOUT = {
    name: "fcose",
    animate: false,
    nodeDimensionsIncludeLabels: true,
    idealEdgeLength: () => 150,
    nodeRepulsion: () => 30000,
    nodeSeparation: 120,
    gravity: 0.15,
    packComponents: true,
    fit: false,
    padding: 30,
  };

  function laidOut() {
    return cy.elements().not(".filtered").not(".user-hidden");
  }

  function runLayout(options) {
    const fixed = cy.nodes(".pinned").not(".user-hidden")
      .map((n) => ({ nodeId: n.id(), position: Object.assign({}, n.position()) }));
    const opts = Object.assign({}, LAYOUT, options);
    if (fixed.length) opts.fixedNodeConstraint = fixed;
    try {
      laidOut().layout(opts).run();
    } catch (e) {
      laidOut().layout({ name: "cose", animate: false, fit: false, nodeDimensionsIncludeLabels: true }).run();
    }
    cy.nodes().forEach((n) => n.scratch("_placed", true));
  }

  function layout(randomize) {
    if (cy.nodes().empty()) return;
    runLayout({ quality: "proof", randomize });
    applyLod();
    readableView();
  }

  // After an expansion: place `fresh`, make room, keep `anchor` where the reader saw it
  // (the whole drawing is shifted back so that it does not jump), animate the moves.
  const MOVE_MS = 250;
  function settle(fresh, anchor) {
    const drawn = cy.nodes().filter((n) => n.scratch("_placed"));
    if (drawn.empty()) {
      runLayout({ quality: "proof", randomize: true });
      return Promise.resolve();
    }
    if (fresh.empty()) return Promise.resolve(applyLod()); // nothing to make room for
    layoutTools.placeNewNodes(fresh);
    const from = new Map(cy.nodes().map((n) => [n.id(), Object.assign({}, n.position())]));
    const held = anchor && !anchor.empty() ? Object.assign({}, anchor.position()) : null;
    runLayout({ quality: "default", randomize: false });
    const shift = held ? { x: held.x - anchor.position("x"), y: held.y - anchor.position("y") } : { x: 0, y: 0 };
    const moves = [];
    cy.nodes().forEach((n) => {
      const to = { x: n.position("x") + shift.x, y: n.position("y") + shift.y };
      const start = from.get(n.id());
      if (n.locked()) return;
      n.position(start);
      moves.push(n.animation({ position: to, duration: MOVE_MS, easing: "ease-in-out-cubic" }).play().promise());
    });
    return Promise.all(moves).then(applyLod);
  }

  // Bring a node that is not drawn yet (picked from a list) beside the drawing.
  function placeBeside(node) {
    const bb = cy.nodes().filter((n) => n.scratch("_placed")).boundingBox();
    node.position(bb.w ? { x: bb.x2 + 200, y: (bb.y1 + bb.y2) / 2 } : { x: 0, y: 0 });
    node.scratch("_placed", true);
  }

  // Keep the opened atom (and, when it fits, the expanded node and what it brought) in
  // view: pan as little as needed; zoom out only as far as labels stay readable.
  const VIEW_MARGIN = 40;
  function keepInView(extra) {
    const root = cy.nodes(".root");
    const want = root.union(extra || cy.collection()).filter((n) => !n.hasClass("filtered"));
    if (want.empty()) return;
    const area = freeArea();
    const w = area.x2 - area.x1;
    const h = area.y2 - area.y1;
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
    if (box.x1 < area.x1 + VIEW_MARGIN) dx = area.x1 + VIEW_MARGIN - box.x1;
    else if (box.x2 > area.x2 - VIEW_MARGIN) dx = area.x2 - VIEW_MARGIN - box.x2;
    if (box.y1 < area.y1 + VIEW_MARGIN) dy = area.y1 + VIEW_MARGIN - box.y1;
    else if (box.y2 > area.y2 - VIEW_MARGIN) dy = area.y2 - VIEW_MARGIN - box.y2;
    if (dx || dy) cy.panBy({ x: dx, y: dy });
    updateZoomHint();
  }

  // The part of the canvas no open panel covers (rendered pixels of the canvas).
  function freeArea() {
    const c = $("cy").getBoundingClientRect();
    const area = { x1: 0, y1: 0, x2: c.width, y2: c.height };
    for (const id of ["left", "side"]) {
      const el = $(id);
      if (!el || el.classList.contains("collapsed")) continue;
      const r = el.getBoundingClientRect();
      if (!r.width || r.bottom < c.top || r.top > c.bottom) continue;
      if (r.left - c.left < c.width / 2) area.x1 = Math.max(area.x1, r.right - c.left);
      else area.x2 = Math.min(area.x2, r.left - c.left);
    }
    // A panel wider than half the canvas would leave nothing: then the whole canvas.
    return area.x2 - area.x1 < c.width / 3 ? { x1: 0, y1: 0, x2: c.width, y2: c.height } : area;
  }

  // After a layout: fit, but never below a zoom where labels stay readable; then the
  // selected node is centred and Fit shows everything.
  const READABLE_ZOOM = 0.8;
  function readableView() {
    fitReadable();
    if (cy.zoom() < READABLE_ZOOM && cy.nodes().length <= 30) {
      // Readable first: the focus in the middle of the part no panel covers.
      const focus = selectedId ? cy.getElementById(selectedId) : cy.nodes(".root");
      const at = focus && !focus.empty() ? focus.position() : { x: 0, y: 0 };
      const a = freeArea();
      cy.viewport({
        zoom: READABLE_ZOOM,
        pan: { x: (a.x1 + a.x2) / 2 - READABLE_ZOOM * at.x, y: (a.y1 + a.y2) / 2 - READABLE_ZOOM * at.y },
      });
    }
    updateZoomHint();
  }

  // Fit: every shown node inside the part of the canvas no panel covers, at a zoom of at
  // least MIN_FIT_ZOOM (level of detail then draws the labels that matter, at a
  // readable size); a drawing too large for that is centred at MIN_FIT_ZOOM and the
  // status line says how many nodes are outside the view.
  const MIN_FIT_ZOOM = 0.3;
  const FIT_PAD = 36;
  function fitReadable() {
    const shown = cy.nodes().not(".filtered").not(".user-hidden");
    if (shown.empty()) return;
    const area = freeArea();
    const bb = shown.boundingBox({ includeLabels: false });
    const w = area.x2 - area.x1 - 2 * FIT_PAD;
    const h = area.y2 - area.y1 - 2 * FIT_PAD;
    const fits = Math.min(w / Math.max(bb.w, 1), h / Math.max(bb.h, 1), 1.5);
    const level = Math.max(fits, MIN_FIT_ZOOM);
    cy.viewport({
      zoom: level,
      pan: {
        x: (area.x1 + area.x2) / 2 - (level * (bb.x1 + bb.x2)) / 2,
        y: (area.y1 + area.y2) / 2 - (level * (bb.y1 + bb.y2)) / 2,
      },
    });
    zoomNow = level; // level of detail follows on the next frame (the "zoom" handler)
    const outside = shown.filter((n) => {
      const r = n.renderedBoundingBox({ includeLabels: false });
      return r.x1 < 0 || r.y1 < 0 || r.x2 > cy.width() || r.y2 > cy.height();
    }).length;
    setGraphStatus(outside ? outside + " node" + (outside === 1 ? " is" : "s are") +
      " outside the view at the smallest readable zoom: hide some, or zoom out" : "");
    updateZoomHint();
  }

  // Level of detail: zoomed in (≥ LOD_ALL) every node label is drawn; zoomed out only
  // the opened atom's, the selected node's and its neighbours', the hovered node's and
  // the busiest hubs'. Role labels: the selected node's links, or all when zoomed in.
  const LOD_ALL = 0.9;
  const LOD_EDGES = 1.3;
  const HUBS = 6;
  let hoveredId = null;
  function applyLod() {
    const z = cy.zoom();
    const nodes = cy.nodes();
    const sel = selectedId ? cy.getElementById(selectedId) : cy.collection();
    cy.batch(() => {
      if (z >= LOD_ALL) {
        nodes.removeClass("nolabel");
      } else {
        let keep = cy.nodes(".root").union(sel).union(sel.neighborhood().nodes());
        if (hoveredId) keep = keep.union(cy.getElementById(hoveredId));
        const hubs = nodes.not(keep).filter((n) => n.degree(false) >= 4)
          .sort((a, b) => b.degree(false) - a.degree(false)).slice(0, HUBS);
        keep = keep.union(hubs);
        nodes.not(keep).addClass("nolabel");
        keep.removeClass("nolabel");
      }
      cy.edges().removeClass("labelled");
      if (z >= LOD_EDGES) cy.edges().addClass("labelled");
      else sel.connectedEdges().addClass("labelled");
    });
    zoomNow = z;
    const step = labelStep(z);
    const stale = ["ls1", "ls2", "ls3"].filter((k) => k !== step).map((k) => "." + k).join(", ");
    cy.batch(() => {
      nodes.filter(stale).removeClass("ls1 ls2 ls3");
      if (step) nodes.not("." + step).addClass(step);
    });
    // Measure the labels again at their new size (bounds cached at the old size would
    // cut the text where the old label ended).
    nodes.updateStyle();
  }

  function updateZoomHint() {
    zoomNow = cy.zoom();
    $("zoom-hint").hidden = cy.zoom() * 12 * STEP_SCALE[labelStep(cy.zoom())] >= 7 || cy.nodes().empty();
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
    undoRedo.reset();
    remembered.clear();
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
      applyLod();
      setGraphStatus(truncatedNote.trim());
      // A shareable address names the atom (never the token).
      history.replaceState(null, "", "?atom=" + encodeURIComponent(atomId));
    } catch (e) {
      setGraphStatus("");
      showGraphError("Could not draw " + atomId + ": " + describe(e));
    }
  }

  // Merge what inspect and lineage say about `atomId` (only the links `only` keeps:
  // a direction and/or a role). Returns the nodes that are new (not placed yet).
  function mergeAround(atomId, result, lin, only) {
    const known = cy.getElementById(atomId);
    const unplaced = known.empty() || !known.scratch("_placed");
    mergeInspect(only ? narrowed(result, only) : result);
    if (lin) mergeLineage(lin);
    if (unplaced) placeBeside(cy.getElementById(atomId));
    return cy.nodes().filter((n) => !n.scratch("_placed"));
  }

  // An inspect result with only the neighbours reached through the links `only` names.
  function narrowed(result, only) {
    const keep = (v) => (!only.direction || v.direction === only.direction) && (!only.role || v.role === only.role);
    const neighbors = result.neighbors
      .map((n) => Object.assign({}, n, { via: n.via.filter(keep) }))
      .filter((n) => n.via.length);
    return Object.assign({}, result, { neighbors });
  }

  // Each gesture's number: a click during an expansion starts another, and only the
  // newest one selects its node and moves the view (an older one finishing later must
  // not take the selection back from the node the person clicked last).
  let expandSeq = 0;
  const expandedWith = new Map(); // atomId -> the narrowing of its expansion, if any
  async function expand(atomId, only) {
    if (atomId.startsWith("ghost:")) return;
    const mine = ++expandSeq;
    setGraphStatus("Expanding…");
    if (!$("graph-error").hidden) clearGraphError();
    try {
      const [result, lin] = await Promise.all([
        inspect(atomId),
        only ? Promise.resolve(null) : lineageOf(atomId),
      ]);
      const before = snapshot();
      const count = cy.nodes().not(".entity").length;
      if (!expanded.has(atomId) || !only) expandedWith.set(atomId, only || null);
      mergeAround(atomId, result, lin, only);
      if (mine === expandSeq) selectedId = atomId;
      await withEntities();
      applyRoleFilter();
      const fresh = cy.nodes().filter((n) => !n.scratch("_placed"));
      const added = cy.nodes().not(".entity").length - count;
      await settle(fresh, cy.getElementById(atomId));
      refreshLists();
      recordChange(before, "expand");
      if (mine !== expandSeq) return; // a newer click owns the selection and the view
      select(atomId, result, lin || { nodes: [], edges: [] });
      keepInView(cy.getElementById(atomId).union(fresh));
      // "0 nodes added" alone reads like a failed expansion.
      const none = added === 0 ? " (every neighbour was already drawn)" : "";
      setGraphStatus(added + " node" + (added === 1 ? "" : "s") + " added" + none + truncatedNote +
        " · Ctrl+Z undoes");
    } catch (e) {
      setGraphStatus("");
      showGraphError("Could not expand " + atomId + ": " + describe(e));
    }
  }

  // A click: the side panel shows the atom; nothing is added to the drawing.
  async function selectOnly(atomId) {
    const mine = ++expandSeq;
    selectedId = atomId;
    cy.nodes().unselect();
    cy.getElementById(atomId).select();
    applyLod();
    try {
      const [result, lin] = await Promise.all([inspect(atomId), lineageOf(atomId)]);
      if (mine !== expandSeq) return;
      select(atomId, result, lin);
      applyLod();
    } catch (e) {
      if (mine !== expandSeq) return;
      $("side-error").textContent = "Could not load " + atomId + ": " + describe(e);
      $("side-error").hidden = false;
    }
  }

  // ------------------------------------------------------------------ undo / redo
  // Expansions, hides, pins and lineage are undoable (cytoscape-undo-redo): each is
  // recorded as the drawing before and after, so undo and redo swap whole states
  // (elements with their positions and classes, the expansions, the selection).
  const undoRedo = cy.undoRedo({ undoableDrag: false, stackSizeLimit: 50 });
  function snapshot() {
    return {
      els: cy.elements().jsons(),
      expanded: [...expanded].map((id) => [id, expandedWith.get(id) || null]),
      selected: selectedId,
    };
  }
  function restore(state) {
    cy.batch(() => {
      cy.elements().remove();
      cy.add(state.els);
    });
    cy.nodes().forEach((n) => n.scratch("_placed", true));
    expandedWith.clear();
    expanded.clear();
    for (const [id, only] of state.expanded) {
      expandedWith.set(id, only);
      expanded.add(id);
    }
    selectedId = state.selected && !cy.getElementById(state.selected).empty() ? state.selected : null;
    colourAtoms();
    applyRoleFilter();
    refreshLists();
    applyLod();
  }
  function swap(arg) {
    const now = snapshot();
    restore(arg.state);
    return { state: now, what: arg.what };
  }
  undoRedo.action("graph", (arg) => (arg.firstTime ? { state: arg.before, what: arg.what } : swap(arg)), swap);
  function recordChange(before, what) {
    undoRedo.do("graph", { before, what });
  }
  function undo() {
    if (undoRedo.isUndoStackEmpty()) return setGraphStatus("nothing to undo");
    const r = undoRedo.undo();
    setGraphStatus("undid " + ((r && r.what) || "the last change") + " · Ctrl+Shift+Z redoes");
  }
  function redo() {
    if (undoRedo.isRedoStackEmpty()) return setGraphStatus("nothing to redo");
    const r = undoRedo.redo();
    setGraphStatus("redid " + ((r && r.what) || "the last change"));
  }

  // Hide (and hide others): undoable; the nodes stay in the drawing, not displayed.
  function hide(nodes, what) {
    const before = snapshot();
    nodes.addClass("user-hidden");
    if (nodes.some((n) => n.id() === selectedId)) selectedId = null;
    refreshLists();
    applyLod();
    recordChange(before, what);
    setGraphStatus(nodes.length + " node" + (nodes.length === 1 ? "" : "s") + " hidden · Ctrl+Z undoes");
  }
  function hideOthers(node) {
    const keep = node.closedNeighborhood().nodes().union(cy.nodes(".root"));
    hide(cy.nodes().not(keep).not(".user-hidden"), "hide others");
  }
  function showHidden() {
    const nodes = cy.nodes(".user-hidden");
    if (nodes.empty()) return;
    const before = snapshot();
    nodes.removeClass("user-hidden");
    refreshLists();
    recordChange(before, "show hidden");
  }
  function togglePin(node) {
    const before = snapshot();
    if (node.hasClass("pinned")) {
      node.removeClass("pinned");
      node.unlock();
    } else {
      node.addClass("pinned");
      node.lock();
    }
    recordChange(before, node.hasClass("pinned") ? "pin" : "unpin");
    setGraphStatus(node.hasClass("pinned") ? "pinned: layouts leave it where it is" : "unpinned");
  }
  // Show lineage: the derives_from edges two steps either way, drawn and placed.
  async function showLineage(atomId) {
    const mine = ++expandSeq;
    try {
      const lin = await gql(`query($id: ID!) { lineage(atomId: $id, depth: 4) }`, { id: atomId });
      const before = snapshot();
      mergeLineage(lin.lineage);
      const fresh = cy.nodes().filter((n) => !n.scratch("_placed"));
      await settle(fresh, cy.getElementById(atomId));
      refreshLists();
      recordChange(before, "show lineage");
      const n = lin.lineage.edges.filter((e) => e.type === "derives_from").length;
      if (mine === expandSeq) setGraphStatus(n ? n + " lineage link" + (n === 1 ? "" : "s") + " drawn" : "no lineage");
    } catch (e) {
      setGraphStatus("lineage could not be loaded: " + describe(e));
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
    if (!order.length) return { absent: [] };
    setGraphStatus("Updating " + order.length + " expansion" + (order.length === 1 ? "" : "s") + "…");
    if (!$("graph-error").hidden) clearGraphError();
    const asOf = window.graphsvcTime ? window.graphsvcTime.asOf() : null;
    try {
      // As of an instant, an expanded atom created later does not exist then: it is
      // left out of that drawing (and comes back at Now), not an error.
      const results = await Promise.all(order.map((id) => inspect(id).catch((e) => {
        if (asOf && e.code === "NOT_FOUND") return null;
        throw e;
      })));
      const before = new Map(cy.nodes().map((n) => [n.id(), Object.assign({}, n.position())]));
      cy.remove("edge[kind = 'link']");
      cy.remove("node.ghost");
      cy.nodes().removeClass("tt-absent");
      let selected = null;
      const absent = [];
      results.forEach((result, i) => {
        if (!result) {
          absent.push(order[i]);
          return;
        }
        mergeAround(order[i], result, null, expandedWith.get(order[i]) || null);
        if (order[i] === selectedId) selected = result;
      });
      for (const id of absent) cy.getElementById(id).addClass("tt-absent");
      // Atoms that nothing reaches any more (not expanded, no edge left) leave.
      cy.nodes().not(".entity").forEach((n) => {
        if (!expanded.has(n.id()) && n.connectedEdges("[kind != 'mentions']").empty()) n.remove();
      });
      await withEntities();
      applyRoleFilter();
      // A node that comes back (Now after a past instant) takes the place it had.
      const fresh = cy.nodes().filter((n) => !n.scratch("_placed"));
      fresh.forEach((n) => {
        const at = remembered.get(n.id());
        if (!at) return;
        n.position(at);
        n.scratch("_placed", true);
      });
      for (const [id, p] of before) remembered.set(id, p);
      await settle(fresh.filter((n) => !n.scratch("_placed")), cy.nodes(".root"));
      refreshLists();
      if (selected) {
        fillAtom(selected);
        fillRevisions(selected.atom);
      }
      keepInView(cy.collection());
      setGraphStatus("links at " + $("version").value.toLowerCase() + " · " + order.length +
        " expansion" + (order.length === 1 ? "" : "s") + " kept" + truncatedNote);
      return { absent };
    } catch (e) {
      setGraphStatus("");
      showGraphError("Could not update the drawing: " + describe(e));
      return { absent: [], error: describe(e) };
    }
  }
  const remembered = new Map(); // atomId -> the last place it was drawn at

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
  // Label sizes follow the zoom (LABEL_STEPS): restyle once per frame while zooming.
  let restyle = 0;
  cy.on("zoom", () => {
    zoomNow = cy.zoom();
    updateZoomHint();
    hideTip();
    if (!restyle) {
      restyle = requestAnimationFrame(() => {
        restyle = 0;
        applyLod();
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
    hoveredId = n.id();
    if (cy.zoom() < LOD_ALL) applyLod();
    const tip = $("hover-tip");
    tip.textContent = n.data("full") || n.data("label");
    const p = n.renderedPosition();
    const box = $("cy").getBoundingClientRect();
    const host = $("stage").getBoundingClientRect();
    tip.style.left = Math.min(box.left - host.left + p.x + 14, host.width - 340) + "px";
    tip.style.top = box.top - host.top + p.y + 14 + "px";
    tip.hidden = false;
  });
  cy.on("mouseout", "node", () => {
    hideTip();
    hoveredId = null;
    if (cy.zoom() < LOD_ALL) applyLod();
  });
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
    selectOnly(id); // a click selects; a double click (or Enter, or the menu) expands
  });
  cy.on("dbltap", "node", (ev) => {
    const n = ev.target;
    if (n.hasClass("entity") || n.hasClass("ghost")) return;
    expand(n.id());
  });

  // ------------------------------------------------------------------ lists + legend
  function refreshLists() {
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
        else selectOnly(n.id());
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
      title.textContent = "entities (shape = type):";
      ents.append(title);
      for (const t of Object.keys(ENTITY_SHAPES)) {
        if (!types.has(t)) continue;
        const sw = nodeSwatch("entity shape-" + ENTITY_SHAPES[t]);
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

  // An entity or an unavailable link target has no revisions, citations, lineage or
  // links of its own: those headings go with them rather than stand empty.
  function showAtomSections(shown, incomingHead) {
    for (const el of document.querySelectorAll("#side-body .atom-only")) el.hidden = !shown;
    $("side-in-head").textContent = incomingHead;
    $("side-in-head").hidden = incomingHead === "";
  }

  function showGhost(node) {
    selectedId = null;
    showAtomSections(false, "");
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
    showAtomSections(true, "Incoming links");
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
      sw.className = "sw-node entity shape-" + (ENTITY_SHAPES[e.type] || "diamond");
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
    showAtomSections(false, "Mentioned by");
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
           manifest diagnostics } }`,
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
      // The best-ranked root left out for the budget: say what budget would take it,
      // with a button that reads again with it.
      const firstOut = leftOut.find((ref) => minBudget[ref.atomId + "@" + ref.rev]);
      if (firstOut) {
        const need = minBudget[firstOut.atomId + "@" + firstOut.rev];
        const hint = document.createElement("p");
        hint.className = "read-summary budget-hint";
        hint.append(document.createTextNode(
          (r.items.length ? "Less than asked fits" : "Nothing fits") + " in a budget of " + sel.budget +
          ": the best-ranked root left out (" + titleOf(textOf(firstOut)) + ") needs " + need + ". "));
        const again = document.createElement("button");
        again.type = "button";
        again.className = "read-again";
        again.textContent = "Read with " + need;
        again.addEventListener("click", () => {
          $("read-budget").value = String(need);
          $("read-form").requestSubmit();
        });
        hint.append(again);
        parts.splice(1, 0, hint);
      }
      // The reads made here, for the replay panel (explore_time.js): one click replays.
      const manifestId = r.manifest && r.manifest.id;
      if (manifestId) {
        document.dispatchEvent(new CustomEvent("graphsvc:read", {
          detail: { manifestId, query: $("read-q").value, budget: sel.budget, tokens: sel.tokens },
        }));
      }
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

  // ------------------------------------------------------------------ gestures
  // The context menu (cytoscape-context-menus): right click (or a long press) on a node.
  const ARROW = "data:image/svg+xml," + encodeURIComponent(
    '<svg xmlns="http://www.w3.org/2000/svg" width="12" height="12"><path d="M4 2l5 4-5 4z" fill="#333"/></svg>');
  const ATOM = "node:not(.entity):not(.ghost)";
  const menu = cy.contextMenus({
    evtType: "cxttap",
    submenuIndicator: { src: ARROW, width: 12, height: 12 },
    menuItems: [
      { id: "m-expand", content: "Expand (double click, Enter)", selector: ATOM,
        onClickFunction: (ev) => expand(ev.target.id()) },
      { id: "m-out", content: "Expand outgoing links", selector: ATOM,
        onClickFunction: (ev) => expand(ev.target.id(), { direction: "OUTGOING" }) },
      { id: "m-in", content: "Expand incoming links", selector: ATOM,
        onClickFunction: (ev) => expand(ev.target.id(), { direction: "INCOMING" }) },
      { id: "m-role", content: "Expand by role", selector: ATOM, hasTrailingDivider: true,
        submenu: [{ id: "m-role-none", content: "(no roles drawn yet)", disabled: true, onClickFunction: () => {} }] },
      { id: "m-lineage", content: "Show lineage (L)", selector: ATOM,
        onClickFunction: (ev) => showLineage(ev.target.id()) },
      { id: "m-pin", content: "Pin / unpin (P)", selector: "node",
        onClickFunction: (ev) => togglePin(ev.target) },
      { id: "m-hide", content: "Hide (Delete)", selector: "node",
        onClickFunction: (ev) => hide(ev.target, "hide") },
      { id: "m-others", content: "Hide others (keep its neighbours)", selector: "node", hasTrailingDivider: true,
        onClickFunction: (ev) => hideOthers(ev.target) },
      { id: "m-show", content: "Show hidden nodes", selector: "node", coreAsWell: true,
        onClickFunction: showHidden },
      { id: "m-undo", content: "Undo (Ctrl+Z)", coreAsWell: true, onClickFunction: undo },
      { id: "m-redo", content: "Redo (Ctrl+Shift+Z)", coreAsWell: true, onClickFunction: redo },
      { id: "m-fit", content: "Fit", coreAsWell: true, onClickFunction: fitReadable },
    ],
  });
  // "Expand by role" lists the roles drawn so far (rebuilt when a new one appears).
  let menuRoles = "";
  let roleItems = ["m-role-none"];
  function refreshRoleMenu() {
    const roles = [...new Set(cy.edges("[kind = 'link']").map((e) => e.data("role")))].sort();
    if (roles.join("\n") === menuRoles || !roles.length) return;
    menuRoles = roles.join("\n");
    for (const id of roleItems) menu.removeMenuItem(id);
    roleItems = roles.map((_, i) => "m-role-" + i);
    menu.appendMenuItems(roles.map((role, i) => ({
      id: "m-role-" + i,
      content: role,
      onClickFunction: (ev) => expand(ev.target.id(), { role }),
    })), "m-role");
  }
  cy.on("add remove", "edge", () => {
    if (!refreshRoleMenu.pending) {
      refreshRoleMenu.pending = setTimeout(() => {
        refreshRoleMenu.pending = 0;
        refreshRoleMenu();
      }, 50);
    }
  });

  // Keys (not while typing in a field): Ctrl+Z undo, Ctrl+Shift+Z / Ctrl+Y redo; on the
  // selected node Enter expands, Delete hides, P pins, L shows lineage, F fits.
  document.addEventListener("keydown", (ev) => {
    const t = ev.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable)) return;
    const key = ev.key.toLowerCase();
    if ((ev.ctrlKey || ev.metaKey) && (key === "z" || key === "y")) {
      ev.preventDefault();
      if (key === "y" || ev.shiftKey) redo();
      else undo();
      return;
    }
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (key === "f" && t.tagName !== "BUTTON") return fitReadable();
    const node = selectedId ? cy.getElementById(selectedId) : cy.collection();
    if (node.empty() || t.tagName === "BUTTON" || t.tagName === "A" || t.tagName === "SUMMARY") return;
    if (key === "enter") expand(selectedId);
    else if (key === "delete" || key === "backspace") hide(node, "hide");
    else if (key === "p") togglePin(node);
    else if (key === "l") showLineage(selectedId);
    else return;
    ev.preventDefault();
  });

  // Panels overlay the canvas; each collapses to a tab (the canvas is the whole window).
  for (const [panel, button] of [["left", "left-toggle"], ["side", "side-toggle"]]) {
    $(button).addEventListener("click", () => {
      const shut = $(panel).classList.toggle("collapsed");
      $(button).setAttribute("aria-expanded", String(!shut));
      $(button).textContent = (shut ? "Show " : "Hide ") + $(button).dataset.what;
    });
  }

  // ------------------------------------------------------------------ start
  showSignedIn(Boolean(sessionStorage.getItem(TOKEN_KEY)));
  drawLegend();
  const params = new URLSearchParams(window.location.search);
  const linked = params.get("atom");
  // /lineage?atom=X redirects here with lineage=1: the same drawing (lineage edges
  // are always drawn), the side panel scrolled to the lineage list.
  const lineageWanted = params.get("lineage") === "1";
  if (linked && sessionStorage.getItem(TOKEN_KEY)) {
    openAtom(linked).then(() => {
      if (lineageWanted) $("side-lineage-head").scrollIntoView({ block: "start" });
    });
  }
  // For tests, the browser console and add-ons (explore_time.js): refetch(extraVars)
  // redraws every expansion with extra inspect variables (as of the time bar's instant
  // it answers which expanded atoms did not exist then); gql asks the API; the
  // gestures (select, hide, pin, undo, …) as the menu and keys run them.
  window.graphsvcExplorer = {
    cy, openAtom, expand, refetch, gql, select: selectOnly, hide, hideOthers, togglePin,
    showLineage, undo, redo, fit: fitReadable, freeArea, applyLod,
  };
})();
