// stickyroute dashboard: reads the admin API of the listener that served it (same origin only).
// Signs in with the token (POST /v1/session sets an HttpOnly cookie), or with #token=... in the URL
// fragment; every change it makes carries X-Stickyroute-Request (the API's CSRF guard).
"use strict";

const REFRESH_MS = 2000;
const STREAM_ROWS = 100;
const SVG = "http://www.w3.org/2000/svg"; // an XML namespace name, not a fetch
const STATUS_COLOURS = { "1xx": "#98a2b3", "2xx": "#2e7d32", "3xx": "#5c6bc0", "4xx": "#ef8f00", "5xx": "#c62828", "0xx": "#98a2b3" };
const PALETTE = ["#2f6fed", "#2e7d32", "#ef8f00", "#8e24aa", "#00897b", "#c62828", "#6d4c41", "#d81b60",
  "#546e7a", "#7cb342", "#3949ab", "#f4511e"];
const OTHER = "(rarer)"; // the rare keys of a chart with more keys than PALETTE has colours, stacked as one
const OTHER_COLOUR = "#98a2b3";

const state = { signedIn: false, timer: null, stream: null, seen: new Set(), agents: [], channels: [], demo: true };

function $(id) { return document.getElementById(id); }

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "class") node.className = value;
    else if (key.startsWith("data-")) node.setAttribute(key, value);
    else node[key] = value;
  }
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}

class Unauthorized extends Error {}

