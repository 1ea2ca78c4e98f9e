// One self-contained HTML page: no network, inline style, SVG and script.
// The page is produced in parts so a large run streams to disk.
import { escapeHtml, rewardChart, seriesName, splitColors } from "./chart.js";
import { checkReportRun } from "./check-run.js";
import { preparePage, scriptJson } from "./prepare.js";
import { prepareProduction } from "./production.js";
import { infraFailuresPerStep } from "./production-replays.js";
import { type ReportRun, stepStats } from "./run.js";
import { SCRIPT, STYLE } from "./viewer.js";
import { productionSection } from "./views/production.js";
import { trainingSection } from "./views/training.js";

/** Options of the page {@link renderReport} draws. */
export interface ReportPageOptions {
  /**
   * A page served by `report --serve`: it asks its server (the page's own
   * origin, nothing else) every `interval` ms whether the run changed, and
   * draws the new steps in place.
   */
  live?: { interval: number };
}

function compareSection(run: ReportRun, colors: Record<string, string>): string {
  const stats = stepStats(run).filter((s) => s.split !== "train");
  const series = [...new Set(stats.map(seriesName))];
  return `<section class="view" id="view-compare" data-view="compare" hidden>
<div class="card">
<h2>Checkpoints on the same scenarios</h2>
<div id="val-chart-box" data-live-part>${series.length ? rewardChart(stats, { id: "val-chart", splits: series, colors }) : ""}</div>
<div class="controls">
<label>Split <select id="cmp-split"></select></label>
<label>step <select id="cmp-a"></select></label>
<label>against <select id="cmp-split-b"></select></label>
<label>step <select id="cmp-b"></select></label>
</div>
<div id="compare"></div>
</div>
</section>`;
}

/**
 * The page in parts, in order; joined they are the whole HTML file.
 *
 * @example
 * for (const part of reportParts(run)) stream.write(part);
 */
