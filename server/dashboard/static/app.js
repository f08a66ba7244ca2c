// memhost dashboard: search as you type, the editor (live preview,
// conditional save, conflicts), deletes, settings actions, and live updates
// from the API's event stream. No library; page content is never run: it
// arrives as goldmark's safe-mode HTML and the Content Security Policy
// allows this file as the only script.
"use strict";

const $ = (sel, root = document) => root.querySelector(sel);
const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));

function debounce(fn, ms) {
  let t;
  return (...args) => { clearTimeout(t); t = setTimeout(() => fn(...args), ms); };
}

// The dashboard's key, when the server asks for a token: kept in this
// origin's storage by boot.js, sent with every call as a header (never a
// cookie, which every port of the host would receive), and in the address
// of an event stream, which EventSource opens without our headers.
function dashKey() {
  try { return localStorage.getItem("memhost-dashboard-key") || ""; } catch (e) { return ""; }
}

function call(url, opts = {}) {
  const key = dashKey();
  if (key) opts = { ...opts, headers: { ...(opts.headers || {}), "Memhost-Dashboard-Key": key } };
  return fetch(url, opts);
}

function events(url) {
  const key = dashKey();
  return new EventSource(key ? url + (url.includes("?") ? "&" : "?") + "key=" + encodeURIComponent(key) : url);
}