async function api(method, path, body) {
  const init = { method, credentials: "same-origin", headers: { "x-stickyroute-request": "dashboard" } };
  if (body !== undefined) {
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const text = await response.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (e) { data = { error: "not JSON", detail: text }; }
  if (response.status === 401 && path !== "/v1/session") throw new Unauthorized((data && data.detail) || "unauthorized");
  return { status: response.status, ok: response.ok, data };
}

// ---- signing in and out -------------------------------------------------------------------------

function showLogin(message) {
  state.signedIn = false;
  clearTimeout(state.timer);
  if (state.stream) { state.stream.close(); state.stream = null; }
  $("board").hidden = true;
  $("sign-out").hidden = true;
  $("login").hidden = false;
  $("login-error").textContent = message || "";
  $("token").focus();
}

async function signIn(token) {
  const answer = await api("POST", "/v1/session", { token });
  if (answer.status !== 204) {
    showLogin((answer.data && answer.data.detail) || `sign-in failed (${answer.status})`);
    return;
  }
  await start();
}

async function start() {
  try {
    await refresh();
  } catch (error) {
    if (error instanceof Unauthorized) { showLogin(""); return; }
    throw error;
  }
  state.signedIn = true;
  $("login").hidden = true;
  $("board").hidden = false;
  $("sign-out").hidden = false;
  fillChannels();
  await startStream();
  schedule();
}

function schedule() {
  clearTimeout(state.timer);
  state.timer = setTimeout(async () => {
    try {
      await refresh();
    } catch (error) {
      if (error instanceof Unauthorized) { showLogin("signed out: " + error.message); return; }
      $("updated").textContent = "refresh failed: " + error.message;
    }
    if (state.signedIn) schedule();
  }, REFRESH_MS);
}

// ---- the periodic refresh -----------------------------------------------------------------------

async function refresh() {
  const [status, series, agents, stats, held] = await Promise.all([
    api("GET", "/v1/status"), api("GET", "/v1/series?minutes=15"), api("GET", "/v1/agents"), api("GET", "/v1/stats"),
    api("GET", "/v1/conversations?held=true&limit=50")]);
  showStatus(status.data);
  showSeries(series.data);
  state.agents = agents.data.agents;
  showAgents(state.agents);
  showHeld(held.data.conversations);
  showClassifier(stats.data.classifier, series.data);
  if (state.demo) {
    const demo = await api("GET", "/v1/demo/agents");
    state.demo = demo.status === 200;
    showDemo(state.demo ? demo.data.agents : []);
  }
  $("updated").textContent = "updated " + clock(Date.now() / 1000);
}

function clock(seconds) {
  return new Date(seconds * 1000).toLocaleTimeString([], { hour12: false });
}

function showStatus(status) {
  const pill = $("readiness");
  pill.textContent = status.status;
  pill.className = "pill " + status.status.replace(" ", "-");
  $("config-hash").textContent = status.config.hash.slice(0, 12);
  $("config-hash").title = status.config.path;
  $("config-loaded").textContent = clock(status.config.loaded_at);
  const down = status.state.when_unavailable === "refuse" ? " (down: refusing deliveries)" : " (down: memory fallback)";
  const missed = Object.values(status.state.fallbacks || {}).reduce((a, b) => a + b, 0);
  $("state-backend").textContent = status.state.backend + (status.state.up ? "" : down)
    + (missed ? ` · ${missed} not served by it` : "");
  $("state-backend").title = Object.entries(status.state.fallbacks || {}).map(([k, n]) => `${k}: ${n}`).join("\n");
  state.channels = status.channels;
}

// ---- the charts ---------------------------------------------------------------------------------

function colour(key, fixed, keys) {
  if (fixed && fixed[key]) return fixed[key];
  if (key === OTHER) return OTHER_COLOUR;
  return PALETTE[Math.max(keys.indexOf(key), 0)]; // `keys` never has more than PALETTE (groupRare): distinct
}

// The keys a chart shows: all of them when PALETTE has a colour for each; else the PALETTE.length - 1
// largest over the window (ties by name) and OTHER for the rest, so every colour of a chart is distinct
// whatever the number of keys. Returns { shown: [sorted keys], members: Map(rare key -> total) }.
function groupRare(totals, fixed) {
  const keys = [...totals.keys()].sort();
  if (fixed || keys.length <= PALETTE.length) return { shown: keys, members: new Map() };
  const ranked = [...keys].sort((a, b) => totals.get(b) - totals.get(a) || (a < b ? -1 : 1));
  const kept = new Set(ranked.slice(0, PALETTE.length - 1));
  const members = new Map(ranked.slice(PALETTE.length - 1).map((key) => [key, totals.get(key)]));
  return { shown: [...keys.filter((key) => kept.has(key)), OTHER], members };
}

function showSeries(series) {
  drawChart("requests", series, (bucket) => bucket.requests, STATUS_COLOURS);
  drawChart("decisions", series, (bucket) => bucket.decisions, null);
}

function drawChart(name, series, pick, fixed) {
  const box = $("chart-" + name);
  const slots = Math.round((series.end - series.start) / series.bucket_s);
  const totals = new Map();
  const counts = new Map();
  let total = 0;
  let peak = 0;
  for (const bucket of series.buckets) {
    const values = pick(bucket);
    const slot = Math.round((bucket.start - series.start) / series.bucket_s);
    counts.set(slot, values);
    let sum = 0;
    for (const [key, value] of Object.entries(values)) { totals.set(key, (totals.get(key) || 0) + value); sum += value; }
    total += sum;
    peak = Math.max(peak, sum);
  }
  const { shown: sorted, members } = groupRare(totals, fixed);
  if (members.size) {
    for (const [slot, values] of counts) {
      const grouped = {};
      for (const [key, value] of Object.entries(values)) {
        const into = members.has(key) ? OTHER : key;
        grouped[into] = (grouped[into] || 0) + value;
      }
      counts.set(slot, grouped);
    }
  }
  const rare = [...members].map(([key, count]) => `${key} ${count}`).join(", ");
  const width = Math.max(box.clientWidth, 300);
  const height = 150;
  const left = 34, bottom = 16, top = 6;
  const plotW = width - left - 4, plotH = height - bottom - top;
  const barW = plotW / slots;
  const scale = peak > 0 ? plotH / niceCeiling(peak) : 0;
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", `${name} over the last 15 minutes: ${total}`);
  for (const [slot, values] of counts) {
    let y = top + plotH;
    for (const key of sorted) {
      const value = values[key] || 0;
      if (!value) continue;
      const h = value * scale;
      y -= h;
      const rect = document.createElementNS(SVG, "rect");
      rect.setAttribute("x", (left + slot * barW + 0.5).toFixed(1));
      rect.setAttribute("y", y.toFixed(1));
      rect.setAttribute("width", Math.max(barW - 1, 1).toFixed(1));
      rect.setAttribute("height", Math.max(h, 0.5).toFixed(1));
      rect.setAttribute("fill", colour(key, fixed, sorted));
      rect.setAttribute("data-key", key);
      const tip = document.createElementNS(SVG, "title");
      tip.textContent = `${clock(series.start + slot * series.bucket_s)} ${key}: ${value}` + (key === OTHER ? ` (15 min: ${rare})` : "");
      rect.append(tip);
      svg.append(rect);
    }
  }
  const axis = document.createElementNS(SVG, "line");
  for (const [k, v] of Object.entries({ x1: left, x2: width - 4, y1: top + plotH, y2: top + plotH, class: "axis" })) axis.setAttribute(k, v);
  svg.append(axis);
  const ceiling = peak > 0 ? niceCeiling(peak) : 0;
  svg.append(label(left - 4, top + 8, String(ceiling), "end"), label(left - 4, top + plotH, "0", "end"));
  for (const minutes of [15, 10, 5, 0]) {
    const x = left + plotW * (1 - minutes / 15);
    svg.append(label(x, height - 3, minutes ? `-${minutes} min` : "now", minutes === 15 ? "start" : minutes ? "middle" : "end"));
  }
  box.replaceChildren(svg);
  box.setAttribute("data-total", String(total));
  box.setAttribute("data-keys", sorted.join(","));
  $(name + "-total").textContent = `${total} in 15 min`;
  $("legend-" + name).replaceChildren(...sorted.map((key) => el("li", { title: key === OTHER ? rare : key },
    el("span", { class: "swatch", style: `background:${colour(key, fixed, sorted)}` }),
    key === OTHER ? `${members.size} rarer` : key)));
}

function niceCeiling(value) {
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) if (value <= step * power) return step * power;
  return 10 * power;
}

