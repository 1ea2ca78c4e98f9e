// Live mode: a page served by `report --serve` asks its own server (nothing
// else) whether the run changed, and when it did, fetches the page again and
// swaps in the new index, chunks and server-drawn parts, keeping the view,
// the filters and the chosen step (a reader on the newest step follows it).
// Plain browser JavaScript inside the viewer's one function (see ../viewer.ts).
export const LIVE = `
  // ----- live: follow the run
  function liveUpdate(doc) {
    var fresh = doc.getElementById("report-index");
    if (!fresh) return;
    var followLast = state.step >= idx.steps.length - 1;
    idx = JSON.parse(fresh.textContent);
    source = doc;
    chunks.clear();
    document.querySelectorAll("[data-live-part]").forEach(function (part) {
      var next = part.id && doc.getElementById(part.id);
      if (next) part.replaceWith(document.importNode(next, true));
    });
    if (followLast) state.step = Math.max(0, idx.steps.length - 1);
    fillGroupControls();
    applyFilters();
    readProduction(doc);
    drawProduction();
    fillCmpSteps(!fillCmpSplits());
    show(state.view);
    document.body.setAttribute("data-live-steps", String(idx.steps.length));
  }
  function livePoll() {
    var mark = $("live");
    fetch("version", { cache: "no-store" })
      .then(function (r) { if (!r.ok) throw new Error("HTTP " + r.status); return r.json(); })
      .then(function (v) {
        if (v.version === idx.live.version) return null;
        return fetch("./", { cache: "no-store" }).then(function (r) { return r.text(); }).then(function (html) {
          liveUpdate(new DOMParser().parseFromString(html, "text/html"));
        });
      })
      .then(function () {
        mark = $("live");
        if (mark) { mark.textContent = "live"; mark.title = "following the run; last checked " + new Date().toLocaleTimeString(); mark.classList.remove("off"); }
      }, function (e) {
        mark = $("live");
        if (mark) { mark.textContent = "live: server not answering"; mark.title = String(e && e.message || e); mark.classList.add("off"); }
      })
      .then(function () { setTimeout(livePoll, idx.live.interval); });
  }
  if (idx.live) {
    document.body.setAttribute("data-live-steps", String(idx.steps.length));
    setTimeout(livePoll, idx.live.interval);
  }
`;
