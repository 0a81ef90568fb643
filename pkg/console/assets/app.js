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
    const page = (location.hash || "#servers").slice(1);
    const pages = { servers: loadServers, catalog: loadCatalog, playground: loadPlayground, usage: loadUsage };
    const load = pages[page] || loadServers;
    show(pages[page] ? page : "servers");
    clearInterval(pollTimer);
    load();
    if (page === "servers" || page === "usage") pollTimer = setInterval(load, cfg.poll_ms);
  }
  window.addEventListener("hashchange", route);

  // ---- servers ----
  async function loadServers() {
    let data;
    try { data = await api("GET", admin("/servers")); } catch (err) { $("action-status").textContent = err.message; return; }
    const tbody = $("servers-table").tBodies[0];
    tbody.replaceChildren(...data.servers.map((s) => h("tr", { "data-server": s.id, "data-status": s.status },
      h("td", { class: "tid", text: s.id }), h("td", { text: s.transport }), h("td", {}, badge(s.status)),
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
      $("action-status").textContent = label + " done: " + JSON.stringify(out.status ?? out).slice(0, 300);
      loadServers();
    } catch (err) { $("action-status").textContent = label + " failed: " + err.message; }
    btn.disabled = false;
  }
  $("sync-now").addEventListener("click", (e) => action(e.target, "Sync", () => api("POST", admin("/sync"))));
  $("reindex").addEventListener("click", (e) => action(e.target, "Reindex", () => api("POST", cfg.admin_prefix.replace(/\/admin$/, "") + "/reindex", { mode: "incremental" })));

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
        h("td", { class: "tid", text: t.tool_id }), h("td", { text: t.tool_type }), h("td", { text: t.status }), h("td", { class: "desc", text: t.description }));
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
      box.replaceChildren(h("h3", { class: "tid", text: t.tool_id }),
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
          h("span", { class: "tid", text: r.tool_id }), " ",
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
      h("td", { class: "tid", text: k.id }), h("td", { class: "num", text: fmtNum(k.calls) }), h("td", { class: "num", text: fmtNum(k.errors) }),
      h("td", { class: "num", text: fmtNum(k.rate_limited) }), h("td", { text: fmtTime(k.last_seen) }),
      h("td", { class: "num", text: fmtMs(k.p50_ms) }), h("td", { class: "num", text: fmtMs(k.p99_ms) }))));
    const lat = data.latency;
    $("lat-summary").textContent = lat.buckets.length ? "p50 " + fmtMs(lat.p50_ms) + " ms · p99 " + fmtMs(lat.p99_ms) + " ms" : "no calls yet";
    $("lat-chart").replaceChildren(chart(lat.buckets));
  }
  // chart draws the latency histogram as inline SVG bars.
  function chart(buckets) {
    const NS = "http://www.w3.org/2000/svg";
    const W = 600, H = 140, pad = 22;
    const svg = document.createElementNS(NS, "svg");
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    svg.setAttribute("width", "100%");
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", "tool call latency histogram");
    if (!buckets.length) return svg;
    const max = Math.max(...buckets.map((b) => b.count));
    const bw = (W - 2 * pad) / buckets.length;
    buckets.forEach((b, i) => {
      const bh = Math.max(1, (H - 2 * pad) * b.count / max);
      const r = document.createElementNS(NS, "rect");
      r.setAttribute("class", "bar");
      r.setAttribute("x", pad + i * bw + 1);
      r.setAttribute("y", H - pad - bh);
      r.setAttribute("width", Math.max(1, bw - 2));
      r.setAttribute("height", bh);
      const t = document.createElementNS(NS, "title");
      t.textContent = "≤ " + (b.le_ms || "∞") + " ms: " + b.count;
      r.append(t);
      svg.append(r);
      if (i % Math.ceil(buckets.length / 8) === 0) {
        const l = document.createElementNS(NS, "text");
        l.setAttribute("x", pad + i * bw);
        l.setAttribute("y", H - 6);
        l.textContent = b.le_ms ? (b.le_ms < 1 ? b.le_ms.toFixed(2) : Math.round(b.le_ms)) + " ms" : "∞";
        svg.append(l);
      }
    });
    return svg;
  }

  // ---- start ----
  fetch("config.json", { cache: "no-store" }).then((r) => r.json()).then((c) => { cfg = c; }).catch(() => {}).finally(() => {
    if (key) signIn(key).catch(() => signOut("Sign in again."));
    else show("signin");
  });
})();