export function* reportParts(run: ReportRun, options: ReportPageOptions = {}): Generator<string> {
  checkReportRun("reportParts(run)", run);
  const { index, chunks } = preparePage(run);
  if (options.live) index.live = { interval: options.live.interval };
  const trajectories = index.reward.length;
  const production = run.production
    ? prepareProduction(run.production, scriptJson, run.steps)
    : undefined;
  // One colour per series (split, or run and split) and per run, the same in every chart.
  const byTrain = (a: string, b: string) =>
    a === "train" ? -1 : b === "train" ? 1 : a.localeCompare(b);
  const splits = [...new Set(run.steps.map((s) => s.split))].sort(byTrain);
  const names =
    index.runs.length > 0
      ? index.runs.flatMap((r) => splits.map((split) => seriesName({ run: r, split })))
      : splits;
  const colors = { ...splitColors(index.runs), ...splitColors(names) };
  const scale = [0, 0.25, 0.5, 0.75, 1]
    .map(
      (p) =>
        `<span style="background:hsl(${Math.round(120 * p)}, 75%, ${92 - 22 * (1 - p)}%)" title="p ${p}"></span>`,
    )
    .join("");
  const empty =
    trajectories === 0 && !run.training?.length && !run.summaries?.length && !production
      ? `<section class="card empty" id="empty"><h2>Nothing logged</h2><p>This run holds no trajectory: no training job and no logged split${run.subtitle ? ` (${escapeHtml(run.subtitle)})` : ""}. ${options.live ? "This page follows the run: the first logged step appears here without a reload." : "Train or log groups first, or check the model and data directory."}</p></section>`
      : "";
  yield `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>${escapeHtml(index.title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<header>
<h1>${escapeHtml(index.title)}</h1>
<p class="sub" id="sub" data-live-part>${options.live ? '<span id="live" class="live" title="this page follows the run: new steps appear as they are logged">live</span> ' : ""}${index.subtitle ? `${escapeHtml(index.subtitle)} · ` : ""}${index.steps.length} logged steps · ${trajectories} trajectories · ${index.groups.length} groups${production ? ` · ${production.rows.length} production trajectories` : ""}</p>
<nav id="tabs" role="tablist">
<a href="#training" data-view="training" role="tab">Training <kbd>1</kbd></a>
<a href="#groups" data-view="groups" role="tab">Groups <kbd>2</kbd></a>
<a href="#trajectory" data-view="trajectory" role="tab">Trajectory <kbd>3</kbd></a>
<a href="#compare" data-view="compare" role="tab">Checkpoints <kbd>4</kbd></a>
${production ? '<a href="#production" data-view="production" role="tab">Production <kbd>5</kbd></a>\n' : ""}</nav>
</header>
<div id="empty-box" data-live-part>${empty}</div>
${trainingSection(run, index, colors)}
<section class="view" id="view-groups" data-view="groups" hidden>
<div class="card">
<div class="controls" id="filters">
<label>Step <select id="step-select"></select></label>
<label>Scenario <input id="f-scenario" type="search" placeholder="any" list="scenario-list"></label>
<datalist id="scenario-list"></datalist>
<label>Reward <input id="f-min" type="number" step="any" placeholder="min" class="num"> – <input id="f-max" type="number" step="any" placeholder="max" class="num"></label>
<label>Tool <select id="f-tool"><option value="">any</option></select></label>
<label>Text <input id="f-text" type="search" placeholder="search messages  /"></label>
<label><input id="f-signal" type="checkbox"> with signal only</label>
<label>Sort <select id="f-sort"><option value="order">as logged</option><option value="reward-desc">reward ↓</option><option value="reward-asc">reward ↑</option><option value="adv-desc">advantage ↓</option><option value="adv-asc">advantage ↑</option><option value="len-desc">length ↓</option><option value="len-asc">length ↑</option></select></label>
</div>
<p class="meta" id="match-count"></p>
<div id="groups"></div>
<p class="meta">Keys: <kbd>j</kbd>/<kbd>k</kbd> next / previous trajectory, <kbd>Enter</kbd> open it, <kbd>/</kbd> search, <kbd>1</kbd>–<kbd>4</kbd> views, <kbd>Esc</kbd> back to the groups.</p>
</div>
</section>
<section class="view" id="view-trajectory" data-view="trajectory" hidden>
<div class="card">
<div class="controls">
<button id="prev" type="button" title="previous (k)">◀ previous</button><button id="next" type="button" title="next (j)">next ▶</button>
<span id="traj-where" class="meta"></span>
</div>
<p class="meta"><span class="badge">trained</span> a Choice the trainer learns from (in the history it belongs to); <span class="badge eval">evaluated</span> a Choice of an evaluation split (or of a group left out of training): sampled, never trained on; other messages are context.
Sampled tokens are shaded by their probability, from improbable<span class="legend-scale">${scale}</span> to certain; hover one for its probability and the alternatives.</p>
<div id="trajectory"></div>
</div>
</section>
${compareSection(run, colors)}
${production ? productionSection(infraFailuresPerStep(run.production ?? [], run.steps)) : ""}
</main>
<script type="application/json" id="report-index">${scriptJson(index)}</script>
`;
  let c = 0;
  for (const chunk of chunks()) {
    yield `<script type="application/json" id="chunk-${c}">${chunk}</script>\n`;
    c += 1;
  }
  if (production) {
    yield `<script type="application/json" id="production-index">${scriptJson(production.rows)}</script>\n`;
    c = 0;
    for (const chunk of production.chunks()) {
      yield `<script type="application/json" id="prod-chunk-${c}">${chunk}</script>\n`;
      c += 1;
    }
  }
  yield `<script>${SCRIPT}</script>
</body>
</html>
`;
}

/**
 * Renders a run as one self-contained HTML page: the reward and the training
 * metrics per step, each group's trajectories side by side with their
 * rewards and advantages, every trajectory with its sampled tokens shaded by
 * probability, checkpoints compared on the same scenarios, and (with
 * `run.production`) production trajectories by session with their feedback.
 *
 * @example
 * const html = renderReport({ title: "my run", steps: [{ step: 0, split: "train", groups }] });
 */
export function renderReport(run: ReportRun, options: ReportPageOptions = {}): string {
  checkReportRun("renderReport(run)", run);
  let html = "";
  for (const part of reportParts(run, options)) html += part;
  return html;
}
