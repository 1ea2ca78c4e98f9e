// The page's inline style and script (plain browser JavaScript, no
// dependencies). The script reads the index when the page opens and parses a
// chunk of trajectories only when it shows one of them. Recorded content only
// ever reaches the page as text (textContent, title), never as markup.

export const STYLE = `
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#111827;background:#f9fafb}
main{max-width:1240px;margin:0 auto;padding:20px}
h1{font-size:22px;margin:0 0 4px;overflow-wrap:anywhere}h2{font-size:16px;margin:0 0 10px}
.sub{color:#6b7280;margin:0 0 12px}
nav{display:flex;gap:4px;flex-wrap:wrap;border-bottom:1px solid #e5e7eb;margin-bottom:16px}
nav a{padding:6px 12px;color:#374151;text-decoration:none;border-radius:6px 6px 0 0}
nav a[aria-selected=true]{background:#fff;border:1px solid #e5e7eb;border-bottom-color:#fff;margin-bottom:-1px;color:#111827;font-weight:600}
kbd{font:11px ui-monospace,Menlo,monospace;border:1px solid #d1d5db;border-radius:3px;padding:0 3px;color:#6b7280;background:#f9fafb}
.card{background:#fff;border:1px solid #e5e7eb;border-radius:8px;padding:14px;margin-bottom:16px;min-width:0}
.empty{border-color:#f59e0b;background:#fffbeb}
svg.chart{width:100%;height:auto;max-width:860px;display:block}
svg .tick{font-size:11px;fill:#6b7280}svg .axis{font-size:12px;fill:#374151}
.legend{font-size:13px;display:flex;gap:14px;flex-wrap:wrap}
.metrics{display:grid;grid-template-columns:repeat(auto-fill,minmax(280px,1fr));gap:12px}
.metric{margin:0;min-width:0}.metric figcaption{font-weight:600;font-size:13px;color:#374151}
.scroll-x{overflow-x:auto}
table{border-collapse:collapse;font-size:13px}
td,th{padding:2px 10px;text-align:right;border-bottom:1px solid #f3f4f6;white-space:nowrap}th{color:#6b7280;font-weight:600}
.job{font-size:12px;border-radius:4px;padding:0 5px;background:#e5e7eb}.job.completed{background:#dcfce7}.job.failed{background:#fee2e2}
.controls{display:flex;gap:10px;flex-wrap:wrap;align-items:center;margin-bottom:10px}
.controls label{color:#374151;display:flex;gap:4px;align-items:center;flex-wrap:wrap}
select,button,input{font:inherit;padding:2px 6px;max-width:100%}input.num{width:5.5em}
.group{border:1px solid #e5e7eb;border-radius:8px;padding:10px;margin:10px 0}
.group.nosignal{background:#f9fafb;border-style:dashed}
.group-head{display:flex;gap:10px;flex-wrap:wrap;align-items:baseline;margin-bottom:8px}
.scenario{font-weight:600;overflow-wrap:anywhere}
.flag{font-size:11px;font-weight:600;border-radius:4px;padding:0 6px;background:#fef3c7;color:#92400e}
.flag.err{background:#fee2e2;color:#991b1b}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(230px,1fr));gap:8px}
.tcard{display:block;text-align:left;background:#fff;border:1px solid #e5e7eb;border-left:5px solid #d1d5db;border-radius:6px;padding:6px 8px;cursor:pointer;min-width:0;font:inherit;color:inherit}
.tcard:hover{border-color:#93c5fd}.tcard.cursor{outline:2px solid #2563eb}
.tcard .nums{font-size:12px;color:#374151;display:flex;gap:8px;flex-wrap:wrap}
.tcard .preview{font-size:12px;color:#4b5563;margin-top:4px;overflow-wrap:anywhere;max-height:6.2em;overflow:hidden;white-space:pre-wrap}
.pos{color:#15803d;font-weight:600}.neg{color:#b91c1c;font-weight:600}.zero{color:#6b7280}
.chip{display:inline-block;font:11px ui-monospace,Menlo,monospace;background:#eef2ff;color:#3730a3;border-radius:4px;padding:0 4px;margin:1px 2px 0 0}
.history{border-top:2px solid #e5e7eb;margin-top:14px;padding-top:8px}
.history h3{font-size:14px;margin:0 0 4px}
.msg{border:1px solid #e5e7eb;border-left:4px solid #d1d5db;border-radius:6px;padding:8px 10px;margin:8px 0;background:#fff;min-width:0}
.msg.trained{border-left-color:#16a34a;background:#f0fdf4}.msg[data-role=tool]{border-left-color:#6366f1}
.msg[data-role=system]{border-left-color:#9ca3af;background:#f9fafb}
.role{font-weight:600;font-size:12px;text-transform:uppercase;color:#6b7280;margin-right:8px}
.badge{display:inline-block;font-size:11px;font-weight:600;color:#fff;background:#16a34a;border-radius:4px;padding:0 6px;margin-right:6px}
.text{white-space:pre-wrap;overflow-wrap:anywhere;margin-top:2px}
.tok{border-radius:3px;box-decoration-break:clone;-webkit-box-decoration-break:clone}
.tok.tid{font:11px ui-monospace,Menlo,monospace;padding:0 2px;margin:1px;display:inline-block}
.tok.end{font-size:11px;color:#374151;padding:0 3px}
.tokens{margin-top:6px;line-height:1.9;overflow-wrap:anywhere;white-space:pre-wrap}
.call{font-family:ui-monospace,Menlo,monospace;font-size:13px;color:#1f2937;margin-top:6px;overflow-wrap:anywhere;white-space:pre-wrap}
.result{font-family:ui-monospace,Menlo,monospace;font-size:12px;color:#4338ca;margin:2px 0 0 16px;overflow-wrap:anywhere;white-space:pre-wrap}
pre.raw{background:#f3f4f6;border-radius:4px;padding:6px;font-size:12px;white-space:pre-wrap;overflow-wrap:anywhere;max-height:320px;overflow:auto;margin:4px 0}
.meta{color:#4b5563;font-size:13px;margin:4px 0;overflow-wrap:anywhere}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:0 12px;font-size:13px;margin:4px 0}
dl.kv dt{color:#6b7280}dl.kv dd{margin:0;overflow-wrap:anywhere}
.legend-scale{display:inline-flex;gap:2px;vertical-align:middle;margin:0 6px}
.legend-scale span{width:18px;height:12px;border-radius:2px;display:inline-block}
.cmp-row{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:10px;border-top:1px solid #e5e7eb;padding:8px 0}
.cmp-row h3{grid-column:1/-1;font-size:14px;margin:0}
.cmp-side{min-width:0}
.answer{border:1px solid #e5e7eb;border-radius:6px;padding:4px 8px;margin:4px 0;font-size:13px;white-space:pre-wrap;overflow-wrap:anywhere;cursor:pointer}
.answer:hover{border-color:#93c5fd}
@media (max-width:640px){main{padding:10px}.cmp-row{grid-template-columns:minmax(0,1fr)}td,th{padding:2px 6px}nav a{padding:6px 8px}}
`;