async function postJSON(url, body) {
  const r = await call(url, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  let data = {};
  try { data = await r.json(); } catch (e) { /* empty body */ }
  return { ok: r.ok, status: r.status, data };
}

// plural says a count with its noun: "1 file", "2 files".
function plural(n, one, many) {
  return n + " " + (n === 1 ? one : (many || one + "s"));
}

function errText(data, status) {
  return (data && data.error && data.error.message) || ("request failed (" + status + ")");
}

// Replaces <main> with the same URL fetched again (live updates). Elements
// marked data-keep (a pull's progress and result, a status line) move into
// the fresh page as they are: the server draws them empty, and a running
// pull keeps writing into the same nodes.
async function refreshMain() {
  const r = await call(location.href, { headers: { Accept: "text/html" } });
  if (!r.ok) return;
  const doc = new DOMParser().parseFromString(await r.text(), "text/html");
  const fresh = $("#main", doc);
  if (!fresh) return;
  for (const el of $$("#main [data-keep][id]")) {
    const blank = $("#" + CSS.escape(el.id), fresh);
    if (blank) blank.replaceWith(el);
  }
  const active = document.activeElement && document.activeElement.id;
  $("#main").replaceWith(fresh);
  if (active && $("#" + CSS.escape(active))) $("#" + CSS.escape(active)).focus();
  onLoad();
}

// ---- Search as you type ----

let searchCtl;
const runSearch = debounce(async () => {
  const q = $("#q"), withSessions = $("#with-sessions"), withTiers = $("#with-tiers");
  if (!q) return;
  const params = new URLSearchParams({ q: q.value });
  if (withSessions && withSessions.checked) params.set("sessions", "1");
  if (withTiers && withTiers.checked) params.set("tiers", "1");
  if (searchCtl) searchCtl.abort();
  searchCtl = new AbortController();
  try {
    const r = await call("/ui/api/search?" + params, { signal: searchCtl.signal });
    $("#results").innerHTML = await r.text();
    $("#results").dataset.query = q.value;
    history.replaceState(null, "", "/ui/search?" + params);
  } catch (e) { /* aborted by a newer query */ }
}, 150);

document.addEventListener("input", (e) => {
  if (e.target.id === "q") runSearch();
  if (e.target.id === "text") runPreview();
});
document.addEventListener("change", (e) => { if (e.target.id === "with-sessions" || e.target.id === "with-tiers") runSearch(); });

// ---- Page view: lines, editor ----

function highlightLines() {
  const m = /^#L(\d+)(?:-(\d+))?$/.exec(location.hash);
  $$(".blk.hit, .sl.hit").forEach((el) => el.classList.remove("hit"));
  if (!m) return;
  const from = +m[1], to = +(m[2] || m[1]);
  let first = null;
  for (const b of $$(".blk")) {
    const s = +b.dataset.l, e = +b.dataset.e;
    if (s && s <= to && e >= from) { b.classList.add("hit"); first = first || b; }
  }
  for (let i = from; i <= to; i++) { const sl = $("#S" + i); if (sl) sl.classList.add("hit"); }
  if (first) first.scrollIntoView({ block: "center" });
}
window.addEventListener("hashchange", highlightLines);

const runPreview = debounce(async () => {
  const text = $("#text");
  if (!text) return;
  const { ok, data } = await postJSON("/ui/api/preview", { text: text.value });
  if (ok) $("#preview").innerHTML = data.html;
}, 200);

let editing = false;
function openEditor() {
  const page = $("#page");
  if (!page || !$("#editor")) return; // a page too large to render has no editor
  editing = true;
  $("#editor").hidden = false;
  $("#view").hidden = true;
  $("#edit").hidden = true;
  $("#text").focus();
  runPreview();
}
function closeEditor() {
  editing = false;
  location.href = location.pathname;
}

async function save(text, baseHash) {
  const page = $("#page");
  const status = $("#save-status");
  status.textContent = "Saving…";
  const { ok, status: code, data } = await postJSON("/ui/api/save", { path: page.dataset.path, text, baseHash });
  if (ok) {
    editing = false;
    status.textContent = "Saved";
    location.href = data.url;
    return;
  }
  if (code === 409 && data.current) {
    status.textContent = "Not saved: the page changed on disk";
    $("#conflict").hidden = false;
    $("#conflict-mine").textContent = text;
    $("#conflict-theirs").textContent = data.current.page.text;
    $("#conflict").dataset.hash = data.current.page.hash;
    $("#conflict").scrollIntoView();
    $("#keep-mine").focus();
    return;
  }
  status.textContent = errText(data, code);
}

document.addEventListener("submit", async (e) => {
  const f = e.target;
  if (f.id === "editor") {
    e.preventDefault();
    save($("#text").value, $("#page").dataset.hash);
  } else if (f.id === "new-page") {
    e.preventDefault();
    let p = $("#new-path").value.trim();
    if (p && !p.endsWith(".md")) p += ".md";
    const title = p.split("/").pop().replace(/\.md$/, "").replace(/[-_]+/g, " ").replace(/\b\w/g, (c) => c.toUpperCase());
    const { ok, status, data } = await postJSON("/ui/api/save", { path: p, text: "# " + title + "\n", baseHash: "" });
    if (ok) location.href = data.url + "?edit=1";
    else $("#new-error").textContent = errText(data, status);
  } else if (f.classList.contains("use")) {
    e.preventDefault();
    usePlugin(f);
  } else if (f.id === "pull") {
    e.preventDefault();
    pullModel($("#pull-model").value.trim());
  }
});

document.addEventListener("click", async (e) => {
  const t = e.target.closest("button, a");
  if (!t) return;
  if (t.id === "edit") openEditor();
  else if (t.id === "cancel") closeEditor();
  else if (t.id === "keep-mine") save($("#conflict-mine").textContent, $("#conflict").dataset.hash);
  else if (t.id === "take-theirs") { editing = false; location.href = location.pathname; }
  else if (t.dataset.delete) askDelete(t.dataset.delete);
  else if (t.id === "rebuild") rebuild();
  else if (t.dataset.rmModel) askRemoveModel(t.dataset.rmModel);
});

function askRemoveModel(name) {
  const dlg = $("#confirm-rm");
  $("#rm-name").textContent = name;
  dlg.returnValue = "";
  dlg.onclose = async () => {
    if (dlg.returnValue !== "remove") return;
    const { ok, status, data } = await postJSON("/api/v1/models/rm", { name });
    $("#pull-status").textContent = ok ? "Removed " + name : errText(data, status);
    if (ok) refreshMain();
  };
  dlg.showModal();
}

function askDelete(path) {
  const dlg = $("#confirm-delete");
  $("#delete-name").textContent = path;
  $("#delete-error").textContent = "";
  dlg.returnValue = "";
  dlg.onclose = async () => {
    if (dlg.returnValue !== "delete") return;
    const { ok, status, data } = await postJSON("/ui/api/delete", { path });
    if (ok) location.href = data.url;
    else { $("#delete-error").textContent = errText(data, status); dlg.showModal(); }
  };
  dlg.showModal();
}

document.addEventListener("keydown", (e) => {
  const inField = /^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement.tagName);
  if ((e.ctrlKey || e.metaKey) && e.key === "s" && editing) {
    e.preventDefault();
    $("#editor").requestSubmit();
  } else if (e.key === "Escape" && editing && $("#conflict").hidden) {
    closeEditor();
  } else if (!inField && !e.ctrlKey && !e.metaKey && !e.altKey) {
    if (e.key === "/") {
      const q = $("#q") || $("#home-q") || $("#cq");
      if (q) { e.preventDefault(); q.focus(); } else location.href = "/ui/search";
    } else if (e.key === "e" && $("#page") && !editing) {
      e.preventDefault();
      openEditor();
    }
  }
});

