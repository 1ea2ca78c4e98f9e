// The groups view: filters, sort, cards side by side.
// Plain browser JavaScript inside the viewer's one function (see ../viewer.ts).
export const GROUPS = `
  // ----- groups view: filters, sort, cards
  var stepSel = $("step-select");
  function stepLabel(s) { return (s.run !== undefined ? s.run + " \u00b7 " : "") + s.split + " step " + s.step; }
  // The step, tool and scenario lists; called again when a live page gets new steps.
  function fillGroupControls() {
    stepSel.textContent = "";
    idx.steps.forEach(function (s, i) {
      var o = el("option", null, clip(stepLabel(s), 200) + "  (" + s.n + " trajectories, " + s.count + " groups" + (s.splits ? ", " + s.splits + " token lineage splits" : "") + (s.dup ? ", " + s.dup + " prefix tokens repeated across histories" : "") + ")");
      o.value = String(i);
      stepSel.appendChild(o);
    });
    stepSel.value = String(state.step);
    var tool = $("f-tool"), chosen = tool.value;
    while (tool.options.length > 1) tool.remove(1);
    idx.toolNames.forEach(function (n, i) { var o = el("option", null, clip(n, 200)); o.value = String(i); tool.appendChild(o); });
    tool.value = chosen;
    var scenarioNames = {};
    idx.groups.forEach(function (g) { scenarioNames[g.scenario] = true; });
    $("scenario-list").textContent = "";
    Object.keys(scenarioNames).slice(0, 500).forEach(function (n) { var o = el("option"); o.value = n.slice(0, 200); $("scenario-list").appendChild(o); });
  }
  fillGroupControls();

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
    if (isEval(g)) nums.appendChild(el("span", "zero", "evaluated"));
    else nums.appendChild(el("span", signCls(a), "adv " + (a !== null && a > 0 ? "+" : "") + num(a, 2)));
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
      var box = el("div", "group" + (g.signal && g.trained ? "" : " nosignal"));
      box.setAttribute("data-group", String(m.g));
      var head = el("div", "group-head");
      head.appendChild(el("span", "scenario", g.scenario));
      head.appendChild(el("span", "meta", g.n + " trajectories · mean reward " + num(g.mean)));
      if (isEval(g)) { var ev = el("span", "flag eval", "evaluated"); ev.title = "a group of the " + idx.steps[g.s].split + " split: sampled and scored, never trained on (no advantage)"; head.appendChild(ev); }
      else if (!g.signal) { var f = el("span", "flag", "no signal"); f.title = "every reward of this group is the same: every advantage is 0 and the trainer learns nothing from it"; head.appendChild(f); }
      if (g.skip !== undefined) { var nt = el("span", "flag skip", "not trained"); nt.title = clip(g.skip, 400) + ": logged with its step (its rewards count in the step's mean), not sent to the trainer"; head.appendChild(nt); }
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

`;
