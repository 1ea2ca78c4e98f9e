// The Production view's frame, drawn when the page is built: its filters and
// a legend. The trajectories (and the filters' counts) are drawn in the page
// from the production index, as text (see ../viewer/production.ts).

export function productionSection(): string {
  return `<section class="view" id="view-production" data-view="production" hidden>
<div class="card">
<h2>Production trajectories</h2>
<div class="controls" id="p-filters">
<label>Show <select id="p-filter"><option value="">all</option><option value="eligible">eligible for training</option><option value="ineligible">not eligible</option><option value="rewarded">rewarded</option><option value="unrewarded">unrewarded</option><option value="interrupted">with an interrupted call</option></select></label>
<label>Text <input id="p-text" type="search" placeholder="id, session, model, comment"></label>
</div>
<p class="meta" id="p-count"></p>
<div id="production"></div>
<p class="meta"><span class="flag ok">eligible</span> may be trained on (it has a reward, or a feedback said so); <span class="flag err">not eligible</span> a feedback said it must not be; <span class="flag">undecided</span> no reward yet and no feedback saying. A trajectory's reward is its latest feedback's task reward (else the mean of its per-call values). Open a trajectory for its feedback and its conversation.</p>
</div>
</section>`;
}
