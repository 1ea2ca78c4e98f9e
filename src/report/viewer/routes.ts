// Views and routing: the address bar keeps the view and the trajectory.
// Plain browser JavaScript inside the viewer's one function (see ../viewer.ts).
export const ROUTES = `
  // ----- views and routing
  var views = ["training", "groups", "trajectory", "compare", "production"];
  var state = { view: "training", step: Math.max(0, idx.steps.length - 1), cursor: -1, list: [], shown: 30, traj: -1 };
  function show(view) {
    state.view = view;
    document.querySelectorAll("section.view").forEach(function (s) { s.hidden = s.getAttribute("data-view") !== view; });
    document.querySelectorAll("#tabs a").forEach(function (a) { a.setAttribute("aria-selected", String(a.getAttribute("data-view") === view)); });
  }
  function route() {
    var h = location.hash.replace(/^#/, "").split("/");
    // A page of production trajectories alone opens on them.
    var first = !idx.steps.length && !idx.training.length && $("view-production") ? "production" : "training";
    var view = views.indexOf(h[0]) >= 0 && $("view-" + h[0]) ? h[0] : first;
    if (view === "trajectory") {
      var i = Number(h[1]);
      if (!(i >= 0 && i < idx.reward.length)) i = state.traj >= 0 ? state.traj : state.list.length ? state.list[0] : idx.reward.length ? 0 : -1;
      openTrajectory(i);
    } else if (view === "groups") {
      var s = Number(h[1]);
      if (s >= 0 && s < idx.steps.length && s !== state.step) { state.step = s; $("step-select").value = String(s); applyFilters(); }
    }
    show(view);
    if (view === "production" && h.length > 1) openProduction(decodeURIComponent(h.slice(1).join("/")));
  }
  function go(hash) { if (location.hash === hash) route(); else location.hash = hash; }

`;
