// The charts: inline SVG that scales with its box. Every coordinate is
// computed so that it stays finite, whatever the steps and values (±1e308
// included): a NaN would make the browser drop the shape.
import type { StepStats } from "./run.js";

const COLORS = ["#2563eb", "#d97706", "#059669", "#7c3aed", "#dc2626"];

export function escapeHtml(text: string): string {
  return text.replace(
    /[<>&"']/g,
    (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&#39;" })[c] ?? c,
  );
}

export function fmt(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  if (x !== 0 && (Math.abs(x) >= 1e6 || Math.abs(x) < 1e-3)) return x.toExponential(2);
  return Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(3);
}

/** Where `v` stands between `lo` and `hi`, in [0, 1]; halved first so ±1e308 cannot overflow. */
function frac(v: number, lo: number, hi: number): number {
  const span = hi / 2 - lo / 2;
  const f = span > 0 ? (v / 2 - lo / 2) / span : 0.5;
  return Number.isFinite(f) ? Math.min(1, Math.max(0, f)) : 0.5;
}

const r1 = (x: number) => Math.round(x * 10) / 10;

export interface ChartPoint {
  x: number;
  y: number;
  /** A band around the line (e.g. ± one standard deviation). */
  lo?: number;
  hi?: number;
  /** A whisker (e.g. the lowest to the highest reward). */
  min?: number;
  max?: number;
  title: string;
}

export interface ChartSeries {
  name: string;
  points: ChartPoint[];
}

export interface ChartOptions {
  id?: string;
  label: string;
  yLabel: string;
  width?: number;
  height?: number;
  /** Keep 0 and 1 on the y axis (rewards). */
  unitRange?: boolean;
  /** A colour per series name, so the same split has the same colour in every chart. */
  colors?: Record<string, string>;
}

/** A line chart of series over steps, drawn to fit its container's width. */
export function lineChart(series: readonly ChartSeries[], o: ChartOptions): string {
  const w = o.width ?? 760;
  const h = o.height ?? 320;
  const id = o.id ? ` id="${escapeHtml(o.id)}"` : "";
  const pad = { left: 58, right: 16, top: 16, bottom: 40 };
  const innerW = w - pad.left - pad.right;
  const innerH = h - pad.top - pad.bottom;
  const all = series
    .flatMap((s) => s.points)
    .filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y));
  const open = `<svg${id} class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${w} ${h}" preserveAspectRatio="xMinYMin meet" role="img" aria-label="${escapeHtml(o.label)}">`;
  if (all.length === 0)
    return `${open}<text x="${w / 2}" y="${h / 2}" text-anchor="middle" class="axis">Nothing logged</text></svg>`;
  let xlo = Number.POSITIVE_INFINITY;
  let xhi = Number.NEGATIVE_INFINITY;
  let ylo = o.unitRange ? 0 : Number.POSITIVE_INFINITY;
  let yhi = o.unitRange ? 1 : Number.NEGATIVE_INFINITY;
  for (const p of all) {
    xlo = Math.min(xlo, p.x);
    xhi = Math.max(xhi, p.x);
    for (const v of [p.y, p.min, p.max, p.lo, p.hi])
      if (v !== undefined && Number.isFinite(v)) {
        ylo = Math.min(ylo, v);
        yhi = Math.max(yhi, v);
      }
  }
  if (ylo === yhi) {
    ylo -= Math.abs(ylo) * 0.1 || 1;
    yhi += Math.abs(yhi) * 0.1 || 1;
  }
  const x = (v: number) => r1(pad.left + (xlo === xhi ? 0.5 : frac(v, xlo, xhi)) * innerW);
  const y = (v: number) => r1(pad.top + (1 - frac(v, ylo, yhi)) * innerH);
  const parts: string[] = [];
  for (let i = 0; i <= 4; i++) {
    const v = ylo * (1 - i / 4) + yhi * (i / 4);
    parts.push(
      `<line x1="${pad.left}" x2="${pad.left + innerW}" y1="${y(v)}" y2="${y(v)}" stroke="#e5e7eb"/>`,
      `<text x="${pad.left - 6}" y="${y(v) + 4}" text-anchor="end" class="tick">${fmt(v)}</text>`,
    );
  }
  const xs = [...new Set(all.map((p) => p.x))].sort((a, b) => a - b);
  const every = Math.max(1, Math.ceil(xs.length / 10));
  xs.forEach((s, i) => {
    if (i % every === 0 || i === xs.length - 1)
      parts.push(
        `<text x="${x(s)}" y="${pad.top + innerH + 16}" text-anchor="middle" class="tick">${fmt(s).replace(/\.000$/, "")}</text>`,
      );
  });
  parts.push(
    `<text x="${pad.left + innerW / 2}" y="${h - 4}" text-anchor="middle" class="axis">step</text>`,
    `<text transform="translate(13 ${pad.top + innerH / 2}) rotate(-90)" text-anchor="middle" class="axis">${escapeHtml(o.yLabel)}</text>`,
  );
  series.forEach((s, k) => {
    const color = o.colors?.[s.name] ?? (COLORS[k % COLORS.length] as string);
    const pts = s.points.filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y));
    if (pts.length === 0) return;
    parts.push(`<g class="series" data-series="${escapeHtml(s.name)}">`);
    if (pts.some((p) => p.lo !== undefined)) {
      const upper = pts.map((p) => `${x(p.x)},${y(Math.max(p.y, p.hi ?? p.y))}`);
      const lower = pts.map((p) => `${x(p.x)},${y(Math.min(p.y, p.lo ?? p.y))}`).reverse();
      parts.push(
        `<polygon class="band" points="${[...upper, ...lower].join(" ")}" fill="${color}" fill-opacity="0.15" stroke="none"/>`,
      );
    }
    for (const p of pts)
      if (p.min !== undefined && p.max !== undefined)
        parts.push(
          `<line class="range" x1="${x(p.x)}" x2="${x(p.x)}" y1="${y(p.min)}" y2="${y(p.max)}" stroke="${color}" stroke-opacity="0.35"/>`,
        );
    parts.push(
      `<polyline class="mean" points="${pts.map((p) => `${x(p.x)},${y(p.y)}`).join(" ")}" fill="none" stroke="${color}" stroke-width="2"/>`,
    );
    for (const p of pts)
      parts.push(
        `<circle cx="${x(p.x)}" cy="${y(p.y)}" r="3.5" fill="${color}"><title>${escapeHtml(p.title)}</title></circle>`,
      );
    parts.push("</g>");
  });
  const legend =
    series.length > 1
      ? `<div class="legend">${series.map((s, k) => `<span style="color:${o.colors?.[s.name] ?? COLORS[k % COLORS.length]}">■ ${escapeHtml(s.name)}</span>`).join(" ")}</div>`
      : "";
  return `${open}${parts.join("")}</svg>${legend}`;
}

