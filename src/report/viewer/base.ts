// The viewer's helpers: the index, chunks parsed on demand, DOM and number helpers.
// Plain browser JavaScript inside the viewer's one function (see ../viewer.ts).
export const BASE = `
  var idx = JSON.parse(document.getElementById("report-index").textContent);
  var $ = function (id) { return document.getElementById(id); };
  // Where the chunks are read from: this page, or the newer copy a live page fetched.
  var source = document;
  var chunks = new Map();
  function chunk(c) {
    var hit = chunks.get(c);
    if (hit) return hit;
    var node = source.getElementById("chunk-" + c);
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
    if (text !== undefined && text !== null) setText(e, String(text));
    return e;
  }
  // Laying out one unbroken string costs the browser about a second per MB:
  // text past CAP characters is drawn only when asked for.
  var CAP = 20000;
  function clip(s, n) { s = String(s); n = n || CAP; return s.length > n ? s.slice(0, n) + "\u2026 (" + (s.length - n) + " more characters)" : s; }
  function setText(e, s) {
    if (s.length <= CAP) { e.textContent = s; return; }
    if (e.tagName === "OPTION" || e.tagName === "SPAN" && !e.classList.contains("text")) { e.textContent = clip(s); return; }
    e.textContent = s.slice(0, CAP);
    var more = document.createElement("button");
    more.type = "button";
    more.className = "more-text";
    more.textContent = "\u2026 show the other " + (s.length - CAP) + " characters";
    more.addEventListener("click", function (ev) { ev.stopPropagation(); e.textContent = s; });
    e.appendChild(more);
  }
  /** A group of an evaluation split: sampled and scored, never trained on. */
  function isEval(g) { var s = idx.steps[g.s]; return !!s && s.split !== "train"; }
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
      if (v !== null && typeof v === "object") dd.appendChild(raw(v)); else setText(dd, typeof v === "number" ? (Number.isInteger(v) ? String(v) : num(v, 4)) : String(v));
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

`;
