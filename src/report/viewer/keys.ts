// Keyboard shortcuts, and the start of the page.
// Plain browser JavaScript inside the viewer's one function (see ../viewer.ts).
export const KEYS = `
  // ----- keyboard
  document.addEventListener("keydown", function (e) {
    var tag = e.target && e.target.tagName;
    var typing = tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA";
    if (e.key === "Escape") { if (typing) e.target.blur(); go("#groups"); return; }
    if (typing || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key >= "1" && e.key <= "5") { var v = views[Number(e.key) - 1]; if ($("view-" + v)) go("#" + v); return; }
    if (e.key === "/") { e.preventDefault(); go("#groups"); $("f-text").focus(); return; }
    if (e.key === "j" || (e.key === "ArrowDown" && state.view !== "training")) { e.preventDefault(); move(1); return; }
    if (e.key === "k" || (e.key === "ArrowUp" && state.view !== "training")) { e.preventDefault(); move(-1); return; }
    if (e.key === "Enter" && state.view === "groups" && state.list[state.cursor] !== undefined) { go("#trajectory/" + state.list[state.cursor]); }
  });

  applyFilters();
  fillCmpSplits();
  fillCmpSteps();
  window.addEventListener("hashchange", route);
  route();
`;