/** The colour of each split, the same in every chart of the page. */
export function splitColors(splits: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  splits.forEach((s, i) => {
    out[s] = COLORS[i % COLORS.length] as string;
  });
  return out;
}

/** The name of a (run, split) series: the split alone in a report of one run. */
export const seriesName = (s: { split: string; run?: string }) =>
  s.run === undefined ? s.split : `${s.run} · ${s.split}`;

/** A point of a curve with its spread: mean line, ± one standard deviation band, min/max whiskers. */
export function spreadPoint(
  x: number,
  s: { mean: number; std: number; min: number; max: number },
  title: string,
): ChartPoint {
  return {
    x,
    y: s.mean,
    lo: Math.max(s.min, s.mean - s.std),
    hi: Math.min(s.max, s.mean + s.std),
    min: s.min,
    max: s.max,
    title,
  };
}

/** The reward per step of each split (of each run): mean line, ± one standard deviation band, min/max whiskers. */
export function rewardChart(
  stats: readonly StepStats[],
  options: { id?: string; splits?: readonly string[]; colors?: Record<string, string> } = {},
): string {
  const names = options.splits ?? [...new Set(stats.map(seriesName))];
  return lineChart(
    names.map((name) => ({
      name,
      points: stats
        .filter((s) => seriesName(s) === name)
        .map((s) =>
          spreadPoint(
            s.step,
            s,
            `${name} step ${s.step}: mean ${fmt(s.mean)} ± ${fmt(s.std)} (min ${fmt(s.min)}, max ${fmt(s.max)}, ${s.count} trajectories)`,
          ),
        ),
    })),
    {
      id: options.id ?? "reward-chart",
      label: "Reward per step",
      yLabel: "reward",
      unitRange: true,
      colors: options.colors ?? splitColors(names),
    },
  );
}
