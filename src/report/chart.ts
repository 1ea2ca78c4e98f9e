// The reward chart: an inline SVG, one line per split with a band of ± one
// standard deviation and the range as whiskers.
import type { StepStats } from "./run.js";

const COLORS = ["#2563eb", "#d97706", "#059669", "#7c3aed", "#dc2626"];

export function escapeHtml(text: string): string {
  return text.replace(
    /[<>&"']/g,
    (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&#39;" })[c] ?? c,
  );
}

const fmt = (x: number) => (Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(3));

/** The SVG of the reward per step (mean line, std band, min/max whiskers). */
export function rewardChart(stats: readonly StepStats[]): string {
  const w = 760;
  const h = 320;
  const pad = { left: 56, right: 110, top: 20, bottom: 44 };
  const innerW = w - pad.left - pad.right;
  const innerH = h - pad.top - pad.bottom;
  if (stats.length === 0) {
    return `<svg id="reward-chart" xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" role="img" aria-label="No rewards logged"><text x="${w / 2}" y="${h / 2}" text-anchor="middle">No rewards logged</text></svg>`;
  }
  const steps = [...new Set(stats.map((s) => s.step))].sort((a, b) => a - b);
  const first = steps[0] as number;
  const last = steps.at(-1) as number;
  const lo = Math.min(0, ...stats.map((s) => s.min));
  const hi = Math.max(1, ...stats.map((s) => s.max));
  const x = (step: number) =>
    pad.left + (last > first ? ((step - first) / (last - first)) * innerW : innerW / 2);
  const y = (v: number) => pad.top + (1 - (v - lo) / (hi - lo)) * innerH;
  const parts: string[] = [];
  for (let i = 0; i <= 4; i++) {
    const v = lo + ((hi - lo) * i) / 4;
    parts.push(
      `<line x1="${pad.left}" x2="${pad.left + innerW}" y1="${y(v)}" y2="${y(v)}" stroke="#e5e7eb"/>`,
      `<text x="${pad.left - 8}" y="${y(v) + 4}" text-anchor="end" class="tick">${fmt(v)}</text>`,
    );
  }
  const every = Math.max(1, Math.ceil(steps.length / 12));
  steps.forEach((s, i) => {
    if (i % every === 0 || s === last)
      parts.push(
        `<text x="${x(s)}" y="${pad.top + innerH + 18}" text-anchor="middle" class="tick">${s}</text>`,
      );
  });
  parts.push(
    `<text x="${pad.left + innerW / 2}" y="${h - 6}" text-anchor="middle" class="axis">step</text>`,
    `<text transform="translate(14 ${pad.top + innerH / 2}) rotate(-90)" text-anchor="middle" class="axis">reward</text>`,
  );
  const splits = [...new Set(stats.map((s) => s.split))];
  splits.forEach((split, k) => {
    const color = COLORS[k % COLORS.length] as string;
    const pts = stats.filter((s) => s.split === split);
    const upper = pts.map((s) => `${x(s.step)},${y(Math.min(s.max, s.mean + s.std))}`);
    const lower = pts.map((s) => `${x(s.step)},${y(Math.max(s.min, s.mean - s.std))}`).reverse();
    parts.push(
      `<g class="series" data-split="${escapeHtml(split)}">`,
      `<polygon class="band" points="${[...upper, ...lower].join(" ")}" fill="${color}" fill-opacity="0.15" stroke="none"/>`,
      ...pts.map(
        (s) =>
          `<line class="range" x1="${x(s.step)}" x2="${x(s.step)}" y1="${y(s.min)}" y2="${y(s.max)}" stroke="${color}" stroke-opacity="0.35"/>`,
      ),
      `<polyline class="mean" points="${pts.map((s) => `${x(s.step)},${y(s.mean)}`).join(" ")}" fill="none" stroke="${color}" stroke-width="2"/>`,
      ...pts.map(
        (s) =>
          `<circle cx="${x(s.step)}" cy="${y(s.mean)}" r="4" fill="${color}"><title>${escapeHtml(split)} step ${s.step}: mean ${fmt(s.mean)} ± ${fmt(s.std)} (min ${fmt(s.min)}, max ${fmt(s.max)}, ${s.count} trajectories)</title></circle>`,
      ),
      `<text x="${pad.left + innerW + 12}" y="${pad.top + 14 + k * 18}" fill="${color}" class="legend">■ ${escapeHtml(split)}</text>`,
      "</g>",
    );
  });
  return `<svg id="reward-chart" xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" role="img" aria-label="Reward per step">${parts.join("")}</svg>`;
}
