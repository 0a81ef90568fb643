// Operator console of the MCP gateway. Plain DOM, no framework, no inline
// script: every datum is inserted as text (tool descriptions come from
// upstream servers and are never treated as HTML).
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const KEY = "toolrag.console.key";
  let cfg = { admin_prefix: "/tool-rag/admin", poll_ms: 5000, sync: false, variants: [] };
  let key = sessionStorage.getItem(KEY) || "";
  let pollTimer = null;
  const cat = { offset: 0, limit: 100, total: 0, timer: null };

  // h builds an element: h("td", {class: "num"}, "12").
  function h(tag, attrs, ...kids) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === false || v === null || v === undefined) continue;
      if (k === "text") el.textContent = v;
      else el.setAttribute(k, v === true ? "" : String(v));
    }
    for (const kid of kids.flat()) {
      if (kid === null || kid === undefined) continue;
      el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
    }
    return el;
  }
  const fmtNum = (n) => (n === undefined || n === null ? "" : Number(n).toLocaleString("en-US"));
  const fmtMs = (n) => (n ? Number(n).toFixed(n < 10 ? 2 : 1) : "–");
  function fmtTime(s) {
    if (!s || s.startsWith("0001-")) return "never";
    const d = new Date(s);
    const ago = Math.round((Date.now() - d.getTime()) / 1000);
    if (ago < 90) return ago + " s ago";
    if (ago < 5400) return Math.round(ago / 60) + " min ago";
    return d.toISOString().replace("T", " ").slice(0, 16) + " UTC";
  }
  const badge = (s) => h("span", { class: "badge b-" + s, text: s });
  // tid shows a tool or server id in monospace, breakable only after "_"
  // (so "echo__reverse" never wraps mid-word).
  function tid(tag, id, attrs) {
    const parts = String(id).split(/(?<=_)(?!_)/);
    const kids = [];
    parts.forEach((p, i) => { if (i) kids.push(h("wbr")); kids.push(p); });
    return h(tag, Object.assign({ class: "tid" }, attrs || {}), ...kids);
  }
  // traceCell shows a call's trace id, linked to the trace viewer when the
  // gateway has a trace_url (TOOL_RAG_TRACE_URL), for the call rows.
  function traceCell(k) {
    if (!k.trace_id) return h("td", { class: "muted", text: "–" });
    const short = k.trace_id.slice(0, 8) + "…";
    if (!cfg.trace_url) return h("td", {}, h("code", { class: "trace", title: k.trace_id, "data-trace": k.trace_id, text: short }));
    return h("td", {}, h("a", { class: "trace", href: cfg.trace_url.replace("{trace_id}", encodeURIComponent(k.trace_id)),
      target: "_blank", rel: "noopener noreferrer", title: "trace " + k.trace_id, "data-trace": k.trace_id, text: short }));
  }
  const pct = (x) => (100 * x).toFixed(x > 0 && x < 0.1 ? 1 : 0) + " %";

  async function api(method, path, body) {
    const opts = { method, headers: { Authorization: "Bearer " + key }, cache: "no-store" };
    if (body !== undefined) {
      opts.headers["Content-Type"] = "application/json";
      opts.body = JSON.stringify(body);
    }
    const res = await fetch(path, opts);
    let data = null;
    try { data = await res.json(); } catch (_) { data = null; }
    if (res.status === 401) { signOut("Your key was not accepted; sign in again."); throw new Error("unauthorized"); }
    if (!res.ok) throw new Error((data && data.error) || res.status + " " + res.statusText);
    return data;
  }
  const admin = (p) => cfg.admin_prefix + p;

  // ---- sign in ----
  function signOut(msg) {
    key = "";
    sessionStorage.removeItem(KEY);
    clearInterval(pollTimer);
    $("nav").hidden = true;
    show("signin");
    $("signin-error").textContent = msg || "";
  }
  async function signIn(k) {
    key = k;
    const res = await fetch(admin("/whoami"), { headers: { Authorization: "Bearer " + k }, cache: "no-store" });
    if (res.status === 401) throw new Error("This key is not valid.");
    if (res.status === 403) throw new Error("This key is not an admin key: the console needs an admin key.");
    if (!res.ok) throw new Error("Sign-in failed: HTTP " + res.status);
    const who = await res.json();
    sessionStorage.setItem(KEY, k);
    $("whoami").textContent = "signed in as " + who.key_id;
    $("nav").hidden = false;
    route();
  }
  $("signin-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    $("signin-error").textContent = "";
    const k = $("key").value.trim();
    $("key").value = "";
    try { await signIn(k); } catch (err) { key = ""; $("signin-error").textContent = err.message; }
  });
  $("signout").addEventListener("click", () => signOut(""));

  // ---- routing ----
  function show(page) {
    for (const s of document.querySelectorAll("section.page")) s.hidden = s.id !== "page-" + page;
    for (const a of document.querySelectorAll("nav a")) a.classList.toggle("active", a.dataset.page === page);
  }
  function route() {
    if (!key) { show("signin"); return; }
    const page = (location.hash || "#overview").slice(1);
    const pages = { overview: loadOverview, servers: loadServers, catalog: loadCatalog, playground: loadPlayground, usage: loadUsage };
    const load = pages[page] || loadOverview;
    show(pages[page] ? page : "overview");
    clearInterval(pollTimer);
    load();
    if (page === "overview" || page === "servers" || page === "usage") pollTimer = setInterval(load, cfg.poll_ms);
  }
  window.addEventListener("hashchange", route);

  // ---- servers ----
  async function loadServers() {
    let data;
    try { data = await api("GET", admin("/servers")); } catch (err) { $("action-status").textContent = err.message; return; }
    const tbody = $("servers-table").tBodies[0];
    tbody.replaceChildren(...data.servers.map((s) => h("tr", { "data-server": s.id, "data-status": s.status },
      tid("td", s.id), h("td", {}, s.transport, s.connected != null ? [" · ", cfg.connections
        ? h("button", { type: "button", class: "link", "data-connections": s.id, title: "who is connected to " + s.id, text: fmtNum(s.connected) + " connected" })
        : fmtNum(s.connected) + " connected"] : null), h("td", {}, badge(s.status)),
      h("td", { class: "desc", text: s.reason || "" }), h("td", { text: fmtTime(s.last_sync) }),
      h("td", { class: "num", text: fmtNum(s.tools) + (s.stale_tools ? " (" + s.stale_tools + " stale)" : "") }),
      h("td", { class: "num", text: fmtNum(s.calls) }),
      h("td", { class: "num", text: s.calls ? (100 * s.error_rate).toFixed(1) + " %" : "–" }),
      h("td", { class: "num", text: fmtMs(s.p50_ms) }), h("td", { class: "num", text: fmtMs(s.p99_ms) }))));
    const c = data.counts || {};
    $("server-counts").textContent = ["up", "down", "stale", "degraded"].filter((k) => c[k]).map((k) => c[k] + " " + k).join(" · ");
    $("sync-now").hidden = !cfg.sync;
  }
  async function action(btn, label, fn) {
    btn.disabled = true;
    $("action-status").textContent = label + "…";
    try {
      const out = await fn();
      $("action-status").textContent = label + ": " + (out.summary || describe(out.status ?? out));
      loadServers();
    } catch (err) { $("action-status").textContent = label + " failed: " + err.message; }
    btn.disabled = false;
  }
  $("sync-now").addEventListener("click", (e) => action(e.target, "Sync", () => api("POST", admin("/sync"))));
  $("reindex").addEventListener("click", (e) => action(e.target, "Reindex", () => api("POST", cfg.admin_prefix.replace(/\/admin$/, "") + "/reindex", { mode: "incremental" })));

  // ---- connections (servers whose auth is per principal) ----
  // The panel lists who is connected to one server (key id, principal,
  // kind, since when; never a token) and revokes a principal's grant for
  // that server or all of theirs, each after a confirmation in the row.
  let connServer = "";
  async function loadConnections(server) {
    connServer = server;
    const panel = $("conn-panel");
    panel.hidden = false;
    panel.dataset.server = server;
    $("conn-title").replaceChildren("Connected to ", tid("span", server));
    let data;
    try { data = await api("GET", admin("/connections?server=" + encodeURIComponent(server))); } catch (err) { $("conn-status").textContent = err.message; return; }
    const rows = data.connections.map((c) => h("tr", { "data-principal": c.principal, "data-key": c.key_id },
      tid("td", c.key_id || "?"), h("td", {}, h("code", { class: "principal", title: c.principal, text: c.principal.slice(0, 14) + "…" })),
      h("td", { text: c.kind }), h("td", { text: fmtTime(c.connected_at) }), h("td", { text: c.expires_at ? fmtUntil(c.expires_at) : "–" }),
      h("td", { class: "actions" }, revokeButtons())));
    $("conn-table").tBodies[0].replaceChildren(...rows);
    $("conn-table").hidden = !rows.length;
    $("conn-empty").hidden = rows.length > 0;
  }
  const revokeButtons = () => [h("button", { type: "button", class: "danger", "data-action": "revoke", text: "Revoke" }), " ",
    h("button", { type: "button", class: "ghost", "data-action": "revoke-all", text: "Revoke on all servers" })];
  function fmtUntil(s) {
    const left = Math.round((new Date(s).getTime() - Date.now()) / 1000);
    if (left <= 0) return "expired";
    return left < 5400 ? "in " + Math.max(1, Math.round(left / 60)) + " min" : new Date(s).toISOString().replace("T", " ").slice(0, 16) + " UTC";
  }
  $("servers-table").tBodies[0].addEventListener("click", (e) => {
    const b = e.target.closest("button[data-connections]");
    if (b) { $("conn-status").textContent = ""; loadConnections(b.dataset.connections); }
  });
  $("conn-close").addEventListener("click", () => { $("conn-panel").hidden = true; connServer = ""; });
  $("conn-table").tBodies[0].addEventListener("click", async (e) => {
    const b = e.target.closest("button[data-action]");
    if (!b) return;
    const tr = b.closest("tr"), cell = b.closest("td");
    const who = "key " + (tr.dataset.key || "?");
    switch (b.dataset.action) {
      case "revoke":
      case "revoke-all": {
        const all = b.dataset.action === "revoke-all";
        cell.replaceChildren(h("span", { class: "warn", text: all ? "Revoke every connection of " + who + "? " : "Revoke " + who + "'s connection to " + connServer + "? " }),
          h("button", { type: "button", class: "danger", "data-action": "confirm", "data-all": all, text: "Confirm" }), " ",
          h("button", { type: "button", class: "ghost", "data-action": "cancel", text: "Cancel" }));
        break;
      }
      case "cancel":
        cell.replaceChildren(...revokeButtons());
        break;
      case "confirm": {
        const q = new URLSearchParams({ principal: tr.dataset.principal });
        if (!b.hasAttribute("data-all")) q.set("server", connServer);
        b.disabled = true;
        try {
          const out = await api("DELETE", admin("/connections?" + q));
          $("conn-status").textContent = "Revoked " + out.revoked + " connection" + (out.revoked === 1 ? "" : "s") + " of " + who + ": their next call asks them to connect again.";
        } catch (err) { $("conn-status").textContent = "Revoke failed: " + err.message; }
        loadConnections(connServer);
        loadServers();
        break;
      }
    }
  });

  // ---- catalog ----
  async function loadCatalog() {
    const q = new URLSearchParams({ offset: cat.offset, limit: cat.limit, q: $("cat-q").value, server: $("cat-server").value, type: $("cat-type").value, status: $("cat-status").value });
    let data;
    try { data = await api("GET", admin("/tools?" + q)); } catch (err) { $("cat-count").textContent = err.message; return; }
    cat.total = data.total;
    const sel = $("cat-server");
    if (sel.options.length - 1 !== data.servers.length) {
      const cur = sel.value;
      sel.replaceChildren(h("option", { value: "", text: "All servers" }), ...data.servers.map((s) => h("option", { value: s, text: s })));
      sel.value = cur;
    }
    $("catalog-table").tBodies[0].replaceChildren(...data.items.map((t) => {
      const tr = h("tr", { class: "click", "data-tool": t.tool_id, tabindex: 0 },
        tid("td", t.tool_id), h("td", { text: t.tool_type }), h("td", { text: t.status }), h("td", { class: "desc", text: t.description }));
      tr.addEventListener("click", () => showTool(t.tool_id, tr));
      tr.addEventListener("keydown", (e) => { if (e.key === "Enter") showTool(t.tool_id, tr); });
      return tr;
    }));
    const last = Math.min(cat.offset + data.items.length, data.total);
    $("cat-count").textContent = data.total ? (cat.offset + 1) + "–" + last + " of " + fmtNum(data.total) + " tools" + (data.total !== data.catalog_size ? " (" + fmtNum(data.catalog_size) + " in the catalog)" : "") : "no tool matches";
    $("cat-prev").disabled = cat.offset === 0;
    $("cat-next").disabled = last >= data.total;
  }
  async function showTool(id, tr) {
    for (const r of document.querySelectorAll("#catalog-table tr.sel")) r.classList.remove("sel");
    tr.classList.add("sel");
    const box = $("tool-detail");
    box.hidden = false;
    box.replaceChildren(h("p", { class: "muted", text: "loading…" }));
    try {
      const t = await api("GET", admin("/tools/" + encodeURIComponent(id)));
      box.replaceChildren(tid("h3", t.tool_id),
        h("p", { class: "muted", text: [t.server_name, t.tool_type, t.permission_scope, t.status].join(" · ") }),
        h("p", { text: t.description || "(no description)" }),
        h("h3", { text: "Input schema" }), h("pre", { text: JSON.stringify(t.input_schema || {}, null, 2) }),
        t.annotations ? h("pre", { text: "annotations: " + JSON.stringify(t.annotations, null, 2) }) : null);
    } catch (err) { box.replaceChildren(h("p", { class: "error", text: err.message })); }
  }
  const refilter = () => { cat.offset = 0; clearTimeout(cat.timer); cat.timer = setTimeout(loadCatalog, 150); };
  $("cat-q").addEventListener("input", refilter);
  for (const id of ["cat-server", "cat-type", "cat-status"]) $(id).addEventListener("change", refilter);
  $("cat-prev").addEventListener("click", () => { cat.offset = Math.max(0, cat.offset - cat.limit); loadCatalog(); });
  $("cat-next").addEventListener("click", () => { cat.offset += cat.limit; loadCatalog(); });

  // ---- playground ----
  let keysLoaded = false;
  async function loadPlayground() {
    if (keysLoaded) return;
    try {
      const data = await api("GET", admin("/keys"));
      $("play-key").replaceChildren(h("option", { value: "", text: "(my key)" }),
        ...data.keys.map((k) => h("option", { value: k.id, text: k.id + (k.admin ? " (admin)" : " — " + (k.servers.length ? k.servers.join(", ") : "no servers")) })));
      keysLoaded = true;
    } catch (err) { $("play-results").replaceChildren(h("p", { class: "error", text: err.message })); }
    const variants = cfg.variants || [];
    $("play-compare-label").hidden = variants.length < 2;
    $("play-compare").replaceChildren(h("option", { value: "", text: "(none)" }), ...variants.slice(1).map((v) => h("option", { value: v, text: v })));
  }
  $("play-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const queries = $("play-queries").value.split("\n").map((s) => s.trim()).filter(Boolean);
    const body = { queries, top_k: Number($("play-topk").value) || 5 };
    if ($("play-key").value) body.key_id = $("play-key").value;
    const cmp = $("play-compare").value;
    if (cmp) body.variants = [cfg.variants[0], cmp];
    const out = $("play-results");
    out.replaceChildren(h("p", { class: "muted", text: "searching…" }));
    let data;
    try { data = await api("POST", admin("/search"), body); } catch (err) { out.replaceChildren(h("p", { class: "error", text: err.message })); return; }
    const byVariant = new Map();
    for (const g of data.groups) {
      if (!byVariant.has(g.variant)) byVariant.set(g.variant, []);
      byVariant.get(g.variant).push(g);
    }
    out.className = byVariant.size > 1 ? "cols two" : "cols";
    out.replaceChildren(...[...byVariant].map(([variant, groups]) => h("div", { class: "card", "data-variant": variant },
      h("h3", { text: (byVariant.size > 1 ? variant + " · " : "") + "as key " + data.key_id }),
      ...groups.map((g) => h("div", { class: "group" },
        h("p", {}, h("strong", { text: g.query })),
        g.results.length ? h("ol", { class: "hits" }, ...g.results.map((r) => h("li", { "data-tool": r.tool_id },
          tid("span", r.tool_id), " ",
          r.match ? badge(r.match) : null, " ",
          h("span", { class: "muted", text: "score " + r.score.toFixed(3) }),
          h("div", { class: "reason", text: r.reason || "" }),
          h("div", { class: "muted", text: r.description || "" }),
          r.related && r.related.length ? h("div", { class: "reason", text: "related: " + r.related.join(", ") }) : null)))
          : h("p", { class: "muted", text: g.note || "no tool found" }))))));
  });

  // ---- usage ----
  async function loadUsage() {
    let data;
    try { data = await api("GET", admin("/usage")); } catch (err) { $("usage-since").textContent = err.message; return; }
    $("usage-since").textContent = "since " + fmtTime(data.since);
    $("usage-table").tBodies[0].replaceChildren(...data.keys.map((k) => h("tr", { "data-key": k.id },
      tid("td", k.id), h("td", { class: "num", text: fmtNum(k.calls) }), h("td", { class: "num", text: fmtNum(k.errors) }),
      h("td", { class: "num", text: fmtNum(k.rate_limited) }), h("td", { class: "num", text: fmtNum(k.retrievals) }), h("td", { text: fmtTime(k.last_seen) }),
      h("td", { class: "num", text: fmtMs(k.p50_ms) }), h("td", { class: "num", text: fmtMs(k.p99_ms) }))));
    const lat = data.latency;
    $("lat-summary").textContent = lat.buckets.length ? "p50 " + fmtMs(lat.p50_ms) + " ms · p99 " + fmtMs(lat.p99_ms) + " ms" : "no calls yet";
    $("lat-chart").replaceChildren(chart(lat.buckets, width("lat-chart")));
    $("timeline-chart").replaceChildren(timeline(data.timeline || [], width("timeline-chart")));
    $("usage-retrievals").replaceChildren(...retrievals(data.retrievals));
    const calls = (data.recent_calls || []).slice(0, 20);
    $("usage-calls").tBodies[0].replaceChildren(...calls.map((k) => h("tr", { "data-outcome": k.outcome, "data-call": k.tool },
      h("td", { text: fmtTime(k.at) }), tid("td", k.key_id), tid("td", k.tool || "?"),
      h("td", {}, h("span", { class: k.outcome === "ok" ? "" : "warn", text: k.outcome })), h("td", { class: "num", text: fmtMs(k.ms) }),
      cfg.tracing ? traceCell(k) : null)));
    $("usage-calls").tHead.rows[0].cells[5].hidden = !cfg.tracing;
    $("usage-calls").hidden = !calls.length;
  }

  // describe words a result object without a summary: "a 1, b 2".
  function describe(v) {
    if (v === null || typeof v !== "object") return String(v);
    return Object.entries(v).map(([k, x]) => k.replace(/_/g, " ") + " " + (typeof x === "object" ? JSON.stringify(x) : x)).join(", ");
  }

  // ---- overview ----
  async function loadOverview() {
    let data;
    try { data = await api("GET", admin("/overview")); } catch (err) { $("ov-status").textContent = err.message; return; }
    $("ov-status").textContent = "";
    $("ov-since").textContent = "counting since " + fmtTime(data.since);
    const c = data.counts || {};
    $("ov-counts").textContent = ["up", "down", "stale", "degraded"].filter((k) => c[k]).map((k) => c[k] + " " + k).join(" · ");
    $("ov-servers").replaceChildren(...data.servers.map((s) => h("li", { "data-server": s.id, "data-status": s.status },
      badge(s.status), " ", tid("strong", s.id), h("span", { class: "muted", text: " · " + s.transport + " · " + fmtNum(s.tools) + " tools" + (s.calls ? " · " + fmtNum(s.calls) + " calls" : "") }),
      s.reason ? h("div", { class: "reason", text: s.reason }) : null)));
    if (!data.servers.length) $("ov-servers").replaceChildren(h("li", { class: "muted", text: "No server configured: add one to config/registry.yaml (docs/add-server.md)." }));
    $("ov-catalog").textContent = fmtNum(data.tools) + " tools";
    $("ov-sync").textContent = "last sync " + fmtTime(data.last_sync);
    const cs = data.calls;
    $("ov-callsum").textContent = cs.calls ? fmtNum(cs.calls) + " tool calls, " + fmtNum(cs.errors) + " failed (" + pct(cs.errors / cs.calls) + ") · p50 " + fmtMs(cs.p50_ms) + " ms · p99 " + fmtMs(cs.p99_ms) + " ms" : "no tool call yet";
    $("ov-timeline").replaceChildren(timeline(data.timeline || [], width("ov-timeline")));
    $("ov-retrievals").replaceChildren(...retrievals(data.retrievals));
    const calls = data.recent_calls.slice(0, 10);
    $("ov-calls").tBodies[0].replaceChildren(...calls.map((k) => h("tr", { "data-outcome": k.outcome },
      h("td", { text: fmtTime(k.at) }), tid("td", k.key_id), tid("td", k.tool || "?"),
      h("td", {}, h("span", { class: k.outcome === "ok" ? "" : "warn", text: k.outcome })), h("td", { class: "num", text: fmtMs(k.ms) }))));
    $("ov-calls").hidden = !calls.length;
    $("ov-calls-empty").hidden = calls.length > 0;
    const errs = [
      ...data.server_problems.map((p) => h("li", { "data-server": p.server }, badge(p.status), " ", tid("strong", p.server), h("div", { class: "reason", text: p.reason || "" }))),
      ...data.recent_errors.slice(0, 10).map((k) => h("li", { "data-call": k.tool }, h("span", { class: "warn", text: k.outcome }), " ", tid("strong", k.tool || "?"),
        h("span", { class: "muted", text: " · key " + k.key_id + " · " + fmtTime(k.at) }))),
    ];
    $("ov-errors").replaceChildren(...errs);
    $("ov-errors-empty").hidden = errs.length > 0;
  }

  // retrievals shows the match levels of the queries' best tools as a
  // stacked bar with counts; weak (or nothing) is the sign of a missing tool.
  function retrievals(r) {
    if (!r || !r.requests) return [h("p", { class: "muted", text: "No retrieval yet: find_tools and /tool-rag/retrieve requests are counted here." })];
    const levels = [["strong", "strong"], ["partial", "partial"], ["weak", "weak"], ["none", "nothing found"]];
    const q = r.queries || 1;
    return [
      h("p", { class: "retrieval-count", text: fmtNum(r.requests) + " retrievals (" + fmtNum(r.by_source.find_tools) + " find_tools, " + fmtNum(r.by_source.rest) + " REST) · " + fmtNum(r.queries) + " queries" }),
      h("div", { class: "stack", role: "img", "aria-label": "match levels" }, ...levels.filter(([k]) => r.by_match[k]).map(([k, label]) => {
        // CSSOM, not a style attribute: the Content Security Policy allows no inline style.
        const sp = h("span", { class: "m-" + k, title: label + ": " + r.by_match[k] });
        sp.style.width = (100 * r.by_match[k] / q) + "%";
        return sp;
      })),
      h("div", { class: "legend" }, ...levels.map(([k, label]) => h("span", { "data-match": k }, h("i", { class: "m-" + k }), label + " " + fmtNum(r.by_match[k]) + " (" + pct(r.by_match[k] / q) + ")"))),
      r.weak_share > 0 ? h("p", { class: "warn", text: pct(r.weak_share) + " of the queries found only weak matches or nothing: the catalog may lack a tool for them (try them in the Playground)." })
        : h("p", { class: "muted", text: "Every query found a strong or partial match." }),
    ];
  }
  const NS = "http://www.w3.org/2000/svg";
  function svgEl(tag, attrs, text) {
    const el = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, v);
    if (text !== undefined) el.textContent = text;
    return el;
  }
  // niceMax rounds up to 1, 2 or 5 times a power of ten.
  function niceMax(v) {
    if (v <= 1) return 1;
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p;
    return 10 * p;
  }
  // width is the drawing width of a chart box: charts are drawn at their
  // size (not scaled), so their text keeps its size.
  const width = (id) => Math.max(300, Math.min(1400, $(id).clientWidth || 600));
  const msLabel = (v) => v === 0 ? "0" : (v >= 1000 ? (v / 1000).toFixed(v >= 10000 ? 0 : 1) + " s" : (v < 1 ? v.toFixed(2) : v < 10 ? v.toFixed(1) : Math.round(v)) + " ms");

  // timeline draws p50 and p99 per minute (lines with dots, left axis in
  // ms) over the calls per minute (bars, failed part red, counts on top),
  // over at least the last 30 minutes.
  function timeline(points, W) {
    const H = 206, L = 52, R = 22, T = 34, B = 36;
    const svg = svgEl("svg", { viewBox: "0 0 " + W + " " + H, width: W, height: H, role: "img", "aria-label": "tool call latency per minute" });
    svg.append(svgEl("text", { x: L - 4, y: T - 14, "text-anchor": "end" }, "calls"));
    if (!points.length) { svg.append(svgEl("text", { x: L, y: H / 2 }, "no calls in the last hour")); return svg; }
    const byMin = new Map(points.map((p) => [Math.round(Date.parse(p.start) / 60000), p]));
    const last = Math.round(Date.parse(points[points.length - 1].start) / 60000);
    const n = Math.max(points.length, 30);
    const slots = [];
    for (let m = last - n + 1; m <= last; m++) slots.push(byMin.get(m) || { start: new Date(m * 60000).toISOString(), calls: 0, errors: 0, p50_ms: 0, p99_ms: 0 });
    const maxMs = niceMax(Math.max(...slots.map((p) => p.p99_ms)));
    const maxCalls = Math.max(...slots.map((p) => p.calls));
    const pw = (W - L - R) / slots.length;
    const y = (v) => H - B - (H - T - B) * v / maxMs;
    for (const f of [0, 0.5, 1]) {
      svg.append(svgEl("line", { class: f ? "grid" : "axis", x1: L, x2: W - R, y1: y(f * maxMs), y2: y(f * maxMs) }));
      svg.append(svgEl("text", { x: L - 4, y: y(f * maxMs) + 3, "text-anchor": "end" }, msLabel(f * maxMs)));
    }
    svg.append(svgEl("line", { class: "axis", x1: L, x2: L, y1: T, y2: H - B }));
    const cx = (i) => L + i * pw + pw / 2;
    slots.forEach((p, i) => {
      if (!p.calls) return;
      const full = 0.4 * (H - T - B);
      const bh = Math.max(2, full * p.calls / maxCalls), eh = p.errors ? Math.max(1, full * p.errors / maxCalls) : 0;
      svg.append(svgEl("rect", { class: "bar", opacity: 0.3, x: L + i * pw + 1, y: H - B - bh, width: Math.max(1, pw - 2), height: bh - eh }));
      if (eh) svg.append(svgEl("rect", { class: "err", opacity: 0.5, x: L + i * pw + 1, y: H - B - eh, width: Math.max(1, pw - 2), height: eh }));
      // the count in a row of its own above the plot, clear of the lines
      svg.append(svgEl("text", { class: "count", x: cx(i), y: T - 14, "text-anchor": "middle" }, String(p.calls)));
    });
    for (const [key, cls] of [["p50_ms", "p50"], ["p99_ms", "p99"]]) {
      const d = slots.map((p, i) => (p.calls ? (i && slots[i - 1].calls ? "L" : "M") + cx(i).toFixed(1) + " " + y(p[key]).toFixed(1) : "")).join(" ");
      svg.append(svgEl("path", { class: cls, d: d.trim() || "M0 0" }));
      slots.forEach((p, i) => { if (p.calls) svg.append(svgEl("circle", { class: cls, cx: cx(i), cy: y(p[key]), r: 3 })); });
    }
    const every = Math.ceil(slots.length / Math.max(2, Math.floor((W - L - R) / 60)));
    slots.forEach((p, i) => {
      if ((slots.length - 1 - i) % every) return;
      svg.append(svgEl("text", { x: cx(i), y: H - B + 14, "text-anchor": "middle" }, new Date(p.start).toISOString().slice(11, 16)));
    });
    svg.append(svgEl("text", { x: W - R, y: H - 4, "text-anchor": "end" }, "minute (UTC) · p50 solid, p99 dashed (ms) · bars: calls per minute, failed in red"));
    return svg;
  }

  // chart draws the latency histogram: one bar per bucket (log-spaced
  // upper bounds in ms on the x axis), the call count on each bar and a
  // count axis, so that a few calls do not read as full bars.
  function chart(buckets, W) {
    const H = 190, L = 40, R = 12, T = 16, B = 36;
    const svg = svgEl("svg", { viewBox: "0 0 " + W + " " + H, width: W, height: H, role: "img", "aria-label": "tool call latency histogram" });
    if (!buckets.length) { svg.append(svgEl("text", { x: L, y: H / 2 }, "no calls yet")); return svg; }
    const max = niceMax(Math.max(...buckets.map((b) => b.count)));
    const bw = (W - L - R) / buckets.length;
    const y = (v) => H - B - (H - T - B) * v / max;
    const ticks = max <= 4 ? [...Array(max + 1).keys()] : [0, max / 2, max];
    for (const v of ticks) {
      svg.append(svgEl("line", { class: v ? "grid" : "axis", x1: L, x2: W - R, y1: y(v), y2: y(v) }));
      svg.append(svgEl("text", { x: L - 4, y: y(v) + 3, "text-anchor": "end" }, fmtNum(v)));
    }
    svg.append(svgEl("line", { class: "axis", x1: L, x2: L, y1: T, y2: H - B }));
    svg.append(svgEl("text", { x: 2, y: T - 4 }, "calls"));
    buckets.forEach((b, i) => {
      const bh = b.count ? Math.max(1, y(0) - y(b.count)) : 0;
      const r = svgEl("rect", { class: "bar", x: L + i * bw + 1, y: y(0) - bh, width: Math.max(1, bw - 2), height: bh });
      r.append(svgEl("title", {}, "≤ " + (b.le_ms ? msLabel(b.le_ms) : "∞") + ": " + b.count + " calls"));
      svg.append(r);
      if (b.count) svg.append(svgEl("text", { class: "count", x: L + i * bw + bw / 2, y: y(0) - bh - 3, "text-anchor": "middle" }, fmtNum(b.count)));
      if (i % Math.ceil(buckets.length / Math.max(2, Math.floor((W - L - R) / 70))) === 0) {
        svg.append(svgEl("text", { x: L + i * bw + bw / 2, y: H - B + 14, "text-anchor": "middle" }, "≤ " + (b.le_ms ? msLabel(b.le_ms) : "∞")));
      }
    });
    svg.append(svgEl("text", { x: W - R, y: H - 4, "text-anchor": "end" }, "latency (upper bound of each bucket, log scale)"));
    return svg;
  }

  // ---- start ----
  fetch("config.json", { cache: "no-store" }).then((r) => r.json()).then((c) => { cfg = c; }).catch(() => {}).finally(() => {
    if (key) signIn(key).catch(() => signOut("Sign in again."));
    else show("signin");
  });
})();
