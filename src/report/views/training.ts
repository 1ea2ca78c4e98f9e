// The Training view, drawn when the page is built: the reward per step, the
// trajectories' own metrics per step (with the reward curve's spread), the
// trainer's metrics under ART's names, and a table of the steps.
import { escapeHtml, fmt, lineChart, rewardChart, seriesName, spreadPoint } from "../chart.js";
import type { PageIndex } from "../prepare.js";
import { type ReportRun, type ReportTraining, stepStats } from "../run.js";

/** Trainer metrics drawn first, in this order (ART's names); any other follows. */
const METRIC_ORDER = [
  "loss/train",
  "loss/entropy",
  "loss/grad_norm",
  "loss/kl_div",
  "loss/kl_policy_ref",
  "clipped_fraction",
  "mean_importance_ratio",
  "loss/learning_rate",
  "data/step_trainer_tokens",
];
/** Metrics the reward chart already shows, or counts that say nothing per step. */
const METRIC_SKIP = new Set([
  "reward",
  "reward_std_dev",
  "clipped_tokens",
  "data/step_num_trajectories",
  "data/step_num_gradient_steps",
]);

function metricNames(training: readonly ReportTraining[]): string[] {
  const seen = new Set<string>();
  for (const t of training)
    for (const k of Object.keys(t.metrics)) if (!METRIC_SKIP.has(k)) seen.add(k);
  const rank = (k: string) => {
    const i = METRIC_ORDER.indexOf(k);
    return i === -1 ? METRIC_ORDER.length : i;
  };
  return [...seen].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

function duration(job: NonNullable<ReportTraining["job"]>): string {
  const a = Date.parse(job.startedAt ?? job.createdAt ?? "");
  const b = Date.parse(job.endedAt ?? "");
  return Number.isFinite(a) && Number.isFinite(b) ? `${((b - a) / 1000).toFixed(1)} s` : "";
}

const figure = (cls: string, name: string, chart: string) =>
  `<figure class="metric ${cls}" data-metric="${escapeHtml(name)}"><figcaption>${escapeHtml(name)}</figcaption>${chart}</figure>`;

/** One chart per trainer metric, a series per run. */
function trainerCharts(
  training: readonly ReportTraining[],
  names: readonly string[],
  colors: Record<string, string>,
): string {
  const runs = [...new Set(training.map((t) => t.run))];
  return names
    .map((name) =>
      figure(
        "trainer",
        name,
        lineChart(
          runs.map((run) => ({
            name: run ?? name,
            points: training
              .filter((t) => t.run === run && typeof t.metrics[name] === "number")
              .map((t) => ({
                x: t.step,
                y: t.metrics[name] as number,
                title: `${run ? `${run} ` : ""}step ${t.step}: ${name} ${fmt(t.metrics[name] as number)}`,
              })),
          })),
          {
            label: `${name} per step`,
            yLabel: name,
            width: 380,
            height: 200,
            colors: runs.length > 1 ? colors : { [name]: "#7c3aed" },
          },
        ),
      ),
    )
    .join("");
}

/** One chart per numeric trajectory metric: mean, ± one standard deviation band, min/max whiskers; a series per split (and run). */
function trajectoryCharts(index: PageIndex, colors: Record<string, string>): string {
  const names = new Set<string>();
  for (const s of index.steps) for (const k of Object.keys(s.m)) names.add(k);
  const series = [...new Set(index.steps.map(seriesName))];
  return [...names]
    .sort()
    .map((name) =>
      figure(
        "traj",
        name,
        lineChart(
          series.map((label) => ({
            name: label,
            points: index.steps
              .filter((s) => seriesName(s) === label && s.m[name])
              .map((s) => {
                const [mean, std, min, max, count] = s.m[name] as number[] as [
                  number,
                  number,
                  number,
                  number,
                  number,
                ];
                return spreadPoint(
                  s.step,
                  { mean, std, min, max },
                  `${label} step ${s.step}: ${name} mean ${fmt(mean)} ± ${fmt(std)} (min ${fmt(min)}, max ${fmt(max)}, ${count} trajectories)`,
                );
              }),
          })),
          { label: `${name} per step`, yLabel: name, width: 380, height: 200, colors },
        ),
      ),
    )
    .join("");
}

export function trainingSection(
  run: ReportRun,
  index: PageIndex,
  colors: Record<string, string>,
): string {
  const stats = stepStats(run).sort(
    (a, b) =>
      (a.run === undefined ? -1 : index.runs.indexOf(a.run)) -
        (b.run === undefined ? -1 : index.runs.indexOf(b.run)) ||
      a.step - b.step ||
      a.split.localeCompare(b.split),
  );
  const training = index.training;
  const names = metricNames(training);
  const key = (s: { run?: string; split: string; step: number }) =>
    `${s.run ?? ""}\u0000${s.split}\u0000${s.step}`;
  const jobs = new Map(training.map((t) => [key({ ...t, split: "train" }), t]));
  const counts = new Map<string, { signal: number; trained: number; groups: number }>();
  for (const g of index.groups) {
    const s = index.steps[g.s];
    if (!s) continue;
    const v = counts.get(key(s)) ?? { signal: 0, trained: 0, groups: 0 };
    v.signal += g.signal ? 1 : 0;
    v.trained += g.trained ? 1 : 0;
    v.groups += 1;
    counts.set(key(s), v);
  }
  const shown = names.slice(0, 4);
  const multi = index.runs.length > 0;
  const rows = stats
    .map((s) => {
      const t = s.split === "train" ? jobs.get(key(s)) : undefined;
      const c = counts.get(key(s)) ?? { signal: 0, trained: 0, groups: 0 };
      const job = t?.job
        ? `<span class="job ${escapeHtml(t.job.status.toLowerCase())}" title="${escapeHtml(`job ${t.job.id}${t.job.error ? `: ${t.job.error}` : ""}`)}">${escapeHtml(t.job.status.toLowerCase())}</span> ${escapeHtml(duration(t.job))}`
        : "";
      const signal =
        s.split === "train"
          ? `${c.signal}/${c.groups}${c.trained < c.groups ? ` · ${c.groups - c.trained} not trained` : ""}`
          : "evaluated";
      const infra = s.infraFailures ? ` · ${s.infraFailures} infra failures` : "";
      return `<tr>${multi ? `<td class="run">${escapeHtml(s.run ?? "")}</td>` : ""}<td>${escapeHtml(s.split)}</td><td>${fmt(s.step).replace(/\.000$/, "")}</td><td>${fmt(s.mean)}</td><td>${fmt(s.std)}</td><td>${fmt(s.min)}</td><td>${fmt(s.max)}</td><td>${s.count}</td><td>${signal}${infra}</td><td>${job}</td>${shown.map((n) => `<td>${t && typeof t.metrics[n] === "number" ? fmt(t.metrics[n]) : ""}</td>`).join("")}</tr>`;
    })
    .join("");
  const trajCharts = trajectoryCharts(index, colors);
  return `<section class="view" id="view-training" data-view="training" data-live-part>
<div class="card">
<h2>Reward per step</h2>
${rewardChart(stats, { colors, splits: [...new Set(stats.map(seriesName))] })}
<p class="meta">Line: mean reward over every logged trajectory of the step (trained on or not); band: ± one standard deviation; whiskers: lowest to highest reward.</p>
</div>
<div class="card" id="trajectory-metrics">
<h2>Trajectory metrics</h2>
${trajCharts ? `<div class="metrics">${trajCharts}</div><p class="meta">Each trajectory's own <code>metrics</code> (numbers and booleans as 0/1), per step: line the mean, band ± one standard deviation, whiskers lowest to highest.</p>` : `<p class="meta" id="no-traj-metrics">No trajectory of this run holds a numeric metric (<code>t.metrics.tool_calls = 2</code>, say).</p>`}
</div>
<div class="card">
<h2>Training metrics</h2>
${names.length ? `<div class="metrics">${trainerCharts(training, names, colors)}</div><p class="meta">Under ART's names (the service's <code>policy_loss</code> is <code>loss/train</code>, <code>entropy</code> is <code>loss/entropy</code>, ...). Each point: the metric averaged over the gradient steps of the job that trained on that step's rollouts.</p>` : `<p class="meta" id="no-metrics">No training job of this run reported metrics (a JSONL file of groups holds none; an emulator data directory or the service's checkpoints hold the jobs').</p>`}
</div>
<div class="card scroll-x">
<h2>Steps</h2>
<table id="step-table"><thead><tr>${multi ? "<th>run</th>" : ""}<th>split</th><th>step</th><th>mean</th><th>std</th><th>min</th><th>max</th><th>trajectories</th><th title="train groups whose rewards differ (the trainer learns only from these), of all groups of the step">with signal</th><th>job</th>${shown.map((n) => `<th>${escapeHtml(n)}</th>`).join("")}</tr></thead><tbody>${rows}</tbody></table>
</div>
</section>`;
}
