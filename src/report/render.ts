// One self-contained HTML page: no network, inline style, SVG and script.
import { escapeHtml, rewardChart } from "./chart.js";
import { type ReportRun, stepStats } from "./run.js";
import { SCRIPT, STYLE } from "./viewer.js";

/** The viewer needs tokens and logprobs, not the alternatives or bytes: drop them to keep the file small. */
function slim(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(slim);
  if (!value || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === "top_logprobs" || k === "bytes" || k === "prompt_token_ids") continue;
    out[k] = slim(v);
  }
  return out;
}

/** JSON that is safe inside a `<script>` element. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

const fmt = (x: number) => x.toFixed(3);

/**
 * Renders a run as one self-contained HTML page: the reward per step with its
 * spread, a table of the figures, and a trajectory viewer whose sampled tokens
 * are shaded by probability, with the trained Choices marked.
 *
 * @example
 * const html = renderReport({ title: "my run", steps: [{ step: 0, split: "train", groups }] });
 */
export function renderReport(run: ReportRun): string {
  const title = run.title ?? "Trajectory report";
  const stats = stepStats(run);
  const steps = [...run.steps].sort((a, b) => a.step - b.step || a.split.localeCompare(b.split));
  const trajectories = steps.reduce(
    (n, s) => n + s.groups.reduce((m, g) => m + g.trajectories.length, 0),
    0,
  );
  const rows = stats
    .map(
      (s) =>
        `<tr><td>${escapeHtml(s.split)}</td><td>${s.step}</td><td>${fmt(s.mean)}</td><td>${fmt(s.std)}</td><td>${fmt(s.min)}</td><td>${fmt(s.max)}</td><td>${s.count}</td></tr>`,
    )
    .join("");
  const scale = [0, 0.25, 0.5, 0.75, 1]
    .map(
      (p) =>
        `<span style="background:hsl(${Math.round(120 * p)}, 75%, ${92 - 22 * (1 - p)}%)" title="p ${p}"></span>`,
    )
    .join("");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>${escapeHtml(title)}</h1>
<p class="sub">${run.subtitle ? `${escapeHtml(run.subtitle)} · ` : ""}${steps.length} logged steps · ${trajectories} trajectories</p>
<section class="card" id="chart">
<h2 style="margin-top:0">Reward per step</h2>
${rewardChart(stats)}
<p class="meta">Line: mean reward; band: ± one standard deviation; whiskers: lowest to highest reward.</p>
<table id="step-table"><thead><tr><th>split</th><th>step</th><th>mean</th><th>std</th><th>min</th><th>max</th><th>trajectories</th></tr></thead><tbody>${rows}</tbody></table>
</section>
<section class="card" id="viewer" style="margin-top:20px">
<h2 style="margin-top:0">Trajectories</h2>
<div class="controls">
<label>Step <select id="step-select"></select></label>
<label>Group <select id="group-select"></select></label>
<label>Trajectory <select id="trajectory-select"></select></label>
<button id="prev" type="button">◀</button><button id="next" type="button">▶</button>
</div>
<p class="meta"><span class="badge">trained</span> a Choice the trainer learns from; other messages are context.
Sampled tokens are shaded by their probability, from improbable<span class="legend-scale">${scale}</span> to certain; hover a token for its logprob.</p>
<div id="trajectory"></div>
</section>
</main>
<script type="application/json" id="report-data">${scriptJson({ steps: slim(steps) })}</script>
<script>${SCRIPT}</script>
</body>
</html>
`;
}
