// The compare view: two steps (of one run or two) on the same scenarios.
// Plain browser JavaScript inside the viewer's one function (see ../viewer.ts).
export const COMPARE = `
  // ----- checkpoints compared on the same scenarios
  var cmpSplit = $("cmp-split"), cmpSplitB = $("cmp-split-b"), cmpA = $("cmp-a"), cmpB = $("cmp-b");
  // A series is a split of a run ("val", or "run-a \u00b7 val" in a report of two runs).
  var evalSplits = [];
  function seriesOf(s) { return (s.run !== undefined ? s.run + " \u00b7 " : "") + s.split; }
  // The series lists; called again when a live page gets new steps.
  function fillCmpSplits() {
    var was = [cmpSplit.value, cmpSplitB.value];
    var all = [];
    idx.steps.forEach(function (s) { var k = seriesOf(s); if (all.indexOf(k) < 0) all.push(k); });
    var rank = function (k) { return /(^| \u00b7 )val$/.test(k) ? 0 : /(^| \u00b7 )train$/.test(k) ? 2 : 1; };
    evalSplits = all.filter(function (k) { return idx.runs.length > 0 || rank(k) < 2; });
    evalSplits.sort(function (a, b) { return rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0); });
    [cmpSplit, cmpSplitB].forEach(function (sel) {
      sel.textContent = "";
      evalSplits.forEach(function (k) { var o = el("option", null, clip(k, 200)); o.value = k; sel.appendChild(o); });
    });
    if (evalSplits.indexOf(was[0]) >= 0) { cmpSplit.value = was[0]; cmpSplitB.value = was[1]; return false; }
    // Two runs: the same split of each, side by side.
    if (idx.runs.length > 1 && evalSplits.length) {
      var split = evalSplits[0].split(" \u00b7 ").pop();
      var other = idx.runs[1] + " \u00b7 " + split;
      cmpSplit.value = idx.runs[0] + " \u00b7 " + split;
      if (evalSplits.indexOf(other) >= 0) cmpSplitB.value = other;
    }
    return true;
  }
  function fillStepSel(sel, series) {
    var was = sel.value;
    sel.textContent = "";
    idx.steps.forEach(function (s, i) {
      if (seriesOf(s) !== series) return;
      var o = el("option", null, String(s.step)); o.value = String(i); sel.appendChild(o);
    });
    return was;
  }
  function fillCmpSteps(keep) {
    var wasA = fillStepSel(cmpA, cmpSplit.value), wasB = fillStepSel(cmpB, cmpSplitB.value);
    var has = function (sel, v) { return Array.prototype.some.call(sel.options, function (o) { return o.value === v; }); };
    if (keep === true && has(cmpA, wasA) && has(cmpB, wasB)) { cmpA.value = wasA; cmpB.value = wasB; }
    else if (cmpA.options.length) {
      cmpA.selectedIndex = cmpSplit.value === cmpSplitB.value ? 0 : cmpA.options.length - 1;
      cmpB.selectedIndex = cmpB.options.length - 1;
    }
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
    cmpSplit.closest(".controls").hidden = !evalSplits.length;
    if (!evalSplits.length) {
      root.appendChild(el("p", "meta", "No evaluation split is logged: run evaluateCheckpoints(model, { scenarios, steps, rollout }) to answer the same scenarios at chosen checkpoints (logged as the val split), then write the report again."));
      return;
    }
    if (cmpA.value === "" || cmpB.value === "") return;
    var a = Number(cmpA.value), b = Number(cmpB.value);
    var la = stepLabelShort(a), lb = stepLabelShort(b);
    var A = byScenario(a), B = byScenario(b);
    var names = Object.keys(A);
    Object.keys(B).forEach(function (n) { if (names.indexOf(n) < 0) names.push(n); });
    root.appendChild(el("p", "meta", names.length + " scenarios; " + la + " on the left, " + lb + " on the right. Click an answer to open it."));
    names.forEach(function (n) {
      var row = el("div", "cmp-row");
      row.setAttribute("data-scenario", n.slice(0, 200));
      var h = el("h3", null, clip(n, 2000));
      row.appendChild(h);
      var left = side(A[n], la), right = side(B[n], lb);
      var ma = left.getAttribute("data-mean"), mb = right.getAttribute("data-mean");
      if (ma && mb) { var d = Number(mb) - Number(ma); h.appendChild(el("span", signCls(d), "  " + (d > 0 ? "+" : "") + num(d))); }
      row.appendChild(left);
      row.appendChild(right);
      root.appendChild(row);
    });
  }
  // "step 2", or "run-a · step 2" when the two sides are different series.
  function stepLabelShort(i) {
    var s = idx.steps[i];
    return (cmpSplit.value !== cmpSplitB.value ? seriesOf(s) + " " : "") + "step " + s.step;
  }
  cmpSplit.addEventListener("change", function () { if (idx.runs.length === 0) cmpSplitB.value = cmpSplit.value; fillCmpSteps(); });
  cmpSplitB.addEventListener("change", function () { fillCmpSteps(); });
  cmpA.addEventListener("change", drawCompare);
  cmpB.addEventListener("change", drawCompare);

`;