// ---- Settings ----

function showStatus(st) {
  const set = (id, v) => { const el = $(id); if (el) el.textContent = v; };
  set("#mode", st.mode);
  const mode = $("#mode");
  if (mode) mode.className = "badge mode-" + st.mode;
  set("#reason", st.reason || "");
  set("#pending", st.pending);
  let line = (st.plugin || "no provider") + ": " + st.state;
  if (st.state === "downloading" || (st.progress > 0 && st.progress < 1)) line += " " + Math.round(st.progress * 100) + "%";
  if (st.message) line += " (" + st.message + ")";
  line += " · " + st.embedded + " embedded, " + st.pending + " pending";
  set("#provider-status", line);
}

// Polls the provider's state (a model download, re-embedding) until search
// is hybrid with nothing pending, there is no provider, or ten minutes pass.
let polling = null;
function pollStatus() {
  if (polling) clearInterval(polling);
  let ticks = 0;
  const tick = async () => {
    const r = await call("/ui/api/status");
    if (!r.ok) return;
    const st = await r.json();
    showStatus(st);
    if ((st.mode === "hybrid" && st.pending === 0) || st.state === "none" || ++ticks > 600) { clearInterval(polling); polling = null; }
  };
  tick();
  polling = setInterval(tick, 1000);
}

// The plugin list: asked with a POST, since listing starts every plugin
// (a provider without its model downloads it), which the page's GET must
// not. Once drawn it stays (#plugins-box is data-keep).
async function loadPlugins() {
  const box = $("#plugins-box");
  if (!box || box.dataset.asked) return;
  box.dataset.asked = "1";
  const r = await call("/ui/api/plugins", { method: "POST" });
  if ((r.headers.get("Content-Type") || "").startsWith("text/html")) {
    box.innerHTML = await r.text(); // the server's fragment, escaped by its template
  } else {
    let data = {};
    try { data = await r.json(); } catch (e) { /* empty body */ }
    box.textContent = errText(data, r.status);
  }
  box.dataset.loaded = "1";
}

async function usePlugin(form) {
  const set = {};
  for (const kv of form.elements.set.value.split(",")) {
    if (!kv.trim()) continue;
    const i = kv.indexOf("=");
    if (i < 0) { $("#provider-status").textContent = "options are key=value, got " + kv.trim(); return; }
    set[kv.slice(0, i).trim()] = kv.slice(i + 1).trim();
  }
  $("#provider-status").textContent = "Switching to " + form.dataset.name + "…";
  const { ok, status, data } = await postJSON("/ui/api/use", { name: form.dataset.name, set });
  if (!ok) { $("#provider-status").textContent = errText(data, status); return; }
  $$(".plugin").forEach((li) => li.classList.toggle("active", li.dataset.plugin === data.plugin));
  $("#provider-status").textContent = "Using " + data.plugin + " (" + data.model + ", " + data.dimensions + " dims): " + plural(data.pending, "chunk") + " to embed";
  pollStatus();
}

async function rebuild() {
  const btn = $("#rebuild"), out = $("#rebuild-status");
  btn.disabled = true;
  out.textContent = "Starting the rebuild…";
  const { ok, status, data } = await postJSON("/api/debug/memory/rebuild", {});
  if (!ok) { out.textContent = errText(data, status); btn.disabled = false; return; }
  const es = events(data.events);
  es.addEventListener("progress", (e) => {
    const p = JSON.parse(e.data);
    out.textContent = "Rebuilding… " + (p.elapsedMs / 1000).toFixed(0) + " s";
  });
  es.addEventListener("completed", (e) => {
    es.close();
    btn.disabled = false;
    const j = JSON.parse(e.data);
    if (j.error) { out.textContent = "Rebuild failed: " + j.error.message; return; }
    const r = j.result;
    out.textContent = "Rebuilt: " + plural(r.filesScanned, "file") + " scanned, " + r.filesChanged + " indexed, " + plural(r.chunksCreated, "chunk") + " in " + Math.round(r.durationMs) + " ms";
    out.dataset.done = "1";
    pollStatus();
  });
  es.onerror = () => { if (es.readyState === EventSource.CLOSED) btn.disabled = false; };
}

