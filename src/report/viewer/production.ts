// The Production view: trajectories recorded in production, grouped by
// session, each with its reward, eligibility, feedback and (opened) its
// conversation, drawn with the trajectory view's own functions.
// Plain browser JavaScript inside the viewer's one function (see ../viewer.ts).
export const PRODUCTION = `
  // ----- production view
  var prod = null, prodChunks = new Map();
  function readProduction(doc) {
    var node = doc.getElementById("production-index");
    prod = node ? JSON.parse(node.textContent) : null;
    prodChunks.clear();
  }
  readProduction(document);
  function prodTraj(i) {
    var c = Math.floor(i / idx.chunkSize), list = prodChunks.get(c);
    if (!list) {
      var node = source.getElementById("prod-chunk-" + c);
      list = node ? JSON.parse(node.textContent) : [];
      prodChunks.set(c, list);
      if (prodChunks.size > 16) prodChunks.delete(prodChunks.keys().next().value);
    }
    return list[i % idx.chunkSize] || null;
  }
  var PROD_TESTS = {
    "": function () { return true; },
    eligible: function (p) { return p.eligible === true; },
    ineligible: function (p) { return p.eligible === false; },
    rewarded: function (p) { return p.reward !== null; },
    unrewarded: function (p) { return p.reward === null; },
    interrupted: function (p) { return p.interrupted; },
    replayed: function (p) { return (p.replays || []).length > 0; },
    infra: function (p) { return !!p.infraFailure; }
  };
  function prodText(p) {
    var parts = [p.id, p.session || "", p.model || ""];
    p.feedback.forEach(function (f) { if (typeof f.comment === "string") parts.push(f.comment); if (typeof f.source === "string") parts.push(f.source); });
    return parts.join("\\n").toLowerCase();
  }
  function eligibility(p) {
    if (p.eligible === true) return { cls: "ok", text: "eligible", title: "may be trained on: it has a reward, or a feedback said so" };
    if (p.eligible === false) return { cls: "err", text: "not eligible", title: "a feedback said it must not be trained on" };
    return { cls: "", text: "undecided", title: "no reward yet and no feedback saying: not trained on until it has one" };
  }
  function flag(cls, text, title) { var f = el("span", "flag" + (cls ? " " + cls : ""), text); if (title) f.title = title; return f; }
  function rewardText(r) { return r === null || r === undefined ? "no reward" : "reward " + num(r); }
  function prodCard(i) {
    var p = prod[i], e = eligibility(p);
    var d = el("details", "ptraj");
    d.setAttribute("data-id", p.id);
    d.setAttribute("data-eligible", String(p.eligible));
    var s = el("summary");
    s.appendChild(el("code", "pid", p.id));
    s.appendChild(el("span", "preward " + signCls(p.reward), rewardText(p.reward)));
    s.appendChild(flag(e.cls, e.text, e.title));
    if (p.interrupted) s.appendChild(flag("err", "interrupted", "a call was cut by the process stopping; kept as far as it got (see its logs)"));
    if (p.status === "open") s.appendChild(flag("", "open", "its session has not ended"));
    if (p.infraFailure) s.appendChild(flag("err", "infra failure", "the infrastructure failed during it (" + p.infraFailure + "): counted, never trained on as a low reward"));
    if ((p.replays || []).length) s.appendChild(flag("", "replayed \u00d7" + p.replays.length, "the run trained groups sampled again from its state; open it to see them beside it"));
    s.appendChild(el("span", "meta", clip(p.model || "model not recorded", 200) + " \\u00b7 " + p.calls + " call" + (p.calls === 1 ? "" : "s") + " \\u00b7 " + p.feedback.length + " feedback \\u00b7 " + p.updated));
    d.appendChild(s);
    d.addEventListener("toggle", function () {
      if (!d.open || d.getAttribute("data-drawn")) return;
      d.setAttribute("data-drawn", "1");
      try { drawProdBody(d, i); } catch (err) { d.appendChild(el("p", "meta", "This trajectory cannot be drawn: " + err.message)); }
    });
    return d;
  }
  function drawFeedback(f) {
    var row = el("div", "fb");
    row.setAttribute("data-n", String(f.n));
    var head = el("div", "fb-head");
    head.appendChild(el("span", "meta", "#" + f.n + " \\u00b7 " + f.created_at + (typeof f.source === "string" ? " \\u00b7 from " + f.source : "")));
    if (typeof f.reward === "number") head.appendChild(el("span", "preward " + signCls(f.reward), rewardText(f.reward)));
    if (typeof f.eligible === "boolean") head.appendChild(flag(f.eligible ? "ok" : "err", f.eligible ? "eligible" : "not eligible"));
    row.appendChild(head);
    if (isPlain(f.metrics) && Object.keys(f.metrics).length) row.appendChild(el("div", "meta fb-metrics", "metrics: " + Object.keys(f.metrics).map(function (k) { return k + " = " + String(f.metrics[k]); }).join(", ")));
    if (Array.isArray(f.turns) && f.turns.length) row.appendChild(el("div", "meta", "per call: " + f.turns.map(function (t) { return "call " + t.call + " = " + t.reward; }).join(", ")));
    if (typeof f.comment === "string") row.appendChild(el("div", "text comment", f.comment));
    return row;
  }
  function drawProdBody(d, i) {
    var p = prod[i], e = eligibility(p);
    d.appendChild(kv({ trajectory: p.id, session: p.session === null ? "none" : p.session, model: p.model === null ? "not recorded" : p.model, status: p.status, "first stored": p.created, "last written": p.updated, calls: p.calls, reward: p.reward === null ? "none yet" : p.reward, "for training": e.text + " (" + e.title + ")", interrupted: p.interrupted ? "yes: a call was cut (see the logs below)" : "no" }));
    var fb = el("div", "feedback");
    fb.appendChild(el("h3", null, "Feedback (" + p.feedback.length + ")"));
    if (!p.feedback.length) fb.appendChild(el("p", "meta", "No feedback yet."));
    p.feedback.forEach(function (f) { fb.appendChild(drawFeedback(f)); });
    d.appendChild(fb);
    var t = prodTraj(i);
    if (!t) { d.appendChild(el("p", "meta", "Its conversation is not in this page.")); return; }
    curBadge = { text: "sampled", title: "a Choice the model answered in production; " + e.text + " for training" };
    var replays = p.replays || [], into = d;
    if (replays.length) {
      // The state on the left, the groups replayed from it on the right.
      var pair = el("div", "replay-pair"), state = el("div", "replay-state");
      state.appendChild(el("h3", null, "The recorded state"));
      pair.appendChild(state);
      pair.appendChild(drawReplays(replays));
      d.appendChild(pair);
      into = state;
    }
    try {
      t.histories.forEach(function (h) { into.appendChild(drawHistory(h)); });
    } finally { curBadge = null; }
    if (t.metrics !== undefined && !(isPlain(t.metrics) && !Object.keys(t.metrics).length)) d.appendChild(section("Metrics", t.metrics));
    if (t.logs !== undefined && !(Array.isArray(t.logs) && !t.logs.length)) d.appendChild(section("Logs", t.logs));
    if (t.metadata !== undefined && !(isPlain(t.metadata) && !Object.keys(t.metadata).length)) d.appendChild(section("Metadata", t.metadata));
  }
  function drawReplays(replays) {
    var box = el("div", "replays");
    box.appendChild(el("h3", null, "Replayed from this state (" + replays.length + " group" + (replays.length === 1 ? "" : "s") + ")"));
    replays.forEach(function (r) {
      var g = el("div", "replay");
      g.setAttribute("data-step", String(r.step));
      var healthy = r.samples.filter(function (x) { return !x.infraFailure && x.reward !== null; });
      var mean = healthy.length ? healthy.reduce(function (a, x) { return a + x.reward; }, 0) / healthy.length : null;
      g.appendChild(el("div", "meta", (r.run ? r.run + " \u00b7 " : "") + "step " + r.step + " \u00b7 " + r.split + " \u00b7 " + r.samples.length + " answers" + (mean === null ? "" : " \u00b7 mean reward " + num(mean))));
      var list = el("ol", "replay-samples");
      r.samples.forEach(function (x) {
        var li = el("li", "replay-sample");
        li.appendChild(el("span", "preward " + signCls(x.reward), x.reward === null ? "no reward" : num(x.reward)));
        if (x.infraFailure) li.appendChild(flag("err", "infra failure", "left out of the group's statistics and of training (" + x.infraFailure + ")"));
        li.appendChild(el("span", "text", " " + clip(x.text, 400)));
        list.appendChild(li);
      });
      g.appendChild(list);
      box.appendChild(g);
    });
    return box;
  }
  function drawProduction() {
    var root = $("production");
    if (!root || !prod) return;
    var sel = $("p-filter"), test = PROD_TESTS[sel.value] || PROD_TESTS[""];
    Array.prototype.forEach.call(sel.options, function (o) {
      var n = prod.filter(PROD_TESTS[o.value] || PROD_TESTS[""]).length;
      o.textContent = o.textContent.replace(/ \\(\\d+\\)$/, "") + " (" + n + ")";
    });
    var q = $("p-text").value.trim().toLowerCase();
    var open = {};
    root.querySelectorAll("details.ptraj[open]").forEach(function (d) { open[d.getAttribute("data-id")] = true; });
    root.textContent = "";
    var sessions = new Map(), n = 0;
    prod.forEach(function (p, i) {
      if (!test(p) || (q && prodText(p).indexOf(q) < 0)) return;
      n += 1;
      var key = p.session === null ? "\\u0000" : p.session;
      if (!sessions.has(key)) sessions.set(key, []);
      sessions.get(key).push(i);
    });
    $("p-count").textContent = prod.length ? n + " of " + prod.length + " production trajectories, in " + sessions.size + " session" + (sessions.size === 1 ? "" : "s") : "";
    if (!prod.length) { root.appendChild(el("p", "meta", "The store holds no trajectory yet.")); return; }
    sessions.forEach(function (list, key) {
      var box = el("section", "psession");
      var h = el("h3", "psession-head", key === "\\u0000" ? "no session" : "session " + clip(key, 200));
      var rewarded = list.filter(function (i) { return prod[i].reward !== null; }).length;
      h.appendChild(el("span", "meta", " \\u00b7 " + list.length + " trajector" + (list.length === 1 ? "y" : "ies") + ", " + rewarded + " rewarded"));
      box.setAttribute("data-session", key === "\\u0000" ? "" : key);
      box.appendChild(h);
      list.forEach(function (i) { var card = prodCard(i); box.appendChild(card); if (open[prod[i].id]) card.open = true; });
      root.appendChild(box);
    });
  }
  /** Opens one production trajectory by its id (the address #production/ID). */
  function openProduction(id) {
    if (!prod || !id) return;
    var cards = $("production").querySelectorAll("details.ptraj");
    for (var k = 0; k < cards.length; k++) if (cards[k].getAttribute("data-id") === id) { cards[k].open = true; cards[k].scrollIntoView({ block: "start" }); return; }
  }
  if (prod) {
    $("p-filter").addEventListener("change", drawProduction);
    $("p-text").addEventListener("input", drawProduction);
    drawProduction();
  }

`;
