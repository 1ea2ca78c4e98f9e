// One self-contained HTML page: no network, inline style, SVG and script.
// The page is produced in parts so a large run streams to disk.
import { escapeHtml, fmt, lineChart, rewardChart, splitColors } from "./chart.js";
import { type PageIndex, preparePage, scriptJson } from "./prepare.js";
import { type ReportRun, type ReportTraining, stepStats } from "./run.js";
import { SCRIPT, STYLE } from "./viewer.js";

/** Metrics drawn first, in this order; any other numeric metric follows. */
const METRIC_ORDER = [
  "loss",
  "policy_loss",
  "entropy",
  "grad_norm",
  "kl",
  "kl_div",
  "kl_penalty",
  "clipped_fraction",
  "mean_importance_ratio",
  "importance_ratio",
  "learning_rate",
  "num_trainable_tokens",
];
/** Metrics the reward chart already shows, or counts that say nothing per step. */
const METRIC_SKIP = new Set(["reward", "reward_std_dev", "clipped_tokens", "num_trajectories"]);

function metricNames(training: readonly ReportTraining[]): string[] {
  const seen = new Set<string>();
  for (const t of training)
    for (const k of Object.keys(t.metrics)) if (!METRIC_SKIP.has(k)) seen.add(k);
  const rank = (k: string) => {
    const i = METRIC_ORDER.indexOf(k);
    return i === -1
      ? k.includes("kl")
        ? METRIC_ORDER.indexOf("kl") + 0.5
        : METRIC_ORDER.length
      : i;
  };
  return [...seen].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

function duration(job: NonNullable<ReportTraining["job"]>): string {
  const a = Date.parse(job.startedAt ?? job.createdAt ?? "");
  const b = Date.parse(job.endedAt ?? "");
  return Number.isFinite(a) && Number.isFinite(b) ? `${((b - a) / 1000).toFixed(1)} s` : "";
}

function trainingSection(run: ReportRun, index: PageIndex, colors: Record<string, string>): string {
  const stats = stepStats(run);
  const training = run.training ?? [];
  const names = metricNames(training);
  const charts = names
    .map(
      (name) =>
        `<figure class="metric"><figcaption>${escapeHtml(name)}</figcaption>${lineChart(
          [
            {
              name,
              points: training
                .filter((t) => typeof t.metrics[name] === "number")
                .map((t) => ({
                  x: t.step,
                  y: t.metrics[name] as number,
                  title: `step ${t.step}: ${name} ${fmt(t.metrics[name] as number)}`,
                })),
            },
          ],
          {
            label: `${name} per step`,
            yLabel: name,
            width: 380,
            height: 200,
            colors: { [name]: "#7c3aed" },
          },
        )}</figure>`,
    )
    .join("");
  const jobs = new Map(training.map((t) => [t.step, t]));
  const signal = new Map<string, [number, number]>();
  for (const g of index.groups) {
    const s = index.steps[g.s];
    if (!s) continue;
    const key = `${s.split}\u0000${s.step}`;
    const v = signal.get(key) ?? [0, 0];
    v[0] += g.signal ? 1 : 0;
    v[1] += 1;
    signal.set(key, v);
  }
  const shown = names.slice(0, 4);
  const rows = stats
    .map((s) => {
      const t = s.split === "train" ? jobs.get(s.step) : undefined;
      const [withSignal, groups] = signal.get(`${s.split}\u0000${s.step}`) ?? [0, 0];
      const job = t?.job
        ? `<span class="job ${escapeHtml(t.job.status.toLowerCase())}" title="${escapeHtml(`job ${t.job.id}${t.job.error ? `: ${t.job.error}` : ""}`)}">${escapeHtml(t.job.status.toLowerCase())}</span> ${escapeHtml(duration(t.job))}`
        : "";
      return `<tr><td>${escapeHtml(s.split)}</td><td>${fmt(s.step).replace(/\.000$/, "")}</td><td>${fmt(s.mean)}</td><td>${fmt(s.std)}</td><td>${fmt(s.min)}</td><td>${fmt(s.max)}</td><td>${s.count}</td><td>${withSignal}/${groups}</td><td>${job}</td>${shown.map((n) => `<td>${t && typeof t.metrics[n] === "number" ? fmt(t.metrics[n]) : ""}</td>`).join("")}</tr>`;
    })
    .join("");
  return `<section class="view" id="view-training" data-view="training">
<div class="card">
<h2>Reward per step</h2>
${rewardChart(stats, { colors })}
<p class="meta">Line: mean reward; band: ± one standard deviation; whiskers: lowest to highest reward.</p>
</div>
<div class="card">
<h2>Training metrics</h2>
${names.length ? `<div class="metrics">${charts}</div><p class="meta">Each point: the metric averaged over the gradient steps of the job that trained on that step's rollouts.</p>` : `<p class="meta" id="no-metrics">No training job of this run reported metrics (a JSONL file of groups holds none; an emulator data directory holds its jobs').</p>`}
</div>
<div class="card scroll-x">
<h2>Steps</h2>
<table id="step-table"><thead><tr><th>split</th><th>step</th><th>mean</th><th>std</th><th>min</th><th>max</th><th>trajectories</th><th title="groups whose rewards differ: the trainer learns only from these">with signal</th><th>job</th>${shown.map((n) => `<th>${escapeHtml(n)}</th>`).join("")}</tr></thead><tbody>${rows}</tbody></table>
</div>
</section>`;
}