// humanSize is the server's size format (dashboard.go): "512 B", "1.5 MB".
function humanSize(n) {
  const units = ["KB", "MB", "GB"];
  if (n < 1024) return n + " B";
  let i = -1;
  do { n /= 1024; i++; } while (n >= 1024 && i < units.length - 1);
  return n.toFixed(1) + " " + units[i];
}

async function pullModel(model) {
  const bar = $("#pull-progress"), out = $("#pull-status");
  bar.hidden = false; bar.max = 1; bar.value = 0;
  out.textContent = "Pulling " + (model || "the default model") + "…";
  const r = await call("/api/v1/models/pull", { method: "POST", headers: { "Content-Type": "application/json", Accept: "application/x-ndjson" }, body: JSON.stringify({ model }) });
  if (!r.ok) { let d = {}; try { d = await r.json(); } catch (e) { /* none */ } out.textContent = errText(d, r.status); bar.hidden = true; return; }
  const reader = r.body.getReader();
  const dec = new TextDecoder();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let i;
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i); buf = buf.slice(i + 1);
      if (!line.trim()) continue;
      const msg = JSON.parse(line);
      if (msg.progress) {
        const { done: d, total } = msg.progress;
        if (total > 0) {
          bar.max = total; bar.value = d;
          out.textContent = humanSize(d) + " of " + humanSize(total) + " (" + Math.floor(100 * d / total) + "%)";
        } else {
          // No size from the server: the bytes so far, the bar undetermined.
          bar.removeAttribute("value");
          out.textContent = humanSize(d) + " so far";
        }
      } else if (msg.result) {
        out.textContent = (msg.result.already ? "Already present: " : "Pulled ") + msg.result.name;
        bar.hidden = true;
        refreshMain();
      } else if (msg.error) {
        out.textContent = msg.error.message;
        bar.hidden = true;
      }
    }
  }
}

// ---- Live updates ----

const refreshSoon = debounce(async () => {
  const page = $("#page");
  if (page) {
    if (!editing) return refreshMain();
    // Editing: say so when the page changed on disk; the save will conflict.
    const r = await call("/ui/api/page/" + page.dataset.path.split("/").map(encodeURIComponent).join("/"));
    const note = $("#changed");
    if (r.status === 404) { note.hidden = false; note.textContent = "This page was deleted on disk while you edit it."; return; }
    const d = await r.json();
    if (d.page && d.page.hash !== page.dataset.hash) {
      note.hidden = false;
      note.textContent = "This page changed on disk while you edit it: saving will show both versions.";
    }
    return;
  }
  const nav = document.body.dataset.nav;
  if (nav === "search") { if ($("#q") && $("#q").value) runSearch(); return; }
  if (nav === "settings") { if (!polling) pollStatus(); return; }
  refreshMain();
}, 300);

function connectEvents() {
  if (!window.EventSource) return;
  const es = events("/api/v1/events");
  const live = $("#live");
  es.addEventListener("ready", () => { live.textContent = "live"; live.classList.add("on"); });
  for (const t of ["write", "sync", "git-sync", "lagged"]) es.addEventListener(t, refreshSoon);
  es.addEventListener("embed", () => { if (document.body.dataset.nav === "settings" || document.body.dataset.nav === "home") refreshSoon(); });
  es.onerror = () => { live.textContent = "offline"; live.classList.remove("on"); };
  // A stream holds one of the browser's six connections to the server:
  // give it back as the page goes.
  window.addEventListener("pagehide", () => es.close());
}

function onLoad() {
  highlightLines();
  const page = $("#page");
  if (page && page.dataset.edit) openEditor();
  if (document.body.dataset.nav === "settings") { pollStatus(); loadPlugins(); }
}

document.addEventListener("DOMContentLoaded", () => { onLoad(); connectEvents(); });

// ---- Skills: accept or reject ----

document.addEventListener("click", async (e) => {
  const b = e.target.closest && e.target.closest("button.skill-review");
  if (!b) return;
  b.disabled = true;
  const { ok, status, data } = await postJSON("/ui/api/skill-review", { slug: b.dataset.slug, status: b.dataset.status });
  if (ok) location.reload();
  else { $("#skill-error").textContent = errText(data, status); b.disabled = false; }
});
