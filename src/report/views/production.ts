// The Production view's frame, drawn when the page is built: its filters and
// a legend. The trajectories (and the filters' counts) are drawn in the page
// from the production index, as text (see ../viewer/production.ts).

import { escapeHtml } from "../chart.js";
import type { InfraStepRow } from "../production-replays.js";

/** Infrastructure failures per step: served in production, and trained at the step. */
function infraTable(rows: readonly InfraStepRow[]): string {
  if (rows.length === 0) return "";
  const cell = (n: number, of: number) => (of === 0 ? "—" : `${n} of ${of}`);
  const body = rows
    .map(
      (r) =>
        `<tr data-step="${r.step}"><td>${r.step}</td><td class="num" data-col="served">${escapeHtml(cell(r.servedFailed, r.served))}</td><td class="num" data-col="trained">${escapeHtml(cell(r.trainedFailed, r.trained))}</td></tr>`,
    )
    .join("");
  return `<div class="card" id="p-infra">
<h2>Infrastructure failures per step</h2>
<table class="steps"><thead><tr><th>step</th><th title="production trajectories whose first turn this step's checkpoint served (initial_policy_version), and how many of them the infrastructure failed">served in production</th><th title="trajectories of the run's groups at this step, and how many were left out of training as infrastructure failures">in training groups</th></tr></thead><tbody>${body}</tbody></table>
<p class="meta">A trajectory during which a call got an upstream 5xx, a transport error, a timeout or a cut stream (or that the application marked) is an infrastructure failure: kept and counted, never trained on as a low reward.</p>
</div>`;
}

export function productionSection(infra: readonly InfraStepRow[] = []): string {
  return `<section class="view" id="view-production" data-view="production" hidden>
<div class="card">
<h2>Production trajectories</h2>
<div class="controls" id="p-filters">
<label>Show <select id="p-filter"><option value="">all</option><option value="eligible">eligible for training</option><option value="ineligible">not eligible</option><option value="rewarded">rewarded</option><option value="unrewarded">unrewarded</option><option value="interrupted">with an interrupted call</option><option value="replayed">replayed</option><option value="infra">infrastructure failures</option></select></label>
<label>Text <input id="p-text" type="search" placeholder="id, session, model, comment"></label>
</div>
<p class="meta" id="p-count"></p>
<div id="production"></div>
<p class="meta"><span class="flag">replayed</span> the run trained groups sampled again from its state (open it to see them beside it); <span class="flag err">infra failure</span> the infrastructure failed during it. <span class="flag ok">eligible</span> may be trained on (it has a reward, or a feedback said so); <span class="flag err">not eligible</span> a feedback said it must not be; <span class="flag">undecided</span> no reward yet and no feedback saying. A trajectory's reward is its latest feedback's task reward (else the mean of its per-call values). Open a trajectory for its feedback and its conversation.</p>
</div>
${infraTable(infra)}
</section>`;
}