function compareSection(run: ReportRun, colors: Record<string, string>): string {
  const splits = [...new Set(run.steps.map((s) => s.split))].filter((s) => s !== "train");
  const stats = stepStats(run).filter((s) => s.split !== "train");
  return `<section class="view" id="view-compare" data-view="compare" hidden>
<div class="card">
<h2>Checkpoints on the same scenarios</h2>
${splits.length ? rewardChart(stats, { id: "val-chart", splits, colors }) : ""}
<div class="controls">
<label>Split <select id="cmp-split"></select></label>
<label>Step <select id="cmp-a"></select></label>
<label>against step <select id="cmp-b"></select></label>
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
export function* reportParts(run: ReportRun): Generator<string> {
  const { index, chunks } = preparePage(run);
  const trajectories = index.reward.length;
  const splits = [...new Set(run.steps.map((s) => s.split))].sort((a, b) =>
    a === "train" ? -1 : b === "train" ? 1 : a.localeCompare(b),
  );
  const colors = splitColors(splits);
  const scale = [0, 0.25, 0.5, 0.75, 1]
    .map(
      (p) =>
        `<span style="background:hsl(${Math.round(120 * p)}, 75%, ${92 - 22 * (1 - p)}%)" title="p ${p}"></span>`,
    )
    .join("");
  const empty =
    trajectories === 0
      ? `<section class="card empty" id="empty"><h2>Nothing logged</h2><p>This run holds no trajectory: no training job and no logged split${run.subtitle ? ` (${escapeHtml(run.subtitle)})` : ""}. Train or log groups first, or check the model and data directory.</p></section>`
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
<p class="sub">${index.subtitle ? `${escapeHtml(index.subtitle)} · ` : ""}${index.steps.length} logged steps · ${trajectories} trajectories · ${index.groups.length} groups</p>
<nav id="tabs" role="tablist">
<a href="#training" data-view="training" role="tab">Training <kbd>1</kbd></a>
<a href="#groups" data-view="groups" role="tab">Groups <kbd>2</kbd></a>
<a href="#trajectory" data-view="trajectory" role="tab">Trajectory <kbd>3</kbd></a>
<a href="#compare" data-view="compare" role="tab">Checkpoints <kbd>4</kbd></a>
</nav>
</header>
${empty}
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
<p class="meta"><span class="badge">trained</span> a Choice the trainer learns from (in the history it belongs to); other messages are context.
Sampled tokens are shaded by their probability, from improbable<span class="legend-scale">${scale}</span> to certain; hover one for its probability and the alternatives.</p>
<div id="trajectory"></div>
</div>
</section>
${compareSection(run, colors)}
</main>
<script type="application/json" id="report-index">${scriptJson(index)}</script>
`;
  let c = 0;
  for (const chunk of chunks()) {
    yield `<script type="application/json" id="chunk-${c}">${chunk}</script>\n`;
    c += 1;
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
 * probability, and checkpoints compared on the same scenarios.
 *
 * @example
 * const html = renderReport({ title: "my run", steps: [{ step: 0, split: "train", groups }] });
 */
export function renderReport(run: ReportRun): string {
  let html = "";
  for (const part of reportParts(run)) html += part;
  return html;
}