function label(x, y, text, anchor) {
  const node = document.createElementNS(SVG, "text");
  node.setAttribute("x", x);
  node.setAttribute("y", y);
  node.setAttribute("text-anchor", anchor);
  node.textContent = text;
  return node;
}

// ---- agents, classifier, demo agents ------------------------------------------------------------

function showAgents(agents) {
  const rows = agents.map((agent) => {
    const live = Object.values(agent.live_conversations).reduce((a, b) => a + b, 0);
    const perChannel = Object.entries(agent.live_conversations).map(([c, n]) => `${c} ${n}`).join(", ");
    const demo = agent.demo ? (agent.demo.paused ? "paused" : "running") : "";
    return el("tr", { "data-agent": agent.name, "data-live": String(live) },
      el("td", {}, agent.name + (agent.hidden ? " (hidden)" : "")), el("td", {}, perChannel),
      el("td", { class: "num" }, live), el("td", { class: demo === "paused" ? "paused" : "" }, demo));
  });
  $("agents-body").replaceChildren(...rows);
  fillAgents();
}

function showHeld(conversations) {
  $("held-count").textContent = conversations.length;
  $("held-body").replaceChildren(...conversations.map((c) =>
    el("tr", { "data-agent": c.agent, "data-channel": c.channel, "data-conversation": c.conversation },
      el("td", {}, c.agent), el("td", {}, c.channel), el("td", {}, el("code", {}, c.conversation)),
      el("td", {}, clock(c.held_until)))));
}

function showClassifier(classifier, series) {
  const total = classifier.total;
  const failures = Object.values(total.failures).reduce((a, b) => a + b, 0);
  let calls = 0, tokens = 0;
  for (const bucket of series.buckets) { calls += bucket.classifier_calls; tokens += bucket.tokens; }
  $("classifier-provider").textContent = classifier.provider;
  $("classifier-calls-15").textContent = calls;
  $("classifier-tokens-15").textContent = tokens;
  $("classifier-calls").textContent = total.calls;
  $("classifier-tokens").textContent = total.prompt_tokens + total.completion_tokens;
  $("classifier-failures").textContent = failures;
}

function showDemo(agents) {
  $("demo").hidden = agents.length === 0;
  $("demo-body").replaceChildren(...agents.map((agent) => {
    const action = agent.paused ? "resume" : "pause";
    const button = el("button", { type: "button", class: "secondary", "data-action": action }, agent.paused ? "Resume" : "Pause");
    button.addEventListener("click", async () => {
      button.disabled = true;
      try {
        await api("POST", `/v1/demo/agents/${encodeURIComponent(agent.name)}/${action}`);
        await refresh();
      } catch (error) {
        if (error instanceof Unauthorized) showLogin("signed out: " + error.message);
      }
    });
    return el("tr", { "data-agent": agent.name, "data-paused": String(agent.paused) },
      el("td", {}, agent.name), el("td", { class: "mono" }, agent.address),
      el("td", { class: agent.paused ? "paused" : "" }, agent.paused ? "paused" : "running"), el("td", {}, button));
  }));
}

// ---- the decisions stream -----------------------------------------------------------------------

async function startStream() {
  if (state.stream) state.stream.close();
  const recent = await api("GET", "/v1/decisions?limit=50");
  const entries = recent.data.decisions.slice().reverse();
  for (const entry of entries) addDecision(entry, false);
  const last = entries.length ? entries[entries.length - 1].id : 0;
  const stream = new EventSource("/v1/decisions/stream" + (last ? `?after=${last}` : ""));
  state.stream = stream;
  stream.addEventListener("decision", (event) => addDecision(JSON.parse(event.data), true));
  stream.onopen = () => { $("stream-state").textContent = "live"; $("stream").setAttribute("data-live", "true"); };
  stream.onerror = () => {
    $("stream").setAttribute("data-live", "false");
    $("stream-state").textContent = stream.readyState === EventSource.CLOSED ? "closed" : "reconnecting…";
    if (stream.readyState === EventSource.CLOSED && state.signedIn) {
      api("GET", "/v1/status").catch((error) => { if (error instanceof Unauthorized) showLogin("signed out"); });
    }
  };
}

