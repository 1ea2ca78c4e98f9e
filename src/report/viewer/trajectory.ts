// The trajectory view: every history, tokens shaded by probability.
// Plain browser JavaScript inside the viewer's one function (see ../viewer.ts).
export const TRAJECTORY = `
  // ----- trajectory view
  // Whether the trajectory shown was trained on, and why not.
  var curTrained = true, curWhy = "";
  // Set while a production trajectory is drawn: its Choices' badge ({ text, title }).
  var curBadge = null;
  function drawTokens(box, m) {
    var tk = m.tok;
    if (tk && (tk.mode === "exact" || tk.mode === "order")) {
      var text = el("div", "text");
      // Tokens are drawn up to CAP characters; the rest when asked for.
      var drawFrom = function (from) {
        var chars = 0, n = from;
        for (; n < tk.tokens.length && chars < CAP; n++) {
          var t = tk.tokens[n];
          var isEnd = tk.extra && n === tk.tokens.length - 1;
          var span = el("span", "tok" + (isEnd ? " end" : ""), isEnd ? "\\u23ce" : t[0]);
          chars += isEnd ? 1 : Math.min(CAP, String(t[0]).length);
          span.style.background = shade(t[1]);
          span.title = (isEnd ? "end of turn\\n" : "") + clip(tokenTitle(t), 2000);
          text.appendChild(span);
        }
        if (n < tk.tokens.length) {
          var rest = 0;
          for (var r = n; r < tk.tokens.length; r++) rest += String(tk.tokens[r][0]).length;
          var more = el("button", "more-text", "\\u2026 show the other " + (tk.tokens.length - n) + " tokens (" + rest + " characters)");
          more.type = "button";
          more.addEventListener("click", function () { more.remove(); drawFrom(n); });
          text.appendChild(more);
        }
      };
      drawFrom(0);
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
    if (tk.tokens.length > 5000) strip.appendChild(el("div", "meta", "the first 5000 of " + tk.tokens.length + " tokens:"));
    tk.tokens.slice(0, 5000).forEach(function (t) {
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
    var box = el("div", "msg" + (m.k === "c" ? (curBadge ? " sampled" : curTrained ? " trained" : " evaluated") : ""));
    box.setAttribute("data-role", m.role);
    if (m.k === "c" && curBadge) { var pb = el("span", "badge eval", curBadge.text); pb.title = curBadge.title; box.appendChild(pb); }
    else if (m.k === "c" && curTrained) { var badge = el("span", "badge", "trained"); badge.title = "a Choice the trainer learns from, in " + where; box.appendChild(badge); }
    else if (m.k === "c") { var evb = el("span", "badge eval", "evaluated"); evb.title = "a Choice sampled by the policy and scored, never trained on (" + curWhy + ")"; box.appendChild(evb); }
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
    sec.appendChild(el("h3", null, h.label + " \\u00b7 " + h.items.length + " messages \\u00b7 " + trained + (curBadge ? " " + curBadge.text : curTrained ? " trained" : " evaluated") + " Choice" + (trained === 1 ? "" : "s")));
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
    $("traj-where").textContent = stepLabel(s) + " \\u00b7 " + clip(g.scenario, 2000) + " \\u00b7 trajectory " + (i - g.first + 1) + " of " + g.n + (pos >= 0 ? " \\u00b7 " + (pos + 1) + " of " + state.list.length + " matching" : "");
    var t = null;
    try { t = traj(i); } catch (e) { root.appendChild(el("p", "meta", "This trajectory's data cannot be read: " + e.message)); return; }
    if (!t) { root.appendChild(el("p", "meta", "No trajectory logged.")); return; }
    var head = el("div", "card");
    head.id = "traj-head";
    var a = idx.advantage[i];
    curTrained = g.trained;
    curWhy = isEval(g) ? "the " + s.split + " split is evaluated" : g.skip !== undefined ? "its group was " + g.skip : "";
    var summary = { reward: typeof t.reward === "number" ? t.reward : JSON.stringify(t.reward), advantage: isEval(g) ? "none (evaluated, never trained)" : a === null ? "n/a" : a, "sampled tokens": idx.tokens[i], turns: idx.turns[i], group: clip(g.scenario, 2000) + (isEval(g) ? "" : g.skip !== undefined ? " (not trained: " + g.skip + ")" : g.signal ? "" : " (no signal: every reward equal)") };
    head.appendChild(kv(summary));
    root.appendChild(head);
    t.histories.forEach(function (h) {
      try { root.appendChild(drawHistory(h)); } catch (e) { root.appendChild(el("div", "meta", h.label + " cannot be drawn (" + e.message + "):")); root.appendChild(raw(h)); }
    });
    if (t.metadata !== undefined && !(isPlain(t.metadata) && !Object.keys(t.metadata).length)) root.appendChild(section("Metadata", t.metadata));
    if (t.metrics !== undefined && !(isPlain(t.metrics) && !Object.keys(t.metrics).length)) root.appendChild(section("Metrics", t.metrics));
    if (t.splits) root.appendChild(section("Where a history split (its prompt departed from the tokens sampled before)", t.splits));
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

`;
