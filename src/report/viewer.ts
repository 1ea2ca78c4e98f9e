// The page's inline style and the trajectory viewer's script (plain browser
// JavaScript, no dependencies): it reads the embedded JSON and draws the
// chosen trajectory, its sampled tokens shaded by probability.

export const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#111827;background:#f9fafb}
main{max-width:1000px;margin:0 auto;padding:24px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
.sub{color:#6b7280;margin:0 0 16px}
.card{background:#fff;border:1px solid #e5e7eb;border-radius:8px;padding:16px}
svg .tick{font-size:11px;fill:#6b7280}svg .axis{font-size:12px;fill:#374151}svg .legend{font-size:13px}
table{border-collapse:collapse;margin-top:12px;font-size:13px}
td,th{padding:2px 10px;text-align:right;border-bottom:1px solid #f3f4f6}th{color:#6b7280;font-weight:600}
.controls{display:flex;gap:12px;flex-wrap:wrap;align-items:center;margin-bottom:12px}
.controls label{color:#374151}select,button{font:inherit;padding:2px 6px}
.msg{border:1px solid #e5e7eb;border-left:4px solid #d1d5db;border-radius:6px;padding:8px 10px;margin:8px 0;background:#fff}
.msg.trained{border-left-color:#16a34a;background:#f0fdf4}
.role{font-weight:600;font-size:12px;text-transform:uppercase;color:#6b7280;margin-right:8px}
.badge{display:inline-block;font-size:11px;font-weight:600;color:#fff;background:#16a34a;border-radius:4px;padding:0 6px;margin-right:6px}
.text{white-space:pre-wrap}
.tokens{margin-top:4px;line-height:2}
.tok{border-radius:3px;padding:1px 3px;margin-right:1px;font-family:ui-monospace,Menlo,monospace;font-size:13px;white-space:pre}
.call{font-family:ui-monospace,Menlo,monospace;font-size:13px;color:#1f2937;margin-top:4px}
.meta{color:#4b5563;font-size:13px;margin:4px 0}
.legend-scale{display:inline-flex;gap:2px;vertical-align:middle;margin-left:6px}
.legend-scale span{width:18px;height:12px;border-radius:2px;display:inline-block}
`;

export const SCRIPT = `
(function () {
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var stepSel = document.getElementById("step-select");
  var groupSel = document.getElementById("group-select");
  var trajSel = document.getElementById("trajectory-select");
  var root = document.getElementById("trajectory");
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function option(sel, value, label) {
    var o = el("option", null, label);
    o.value = String(value);
    sel.appendChild(o);
  }
  function shade(logprob) {
    var p = Math.exp(logprob);
    return "hsl(" + Math.round(120 * p) + ", 75%, " + (92 - 22 * (1 - p)) + "%)";
  }
  function fillSteps() {
    data.steps.forEach(function (s, i) {
      var n = 0;
      s.groups.forEach(function (g) { n += g.trajectories.length; });
      option(stepSel, i, s.split + " step " + s.step + " (" + n + " trajectories)");
    });
  }
  function fillGroups() {
    groupSel.textContent = "";
    var s = data.steps[Number(stepSel.value)];
    (s ? s.groups : []).forEach(function (g, i) {
      option(groupSel, i, "group " + (i + 1) + " of " + s.groups.length);
    });
    fillTrajectories();
  }
  function fillTrajectories() {
    trajSel.textContent = "";
    var s = data.steps[Number(stepSel.value)];
    var g = s && s.groups[Number(groupSel.value)];
    (g ? g.trajectories : []).forEach(function (t, i) {
      option(trajSel, i, "#" + (i + 1) + "  reward " + Number(t.reward).toFixed(3));
    });
    draw();
  }
  function content(c) {
    if (typeof c === "string") return c;
    if (Array.isArray(c)) return c.map(function (p) { return p && p.text ? p.text : ""; }).join("");
    return c == null ? "" : JSON.stringify(c);
  }
  function drawItem(item) {
    var isChoice = item && typeof item === "object" && "finish_reason" in item && "message" in item;
    var m = isChoice ? item.message || {} : item || {};
    var box = el("div", "msg" + (isChoice ? " trained" : ""));
    box.setAttribute("data-role", String(m.role || ""));
    if (isChoice) box.appendChild(el("span", "badge", "trained"));
    box.appendChild(el("span", "role", String(m.role || (isChoice ? "assistant" : "?"))));
    var lp = isChoice && item.logprobs && Array.isArray(item.logprobs.content) ? item.logprobs.content : null;
    if (lp && lp.length) {
      var line = el("div", "tokens");
      lp.forEach(function (t) {
        var span = el("span", "tok", String(t.token));
        span.style.background = shade(Number(t.logprob));
        span.title = "logprob " + Number(t.logprob).toFixed(4) + "  (p " + Math.exp(Number(t.logprob)).toFixed(3) + ")";
        line.appendChild(span);
      });
      box.appendChild(line);
    } else if (m.content != null && content(m.content) !== "") {
      box.appendChild(el("div", "text", content(m.content)));
    }
    (m.tool_calls || []).forEach(function (c) {
      var f = c.function || {};
      box.appendChild(el("div", "call", "\\u2192 " + f.name + "(" + f.arguments + ")"));
    });
    if (isChoice) box.appendChild(el("div", "meta", "finish_reason: " + item.finish_reason));
    return box;
  }
  function draw() {
    root.textContent = "";
    var s = data.steps[Number(stepSel.value)];
    var g = s && s.groups[Number(groupSel.value)];
    var t = g && g.trajectories[Number(trajSel.value)];
    if (!t) { root.appendChild(el("p", "meta", "No trajectory logged.")); return; }
    var head = el("div", "meta", "reward " + Number(t.reward).toFixed(3));
    if (t.metadata && Object.keys(t.metadata).length) head.textContent += "   metadata " + JSON.stringify(t.metadata);
    root.appendChild(head);
    if (t.tools && t.tools.length) {
      root.appendChild(el("div", "meta", "tools: " + t.tools.map(function (x) { return x.function ? x.function.name : x.name; }).join(", ")));
    }
    (t.messages_and_choices || []).forEach(function (item) { root.appendChild(drawItem(item)); });
  }
  function move(delta) {
    var n = trajSel.options.length;
    if (!n) return;
    trajSel.value = String((Number(trajSel.value) + delta + n) % n);
    draw();
  }
  stepSel.addEventListener("change", fillGroups);
  groupSel.addEventListener("change", fillTrajectories);
  trajSel.addEventListener("change", draw);
  document.getElementById("prev").addEventListener("click", function () { move(-1); });
  document.getElementById("next").addEventListener("click", function () { move(1); });
  fillSteps();
  stepSel.value = String(Math.max(0, data.steps.length - 1));
  fillGroups();
})();
`;