function addDecision(entry, fresh) {
  if (state.seen.has(entry.id)) return;
  state.seen.add(entry.id);
  const status = entry.status === undefined ? "" : String(entry.status);
  const reason = entry.action ? `${entry.reason} (${entry.action})` : entry.reason;
  const row = el("tr", { class: fresh ? "fresh" : "", "data-id": String(entry.id), "data-agent": entry.agent || "",
    "data-reason": entry.reason, "data-status": status, "data-conversation": entry.conversation || "" },
  el("td", {}, entry.id), el("td", {}, entry.time ? clock(entry.time) : ""), el("td", {}, entry.channel || ""),
  el("td", {}, entry.conversation || ""), el("td", {}, entry.kind || entry.method || ""),
  el("td", {}, entry.agent || "—"), el("td", {}, reason),
  el("td", { class: "num" + (status ? ` status-${status[0]}xx` : "") }, status));
  const body = $("stream-body");
  body.prepend(row);
  while (body.rows.length > STREAM_ROWS) {
    state.seen.delete(Number(body.lastElementChild.getAttribute("data-id")));
    body.lastElementChild.remove();
  }
}

// ---- the conversation form ----------------------------------------------------------------------

function fillChannels() {
  const select = $("conv-channel");
  const current = select.value;
  select.replaceChildren(...state.channels.map((c) => el("option", { value: c.name }, c.name)));
  if (current) select.value = current;
  fillAgents();
}

function fillAgents() {
  const select = $("conv-agent");
  const current = select.value;
  const channel = $("conv-channel").value;
  const reachable = state.agents.filter((a) => a.channels.includes(channel));
  select.replaceChildren(...reachable.map((a) => el("option", { value: a.name }, a.name + (a.hidden ? " (hidden)" : ""))));
  if (current && reachable.some((a) => a.name === current)) select.value = current;
}

function conversationPath(route) {
  const parts = ["conv-channel", "conv-chat", "conv-sender"].map((id) => encodeURIComponent($(id).value.trim()));
  const thread = $("conv-thread").value.trim();
  return `/v1/conversations/${parts.join("/")}${route}` + (thread ? `?thread=${encodeURIComponent(thread)}` : "");
}

async function conversationCall(method, route, body, describe) {
  if (!$("conv-chat").value.trim() || !$("conv-sender").value.trim()) {
    report("chat and sender are required", false, null);
    return;
  }
  try {
    const answer = await api(method, conversationPath(route), body);
    report(answer.ok ? describe(answer.data) : `${answer.status}: ${answer.data.detail}`, answer.ok, answer.data);
    if (answer.ok) await refresh();
  } catch (error) {
    if (error instanceof Unauthorized) showLogin("signed out: " + error.message);
    else report(error.message, false, null);
  }
}

function report(text, ok, data) {
  const line = $("conv-status");
  line.textContent = text;
  line.className = "status " + (ok ? "good" : "bad");
  $("conv-result").textContent = data ? JSON.stringify(data, null, 2) : "";
}

function routeText(route) {
  return `${route.conversation}: ${route.agent} (${route.reason || "no reason"}${route.explicit ? ", explicit" : ""})`;
}

// ---- wiring -------------------------------------------------------------------------------------

document.addEventListener("DOMContentLoaded", () => {
  $("login-form").addEventListener("submit", (event) => {
    event.preventDefault();
    signIn($("token").value);
    $("token").value = "";
  });
  $("sign-out").addEventListener("click", async () => {
    await api("DELETE", "/v1/session");
    showLogin("signed out");
  });
  $("conv-channel").addEventListener("change", fillAgents);
  $("conversation-form").addEventListener("submit", (event) => {
    event.preventDefault();
    conversationCall("GET", "", undefined, (d) => "live route " + routeText(d));
  });
  $("conv-pin").addEventListener("click", () => conversationCall("PUT", "/route",
    { agent: $("conv-agent").value, explicit: $("conv-explicit").checked }, (d) => "pinned " + routeText(d.route)));
  $("conv-reset").addEventListener("click", () => conversationCall("DELETE", "/route", undefined,
    (d) => "reset: dropped " + routeText(d.previous)));

  const fragment = location.hash.match(/^#token=(.+)$/);
  if (fragment) {
    history.replaceState(null, "", location.pathname + location.search); // the token leaves the address bar
    let token = fragment[1];
    try { token = decodeURIComponent(token); } catch (e) { /* a bare % (not an escape): the token as written */ }
    signIn(token);
  } else {
    start();
  }
});