export const SCRIPT = `
(function () {
  "use strict";
  var idx = JSON.parse(document.getElementById("report-index").textContent);
  var $ = function (id) { return document.getElementById(id); };
  var chunks = new Map();
  function chunk(c) {
    var hit = chunks.get(c);
    if (hit) return hit;
    var node = $("chunk-" + c);
    var list = node ? JSON.parse(node.textContent) : [];
    chunks.set(c, list);
    // Keep a few parsed chunks: a long scroll must not hold the whole run in memory twice.
    if (chunks.size > 16) chunks.delete(chunks.keys().next().value);
    return list;
  }
  function traj(i) { return chunk(Math.floor(i / idx.chunkSize))[i % idx.chunkSize] || null; }
  function groupIndexOf(i) {
    var lo = 0, hi = idx.groups.length - 1;
    while (lo < hi) { var mid = (lo + hi + 1) >> 1; if (idx.groups[mid].first <= i) lo = mid; else hi = mid - 1; }
    return lo;
  }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function raw(value) {
    var s;
    try { s = JSON.stringify(value, null, 2); } catch (e) { s = String(value); }
    return el("pre", "raw", s === undefined ? String(value) : s);
  }
  function num(x, d) { return x === null || x === undefined || typeof x !== "number" ? "n/a" : Math.abs(x) >= 1e6 ? x.toExponential(2) : x.toFixed(d === undefined ? 3 : d); }
  function signCls(x) { return x === null ? "zero" : x > 1e-9 ? "pos" : x < -1e-9 ? "neg" : "zero"; }
  function shade(lp) {
    if (typeof lp !== "number") return "#e5e7eb";
    var p = Math.exp(lp);
    return "hsl(" + Math.round(120 * p) + ", 75%, " + (92 - 22 * (1 - p)) + "%)";
  }
  function tokenTitle(t) {
    var lp = t[1];
    var s = typeof lp === "number" ? "p " + Math.exp(lp).toFixed(3) + "  (logprob " + lp.toFixed(4) + ")" : "no logprob";
    if (t[2] && t[2].length) {
      s += "\\nalternatives:";
      t[2].forEach(function (a) { s += "\\n  " + (typeof a[0] === "number" ? "token_id:" + a[0] : JSON.stringify(a[0])) + "  p " + (typeof a[1] === "number" ? Math.exp(a[1]).toFixed(3) : "?"); });
    }
    return s;
  }
  function kv(obj) {
    var dl = el("dl", "kv");
    Object.keys(obj).forEach(function (k) {
      dl.appendChild(el("dt", null, k));
      var v = obj[k];
      var dd = el("dd");
      if (v !== null && typeof v === "object") dd.appendChild(raw(v)); else dd.textContent = typeof v === "number" ? (Number.isInteger(v) ? String(v) : num(v, 4)) : String(v);
      dl.appendChild(dd);
    });
    return dl;
  }
  function isPlain(o) { return o !== null && typeof o === "object" && !Array.isArray(o); }
  function section(title, value) {
    var box = el("div", "card");
    box.appendChild(el("h2", null, title));
    if (isPlain(value)) box.appendChild(kv(value));
    else if (Array.isArray(value) && value.every(function (x) { return typeof x === "string"; })) value.forEach(function (l) { box.appendChild(el("div", "text", l)); });
    else box.appendChild(raw(value));
    return box;
  }

  // ----- views and routing
  var views = ["training", "groups", "trajectory", "compare"];
  var state = { view: "training", step: Math.max(0, idx.steps.length - 1), cursor: -1, list: [], shown: 30, traj: -1 };
  function show(view) {
    state.view = view;
    document.querySelectorAll("section.view").forEach(function (s) { s.hidden = s.getAttribute("data-view") !== view; });
    document.querySelectorAll("#tabs a").forEach(function (a) { a.setAttribute("aria-selected", String(a.getAttribute("data-view") === view)); });
  }
  function route() {
    var h = location.hash.replace(/^#/, "").split("/");
    var view = views.indexOf(h[0]) >= 0 ? h[0] : "training";
    if (view === "trajectory") {
      var i = Number(h[1]);
      if (!(i >= 0 && i < idx.reward.length)) i = state.traj >= 0 ? state.traj : state.list.length ? state.list[0] : idx.reward.length ? 0 : -1;
      openTrajectory(i);
    } else if (view === "groups") {
      var s = Number(h[1]);
      if (s >= 0 && s < idx.steps.length && s !== state.step) { state.step = s; $("step-select").value = String(s); applyFilters(); }
    }
    show(view);
  }
  function go(hash) { if (location.hash === hash) route(); else location.hash = hash; }

  // ----- groups view: filters, sort, cards
  var stepSel = $("step-select");
  idx.steps.forEach(function (s, i) {
    var o = el("option", null, s.split + " step " + s.step + "  (" + s.n + " trajectories, " + s.count + " groups)");
    o.value = String(i);
    stepSel.appendChild(o);
  });
  stepSel.value = String(state.step);
  idx.toolNames.forEach(function (n, i) { var o = el("option", null, n); o.value = String(i); $("f-tool").appendChild(o); });
  var scenarioNames = {};
  idx.groups.forEach(function (g) { scenarioNames[g.scenario] = true; });
  Object.keys(scenarioNames).slice(0, 500).forEach(function (n) { var o = el("option"); o.value = n; $("scenario-list").appendChild(o); });

  function searchText(t) {
    if (!t) return "";
    var parts = [];
    t.histories.forEach(function (h) {
      h.items.forEach(function (m) {
        if (m.text) parts.push(m.text);
        if (m.reasoning) parts.push(m.reasoning);
        (m.calls || []).forEach(function (c) { parts.push(c.name + " " + c.args); });
        if (m.rawContent !== undefined || m.raw !== undefined || m.rawCalls !== undefined) { try { parts.push(JSON.stringify([m.rawContent, m.raw, m.rawCalls])); } catch (e) {} }
      });
    });
    if (Array.isArray(t.logs)) parts.push(t.logs.join("\\n"));
    try { if (t.metadata) parts.push(JSON.stringify(t.metadata)); } catch (e) {}
    return parts.join("\\n").toLowerCase();
  }
  function filters() {
    var min = $("f-min").value === "" ? null : Number($("f-min").value);
    var max = $("f-max").value === "" ? null : Number($("f-max").value);
    return {
      scenario: $("f-scenario").value.trim().toLowerCase(),
      min: min, max: max,
      tool: $("f-tool").value === "" ? -1 : Number($("f-tool").value),
      text: $("f-text").value.trim().toLowerCase(),
      signal: $("f-signal").checked,
      sort: $("f-sort").value
    };
  }
  function sortKey(f, i) {
    var r = idx.reward[i], a = idx.advantage[i], n = idx.tokens[i];
    switch (f.sort) {
      case "reward-desc": return r === null ? Infinity : -r;
      case "reward-asc": return r === null ? Infinity : r;
      case "adv-desc": return a === null ? Infinity : -a;
      case "adv-asc": return a === null ? Infinity : a;
      case "len-desc": return -n;
      case "len-asc": return n;
      default: return i;
    }
  }
  var matched = [];
  function applyFilters() {
    var f = filters();
    var s = idx.steps[state.step];
    matched = [];
    state.list = [];
    if (s) {
      for (var gi = s.first; gi < s.first + s.count; gi++) {
        var g = idx.groups[gi];
        if (f.signal && !g.signal) continue;
        if (f.scenario && g.scenario.toLowerCase().indexOf(f.scenario) < 0) continue;
        var hits = [];
        for (var i = g.first; i < g.first + g.n; i++) {
          var r = idx.reward[i];
          if (f.min !== null && !(r !== null && r >= f.min)) continue;
          if (f.max !== null && !(r !== null && r <= f.max)) continue;
          if (f.tool >= 0 && idx.tools[i].indexOf(f.tool) < 0) continue;
          if (f.text && searchText(traj(i)).indexOf(f.text) < 0) continue;
          hits.push(i);
        }
        if (!hits.length) continue;
        hits.sort(function (a, b) { return sortKey(f, a) - sortKey(f, b) || a - b; });
        matched.push({ g: gi, hits: hits });
      }
      if (f.sort !== "order") matched.sort(function (a, b) { return sortKey(f, a.hits[0]) - sortKey(f, b.hits[0]) || a.g - b.g; });
    }
    matched.forEach(function (m) { m.hits.forEach(function (i) { state.list.push(i); }); });
    state.shown = 30;
    state.cursor = state.list.length ? 0 : -1;
    drawGroups();
  }
  function preview(t) {
    if (!t) return "";
    var items = t.histories[0] ? t.histories[0].items : [];
    var calls = [], last = "";
    items.forEach(function (m) {
      if (m.role !== "assistant" && m.k !== "c") return;
      (m.calls || []).forEach(function (c) { calls.push("\\u2192 " + c.name + "(" + c.args + ")"); });
      if (m.rawCalls !== undefined) calls.push("tool_calls: " + JSON.stringify(m.rawCalls));
      if (m.text) last = m.text;
    });
    var s = calls.concat(last ? [last] : []).join("\\n");
    if (!s) return "(no assistant answer)";
    return s.length > 400 ? s.slice(0, 400) + "\\u2026" : s;
  }
  function card(i, g) {
    var b = el("button", "tcard");
    b.type = "button";
    b.setAttribute("data-i", String(i));
    var r = idx.reward[i], a = idx.advantage[i];
    b.style.borderLeftColor = typeof r === "number" ? shade(Math.log(Math.min(1, Math.max(1e-6, r)))) : "#d1d5db";
    var nums = el("div", "nums");
    nums.appendChild(el("span", null, "#" + (i - g.first + 1)));
    nums.appendChild(el("span", null, "reward " + num(r)));
    nums.appendChild(el("span", signCls(a), "adv " + (a !== null && a > 0 ? "+" : "") + num(a, 2)));
    nums.appendChild(el("span", null, idx.tokens[i] + " tok · " + idx.turns[i] + " turns"));
    b.appendChild(nums);
    var tools = idx.tools[i];
    if (tools.length) {
      var line = el("div");
      var counts = {};
      tools.forEach(function (t) { counts[t] = (counts[t] || 0) + 1; });
      Object.keys(counts).forEach(function (t) { line.appendChild(el("span", "chip", idx.toolNames[t] + (counts[t] > 1 ? " \\u00d7" + counts[t] : ""))); });
      b.appendChild(line);
    }
    var p;
    try { p = preview(traj(i)); } catch (e) { p = "(cannot preview)"; }
    b.appendChild(el("div", "preview", p));
    b.addEventListener("click", function () { go("#trajectory/" + i); });
    return b;
  }
  function drawGroups() {
    var root = $("groups");
    root.textContent = "";
    var s = idx.steps[state.step];
    $("match-count").textContent = s ? state.list.length + " of " + s.n + " trajectories match, in " + matched.length + " of " + s.count + " groups" : "Nothing logged.";
    var drawn = 0;
    for (var k = 0; k < matched.length && drawn < state.shown; k++, drawn++) {
      var m = matched[k], g = idx.groups[m.g];
      var box = el("div", "group" + (g.signal ? "" : " nosignal"));
      box.setAttribute("data-group", String(m.g));
      var head = el("div", "group-head");
      head.appendChild(el("span", "scenario", g.scenario));
      head.appendChild(el("span", "meta", g.n + " trajectories · mean reward " + num(g.mean)));
      if (!g.signal) { var f = el("span", "flag", "no signal"); f.title = "every reward of this group is the same: every advantage is 0 and the trainer learns nothing from it"; head.appendChild(f); }
      if (g.exceptions !== undefined) head.appendChild(el("span", "flag err", (Array.isArray(g.exceptions) ? g.exceptions.length : 1) + " exception(s)"));
      box.appendChild(head);
      var cards = el("div", "cards");
      m.hits.forEach(function (i) { cards.appendChild(card(i, g)); });
      box.appendChild(cards);
      if (g.exceptions !== undefined) { var d = el("details"); d.appendChild(el("summary", null, "exceptions")); d.appendChild(raw(g.exceptions)); box.appendChild(d); }
      root.appendChild(box);
    }
    if (matched.length > state.shown) {
      var more = el("button", null, "show " + Math.min(30, matched.length - state.shown) + " more groups (" + (matched.length - state.shown) + " left)");
      more.id = "more-groups";
      more.type = "button";
      more.addEventListener("click", function () { state.shown += 30; drawGroups(); });
      root.appendChild(more);
    }
    markCursor();
  }
  function markCursor() {
    document.querySelectorAll(".tcard.cursor").forEach(function (c) { c.classList.remove("cursor"); });
    var i = state.list[state.cursor];
    if (i === undefined) return;
    var c = document.querySelector('.tcard[data-i="' + i + '"]');
    if (c) { c.classList.add("cursor"); c.scrollIntoView({ block: "nearest" }); }
  }
  ["f-scenario", "f-min", "f-max", "f-text"].forEach(function (id) { $(id).addEventListener("input", debounce(applyFilters)); });
  ["f-tool", "f-signal", "f-sort"].forEach(function (id) { $(id).addEventListener("change", applyFilters); });
  stepSel.addEventListener("change", function () { state.step = Number(stepSel.value); applyFilters(); });
  function debounce(fn) { var t; return function () { clearTimeout(t); t = setTimeout(fn, 150); }; }

  // ----- trajectory view
  function drawTokens(box, m) {
    var tk = m.tok;
    if (tk && (tk.mode === "exact" || tk.mode === "order")) {
      var text = el("div", "text");
      tk.tokens.forEach(function (t, n) {
        var isEnd = tk.extra && n === tk.tokens.length - 1;
        var span = el("span", "tok" + (isEnd ? " end" : ""), isEnd ? "\\u23ce" : t[0]);
        span.style.background = shade(t[1]);
        span.title = (isEnd ? "end of turn\\n" : "") + tokenTitle(t);
        text.appendChild(span);
      });
      box.appendChild(text);
      return;
    }
    if (m.text) box.appendChild(el("div", "text", m.text));
    if (m.rawContent !== undefined) { box.appendChild(el("div", "meta", "content (not text):")); box.appendChild(raw(m.rawContent)); }
    if (!tk) return;
    if (tk.mode === "raw") { box.appendChild(el("div", "meta", "logprobs (not a list of token entries):")); box.appendChild(raw(tk.raw)); return; }
    if (!tk.tokens.length) return;
    var strip = el("div", "tokens");
    strip.setAttribute("aria-label", "sampled tokens");
    tk.tokens.forEach(function (t) {
      var id = /^token_id:\\d+$/.test(t[0]);
      var span = el("span", "tok" + (id ? " tid" : ""), id ? t[0].slice(9) : t[0]);
      span.style.background = shade(t[1]);
      span.title = (id ? t[0] + "\\n" : "") + tokenTitle(t);
      strip.appendChild(span);
    });
    box.appendChild(el("div", "meta", m.calls || m.rawCalls !== undefined ? "sampled tokens of the tool call:" : "sampled tokens (ids: the text of each is not recorded):"));
    box.appendChild(strip);
  }
  function drawItem(m, results, calls, where) {
    if (m.k === "x") { var bad = el("div", "msg"); bad.appendChild(el("div", "meta", "an item that is not a message (shown as JSON):")); bad.appendChild(raw(m.raw)); return bad; }
    var box = el("div", "msg" + (m.k === "c" ? " trained" : ""));
    box.setAttribute("data-role", m.role);
    if (m.k === "c") { var badge = el("span", "badge", "trained"); badge.title = "a Choice the trainer learns from, in " + where; box.appendChild(badge); }
    box.appendChild(el("span", "role", m.role));
    if (m.name) box.appendChild(el("span", "meta", m.name));
    if (m.callId !== undefined) {
      var c = calls[m.callId];
      box.appendChild(el("span", "meta", c ? "\\u21b3 result of " + c.name + "(" + (c.args.length > 120 ? c.args.slice(0, 120) + "\\u2026" : c.args) + ")" : "\\u21b3 result of call " + m.callId + " (issued by no earlier turn of this history)"));
    }
    if (m.reasoning) { var d = el("details"); d.appendChild(el("summary", "meta", "reasoning")); d.appendChild(el("div", "text", m.reasoning)); box.appendChild(d); }
    drawTokens(box, m);
    (m.calls || []).forEach(function (c) {
      box.appendChild(el("div", "call", "\\u2192 " + c.name + "(" + c.args + ")"));
      var r = results[c.id];
      box.appendChild(el("div", "result", r === undefined ? "\\u21d0 (no result recorded)" : "\\u21d0 " + (r.length > 600 ? r.slice(0, 600) + "\\u2026" : r)));
    });
    if (m.rawCalls !== undefined) { box.appendChild(el("div", "meta", "tool_calls (not a list of calls):")); box.appendChild(raw(m.rawCalls)); }
    if (m.finish !== undefined) box.appendChild(el("div", "meta", "finish_reason: " + m.finish));
    return box;
  }
  function drawHistory(h) {
    var sec = el("section", "history");
    var trained = h.items.filter(function (m) { return m.k === "c"; }).length;
    sec.appendChild(el("h3", null, h.label + " \\u00b7 " + h.items.length + " messages \\u00b7 " + trained + " trained Choice" + (trained === 1 ? "" : "s")));
    if (h.tools && h.tools.length) { var tl = el("div", "meta", "tools offered: "); h.tools.forEach(function (n) { tl.appendChild(el("span", "chip", n)); }); sec.appendChild(tl); }
    if (h.rawTools !== undefined) { sec.appendChild(el("div", "meta", "tools (not a list of tools):")); sec.appendChild(raw(h.rawTools)); }
    var results = {}, calls = {};
    h.items.forEach(function (m) {
      (m.calls || []).forEach(function (c) { if (c.id) calls[c.id] = c; });
      if (m.callId !== undefined) results[m.callId] = m.text !== undefined ? m.text : JSON.stringify(m.rawContent);
    });
    h.items.forEach(function (m) {
      var node;
      try { node = drawItem(m, results, calls, h.label); } catch (e) { node = el("div", "msg"); node.appendChild(el("div", "meta", "cannot draw this item (" + e.message + "); as JSON:")); node.appendChild(raw(m)); }
      sec.appendChild(node);
    });
    return sec;
  }
  function openTrajectory(i) {
    var root = $("trajectory");
    root.textContent = "";
    state.traj = i;
    var pos = state.list.indexOf(i);
    if (pos >= 0) state.cursor = pos;
    if (i < 0) { root.appendChild(el("p", "meta", "No trajectory logged.")); $("traj-where").textContent = ""; return; }
    var gi = groupIndexOf(i), g = idx.groups[gi], s = idx.steps[g.s];
    $("traj-where").textContent = s.split + " step " + s.step + " \\u00b7 " + g.scenario + " \\u00b7 trajectory " + (i - g.first + 1) + " of " + g.n + (pos >= 0 ? " \\u00b7 " + (pos + 1) + " of " + state.list.length + " matching" : "");
    var t = null;
    try { t = traj(i); } catch (e) { root.appendChild(el("p", "meta", "This trajectory's data cannot be read: " + e.message)); return; }
    if (!t) { root.appendChild(el("p", "meta", "No trajectory logged.")); return; }
    var head = el("div", "card");
    head.id = "traj-head";
    var a = idx.advantage[i];
    var summary = { reward: typeof t.reward === "number" ? t.reward : JSON.stringify(t.reward), advantage: a === null ? "n/a" : a, "sampled tokens": idx.tokens[i], turns: idx.turns[i], group: g.scenario + (g.signal ? "" : " (no signal: every reward equal)") };
    head.appendChild(kv(summary));
    root.appendChild(head);
    t.histories.forEach(function (h) {
      try { root.appendChild(drawHistory(h)); } catch (e) { root.appendChild(el("div", "meta", h.label + " cannot be drawn (" + e.message + "):")); root.appendChild(raw(h)); }
    });
    if (t.metadata !== undefined && !(isPlain(t.metadata) && !Object.keys(t.metadata).length)) root.appendChild(section("Metadata", t.metadata));
    if (t.metrics !== undefined && !(isPlain(t.metrics) && !Object.keys(t.metrics).length)) root.appendChild(section("Metrics", t.metrics));
    if (t.logs !== undefined && !(Array.isArray(t.logs) && !t.logs.length)) root.appendChild(section("Logs", t.logs));
    if (g.exceptions !== undefined) root.appendChild(section("Exceptions of the group", g.exceptions));
    if (g.logs !== undefined) root.appendChild(section("Logs of the group", g.logs));
    if (t.other) root.appendChild(section("Other fields", t.other));
  }
  function move(delta) {
    if (!state.list.length) return;
    state.cursor = Math.min(state.list.length - 1, Math.max(0, state.cursor + delta));
    if (state.view === "trajectory") go("#trajectory/" + state.list[state.cursor]);
    else markCursor();
  }
  $("prev").addEventListener("click", function () { move(-1); });
  $("next").addEventListener("click", function () { move(1); });

  // ----- checkpoints compared on the same scenarios
  var cmpSplit = $("cmp-split"), cmpA = $("cmp-a"), cmpB = $("cmp-b");
  var evalSplits = [];
  idx.steps.forEach(function (s) { if (s.split !== "train" && evalSplits.indexOf(s.split) < 0) evalSplits.push(s.split); });
  evalSplits.sort(function (a, b) { return a === "val" ? -1 : b === "val" ? 1 : a < b ? -1 : 1; });
  evalSplits.forEach(function (s) { var o = el("option", null, s); o.value = s; cmpSplit.appendChild(o); });
  function fillCmpSteps() {
    cmpA.textContent = ""; cmpB.textContent = "";
    idx.steps.forEach(function (s, i) {
      if (s.split !== cmpSplit.value) return;
      var a = el("option", null, String(s.step)); a.value = String(i); cmpA.appendChild(a);
      var b = el("option", null, String(s.step)); b.value = String(i); cmpB.appendChild(b);
    });
    if (cmpA.options.length) { cmpA.selectedIndex = 0; cmpB.selectedIndex = cmpB.options.length - 1; }
    drawCompare();
  }
  function byScenario(si) {
    var out = {};
    var s = idx.steps[si];
    if (!s) return out;
    for (var gi = s.first; gi < s.first + s.count; gi++) {
      var g = idx.groups[gi];
      (out[g.scenario] = out[g.scenario] || []).push(g);
    }
    return out;
  }
  function side(groups, label) {
    var box = el("div", "cmp-side");
    if (!groups) { box.appendChild(el("div", "meta", label + ": not evaluated")); return box; }
    var rs = [];
    groups.forEach(function (g) { for (var i = g.first; i < g.first + g.n; i++) if (idx.reward[i] !== null) rs.push(idx.reward[i]); });
    var mean = rs.length ? rs.reduce(function (a, b) { return a + b; }, 0) / rs.length : null;
    box.appendChild(el("div", "meta", label + " \\u00b7 mean reward " + num(mean)));
    groups.forEach(function (g) {
      for (var i = g.first; i < g.first + g.n; i++) {
        var a = el("div", "answer");
        a.setAttribute("data-i", String(i));
        var p;
        try { p = preview(traj(i)); } catch (e) { p = "(cannot preview)"; }
        a.textContent = "reward " + num(idx.reward[i]) + "  \\u00b7  " + p;
        a.style.borderLeft = "4px solid " + (typeof idx.reward[i] === "number" ? shade(Math.log(Math.min(1, Math.max(1e-6, idx.reward[i])))) : "#d1d5db");
        (function (j) { a.addEventListener("click", function () { go("#trajectory/" + j); }); })(i);
        box.appendChild(a);
      }
    });
    box.setAttribute("data-mean", mean === null ? "" : String(mean));
    return box;
  }
  function drawCompare() {
    var root = $("compare");
    root.textContent = "";
    if (!evalSplits.length) {
      cmpSplit.closest(".controls").hidden = true;
      root.appendChild(el("p", "meta", "No evaluation split is logged: run evaluateCheckpoints(model, { scenarios, steps, rollout }) to answer the same scenarios at chosen checkpoints (logged as the val split), then write the report again."));
      return;
    }
    var a = Number(cmpA.value), b = Number(cmpB.value);
    var A = byScenario(a), B = byScenario(b);
    var names = Object.keys(A);
    Object.keys(B).forEach(function (n) { if (names.indexOf(n) < 0) names.push(n); });
    root.appendChild(el("p", "meta", names.length + " scenarios; step " + idx.steps[a].step + " on the left, step " + idx.steps[b].step + " on the right. Click an answer to open it."));
    names.forEach(function (n) {
      var row = el("div", "cmp-row");
      row.setAttribute("data-scenario", n);
      var h = el("h3", null, n);
      row.appendChild(h);
      var left = side(A[n], "step " + idx.steps[a].step), right = side(B[n], "step " + idx.steps[b].step);
      var ma = left.getAttribute("data-mean"), mb = right.getAttribute("data-mean");
      if (ma && mb) { var d = Number(mb) - Number(ma); h.appendChild(el("span", signCls(d), "  " + (d > 0 ? "+" : "") + num(d))); }
      row.appendChild(left);
      row.appendChild(right);
      root.appendChild(row);
    });
  }
  cmpSplit.addEventListener("change", fillCmpSteps);
  cmpA.addEventListener("change", drawCompare);
  cmpB.addEventListener("change", drawCompare);

  // ----- keyboard
  document.addEventListener("keydown", function (e) {
    var tag = e.target && e.target.tagName;
    var typing = tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA";
    if (e.key === "Escape") { if (typing) e.target.blur(); go("#groups"); return; }
    if (typing || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key >= "1" && e.key <= "4") { go("#" + views[Number(e.key) - 1]); return; }
    if (e.key === "/") { e.preventDefault(); go("#groups"); $("f-text").focus(); return; }
    if (e.key === "j" || (e.key === "ArrowDown" && state.view !== "training")) { e.preventDefault(); move(1); return; }
    if (e.key === "k" || (e.key === "ArrowUp" && state.view !== "training")) { e.preventDefault(); move(-1); return; }
    if (e.key === "Enter" && state.view === "groups" && state.list[state.cursor] !== undefined) { go("#trajectory/" + state.list[state.cursor]); }
  });

  applyFilters();
  fillCmpSteps();
  window.addEventListener("hashchange", route);
  route();
})();
`;
